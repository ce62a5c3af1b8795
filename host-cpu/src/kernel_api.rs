//! The contract for providers built on host-cpu's batching (e.g.
//! `lindiff-blas`): a per-matrix [`Kernel`] sees one batch item at a time
//! through [`Item`] (typed strided views of its inputs, contiguous
//! column-major outputs), sizes its scratch from [`Shapes`] with faer's
//! `StackReq`, and reports per-matrix [`Failure`]s, which [`run_kernel`]
//! turns into typed errors naming the op and the batch index.
//!
//! [`workspace_kernel`] and [`run_kernel`] are exactly what host-cpu's own
//! `LinalgOp` kernels go through: the batch is split into lanes by the
//! provider's [`Exec`](lindiff_core::Exec) (see
//! [`Exec::plan`](lindiff_core::Exec::plan)), each lane gets its own
//! scratch region carved from the caller's workspace bytes, and a kernel
//! must write every element of every present output of its item.
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

pub use crate::batch::{square_fits, Failure, Item, Kernel, Shapes, SCRATCH_MARGIN};
pub use crate::batch_run::{batch_rank, run_kernel, workspace_kernel};
pub use crate::field::Field;
/// The range check of a linear-algebra op's outputs, which a provider runs
/// after its kernels as host-cpu does.
pub use crate::kernels::output_range::outputs_in_range;
/// The canonical phase rule every provider applies (largest-magnitude entry
/// of each column real and positive; a column scaled by a phase), the phase
/// of a scalar (diag(R) ≥ 0), and the non-finite input check.
pub use crate::kernels::{
    columns::packed, columns::packed_mut, finite::all_finite, finite::copy_finite, finite::lower_finite,
    finite::slice_finite, gauge::canonicalize_columns, gauge::canonicalize_pairs,
    gauge::canonicalize_pairs_adjoint, gauge::scale_column, householder::phase,
};
/// The scale-robust drivers' pieces (the non-finite check that also
/// measures a matrix, the power-of-two [`Scaling`] into a safe
/// [`Range`]) and the solves' singularity test (the pivots, the pivot
/// ratio and the 1-norm condition estimate of
/// `lindiff_core::op::SingularCheck`), and the range check of a
/// partial-pivot U that [`outputs_in_range`] leaves to the LU kernels
/// ([`upper_finite`]), for providers whose kernels share host-cpu's
/// conventions.
pub use crate::kernels::{
    lu::upper_finite,
    range::check_range,
    range::copy_range,
    scaling::scale_mat,
    scaling::Range,
    scaling::Scaling,
    singular::{estimate_len, estimate_scratch, factored_norm, one_norm, pivots, singular_test, Pivots},
    triangular_solve::triangle_scaling,
};
