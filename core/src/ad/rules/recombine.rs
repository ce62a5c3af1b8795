//! SVD recombinations with their own rules (docs/ad-rules.md#recombinations):
//! written so that no division by a gap inside a kept group appears.

use super::{Primals, Tangents};
use crate::ad::{Cx, Tangent};
use crate::error::Result;
use crate::op::LinalgOp;
use crate::provider::Op;

mod low_rank;
mod pinv;
mod polar;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    match l {
        LinalgOp::LowRankApprox(o) => low_rank::jvp(cx, op, o, primals, dx),
        LinalgOp::Polar(_) => polar::jvp(cx, op, primals, dx),
        LinalgOp::Pinv(o) => pinv::pinv(cx, op, o, primals, dx),
        LinalgOp::Lstsq(o) => pinv::lstsq(cx, op, o, primals, dx),
        LinalgOp::MatrixRank(_) => Ok(super::tangents([super::integer_output(op, "rank")])),
        _ => Ok(super::unsupported(op)),
    }
}
