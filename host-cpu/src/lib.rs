//! # lindiff-cpu
//!
//! The CPU provider of lindiff over [faer] 0.24: every op runs through faer's
//! allocation-free `*_scratch` + `MemStack` APIs over the caller's workspace
//! bytes — or, for small SVDs and real Cholesky factors, lindiff's own
//! kernels where they beat faer's (below) — and writes its outputs into
//! caller memory.
//!
//! * Batches: with at least as many matrices as threads, each thread runs a
//!   lane of matrices serially (`Par::Seq`); otherwise matrices run one at a
//!   time (with faer's own threads under the `faer-rayon` feature). Results
//!   do not depend on how a batch is split; `faer-rayon` parallelism inside
//!   one matrix may change the last bits.
//! * Outputs follow lindiff's conventions: Vᴴ, real descending singular
//!   values, canonical phases (largest-magnitude entry of each U / eigenvector
//!   column real and positive).
//! * SVD guard: faer's divide-and-conquer SVD (min(m, n) ≥ 128) is checked
//!   with probe vectors ([`svd_guard`]) and redone with the QR algorithm if
//!   inaccurate.
//! * Small matrices (`std` builds) run lindiff's own kernels where they beat
//!   faer's: the SVD up to 8×8 with `SvdDriver::Auto` (and at any size with
//!   `SvdDriver::Jacobi`) is the one-sided Jacobi SVD described below
//!   (0.55–0.63 of faer's time at 2×2 to 8×8), and the Cholesky factor of a
//!   real matrix up to n = 132 (f32 at 128 excepted) is a register-blocked
//!   left-looking kernel (0.78–0.80 × faer at n = 32, ~0.94 at 128).
//!   Without `std` (firmware) faer's kernels alone are linked, unless
//!   `svd-jacobi` asks for Jacobi.
//! * `svd-jacobi` feature (for small matrices, firmware): every SVD — and
//!   pinv, polar, lstsq, low_rank_approx, adjugate, which run on it — uses
//!   lindiff's own one-sided Jacobi SVD (Hestenes: sweeps of plane
//!   rotations on the columns of A, or of Aᴴ when A is wide, in round-robin
//!   order, until every pair is orthogonal to √m·ε; complex pairs by the
//!   complex rotation)
//!   instead of faer's, whatever the `SvdDriver`; same conventions, same
//!   errors (`NonFinite` naming `a`, `NonConvergence` after 80 sweeps), all
//!   in the op's workspace. Why: faer 0.24 has no public entry to its
//!   bidiagonal QR iteration, and its divide and conquer is linked even
//!   where it never runs; with the bidiagonalisation and Householder code
//!   they are 46 KiB of the f32 firmware's Cortex-M .text, the Jacobi SVD a
//!   few KiB. Cost O(m·n²) per sweep with 6–12 sweeps (up to 45 for a
//!   numerically rank-deficient 256×256): fine up to a few
//!   dozen columns, slow for large matrices (leave it off there). Jacobi
//!   is accurate: orthogonality and reconstruction to rounding, and high
//!   relative accuracy of small singular values for column-graded A.
//!
//! Without the `std` feature the crate is `no_std` (faer then needs a
//! `#[global_allocator]` to link, and its GEMM allocates above 16³-sized
//! products: the kernels' own products and the matrix functions' solves
//! take heap-free loops there instead; docs/embedded.md, "Heap-free
//! sizes").
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod batch;
mod batch_run;
mod field;
mod gemm;
pub mod kernel_api;
mod trsm;
#[macro_use]
pub(crate) mod kernels;
use kernels::KernelOp;
#[cfg(feature = "std")]
pub mod prelude;
mod prims;
pub use kernels::svd_guard;

pub use field::Field;
#[cfg(feature = "std")]
pub use lindiff_core::face::direct::{Direct, Tensor};
pub use lindiff_core::{Face, Linalg, Ops};

use lindiff_core::op::internal::InternalOp;
use lindiff_core::{
    Error, Exec, Host, HostBuffer, Input, Op, Output, Provider, Result, TensorDesc, WorkspaceReq,
};

/// The faer provider. Carries its [`Exec`], so `workspace` and `run_into`
/// plan lanes the same way.
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let cpu = Cpu::new();
/// assert_eq!(cpu.exec(), Exec::serial());
/// assert_eq!(Cpu::with_exec(Exec::with_threads(2)).exec().threads(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cpu {
    exec: Exec,
}

impl Cpu {
    /// A serial provider.
    pub const fn new() -> Cpu {
        Cpu { exec: Exec::serial() }
    }

    /// A provider running with `exec`'s team and batch policy. Team widths
    /// above 1 need the `threads` feature to run in parallel.
    pub const fn with_exec(exec: Exec) -> Cpu {
        Cpu { exec }
    }
}

/// `req`, or [`Error::Overflow`] naming input 0 of `op` when it is
/// unsatisfiable (a size that does not fit in `usize`).
///
/// # Errors
/// As above.
pub(crate) fn overflow_checked(op: &Op, inputs: &[&TensorDesc], req: WorkspaceReq) -> Result<WorkspaceReq> {
    if req.is_satisfiable() {
        return Ok(req);
    }
    let arg = op.input_names().first().copied().unwrap_or("workspace");
    let shape = inputs.first().map(|d| d.meta.shape.clone()).unwrap_or_default();
    Err(Error::Overflow { op: op.name(), arg, shape })
}

impl Provider for Cpu {
    type Memory = Host;

    fn name(&self) -> &'static str {
        "cpu"
    }

    fn exec(&self) -> Exec {
        self.exec
    }

    /// # Errors
    /// [`Error::Overflow`] (naming input 0) when the requirement does not
    /// fit in `usize`, or an input is too large for the kernels' scratch
    /// arithmetic; [`Error::Unsupported`] for an op or dtype this build has
    /// no kernel for. Never panics, whatever the shapes.
    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        let req = match op {
            Op::Linalg(op) => kernels::workspace(KernelOp::Linalg(op), inputs, self.exec),
            Op::Internal(InternalOp::ValuesCheck(_)) => prims::values_check_workspace(inputs),
            Op::Internal(InternalOp::TangentTieCheck(_)) => prims::tangent_tie_check_workspace(inputs),
            Op::Internal(InternalOp::Chain(_)) => prims::chain_workspace(inputs),
            Op::Internal(op) => kernels::workspace(KernelOp::Internal(op), inputs, self.exec),
            Op::Prim(op) => prims::workspace(op, inputs, self.exec),
        }?;
        overflow_checked(op, inputs, req)
    }

    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Host>],
        outputs: &mut [Option<Output<'_, 'm, Host>>],
        workspace: &mut HostBuffer<'m>,
    ) -> Result<()> {
        match op {
            // SAFETY: `run_into`'s caller made `call`'s checks.
            Op::Linalg(op) => unsafe {
                kernels::run(KernelOp::Linalg(op), inputs, outputs, workspace, self.exec)
            },
            Op::Internal(InternalOp::ValuesCheck(op)) => prims::values_check(op, inputs, outputs),
            Op::Internal(InternalOp::TangentTieCheck(op)) => prims::tangent_tie_check(op, inputs, outputs),
            Op::Internal(InternalOp::Chain(op)) => prims::chain(op, inputs, outputs),
            // SAFETY: as above.
            Op::Internal(op) => unsafe {
                kernels::run(KernelOp::Internal(op), inputs, outputs, workspace, self.exec)
            },
            Op::Prim(op) => prims::run(op, inputs, outputs, workspace, self.exec),
        }
    }
}

/// The repository's README, whose Rust examples run as doctests of this crate.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
mod readme {}
