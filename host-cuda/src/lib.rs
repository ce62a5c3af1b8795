//! # lindiff-cuda
//!
//! The NVIDIA GPU provider of lindiff: buffers live on the device
//! ([`Device`] memory — core moves them around and never dereferences
//! them), decompositions run in cuSOLVER, matmul and triangular solves in
//! cuBLAS, and every other primitive and all output normalisation
//! (canonical phases, Vᴴ, diag(R) ≥ 0, LAPACK pivots → permutations) in
//! NVRTC kernels compiled once per process from one templated source
//! (`src/kernels/lindiff.cu`). **Nothing is ever copied to the host to be
//! computed there**: an op the device cannot run is an
//! [`Error::Unsupported`](lindiff_core::Error) naming op and provider.
//!
//! **Status: the GPU path has not run yet.** It was written against the
//! cuSOLVER/cuBLAS/cudarc 0.19 documentation on a machine without a GPU;
//! the crate builds and its host-side tests pass everywhere. The device
//! check runs the conformance suites and a timing table on a GPU:
//! `cargo xtask cuda-check` builds its binaries into `.device/`, and
//! `bash .device/device-check.sh run` runs them on a machine with an
//! NVIDIA GPU.
//!
//! It builds without CUDA: cudarc loads libcuda, cuBLAS, cuSOLVER and
//! NVRTC at run time (`dynamic-loading`), and [`Cuda::new`] checks that the
//! driver library is present before touching it, so without CUDA every
//! constructor returns `Err(ProviderUnavailable)` — "no CUDA driver library
//! (libcuda.so) found" or "no CUDA device".
//!
//! ## What runs where
//!
//! | op | runs on |
//! |---|---|
//! | `svd`, `svd_vals`, `svd_full` | `?gesvdjBatched` for m, n ≤ 32 (whole batch in one call); else `Xgesvd` (`Auto`, `DivideAndConquer`, `QrIteration`), `?gesvdj` (`SvdDriver::Jacobi`), `Xgesvdp` (`SvdDriver::Polar`); `QrIteration`/`Polar` override at every size; wide input solved as its adjoint; `canonical_pairs` kernel |
//! | `qr` | `Xgeqrf` + `?orgqr`/`?ungqr`; `qr_sign` kernel (diag(R) ≥ 0) |
//! | `eigh`, `eigh_vals` | `?syevjBatched`/`?heevjBatched` for n ≤ 32; else `Xsyevd`; `canonical_pairs` kernel |
//! | `cholesky` | `Xpotrf` (info → `NotPositiveDefinite`, lowest batch index); `map` kernel zeroes the upper triangle |
//! | `lu`, `lu_factor` | `Xgetrf`; `ipiv_to_perm` kernel (P A = L U) |
//! | `lu_factor_solve` | `Xgetrf` + `Xgetrs` (info → `Singular`) |
//! | `lu_solve_prepared` | `permute_rows` kernel + two cuBLAS `?trsm` |
//! | `triangular_solve` | cuBLAS `?trsm` |
//! | `det`, `slogdet` | `Xgetrf` + `lu_det` kernel |
//! | prim `matmul` | `cublasGemmStridedBatchedEx` (N/T/C flags) |
//! | every other primitive (`unary`, `binary`, `scale`, `adjoint`, `diag_part`, `diag_embed`, `tri_mask`, `scale_cols`, `scale_rows`, `sum`/`max`/`min`, `reshape`, `spread`, `slice`, `pad`, `fill`, `eye`, `pair_inv`, `pivot_phase`, `rank_mask`) | NVRTC kernels `map_*`, `zip_*`, `reduce_*`, `fill_*`, `eye_*`, `pair_inv_*`, `pivot_phase_*`, `rank_mask_*` |
//! | `rank_revealing_qr` | Unsupported: cuSOLVER has no column-pivoted QR |
//! | `full_piv_lu`, `full_piv_lu_factor`, `full_piv_lu_solve`, `full_piv_lu_solve_prepared` | Unsupported: cuSOLVER has no full-pivot LU |
//! | `eig`, `eig_vals` | `cusolverDnXgeev` per matrix (real types throughout for real input: LAPACK-packed vectors); `eig_finish` kernel unpacks pairs, normalises (unit 2-norm, canonical phase) and sorts by (re, im) on the device; `nonfinite_flags` kernel → `NonFinite("a")` / `NonConvergence` |
//! | `svd_gauge_check`, `eigh_gauge_check` | NVRTC kernels `svd_gauge_*` / `eigh_gauge_*` (host-cpu's walk, one thread per batch item) → `NotDifferentiable` with host-cpu's messages; so reverse mode through SVD/eigh runs here |
//! | `svd_truncated`, `low_rank_approx`, `polar`, `pinv`, `lstsq` | thin SVD (as `svd`) + `kept_rank` / `spectral_scale` kernels + cuBLAS strided-batched gemm (`ops/recombine.rs`) |
//! | `adjugate` | Unsupported: needs det(U)·det(Vᴴ) phases (two more LU factorizations) and the rescaled cofactor products; not written for the device |
//! | `householder_qr_*` (5 ops) | Unsupported: the compact reflectors are in faer's block-reflector convention, which cuSOLVER's geqrf (LAPACK's) does not reproduce; not ported |
//!
//! [`ops::runs`] returns this table entry for any op.
//!
//! ## Memory and workspace
//!
//! The caller makes one device allocation ([`Cuda::alloc`]) and hands out
//! outputs and workspaces with a [`DeviceArena`] (core's `Allocator`).
//! `workspace()` asks cuSOLVER's `*_bufferSize` and lays the regions out
//! ([`carve::Layout`]); `run_into` carves the same regions from the
//! caller's workspace: no `cudaMalloc` inside a call. (The 64-bit
//! cuSOLVER API may also ask for *host* scratch — zero bytes for the
//! routines used here on current releases — which is a host `Vec`.)
//! Every `run_into` ends with a stream synchronisation; calls from several
//! threads are serialised on the provider's one stream.
//!
//! ```
//! use lindiff_cuda::Cuda;
//! match Cuda::new() {
//!     Ok(cuda) => println!("GPU: {}", cuda.device_name()),
//!     Err(e) => assert!(e.to_string().contains("cuda")),
//! }
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod arena;
pub mod carve;
mod codes;
mod context;
mod error;
mod launch;
mod memory;
pub mod nvrtc;
pub mod ops;
mod provider;
mod scalar;

pub use arena::{DeviceArena, DeviceMemory};
pub use context::{Cuda, CudaOptions};
pub use error::code_name;
pub use memory::{Device, DeviceBuffer, DeviceData};
pub use nvrtc::compile_log;
pub use scalar::CudaScalar;

#[cfg(test)]
mod tests {
    use super::*;
    use lindiff_core::op::{FullPivLu, RankRevealingQr, Svd};
    use lindiff_core::{Error, LinalgOp, Op};

    /// Whether this machine has the CUDA driver library (the tests below
    /// assert the no-CUDA behaviour only where it applies).
    fn driver_present() -> bool {
        // SAFETY: only tries to dlopen the library.
        unsafe { cudarc::driver::sys::is_culib_present() }
    }

    #[test]
    fn without_cuda_every_constructor_is_a_clean_err() {
        if driver_present() {
            println!("skipped: a CUDA driver library is present here");
            return;
        }
        for result in [Cuda::new(), Cuda::with_options(CudaOptions::default().ordinal(3))] {
            let err = result.unwrap_err();
            assert!(matches!(err, Error::ProviderUnavailable { provider: "cuda", .. }), "{err:?}");
            assert_eq!(
                err.to_string(),
                "provider cuda is unavailable: no CUDA driver library (libcuda.so) found"
            );
        }
    }

    #[test]
    fn the_table_names_what_runs_and_refuses_the_rest() {
        assert!(matches!(ops::runs(&Op::Linalg(LinalgOp::Svd(Svd::default()))), ops::Runs::Library(_)));
        for op in [LinalgOp::FullPivLu(FullPivLu), LinalgOp::RankRevealingQr(RankRevealingQr::default())] {
            assert!(matches!(ops::runs(&Op::Linalg(op)), ops::Runs::Unsupported(_)));
        }
        use lindiff_core::op::internal::EighGaugeCheck;
        use lindiff_core::op::{Eig, Pinv};
        for op in [LinalgOp::Eig(Eig), LinalgOp::Pinv(Pinv::default())] {
            let name = op.name();
            assert!(matches!(ops::runs(&Op::Linalg(op)), ops::Runs::Library(_)), "{name}");
        }
        // The reverse-mode checks (gauge, tie, completion) have no device kernels yet.
        assert!(matches!(ops::runs(&EighGaugeCheck::default().into()), ops::Runs::Unsupported(_)));
        use lindiff_core::op::SvdDriver;
        use ops::svd::{routine, Routine};
        assert_eq!(routine(SvdDriver::Auto, 8, 8), Routine::JacobiBatched);
        assert_eq!(routine(SvdDriver::Auto, 33, 8), Routine::QrIteration);
        assert_eq!(routine(SvdDriver::Auto, 4096, 4096), Routine::QrIteration);
        assert_eq!(routine(SvdDriver::DivideAndConquer, 64, 64), Routine::QrIteration);
        assert_eq!(routine(SvdDriver::Jacobi, 8, 8), Routine::JacobiBatched);
        assert_eq!(routine(SvdDriver::Jacobi, 64, 64), Routine::Jacobi);
        assert_eq!(routine(SvdDriver::QrIteration, 8, 8), Routine::QrIteration);
        assert_eq!(routine(SvdDriver::Polar, 4096, 4096), Routine::Polar);
    }
}
