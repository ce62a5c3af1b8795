//! Building blocks of the losses: sums and pairings per matrix.

use lindiff_core::face::Face;
use lindiff_core::prim::{BinaryOp, ReduceOp};
use lindiff_core::{Linalg, MatOp, Result};

/// Σ over the first `core_rank` dims of `x` (one sum per batch item).
pub(crate) fn total<F: Face + ?Sized>(f: &mut F, x: &F::Tensor, core_rank: usize) -> Result<F::Tensor> {
    f.reduce(ReduceOp::Sum, x, core_rank)
}

/// ⟨W, X⟩ = Σ W ∘ X per matrix (real).
pub(crate) fn pairing<F: Face + ?Sized>(f: &mut F, w: &F::Tensor, x: &F::Tensor) -> Result<F::Tensor> {
    let product = f.binary(BinaryOp::Mul, w, x)?;
    total(f, &product, 2)
}

/// ⟨W, X Xᵀ⟩ for the columns `x`.
pub(crate) fn projector_of_columns<F: Face + ?Sized>(
    f: &mut F,
    w: &F::Tensor,
    x: &F::Tensor,
) -> Result<F::Tensor> {
    let p = f.matmul_with(x, MatOp::Identity, x, MatOp::Adjoint)?;
    pairing(f, w, &p)
}

/// ⟨W, Yᵀ Y⟩ for the rows `y` (V_k V_kᵀ from the first k rows of Vᵀ).
pub(crate) fn projector_of_rows<F: Face + ?Sized>(
    f: &mut F,
    w: &F::Tensor,
    y: &F::Tensor,
) -> Result<F::Tensor> {
    let p = f.matmul_with(y, MatOp::Adjoint, y, MatOp::Identity)?;
    pairing(f, w, &p)
}
