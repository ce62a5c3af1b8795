//! ⟨W_U, U_k U_kᵀ⟩ + ⟨W_V, V_k V_kᵀ⟩: weighted projectors on both sides.
//! Differentiable unless k splits a tie.

use super::blocks::{projector, Vectors};
use lindiff_core::face::Face;
use lindiff_core::op::SvdOptions;
use lindiff_core::prim::BinaryOp;
use lindiff_core::{Ops, Result};

/// The two-sided weighted projector sum of each matrix in `a`.
pub(super) fn eval<F: Face + ?Sized>(
    f: &mut F,
    a: &F::Tensor,
    k: usize,
    wu: &F::Tensor,
    wv: &F::Tensor,
    svd: SvdOptions,
) -> Result<F::Tensor> {
    let dims = f.meta(a).shape.dims().to_vec();
    let (m, n) = (dims[0], dims[1]);
    let factors = f.svd_with_options(a, svd)?;
    let uk = f.slice(&factors.u, [0, 0], [m, k])?;
    let vhk = f.slice(&factors.vh, [0, 0], [k, n])?;
    let left = projector(f, wu, &uk, Vectors::Columns)?;
    let right = projector(f, wv, &vhk, Vectors::Rows)?;
    f.binary(BinaryOp::Add, &left, &right)
}
