//! Triangular solve, X = op(A)⁻¹ B (left) or X = B op(A)⁻¹ (right)
//! (docs/ad-rules.md#solves). The op reads only one triangle of A (and not its
//! diagonal when unit), so the tangent sees dÃ = proj_tri(dA): that triangle,
//! with a zero diagonal when unit. Differentiating op(A) X = B:
//!
//! * left:  dX = op(A)⁻¹ (dB − op(dÃ) X);
//! * right: dX = (dB − X op(dÃ)) op(A)⁻¹,
//!
//! the solve being the same op (same options) on the right-hand side, so the
//! gradient of A lives on the triangle the op reads. A zero on a non-unit
//! diagonal fails the forward solve (`Singular`) before any tangent.

use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::{Diagonal, LinalgOp, MatOp, Side, TriangularSolve};
use crate::provider::Op;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let LinalgOp::TriangularSolve(TriangularSolve(options)) = l else {
        return Ok(unsupported(op));
    };
    let (a, x) = (primals.input(0), primals.output(op, 0)?);
    let diagonal = if options.diagonal == Diagonal::Unit { 0.0 } else { 1.0 };
    let da = cx.tri_mask(&dx[0], options.triangle, diagonal)?;
    let coupling = match options.side {
        Side::Left => cx.matmul(t(&da), options.op, p(x), MatOp::Identity)?,
        Side::Right => cx.matmul(p(x), MatOp::Identity, t(&da), options.op)?,
    };
    let rhs = cx.sub(&dx[1], &coupling)?;
    Ok(tangents([cx.tri_solve(a, &rhs, *options)?]))
}
