//! # lindiff-blas
//!
//! The LAPACK provider of lindiff: every `LinalgOp` that LAPACK has a
//! routine for runs through it, linked against the system OpenBLAS
//! (Debian's `libopenblas-dev`; `build.rs` adds `-lopenblas`, nothing is
//! downloaded or built). Interchangeable with `lindiff-cpu`: the same
//! outputs (up to rounding), conventions and errors, and the whole op and
//! AD suite passes on both.
//!
//! | op | routine |
//! |---|---|
//! | `svd`, `svd_vals`, `svd_full`, `svd_truncated` | ?gesdd (default), ?gesvd for `SvdDriver::QrIteration` |
//! | `qr` | ?geqrf + ?orgqr / ?ungqr |
//! | `rank_revealing_qr` | ?geqp3 + ?orgqr / ?ungqr |
//! | `eigh`, `eigh_vals` | ?syevd / ?heevd |
//! | `eig`, `eig_vals` | ?geev |
//! | `cholesky` | ?potrf |
//! | `lu`, `lu_factor`, `lu_factor_solve`, `lu_solve_prepared` | ?getrf, ?getrs |
//! | `triangular_solve` | ?trtrs |
//!
//! Delegated to host-cpu's (faer) kernels: the primitives (`Op::Prim`),
//! full-pivot LU and its solves (LAPACK's ?getc2 is square-only and perturbs
//! tiny pivots, breaking "singular matrices factor exactly"), the compact
//! Householder ops (their state is in faer's reflector convention), `det`,
//! `slogdet`, `adjugate`, and the SVD recombinations (`low_rank_approx`,
//! `polar`, `pinv`, `lstsq`).
//!
//! * Batches use host-cpu's batching ([`lindiff_cpu::kernel_api`]): lanes
//!   over rayon when the [`Exec`] asks for threads; each matrix runs LAPACK
//!   serially on its lane. OpenBLAS's own threads are separate: set
//!   `OPENBLAS_NUM_THREADS=1` for reproducible bits and for allocation
//!   counts (the workspace's `.cargo/config.toml` sets it for `cargo test`
//!   and `cargo bench`).
//! * Workspace: every LAPACK array is carved from the caller's workspace
//!   bytes, uninitialised where LAPACK only writes it (the routines are
//!   called through `lapack-sys` with pointers, each array's length checked
//!   first); no Rust heap allocation in a call. The `lwork = -1` queries
//!   are remembered per thread and (op, shape, dtype), so `workspace()` and
//!   the call ask LAPACK once between them.
//! * Copies: the input LAPACK overwrites is copied once, with the NaN/∞
//!   check in the same pass, into an output where the shapes allow (Q for a
//!   tall or square QR, `v` for `eigh`, `lu` and `x` for the solves; U and
//!   Vᴴ are computed straight into the SVD's outputs).
//! * Outputs follow lindiff's conventions: Vᴴ, real descending singular
//!   values, diag(R) ≥ 0, ascending eigh values, canonical phases (host-cpu's
//!   rule, applied to LAPACK's vectors), eig sorted by (real, imag).
//! * Errors: LAPACK's `info` becomes the op's typed error, as host-cpu
//!   reports for the same input (`NonConvergence`, `NotPositiveDefinite`,
//!   `Singular` for the solves); NaN/∞ input is `NonFinite`, checked
//!   before LAPACK sees it.
//!
//! ```
//! use lindiff_blas::prelude::*;
//! let mut la = Direct::new(Blas::new());
//! let a = la.tensor_row_major(2, 2, &[3.0, 0.0, 0.0, -2.0]).unwrap();
//! let s = la.svd_vals(&a).unwrap();
//! let s = s.to_vec::<f64>().unwrap();
//! assert!((s[0] - 3.0).abs() < 1e-14 && (s[1] - 2.0).abs() < 1e-14);
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod kernels;
pub mod lapack;
pub mod prelude;

pub use lapack::Lapack;
pub use lindiff_core::face::direct::{Direct, Tensor};
pub use lindiff_core::{Face, Linalg, Ops};

use lindiff_core::{Exec, Host, HostBuffer, Input, Op, Output, Provider, Result, TensorDesc, WorkspaceReq};
use lindiff_cpu::Cpu;

/// The LAPACK provider. Carries its [`Exec`], so `workspace` and `run_into`
/// plan lanes the same way.
///
/// ```
/// use lindiff_blas::prelude::*;
/// assert_eq!(Blas::new().name(), "blas");
/// assert_eq!(Blas::with_exec(Exec::with_threads(2)).exec().threads(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Blas {
    exec: Exec,
}

impl Blas {
    /// A serial provider (one lane; OpenBLAS's threads as its environment says).
    pub const fn new() -> Blas {
        Blas { exec: Exec::serial() }
    }

    /// A provider running batches with `exec`'s team and batch policy.
    pub const fn with_exec(exec: Exec) -> Blas {
        Blas { exec }
    }

    /// host-cpu with the same exec: runs what LAPACK has no routine for.
    fn fallback(&self) -> Cpu {
        Cpu::with_exec(self.exec)
    }
}

impl Provider for Blas {
    type Memory = Host;

    fn name(&self) -> &'static str {
        "blas"
    }

    fn exec(&self) -> Exec {
        self.exec
    }

    /// # Errors
    /// `Overflow` for a requirement that does not fit in `usize`; what
    /// host-cpu reports for a delegated op (and for a matrix too large for
    /// LAPACK's 32-bit sizes, which host-cpu's kernels run). Never panics,
    /// whatever the shapes.
    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        match op {
            Op::Linalg(linalg) => {
                if let Some(req) = kernels::workspace(linalg, inputs, self.exec) {
                    let req = req?;
                    if !req.is_satisfiable() {
                        let arg = op.input_names().first().copied().unwrap_or("workspace");
                        let shape = inputs.first().map(|d| d.meta.shape.clone()).unwrap_or_default();
                        return Err(lindiff_core::Error::Overflow { op: op.name(), arg, shape });
                    }
                    return Ok(req);
                }
            }
            // Primitives, the gauge checks and chains run on host-cpu's kernels.
            Op::Prim(_) | Op::Internal(_) => {}
        }
        self.fallback().workspace(op, inputs)
    }

    /// # Errors
    /// The op's typed error for a failing batch item (see the crate docs).
    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Host>],
        outputs: &mut [Option<Output<'_, 'm, Host>>],
        workspace: &mut HostBuffer<'m>,
    ) -> Result<()> {
        match op {
            Op::Linalg(linalg) => {
                // SAFETY: `run_into`'s caller made `call`'s checks.
                if let Some(result) = unsafe { kernels::run(linalg, inputs, outputs, workspace, self.exec) } {
                    return result;
                }
            }
            // Primitives, the gauge checks and chains run on host-cpu's kernels.
            Op::Prim(_) | Op::Internal(_) => {}
        }
        // SAFETY: the caller's contract for `run_into` is the same for
        // host-cpu, and `workspace` sized it with host-cpu's requirement
        // for every op delegated here.
        unsafe { self.fallback().run_into(op, inputs, outputs, workspace) }
    }
}

/// `true` when `op` runs on a LAPACK routine here (for dtype `dtype`)
/// rather than being delegated to host-cpu's kernels.
///
/// ```
/// use lindiff_blas::prelude::*;
/// use op::{FullPivLu, Svd};
/// assert!(lindiff_blas::uses_lapack(&LinalgOp::Svd(Svd::default()), DType::F64));
/// assert!(!lindiff_blas::uses_lapack(&LinalgOp::FullPivLu(FullPivLu), DType::F64));
/// ```
pub fn uses_lapack(op: &lindiff_core::LinalgOp, dtype: lindiff_core::DType) -> bool {
    kernels::has_kernel(op, dtype)
}
