//! The per-matrix kernels of every `LinalgOp`, and the dispatch from an op
//! and dtype to its kernel. Each family module has a `find` that maps its ops
//! to kernels; adding an op's CPU kernel touches only its family's file.
//!
//! The `op-*` features choose which families `find` reaches: a family that
//! is off stays compiled and type-checked (others share its helpers) but is
//! unreachable, so the linker drops its kernels — firmware pays flash only
//! for the ops it runs.

#[macro_use]
mod avx2;
mod adjugate;
mod cholesky;
mod cholesky_small;
pub(crate) mod columns;
mod det;
mod eig;
mod eigh;
pub(crate) mod finite;
mod full_piv_lu;
pub(crate) mod gauge;
mod gauge_check;
pub(crate) mod householder;
mod lu;
mod qr;
mod recombine;
mod svd;
mod svd_jacobi;
mod triangular_solve;

use crate::batch::Kernel;
use crate::field::{with_field, Field};
use crate::kernel_api::{run_kernel, workspace_kernel};
use lindiff_core::{
    Error, Exec, Host, HostBuffer, Input, LinalgOp, Output, Result, TensorDesc, WorkspaceReq,
};

/// The kernel of `op` for dtype `T`, if the CPU provider has one.
fn find<T: Field>(op: &LinalgOp) -> Option<&dyn Kernel<T>> {
    None.or_else(|| if cfg!(feature = "op-svd") { svd::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-qr") { qr::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-qr") { householder::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-eigh") { eigh::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-eig") { eig::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-cholesky") { cholesky::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-lu") { lu::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-full-piv-lu") { full_piv_lu::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-triangular-solve") { triangular_solve::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-det") { det::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-det") { adjugate::find(op) } else { None })
        .or_else(|| if cfg!(feature = "op-recombine") { recombine::find(op) } else { None })
        .or_else(|| gauge_check::find(op))
}

fn kernel<T: Field>(op: &LinalgOp) -> Result<&dyn Kernel<T>> {
    find::<T>(op).ok_or(Error::Unsupported {
        op: op.name(),
        provider: "cpu",
        why: "no CPU kernel for this op in this build (lindiff-cpu's `op-*` features)",
    })
}

/// The dtype kernels dispatch on (input 0's); every linalg op has inputs.
fn first_dtype(op: &LinalgOp, dtype: Option<lindiff_core::DType>) -> Result<lindiff_core::DType> {
    dtype.ok_or(Error::Arity { op: op.name(), expected: op.input_count(), got: 0 })
}

/// The workspace `run` needs.
pub(crate) fn workspace(op: &LinalgOp, inputs: &[&TensorDesc], exec: Exec) -> Result<WorkspaceReq> {
    let dtype = first_dtype(op, inputs.first().map(|d| d.meta.dtype))?;
    with_field!(op.name(), dtype, T => Ok(workspace_kernel::<T>(kernel::<T>(op)?, inputs, exec)))
}

/// Runs `op` over the batch and marks its outputs written.
///
/// # Safety
/// The arguments must have passed `lindiff_core::call`'s checks (see
/// [`Provider::run_into`](lindiff_core::Provider::run_into)).
pub(crate) unsafe fn run(
    op: &LinalgOp,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Result<()> {
    let dtype = first_dtype(op, inputs.first().map(|i| i.desc.meta.dtype))?;
    with_field!(op.name(), dtype, T => {
        let kernel = kernel::<T>(op)?;
        // SAFETY: `call`'s checks are this function's contract; every
        // kernel of this crate writes each element of its item's present
        // outputs on `Ok` and reads none before writing it (the `Kernel`
        // contract, read from each kernel; tests/tests/prefill.rs finds the
        // outputs of the ops it covers independent of the memory's previous
        // contents, 0x00 or 0xFF).
        unsafe { run_kernel::<T>(op, kernel, inputs, outputs, workspace, exec) }
    })
}
