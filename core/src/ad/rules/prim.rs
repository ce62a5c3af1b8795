//! JVPs of the array primitives. A primitive linear in all its inputs
//! (adjoint, slices, sums, …) applies itself to the tangents; the bilinear
//! ones (matmul, elementwise product, row/column scaling) use the product
//! rule; the nonlinear maps multiply by their derivative.

use super::{left_out, tangents, Primals, Tangents, NO_SECOND_ORDER, SECOND_ORDER};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::MatOp;
use crate::prim::{BinaryOp, Pair, PairInv, PrimOp, ReduceOp, Regularize, Spread, UnaryOp};
use crate::provider::Op;
use crate::tensor::TensorMeta;
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
        // The helpers only gradients record: second order (see `SECOND_ORDER`).
        PrimOp::PairInv(_) | PrimOp::PivotPhase(_) if !SECOND_ORDER => {
            return Ok(left_out(op, NO_SECOND_ORDER))
        }
        PrimOp::PairInv(how) => pair_inv(cx, op, how, primals, &dx[0])?,
        // y = 1/u at each column's pivot, 0 elsewhere (the pivot row is
        // locally constant): dy = −y² du, zero off the pivots.
        PrimOp::PivotPhase(_) => {
            let y = primals.output(op, 0)?;
            let y2 = cx.primal().binary(BinaryOp::Mul, y, y)?;
            let d = cx.mul(&y2, &dx[0])?;
            cx.neg(&d)?
        }
        // A 0/1 indicator of the extreme: piecewise constant (a tied
        // extreme already failed on the primal side).
        PrimOp::ExtremeMask(_) => Tangent::Zero,
        // A 0/1 mask of an integer rank: locally constant (the rank's own
        // tangent is undefined; the mask does not depend on it smoothly).
        PrimOp::RankMask(_) => Tangent::Zero,
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

/// The pair inverse y_ij = g(z_ij), z_ij = x_j ∓ x_i (docs/ad-rules.md#second-order):
/// dz = 1·dxᵀ ∓ dx·1ᵀ, then
/// * cutoff, g(z) = 1/z where |z| > δ, 0 elsewhere: dy = −y² dz (zero on
///   the entries cut off, whose cut is locally constant only where dz = 0
///   there — the spectral rules check that before a tangent reaches here);
/// * Lorentzian, g(z) = z̄/(|z|² + ε²): dy = ε² r² dz̄ − y² dz with
///   r = 1/(|z|² + ε²) (for real z, (ε² − z²) r² dz).
fn pair_inv<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    how: &PairInv,
    primals: &Primals<'_, C::P>,
    dx: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let x = primals.input(0);
    let y = primals.output(op, 0)?;
    let k = cx.primal().meta(x).shape.dims()[0];
    let rows = cx.spread(dx, &[k])?;
    let cols = cx.adjoint(&rows, MatOp::Transpose)?;
    let dz = match how.pair {
        Pair::Diff => cx.sub(&rows, &cols)?,
        Pair::Sum => cx.add(&rows, &cols)?,
    };
    let y2 = cx.primal().binary(BinaryOp::Mul, y, y)?;
    let minus_y2_dz = {
        let d = cx.mul(&y2, &dz)?;
        cx.neg(&d)?
    };
    match how.regularize {
        Regularize::Cutoff { .. } => Ok(minus_y2_dz),
        Regularize::Lorentzian { eps } => {
            // r = 1/(|z|² + ε²) on the primal side, z from x as dz from dx.
            let f = cx.primal();
            let mut core = heapless::Vec::new();
            let _ = core.push(k); // one of MAX_RANK ≥ 1 dims
            let rows = f.single(Op::Prim(PrimOp::Spread(Spread { core })), &[x])?;
            let cols = f.adjoint(&rows, MatOp::Transpose)?;
            let z = match how.pair {
                Pair::Diff => f.binary(BinaryOp::Sub, &rows, &cols)?,
                Pair::Sum => f.binary(BinaryOp::Add, &rows, &cols)?,
            };
            let meta = f.meta(&z);
            let abs2 = f.unary(UnaryOp::Abs2, &z)?;
            let eps2 = f.fill(TensorMeta::new(meta.dtype.real(), meta.shape.clone()), eps * eps)?;
            let d = f.binary(BinaryOp::Add, &abs2, &eps2)?;
            let r = f.unary(UnaryOp::Recip, &d)?;
            let r2 = f.binary(BinaryOp::Mul, &r, &r)?;
            let mut c = f.scale(&r2, eps * eps)?;
            if meta.dtype.is_complex() {
                c = f.unary(UnaryOp::ToComplex, &c)?;
            }
            let dz_conj = cx.unary(UnaryOp::Conj, &dz)?;
            let first = cx.mul(&c, &dz_conj)?;
            cx.add(&first, &minus_y2_dz)
        }
    }
}
