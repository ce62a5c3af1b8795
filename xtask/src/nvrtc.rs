//! NVRTC 13 for the kernel-source compile test (lindiff-cuda).
//!
//! `lindiff-cuda`'s unit test `source_compiles_with_nvrtc_13` compiles
//! `kernels/lindiff.cu` with the real NVRTC (no GPU or driver needed). The
//! library comes from NVIDIA's PyPI wheel `nvidia-cuda-nvrtc==13.0.*`,
//! fetched once with `pip download` into `~/.cache/lindiff/nvrtc-13.0` and
//! reused when present; the test looks there (or in `LINDIFF_NVRTC_LIB_DIR`).

use std::path::PathBuf;
use std::process::Command;

use crate::{run, Step};

/// The wheel requirement (NVRTC matching cudarc's `cuda-13000`).
const WHEEL: &str = "nvidia-cuda-nvrtc==13.0.*";

/// The cache the lindiff-cuda test reads by default.
fn cache() -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME").ok_or("HOME is not set: cannot place the NVRTC cache")?;
    Ok(PathBuf::from(home).join(".cache/lindiff/nvrtc-13.0"))
}

/// `python3 -m pip`, from apt (`python3-pip`) when missing.
fn ensure_pip() -> Step {
    let ok = |args: &[&str]| Command::new("python3").args(args).output().is_ok_and(|o| o.status.success());
    if ok(&["-m", "pip", "--version"]) {
        return Ok(());
    }
    crate::apt_get(&["update"], "python3-pip")?;
    crate::apt_get(&["install", "-y", "--no-install-recommends", "python3-pip"], "python3-pip")
}

/// Fetches and unpacks the NVRTC wheel unless the cache already holds
/// `libnvrtc.so.13`; returns the library folder.
pub fn ensure() -> Result<PathBuf, String> {
    let root = cache()?;
    let lib = root.join("nvidia/cu13/lib");
    if lib.join("libnvrtc.so.13").exists() && lib.join("libnvrtc-builtins.so.13.0").exists() {
        eprintln!("\n==> NVRTC 13 cached in {}", lib.display());
        return Ok(lib);
    }
    ensure_pip()?;
    let wheels = root.join("wheel");
    let wheels_s = wheels.to_string_lossy().into_owned();
    run("python3", &["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", &wheels_s, WHEEL])?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("cannot read {wheels_s}: {e}"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| format!("pip left no wheel in {wheels_s}"))?;
    // A wheel is a zip; Python's zipfile unpacks it without `unzip`.
    run("python3", &["-m", "zipfile", "-e", &wheel.to_string_lossy(), &root.to_string_lossy()])?;
    // The unpacked libraries are what is reused; the 90 MB wheel is not.
    let _ = std::fs::remove_dir_all(&wheels);
    if !lib.join("libnvrtc.so.13").exists() {
        return Err(format!(
            "the NVRTC wheel has no nvidia/cu13/lib/libnvrtc.so.13 under {}",
            root.display()
        ));
    }
    Ok(lib)
}

/// Runs the NVRTC compile test alone (it also runs with the workspace tests).
pub fn test() -> Step {
    let lib = ensure()?;
    let line = "cargo test -q -p lindiff-cuda --lib nvrtc::tests::source_compiles_with_nvrtc_13";
    eprintln!("\n==> LINDIFF_NVRTC_LIB_DIR={} {line}", lib.display());
    let status = Command::new("cargo")
        .args(["test", "-q", "-p", "lindiff-cuda", "--lib", "nvrtc::tests::source_compiles_with_nvrtc_13"])
        .env("LINDIFF_NVRTC_LIB_DIR", &lib)
        .env_remove("LINDIFF_SKIP_NVRTC")
        .status()
        .map_err(|e| format!("cannot start `{line}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{line}` failed ({status})"))
    }
}
