//! Not written yet: every output reports an unsupported derivative.

use super::super::{unsupported, Primals, Tangents};
use crate::ad::{Cx, Tangent};
use crate::error::Result;
use crate::op::LowRankApprox;
use crate::provider::Op;

pub(super) fn jvp<C: Cx + ?Sized>(
    _cx: &mut C,
    op: &Op,
    _o: &LowRankApprox,
    _primals: &Primals<'_, C::P>,
    _dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    Ok(unsupported(op))
}
