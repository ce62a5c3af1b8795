//! Σ cᵢ sᵢ with user weights c: differentiable where the weights are equal
//! across every tie (a symmetric function of tied values) and zero where
//! sᵢ = 0; otherwise reported.

use super::blocks::total;
use lindiff_core::face::Face;
use lindiff_core::op::SvdOptions;
use lindiff_core::prim::BinaryOp;
use lindiff_core::{Ops, Result};

/// Σ cᵢ sᵢ of each matrix in `a` (`c` shaped like the singular values).
pub(super) fn eval<F: Face + ?Sized>(
    f: &mut F,
    a: &F::Tensor,
    c: &F::Tensor,
    svd: SvdOptions,
) -> Result<F::Tensor> {
    let s = f.svd_with_options(a, svd)?.s;
    let cs = f.binary(BinaryOp::Mul, c, &s)?;
    total(f, &cs, 1)
}
