//! Σ sᵢ, the nuclear norm. Its gradient is U Vᵀ where every sᵢ > 0; at a
//! zero singular value it has a kink and lindiff reports `svd`/`s` as not
//! differentiable.

use super::blocks::total;
use lindiff_core::face::Face;
use lindiff_core::op::SvdOptions;
use lindiff_core::{Ops, Result};

/// Σ sᵢ of each matrix in `a`.
pub(super) fn eval<F: Face + ?Sized>(f: &mut F, a: &F::Tensor, svd: SvdOptions) -> Result<F::Tensor> {
    let s = f.svd_with_options(a, svd)?.s;
    total(f, &s, 1)
}
