//! The matrix exponential (`Expm`) and its Fréchet derivative
//! (`ExpmFrechet`), by scaling and squaring with a diagonal Padé approximant
//! r_m = q_m⁻¹ p_m, m ∈ {3, 5, 7, 9, 13} (docs/ad-rules.md#matrix-exponential).
//!
//! * Degree and scaling: the smallest m with ‖A‖₁ ≤ θ_m, else m = 13 and
//!   A/2^s with s = ⌈log₂(‖A‖₁/θ₁₃)⌉ (Higham 2005, the double-precision
//!   θ_m; f32 uses the same, a little more work than it needs). The
//!   refinement of Al-Mohy and Higham 2009 by ‖A^k‖^{1/k}, which scales
//!   some non-normal matrices less, is not done.
//! * r_m(X) = (V − U)⁻¹(V + U) with U the odd and V the even part of p_m,
//!   then s squarings.
//! * The Fréchet derivative L(X, E) (Al-Mohy and Higham 2009, algorithm
//!   6.4): the same sums with every power X^{2k} replaced by its derivative
//!   M_{2k} (M₂ = XE + EX, M₄ = X²M₂ + M₂X², …), L_r = (V − U)⁻¹(L_U + L_V +
//!   (L_U − L_V) r), and through each squaring L ← rL + Lr, r ← r². Its
//!   thresholds are ℓ_m (the paper's table 6.1, smaller than θ_m), so that
//!   the derivative of the approximant is as accurate as the approximant.
//! * Errors: NaN/∞ in `a` or `e` → `NonFinite` naming it; a result that
//!   overflows → `NonFinite` naming the output.
//!
//! Scratch: up to 19 n×n matrices (15 for expm), the LU's permutations and
//! faer's.

use super::lu::{carve_perms, factor, factor_scratch};
use super::pool::Pool;
use super::scaling::{exponent, max_abs_mat, scale_mat, Scaling};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::solve::{solve_in_place_scratch, solve_in_place_with_conj};
use faer::linalg::matmul::matmul;
use faer::perm::PermRef;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Conj, MatMut, MatRef, Par};
use lindiff_core::op::{Expm, ExpmFrechet, MatOp};
use lindiff_core::{RealScalar, Scalar};

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
const B13: &[f64] = &[
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
const LOW: [&[f64]; 4] = [B3, B5, B7, B9];

/// θ_m for m = 3, 5, 7, 9, 13: the largest ‖A‖₁ at which r_m's backward
/// error is below 2⁻⁵³ (Higham 2005, table 2.3).
const THETA: [f64; 5] =
    [1.495585217958292e-2, 2.53939833006323e-1, 9.504178996162932e-1, 2.097847961257068, 5.371920351148152];

/// ℓ_m for m = 3, 5, 7, 9, 13: the same bound for the Fréchet derivative of
/// r_m (Al-Mohy and Higham 2009, table 6.1).
const ELL: [f64; 5] = [1.08e-2, 2.00e-1, 7.83e-1, 1.78, 4.74];

/// How many n×n temporaries each op takes from its pool: expm's x, U, V,
/// L_U, L_V, the factored q and the Padé sums' (at most 9); expm_frechet's
/// also e and r, and degree 13's derivative terms.
const EXPM_TEMPS: usize = 15;
const FRECHET_TEMPS: usize = 19;

fn scratch<T: Field>(n: usize, temps: usize, par: Par) -> StackReq {
    if n == 0 {
        return StackReq::EMPTY;
    }
    StackReq::all_of(&[
        StackReq::new::<T>(temps * n * n),
        factor_scratch::<T>(n, n, par),
        solve_in_place_scratch::<usize, T>(n, n, par),
    ])
}

impl<T: Field> Kernel<T> for Expm {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, EXPM_TEMPS, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        if n == 0 {
            return Ok(());
        }
        let (degree, s) = degree_and_scaling(a, &THETA, "a")?;
        let (mut block, stack) = stack.make_with(EXPM_TEMPS * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        let mut x = pool.take();
        x.copy_from(a);
        scale_mat(x.rb_mut(), -s);
        let mut out = item.out_mat::<T>(0);
        exp_and_derivative::<T>(x.rb(), None, degree, s, out.rb_mut(), None, &mut pool, par, stack);
        finite(out.rb(), "ea")
    }
}

impl<T: Field> Kernel<T> for ExpmFrechet {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, FRECHET_TEMPS, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (a, e) = (item.mat::<T>(0), item.mat::<T>(1));
        let n = a.nrows();
        if n == 0 {
            return Ok(());
        }
        let e_max = max_abs_mat(e).ok_or(Failure::NonFinite("e"))?;
        let (mut block, stack) = stack.make_with(FRECHET_TEMPS * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        let mut x = pool.take();
        match self.0 {
            MatOp::Identity => x.copy_from(a),
            MatOp::Transpose => x.copy_from(a.transpose()),
            MatOp::Adjoint => x.copy_from(a.adjoint()),
        }
        // The norm of op(a), not of a: the flags give the same bits as an
        // explicitly transposed input.
        let (degree, s) = degree_and_scaling(x.rb(), &ELL, "a")?;
        let mut out = item.out_mat::<T>(0);
        if e_max == Re::<T>::zero() {
            // L(A, 0) = 0, also where e^A overflows.
            out.fill(T::zero());
            return Ok(());
        }
        scale_mat(x.rb_mut(), -s);
        // L is linear in e: run it on e·2^-k with max|e·2^-k| in [1, 2) and
        // scale the result back, so a tiny or huge e loses nothing to the
        // 2^-s of the squarings.
        let k = exponent(e_max);
        let mut es = pool.take();
        es.copy_from(e);
        scale_mat(es.rb_mut(), -k - s);
        let mut r = pool.take();
        let l = Some(out.rb_mut());
        exp_and_derivative::<T>(x.rb(), Some(es.rb()), degree, s, r.rb_mut(), l, &mut pool, par, stack);
        scale_mat(out.rb_mut(), k);
        finite(out.rb(), "l")
    }
}

/// `Err(NonFinite(arg))` unless every entry of `m` is finite.
fn finite<T: Field>(m: MatRef<'_, T>, arg: &'static str) -> Result<(), Failure> {
    max_abs_mat(m).map(|_| ()).ok_or(Failure::NonFinite(arg))
}

/// The Padé degree (an index into `thresholds`: 0…3 the low degrees, 4 for
/// 13) and the number of squarings s for `a`, from ‖a‖₁. The norm is formed
/// relative to the largest entry, so it does not overflow before s is known.
fn degree_and_scaling<T: Field>(
    a: MatRef<'_, T>,
    thresholds: &[f64; 5],
    arg: &'static str,
) -> Result<(usize, i32), Failure> {
    let largest = max_abs_mat(a).ok_or(Failure::NonFinite(arg))?.to_f64();
    if largest == 0.0 {
        return Ok((0, 0));
    }
    // ‖a‖₁ = largest · (the largest column sum of |a|/largest), which is ≤ 2n.
    let relative = (0..a.ncols())
        .map(|j| a.col(j).iter().map(|&x| Scalar::abs(x).to_f64() / largest).sum::<f64>())
        .fold(0.0, f64::max);
    let norm = largest * relative;
    if let Some(degree) = thresholds[..4].iter().position(|&theta| norm <= theta) {
        return Ok((degree, 0));
    }
    // s = ⌈log₂(‖a‖₁/θ₁₃)⌉ through RealScalar's ln: core's f64 has no log2
    // or ceil without std.
    let ln = <f64 as RealScalar>::ln;
    let excess = (ln(largest) + ln(relative) - ln(thresholds[4])) / core::f64::consts::LN_2;
    let whole = excess as i32;
    let s = if f64::from(whole) < excess { whole + 1 } else { whole };
    Ok((4, s.max(0)))
}

/// r_m(x) squared `s` times into `r`; with `e`, also L(x, e) squared along
/// into `l` (x and e already scaled by 2^-s).
#[allow(clippy::too_many_arguments)]
fn exp_and_derivative<T: Field>(
    x: MatRef<'_, T>,
    e: Option<MatRef<'_, T>>,
    degree: usize,
    s: i32,
    mut r: MatMut<'_, T>,
    mut l: Option<MatMut<'_, T>>,
    pool: &mut Pool<'_, T>,
    par: Par,
    stack: &mut MemStack,
) {
    let n = x.nrows();
    let (mut u, mut v) = (pool.take(), pool.take());
    let (mut lu_, mut lv) = (pool.take(), pool.take());
    let mut q = pool.take();
    let with = Pade { x, e: if l.is_some() { e } else { None }, par };
    if degree < 4 {
        with.low(LOW[degree], u.rb_mut(), v.rb_mut(), lu_.rb_mut(), lv.rb_mut(), pool);
    } else {
        with.thirteen(u.rb_mut(), v.rb_mut(), lu_.rb_mut(), lv.rb_mut(), pool);
    }
    // q = V − U (factored in place of V), p = V + U (into U).
    for j in 0..n {
        for i in 0..n {
            let (ui, vi) = (u[(i, j)], v[(i, j)]);
            u[(i, j)] = vi + ui;
            v[(i, j)] = vi - ui;
        }
    }
    let (mut fwd, mut inv, stack) = carve_perms(stack, n);
    factor(v.rb(), q.rb_mut(), &mut fwd, &mut inv, Scaling::NONE, par, stack);
    // SAFETY: `factor` wrote `fwd` as a permutation of 0..n and `inv` as its inverse.
    let perm = unsafe { PermRef::new_unchecked(&fwd, &inv, n) };
    r.copy_from(u.rb());
    solve_in_place_with_conj(q.rb(), q.rb(), perm, Conj::No, r.rb_mut(), par, stack);
    if let Some(l) = l.as_mut() {
        // L_r = q⁻¹(L_U + L_V + (L_U − L_V) r).
        for j in 0..n {
            for i in 0..n {
                let (a, b) = (lu_[(i, j)], lv[(i, j)]);
                l[(i, j)] = a + b;
                lu_[(i, j)] = a - b;
            }
        }
        matmul(l.rb_mut(), Accum::Add, lu_.rb(), r.rb(), T::one(), par);
        solve_in_place_with_conj(q.rb(), q.rb(), perm, Conj::No, l.rb_mut(), par, stack);
    }
    // Squaring: r ← r², L ← rL + Lr (u and v are free now).
    for _ in 0..s {
        if let Some(l) = l.as_mut() {
            matmul(u.rb_mut(), Accum::Replace, r.rb(), l.rb(), T::one(), par);
            matmul(u.rb_mut(), Accum::Add, l.rb(), r.rb(), T::one(), par);
            l.copy_from(u.rb());
        }
        matmul(v.rb_mut(), Accum::Replace, r.rb(), r.rb(), T::one(), par);
        r.copy_from(v.rb());
    }
}

/// The Padé sums U, V (and with `e`, their derivatives L_U, L_V) at `x`.
struct Pade<'a, T: Field> {
    x: MatRef<'a, T>,
    e: Option<MatRef<'a, T>>,
    par: Par,
}

impl<T: Field> Pade<'_, T> {
    /// dst = Σ c_k m_k (+ c_I·I).
    fn combine(mut dst: MatMut<'_, T>, terms: &[(f64, MatRef<'_, T>)], identity: f64) {
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
    fn mul(&self, dst: MatMut<'_, T>, a: MatRef<'_, T>, b: MatRef<'_, T>, add: bool) {
        let accum = if add { Accum::Add } else { Accum::Replace };
        matmul(dst, accum, a, b, T::one(), self.par);
    }

    /// Degrees 3…9: U = x Σ b_{2k+1} x^{2k}, V = Σ b_{2k} x^{2k}.
    fn low(
        &self,
        b: &[f64],
        mut u: MatMut<'_, T>,
        mut v: MatMut<'_, T>,
        mut lu: MatMut<'_, T>,
        mut lv: MatMut<'_, T>,
        pool: &mut Pool<'_, T>,
    ) {
        let half = b.len() / 2; // powers x^0 … x^{2(half−1)}
                                // pows[k] = x^{2(k+1)}, ders[k] its derivative.
        let mut pows: [MatMut<'_, T>; 4] = core::array::from_fn(|_| pool.take());
        let mut ders: [MatMut<'_, T>; 4] = core::array::from_fn(|_| pool.take());
        let mut u0 = pool.take();
        for k in 0..half - 1 {
            let (done, rest) = pows.split_at_mut(k);
            let (dders, rders) = ders.split_at_mut(k);
            match k {
                0 => {
                    self.mul(rest[0].rb_mut(), self.x, self.x, false);
                    if let Some(e) = self.e {
                        self.mul(rders[0].rb_mut(), self.x, e, false);
                        self.mul(rders[0].rb_mut(), e, self.x, true);
                    }
                }
                _ => {
                    // x^{2(k+1)} = x^{2k}·x², and its derivative by the product rule.
                    let (prev, sq) = (done[k - 1].rb(), done[0].rb());
                    self.mul(rest[0].rb_mut(), prev, sq, false);
                    if self.e.is_some() {
                        self.mul(rders[0].rb_mut(), prev, dders[0].rb(), false);
                        self.mul(rders[0].rb_mut(), dders[k - 1].rb(), sq, true);
                    }
                }
            }
        }
        let odd: heapless::Vec<(f64, MatRef<'_, T>), 4> =
            (1..half).map(|k| (b[2 * k + 1], pows[k - 1].rb())).collect();
        let even: heapless::Vec<(f64, MatRef<'_, T>), 4> =
            (1..half).map(|k| (b[2 * k], pows[k - 1].rb())).collect();
        Self::combine(u0.rb_mut(), &odd, b[1]);
        Self::combine(v.rb_mut(), &even, b[0]);
        self.mul(u.rb_mut(), self.x, u0.rb(), false);
        if let Some(e) = self.e {
            let odd: heapless::Vec<(f64, MatRef<'_, T>), 4> =
                (1..half).map(|k| (b[2 * k + 1], ders[k - 1].rb())).collect();
            let even: heapless::Vec<(f64, MatRef<'_, T>), 4> =
                (1..half).map(|k| (b[2 * k], ders[k - 1].rb())).collect();
            // L_U = x·L_{U0} + e·U0, L_{U0} formed in lv before L_V is.
            Self::combine(lv.rb_mut(), &odd, 0.0);
            self.mul(lu.rb_mut(), self.x, lv.rb(), false);
            self.mul(lu.rb_mut(), e, u0.rb(), true);
            Self::combine(lv.rb_mut(), &even, 0.0);
        }
    }

    /// Degree 13, by Higham's grouping: U = x(x⁶W₁ + W₂), V = x⁶Z₁ + Z₂.
    fn thirteen(
        &self,
        mut u: MatMut<'_, T>,
        mut v: MatMut<'_, T>,
        mut lu: MatMut<'_, T>,
        mut lv: MatMut<'_, T>,
        pool: &mut Pool<'_, T>,
    ) {
        let b = B13;
        let (mut x2, mut x4, mut x6) = (pool.take(), pool.take(), pool.take());
        let (mut w1, mut z1, mut w) = (pool.take(), pool.take(), pool.take());
        self.mul(x2.rb_mut(), self.x, self.x, false);
        self.mul(x4.rb_mut(), x2.rb(), x2.rb(), false);
        self.mul(x6.rb_mut(), x2.rb(), x4.rb(), false);
        let (p2, p4, p6) = (x2.rb(), x4.rb(), x6.rb());
        Self::combine(w1.rb_mut(), &[(b[13], p6), (b[11], p4), (b[9], p2)], 0.0);
        Self::combine(w.rb_mut(), &[(b[7], p6), (b[5], p4), (b[3], p2)], b[1]);
        Self::combine(z1.rb_mut(), &[(b[12], p6), (b[10], p4), (b[8], p2)], 0.0);
        Self::combine(v.rb_mut(), &[(b[6], p6), (b[4], p4), (b[2], p2)], b[0]);
        self.mul(w.rb_mut(), p6, w1.rb(), true); // W = x⁶W₁ + W₂
        self.mul(v.rb_mut(), p6, z1.rb(), true); // V = x⁶Z₁ + Z₂
        self.mul(u.rb_mut(), self.x, w.rb(), false);
        let Some(e) = self.e else { return };
        let (mut m2, mut m4, mut m6) = (pool.take(), pool.take(), pool.take());
        self.mul(m2.rb_mut(), self.x, e, false);
        self.mul(m2.rb_mut(), e, self.x, true);
        self.mul(m4.rb_mut(), p2, m2.rb(), false);
        self.mul(m4.rb_mut(), m2.rb(), p2, true);
        self.mul(m6.rb_mut(), p4, m2.rb(), false);
        self.mul(m6.rb_mut(), m4.rb(), p2, true);
        let (d2, d4, d6) = (m2.rb(), m4.rb(), m6.rb());
        // L_W = x⁶L_{W₁} + M₆W₁ + L_{W₂}; L_U = x·L_W + e·W; L_V = x⁶L_{Z₁} + M₆Z₁ + L_{Z₂}.
        let (mut lw1, mut lw) = (pool.take(), pool.take());
        Self::combine(lw1.rb_mut(), &[(b[13], d6), (b[11], d4), (b[9], d2)], 0.0);
        Self::combine(lw.rb_mut(), &[(b[7], d6), (b[5], d4), (b[3], d2)], 0.0);
        self.mul(lw.rb_mut(), p6, lw1.rb(), true);
        self.mul(lw.rb_mut(), d6, w1.rb(), true);
        self.mul(lu.rb_mut(), self.x, lw.rb(), false);
        self.mul(lu.rb_mut(), e, w.rb(), true);
        Self::combine(lw1.rb_mut(), &[(b[12], d6), (b[10], d4), (b[8], d2)], 0.0);
        Self::combine(lv.rb_mut(), &[(b[6], d6), (b[4], d4), (b[2], d2)], 0.0);
        self.mul(lv.rb_mut(), p6, lw1.rb(), true);
        self.mul(lv.rb_mut(), d6, z1.rb(), true);
    }
}
