//! Building blocks of the losses: sums and pairings per matrix.

use lindiff_core::face::Face;
use lindiff_core::prim::{BinaryOp, ReduceOp};
use lindiff_core::{MatOp, Ops, Result};

/// Σ over the first `core_rank` dims of `x` (one sum per batch item).
pub(crate) fn total<F: Face + ?Sized>(f: &mut F, x: &F::Tensor, core_rank: usize) -> Result<F::Tensor> {
    f.reduce(ReduceOp::Sum, x, core_rank)
}

/// ⟨W, X⟩ = Σ W ∘ X per matrix (real).
pub(crate) fn pairing<F: Face + ?Sized>(f: &mut F, w: &F::Tensor, x: &F::Tensor) -> Result<F::Tensor> {
    let product = f.binary(BinaryOp::Mul, w, x)?;
    total(f, &product, 2)
}

/// Which vectors of a matrix a projector is built from.
#[derive(Clone, Copy)]
pub(crate) enum Vectors {
    /// The columns `x`: X Xᵀ.
    Columns,
    /// The rows `y`: Yᵀ Y (V_k V_kᵀ from the first k rows of Vᵀ).
    Rows,
}

/// ⟨W, P⟩ for the projector P onto the columns or rows of `x`.
pub(crate) fn projector<F: Face + ?Sized>(
    f: &mut F,
    w: &F::Tensor,
    x: &F::Tensor,
    of: Vectors,
) -> Result<F::Tensor> {
    let (left, right) = match of {
        Vectors::Columns => (MatOp::Identity, MatOp::Adjoint),
        Vectors::Rows => (MatOp::Adjoint, MatOp::Identity),
    };
    let p = f.matmul_with(x, left, x, right)?;
    pairing(f, w, &p)
}
