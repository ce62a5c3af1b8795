//! The complex Schur decomposition A = Q T Qᴴ (T upper triangular, Q
//! unitary) that `logm` and `sqrtm` work on: a Householder reduction to
//! Hessenberg form, then the single-shift QR algorithm with Givens
//! rotations (Golub and Van Loan, *Matrix Computations*, §7.4–7.5):
//! Wilkinson shifts, an exceptional shift every tenth sweep on one
//! eigenvalue, deflation where |t_{l,l−1}| ≤ ε(|t_{l−1,l−1}| + |t_{ll}|)
//! (in |re| + |im|), at most 30·max(n, 10) sweeps in all before
//! `NonConvergence`. A is scaled by a power of two first, so that the
//! squares the reflections and shifts form stay in range. faer 0.24 does
//! not export its own Schur form.
//!
//! Unblocked, O(n³) with a constant of about 10 (a blocked multishift QR
//! would be several times faster at large n); no scratch beyond `t` and
//! `q` and a Householder vector of length n.

use super::scaling::{max_abs_mat, Range, Scaling};
use crate::batch::Failure;
use crate::field::Field;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::MatMut;
use lindiff_core::{RealScalar, Scalar};

type Re<C> = <C as Scalar>::Real;

/// |re| + |im|: the size LAPACK's deflation test uses.
fn abs1<C: Field>(x: C) -> Re<C> {
    Scalar::abs(Scalar::re(x)) + Scalar::abs(Scalar::im(x))
}

/// Overwrites `t` (n×n, holding A) with T and `q` (n×n, any contents)
/// with Q, so that A = Q T Qᴴ. `v` is scratch of length n. `C` must be a
/// complex type: a real one has no complex shifts, and would not converge
/// on complex eigenvalues.
///
/// # Errors
/// `NonConvergence` when the QR sweeps run out.
pub(crate) fn schur<C: Field>(
    mut t: MatMut<'_, C>,
    mut q: MatMut<'_, C>,
    v: &mut [C],
) -> Result<(), Failure> {
    let n = t.nrows();
    // The reflections and the shift square entries: run on A·2^e with its
    // largest entry where squares neither underflow nor overflow, and
    // scale T back (exact; Q is the same).
    let largest = max_abs_mat(t.rb()).ok_or(Failure::NonFinite("a"))?;
    let scaling = Scaling::of_max(largest, Range::Squares);
    scaling.apply_mat(t.rb_mut());
    for j in 0..n {
        for i in 0..n {
            q[(i, j)] = if i == j { C::one() } else { C::zero() };
        }
    }
    hessenberg(t.rb_mut(), q.rb_mut(), v);
    qr_sweeps(t.rb_mut(), q.rb_mut())?;
    for j in 0..n {
        for i in j + 1..n {
            t[(i, j)] = C::zero();
        }
    }
    scaling.undo_mat(t.rb_mut());
    Ok(())
}

/// Householder reduction to upper Hessenberg form, accumulated into `q`.
fn hessenberg<C: Field>(mut t: MatMut<'_, C>, mut q: MatMut<'_, C>, v: &mut [C]) {
    let n = t.nrows();
    for k in 0..n.saturating_sub(2) {
        let len = n - k - 1;
        let norm2 = (0..len).fold(Re::<C>::zero(), |s, i| s + t[(k + 1 + i, k)].abs2());
        if norm2 == Re::<C>::zero() {
            continue;
        }
        let alpha = norm2.sqrt();
        let x0 = t[(k + 1, k)];
        let phase = if x0.abs() == Re::<C>::zero() { C::one() } else { x0.scale(Re::<C>::one() / x0.abs()) };
        // v = x + phase·α·e₁, H = I − 2vvᴴ/(vᴴv): H x = −phase·α·e₁.
        for i in 0..len {
            v[i] = t[(k + 1 + i, k)];
        }
        v[0] = x0 + phase.scale(alpha);
        let vv = (0..len).fold(Re::<C>::zero(), |s, i| s + v[i].abs2());
        let beta = Re::<C>::from_f64(2.0) / vv;
        // Left: rows k+1.. of columns k.. (column k becomes −phase·α·e₁).
        for j in k + 1..n {
            let s = (0..len).fold(C::zero(), |s, i| s + v[i].conj() * t[(k + 1 + i, j)]).scale(beta);
            for i in 0..len {
                t[(k + 1 + i, j)] -= v[i] * s;
            }
        }
        t[(k + 1, k)] = -phase.scale(alpha);
        for i in 1..len {
            t[(k + 1 + i, k)] = C::zero();
        }
        // Right: columns k+1.. of every row, and of Q.
        reflect_columns(t.rb_mut(), k + 1, &v[..len], beta);
        reflect_columns(q.rb_mut(), k + 1, &v[..len], beta);
    }
}

/// m ← m·H on columns `first..`, H = I − β v vᴴ.
fn reflect_columns<C: Field>(mut m: MatMut<'_, C>, first: usize, v: &[C], beta: Re<C>) {
    for i in 0..m.nrows() {
        let s = v.iter().enumerate().fold(C::zero(), |s, (l, &vl)| s + m[(i, first + l)] * vl).scale(beta);
        for (l, &vl) in v.iter().enumerate() {
            m[(i, first + l)] -= s * vl.conj();
        }
    }
}

/// Rows `..rows` of columns k, k+1 of m ← m·Gᴴ, G = [[c, s], [−s̄, c]].
fn rotate_columns<C: Field>(mut m: MatMut<'_, C>, k: usize, rows: usize, c: Re<C>, s: C) {
    let sc = s.conj();
    for row in 0..rows {
        let (a, b) = (m[(row, k)], m[(row, k + 1)]);
        m[(row, k)] = a.scale(c) + b * sc;
        m[(row, k + 1)] = b.scale(c) - a * s;
    }
}

/// The rotation G = [[c, s], [−s̄, c]] (c real) with G·[x; y] = [ρ; 0].
fn givens<C: Field>(x: C, y: C) -> (Re<C>, C) {
    let (ax, ay) = (x.abs(), y.abs());
    if ay == Re::<C>::zero() {
        return (Re::<C>::one(), C::zero());
    }
    if ax == Re::<C>::zero() {
        return (Re::<C>::zero(), y.conj().scale(Re::<C>::one() / ay));
    }
    let r = ax.hypot(ay);
    let phase = x.scale(Re::<C>::one() / ax);
    (ax / r, (phase * y.conj()).scale(Re::<C>::one() / r))
}

/// The eigenvalue of [[a, b], [c, d]] nearer to d (the Wilkinson shift).
fn wilkinson<C: Field>(a: C, b: C, c: C, d: C) -> C {
    let half = Re::<C>::from_f64(0.5);
    let p = (a - d).scale(half);
    let bc = b * c;
    let disc = (p * p + bc).sqrt();
    // d + p ∓ disc, the root nearer d, as d − bc/(p ± disc) without cancellation.
    let (plus, minus) = (p + disc, p - disc);
    let den = if plus.abs() >= minus.abs() { plus } else { minus };
    if den.abs() == Re::<C>::zero() {
        d
    } else {
        d - bc * (C::one() / den)
    }
}

/// Shifted QR sweeps on the Hessenberg `t` until it is triangular, with the
/// rotations accumulated into `q`.
fn qr_sweeps<C: Field>(mut t: MatMut<'_, C>, mut q: MatMut<'_, C>) -> Result<(), Failure> {
    let n = t.nrows();
    let eps = Re::<C>::EPSILON;
    let mut budget = 30 * n.max(10);
    let mut hi = n; // the active block is lo..hi
    let mut stalled = 0usize;
    while hi > 1 {
        let mut lo = hi - 1;
        while lo > 0 {
            let sub = abs1(t[(lo, lo - 1)]);
            let diag = abs1(t[(lo, lo)]) + abs1(t[(lo - 1, lo - 1)]);
            if sub <= eps * diag || sub < Re::<C>::MIN_POSITIVE {
                t[(lo, lo - 1)] = C::zero();
                break;
            }
            lo -= 1;
        }
        if lo == hi - 1 {
            hi -= 1;
            stalled = 0;
            continue;
        }
        if budget == 0 {
            return Err(Failure::NonConvergence);
        }
        budget -= 1;
        stalled += 1;
        let (i, j) = (hi - 2, hi - 1);
        let shift = if stalled.is_multiple_of(10) {
            // An exceptional shift breaks a cycle (LAPACK's zlahqr; |re| + |im|,
            // since the subdiagonal is complex here, unlike zlahqr's).
            t[(j, j)] + C::from_real(abs1(t[(j, i)]).scale(Re::<C>::from_f64(0.75)))
        } else {
            wilkinson(t[(i, i)], t[(i, j)], t[(j, i)], t[(j, j)])
        };
        let (mut x, mut y) = (t[(lo, lo)] - shift, t[(lo + 1, lo)]);
        for k in lo..hi - 1 {
            let (c, s) = givens(x, y);
            let sc = s.conj();
            let first = if k > lo { k - 1 } else { k };
            for col in first..n {
                let (a, b) = (t[(k, col)], t[(k + 1, col)]);
                t[(k, col)] = a.scale(c) + s * b;
                t[(k + 1, col)] = b.scale(c) - sc * a;
            }
            if k > lo {
                t[(k + 1, k - 1)] = C::zero();
            }
            rotate_columns(t.rb_mut(), k, (k + 3).min(hi), c, s);
            rotate_columns(q.rb_mut(), k, n, c, s);
            if k + 2 < hi {
                x = t[(k + 1, k)];
                y = t[(k + 2, k)];
            }
        }
    }
    Ok(())
}
