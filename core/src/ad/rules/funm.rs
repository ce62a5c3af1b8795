//! Functions of Hermitian matrices (docs/ad-rules.md#matrix-functions):
//! the Daleckii–Krein rule d f(A) = V (Γ∘(Vᴴ dA V)) Vᴴ, with Γ the divided
//! differences of f at the eigenvalues (f′ where they tie), which the
//! provider computes with the decomposition (`FunmHermitianFactors`). It
//! divides by no gap, so it is exact at tied eigenvalues. dA is read as eigh
//! reads it (the lower triangle, the diagonal's real part).
//!
//! `w`, `v` and `gamma` are data for this rule: their own tangents are not
//! implemented, so second order through a matrix function reports that.

use super::eigh::lower_semantics;
use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{Error, Result};
use crate::op::{FunmHermitianFactors, LinalgOp, MatOp};
use crate::prim::UnaryOp;
use crate::provider::Op;
use crate::Ops;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    let (v, gamma) = match l {
        LinalgOp::FunmHermitianFactors(_) => (primals.output(op, 2)?.clone(), primals.output(op, 3)?.clone()),
        LinalgOp::FunmHermitian(f) => {
            // The eager face's forward ran the op without the rule's data.
            let wide = Op::Linalg(LinalgOp::FunmHermitianFactors(FunmHermitianFactors(f.0)));
            let mut outs = cx.primal().apply(wide, &[a])?;
            let mut take = |i: usize| {
                outs.get_mut(i).and_then(Option::take).ok_or(Error::Buffer {
                    op: FunmHermitianFactors::NAME,
                    arg: "output",
                    why: "was not produced by the face",
                    needed: 1,
                    got: 0,
                })
            };
            (take(2)?, take(3)?)
        }
        _ => return Ok(unsupported(op)),
    };
    let complex = cx.primal().meta(a).dtype.is_complex();
    let gamma = if complex { cx.primal().unary(UnaryOp::ToComplex, &gamma)? } else { gamma };
    let da = lower_semantics(cx, &dx[0])?;
    let id = MatOp::Identity;
    let left = cx.matmul(p(&v), MatOp::Adjoint, t(&da), id)?;
    let coupling = cx.matmul(t(&left), id, p(&v), id)?;
    let inner = cx.mul(&gamma, &coupling)?;
    let right = cx.matmul(t(&inner), id, p(&v), MatOp::Adjoint)?;
    let dfa = cx.matmul(p(&v), id, t(&right), id)?;
    Ok(match l {
        LinalgOp::FunmHermitianFactors(_) => {
            let data = |i: usize| {
                Tangent::Undefined(Error::UnsupportedDerivative {
                    op: op.name(),
                    output: op.output_names()[i],
                })
            };
            tangents([dfa, data(1), data(2), data(3)])
        }
        _ => tangents([dfa]),
    })
}
