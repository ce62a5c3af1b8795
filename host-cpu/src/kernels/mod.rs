//! The per-matrix kernels of every `LinalgOp` (and of the internal gauge
//! checks), and the dispatch from an op and dtype to its kernel: each
//! payload type is its own kernel, and `find` names every op.
//!
//! The `op-*` features choose which families `find` reaches: a family that
//! is off stays compiled and type-checked (others share its helpers) but is
//! unreachable, so the linker drops its kernels — firmware pays flash only
//! for the ops it runs.

/// `Kernel` for a pair of ops that share one computation, `$both` (values
/// and vectors) and `$values` (values only), through the family module's
/// `scratch::<T>(n, vectors, par)` and `compute::<T>(item, vectors, par,
/// stack)` on the square input 0.
macro_rules! values_and_vectors {
    ($both:ty, $values:ty) => {
        impl<T: Field> Kernel<T> for $both {
            fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
                let (n, _) = shapes.input(0);
                // The values-only path runs when the vectors are switched off.
                scratch::<T>(n, true, par).or(scratch::<T>(n, false, par))
            }

            fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
                compute::<T>(item, true, par, stack)
            }
        }

        impl<T: Field> Kernel<T> for $values {
            fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
                let (n, _) = shapes.input(0);
                scratch::<T>(n, false, par)
            }

            fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
                compute::<T>(item, false, par, stack)
            }
        }
    };
}

/// Whether lindiff's own kernels for small real matrices
/// (`cholesky_small`, `lu_small`, `qr_small`) are used at
/// all: in `std` builds. Without `std` (firmware) faer's kernels, linked
/// anyway for complex and larger matrices, serve every size: there flash
/// counts more than these nanoseconds (the Cortex-M f32 build's 160 KiB
/// .text target, `docs/embedded.md`).
const SMALL_KERNELS: bool = cfg!(feature = "std");

#[macro_use]
mod avx2;
mod adjugate;
mod bidiagonal_dc;
mod cholesky;
mod cholesky_small;
pub(crate) mod columns;
mod det;
mod eig;
mod eigh;
mod expm;
mod expm_pade;
mod expm_scaling;
pub(crate) mod finite;
mod frobenius;
mod full_piv_lu;
mod funm;
mod funm_frechet;
pub(crate) mod gauge;
pub(crate) mod gauge_check;
mod gauss_legendre;
pub(crate) mod householder;
mod kept;
pub(crate) mod lu;
mod lu_small;
pub(crate) mod output_range;
mod pool;
mod qr;
mod qr_small;
pub(crate) mod range;
mod recombine;
pub(crate) mod scaling;
mod schur;
mod schur_funm;
mod secular;
pub(crate) mod singular;
mod svd;
pub mod svd_guard;
mod svd_jacobi;
pub(crate) mod triangular_solve;
mod tridiagonal_dc;

use crate::batch::Kernel;
use crate::batch_run::{run_kernel, workspace_kernel};
use crate::field::{with_field, Field};
use lindiff_core::op::internal::InternalOp;
use lindiff_core::{
    Error, Exec, Host, HostBuffer, Input, LinalgOp, Output, Result, TensorDesc, WorkspaceReq,
};

/// `Some(kernel)` when lindiff-cpu's feature `$family` is on.
macro_rules! built {
    ($family:literal, $kernel:expr) => {
        if cfg!(feature = $family) {
            Some($kernel)
        } else {
            None
        }
    };
}

/// The kernel of `op` for dtype `T`, if this build has it. Every op is
/// named (no wildcard): a new op does not compile until it has an arm.
fn find<T: Field>(op: &LinalgOp) -> Option<&dyn Kernel<T>> {
    match op {
        LinalgOp::Svd(k) => built!("op-svd", k),
        LinalgOp::SvdVals(k) => built!("op-svd", k),
        LinalgOp::SvdFull(k) => built!("op-svd", k),
        LinalgOp::SvdTruncated(k) => built!("op-svd", k),
        LinalgOp::Qr(k) => built!("op-qr", k),
        LinalgOp::RankRevealingQr(k) => built!("op-qr", k),
        LinalgOp::HouseholderQrFactor(k) => built!("op-qr", k),
        LinalgOp::HouseholderQrAppend(k) => built!("op-qr", k),
        LinalgOp::HouseholderQrQ(k) => built!("op-qr", k),
        LinalgOp::HouseholderQrR(k) => built!("op-qr", k),
        LinalgOp::HouseholderQrApply(k) => built!("op-qr", k),
        LinalgOp::Eigh(k) => built!("op-eigh", k),
        LinalgOp::EighVals(k) => built!("op-eigh", k),
        LinalgOp::FunmHermitian(k) => built!("op-eigh", k),
        LinalgOp::FunmHermitianFactors(k) => built!("op-eigh", k),
        LinalgOp::FunmHermitianFrechet(k) => built!("op-eigh", k),
        LinalgOp::FunmHermitianSecond(k) => built!("op-eigh", k),
        LinalgOp::Expm(k) => built!("op-matfun", k),
        LinalgOp::ExpmFrechet(k) => built!("op-matfun", k),
        LinalgOp::ExpmFactors(k) => built!("op-matfun", k),
        LinalgOp::ExpmFrechetFactored(k) => built!("op-matfun", k),
        LinalgOp::Logm(k) => built!("op-matfun", k),
        LinalgOp::LogmFrechet(k) => built!("op-matfun", k),
        LinalgOp::Sqrtm(k) => built!("op-matfun", k),
        LinalgOp::SqrtmFrechet(k) => built!("op-matfun", k),
        LinalgOp::Eig(k) => built!("op-eig", k),
        LinalgOp::EigVals(k) => built!("op-eig", k),
        LinalgOp::Cholesky(k) => built!("op-cholesky", k),
        LinalgOp::Lu(k) => built!("op-lu", k),
        LinalgOp::LuFactor(k) => built!("op-lu", k),
        LinalgOp::LuFactorSolve(k) => built!("op-lu", k),
        LinalgOp::LuSolvePrepared(k) => built!("op-lu", k),
        LinalgOp::FullPivLu(k) => built!("op-full-piv-lu", k),
        LinalgOp::FullPivLuFactor(k) => built!("op-full-piv-lu", k),
        LinalgOp::FullPivLuSolve(k) => built!("op-full-piv-lu", k),
        LinalgOp::FullPivLuSolvePrepared(k) => built!("op-full-piv-lu", k),
        LinalgOp::TriangularSolve(k) => built!("op-triangular-solve", k),
        LinalgOp::Det(k) => built!("op-det", k),
        LinalgOp::Slogdet(k) => built!("op-det", k),
        LinalgOp::Adjugate(k) => built!("op-det", k),
        LinalgOp::LowRankApprox(k) => built!("op-recombine", k),
        LinalgOp::Polar(k) => built!("op-recombine", k),
        LinalgOp::Pinv(k) => built!("op-recombine", k),
        LinalgOp::Lstsq(k) => built!("op-recombine", k),
        LinalgOp::MatrixRank(k) => built!("op-recombine", k),
    }
}

/// The kernel of an internal op (each check belongs to its decomposition's
/// family).
fn find_internal<T: Field>(op: &InternalOp) -> Option<&dyn Kernel<T>> {
    match op {
        InternalOp::SvdGaugeCheck(k) => built!("op-svd", k),
        InternalOp::EighGaugeCheck(k) => built!("op-eigh", k),
        InternalOp::EigGaugeCheck(k) => built!("op-eig", k),
        InternalOp::CompletionCheck(k) => built!("op-svd", k),
        // Passes over whole tensors, not per-matrix kernels
        // (`prims::values_check`, `prims::tangent_tie_check`, `prims::chain`).
        InternalOp::ValuesCheck(_) | InternalOp::TangentTieCheck(_) | InternalOp::Chain(_) => None,
        // Checks the input cotangent of any spectral op.
        InternalOp::TieCheck(k) => Some(k),
    }
}

fn kernel<'a, T: Field>(op: &KernelOp<'a>) -> Result<&'a dyn Kernel<T>> {
    let found = match op {
        KernelOp::Linalg(l) => find::<T>(l),
        KernelOp::Internal(i) => find_internal::<T>(i),
    };
    found.ok_or(Error::Unsupported {
        op: op.name(),
        provider: "cpu",
        why: "no CPU kernel for this op in this build (lindiff-cpu's `op-*` features)",
    })
}

/// An op that runs on a per-matrix kernel: a linear-algebra op or an
/// internal one.
#[derive(Clone, Copy)]
pub(crate) enum KernelOp<'a> {
    /// A linear-algebra op.
    Linalg(&'a LinalgOp),
    /// An internal op (a gauge check).
    Internal(&'a InternalOp),
}

impl KernelOp<'_> {
    fn name(&self) -> &'static str {
        match self {
            KernelOp::Linalg(l) => l.name(),
            KernelOp::Internal(i) => i.name(),
        }
    }

    fn input_count(&self) -> usize {
        match self {
            KernelOp::Linalg(l) => l.input_count(),
            KernelOp::Internal(i) => i.input_names().len(),
        }
    }
}

/// The dtype kernels dispatch on (input 0's); every kernel op has inputs.
fn first_dtype(op: &KernelOp<'_>, dtype: Option<lindiff_core::DType>) -> Result<lindiff_core::DType> {
    dtype.ok_or(Error::Arity { op: op.name(), expected: op.input_count(), got: 0 })
}

/// The workspace `run` needs.
pub(crate) fn workspace(op: KernelOp<'_>, inputs: &[&TensorDesc], exec: Exec) -> Result<WorkspaceReq> {
    let dtype = first_dtype(&op, inputs.first().map(|d| d.meta.dtype))?;
    with_field!(op.name(), dtype, T => Ok(workspace_kernel::<T>(kernel::<T>(&op)?, inputs, exec)))
}

/// Runs `op` over the batch and marks its outputs written.
///
/// # Safety
/// The arguments must have passed `lindiff_core::call`'s checks (see
/// [`Provider::run_into`](lindiff_core::Provider::run_into)).
pub(crate) unsafe fn run(
    op: KernelOp<'_>,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Result<()> {
    let dtype = first_dtype(&op, inputs.first().map(|i| i.desc.meta.dtype))?;
    with_field!(op.name(), dtype, T => {
        let kernel = kernel::<T>(&op)?;
        // SAFETY: `call`'s checks are this function's contract; every
        // kernel of this crate writes each element of its item's present
        // outputs on `Ok` and reads none before writing it (the `Kernel`
        // contract, read from each kernel; tests/tests/prefill.rs finds the
        // outputs of the ops it covers independent of the memory's previous
        // contents, 0x00 or 0xFF).
        unsafe { run_kernel::<T>(op.name(), kernel, inputs, outputs, workspace, exec) }
    })?;
    match op {
        KernelOp::Linalg(l) => output_range::outputs_in_range(l, inputs, outputs),
        // The checks pass cotangents through: nothing of theirs to range.
        KernelOp::Internal(_) => Ok(()),
    }
}
