//! P_k = ⟨W, U_k U_kᵀ⟩: the weighted projector onto the top-k left singular
//! subspace. Gauge-invariant, so differentiable — also at ties inside the
//! top k or below it and at zero values — unless the cut at k splits a
//! group of tied singular values (then `svd`/`u` is reported).

use super::blocks::{projector, Vectors};
use lindiff_core::face::Face;
use lindiff_core::op::SvdOptions;
use lindiff_core::{Ops, Result};

/// ⟨W, U_k U_kᵀ⟩ of each matrix in `a` (W m×m).
pub(super) fn eval<F: Face + ?Sized>(
    f: &mut F,
    a: &F::Tensor,
    k: usize,
    w: &F::Tensor,
    svd: SvdOptions,
) -> Result<F::Tensor> {
    let m = f.meta(a).shape.dims()[0];
    let u = f.svd_with_options(a, svd)?.u;
    let uk = f.slice(&u, [0, 0], [m, k])?;
    projector(f, w, &uk, Vectors::Columns)
}
