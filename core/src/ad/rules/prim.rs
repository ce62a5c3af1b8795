//! JVPs of the array primitives. A primitive linear in all its inputs
//! (adjoint, slices, sums, …) applies itself to the tangents; the bilinear
//! ones (matmul, elementwise product, row/column scaling) use the product
//! rule; the nonlinear maps multiply by their derivative.

use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::prim::{BinaryOp, PrimOp, ReduceOp, UnaryOp};
use crate::provider::Op;
use crate::Ops;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    prim: &PrimOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let x = primals.inputs;
    let dy = match prim {
        PrimOp::Matmul(m) => {
            let left = cx.matmul(t(&dx[0]), m.a, p(x[1]), m.b)?;
            let right = cx.matmul(p(x[0]), m.a, t(&dx[1]), m.b)?;
            cx.add(&left, &right)?
        }
        PrimOp::ScaleCols(_) | PrimOp::ScaleRows(_) => {
            let cols = matches!(prim, PrimOp::ScaleCols(_));
            let da = if cols { cx.scale_cols(&dx[0], x[1])? } else { cx.scale_rows(&dx[0], x[1])? };
            // d(a·diag(v)) in v: a·diag(dv), i.e. dv scaled by a — written
            // as the same primitive with the roles of the arguments kept.
            let dv = match &dx[1] {
                Tangent::Zero => Tangent::Zero,
                dv => {
                    let op = if cols {
                        PrimOp::ScaleCols(crate::prim::ScaleCols)
                    } else {
                        PrimOp::ScaleRows(crate::prim::ScaleRows)
                    };
                    scale_by_tangent(cx, op, x[0], dv)?
                }
            };
            cx.add(&da, &dv)?
        }
        PrimOp::Binary(b) => match b.0 {
            BinaryOp::Add | BinaryOp::Sub => cx.combine(b.0, &dx[0], &dx[1])?,
            BinaryOp::Mul => {
                let left = cx.mul(x[1], &dx[0])?;
                let right = cx.mul(x[0], &dx[1])?;
                cx.add(&left, &right)?
            }
            BinaryOp::Div => {
                // d(x/y) = dx/y − (x/y²) dy = (dx − q dy)/y with q = x/y.
                let q = primals.output(op, 0)?;
                let q_dy = cx.mul(q, &dx[1])?;
                let num = cx.sub(&dx[0], &q_dy)?;
                cx.div(&num, x[1])?
            }
        },
        PrimOp::Unary(u) if u.0.is_linear() => cx.unary(u.0, &dx[0])?,
        // A 0/1 indicator: piecewise constant, derivative 0 (see its
        // support entry for the jump at 0).
        PrimOp::Unary(u) if u.0 == UnaryOp::NonzeroMask => Tangent::Zero,
        PrimOp::Unary(u) => unary(cx, op, u.0, primals, &dx[0])?,
        // d max = dx at the (unique) argmax: a mask made on the primal side
        // (which fails at a tied extreme, where there is no derivative).
        PrimOp::Reduce(r) if r.op != ReduceOp::Sum => {
            let mask = cx.primal().extreme_mask(primals.input(0), r.op, r.core_rank)?;
            let picked = cx.mul(&mask, &dx[0])?;
            cx.sum(&picked, r.core_rank)?
        }
        // The spectral helpers and masks (primal-side only) have no rule.
        PrimOp::PairInv(_) | PrimOp::PivotPhase(_) | PrimOp::ExtremeMask(_) => return Ok(unsupported(op)),
        // An integer input: never differentiated (rules use it primal-side).
        PrimOp::RankMask(_) => return Ok(unsupported(op)),
        // Linear in their one input: the same primitive on the tangent.
        PrimOp::Scale(_)
        | PrimOp::Adjoint(_)
        | PrimOp::DiagPart(_)
        | PrimOp::DiagEmbed(_)
        | PrimOp::TriMask(_)
        | PrimOp::Reduce(_)
        | PrimOp::Reshape(_)
        | PrimOp::Spread(_)
        | PrimOp::Slice(_)
        | PrimOp::Pad(_) => cx.lin_prim(prim.clone(), &dx[0])?,
        // Constants have no inputs: `jvp` never reaches them.
        PrimOp::Fill(_) | PrimOp::Eye(_) => Tangent::Zero,
    };
    Ok(tangents([dy]))
}

/// `a · diag(dv)` (or `diag(dv) · a`) as a map linear in `dv`: embed `dv`
/// on a diagonal and multiply.
fn scale_by_tangent<C: Cx + ?Sized>(
    cx: &mut C,
    op: PrimOp,
    a: &C::P,
    dv: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let a_meta = cx.primal().meta(a);
    let dv = match dv.value() {
        Some(v) if cx.tangent_meta(v).dtype != a_meta.dtype => cx.unary(UnaryOp::ToComplex, dv)?,
        _ => dv.clone(),
    };
    let d = cx.diag_embed(&dv)?;
    let identity = crate::op::MatOp::Identity;
    match op {
        PrimOp::ScaleCols(_) => cx.matmul(p(a), identity, t(&d), identity),
        _ => cx.matmul(t(&d), identity, p(a), identity),
    }
}

/// The nonlinear elementwise maps: dy = f'(x) dx (over the reals for |·|).
fn unary<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    how: UnaryOp,
    primals: &Primals<'_, C::P>,
    dx: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let x = primals.input(0);
    let y = primals.output(op, 0)?;
    let complex = cx.primal().meta(x).dtype.is_complex();
    match how {
        UnaryOp::Abs2 => {
            // d|x|² = 2 Re(conj(x) dx).
            let xc = if complex { cx.primal().unary(UnaryOp::Conj, x)? } else { x.clone() };
            let prod = cx.mul(&xc, dx)?;
            let re = if complex { cx.unary(UnaryOp::Real, &prod)? } else { prod };
            cx.scale(&re, 2.0)
        }
        UnaryOp::Abs => {
            // d|x| = Re(conj(x) dx) / |x|.
            let xc = if complex { cx.primal().unary(UnaryOp::Conj, x)? } else { x.clone() };
            let prod = cx.mul(&xc, dx)?;
            let re = if complex { cx.unary(UnaryOp::Real, &prod)? } else { prod };
            cx.div(&re, y)
        }
        UnaryOp::Sqrt => {
            let half = cx.div(dx, y)?;
            cx.scale(&half, 0.5)
        }
        UnaryOp::Recip => {
            let y2 = cx.primal().binary(BinaryOp::Mul, y, y)?;
            let d = cx.mul(&y2, dx)?;
            cx.neg(&d)
        }
        UnaryOp::Exp => cx.mul(y, dx),
        UnaryOp::Log => cx.div(dx, x),
        // The linear maps are their own derivative (the caller sends them
        // here only through `is_linear`; listed so a new map must be placed).
        UnaryOp::Neg
        | UnaryOp::Conj
        | UnaryOp::Real
        | UnaryOp::Imag
        | UnaryOp::ToComplex
        | UnaryOp::MulI
        | UnaryOp::Copy => cx.unary(how, dx),
        // A 0/1 indicator: the caller gives it a zero tangent before here.
        UnaryOp::NonzeroMask => Ok(Tangent::Zero),
    }
}
