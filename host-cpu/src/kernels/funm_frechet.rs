//! The first and second derivatives of a function of a Hermitian matrix
//! from its factors w, V, Γ (core/src/op/funm_frechet.rs):
//! * `FunmHermitianFrechet`: V (Γ∘(Vᴴ E V)) Vᴴ, four products;
//! * `FunmHermitianSecond`: V R Vᴴ with R_ij = Σ_k f[λ_i, λ_k, λ_j]
//!   (Ẽ_ik D̃_kj + D̃_ik Ẽ_kj), Ẽ = Vᴴ E V, D̃ = Vᴴ D V.
//!
//! The second divided difference of x ≤ y ≤ z (sorted by value) is
//! (f[y, z] − f[x, y])/(z − x) from Γ, which loses a factor
//! (|f[x, y]| + |f[y, z]|)/|f[y, z] − f[x, y]| of Γ's accuracy. Where that
//! factor passes 64 the Hermite–Genocchi integral
//! f[x, y, z] = ∫₀¹∫₀¹ t f″(x + t(y − x) + ts(z − y)) ds dt is tried by 8×8-
//! and 6×6-point Gauss–Legendre, which subtract nothing: the 8×8 value is
//! taken where the two rules agree to within the quotient's own rounding,
//! ε·(|f[x, y]| + |f[y, z]|)/(z − x) — values close on the scale on which f″
//! changes — and the quotient otherwise (a wide interval on which f″ changes
//! sign, where the quotient is exact to that rounding and the quadrature is
//! not). f″(x)/2 where the three tie
//! (docs/ad-rules.md#second-order-of-a-hermitian-matrix-function).
//!
//! A result that is not finite (Γ or f″ infinite: sqrt at a zero
//! eigenvalue; or beyond the dtype's range) is `OutOfRange` on `a`.
//!
//! Scratch: two n×n temporaries for the first derivative, four for the
//! second.

use super::funm::{curvature, Real};
use super::gauss_legendre::{NODES, NODES6, WEIGHTS, WEIGHTS6};
use super::output_range::UNBOUNDED;
use super::pool::Pool;
use super::scaling::max_abs_mat;
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use crate::gemm::{matmul, slow_rhs};
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use lindiff_core::op::{FunmHermitianFrechet, FunmHermitianSecond, MatrixFunction};
use lindiff_core::RealScalar;

fn scratch<T: Field>(n: usize, temps: usize) -> StackReq {
    StackReq::new::<T>(temps * n * n)
}

impl<T: Field> Kernel<T> for FunmHermitianFrechet {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, 2)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (v, gamma, e) = (item.mat::<T>(1), item.mat::<Real<T>>(3), item.mat::<T>(4));
        let n = v.nrows();
        if n == 0 {
            return Ok(());
        }
        max_abs_mat(e).ok_or(Failure::NonFinite("e"))?;
        let (mut block, _) = stack.make_with(2 * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        let (mut tmp, mut tilde) = (pool.take(), pool.take());
        rotate_in(v, e, tmp.rb_mut(), tilde.rb_mut(), par);
        for j in 0..n {
            for i in 0..n {
                tilde[(i, j)] = tilde[(i, j)].scale(gamma[(i, j)]);
            }
        }
        rotate_out(item, v, tilde, tmp, par)
    }
}

impl<T: Field> Kernel<T> for FunmHermitianSecond {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, 4)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (v, w, gamma) = (item.mat::<T>(0), item.mat::<Real<T>>(1), item.mat::<Real<T>>(2));
        let (e, d) = (item.mat::<T>(3), item.mat::<T>(4));
        let n = v.nrows();
        if n == 0 {
            return Ok(());
        }
        max_abs_mat(e).ok_or(Failure::NonFinite("e"))?;
        max_abs_mat(d).ok_or(Failure::NonFinite("d"))?;
        let (mut block, _) = stack.make_with(4 * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        let (mut tmp, mut et, mut dt, mut r) = (pool.take(), pool.take(), pool.take(), pool.take());
        rotate_in(v, e, tmp.rb_mut(), et.rb_mut(), par);
        rotate_in(v, d, tmp.rb_mut(), dt.rb_mut(), par);
        // f[λ_i, λ_k, λ_j] = f[λ_j, λ_k, λ_i]: one evaluation serves R_ij and R_ji.
        for j in 0..n {
            for i in 0..=j {
                let (mut rij, mut rji) = (T::zero(), T::zero());
                for k in 0..n {
                    let f = second_divided(self.0, w, gamma, [i, k, j]);
                    rij += (et[(i, k)] * dt[(k, j)] + dt[(i, k)] * et[(k, j)]).scale(f);
                    rji += (et[(j, k)] * dt[(k, i)] + dt[(j, k)] * et[(k, i)]).scale(f);
                }
                r[(i, j)] = rij;
                r[(j, i)] = rji;
            }
        }
        rotate_out(item, v, r, tmp, par)
    }
}

/// `out` = Vᴴ X V, through the temporary `tmp`.
fn rotate_in<T: Field>(
    v: MatRef<'_, T>,
    x: MatRef<'_, T>,
    mut tmp: MatMut<'_, T>,
    mut out: MatMut<'_, T>,
    par: Par,
) {
    matmul(tmp.rb_mut(), Accum::Replace, v.adjoint(), x, T::one(), par);
    matmul(out.rb_mut(), Accum::Replace, tmp.rb(), v, T::one(), par);
}

/// V X Vᴴ into output 0, through the temporary `tmp` (and `x`'s memory,
/// which it overwrites, for a column-major copy of Vᴴ where GEMM would read
/// Vᴴ slowly in place: `slow_rhs`); `OutOfRange` on `a` when it is not
/// finite.
fn rotate_out<T: Field>(
    item: &mut Item<'_>,
    v: MatRef<'_, T>,
    mut x: MatMut<'_, T>,
    mut tmp: MatMut<'_, T>,
    par: Par,
) -> Result<(), Failure> {
    let n = v.nrows();
    matmul(tmp.rb_mut(), Accum::Replace, v, x.rb(), T::one(), par);
    let mut out = item.out_mat::<T>(0);
    if slow_rhs::<T>(n, n, n, v.col_stride(), v.row_stride()) {
        x.copy_from(v.adjoint());
        matmul(out.rb_mut(), Accum::Replace, tmp.rb(), x.rb(), T::one(), par);
    } else {
        matmul(out.rb_mut(), Accum::Replace, tmp.rb(), v.adjoint(), T::one(), par);
    }
    max_abs_mat(out.rb()).map(|_| ()).ok_or(Failure::OutOfRange { arg: "a", why: UNBOUNDED })
}

/// f[λ_a, λ_b, λ_c] for the indices `abc` (see the module docs).
fn second_divided<R: RealScalar>(
    f: MatrixFunction,
    w: MatRef<'_, R>,
    gamma: MatRef<'_, R>,
    abc: [usize; 3],
) -> R {
    // Sorted by value (w comes ascending from the factors op, but the op
    // takes any w).
    let mut idx = abc;
    let value = |i: usize| w[(i, 0)];
    for (p, q) in [(0, 1), (1, 2), (0, 1)] {
        if value(idx[q]) < value(idx[p]) {
            idx.swap(p, q);
        }
    }
    let [lo, mid, hi] = idx;
    let (x, y, z) = (value(lo), value(mid), value(hi));
    let two = R::from_f64(2.0);
    if x == z {
        return curvature(f, x) / two;
    }
    let (left, right) = (gamma[(lo, mid)], gamma[(mid, hi)]);
    let rise = right - left;
    let scale = left.abs() + right.abs();
    let quotient = rise / (z - x);
    if rise.abs() >= scale / R::from_f64(64.0) {
        return quotient;
    }
    // The quotient's rounding is about ε·(|f[x, y]| + |f[y, z]|)/(z − x);
    // the quadrature's error is at most about the gap between its 8- and
    // 6-point rules. Take the quadrature where that gap is the smaller.
    let (eight, six) = hermite_genocchi(f, x, y, z);
    if (eight - six).abs() <= R::from_f64(4.0) * R::EPSILON * scale / (z - x) {
        eight
    } else {
        quotient
    }
}

/// ∫₀¹∫₀¹ t f″(x + t(y − x) + ts(z − y)) ds dt by the 8×8- and 6×6-point
/// Gauss–Legendre rules.
fn hermite_genocchi<R: RealScalar>(f: MatrixFunction, x: R, y: R, z: R) -> (R, R) {
    let rule = |nodes: &[f64], weights: &[f64]| {
        let mut sum = R::zero();
        for (&t, &wt) in nodes.iter().zip(weights) {
            let t = R::from_f64(t);
            let mut inner = R::zero();
            for (&s, &ws) in nodes.iter().zip(weights) {
                inner += R::from_f64(ws) * curvature(f, x + t * (y - x) + t * R::from_f64(s) * (z - y));
            }
            sum += R::from_f64(wt) * t * inner;
        }
        sum
    };
    (rule(&NODES, &WEIGHTS), rule(&NODES6, &WEIGHTS6))
}

#[cfg(test)]
mod tests {
    use super::second_divided;
    use faer::Mat;
    use lindiff_core::op::MatrixFunction;

    /// f[w_a, w_b, w_c] through `second_divided` with Γ formed from f and f′
    /// by the plain quotient (the points here are far apart or tied).
    fn at(
        f: MatrixFunction,
        values: [f64; 3],
        g: fn(f64) -> f64,
        dg: fn(f64) -> f64,
        abc: [usize; 3],
    ) -> f64 {
        let w = Mat::from_fn(3, 1, |i, _| values[i]);
        let gamma = Mat::from_fn(3, 3, |i, j| {
            let (x, y) = (values[i], values[j]);
            if x == y {
                dg(x)
            } else {
                (g(x) - g(y)) / (x - y)
            }
        });
        second_divided(f, w.as_ref(), gamma.as_ref(), abc)
    }

    /// sin at −10, 0, 10: f[−10, 0] = f[0, 10], so the quotient cancels to
    /// exactly 0 (the true value) while the interval is far too wide for the
    /// quadrature; tanh at −3, 0, 3 likewise. Unsorted values give the same.
    #[test]
    fn wide_cancelling_intervals_take_the_quotient() {
        let sin = MatrixFunction::custom("sin", f64::sin, f64::cos).with_second_derivative(|x| -x.sin());
        for abc in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
            let got = at(sin, [-10.0, 0.0, 10.0], f64::sin, f64::cos, abc);
            assert!(got.abs() <= 1e-17, "sin: {got:e}");
            let got = at(sin, [10.0, -10.0, 0.0], f64::sin, f64::cos, abc);
            assert!(got.abs() <= 1e-17, "sin, unsorted w: {got:e}");
        }
        let dtanh = |x: f64| 1.0 - x.tanh() * x.tanh();
        let tanh = MatrixFunction::custom("tanh", f64::tanh, dtanh)
            .with_second_derivative(|x| -2.0 * x.tanh() * (1.0 - x.tanh() * x.tanh()));
        let got = at(tanh, [-3.0, 0.0, 3.0], f64::tanh, dtanh, [0, 1, 2]);
        assert!(got.abs() <= 1e-17, "tanh: {got:e}");
    }

    /// exp at a, a + h, a + 2h (a = 1) against e^a Σ_k h_k(h, 2h)/(k + 2)!,
    /// h_k the complete homogeneous sums (exp's divided differences at
    /// 0, h, 2h); the quotient would lose about ε/h² of it.
    #[test]
    fn near_ties_take_the_quadrature() {
        for h in [1e-12f64, 1e-9, 1e-6, 1e-3] {
            let values: [f64; 3] = [1.0, 1.0 + h, 1.0 + 2.0 * h];
            let gamma = Mat::from_fn(3, 3, |i, j| {
                let (x, y) = (values[i].min(values[j]), values[i].max(values[j]));
                let m = (x + y) / 2.0;
                let half = (y - x) / 2.0;
                // e^m sinh(half)/half by its series: no cancellation.
                m.exp() * (1.0 + half * half / 6.0 + half.powi(4) / 120.0)
            });
            let w = Mat::from_fn(3, 1, |i, _| values[i]);
            let got = second_divided(MatrixFunction::Exp, w.as_ref(), gamma.as_ref(), [0, 1, 2]);
            let (a, b, c) = (values[0], values[1], values[2]);
            let (hb, hc) = (b - a, c - a);
            // e^a·Σ_k h_k(0, hb, hc)/(k + 2)!, the complete homogeneous sums.
            let mut factorial = 1.0;
            let mut want = 0.0;
            for k in 0..10i32 {
                factorial *= f64::from(k + 2); // (k + 2)!
                let complete: f64 = (0..=k).map(|i| hb.powi(i) * hc.powi(k - i)).sum();
                want += complete / factorial;
            }
            let want = a.exp() * want;
            assert!((got - want).abs() <= 2e-15 * want, "h = {h:e}: {got} vs {want}");
        }
    }
}
