//! JVPs of the internal ops reverse mode records, so that a gradient
//! program can itself be differentiated (forward over reverse).
//!
//! A check returns the values it checks unchanged, or fails; where it
//! returns, it is the identity on them, and so is its tangent map. The
//! check itself is not repeated on the tangents: the gradient it let
//! through is a smooth function of the input wherever the check passes
//! with a margin (docs/ad-rules.md#second-order). A gauge check's `bound`
//! is an error estimate (a max over pairs), not a value of the loss: it
//! has no derivative, and only [`TieCheck`](crate::op::internal::TieCheck)
//! reads it, which passes its other input through.

use super::{Primals, Tangents};
use crate::ad::Tangent;
use crate::error::Error;
use crate::op::internal::{InternalOp, BOUND_WHY};
use crate::provider::Op;

/// Output tangents of the internal op `i` (`op` is `Op::Internal(i)`).
pub(super) fn jvp<T: Clone, P>(
    op: &Op,
    i: &InternalOp,
    _primals: &Primals<'_, P>,
    dx: &[Tangent<T>],
) -> Tangents<T> {
    // Which input each output passes through (`None`: the bound).
    let through: &[Option<usize>] = match i {
        InternalOp::SvdGaugeCheck(_) => &[Some(3), Some(4), Some(5), None],
        InternalOp::EighGaugeCheck(_) | InternalOp::EigGaugeCheck(_) => &[Some(2), Some(3), None],
        InternalOp::ValuesCheck(_) | InternalOp::TangentTieCheck(_) => &[Some(1)],
        InternalOp::TieCheck(_) | InternalOp::CompletionCheck(_) => &[Some(0)],
        // Compiled plans fuse after differentiation: no program that is
        // differentiated holds a chain.
        InternalOp::Chain(_) => return super::unsupported(op),
    };
    let name = op.name();
    through
        .iter()
        .zip(op.output_names())
        .map(|(from, &output)| match from {
            Some(k) => dx[*k].clone(),
            None => Tangent::Undefined(Error::NotDifferentiable { op: name, output, why: BOUND_WHY }),
        })
        .collect()
}
