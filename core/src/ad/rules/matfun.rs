//! Primary functions of general matrices — expm, logm, sqrtm
//! (docs/ad-rules.md#matrix-exponential,
//! docs/ad-rules.md#logarithm-and-square-root).
//!
//! * f(A): d f(A) = L_f(A, dA), the Fréchet derivative, recorded as the op
//!   `…_frechet` — linear in its direction, so reverse mode transposes it to
//!   L_f(Aᴴ, Ē) (`ad/transpose/solve.rs`).
//! * L_f(op(A), E): linear in E, so its E-part is itself. Its A-part, the
//!   second Fréchet derivative, comes from the block identity
//!   f([[X, E], [0, X]]) = [[f(X), L_f(X, E)], [0, f(X)]] (X = op(A)):
//!   d L_f(X, E)[dX] is the top-right block of L_f(M, dM) with
//!   M = [[X, E], [0, X]] and dM = [[dX, 0], [0, dX]] — one Fréchet
//!   derivative at twice the size, so second order is exact, and goes on.
//! * Reverse mode runs `expm_factors` in place of `expm` (`LinalgOp::with_vectors`):
//!   its rule is `expm_frechet_factored`, the same derivative from the
//!   forward's terms. Those terms are functions of A, so A's tangent stands
//!   for theirs, and the A-part of its own derivative is the block identity
//!   above.

use super::{factors_alone, integer_output, tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{Error, Result};
use crate::op::{ExpmFrechet, ExpmFrechetFactored, LinalgOp, LogmFrechet, MatOp, SqrtmFrechet};
use crate::prim::{BinaryOp, Pad, PrimOp};
use crate::provider::Op;
use crate::Ops;

/// The Fréchet op of `l`'s function (`l` the function or its Fréchet op)
/// with the flag `how`, and the flag `l` carries (`None` for the function).
pub(crate) fn frechet_of(l: &LinalgOp, how: MatOp) -> Option<(LinalgOp, Option<MatOp>)> {
    Some(match l {
        LinalgOp::Expm(_) => (LinalgOp::ExpmFrechet(ExpmFrechet(how)), None),
        LinalgOp::ExpmFrechet(f) => (LinalgOp::ExpmFrechet(ExpmFrechet(how)), Some(f.0)),
        LinalgOp::Logm(_) => (LinalgOp::LogmFrechet(LogmFrechet(how)), None),
        LinalgOp::LogmFrechet(f) => (LinalgOp::LogmFrechet(LogmFrechet(how)), Some(f.0)),
        LinalgOp::Sqrtm(_) => (LinalgOp::SqrtmFrechet(SqrtmFrechet(how)), None),
        LinalgOp::SqrtmFrechet(f) => (LinalgOp::SqrtmFrechet(SqrtmFrechet(how)), Some(f.0)),
        _ => return None,
    })
}

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    match l {
        LinalgOp::ExpmFactors(_) => {
            let (terms, piv) = (primals.output(op, 1)?, primals.output(op, 2)?);
            let factored = Op::Linalg(LinalgOp::ExpmFrechetFactored(ExpmFrechetFactored(MatOp::Identity)));
            let dea = cx.lin(factored, &[p(a), p(terms), p(piv), t(&dx[0])])?;
            let data = Tangent::Undefined(Error::UnsupportedDerivative { op: op.name(), output: "terms" });
            return Ok(tangents([dea, data, integer_output(op, "piv")]));
        }
        LinalgOp::ExpmFrechetFactored(f) => {
            if let Some(out) = factors_alone(op, &dx[0], &dx[1..3]) {
                return Ok(out);
            }
            let (terms, piv, e) = (primals.input(1), primals.input(2), primals.input(3));
            // The terms and piv are functions of a: a's tangent stands for theirs.
            let along_e = if dx[3].is_zero() {
                Tangent::Zero
            } else {
                cx.lin(Op::Linalg(l.clone()), &[p(a), p(terms), p(piv), t(&dx[3])])?
            };
            let along_a = second(cx, ExpmFrechet(MatOp::Identity).into(), f.0, a, e, &dx[0])?;
            return Ok(tangents([cx.add(&along_e, &along_a)?]));
        }
        _ => {}
    }
    let Some((plain, flag)) = frechet_of(l, MatOp::Identity) else { return Ok(unsupported(op)) };
    let Some(how) = flag else {
        return Ok(tangents([cx.lin(Op::Linalg(plain), &[p(a), t(&dx[0])])?]));
    };
    let Some((flagged, _)) = frechet_of(l, how) else { return Ok(unsupported(op)) };
    let along_e = cx.lin(Op::Linalg(flagged), &[p(a), t(&dx[1])])?;
    let along_a = second(cx, plain, how, a, primals.input(1), &dx[0])?;
    Ok(tangents([cx.add(&along_e, &along_a)?]))
}

/// The A-part of d L_f(op(A), E): the top-right block of
/// L_f(M, dM) with M = [[X, E], [0, X]], dM = [[dX, 0], [0, dX]] and
/// X = op(A) (`plain` the Fréchet op without a flag); zero for a zero dA.
fn second<C: Cx + ?Sized>(
    cx: &mut C,
    plain: LinalgOp,
    how: MatOp,
    a: &C::P,
    e: &C::P,
    da: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    if da.is_zero() {
        return Ok(Tangent::Zero);
    }
    let n = cx.primal().meta(a).shape.dims()[0];
    let x = match how {
        MatOp::Identity => a.clone(),
        how => cx.primal().adjoint(a, how)?,
    };
    let size = [2 * n, 2 * n];
    let pad = |start| Op::Prim(PrimOp::Pad(Pad { start, size }));
    let top = cx.primal().single(pad([0, 0]), &[&x])?;
    let bottom = cx.primal().single(pad([n, n]), &[&x])?;
    let corner = cx.primal().single(pad([0, n]), &[e])?;
    let m = cx.primal().binary(BinaryOp::Add, &top, &bottom)?;
    let m = cx.primal().binary(BinaryOp::Add, &m, &corner)?;
    let dxa = match how {
        MatOp::Identity => da.clone(),
        how => cx.adjoint(da, how)?,
    };
    let dtop = cx.pad(&dxa, [0, 0], size)?;
    let dbottom = cx.pad(&dxa, [n, n], size)?;
    let dm = cx.add(&dtop, &dbottom)?;
    let block = cx.lin(Op::Linalg(plain), &[p(&m), t(&dm)])?;
    cx.slice(&block, [0, n], [n, n])
}
