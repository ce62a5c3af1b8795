//! Unpivoted QR, A = Q R with diag(R) real and ≥ 0 (the provider's
//! convention, so Q and R are unique for a full-rank A), and the
//! column-pivoted, rank-revealing QR (not differentiable).
//!
//! Thin QR, k = min(m, n), A₁ = A[:, :k] = Q R₁ (docs/ad-rules.md#qr):
//! * X = dA₁ R₁⁻¹, C = Qᴴ X, B = triu(C + Cᴴ) with the diagonal halved
//!   (B = C − Ω with Ω = tril(C, −1) − tril(C, −1)ᴴ + i Im diag(C), the
//!   anti-Hermitian Qᴴ dQ of the diag(R) ≥ 0 convention);
//! * dQ = X − Q B, dR₁ = B R₁;
//! * m < n: the trailing columns R₂ = Qᴴ A₂ give dR₂ = Qᴴ dA₂ − Ω R₂ with
//!   Ω = C − B.
//!
//! Complete mode with m > n: the columns of Q beyond n depend on the
//! Householder reflector convention (op docs), so the tangent of `q` is undefined
//! (`NotDifferentiable`, naming the reduced mode as the way out), while
//! `r` = [R; 0] keeps its tangent [dR; 0]: losses that use only `r` work.
//! A loss that needs only the thin part of Q should ask for the reduced QR.
//! For m ≤ n complete and reduced coincide.
//!
//! Rank-revealing QR: pivot selection and the numerical rank are
//! discontinuous, so `q` and `r` are `NotDifferentiable` and `perm`, `rank`
//! are integer outputs.
//!
//! Valid where A₁ has full column rank (R₁ invertible); the rule divides by
//! diag(R₁): an R₁ singular to working precision (a pivot below k·ε of
//! the largest entry above it in its column, `PivotCheck::Ratio`, a zero
//! included) is the solve's
//! `Error::Singular`, in forward and reverse mode alike.

use super::{integer_output, tangents, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{Error, Result};
use crate::op::{LinalgOp, MatOp, PivotCheck, QrMode, Side, Triangle, TriangularSolveOptions};
use crate::provider::Op;
use crate::Ops;

/// Why the complete Q of a tall matrix has no derivative.
const COMPLETE_Q: &str = "the columns of a complete Q beyond min(m, n) depend on the Householder reflector \
                          convention; use the reduced QR for a differentiable Q";

/// Why rank-revealing QR has no derivative.
const PIVOTED: &str = "pivot selection and the numerical rank are discontinuous";

/// Output tangents of `qr` and `rank_revealing_qr` (see the module docs).
pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    match l {
        LinalgOp::Qr(qr) => qr_jvp(cx, op, qr.0.mode, primals, &dx[0]),
        _ => {
            let name = op.name();
            let pivoted =
                |output| Tangent::Undefined(Error::NotDifferentiable { op: name, output, why: PIVOTED });
            Ok(tangents([pivoted("q"), pivoted("r"), integer_output(op, "perm"), integer_output(op, "rank")]))
        }
    }
}

/// The tangents of the leading block of a thin QR, A₁ = Q R₁ (Q m×k, R₁
/// k×k upper triangular and invertible), in any convention whose Qᴴ dQ has the
/// diagonal i Im diag(C) (the diag(R) real convention):
/// returns (X, C, B) with X = dA₁ R₁⁻¹, C = Qᴴ X, B = triu(C + Cᴴ) with the
/// diagonal halved, so that dQ = X − Q B and dR₁ = B R₁.
///
/// # Errors
/// The recorded ops'.
pub(super) fn thin_core<C: Cx + ?Sized>(
    cx: &mut C,
    q: &C::P,
    r1: &C::P,
    da1: &Tangent<C::T>,
) -> Result<[Tangent<C::T>; 3]> {
    // R₁ singular to working precision (a numerically rank-deficient A₁)
    // is `Singular`: Q's trailing columns are rounding there.
    let right_upper = TriangularSolveOptions::default()
        .triangle(Triangle::Upper)
        .side(Side::Right)
        .pivot_check(PivotCheck::Ratio);
    let x = cx.tri_solve(r1, da1, right_upper)?;
    let c = cx.matmul(p(q), MatOp::Adjoint, t(&x), MatOp::Identity)?;
    let ch = cx.adjoint(&c, MatOp::Adjoint)?;
    let sym = cx.add(&c, &ch)?;
    let b = cx.tri_mask(&sym, Triangle::Upper, 0.5)?;
    Ok([x, c, b])
}

/// Thin (or complete) QR: see the module docs.
fn qr_jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    mode: QrMode,
    primals: &Primals<'_, C::P>,
    da: &Tangent<C::T>,
) -> Result<Tangents<C::T>> {
    let meta = cx.primal().meta(primals.input(0));
    let dims = meta.shape.dims();
    let (m, n) = (dims[0], dims[1]);
    let k = m.min(n);
    if k == 0 {
        // Empty factors, or (complete, n = 0) Q = I: constant.
        return Ok(tangents([Tangent::Zero, Tangent::Zero]));
    }
    let (q_full, r_full) = (primals.output(op, 0)?, primals.output(op, 1)?);
    let complete_tall = mode == QrMode::Complete && m > n;
    let face = cx.primal();
    // The thin factors: Q m×k, R k×n (a complete QR of a tall A holds them
    // as its leading blocks).
    let (q, r) = if complete_tall {
        (face.slice(q_full, [0, 0], [m, k])?, face.slice(r_full, [0, 0], [k, n])?)
    } else {
        (q_full.clone(), r_full.clone())
    };
    let (r1, da1) = if n > k {
        (cx.primal().slice(&r, [0, 0], [k, k])?, cx.slice(da, [0, 0], [m, k])?)
    } else {
        (r.clone(), da.clone())
    };
    let [x, c, b] = thin_core(cx, &q, &r1, &da1)?;
    let dr1 = cx.matmul(t(&b), MatOp::Identity, p(&r1), MatOp::Identity)?;
    let dr = if n > k {
        // dR₂ = Qᴴ dA₂ − Ω R₂, Ω = C − B.
        let r2 = cx.primal().slice(&r, [0, k], [k, n - k])?;
        let da2 = cx.slice(da, [0, k], [m, n - k])?;
        let qda2 = cx.matmul(p(&q), MatOp::Adjoint, t(&da2), MatOp::Identity)?;
        let omega = cx.sub(&c, &b)?;
        let or2 = cx.matmul(t(&omega), MatOp::Identity, p(&r2), MatOp::Identity)?;
        let dr2 = cx.sub(&qda2, &or2)?;
        let left = cx.pad(&dr1, [0, 0], [k, n])?;
        let right = cx.pad(&dr2, [0, k], [k, n])?;
        cx.add(&left, &right)?
    } else {
        dr1
    };
    if complete_tall {
        let undefined =
            Tangent::Undefined(Error::NotDifferentiable { op: op.name(), output: "q", why: COMPLETE_Q });
        let dr = cx.pad(&dr, [0, 0], [m, n])?;
        return Ok(tangents([undefined, dr]));
    }
    // dQ = X − Q B.
    let qb = cx.matmul(p(&q), MatOp::Identity, t(&b), MatOp::Identity)?;
    let dq = cx.sub(&x, &qb)?;
    Ok(tangents([dq, dr]))
}
