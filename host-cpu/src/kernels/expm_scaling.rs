//! The forward expm's Padé degree and scaling, by Al-Mohy and Higham 2009
//! (docs/ad-rules.md#matrix-exponential): from the norms of powers,
//! d_k = ‖A^k‖₁^{1/k}, rather than from ‖A‖₁, so that a non-normal A, whose
//! norm can be far above its powers' growth, is not scaled further than
//! the Padé approximant needs. Overscaling costs accuracy: every squaring
//! adds rounding, and for A = [[1, b], [0, −1]] the ‖A‖₁-based choice
//! loses seven digits at b = 1e10.
//!
//! * The powers are formed of X₀ = A/2^{s₀}, s₀ from ‖A‖₁ (the most
//!   squarings any choice takes), so none can overflow; d_k of A is d_k of
//!   X₀ times 2^{s₀}. X², X⁴, X⁶ are the approximant's own terms, so their
//!   norms are exact at no extra product; d₈ and d₁₀ are bounded from them
//!   (d₈ ≤ min(d₄, (‖A²‖‖A⁶‖)^{1/8}), d₁₀ ≤ (‖A⁴‖‖A⁶‖)^{1/10}), where the
//!   paper estimates them: a bound is never below the true value, so the
//!   choice is never less safe. A power that may have underflowed at X₀'s
//!   scale counts by its factors' bound and is formed again from X
//!   ([`Underflow`]).
//! * Degree m ∈ {3, 5, 7, 9} when max(d_{2j}, d_{2j+2}) ≤ θ_m for its j and
//!   ℓ(A, m) = 0; else 13 with s = ⌈log₂(η/θ₁₃)⌉, η = min(max(d₆, d₈),
//!   max(d₈, d₁₀)), θ₁₃ = 4.25, plus ℓ(A/2^s, 13) — never more than s₀.
//! * ℓ(A, m) = max(⌈log₂(α/u)/(2m)⌉, 0), α = |c_{2m+1}|·‖|A|^{2m+1}‖₁/‖A‖₁,
//!   u the unit roundoff: extra squarings where the approximant's rounding,
//!   not its truncation, would dominate. ‖|A|^p‖₁ is exact: |A| is
//!   nonnegative, so it is the largest entry of (|A|ᵀ)^p 1, p products with
//!   a vector (normalised each step, so no power overflows).

use super::expm_pade::{ELL, THETA};
use super::scaling::scale_mat;
use crate::batch::Failure;
use crate::field::Field;
use crate::gemm::matmul;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use lindiff_core::{RealScalar, Scalar};

type Re<T> = <T as Scalar>::Real;

/// Thresholds for `degree_and_scaling` that give s₀ = ⌈log₂(‖A‖₁/θ₁₃)⌉
/// (≥ 0) for every nonzero A: no low degree (those thresholds are 0).
pub(super) const FIRST_SCALING: [f64; 5] = [0.0, 0.0, 0.0, 0.0, THETA[4]];

/// The same with the derivative's ℓ₁₃.
pub(super) const FIRST_DERIVATIVE: [f64; 5] = [0.0, 0.0, 0.0, 0.0, ELL[4]];

/// 1/|c_{2m+1}| for m = 3, 5, 7, 9, 13, with c_{2m+1} = (m!)²/((2m)!(2m+1)!)
/// the leading coefficient of r_m's backward-error series.
const C_RECIPROCAL: [f64; 5] =
    [100800.0, 10059033600.0, 4487938430976000.0, 5.914_384_781_877_412e21, 1.132_507_756_060_211_1e35];

/// The degrees' m, by index.
const M: [usize; 5] = [3, 5, 7, 9, 13];

/// Most doublings X may take back from X₀ (s₀ − s) for n×n matrices of
/// the real type `R`: the smaller of the limits that apply (none, for
/// most A: then any s the choice asks for).
/// * Where a power must be formed again from X ([`Underflow::again`]), a
///   product of two of X's entries, up to (2^{s₀−s}·θ₁₃)², stays finite.
/// * Where X₀ has nonzero entries whose products can underflow
///   ([`Underflow::tiny`]), X₀² may have lost them unnoticed (large
///   entries cancelling, small ones vanishing: f32 [[1, 1e30], [0, −1]]/2⁹⁸
///   squares to 0, not 2^{−196}·I). That error, at most n²·MIN_POSITIVE·ε
///   in the 1-norm, stays below ε once X₀² is scaled back by 2^{2(s₀−s)}.
///
/// f32: 61 at n = 2 (fewer for larger n); f64: 509 at n = 2 (500 at
/// n = 1000).
fn max_unscale<R: RealScalar>(n: usize, underflow: Underflow) -> i32 {
    let log2 = |x: f64| ln(x) / core::f64::consts::LN_2;
    let products = (log2(R::MAX.to_f64()) - 2.0 * log2(THETA[4]) - 1.0) / 2.0;
    let lost = (-log2(R::MIN_POSITIVE.to_f64()) - 2.0 * log2(n.max(1) as f64)) / 2.0 - 1.0;
    let limit = |applies: bool, doublings: f64| if applies { (doublings as i32).max(0) } else { i32::MAX };
    limit(underflow.again, products).min(limit(underflow.tiny, lost))
}

/// The error for an A whose 1-norm exceeds its powers' growth by more
/// than [`max_unscale`] doublings.
const TOO_NON_NORMAL: Failure = Failure::OutOfRange {
    arg: "a",
    why: "its 1-norm exceeds the growth of its powers by more than the dtype's exponent range lets the \
          scaling be undone (a strongly non-normal A at an extreme scale, such as f32 [[1, 1e25], [0, -1]]): \
          scaling by the norm would lose every digit; compute in f64, or balance A (D⁻¹AD, D diagonal) first",
};

/// Where the powers of X₀ may have lost bits to underflow.
/// * `again`: a product F·G whose factors' (nonzero) norms multiply to
///   below R's smallest normal over ε can have lost its entries' bits, or
///   be 0 where the power is not (f32, X₀ = [[1, b], [0, −1]]/2^{s₀} at
///   b = 1e10: X₀⁶ = 2^{−192}·I is 0). Its norm then counts as that
///   product, an upper bound, and the power is formed again from X after
///   the choice. (A zero factor gives an exactly zero product.)
/// * `tiny`: X₀ has nonzero entries whose products with each other fall
///   below that bound, so X₀² itself may have lost them (see
///   [`max_unscale`]).
#[derive(Clone, Copy, Default)]
struct Underflow {
    again: bool,
    tiny: bool,
}

impl Underflow {
    /// ln of R's smallest normal over ε.
    fn floor<R: RealScalar>() -> f64 {
        ln(R::MIN_POSITIVE.to_f64()) - ln(R::EPSILON.to_f64())
    }

    /// `tiny` from X₀'s smallest nonzero entry.
    fn of<T: Field>(x: MatRef<'_, T>) -> Self {
        let mut smallest = f64::INFINITY;
        for j in 0..x.ncols() {
            for &v in x.col(j).iter() {
                let size = Scalar::abs(v).to_f64();
                if size > 0.0 && size < smallest {
                    smallest = size;
                }
            }
        }
        Underflow { again: false, tiny: 2.0 * ln(smallest) < Self::floor::<Re<T>>() }
    }

    /// ln ‖F·G‖₁ to use for a product with ln ‖F‖₁ = `lf`, ln ‖G‖₁ = `lg`
    /// and computed ln ‖F·G‖₁ = `computed`.
    fn norm<R: RealScalar>(&mut self, lf: f64, lg: f64, computed: f64) -> f64 {
        if lf.is_finite() && lg.is_finite() && lf + lg < Self::floor::<R>() {
            self.again = true;
            lf + lg
        } else {
            computed
        }
    }
}

/// s = s₀ + ⌈log₂(η/θ)⌉ for X₀'s η (so ln(η/θ) = `ln_ratio`, ≤ 0 when
/// η ≤ ‖X₀‖₁ ≤ θ; −∞ for η = 0): never above s₀ (rounding can put ‖X₀‖₁ a
/// few ulps above θ, and one more squaring than s₀ would square X₀
/// itself), never negative.
fn scaling_for(ln_ratio: f64, s0: i32) -> i32 {
    let rel = ceil((ln_ratio / core::f64::consts::LN_2).max(-f64::from(s0))).min(0.0);
    (s0 + rel as i32).max(0)
}

/// What [`choose`] decided: the degree index (0…3 for m = 3…9, 4 for 13),
/// s, and how many of the powers X², X⁴, X⁶ it left formed (of X = A/2^s).
pub(super) struct Choice {
    pub(super) degree: usize,
    pub(super) s: i32,
    pub(super) formed: usize,
}

/// ‖m‖₁ as f64.
fn norm1<T: Field>(m: MatRef<'_, T>) -> f64 {
    (0..m.ncols()).map(|j| m.col(j).iter().map(|&x| Scalar::abs(x).to_f64()).sum::<f64>()).fold(0.0, f64::max)
}

fn ln(x: f64) -> f64 {
    <f64 as RealScalar>::ln(x)
}

/// ⌈x⌉ for finite x in i32's range (core's f64 has no ceil without std).
fn ceil(x: f64) -> f64 {
    let whole = x as i64 as f64;
    if whole < x {
        whole + 1.0
    } else {
        whole
    }
}

/// |X₀| for the ℓ test, filled on first use (most choices never need it),
/// and two work vectors.
struct AbsPowers<'a, T> {
    x: MatRef<'a, T>,
    /// ln ‖X₀‖₁ (= ln ‖|X₀|‖₁).
    ln_norm: f64,
    abs: MatMut<'a, T>,
    vecs: MatMut<'a, T>,
    filled: bool,
}

/// min(ℓ(X, m), cap) for X = X₀·2^Δ: the extra squarings (≥ 0) the
/// rounding of r_m at X asks for, as far as the caller needs them (the
/// choice of degree needs only whether ℓ = 0, the scaling no more than
/// s₀ − s).
///
/// ‖|X₀|^p‖₁ (p = 2m + 1) is the largest entry of (|X₀|ᵀ)^p·1, one
/// matrix-vector product a step, normalised each step so that no power
/// overflows. Each step j also bounds it: above by ‖|X₀|^j‖₁·‖X₀‖₁^{p−j},
/// below by r^{p−j+1}‖|X₀|^{j−1}‖₁ with r = min_i w_i/v_i for consecutive
/// iterates v, w (Collatz–Wielandt: vᵀ|X₀| ≥ r vᵀ entrywise). The steps
/// stop once both bounds give the same answer: ℓ divides log₂ α by 2m, so
/// that is usually after a few steps, not p. And α ≤ |c_{2m+1}|·‖X‖₁^{2m}
/// answers before any product wherever ‖X‖₁ is near or below θ_m.
fn ell<T: Field>(degree: usize, delta: i32, cap: i32, powers: &mut AbsPowers<'_, T>) -> i32 {
    let m = M[degree];
    let (p, ln2) = (2 * m + 1, core::f64::consts::LN_2);
    let ln_u = ln(Re::<T>::EPSILON.to_f64() / 2.0);
    // ln α = ln ‖|X₀|^p‖₁ − ln ‖X₀‖₁ + ln |c| + 2m·Δ·ln 2.
    let offset = -ln(C_RECIPROCAL[degree]) + f64::from(delta) * (2 * m) as f64 * ln2 - powers.ln_norm;
    let ell_of = |ln_power: f64| -> i32 {
        let value = (ln_power + offset - ln_u) / ln2 / (2 * m) as f64;
        if value.is_nan() || value <= 0.0 {
            0
        } else {
            ceil(value.min(f64::from(cap))) as i32
        }
    };
    let decided = |lo: f64, hi: f64| {
        let (a, b) = (ell_of(lo).min(cap), ell_of(hi).min(cap));
        (a == b).then_some(a)
    };
    if let Some(answer) = decided(f64::NEG_INFINITY, p as f64 * powers.ln_norm) {
        return answer;
    }
    let n = powers.x.nrows();
    if n == 1 {
        return ell_of(p as f64 * powers.ln_norm).min(cap);
    }
    if !powers.filled {
        // |X₀|ᵀ, stored: a product with a plain column-major matrix.
        for j in 0..n {
            for i in 0..n {
                powers.abs[(j, i)] = T::from_real(Scalar::abs(powers.x[(i, j)]));
            }
        }
        powers.filled = true;
    }
    let (mut v, mut w) = powers.vecs.rb_mut().split_at_col_mut(1);
    let mut w = w.rb_mut().get_mut(.., 0..1);
    v.fill(T::one());
    let mut log = 0.0; // ln ‖|X₀|^{j−1}‖₁
    for j in 1..=p {
        matmul(w.rb_mut(), Accum::Replace, powers.abs.rb(), v.rb(), T::one(), Par::Seq);
        let (mut largest, mut r) = (0.0f64, f64::INFINITY);
        for i in 0..n {
            let (wi, vi) = (w[(i, 0)].re().to_f64(), v[(i, 0)].re().to_f64());
            largest = largest.max(wi);
            r = r.min(if vi > 0.0 { wi / vi } else { 0.0 });
        }
        if largest == 0.0 || !largest.is_finite() {
            return if largest == 0.0 { 0 } else { cap };
        }
        let lo = log + (p - j + 1) as f64 * ln(r);
        log += ln(largest);
        let hi = log + (p - j) as f64 * powers.ln_norm;
        if let Some(answer) = decided(lo, hi) {
            return answer;
        }
        let inv = Re::<T>::from_f64(1.0 / largest);
        for i in 0..n {
            v[(i, 0)] = w[(i, 0)].scale(inv);
        }
    }
    ell_of(log).min(cap)
}

/// The value's choice: the degree and s for the A in `x` (n×n, finite, not
/// zero; s₀ from [`FIRST_SCALING`]), with X = A/2^s left in `x` and the
/// `formed` powers X², X⁴, … in `pows`; two n×n scratch matrices.
///
/// # Errors
/// [`Failure::OutOfRange`] where the choice would undo more than
/// [`max_unscale`] of s₀'s doublings.
pub(super) fn choose<T: Field>(
    mut x: MatMut<'_, T>,
    pows: &mut [MatMut<'_, T>; 4],
    s0: i32,
    (abs, vecs): (MatMut<'_, T>, MatMut<'_, T>),
    par: Par,
) -> Result<Choice, Failure> {
    scale_mat(x.rb_mut(), -s0);
    let ln2 = core::f64::consts::LN_2;
    // ln of A's quantities from X₀'s: ln d_k(A) = ln d_k(X₀) + s₀·ln 2.
    let shift = f64::from(s0) * ln2;
    let l1 = ln(norm1(x.rb()));
    let mut powers = AbsPowers { x: x.rb(), ln_norm: l1, abs, vecs, filled: false };
    let mut underflow = Underflow::of(x.rb());
    let (p2, rest) = pows.split_at_mut(1);
    let (p4, rest) = rest.split_at_mut(1);
    let p6 = &mut rest[0];
    matmul(p2[0].rb_mut(), Accum::Replace, x.rb(), x.rb(), T::one(), par);
    let l2 = underflow.norm::<Re<T>>(l1, l1, ln(norm1(p2[0].rb())));
    let fits = |ln_eta: f64, degree: usize, powers: &mut AbsPowers<'_, T>| {
        ln_eta + shift <= ln(THETA[degree]) && ell(degree, s0, 1, powers) == 0
    };
    // d₄, d₆ ≤ ‖A²‖^{1/2}.
    let mut choice = None;
    if fits(l2 / 2.0, 0, &mut powers) {
        choice = Some((0, 1));
    }
    let (mut l4, mut l6) = (0.0, 0.0);
    if choice.is_none() {
        matmul(p4[0].rb_mut(), Accum::Replace, p2[0].rb(), p2[0].rb(), T::one(), par);
        l4 = underflow.norm::<Re<T>>(l2, l2, ln(norm1(p4[0].rb())));
        // η₂ = max(d₄, d₆ ≤ (‖A²‖‖A⁴‖)^{1/6}).
        if fits((l4 / 4.0).max((l2 + l4) / 6.0), 1, &mut powers) {
            choice = Some((1, 2));
        }
    }
    let mut eta3 = 0.0;
    let mut d8 = 0.0;
    if choice.is_none() {
        matmul(p6.rb_mut(), Accum::Replace, p4[0].rb(), p2[0].rb(), T::one(), par);
        l6 = underflow.norm::<Re<T>>(l4, l2, ln(norm1((*p6).rb())));
        d8 = (l4 / 4.0).min((l2 + l6) / 8.0);
        eta3 = (l6 / 6.0).max(d8);
        for degree in [2, 3] {
            if choice.is_none() && fits(eta3, degree, &mut powers) {
                choice = Some((degree, 3));
            }
        }
    }
    let (degree, s, formed) = match choice {
        Some((degree, formed)) => (degree, 0, formed),
        None => {
            let eta5 = eta3.min(d8.max((l4 + l6) / 10.0));
            let s = scaling_for(eta5 - ln(THETA[4]), s0);
            let s = s + ell(4, s0 - s, s0 - s, &mut powers);
            (4, s, 3)
        }
    };
    unscale(x, pows, s0, Choice { degree, s, formed }, underflow, par)
}

/// The derivative's choice (`expm_factors`, `expm_frechet`): the degree
/// and s for the A in `x` (s₀ from [`FIRST_DERIVATIVE`]), with X = A/2^s
/// left in `x` and X² in `pows[0]`. The thresholds ℓ_m bound the backward
/// error of r_m's Fréchet derivative through ‖X^j E X^i‖ ≤ ‖X‖^{i+j}‖E‖
/// (i + j ≥ 2m); with d₂ = ‖X²‖^{1/2} ≤ ‖X‖, X^j is X^{j mod 2} times a
/// power of X², so ‖X^j E X^i‖ ≤ ‖X‖²d₂^{i+j−2}‖E‖ ≤ β^{i+j}‖E‖ with
/// β = d₂(‖X‖/d₂)^{1/m}: the test β ≤ ℓ_m keeps the bound and scales a
/// non-normal A, whose ‖A‖ is far above d₂, much less (for
/// [[1, b], [0, −1]], d₂ = 1: s = 1 where ‖A‖₁ asks for log₂ b).
///
/// # Errors
/// [`Failure::OutOfRange`] as [`choose`].
pub(super) fn choose_derivative<T: Field>(
    mut x: MatMut<'_, T>,
    pows: &mut [MatMut<'_, T>; 4],
    s0: i32,
    par: Par,
) -> Result<Choice, Failure> {
    scale_mat(x.rb_mut(), -s0);
    matmul(pows[0].rb_mut(), Accum::Replace, x.rb(), x.rb(), T::one(), par);
    let l1 = ln(norm1(x.rb()));
    let mut underflow = Underflow::of(x.rb());
    let l2 = underflow.norm::<Re<T>>(l1, l1, ln(norm1(pows[0].rb())));
    let shift = f64::from(s0) * core::f64::consts::LN_2;
    // ln β_m of X₀ (−∞ where X₀² = 0: then every term past X is zero).
    let beta = |m: usize| if l2 == f64::NEG_INFINITY { l2 } else { l2 / 2.0 + (l1 - l2 / 2.0) / m as f64 };
    let low = (0..4).find(|&d| beta(M[d]) + shift <= ln(ELL[d]));
    let choice = match low {
        Some(degree) => Choice { degree, s: 0, formed: 1 },
        None => Choice { degree: 4, s: scaling_for(beta(13) - ln(ELL[4]), s0), formed: 1 },
    };
    unscale(x, pows, s0, choice, underflow, par)
}

/// X = X₀·2^{s₀ − s} and its formed powers: exactly (powers of two), or,
/// where one may have underflowed, formed again from X.
///
/// # Errors
/// [`TOO_NON_NORMAL`] where s₀ − s exceeds [`max_unscale`].
fn unscale<T: Field>(
    mut x: MatMut<'_, T>,
    pows: &mut [MatMut<'_, T>; 4],
    s0: i32,
    choice: Choice,
    underflow: Underflow,
    par: Par,
) -> Result<Choice, Failure> {
    let up = s0 - choice.s;
    if up > max_unscale::<Re<T>>(x.nrows(), underflow) {
        return Err(TOO_NON_NORMAL);
    }
    if up == 0 {
        return Ok(choice);
    }
    scale_mat(x.rb_mut(), up);
    if !underflow.again {
        for (k, p) in pows.iter_mut().take(choice.formed).enumerate() {
            scale_mat(p.rb_mut(), up * 2 * (k as i32 + 1));
        }
        return Ok(choice);
    }
    let (p2, rest) = pows.split_at_mut(1);
    let (p4, rest) = rest.split_at_mut(1);
    matmul(p2[0].rb_mut(), Accum::Replace, x.rb(), x.rb(), T::one(), par);
    if choice.formed >= 2 {
        matmul(p4[0].rb_mut(), Accum::Replace, p2[0].rb(), p2[0].rb(), T::one(), par);
    }
    if choice.formed >= 3 {
        matmul(rest[0].rb_mut(), Accum::Replace, p4[0].rb(), p2[0].rb(), T::one(), par);
    }
    Ok(choice)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table is (2m)!(2m+1)!/(m!)², to f64's rounding.
    #[test]
    fn c_reciprocals_follow_the_formula() {
        let factorial = |k: usize| (1..=k).map(|i| i as f64).product::<f64>();
        for (degree, &m) in M.iter().enumerate() {
            let want = factorial(2 * m) * factorial(2 * m + 1) / (factorial(m) * factorial(m));
            let err = (C_RECIPROCAL[degree] - want).abs() / want;
            assert!(err <= 1e-14, "m = {m}: {} vs {want} ({err:e})", C_RECIPROCAL[degree]);
        }
    }
}
