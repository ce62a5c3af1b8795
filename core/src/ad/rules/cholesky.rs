//! Cholesky, A = L Lᴴ, reading the lower triangle of A (`docs/ad-rules.md#conventions`): the
//! tangent uses dA_eff = tril(dA, −1) + tril(dA, −1)ᴴ + Re diag(dA), so a
//! perturbation of a strictly-upper entry changes nothing and the gradient
//! lives on the lower triangle with a real diagonal.
//!
//! dL = L Φ(L⁻¹ dA_eff L⁻ᴴ), Φ = lower triangle with the diagonal halved
//! (Murray, arXiv:1602.07527).

use super::{tangents, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::{MatOp, Side, Triangle, TriangularSolveOptions};
use crate::provider::Op;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    _l: &crate::op::LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let l = primals.output(op, 0)?;
    let lower = cx.tri_mask(&dx[0], Triangle::Lower, 0.5)?;
    let upper = cx.adjoint(&lower, MatOp::Adjoint)?;
    let da = cx.add(&lower, &upper)?;
    let solve = TriangularSolveOptions::default().triangle(Triangle::Lower);
    let left = cx.tri_solve(l, &da, solve)?;
    let both = cx.tri_solve(l, &left, solve.side(Side::Right).op(MatOp::Adjoint))?;
    let phi = cx.tri_mask(&both, Triangle::Lower, 0.5)?;
    Ok(tangents([cx.matmul(p(l), MatOp::Identity, t(&phi), MatOp::Identity)?]))
}
