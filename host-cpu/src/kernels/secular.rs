//! The secular equation of a rank-one update of a diagonal matrix, shared by
//! the divide-and-conquer solvers [`super::tridiagonal_dc`] (eigenvalues of
//! D + ρ z zᵀ) and [`super::bidiagonal_dc`] (singular values of the
//! broken-arrow matrix, the square roots of the eigenvalues of D² + z zᵀ).
//!
//! For poles p₀ < p₁ < … < p_{k−1} and weights w2ⱼ = ρ zⱼ² > 0, the
//! secular function f(λ) = 1 + Σⱼ w2ⱼ/(pⱼ − λ) has one root in each
//! (pᵢ, pᵢ₊₁) and one in (p_{k−1}, p_{k−1} + Σ w2). As in LAPACK's
//! `?laed4`/`?lasd4`, each root is found as an offset τ from its nearer pole
//! (so that every pⱼ − λ is accurate, also for the roots next to a pole):
//! the first τ from the two-pole model with the other terms frozen at the
//! bracket's middle, then the two-pole rational model fitted to f and f′
//! (one pole for the last root), Newton where the model steps away and
//! bisection where a step leaves the shrinking bracket.
//!
//! The poles come as [`Poles::Plain`] values dⱼ (pⱼ = dⱼ) or as
//! [`Poles::Squared`] singular values dⱼ ≥ 0 (pⱼ = dⱼ²); then the pole
//! differences are formed as (dᵢ − dⱼ)(dᵢ + dⱼ), accurate to a few ulps, and
//! a root is returned as σ = √λ.
//!
//! Gu and Eisenstat's ẑ ([`weights_for_roots`]), the weights for which the
//! computed roots are exact, ρẑ_l² = −(p_l − λ_l)·∏_{j≠l} (p_l − λⱼ)/(p_l − pⱼ),
//! make the vectors (P − λᵢ)⁻¹ẑ ([`eigenvector`]) numerically orthogonal
//! even where roots cluster.

use crate::field::Field;
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// How the poles of a secular equation are given.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Poles {
    /// The poles themselves: pⱼ = dⱼ, roots λ.
    Plain,
    /// Non-negative singular values: pⱼ = dⱼ², roots returned as √λ.
    Squared,
}

impl Poles {
    /// pₐ − p_b from the given values a and b, without cancellation beyond
    /// that of a − b.
    #[inline(always)]
    fn gap<T: Field>(self, a: Re<T>, b: Re<T>) -> Re<T> {
        match self {
            Poles::Plain => a - b,
            Poles::Squared => (a - b) * (a + b),
        }
    }

    /// The root p_origin + τ in the form the caller takes (λ, or √λ).
    #[inline(always)]
    fn root<T: Field>(self, at: Re<T>, tau: Re<T>) -> Re<T> {
        match self {
            Poles::Plain => at + tau,
            Poles::Squared => (at * at + tau).max_real(Re::<T>::zero()).sqrt(),
        }
    }
}

with_avx2! {
    /// Root `i` (0-based) of f(λ) = 1 + Σⱼ w2ⱼ/(pⱼ − λ) for poles given by
    /// `d` (strictly ascending) and every w2ⱼ > 0: in (pᵢ, pᵢ₊₁), or in
    /// (p_{k−1}, p_{k−1} + Σ w2) for the last. Writes pⱼ − λ into `delta`
    /// (accurately: λ is held as an offset from its nearer pole) and
    /// returns the root (λ, or √λ for [`Poles::Squared`]), and whether it
    /// converged (within 100 steps).
    pub(super) fn secular_root<T: Field>(poles: Poles, i: usize, d: &[Re<T>], w2: &[Re<T>], delta: &mut [Re<T>]) -> (Re<T>, bool) => secular_root_body
}

with_avx2! {
    /// Gu and Eisenstat's weights: writes ẑ_l, with the sign of
    /// `weights[l]`, for which the roots left in `delta` by
    /// [`secular_root`] (column j: p − λⱼ) are exact, up to the common factor
    /// √ρ that a normalisation of the vectors removes:
    /// ρẑ_l² = −(p_l − λ_l)·∏_{j≠l} (p_l − λⱼ)/(p_l − pⱼ).
    pub(super) fn weights_for_roots<T: Field>(poles: Poles, d: &[Re<T>], delta: &[Re<T>], weights: &[Re<T>], zhat: &mut [Re<T>]) => weights_for_roots_body
}

with_avx2! {
    /// Overwrites `col` (the differences p − λᵢ) with ẑ/(p − λᵢ) and returns
    /// its Euclidean norm.
    pub(super) fn eigenvector<T: Field>(zhat: &[Re<T>], col: &mut [Re<T>]) -> Re<T> => eigenvector_body
}

#[inline(always)]
fn weights_for_roots_body<T: Field>(
    poles: Poles,
    d: &[Re<T>],
    delta: &[Re<T>],
    weights: &[Re<T>],
    prod: &mut [Re<T>],
) {
    let k = d.len();
    let zero = Re::<T>::zero();
    prod.fill(Re::<T>::one());
    for (j, col) in delta.chunks_exact(k).enumerate() {
        let dj = d[j];
        for ((p, &x), &dl) in prod[..j].iter_mut().zip(&col[..j]).zip(&d[..j]) {
            *p *= x / poles.gap::<T>(dl, dj);
        }
        for ((p, &x), &dl) in prod[j + 1..].iter_mut().zip(&col[j + 1..]).zip(&d[j + 1..]) {
            *p *= x / poles.gap::<T>(dl, dj);
        }
        prod[j] *= col[j];
    }
    for (z, &w) in prod.iter_mut().zip(weights) {
        let mag = (-*z).max_real(zero).sqrt();
        *z = if w < zero { -mag } else { mag };
    }
}

#[inline(always)]
fn eigenvector_body<T: Field>(zhat: &[Re<T>], col: &mut [Re<T>]) -> Re<T> {
    let mut lanes = [Re::<T>::zero(); LANES];
    let (blocks, tail) = col.as_chunks_mut::<LANES>();
    let (zblocks, ztail) = zhat.as_chunks::<LANES>();
    for (b, zb) in blocks.iter_mut().zip(zblocks) {
        for ((x, &z), acc) in b.iter_mut().zip(zb).zip(lanes.iter_mut()) {
            *x = z / *x;
            *acc += *x * *x;
        }
    }
    let mut sum = lanes.iter().fold(Re::<T>::zero(), |s, &x| s + x);
    for (x, &z) in tail.iter_mut().zip(ztail) {
        *x = z / *x;
        sum += *x * *x;
    }
    sum.sqrt()
}

/// The root of a x² + b x + c = 0 inside (lo, hi], both computed without
/// cancellation; `None` where neither is (the caller then starts mid-bracket).
#[inline(always)]
fn root_in<T: Field>(a: Re<T>, b: Re<T>, c: Re<T>, (lo, hi): (Re<T>, Re<T>)) -> Option<Re<T>> {
    let zero = Re::<T>::zero();
    let two = Re::<T>::one() + Re::<T>::one();
    let disc = (b * b - two * two * a * c).max_real(zero).sqrt();
    // q = −(b + sign(b)·√disc)/2; the roots are q/a and c/q.
    let q = if b >= zero { -(b + disc) / two } else { (disc - b) / two };
    let inside = |x: Re<T>| x > lo && x <= hi;
    [q / a, c / q].into_iter().find(|&x| inside(x))
}

/// Accumulator lanes of the packed sums (two AVX2 registers of f64).
const LANES: usize = 8;

/// Σ w2ⱼ/δⱼ and Σ w2ⱼ/δⱼ² over δⱼ = `base`ⱼ − τ, in [`LANES`] independent
/// lanes so that the loop runs packed.
#[inline(always)]
fn sums<T: Field>(base: &[Re<T>], w2: &[Re<T>], tau: Re<T>) -> (Re<T>, Re<T>) {
    let zero = Re::<T>::zero();
    let (mut s, mut ds) = ([zero; LANES], [zero; LANES]);
    let (blocks, tail) = base.as_chunks::<LANES>();
    let (wblocks, wtail) = w2.as_chunks::<LANES>();
    for (b, wb) in blocks.iter().zip(wblocks) {
        for l in 0..LANES {
            let inv = Re::<T>::one() / (b[l] - tau);
            let t = wb[l] * inv;
            s[l] += t;
            ds[l] += t * inv;
        }
    }
    let (mut sum, mut dsum) = (s.iter().fold(zero, |a, &x| a + x), ds.iter().fold(zero, |a, &x| a + x));
    for (&b, &w) in tail.iter().zip(wtail) {
        let inv = Re::<T>::one() / (b - tau);
        let t = w * inv;
        sum += t;
        dsum += t * inv;
    }
    (sum, dsum)
}

/// Writes p − p_origin into `delta`.
#[inline(always)]
fn offsets<T: Field>(poles: Poles, d: &[Re<T>], origin: usize, delta: &mut [Re<T>]) {
    let base = d[origin];
    for (x, &dj) in delta.iter_mut().zip(d) {
        *x = poles.gap::<T>(dj, base);
    }
}

#[inline(always)]
fn secular_root_body<T: Field>(
    poles: Poles,
    i: usize,
    d: &[Re<T>],
    w2: &[Re<T>],
    delta: &mut [Re<T>],
) -> (Re<T>, bool) {
    let k = d.len();
    if k == 1 {
        // f(λ) = 1 + w2/(p − λ): λ = p + w2 exactly.
        delta[0] = -w2[0];
        return (poles.root::<T>(d[0], w2[0]), true);
    }
    let (zero, one) = (Re::<T>::zero(), Re::<T>::one());
    let two = one + one;
    let last = i + 1 == k;
    // The origin (the nearer pole), the bracket of τ = λ − p[origin], and a
    // first τ: the root of the model that keeps the one or two poles next
    // to the root exact and freezes the other terms at the bracket's middle
    // (as LAPACK's ?laed4 starts). `delta` holds p − pᵢ meanwhile.
    offsets::<T>(poles, d, i, delta);
    let (origin, lo, hi, start) = if last {
        let hi = w2.iter().fold(zero, |s, &x| s + x);
        let (rest, _) = sums::<T>(&delta[..i], &w2[..i], hi / two);
        let g = one + rest;
        // g − w2ᵢ/τ = 0.
        (i, zero, hi, (g > zero).then(|| w2[i] / g))
    } else {
        let gap = delta[i + 1];
        let half = gap / two;
        let (left, _) = sums::<T>(&delta[..i], &w2[..i], half);
        let (right, _) = sums::<T>(&delta[i + 2..], &w2[i + 2..], half);
        let g = one + left + right;
        let (wl, wr) = (w2[i], w2[i + 1]);
        if g - wl / half + wr / half >= zero {
            // Origin pᵢ, τ ∈ (0, gap/2]: g τ² − (g·gap + wl + wr) τ + wl·gap = 0.
            (i, zero, half, root_in::<T>(g, -(g * gap + wl + wr), wl * gap, (zero, half)))
        } else {
            // Origin pᵢ₊₁, τ ∈ [−gap/2, 0): g τ² + (g·gap − wl − wr) τ − wr·gap = 0.
            offsets::<T>(poles, d, i + 1, delta);
            (
                i + 1,
                -(gap - half),
                zero,
                root_in::<T>(g, g * gap - wl - wr, -(wr * gap), (-(gap - half), zero)),
            )
        }
    };
    let (mut lo, mut hi) = (lo, hi);
    let mut tau = start.filter(|&t| t.is_finite_real() && t > lo && t <= hi).unwrap_or((lo + hi) / two);
    let eps = Re::<T>::EPSILON;
    let mut converged = false;
    for _ in 0..100 {
        // ψ, ψ′ over the poles 0..=i (all terms ≤ 0) and φ, φ′ over the
        // rest (all ≥ 0), at τ.
        let (psi, dpsi) = sums::<T>(&delta[..=i], &w2[..=i], tau);
        let (phi, dphi) = sums::<T>(&delta[i + 1..], &w2[i + 1..], tau);
        let f = one + psi + phi;
        // Rounding in f: each term's, and τ's own through f′.
        let err = Re::<T>::from_f64(8.0) * (one + phi - psi) + tau.abs() * (dpsi + dphi);
        if f.abs() <= eps * err {
            converged = true;
            break;
        }
        if f > zero {
            hi = tau;
        } else {
            lo = tau;
        }
        if hi - lo <= two * eps * lo.abs().max_real(hi.abs()) {
            converged = true;
            break;
        }
        // The rational model's step η (in λ), from the poles next to the root.
        let dl = delta[i] - tau;
        let step = if last {
            // f ≈ c + s/(δ_l − η), with f and f′ matched.
            let s = dpsi * dl * dl;
            let c = f - dl * dpsi;
            if c > zero {
                dl + s / c
            } else {
                Re::<T>::MAX
            }
        } else {
            let dr = delta[i + 1] - tau;
            // f ≈ c + s_l/(δ_l − η) + s_r/(δ_r − η), with f and f′ matched
            // and the derivative split as ψ′ : φ′ (LAPACK's ?laed4).
            let (sl, sr) = (dpsi * dl * dl, dphi * dr * dr);
            let c = f - dl * dpsi - dr * dphi;
            let a = c * (dl + dr) + sl + sr;
            let b = c * dl * dr + sl * dr + sr * dl;
            let disc = (a * a - Re::<T>::from_f64(4.0) * b * c).max_real(zero).sqrt();
            if c == zero {
                b / a
            } else if a <= zero {
                (a - disc) / (two * c)
            } else {
                two * b / (a + disc)
            }
        };
        // A step away from the root (f·η ≥ 0) is replaced by Newton's.
        let step = if f * step >= zero { -f / (dpsi + dphi) } else { step };
        let next = tau + step;
        // The last root's bracket end p + Σw2 can be the root itself.
        let inside = next > lo && (next < hi || (last && next <= hi));
        tau = if step.is_finite_real() && inside { next } else { (lo + hi) / two };
    }
    for x in delta.iter_mut() {
        *x -= tau;
    }
    (poles.root::<T>(d[origin], tau), converged)
}
