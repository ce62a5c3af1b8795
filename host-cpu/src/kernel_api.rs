//! The contract for providers built on host-cpu's batching (e.g.
//! `lindiff-blas`): a per-matrix [`Kernel`] sees one batch item at a time
//! through [`Item`] (typed strided views of its inputs, contiguous
//! column-major outputs), sizes its scratch from [`Shapes`] with faer's
//! `StackReq`, and reports per-matrix [`Failure`]s, which [`run_kernel`]
//! turns into typed errors naming the op and the batch index.
//!
//! [`workspace_kernel`] and [`run_kernel`] are exactly what host-cpu's own
//! `LinalgOp` kernels go through: the batch is split into lanes by the
//! provider's [`Exec`] (see [`Exec::plan`]), each lane gets its own scratch
//! region carved from the caller's workspace bytes, and a kernel must write
//! every element of every present output of its item.
//!
//! Lane regions start on 64-byte boundaries, so a workspace requirement is
//! aligned to at least 64 bytes (even an empty one). A single-lane run pads
//! the workspace to 64 bytes and does not call [`Kernel::scratch`] again:
//! scratch sizes must be a function of the shapes (as faer's are).
//!
//! ```
//! use lindiff_cpu::kernel_api::{workspace_kernel, Failure, Item, Kernel, Shapes};
//! use faer::dyn_stack::{MemStack, StackReq};
//! use faer::Par;
//! use lindiff_core::{DType, Exec, Shape, TensorDesc, TensorMeta};
//!
//! /// Copies input 0 into output 0.
//! struct Copy;
//! impl Kernel<f64> for Copy {
//!     fn scratch(&self, _: &Shapes, _: Par) -> StackReq {
//!         StackReq::EMPTY
//!     }
//!     fn run(&self, item: &mut Item<'_>, _: Par, _: &mut MemStack) -> Result<(), Failure> {
//!         let a = item.mat::<f64>(0);
//!         item.out_mat::<f64>(0).copy_from(a);
//!         Ok(())
//!     }
//! }
//! let desc = TensorDesc::contiguous(TensorMeta::new(DType::F64, Shape::new(&[3, 3]).unwrap())).unwrap();
//! assert_eq!(workspace_kernel::<f64>(&Copy, &[&desc], Exec::serial()).bytes(), 0);
//! ```

pub use crate::batch::{Failure, Item, Kernel, Shapes};
pub use crate::field::Field;
/// The canonical phase rule every provider applies (largest-magnitude entry
/// of each column real and positive; a column scaled by a phase), the phase
/// of a scalar (diag(R) ≥ 0), and the non-finite input check.
pub use crate::kernels::{
    columns::packed, columns::packed_mut, finite::all_finite, finite::copy_finite, finite::lower_finite,
    finite::slice_finite, gauge::canonicalize_columns, gauge::canonicalize_pairs,
    gauge::canonicalize_pairs_adjoint, gauge::scale_column, householder::phase,
};

use crate::batch::{self, BatchPlan};
use lindiff_core::{Exec, Host, HostBuffer, Input, LinalgOp, Output, Result, TensorDesc, WorkspaceReq};

/// Batch dims of a linalg call: everything after input 0's matrix dims.
pub fn batch_rank(inputs: &[&TensorDesc]) -> usize {
    batch_rank_of(inputs.first().copied())
}

/// [`batch_rank`] from input 0's layout alone.
fn batch_rank_of(first: Option<&TensorDesc>) -> usize {
    first.map_or(0, |d| d.meta.shape.rank().saturating_sub(2))
}

/// The workspace [`run_kernel`] needs for `kernel` over these inputs with
/// `exec`: one scratch region per batch lane.
pub fn workspace_kernel<T>(kernel: &dyn Kernel<T>, inputs: &[&TensorDesc], exec: Exec) -> WorkspaceReq {
    let shapes = Shapes::new(inputs, batch_rank(inputs));
    batch::workspace::<T>(kernel, &shapes, exec)
}

/// Runs `kernel` for every batch item of `op` (lanes in parallel when `exec`
/// says so, with the `threads` feature) and marks the outputs written.
///
/// # Errors
/// The lowest-indexed item's [`Failure`] as an `Error` naming `op` and the
/// batch index (`NonFinite`, `NotPositiveDefinite`, `Singular`,
/// `NonConvergence`).
///
/// # Safety
/// - The arguments must have passed `lindiff_core::call`'s checks for
///   `op`, as for [`Provider::run_into`](lindiff_core::Provider::run_into):
///   every input view inside its data and aligned; every argument's batch
///   dims (after its matrix dims) equal to input 0's; each output's meta the
///   one `call::infer` made (so its batch count is input 0's) and its buffer
///   aligned and large enough for that contiguous layout; the workspace at
///   least [`workspace_kernel`]'s requirement for `kernel` and `exec`,
///   counted from its first aligned byte. The kernels get raw views built
///   from them.
/// - `kernel` must honour the [`Kernel`] contract: on `Ok`, every element
///   of every present output of its item has been written, and no output
///   element is read before it is written (outputs start uninitialised;
///   this function marks them initialised after the last item).
pub unsafe fn run_kernel<T>(
    op: &LinalgOp,
    kernel: &dyn Kernel<T>,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Result<()> {
    let rank = batch_rank_of(inputs.first().map(|i| i.desc));
    let written = BatchPlan::run_with(inputs, outputs, rank, |plan| {
        batch::run::<T>(op.name(), kernel, plan, exec, workspace).map(|()| plan.output_bytes())
    })?;
    for (out, written) in outputs.iter_mut().zip(written) {
        if let Some(out) = out {
            // SAFETY: `batch::run` returned Ok, so every kernel call
            // succeeded, and the kernel wrote every element of every present
            // output of its batch item (this function's contract); the
            // items cover the output's `written` bytes.
            unsafe { out.buffer.assume_init_prefix(written) };
        }
    }
    Ok(())
}
