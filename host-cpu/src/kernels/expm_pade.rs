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

/// θ_m for m = 3, 5, 7, 9, 13: the largest ‖A‖₁ at which r_m's backward
/// error is below 2⁻⁵³ (Higham 2005, table 2.3).
pub(super) const THETA: [f64; 5] =
    [1.495585217958292e-2, 2.53939833006323e-1, 9.504178996162932e-1, 2.097847961257068, 5.371920351148152];

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

/// dst = Σ c_k m_k (+ c_I·I).
fn combine<T: Field>(mut dst: MatMut<'_, T>, terms: &[(f64, MatRef<'_, T>)], identity: f64) {
    let n = dst.nrows();
    for j in 0..n {
        for i in 0..n {
            let mut acc = if i == j { T::from_f64(identity) } else { T::zero() };
            for (c, m) in terms {
                acc += m[(i, j)].scale(Re::<T>::from_f64(*c));
            }
            dst[(i, j)] = acc;
        }
    }
}

/// dst = a·b (+ dst with `add`).
fn mul<T: Field>(dst: MatMut<'_, T>, a: MatRef<'_, T>, b: MatRef<'_, T>, add: bool, par: Par) {
    let accum = if add { Accum::Add } else { Accum::Replace };
    matmul(dst, accum, a, b, T::one(), par);
}

/// Degree 13's W₁ = b₁₃X⁶ + b₁₁X⁴ + b₉X² and Z₁ = b₁₂X⁶ + b₁₀X⁴ + b₈X².
fn w1_z1<T: Field>(p: [MatRef<'_, T>; 3], mut w1: MatMut<'_, T>, mut z1: MatMut<'_, T>) {
    let b = B13;
    combine(w1.rb_mut(), &[(b[13], p[2]), (b[11], p[1]), (b[9], p[0])], 0.0);
    combine(z1.rb_mut(), &[(b[12], p[2]), (b[10], p[1]), (b[8], p[0])], 0.0);
}

/// U and V at `x` for `degree` (an index: 0…3 the low degrees, 4 for 13),
/// with the terms written into `terms`; two temporaries from `pool` for
/// degree 13.
pub(super) fn values<T: Field>(
    degree: usize,
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
        for k in 0..half - 1 {
            let (done, rest) = pows.split_at_mut(k);
            match k {
                0 => mul(rest[0].rb_mut(), x, x, false, par),
                // x^{2(k+1)} = x^{2k}·x².
                _ => mul(rest[0].rb_mut(), done[k - 1].rb(), done[0].rb(), false, par),
            }
        }
        let odd: heapless::Vec<(f64, MatRef<'_, T>), 4> =
            (1..half).map(|k| (b[2 * k + 1], pows[k - 1].rb())).collect();
        let even: heapless::Vec<(f64, MatRef<'_, T>), 4> =
            (1..half).map(|k| (b[2 * k], pows[k - 1].rb())).collect();
        combine(terms.w.rb_mut(), &odd, b[1]);
        combine(v.rb_mut(), &even, b[0]);
    } else {
        // Higham's grouping: U = x(x⁶W₁ + W₂), V = x⁶Z₁ + Z₂.
        let b = B13;
        let [x2, x4, x6, _] = pows;
        mul(x2.rb_mut(), x, x, false, par);
        mul(x4.rb_mut(), (*x2).rb(), (*x2).rb(), false, par);
        mul(x6.rb_mut(), (*x2).rb(), (*x4).rb(), false, par);
        let (p2, p4, p6) = ((*x2).rb(), (*x4).rb(), (*x6).rb());
        let (mut w1, mut z1) = (pool.take(), pool.take());
        w1_z1([p2, p4, p6], w1.rb_mut(), z1.rb_mut());
        combine(terms.w.rb_mut(), &[(b[7], p6), (b[5], p4), (b[3], p2)], b[1]);
        combine(v.rb_mut(), &[(b[6], p6), (b[4], p4), (b[2], p2)], b[0]);
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
        let odd: heapless::Vec<(f64, MatRef<'_, T>), 4> =
            (1..half).map(|k| (b[2 * k + 1], ders[k - 1].rb())).collect();
        let even: heapless::Vec<(f64, MatRef<'_, T>), 4> =
            (1..half).map(|k| (b[2 * k], ders[k - 1].rb())).collect();
        // L_U = x·L_{U0} + e·U0, L_{U0} formed in lv before L_V is.
        combine(lv.rb_mut(), &odd, 0.0);
        mul(lu.rb_mut(), x, lv.rb(), false, par);
        mul(lu.rb_mut(), e, w, true, par);
        combine(lv.rb_mut(), &even, 0.0);
        return;
    }
    let b = B13;
    let (p2, p4, p6) = (pows[0], pows[1], pows[2]);
    let (mut w1, mut z1) = (pool.take(), pool.take());
    w1_z1([p2, p4, p6], w1.rb_mut(), z1.rb_mut());
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
    combine(lw1.rb_mut(), &[(b[13], d6), (b[11], d4), (b[9], d2)], 0.0);
    combine(lw.rb_mut(), &[(b[7], d6), (b[5], d4), (b[3], d2)], 0.0);
    mul(lw.rb_mut(), p6, lw1.rb(), true, par);
    mul(lw.rb_mut(), d6, w1.rb(), true, par);
    mul(lu.rb_mut(), x, lw.rb(), false, par);
    mul(lu.rb_mut(), e, w, true, par);
    combine(lw1.rb_mut(), &[(b[12], d6), (b[10], d4), (b[8], d2)], 0.0);
    combine(lv.rb_mut(), &[(b[6], d6), (b[4], d4), (b[2], d2)], 0.0);
    mul(lv.rb_mut(), p6, lw1.rb(), true, par);
    mul(lv.rb_mut(), d6, z1.rb(), true, par);
}
