//! The Padé sums of the matrix exponential's scaling and squaring
//! (docs/ad-rules.md#matrix-exponential): r_m(X) = (V − U)⁻¹(V + U) with U
//! the odd and V the even part of p_m, and their Fréchet derivatives L_U,
//! L_V in a direction E (Al-Mohy and Higham 2009, algorithm 6.4: every
//! power X^{2k} replaced by its derivative M_{2k}, M₂ = XE + EX,
//! M₄ = X²M₂ + M₂X², …).
//!
//! The two halves are separate so that the derivative can run from terms
//! the forward kept ([`Terms`]: the even powers and W, U = X·W).

use super::pool::Pool;
use crate::field::Field;
use crate::gemm::matmul;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use lindiff_core::Scalar;

type Re<T> = <T as Scalar>::Real;

/// The Padé coefficients b_0 … b_m of r_m, for m = 3, 5, 7, 9, 13.
const B3: &[f64] = &[120.0, 60.0, 12.0, 1.0];
const B5: &[f64] = &[30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0];
const B7: &[f64] = &[17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0];
const B9: &[f64] = &[
    17643225600.0,
    8821612800.0,
    2075673600.0,
    302702400.0,
    30270240.0,
    2162160.0,
    110880.0,
    3960.0,
    90.0,
    1.0,
];
pub(super) const B13: &[f64] = &[
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
];

/// The low degrees with their coefficients.
pub(super) const LOW: [&[f64]; 4] = [B3, B5, B7, B9];

/// θ_m for m = 3, 5, 7, 9, 13: the largest d_k-based η at which r_m's
/// backward error is below 2⁻⁵³ (Al-Mohy and Higham 2009, table 3.1; θ₁₃
/// is smaller than Higham 2005's 5.37, which bounded ‖A‖₁).
pub(super) const THETA: [f64; 5] =
    [1.495585217958292e-2, 2.53939833006323e-1, 9.504178996162932e-1, 2.097847961257068, 4.25];

/// ℓ_m for m = 3, 5, 7, 9, 13: the same bound for the Fréchet derivative of
/// r_m (Al-Mohy and Higham 2009, table 6.1).
pub(super) const ELL: [f64; 5] = [1.08e-2, 2.00e-1, 7.83e-1, 1.78, 4.74];

/// The forward's terms at X: `pows` = X², X⁴, X⁶, X⁸ (those the degree
/// uses) and `w` with U = X·W: U₀ = Σ b_{2k+1} X^{2k} for degrees 3…9,
/// W = X⁶W₁ + W₂ for degree 13.
pub(super) struct Terms<'a, T> {
    pub(super) pows: [MatMut<'a, T>; 4],
    pub(super) w: MatMut<'a, T>,
}

/// dst_k = Σ_t coefs[k][t]·mats[t] (+ identity[k]·I) for each of the K
/// outputs, a column at a time. Contiguous columns (the pool's and the
/// outputs' always are) go through [`sum_into`] on slices, which the
/// compiler vectorises; others are indexed.
fn combine<T: Field, const K: usize>(
    mut dsts: [MatMut<'_, T>; K],
    mats: &[MatRef<'_, T>],
    coefs: [&[f64]; K],
    identity: [f64; K],
) {
    let n = mats.first().map_or(0, |m| m.nrows());
    let coefs = coefs.map(|c| c.iter().map(|&c| Re::<T>::from_f64(c)).collect::<heapless::Vec<Re<T>, 4>>());
    for j in 0..n {
        let columns: heapless::Vec<&[T], 4> =
            mats.iter().filter_map(|m| m.col(j).try_as_col_major().map(|c| c.as_slice())).collect();
        for ((dst, c), &id) in dsts.iter_mut().zip(&coefs).zip(&identity) {
            let mut col = dst.rb_mut().col_mut(j);
            match col.rb_mut().try_as_col_major_mut() {
                Some(d) if columns.len() == mats.len() => sum_into(d.as_slice_mut(), &columns, c),
                _ => {
                    for i in 0..n {
                        col[i] = mats.iter().zip(c).fold(T::zero(), |acc, (m, &c)| acc + m[(i, j)].scale(c));
                    }
                }
            }
            col[j] += T::from_f64(id);
        }
    }
}

/// d = Σ_t c[t]·m[t] entrywise: one pass (each entry written once) for up
/// to four terms, which is every sum the Padé degrees form (degree 13 has
/// three, degree 9 four); a longer sum adds its fifth and later terms in
/// further passes.
fn sum_into<T: Field>(d: &mut [T], m: &[&[T]], c: &[Re<T>]) {
    let at = |t: usize| (m[t], c[t]);
    match m.len() {
        0 => d.fill(T::zero()),
        1 => {
            let (m0, c0) = at(0);
            d.iter_mut().zip(m0).for_each(|(x, &a)| *x = a.scale(c0));
        }
        2 => {
            let ((m0, c0), (m1, c1)) = (at(0), at(1));
            d.iter_mut().zip(m0).zip(m1).for_each(|((x, &a), &b)| *x = a.scale(c0) + b.scale(c1));
        }
        3 => {
            let ((m0, c0), (m1, c1), (m2, c2)) = (at(0), at(1), at(2));
            for (((x, &a), &b), &e) in d.iter_mut().zip(m0).zip(m1).zip(m2) {
                *x = a.scale(c0) + b.scale(c1) + e.scale(c2);
            }
        }
        _ => {
            let ((m0, c0), (m1, c1), (m2, c2), (m3, c3)) = (at(0), at(1), at(2), at(3));
            for ((((x, &a), &b), &e), &f) in d.iter_mut().zip(m0).zip(m1).zip(m2).zip(m3) {
                *x = a.scale(c0) + b.scale(c1) + e.scale(c2) + f.scale(c3);
            }
            for (m, &c) in m[4..].iter().zip(&c[4..]) {
                d.iter_mut().zip(*m).for_each(|(x, &y)| *x += y.scale(c));
            }
        }
    }
}

/// A low degree's coefficients of x², x⁴, … in W (odd: b₃, b₅, …) and V
/// (even: b₂, b₄, …); `half − 1` of each.
fn odd_even(b: &[f64], half: usize) -> (heapless::Vec<f64, 4>, heapless::Vec<f64, 4>) {
    ((1..half).map(|k| b[2 * k + 1]).collect(), (1..half).map(|k| b[2 * k]).collect())
}

/// dst = a·b (+ dst with `add`).
fn mul<T: Field>(dst: MatMut<'_, T>, a: MatRef<'_, T>, b: MatRef<'_, T>, add: bool, par: Par) {
    let accum = if add { Accum::Add } else { Accum::Replace };
    matmul(dst, accum, a, b, T::one(), par);
}

/// Degree 13's coefficients of (X⁶, X⁴, X²) in W₁, Z₁, W₂ and Z₂ (and in
/// their derivatives, of (M₆, M₄, M₂)): Higham's grouping U = x(x⁶W₁ + W₂),
/// V = x⁶Z₁ + Z₂.
const W1: [f64; 3] = [B13[13], B13[11], B13[9]];
const Z1: [f64; 3] = [B13[12], B13[10], B13[8]];
const W2: [f64; 3] = [B13[7], B13[5], B13[3]];
const Z2: [f64; 3] = [B13[6], B13[4], B13[2]];

/// U and V at `x` for `degree` (an index: 0…3 the low degrees, 4 for 13),
/// with the terms written into `terms`, whose first `formed` powers
/// (x², x⁴, …) are already there; two temporaries from `pool` for degree 13.
#[allow(clippy::too_many_arguments)]
pub(super) fn values<T: Field>(
    degree: usize,
    formed: usize,
    x: MatRef<'_, T>,
    terms: &mut Terms<'_, T>,
    mut u: MatMut<'_, T>,
    mut v: MatMut<'_, T>,
    pool: &mut Pool<'_, T>,
    par: Par,
) {
    let pows = &mut terms.pows;
    if degree < 4 {
        let b = LOW[degree];
        let half = b.len() / 2; // powers x^0 … x^{2(half−1)}
        for k in formed..half - 1 {
            let (done, rest) = pows.split_at_mut(k);
            match k {
                0 => mul(rest[0].rb_mut(), x, x, false, par),
                // x^{2(k+1)} = x^{2k}·x².
                _ => mul(rest[0].rb_mut(), done[k - 1].rb(), done[0].rb(), false, par),
            }
        }
        let (odd, even) = odd_even(b, half);
        let mats: heapless::Vec<MatRef<'_, T>, 4> = pows[..half - 1].iter().map(|p| p.rb()).collect();
        combine([terms.w.rb_mut(), v.rb_mut()], &mats, [&odd, &even], [b[1], b[0]]);
    } else {
        let b = B13;
        let [x2, x4, x6, _] = pows;
        if formed < 1 {
            mul(x2.rb_mut(), x, x, false, par);
        }
        if formed < 2 {
            mul(x4.rb_mut(), (*x2).rb(), (*x2).rb(), false, par);
        }
        if formed < 3 {
            mul(x6.rb_mut(), (*x4).rb(), (*x2).rb(), false, par);
        }
        let (p2, p4, p6) = ((*x2).rb(), (*x4).rb(), (*x6).rb());
        let (mut w1, mut z1) = (pool.take(), pool.take());
        let dsts = [w1.rb_mut(), z1.rb_mut(), terms.w.rb_mut(), v.rb_mut()];
        combine(dsts, &[p6, p4, p2], [&W1, &Z1, &W2, &Z2], [0.0, 0.0, b[1], b[0]]);
        mul(terms.w.rb_mut(), p6, w1.rb(), true, par); // W = x⁶W₁ + W₂
        mul(v.rb_mut(), p6, z1.rb(), true, par); // V = x⁶Z₁ + Z₂
    }
    mul(u.rb_mut(), x, terms.w.rb(), false, par);
}

/// L_U and L_V at `x` in the direction `e` from the forward's `pows` and
/// `w`; temporaries from `pool`: four for the low degrees, seven for 13.
#[allow(clippy::too_many_arguments)]
pub(super) fn derivatives<T: Field>(
    degree: usize,
    x: MatRef<'_, T>,
    e: MatRef<'_, T>,
    pows: [MatRef<'_, T>; 4],
    w: MatRef<'_, T>,
    mut lu: MatMut<'_, T>,
    mut lv: MatMut<'_, T>,
    pool: &mut Pool<'_, T>,
    par: Par,
) {
    if degree < 4 {
        let b = LOW[degree];
        let half = b.len() / 2;
        // ders[k] = d x^{2(k+1)}, by the product rule.
        let mut ders: [MatMut<'_, T>; 4] = core::array::from_fn(|_| pool.take());
        for k in 0..half - 1 {
            let (dders, rders) = ders.split_at_mut(k);
            match k {
                0 => {
                    mul(rders[0].rb_mut(), x, e, false, par);
                    mul(rders[0].rb_mut(), e, x, true, par);
                }
                _ => {
                    mul(rders[0].rb_mut(), pows[k - 1], dders[0].rb(), false, par);
                    mul(rders[0].rb_mut(), dders[k - 1].rb(), pows[0], true, par);
                }
            }
        }
        let (odd, even) = odd_even(b, half);
        let mats: heapless::Vec<MatRef<'_, T>, 4> = ders[..half - 1].iter().map(|d| d.rb()).collect();
        // L_U = x·L_{U0} + e·U0, L_{U0} formed in lv before L_V is.
        combine([lv.rb_mut()], &mats, [&odd], [0.0]);
        mul(lu.rb_mut(), x, lv.rb(), false, par);
        mul(lu.rb_mut(), e, w, true, par);
        combine([lv.rb_mut()], &mats, [&even], [0.0]);
        return;
    }
    let (p2, p4, p6) = (pows[0], pows[1], pows[2]);
    let (mut w1, mut z1) = (pool.take(), pool.take());
    combine([w1.rb_mut(), z1.rb_mut()], &[p6, p4, p2], [&W1, &Z1], [0.0; 2]);
    let (mut m2, mut m4, mut m6) = (pool.take(), pool.take(), pool.take());
    mul(m2.rb_mut(), x, e, false, par);
    mul(m2.rb_mut(), e, x, true, par);
    mul(m4.rb_mut(), p2, m2.rb(), false, par);
    mul(m4.rb_mut(), m2.rb(), p2, true, par);
    mul(m6.rb_mut(), p4, m2.rb(), false, par);
    mul(m6.rb_mut(), m4.rb(), p2, true, par);
    let (d2, d4, d6) = (m2.rb(), m4.rb(), m6.rb());
    // L_W = x⁶L_{W₁} + M₆W₁ + L_{W₂}; L_U = x·L_W + e·W; L_V = x⁶L_{Z₁} + M₆Z₁ + L_{Z₂}.
    let (mut lw1, mut lw) = (pool.take(), pool.take());
    combine([lw1.rb_mut(), lw.rb_mut()], &[d6, d4, d2], [&W1, &W2], [0.0; 2]);
    mul(lw.rb_mut(), p6, lw1.rb(), true, par);
    mul(lw.rb_mut(), d6, w1.rb(), true, par);
    mul(lu.rb_mut(), x, lw.rb(), false, par);
    mul(lu.rb_mut(), e, w, true, par);
    combine([lw1.rb_mut(), lv.rb_mut()], &[d6, d4, d2], [&Z1, &Z2], [0.0; 2]);
    mul(lv.rb_mut(), p6, lw1.rb(), true, par);
    mul(lv.rb_mut(), d6, z1.rb(), true, par);
}
