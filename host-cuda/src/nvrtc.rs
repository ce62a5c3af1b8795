//! The NVRTC kernels: `kernels/lindiff.cu` compiled once per process
//! (`ptx()`, a `OnceLock`; the provider loads it once, `context.rs`), and
//! the [`Walk`]/[`View`] records the kernels read strided tensors by. They
//! are launched through the `launch!` macro of `launch.rs`.

use crate::error::nvrtc;
use cudarc::driver::DeviceRepr;
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};
use lindiff_core::{Error, Result, TensorDesc, MAX_RANK};
use std::sync::OnceLock;

/// The kernel source (CUDA C++, one template per kernel, one `extern "C"`
/// entry point per dtype).
pub const SOURCE: &str = include_str!("kernels/lindiff.cu");

/// Names of the `extern "C"` kernels the provider loads (each with a dtype
/// suffix where it has one). Kept next to the source so a unit test can
/// check every name is defined there.
pub const KERNELS: &[&str] = &[
    "map_f32_f32",
    "map_f64_f64",
    "map_c32_c32",
    "map_c64_c64",
    "map_c32_f32",
    "map_c64_f64",
    "map_f32_c32",
    "map_f64_c64",
    "zip_f32",
    "zip_f64",
    "zip_c32",
    "zip_c64",
    "zip_real_c32",
    "zip_real_c64",
    "fill_f32",
    "fill_f64",
    "fill_c32",
    "fill_c64",
    "eye_f32",
    "eye_f64",
    "eye_c32",
    "eye_c64",
    "rank_mask_f32",
    "rank_mask_f64",
    "rank_mask_c32",
    "rank_mask_c64",
    "reduce_f32",
    "reduce_f64",
    "reduce_c32",
    "reduce_c64",
    "pair_inv_f32",
    "pair_inv_f64",
    "pair_inv_c32",
    "pair_inv_c64",
    "pivot_phase_f32",
    "pivot_phase_f64",
    "pivot_phase_c32",
    "pivot_phase_c64",
    "canonical_pairs_f32",
    "canonical_pairs_f64",
    "canonical_pairs_c32",
    "canonical_pairs_c64",
    "qr_sign_f32",
    "qr_sign_f64",
    "qr_sign_c32",
    "qr_sign_c64",
    "permute_rows_f32",
    "permute_rows_f64",
    "permute_rows_c32",
    "permute_rows_c64",
    "lu_det_f32",
    "lu_det_f64",
    "lu_det_c32",
    "lu_det_c64",
    "nonfinite_flags_f32",
    "nonfinite_flags_f64",
    "nonfinite_flags_c32",
    "nonfinite_flags_c64",
    "nonfinite_tri_f32",
    "nonfinite_tri_f64",
    "nonfinite_tri_c32",
    "nonfinite_tri_c64",
    "eig_finish_f32",
    "eig_finish_f64",
    "eig_finish_c32",
    "eig_finish_c64",
    "kept_rank_f32",
    "kept_rank_f64",
    "kept_rank_c32",
    "kept_rank_c64",
    "spectral_scale_f32",
    "spectral_scale_f64",
    "spectral_scale_c32",
    "spectral_scale_c64",
    "copy_i64",
    "ipiv_to_perm",
    "first_failure",
];

/// The compiled kernels, or the failure: its error (naming the
/// `nvrtcResult`) and NVRTC's log.
static PTX: OnceLock<core::result::Result<Ptx, (Error, String)>> = OnceLock::new();

/// The compiled kernels (compiled by NVRTC on first use, once per process).
///
/// # Errors
/// [`Error::ProviderUnavailable`] naming the `nvrtcResult` (e.g. "NVRTC
/// failed: NVRTC_ERROR_COMPILATION") when NVRTC rejects the source; the log
/// is kept in [`compile_log`].
pub(crate) fn ptx() -> Result<Ptx> {
    let compiled = PTX.get_or_init(|| {
        let opts = CompileOptions { options: vec!["--std=c++17".into()], ..Default::default() };
        compile_ptx_with_opts(SOURCE, opts).map_err(|e| {
            use cudarc::nvrtc::CompileError as C;
            match e {
                C::CompileError { nvrtc: code, log, .. } => (nvrtc(code), log.to_string_lossy().into_owned()),
                C::CreationError(code)
                | C::GetLogError(code)
                | C::GetPtxError(code)
                | C::DestroyError(code) => {
                    (nvrtc(code), String::from("(no log: NVRTC failed outside the compilation)"))
                }
            }
        })
    });
    compiled.clone().map_err(|(e, _)| e)
}

/// NVRTC's log when the kernels failed to compile in this process (print
/// it on a `Cuda::new` failure naming NVRTC), `None` when they compiled or
/// were not compiled yet.
pub fn compile_log() -> Option<String> {
    PTX.get().and_then(|r| r.as_ref().err().map(|(_, log)| log.clone()))
}

/// The shape a kernel walks: its output's dims (column-major, dim 0
/// fastest) and element count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// Number of dims used.
    pub rank: i64,
    /// The dims (unused entries 1).
    pub dims: [i64; MAX_RANK],
    /// Product of the dims.
    pub count: i64,
}

/// How an input is read along a [`Walk`]: element offset plus one stride
/// per walked dim (0 broadcasts).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct View {
    /// Element offset of the first element.
    pub offset: i64,
    /// Element strides, one per walked dim.
    pub strides: [i64; MAX_RANK],
}

// SAFETY: both are `repr(C)` records of `i64`s, matching the kernels'
// `struct Walk` / `struct View` field for field, passed by value.
unsafe impl DeviceRepr for Walk {}
// SAFETY: as above.
unsafe impl DeviceRepr for View {}

impl Walk {
    /// Walks `dims` (at most [`MAX_RANK`]; a rank-0 walk has one element).
    pub fn new(dims: &[usize]) -> Walk {
        let mut w = Walk { rank: dims.len().min(MAX_RANK) as i64, dims: [1; MAX_RANK], count: 1 };
        for (slot, &d) in w.dims.iter_mut().zip(dims) {
            *slot = d as i64;
            w.count *= d as i64;
        }
        w
    }
}

impl View {
    /// Reads with these strides from `offset`.
    pub fn new(offset: usize, strides: &[usize]) -> View {
        let mut v = View { offset: offset as i64, strides: [0; MAX_RANK] };
        for (slot, &s) in v.strides.iter_mut().zip(strides) {
            *slot = s as i64;
        }
        v
    }

    /// A tensor's own layout (walked over its own dims).
    pub fn of(desc: &TensorDesc) -> View {
        View::new(desc.offset, &desc.strides)
    }

    /// The contiguous column-major layout of `dims`.
    pub fn contiguous(dims: &[usize]) -> View {
        let mut strides = [0usize; MAX_RANK];
        let mut s = 1;
        for (slot, &d) in strides.iter_mut().zip(dims) {
            *slot = s;
            s *= d.max(1);
        }
        View::new(0, &strides[..dims.len().min(MAX_RANK)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_loaded_kernel_is_defined_once_in_the_source() {
        for name in KERNELS {
            let direct = SOURCE.matches(&format!("__global__ void {name}(")).count();
            // Macro-generated entry points: `map_##SUF` and the PER_DTYPE list.
            let (stem, suffix) = name.rsplit_once('_').unwrap_or((name, ""));
            let per_dtype = SOURCE.contains(&format!("__global__ void {stem}_##SUF("))
                && (SOURCE.contains(&format!("PER_DTYPE({suffix},"))
                    || SOURCE.contains(&format!("MAP({suffix},")));
            let map = name.starts_with("map_")
                && SOURCE.contains(&format!("MAP({}, ", &name[4..]))
                && SOURCE.contains("__global__ void map_##SUF(");
            assert!(direct == 1 || per_dtype || map, "kernel {name} is not defined in lindiff.cu");
        }
    }

    #[test]
    fn source_is_ascii_and_balanced() {
        let mut depth = 0i64;
        for c in SOURCE.chars() {
            match c {
                '{' | '(' => depth += 1,
                '}' | ')' => depth -= 1,
                _ => {}
            }
            assert!(depth >= 0, "closing bracket before its opening one");
        }
        assert_eq!(depth, 0, "unbalanced brackets in lindiff.cu");
        assert!(SOURCE.is_ascii(), "NVRTC gets plain ASCII");
    }

    /// Compiles the kernel source as host C++ (with stand-ins for the CUDA
    /// built-ins): every template instantiated by an entry point must
    /// type-check. Needs `g++` (`cargo xtask test` installs it).
    #[test]
    fn source_type_checks_as_cpp17() {
        let dir = std::env::temp_dir().join(format!("lindiff-cuda-check-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("lindiff_check.cpp");
        let prelude = include_str!("kernels/host_prelude.h");
        std::fs::write(&file, format!("{prelude}\n{SOURCE}")).unwrap();
        let out = std::process::Command::new("g++")
            .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Werror"])
            .arg(&file)
            .output()
            .expect("g++ is needed to check the kernel source (apt-get install -y g++)");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            out.status.success(),
            "lindiff.cu does not type-check:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs `kernels/host_tests.cpp`: the kernels' logic (eig's unpacking,
    /// sorting and normalisation, the recombinations' rank and scaling) on hand-worked inputs, compiled as host C++ with
    /// one thread walking every work item. Needs `g++`.
    #[test]
    fn kernel_logic_passes_the_host_checks() {
        let dir = std::env::temp_dir().join(format!("lindiff-cuda-run-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (file, exe) = (dir.join("kernel_checks.cpp"), dir.join("kernel_checks"));
        let prelude = include_str!("kernels/host_prelude.h");
        let checks = include_str!("kernels/host_tests.cpp");
        std::fs::write(&file, format!("{prelude}\n{SOURCE}\n{checks}")).unwrap();
        let built = std::process::Command::new("g++")
            .args(["-std=c++17", "-O1", "-Wall", "-Werror", "-o"])
            .arg(&exe)
            .arg(&file)
            .output()
            .expect("g++ is needed to check the kernel source (apt-get install -y g++)");
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        let ran = std::process::Command::new(&exe).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let stdout = String::from_utf8_lossy(&ran.stdout);
        assert!(ran.status.success() && stdout.contains("all kernel checks passed"), "{stdout}");
    }

    /// Where the NVRTC 13 libraries are looked for: `LINDIFF_NVRTC_LIB_DIR`,
    /// else the cache `cargo xtask test` fills from the PyPI wheel
    /// `nvidia-cuda-nvrtc==13.0.*` (`~/.cache/lindiff/nvrtc-13.0/nvidia/cu13/lib`).
    fn nvrtc_lib_dir() -> Option<std::path::PathBuf> {
        if let Some(dir) = std::env::var_os("LINDIFF_NVRTC_LIB_DIR") {
            return Some(dir.into());
        }
        let home = std::env::var_os("HOME")?;
        Some(std::path::Path::new(&home).join(".cache/lindiff/nvrtc-13.0/nvidia/cu13/lib"))
    }

    /// Loads `path` process-wide, so that cudarc's and libnvrtc's later
    /// `dlopen` by soname (`libnvrtc.so.13`, `libnvrtc-builtins.so.13.0`)
    /// finds it without `LD_LIBRARY_PATH`.
    #[cfg(target_os = "linux")]
    fn preload(path: &std::path::Path) -> bool {
        use std::os::unix::ffi::OsStrExt;
        extern "C" {
            fn dlopen(filename: *const core::ffi::c_char, flag: core::ffi::c_int) -> *mut core::ffi::c_void;
        }
        const RTLD_NOW_GLOBAL: core::ffi::c_int = 0x2 | 0x100;
        let Ok(name) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
        // SAFETY: `name` is a NUL-terminated path; the libraries are NVIDIA's
        // NVRTC, whose initialisers only set up their own state. The handle
        // is deliberately leaked: the library stays loaded for the process.
        !unsafe { dlopen(name.as_ptr(), RTLD_NOW_GLOBAL) }.is_null()
    }

    /// Compiles `lindiff.cu` with the real NVRTC 13 through the provider's
    /// own path (`ptx()`, cudarc's nvrtc): catches what the g++ check cannot
    /// (NVRTC has no `<cmath>`, no host headers). Runs without a GPU or a
    /// driver. Without the library it fails, unless `LINDIFF_SKIP_NVRTC=1`
    /// allows the skip (printed).
    #[cfg(target_os = "linux")]
    #[test]
    fn source_compiles_with_nvrtc_13() {
        let dir = nvrtc_lib_dir();
        let found = dir.as_ref().is_some_and(|d| {
            preload(&d.join("libnvrtc-builtins.so.13.0")) && preload(&d.join("libnvrtc.so.13"))
        });
        // SAFETY: only probes whether cudarc can open the library.
        if !found && !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            let why = format!(
                "no NVRTC 13 library (looked in {dir:?} and the loader path); `cargo xtask test` \
                 fetches the PyPI wheel nvidia-cuda-nvrtc==13.0.* there"
            );
            if std::env::var("LINDIFF_SKIP_NVRTC").is_ok_and(|v| v == "1") {
                println!("skipped: {why} (LINDIFF_SKIP_NVRTC=1)");
                return;
            }
            panic!("{why}; set LINDIFF_SKIP_NVRTC=1 to skip this test");
        }
        let compiled = ptx();
        assert!(compiled.is_ok(), "NVRTC rejected lindiff.cu:\n{}", compile_log().unwrap_or_default());
        let text = compiled.unwrap().to_src();
        for name in KERNELS {
            assert!(text.contains(&format!(".entry {name}(")), "kernel {name} is missing from the PTX");
        }
    }

    #[test]
    fn walk_and_view_match_the_kernel_records() {
        // struct Walk { i64 rank; i64 dims[8]; i64 count; } and
        // struct View { i64 offset; i64 strides[8]; }
        assert_eq!(core::mem::size_of::<Walk>(), 8 * (2 + MAX_RANK));
        assert_eq!(core::mem::size_of::<View>(), 8 * (1 + MAX_RANK));
        let w = Walk::new(&[3, 4, 5]);
        assert_eq!((w.rank, w.count, w.dims[2], w.dims[3]), (3, 60, 5, 1));
        assert_eq!(View::contiguous(&[3, 4, 5]).strides[..3], [1, 3, 12]);
        assert_eq!(Walk::new(&[]).count, 1);
    }
}
