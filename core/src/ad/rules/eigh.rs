//! Hermitian eigendecomposition A = V diag(w) Vᴴ (`Eigh`, `EighVals`).
//!
//! The forward reads the lower triangle of A only and ignores the imaginary
//! part of its diagonal (`op/eigh.rs`, `docs/ad-rules.md#conventions`), so the rule sees
//! dA_eff = tril(dA, −1) + tril(dA, −1)ᴴ + Re diag(dA) (as Cholesky does): a
//! perturbation of a strictly-upper entry, or of the imaginary part of a
//! diagonal entry, changes nothing, and the gradient lives on the lower
//! triangle with a real diagonal.
//!
//! With dP = Vᴴ dA_eff V (docs/ad-rules.md#eigh):
//! * dw = Re diag(dP);
//! * dV = V (F∘dP), F_ij = inv_δ(w_j − w_i) (zero diagonal; δ = 10·n·eps·max|w|
//!   at the size of rounding ties, or the Lorentzian (w_j − w_i)/((w_j − w_i)² + ε²)
//!   when `EighOptions::derivative_eps` is `Some(ε)`). That is the tangent in
//!   the gauge diag(Vᴴ dV) = 0;
//! * complex input: the forward makes the largest-magnitude entry of each
//!   column (row r_i) real and positive, so the phase φ_i = Im(dV_{r_i,i} / V_{r_i,i})
//!   is removed: dV_i −= i·φ_i·V_i (docs/ad-rules.md#svd, step 5). For real input
//!   the sign fix is locally constant and nothing is added.
//!
//! Within a tied group F is zero, which is exact for every loss that is
//! differentiable there (symmetric functions of the group's values,
//! projectors onto whole groups).
//!
//! The values alone: dw_i = Re v_iᴴ dA_eff v_i = Re Σ_r conj(V_ri)
//! (dA_eff V)_ri, one tangent matmul and an elementwise product. `Eigh` uses
//! it when the caller reads only w (`Primals::reads`: reverse mode with a
//! loss of the eigenvalues). `EighVals` has no V among its outputs: in
//! forward mode its rule computes the primal eigenvectors again with a full
//! `Eigh` (an O(n³) decomposition with vectors, about two to three times the
//! cost of the values-only forward); reverse mode runs `Eigh` in its place
//! (`LinalgOp::with_vectors`).

use super::tie_checked;
use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::internal::{Cut, GaugeOf, Part, TangentTieCheck};
use crate::op::{Eigh, EighOptions, EighVals, LinalgOp, MatOp, Triangle};
use crate::prim::{Pair, PairInv, Regularize, UnaryOp};
use crate::provider::Op;
use crate::Ops;

/// Output tangents of `Eigh` (dw, dV) or `EighVals` (dw).
pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    let complex = cx.primal().meta(a).dtype.is_complex();
    let da = lower_semantics(cx, &dx[0])?;
    match l {
        LinalgOp::Eigh(Eigh(options)) => {
            let w = primals.output(op, 0)?;
            let v = primals.output(op, 1)?;
            if !primals.reads(1) {
                // The values alone: no coupling matrix.
                return Ok(tangents([values(cx, v.clone(), &da, complex)?, Tangent::Zero]));
            }
            let left = cx.matmul(p(v), MatOp::Adjoint, t(&da), MatOp::Identity)?;
            let dp = cx.matmul(t(&left), MatOp::Identity, p(v), MatOp::Identity)?;
            let diag = cx.diag_part(&dp)?;
            let dw = if complex { cx.unary(UnaryOp::Real, &diag)? } else { diag };
            let dv = vectors(cx, w, v, &dp, options, complex)?;
            Ok(tangents([dw, dv]))
        }
        LinalgOp::EighVals(EighVals(options)) => {
            let v = cx.primal().eigh_with_options(a, *options)?.v;
            Ok(tangents([values(cx, v, &da, complex)?]))
        }
        _ => Ok(unsupported(op)),
    }
}

/// dw = Re diag(Vᴴ dA V), formed as Re Σ_rows conj(V)∘(dA V).
fn values<C: Cx + ?Sized>(cx: &mut C, v: C::P, da: &Tangent<C::T>, complex: bool) -> Result<Tangent<C::T>> {
    let dav = cx.matmul(t(da), MatOp::Identity, p(&v), MatOp::Identity)?;
    let vc = if complex { cx.primal().unary(UnaryOp::Conj, &v)? } else { v };
    let prod = cx.mul(&vc, &dav)?;
    let sum = cx.sum(&prod, 1)?;
    if complex {
        cx.unary(UnaryOp::Real, &sum)
    } else {
        Ok(sum)
    }
}

/// dA_eff = tril(dA, −1) + tril(dA, −1)ᴴ + Re diag(dA): the lower triangle
/// with its diagonal halved, plus its adjoint.
pub(super) fn lower_semantics<C: Cx + ?Sized>(cx: &mut C, da: &Tangent<C::T>) -> Result<Tangent<C::T>> {
    let lower = cx.tri_mask(da, Triangle::Lower, 0.5)?;
    let upper = cx.adjoint(&lower, MatOp::Adjoint)?;
    cx.add(&lower, &upper)
}

/// dV = V (F∘dP) in the gauge diag(Vᴴ dV) = 0, then (complex input) with
/// the forward's pivot phase restored.
fn vectors<C: Cx + ?Sized>(
    cx: &mut C,
    w: &C::P,
    v: &C::P,
    dp: &Tangent<C::T>,
    options: &EighOptions,
    complex: bool,
) -> Result<Tangent<C::T>> {
    let meta = cx.primal().meta(w);
    let n = meta.shape.dims().first().copied().unwrap_or(0);
    let regularize = match options.derivative_eps {
        Some(eps) => Regularize::Lorentzian { eps },
        None => Regularize::Cutoff { relative: tie_cutoff(meta.dtype, n) },
    };
    let dp = match regularize {
        Regularize::Cutoff { relative } => {
            let check = TangentTieCheck { of: GaugeOf::Eigh, cut: Cut::Tie, relative, part: Part::Whole };
            tie_checked(cx, check, w, dp)?
        }
        Regularize::Lorentzian { .. } => dp.clone(),
    };
    let f = cx.primal().pair_inv(w, PairInv { pair: Pair::Diff, regularize })?;
    let f = if complex { cx.primal().unary(UnaryOp::ToComplex, &f)? } else { f };
    let g = cx.mul(&f, &dp)?;
    let dv = cx.matmul(p(v), MatOp::Identity, t(&g), MatOp::Identity)?;
    if !complex {
        return Ok(dv);
    }
    let phase = pivot_phase(cx, v, &dv)?;
    let i_phase = cx.unary(UnaryOp::MulI, &phase)?;
    let fix = scale_columns(cx, v, &i_phase)?;
    cx.sub(&dv, &fix)
}

/// The relative tie cutoff 10·n·eps of a spectrum of `n` values of `dtype`
/// (docs/ad-rules.md#partial-fractions-and-the-tie-cutoff).
pub(super) fn tie_cutoff(dtype: DType, n: usize) -> f64 {
    let eps = match dtype.real() {
        DType::F32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    };
    10.0 * n.max(1) as f64 * eps
}

/// φ_i = Im(dV_{r_i,i} / V_{r_i,i}) at each column's pivot row r_i (the
/// largest-magnitude entry, which the forward makes real and positive), as
/// a complex vector `[n, batch…]` with zero imaginary part.
pub(super) fn pivot_phase<C: Cx + ?Sized>(cx: &mut C, v: &C::P, dv: &Tangent<C::T>) -> Result<Tangent<C::T>> {
    let y = cx.primal().pivot_phase(v)?;
    let picked = cx.mul(&y, dv)?;
    let ratio = cx.sum(&picked, 1)?;
    let phi = cx.unary(UnaryOp::Imag, &ratio)?;
    cx.unary(UnaryOp::ToComplex, &phi)
}

/// V diag(d) for a primal V (`[n, n, batch…]`) and a tangent `d`
/// (`[n, batch…]`, V's dtype): `d` spread over the rows, times V
/// elementwise (O(n²), no matmul).
pub(super) fn scale_columns<C: Cx + ?Sized>(
    cx: &mut C,
    v: &C::P,
    d: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let rows = cx.primal().meta(v).shape.dims().first().copied().unwrap_or(0);
    let spread = cx.spread(d, &[rows])?;
    cx.mul(v, &spread)
}
