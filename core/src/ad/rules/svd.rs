//! SVD family: thin `Svd`, values-only `SvdVals` and `SvdFull`.
//!
//! A = U diag(s) Vᴴ, A m×n, k = min(m, n); the outputs are u (m×k), s (k,
//! real) and vh = Vᴴ (k×n), so the tangent of vh is (dV)ᴴ. Default rule
//! (docs/ad-rules.md#svd, the robust partial-fraction form, no squares
//! formed, no NaN for any spectrum):
//! 1. dP = Uᴴ dA V; H = herm(dP), K = ah(dP).
//! 2. ds = Re diag(dP).
//! 3. Ω_U = F⁻∘H + F⁺∘K, Ω_V = F⁻∘H − F⁺∘K with F⁻_ij = inv_δ(s_j − s_i),
//!    F⁺_ij = inv_δ(s_i + s_j) (`PairInv`), δ = 10·k·eps·s_max.
//! 4. dU = U Ω_U + P_U dA V diag(σ⁺), dV = V Ω_V + P_V dAᴴ U diag(σ⁺),
//!    σ⁺_i = inv_δ(s_i); the P_U term only when m > k, the P_V term only when
//!    n > k (otherwise the projector is zero). d(vh) = Ω_Vᴴ Vᴴ + diag(σ⁺)
//!    (Uᴴ dA − dP Vᴴ).
//! 5. Complex input: the forward makes the largest-|entry| of each column
//!    of U real and positive (row r_i, V compensating), so with
//!    φ_i = Im(dU_{r_i,i}/U_{r_i,i}) (`PivotPhase`) the rule subtracts
//!    i·φ_i·U_i from dU_i and i·φ_i·V_i from dV_i. Real input: nothing.
//!
//! `SvdOptions::derivative_eps = Some(ε)` switches to the Lorentzian-broadened
//! rule (`docs/ad-rules.md#svd`), reproduced as it is: F_ij = z/(z² + ε²) with z = s_j² − s_i²
//! (squares formed), Ω_U = F∘(dP S + (dP S)ᴴ) + ½ diag(s/(s² + ε²))∘(dP − dPᴴ),
//! Ω_V = F∘(S dP + (S dP)ᴴ), and the rectangular terms divided by the raw s
//! (infinite or NaN at a zero singular value, as that rule is). Step 5 is
//! applied there too, since it is a property of our forward's gauge.
//!
//! `Svd` whose options switched a factor off (`SvdVectors::Left`/`Right`)
//! still needs both: the rule then runs one more thin SVD of A on the
//! primal side (`svd_with_options`, same driver) and reads U, s, Vᴴ from it;
//! the absent output gets no tangent. `SvdVals` likewise runs one thin SVD
//! on the primal side: ds = Re Σ_rows conj(U)∘(dA V).
//!
//! A caller that reads only s (reverse mode with a loss of the values
//! alone, `Primals::reads`) gets ds as `SvdVals` forms it, from the factors
//! at hand: no coupling matrices.
//!
//! `SvdFull`: s and the thin part (the first k columns of u, the first k
//! rows of vh) follow the thin rule. The completion columns (u's beyond k
//! when m > n, vh's rows beyond k when n > m) are an arbitrary basis of a
//! null space with no derivative; since a tangent is one tensor per output,
//! that whole output's tangent is `NotDifferentiable` when completion columns
//! exist, and fully defined when A is square (or on the side without them).

use super::tie_checked;
use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::face::SvdFactors;
use crate::op::internal::{Cut, GaugeOf, Part, TangentTieCheck};
use crate::op::{LinalgOp, MatOp, SvdOptions};
use crate::prim::{Pair, PairInv, Regularize, UnaryOp};
use crate::provider::Op;
use crate::Ops;

/// The sizes and dtype of the input A.
#[derive(Clone, Copy)]
struct Dims {
    /// Rows of A.
    m: usize,
    /// Columns of A.
    n: usize,
    /// min(m, n).
    k: usize,
    /// A's dtype.
    dtype: DType,
}

impl Dims {
    /// Reads m, n and the dtype from A.
    fn of<C: Cx + ?Sized>(cx: &mut C, a: &C::P) -> Self {
        let meta = cx.primal().meta(a);
        let dims = meta.shape.dims();
        let dim = |i: usize| dims.get(i).copied().unwrap_or(0);
        let (m, n) = (dim(0), dim(1));
        Dims { m, n, k: m.min(n), dtype: meta.dtype }
    }

    /// `true` for complex A.
    fn complex(self) -> bool {
        self.dtype.is_complex()
    }

    /// The tie cutoff relative to s_max: 10·k·eps
    /// (`docs/ad-rules.md#partial-fractions-and-the-tie-cutoff`).
    fn relative_cutoff(self) -> f64 {
        let eps = match self.dtype.real() {
            DType::F32 => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        };
        10.0 * self.k as f64 * eps
    }
}

/// Which thin tangents the caller wants (absent outputs are not computed).
#[derive(Clone, Copy)]
struct Want {
    /// The tangent of u.
    u: bool,
    /// The tangent of vh.
    vh: bool,
}

/// Output tangents of `Svd`, `SvdVals` and `SvdFull` (see the module docs).
pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    let d = Dims::of(cx, a);
    let da = dx.first().ok_or(Error::Arity { op: op.name(), expected: 1, got: 0 })?;
    match l {
        LinalgOp::Svd(svd) => {
            let output = |i: usize| primals.outputs.get(i).and_then(Option::as_ref);
            let f = match (output(0), output(2)) {
                (Some(u), Some(vh)) => {
                    SvdFactors { u: u.clone(), s: primals.output(op, 1)?.clone(), vh: vh.clone() }
                }
                // A factor was switched off: recompute both (one more SVD).
                _ => cx.primal().svd_with_options(a, svd.0)?,
            };
            let want = Want {
                u: output(0).is_some() && primals.reads(0),
                vh: output(2).is_some() && primals.reads(2),
            };
            let [du, ds, dvh] = thin(cx, &svd.0, &f, da, d, want)?;
            // An output the forward did not compute has no tangent; one the
            // caller does not read gets zero.
            let absent = |i: usize| if output(i).is_some() { Tangent::Zero } else { absent_output(op, i) };
            let du = if want.u { du } else { absent(0) };
            let dvh = if want.vh { dvh } else { absent(2) };
            Ok(tangents([du, ds, dvh]))
        }
        LinalgOp::SvdVals(vals) => {
            let f = cx.primal().svd_with_options(a, vals.0)?;
            Ok(tangents([values(cx, &f, da, d)?]))
        }
        LinalgOp::SvdFull(full) => {
            let (u, s, vh) = (primals.output(op, 0)?, primals.output(op, 1)?, primals.output(op, 2)?);
            let (m, n, k) = (d.m, d.n, d.k);
            let u = if m > k { cx.primal().slice(u, [0, 0], [m, k])? } else { u.clone() };
            let vh = if n > k { cx.primal().slice(vh, [0, 0], [k, n])? } else { vh.clone() };
            let f = SvdFactors { u, s: s.clone(), vh };
            let want = Want { u: m == k && primals.reads(0), vh: n == k && primals.reads(2) };
            let [du, ds, dvh] = thin(cx, &full.0, &f, da, d, want)?;
            let du = if m > k { completion(op, 0) } else { du };
            let dvh = if n > k { completion(op, 2) } else { dvh };
            Ok(tangents([du, ds, dvh]))
        }
        _ => Ok(unsupported(op)),
    }
}

/// The tangent of an output the forward did not compute (never read).
fn absent_output<T>(op: &Op, i: usize) -> Tangent<T> {
    Tangent::Undefined(Error::NotDifferentiable {
        op: op.name(),
        output: op.output_names().get(i).copied().unwrap_or("?"),
        why: "the forward did not compute it (SvdOptions::vectors)",
    })
}

/// The tangent of a full-SVD factor that has completion columns.
fn completion<T>(op: &Op, i: usize) -> Tangent<T> {
    Tangent::Undefined(Error::NotDifferentiable {
        op: op.name(),
        output: op.output_names().get(i).copied().unwrap_or("?"),
        why: "its completion columns (beyond min(m, n)) are an arbitrary null-space basis; \
              use the thin svd",
    })
}

/// ds = Re diag(Uᴴ dA V), formed as Re Σ_rows conj(U)∘(dA V).
fn values<C: Cx + ?Sized>(
    cx: &mut C,
    f: &SvdFactors<C::P>,
    da: &Tangent<C::T>,
    d: Dims,
) -> Result<Tangent<C::T>> {
    let dav = cx.matmul(t(da), MatOp::Identity, p(&f.vh), MatOp::Adjoint)?;
    let conj_u = if d.complex() { cx.primal().unary(UnaryOp::Conj, &f.u)? } else { f.u.clone() };
    let prod = cx.mul(&conj_u, &dav)?;
    let ds = cx.sum(&prod, 1)?;
    real_part(cx, &ds, d)
}

/// Re x for complex input; x itself for real.
fn real_part<C: Cx + ?Sized>(cx: &mut C, x: &Tangent<C::T>, d: Dims) -> Result<Tangent<C::T>> {
    if d.complex() {
        cx.unary(UnaryOp::Real, x)
    } else {
        Ok(x.clone())
    }
}

/// A real primal coefficient in A's dtype (so it can multiply tangents).
fn like_a<C: Cx + ?Sized>(cx: &mut C, x: C::P, d: Dims) -> Result<C::P> {
    if d.complex() {
        cx.primal().unary(UnaryOp::ToComplex, &x)
    } else {
        Ok(x)
    }
}

/// The coupling matrices of step 3 and the reciprocal of s used by the
/// rectangular terms.
struct Coupling<T, P> {
    /// Ω_U (k×k, anti-Hermitian).
    omega_u: Tangent<T>,
    /// Ω_V (k×k, anti-Hermitian).
    omega_v: Tangent<T>,
    /// σ⁺ (real, k).
    inv_s: P,
}

/// The thin rule's `[du, ds, dvh]` at A = `a` with its thin factors `f`
/// (both vector tangents). The truncated SVD's rule masks these
/// (`svd_truncated.rs`).
pub(super) fn thin_tangents<C: Cx + ?Sized>(
    cx: &mut C,
    opts: &SvdOptions,
    a: &C::P,
    f: &SvdFactors<C::P>,
    da: &Tangent<C::T>,
) -> Result<[Tangent<C::T>; 3]> {
    let d = Dims::of(cx, a);
    thin(cx, opts, f, da, d, Want { u: true, vh: true })
}

/// Thin tangents `[du, ds, dvh]` from thin factors (the u and vh tangents
/// only where `want` asks; `Zero` otherwise, and with neither, ds alone as
/// `SvdVals` forms it).
fn thin<C: Cx + ?Sized>(
    cx: &mut C,
    opts: &SvdOptions,
    f: &SvdFactors<C::P>,
    da: &Tangent<C::T>,
    d: Dims,
    want: Want,
) -> Result<[Tangent<C::T>; 3]> {
    if !want.u && !want.vh {
        // The values alone: one product with dA, no coupling.
        return Ok([Tangent::Zero, values(cx, f, da, d)?, Tangent::Zero]);
    }
    let dav = cx.matmul(t(da), MatOp::Identity, p(&f.vh), MatOp::Adjoint)?;
    let dp = cx.matmul(p(&f.u), MatOp::Adjoint, t(&dav), MatOp::Identity)?;
    let diag = cx.diag_part(&dp)?;
    let ds = real_part(cx, &diag, d)?;
    let c = match opts.derivative_eps {
        None => partial_fraction(cx, &f.s, &dp, d)?,
        Some(eps) => lorentzian(cx, &f.s, &dp, eps, d)?,
    };
    // dU = U Ω_U + P_U dA V diag(σ⁺), P_U dA V = dA V − U dP (needed for
    // the u tangent, and for the phase φ of step 5 in the complex case).
    let need_du = want.u || d.complex();
    let mut du = Tangent::Zero;
    if need_du {
        du = cx.matmul(p(&f.u), MatOp::Identity, t(&c.omega_u), MatOp::Identity)?;
    }
    if need_du && d.m > d.k {
        let u_dp = cx.matmul(p(&f.u), MatOp::Identity, t(&dp), MatOp::Identity)?;
        let rect = cx.sub(&dav, &u_dp)?;
        let rect = cx.scale_cols(&rect, &c.inv_s)?;
        du = cx.add(&du, &rect)?;
    }
    let mut omega_v = c.omega_v;
    if d.complex() {
        // Step 5: iφ from dU's pivot entries; dU −= U diag(iφ), Ω_V −= diag(iφ).
        let pivots = cx.primal().pivot_phase(&f.u)?;
        let at_pivot = cx.mul(&pivots, &du)?;
        let ratio = cx.sum(&at_pivot, 1)?;
        let phi = cx.unary(UnaryOp::Imag, &ratio)?;
        let phi = cx.unary(UnaryOp::ToComplex, &phi)?;
        let i_phi = cx.unary(UnaryOp::MulI, &phi)?;
        if want.u {
            let cols = cx.spread(&i_phi, &[d.m])?;
            let fix = cx.mul(&f.u, &cols)?;
            du = cx.sub(&du, &fix)?;
        }
        let fix = cx.diag_embed(&i_phi)?;
        omega_v = cx.sub(&omega_v, &fix)?;
    }
    if !want.vh {
        return Ok([du, ds, Tangent::Zero]);
    }
    // d(Vᴴ) = Ω_Vᴴ Vᴴ + diag(σ⁺) (Uᴴ dA − dP Vᴴ).
    let mut dvh = cx.matmul(t(&omega_v), MatOp::Adjoint, p(&f.vh), MatOp::Identity)?;
    if d.n > d.k {
        let uh_da = cx.matmul(p(&f.u), MatOp::Adjoint, t(da), MatOp::Identity)?;
        let dp_vh = cx.matmul(t(&dp), MatOp::Identity, p(&f.vh), MatOp::Identity)?;
        let rect = cx.sub(&uh_da, &dp_vh)?;
        let rect = cx.scale_rows(&rect, &c.inv_s)?;
        dvh = cx.add(&dvh, &rect)?;
    }
    let du = if want.u { du } else { Tangent::Zero };
    Ok([du, ds, dvh])
}

/// Steps 1 and 3 of the default rule: Ω_U = F⁻∘H + F⁺∘K,
/// Ω_V = F⁻∘H − F⁺∘K, and σ⁺ = inv_δ(s).
fn partial_fraction<C: Cx + ?Sized>(
    cx: &mut C,
    s: &C::P,
    dp: &Tangent<C::T>,
    d: Dims,
) -> Result<Coupling<C::T, C::P>> {
    let relative = d.relative_cutoff();
    let cutoff = |pair, relative| PairInv { pair, regularize: Regularize::Cutoff { relative } };
    // F⁻/2 and F⁺/2: the halves of herm and ah are folded into the primal side.
    let f_minus = cx.primal().pair_inv(s, cutoff(Pair::Diff, relative))?;
    let f_minus = cx.primal().scale(&f_minus, 0.5)?;
    let f_minus = like_a(cx, f_minus, d)?;
    let f_plus = cx.primal().pair_inv(s, cutoff(Pair::Sum, relative))?;
    let f_plus = cx.primal().scale(&f_plus, 0.5)?;
    let f_plus = like_a(cx, f_plus, d)?;
    // σ⁺_i = inv_δ(s_i) = 2·inv_{2δ}(2 s_i), the diagonal of F⁺ at twice the cutoff.
    let twice = cx.primal().pair_inv(s, cutoff(Pair::Sum, 2.0 * relative))?;
    let twice = cx.primal().diag_part(&twice)?;
    let inv_s = cx.primal().scale(&twice, 2.0)?;

    // At a tie F⁻ is cut, at a pair of zero values F⁺: the parts of dP they
    // multiply must vanish there.
    let check = |cut, part| TangentTieCheck { of: GaugeOf::Svd, cut, relative, part };
    let dp = tie_checked(cx, check(Cut::Tie, Part::Hermitian), s, dp)?;
    let dp = tie_checked(cx, check(Cut::Zero, Part::AntiHermitian), s, &dp)?;
    let dph = cx.adjoint(&dp, MatOp::Adjoint)?;
    let herm2 = cx.add(&dp, &dph)?;
    let ah2 = cx.sub(&dp, &dph)?;
    let fh = cx.mul(&f_minus, &herm2)?;
    let fk = cx.mul(&f_plus, &ah2)?;
    Ok(Coupling { omega_u: cx.add(&fh, &fk)?, omega_v: cx.sub(&fh, &fk)?, inv_s })
}

/// The Lorentzian-broadened rule (`docs/ad-rules.md#svd`): F = z/(z² + ε²) with
/// z = s_j² − s_i², Ω_U = F∘(dP S + (dP S)ᴴ) + ½ diag(s/(s² + ε²))∘(dP − dPᴴ),
/// Ω_V = F∘(S dP + (S dP)ᴴ), and the raw 1/s for the rectangular terms.
fn lorentzian<C: Cx + ?Sized>(
    cx: &mut C,
    s: &C::P,
    dp: &Tangent<C::T>,
    eps: f64,
    d: Dims,
) -> Result<Coupling<C::T, C::P>> {
    let broadened = |pair, eps| PairInv { pair, regularize: Regularize::Lorentzian { eps } };
    let s2 = cx.primal().unary(UnaryOp::Abs2, s)?;
    let f = cx.primal().pair_inv(&s2, broadened(Pair::Diff, eps))?;
    let f = like_a(cx, f, d)?;
    let inv_s = cx.primal().unary(UnaryOp::Recip, s)?;

    let dp_s = cx.scale_cols(dp, s)?;
    let dp_s_h = cx.adjoint(&dp_s, MatOp::Adjoint)?;
    let sym = cx.add(&dp_s, &dp_s_h)?;
    let mut omega_u = cx.mul(&f, &sym)?;
    if d.complex() {
        // ½ s/(s² + ε²) is the diagonal of (s_i + s_j)/((s_i + s_j)² + (2ε)²).
        let half = cx.primal().pair_inv(s, broadened(Pair::Sum, (2.0 * eps).min(f64::MAX)))?;
        let half = cx.primal().diag_part(&half)?;
        let dph = cx.adjoint(dp, MatOp::Adjoint)?;
        let ah2 = cx.sub(dp, &dph)?;
        let ah2 = cx.diag_part(&ah2)?;
        let phase = cx.diag_embed(&ah2)?;
        let phase = cx.scale_cols(&phase, &half)?;
        omega_u = cx.add(&omega_u, &phase)?;
    }
    let s_dp = cx.scale_rows(dp, s)?;
    let s_dp_h = cx.adjoint(&s_dp, MatOp::Adjoint)?;
    let sym = cx.add(&s_dp, &s_dp_h)?;
    let omega_v = cx.mul(&f, &sym)?;
    Ok(Coupling { omega_u, omega_v, inv_s })
}
