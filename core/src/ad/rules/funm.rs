//! Functions of Hermitian matrices (docs/ad-rules.md#matrix-functions):
//! the Daleckii–Krein rule d f(A) = V (Γ∘(Vᴴ dA V)) Vᴴ, with Γ the divided
//! differences of f at the eigenvalues (f′ where they tie), which the
//! provider computes with the decomposition (`FunmHermitianFactors`). It
//! divides by no gap, so it is exact at tied eigenvalues. dA is read as eigh
//! reads it (the lower triangle, the diagonal's real part).
//!
//! The rule records that derivative as one op, `FunmHermitianFrechet`
//! L(A, E), so that it has a rule of its own: linear in E, and in A the
//! second-order Daleckii–Krein formula `FunmHermitianSecond`
//! (docs/ad-rules.md#second-order-of-a-hermitian-matrix-function). `w`,
//! `v` and `gamma` are functions of A that both ops read as data: their own
//! tangents are undefined, and the rules follow A's tangent instead.

use super::eigh::lower_semantics;
use super::{factors_alone, tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{Error, Result};
use crate::op::{
    FunmHermitianFactors, FunmHermitianFrechet, FunmHermitianSecond, LinalgOp, MatrixFunction,
    NO_SECOND_DERIVATIVE,
};
use crate::provider::Op;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    match l {
        LinalgOp::FunmHermitian(f) => {
            // The eager face's forward ran the op without the rule's data.
            let a = primals.input(0);
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
            let (w, v, gamma) = (take(1)?, take(2)?, take(3)?);
            Ok(tangents([first(cx, f.0, [a, &v, &w, &gamma], &dx[0])?]))
        }
        LinalgOp::FunmHermitianFactors(f) => {
            let a = primals.input(0);
            let (w, v, gamma) = (primals.output(op, 1)?, primals.output(op, 2)?, primals.output(op, 3)?);
            let dfa = first(cx, f.0, [a, v, w, gamma], &dx[0])?;
            let data = |i: usize| {
                Tangent::Undefined(Error::UnsupportedDerivative {
                    op: op.name(),
                    output: op.output_names()[i],
                })
            };
            Ok(tangents([dfa, data(1), data(2), data(3)]))
        }
        LinalgOp::FunmHermitianFrechet(f) => {
            if let Some(out) = factors_alone(op, &dx[0], &dx[1..4]) {
                return Ok(out);
            }
            let [a, v, w, gamma, e] = [0, 1, 2, 3, 4].map(|i| primals.input(i));
            let along_e = if dx[4].is_zero() {
                Tangent::Zero
            } else {
                cx.lin(Op::Linalg(l.clone()), &[p(a), p(v), p(w), p(gamma), t(&dx[4])])?
            };
            if dx[0].is_zero() {
                return Ok(tangents([along_e]));
            }
            let along_a = match f.0 {
                MatrixFunction::Custom(s) if s.d2f.is_none() => Tangent::Undefined(Error::Unsupported {
                    op: FunmHermitianSecond::NAME,
                    provider: "lindiff-core",
                    why: NO_SECOND_DERIVATIVE,
                }),
                _ => {
                    let da = lower_semantics(cx, &dx[0])?;
                    let second = Op::Linalg(LinalgOp::FunmHermitianSecond(FunmHermitianSecond(f.0)));
                    cx.lin(second, &[p(v), p(w), p(gamma), p(e), t(&da)])?
                }
            };
            Ok(tangents([cx.add(&along_e, &along_a)?]))
        }
        LinalgOp::FunmHermitianSecond(_) => {
            // Bilinear and symmetric in e and d. The factors' tangents (a
            // third derivative of f(A)) have no rule.
            if !dx[..3].iter().all(Tangent::is_zero) {
                return Ok(unsupported(op));
            }
            let [v, w, gamma, e, d] = [0, 1, 2, 3, 4].map(|i| primals.input(i));
            let mut along = |x: &C::P, dy: &Tangent<C::T>| -> Result<Tangent<C::T>> {
                if dy.is_zero() {
                    return Ok(Tangent::Zero);
                }
                cx.lin(Op::Linalg(l.clone()), &[p(v), p(w), p(gamma), p(x), t(dy)])
            };
            let (along_e, along_d) = (along(d, &dx[3])?, along(e, &dx[4])?);
            Ok(tangents([cx.add(&along_e, &along_d)?]))
        }
        _ => Ok(unsupported(op)),
    }
}

/// d f(A) = L(A, dA_eff), dA read with eigh's lower-triangle semantics.
fn first<C: Cx + ?Sized>(
    cx: &mut C,
    f: MatrixFunction,
    [a, v, w, gamma]: [&C::P; 4],
    da: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let da = lower_semantics(cx, da)?;
    let frechet = Op::Linalg(LinalgOp::FunmHermitianFrechet(FunmHermitianFrechet(f)));
    cx.lin(frechet, &[p(a), p(v), p(w), p(gamma), t(&da)])
}
