//! ‖A − A_k‖²_F, the error of the best rank-k approximation (= Σ_{i>k} sᵢ²).
//! A_k comes from `low_rank_approx`, which has its own derivative rule (no
//! division by gaps inside the kept group); a cut through a tie is reported.
//! The ε option does not apply (the op takes no SVD options).

use super::blocks::pairing;
use lindiff_core::face::Face;
use lindiff_core::op::Truncation;
use lindiff_core::prim::BinaryOp;
use lindiff_core::{Ops, Result};

/// ‖A − A_k‖²_F of each matrix in `a`.
pub(super) fn eval<F: Face + ?Sized>(f: &mut F, a: &F::Tensor, k: usize) -> Result<F::Tensor> {
    let (ak, _rank) = f.low_rank_approx(a, Truncation::Count(k))?;
    let residual = f.binary(BinaryOp::Sub, a, &ak)?;
    pairing(f, &residual, &residual)
}
