//! The matrix exponential (docs/ad-rules.md#matrix-exponential).
//!
//! * `expm`: d e^A = L(A, dA), the Fréchet derivative, recorded as the op
//!   `expm_frechet` — linear in its direction, so reverse mode transposes it
//!   to L(Aᴴ, Ē) (`ad/transpose/solve.rs`).
//! * `expm_frechet`: linear in E, so its E-part is itself. Its A-part, the
//!   second Fréchet derivative, comes from the block identity
//!   exp([[X, E], [0, X]]) = [[e^X, L(X, E)], [0, e^X]] (X = op(A)):
//!   d L(X, E)[dX] is the top-right block of L(M, dM) with
//!   M = [[X, E], [0, X]] and dM = [[dX, 0], [0, dX]] — one Fréchet
//!   derivative at twice the size, so second order through expm is exact.

use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::{ExpmFrechet, LinalgOp, MatOp};
use crate::prim::{BinaryOp, Pad, PrimOp};
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
    let frechet = |how| Op::Linalg(LinalgOp::ExpmFrechet(ExpmFrechet(how)));
    match l {
        LinalgOp::Expm(_) => Ok(tangents([cx.lin(frechet(MatOp::Identity), &[p(a), t(&dx[0])])?])),
        LinalgOp::ExpmFrechet(f) => {
            let along_e = cx.lin(frechet(f.0), &[p(a), t(&dx[1])])?;
            if dx[0].is_zero() {
                return Ok(tangents([along_e]));
            }
            let n = cx.primal().meta(a).shape.dims()[0];
            let x = match f.0 {
                MatOp::Identity => a.clone(),
                how => cx.primal().adjoint(a, how)?,
            };
            let e = primals.input(1);
            let size = [2 * n, 2 * n];
            let pad = |start| Op::Prim(PrimOp::Pad(Pad { start, size }));
            let top = cx.primal().single(pad([0, 0]), &[&x])?;
            let bottom = cx.primal().single(pad([n, n]), &[&x])?;
            let corner = cx.primal().single(pad([0, n]), &[e])?;
            let m = cx.primal().binary(BinaryOp::Add, &top, &bottom)?;
            let m = cx.primal().binary(BinaryOp::Add, &m, &corner)?;
            let dxa = match f.0 {
                MatOp::Identity => dx[0].clone(),
                how => cx.adjoint(&dx[0], how)?,
            };
            let dtop = cx.pad(&dxa, [0, 0], size)?;
            let dbottom = cx.pad(&dxa, [n, n], size)?;
            let dm = cx.add(&dtop, &dbottom)?;
            let block = cx.lin(frechet(MatOp::Identity), &[p(&m), t(&dm)])?;
            let along_a = cx.slice(&block, [0, n], [n, n])?;
            Ok(tangents([cx.add(&along_e, &along_a)?]))
        }
        _ => Ok(unsupported(op)),
    }
}
