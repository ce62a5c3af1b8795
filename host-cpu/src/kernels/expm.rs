//! The matrix exponential (`Expm`, `ExpmFactors`) and its Fréchet
//! derivative (`ExpmFrechet`, `ExpmFrechetFactored`), by scaling and
//! squaring with a diagonal Padé approximant r_m = q_m⁻¹ p_m,
//! m ∈ {3, 5, 7, 9, 13} (docs/ad-rules.md#matrix-exponential; the sums are
//! in `expm_pade`).
//!
//! * Degree and scaling (`expm_scaling`): the value's by Al-Mohy and
//!   Higham 2009, from d_k = ‖A^k‖₁^{1/k} and the θ_m; the derivative's
//!   (`ExpmFactors`, whose terms serve it, and `ExpmFrechet`) from
//!   β = d₂(‖A‖₁/d₂)^{1/m} and the thresholds ℓ_m (the Fréchet paper's
//!   table 6.1, smaller than θ_m), so that the derivative of the
//!   approximant is as accurate as the approximant. Both scale a
//!   non-normal A by far less than ‖A‖₁ would.
//! * r_m(X) = (V − U)⁻¹(V + U), then s squarings; the derivative
//!   L_r = (V − U)⁻¹(L_U + L_V + (L_U − L_V) r), and through each squaring
//!   L ← rL + Lr, r ← r².
//! * `ExpmFrechetFactored` reads X, the powers, W, r_m(X) and the LU of
//!   V − U from `ExpmFactors` instead of forming them: the derivative's own
//!   products only. L(Aᴴ, E) = L(A, Eᴴ)ᴴ (and the same with ᵀ), so one set
//!   of terms serves every flag.
//! * Errors: NaN/∞ in `a` or `e` → `NonFinite` naming it; a result that
//!   overflows → `OutOfRange` on `a`; `piv` that is not what
//!   `ExpmFactors` wrote (not a permutation, a degree or s out of range) →
//!   `Singular("piv")`.
//!
//! Scratch: up to 24 n×n matrices (12 for expm), the LU's permutations and
//! faer's.

use super::expm_pade::{derivatives, values, Terms};
use super::expm_scaling::{choose, choose_derivative, Choice, FIRST_DERIVATIVE, FIRST_SCALING};
use super::lu::{carve_perms, factor, factor_scratch, read_perm};
use super::pool::Pool;
use super::scaling::{exponent, max_abs_mat, pow2, scale_mat, Scaling};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use crate::gemm::matmul;
use crate::trsm::lu_solve_in_place;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::solve::solve_in_place_scratch;
use faer::perm::PermRef;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use lindiff_core::op::{Expm, ExpmFactors, ExpmFrechet, ExpmFrechetFactored, MatOp, EXPM_TERMS};
use lindiff_core::{RealScalar, Scalar};

type Re<T> = <T as Scalar>::Real;

/// How many n×n temporaries each kernel takes from its pool: expm's x, the
/// five terms, q, U, V, degree 13's W₁ and Z₁, and a product for the
/// squarings; expm_frechet's also e, r, L_U, L_V, the derivative's seven
/// and r² (but no product of its own: 24); expm_factors' U, V, W₁, Z₁ and a
/// product (its terms are its output); expm_frechet_factored's e, L, L_U,
/// L_V, the derivative's seven, r and a product.
const EXPM_TEMPS: usize = 12;
const FRECHET_TEMPS: usize = 24;
const FACTORS_TEMPS: usize = 5;
const FACTORED_TEMPS: usize = 13;

/// The largest s `piv` may carry: ‖A‖₁ ≤ 2^s·θ₁₃ holds every finite f64
/// matrix below s = 1100.
const MAX_SQUARINGS: i64 = 1100;

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
        let (first, s0) = degree_and_scaling(a, &FIRST_SCALING, "a")?;
        let (mut block, stack) = stack.make_with(EXPM_TEMPS * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        let mut x = pool.take();
        let mut terms = Terms { pows: core::array::from_fn(|_| pool.take()), w: pool.take() };
        let (mut q, mut tmp) = (pool.take(), pool.take());
        // A zero matrix (the only `first` below 13) has e^A = r_3(0) = I.
        let choice = if first < 4 {
            x.fill(T::zero());
            Choice { degree: 0, s: 0, formed: 0 }
        } else {
            x.copy_from(a);
            choose(x.rb_mut(), &mut terms.pows, s0, (q.rb_mut(), tmp.rb_mut()), par)?
        };
        let mut out = item.out_mat::<T>(0);
        let (mut fwd, mut inv, stack) = carve_perms(stack, n);
        approximant(
            (choice.degree, choice.formed),
            x.rb(),
            &mut terms,
            out.rb_mut(),
            q.rb_mut(),
            (&mut fwd, &mut inv),
            &mut pool,
            par,
            stack,
        );
        for _ in 0..choice.s {
            matmul(tmp.rb_mut(), Accum::Replace, out.rb(), out.rb(), T::one(), par);
            out.copy_from(tmp.rb());
        }
        in_range(out.rb(), VALUE_OVERFLOWS)
    }
}

impl<T: Field> Kernel<T> for ExpmFactors {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, FACTORS_TEMPS, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        if n == 0 {
            return write_piv(item, n, &[], 0, 0);
        }
        let (first, s0) = degree_and_scaling(a, &FIRST_DERIVATIVE, "a")?;
        let (mut block, stack) = stack.make_with(FACTORS_TEMPS * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        let (mut fwd, mut inv, stack) = carve_perms(stack, n);
        {
            let (mut out, all) = item.out_pair::<T, T>(0, 1);
            let [mut x, mut p2, mut p4, mut p6, mut p8, w, mut r0, mut q] = blocks(all, n);
            // A low degree leaves the powers it does not use as they are:
            // zero them so that the whole output is written.
            for b in [p2.rb_mut(), p4.rb_mut(), p6.rb_mut(), p8.rb_mut()] {
                let mut b = b;
                b.fill(T::zero());
            }
            x.copy_from(a);
            let mut pows = [p2, p4, p6, p8];
            let Choice { degree, s, formed } = derivative_choice(first, x.rb_mut(), &mut pows, s0, par)?;
            let mut terms = Terms { pows, w };
            approximant(
                (degree, formed),
                x.rb(),
                &mut terms,
                r0.rb_mut(),
                q.rb_mut(),
                (&mut fwd, &mut inv),
                &mut pool,
                par,
                stack,
            );
            out.copy_from(r0.rb());
            let mut tmp = pool.take();
            for _ in 0..s {
                matmul(tmp.rb_mut(), Accum::Replace, out.rb(), out.rb(), T::one(), par);
                out.copy_from(tmp.rb());
            }
            in_range(out.rb(), VALUE_OVERFLOWS)?;
            write_piv(item, n, &fwd, degree, s)
        }
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
        copy_op(x.rb_mut(), a, self.0);
        // The norm of op(a), not of a: the flags give the same bits as an
        // explicitly transposed input.
        let (first, s0) = degree_and_scaling(x.rb(), &FIRST_DERIVATIVE, "a")?;
        let mut out = item.out_mat::<T>(0);
        if e_max == Re::<T>::zero() {
            // L(A, 0) = 0, also where e^A overflows.
            out.fill(T::zero());
            return Ok(());
        }
        let mut pows: [MatMut<'_, T>; 4] = core::array::from_fn(|_| pool.take());
        let Choice { degree, s, formed } = derivative_choice(first, x.rb_mut(), &mut pows, s0, par)?;
        // L is linear in e: run it on e·2^-k with max|e·2^-k| in [1, 2) and
        // scale the result back, so a tiny or huge e loses nothing to the
        // 2^-s of the squarings.
        let k = exponent(e_max);
        let mut es = pool.take();
        es.copy_from(e);
        scale_mat(es.rb_mut(), -k - s);
        let mut terms = Terms { pows, w: pool.take() };
        let (mut r, mut q) = (pool.take(), pool.take());
        let (mut fwd, mut inv, stack) = carve_perms(stack, n);
        approximant(
            (degree, formed),
            x.rb(),
            &mut terms,
            r.rb_mut(),
            q.rb_mut(),
            (&mut fwd, &mut inv),
            &mut pool,
            par,
            stack,
        );
        // SAFETY: `factor` (inside `approximant`) wrote `fwd` as a
        // permutation of 0..n and `inv` as its inverse.
        let perm = unsafe { PermRef::new_unchecked(&fwd, &inv, n) };
        let pows = terms.pows.each_ref().map(|p| p.rb());
        let step = Step { degree, x: x.rb(), pows, w: terms.w.rb(), r0: r.rb(), q: q.rb(), perm, s };
        step.derivative(es.rb(), out.rb_mut(), &mut pool, par, stack);
        scale_mat(out.rb_mut(), k);
        in_range(out.rb(), DERIVATIVE_OVERFLOWS)
    }
}

impl<T: Field> Kernel<T> for ExpmFrechetFactored {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, FACTORED_TEMPS, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (terms, e) = (item.mat::<T>(1), item.mat::<T>(3));
        let n = e.nrows();
        if n == 0 {
            return Ok(());
        }
        let e_max = max_abs_mat(e).ok_or(Failure::NonFinite("e"))?;
        let (mut fwd, mut inv, stack) = carve_perms(stack, n);
        read_perm(item, 2, "piv", &mut fwd, &mut inv)?;
        let degree = usize::try_from(item.get::<i64>(2, n)).ok().filter(|&d| d < 5);
        let s = item.get::<i64>(2, n + 1);
        let (Some(degree), true) = (degree, (0..=MAX_SQUARINGS).contains(&s)) else {
            return Err(Failure::Singular("piv"));
        };
        let s = s as i32; // ≤ MAX_SQUARINGS
        let mut out = item.out_mat::<T>(0);
        if e_max == Re::<T>::zero() {
            out.fill(T::zero());
            return Ok(());
        }
        let (mut block, stack) = stack.make_with(FACTORED_TEMPS * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        // L(op(A), E) = op(L(A, op(E))) for op = ᵀ, ᴴ; E scaled as in
        // `ExpmFrechet` (by 2^-k, and by 2^-s as X is).
        let k = exponent(e_max);
        let mut es = pool.take();
        copy_op(es.rb_mut(), e, self.0);
        scale_mat(es.rb_mut(), -k - s);
        let block_of = |j: usize| terms.subcols(j * n, n);
        // SAFETY: `read_perm` checked that `fwd` is a permutation of 0..n
        // and wrote its inverse into `inv`.
        let perm = unsafe { PermRef::new_unchecked(&fwd, &inv, n) };
        let pows = [block_of(1), block_of(2), block_of(3), block_of(4)];
        let step =
            Step { degree, x: block_of(0), pows, w: block_of(5), r0: block_of(6), q: block_of(7), perm, s };
        let mut l = pool.take();
        step.derivative(es.rb(), l.rb_mut(), &mut pool, par, stack);
        copy_op(out.rb_mut(), l.rb(), self.0);
        scale_mat(out.rb_mut(), k);
        in_range(out.rb(), DERIVATIVE_OVERFLOWS)
    }
}

/// dst = op(src).
fn copy_op<T: Field>(mut dst: MatMut<'_, T>, src: MatRef<'_, T>, how: MatOp) {
    match how {
        MatOp::Identity => dst.copy_from(src),
        MatOp::Transpose => dst.copy_from(src.transpose()),
        MatOp::Adjoint => dst.copy_from(src.adjoint()),
    }
}

/// The n×n blocks of `terms` (n×8n), in [`EXPM_TERMS`] order.
fn blocks<T>(terms: MatMut<'_, T>, n: usize) -> [MatMut<'_, T>; EXPM_TERMS] {
    let mut rest = terms;
    core::array::from_fn(|_| {
        let (head, tail) = core::mem::replace(&mut rest, MatMut::from_column_major_slice_mut(&mut [], 0, 0))
            .split_at_col_mut(n);
        rest = tail;
        head
    })
}

/// [`choose_derivative`] for the A in `x`, or degree 3 at X = 0 for a zero
/// A (`first` below 13: `degree_and_scaling` found ‖A‖₁ = 0).
fn derivative_choice<T: Field>(
    first: usize,
    mut x: MatMut<'_, T>,
    pows: &mut [MatMut<'_, T>; 4],
    s0: i32,
    par: Par,
) -> Result<Choice, Failure> {
    if first < 4 {
        x.fill(T::zero());
        return Ok(Choice { degree: 0, s: 0, formed: 0 });
    }
    choose_derivative(x, pows, s0, par)
}

/// `piv`: the LU's row permutation, the degree index and s.
fn write_piv(item: &mut Item<'_>, n: usize, fwd: &[usize], degree: usize, s: i32) -> Result<(), Failure> {
    let dst = item.out_slice::<i64>(2);
    for (d, &p) in dst.iter_mut().zip(fwd) {
        d.write(p as i64);
    }
    dst[n].write(degree as i64);
    dst[n + 1].write(i64::from(s));
    Ok(())
}

/// r = r_m(x) = q⁻¹ p with p = V + U and q = V − U factored into `q`
/// (row permutation into `perms`); the terms into `terms`, of which the
/// first `formed` powers are already there.
#[allow(clippy::too_many_arguments)]
fn approximant<T: Field>(
    (degree, formed): (usize, usize),
    x: MatRef<'_, T>,
    terms: &mut Terms<'_, T>,
    mut r: MatMut<'_, T>,
    mut q: MatMut<'_, T>,
    (fwd, inv): (&mut [usize], &mut [usize]),
    pool: &mut Pool<'_, T>,
    par: Par,
    stack: &mut MemStack,
) {
    let n = x.nrows();
    let (mut u, mut v) = (pool.take(), pool.take());
    values(degree, formed, x, terms, u.rb_mut(), v.rb_mut(), pool, par);
    // q = V − U (into V, then factored into q), p = V + U (into U).
    for j in 0..n {
        for i in 0..n {
            let (ui, vi) = (u[(i, j)], v[(i, j)]);
            u[(i, j)] = vi + ui;
            v[(i, j)] = vi - ui;
        }
    }
    factor(v.rb(), q.rb_mut(), fwd, inv, Scaling::NONE, par, stack);
    // SAFETY: `factor` wrote `fwd` as a permutation of 0..n and `inv` as its inverse.
    let perm = unsafe { PermRef::new_unchecked(fwd, inv, n) };
    r.copy_from(u.rb());
    lu_solve_in_place(q.rb(), perm, r.rb_mut(), par, stack);
}

/// What the derivative reads from the forward: the degree, x = A/2^s, the
/// powers, W, r_m(x), the LU of q_m(x) with its permutation, and s.
struct Step<'a, T> {
    degree: usize,
    x: MatRef<'a, T>,
    pows: [MatRef<'a, T>; 4],
    w: MatRef<'a, T>,
    r0: MatRef<'a, T>,
    q: MatRef<'a, T>,
    perm: PermRef<'a, usize>,
    s: i32,
}

impl<T: Field> Step<'_, T> {
    /// L(A, E) into `l` for `e` = E/2^s (pool: L_U, L_V, r, a product and
    /// the derivative's own).
    fn derivative(
        &self,
        e: MatRef<'_, T>,
        mut l: MatMut<'_, T>,
        pool: &mut Pool<'_, T>,
        par: Par,
        stack: &mut MemStack,
    ) {
        let n = e.nrows();
        let (mut lu, mut lv) = (pool.take(), pool.take());
        derivatives(self.degree, self.x, e, self.pows, self.w, lu.rb_mut(), lv.rb_mut(), pool, par);
        // L_r = q⁻¹(L_U + L_V + (L_U − L_V) r).
        for j in 0..n {
            for i in 0..n {
                let (a, b) = (lu[(i, j)], lv[(i, j)]);
                l[(i, j)] = a + b;
                lu[(i, j)] = a - b;
            }
        }
        matmul(l.rb_mut(), Accum::Add, lu.rb(), self.r0, T::one(), par);
        lu_solve_in_place(self.q, self.perm, l.rb_mut(), par, stack);
        // Squaring: L ← rL + Lr, r ← r² (r only while another step needs it).
        let (mut r, mut tmp) = (pool.take(), pool.take());
        r.copy_from(self.r0);
        for step in 0..self.s {
            matmul(tmp.rb_mut(), Accum::Replace, r.rb(), l.rb(), T::one(), par);
            matmul(tmp.rb_mut(), Accum::Add, l.rb(), r.rb(), T::one(), par);
            l.copy_from(tmp.rb());
            if step + 1 < self.s {
                matmul(tmp.rb_mut(), Accum::Replace, r.rb(), r.rb(), T::one(), par);
                r.copy_from(tmp.rb());
            }
        }
    }
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
    // ‖a‖₁ = largest · (the largest column sum of |a|/largest), which is ≤ 2n;
    // |a|·2^-k with 2^k ≥ largest stands for |a|/largest, exactly scaled.
    let inv = pow2::<f64>(-exponent(largest) - 1);
    let relative = (0..a.ncols())
        .map(|j| a.col(j).iter().map(|&x| Scalar::abs(x).to_f64() * inv).sum::<f64>())
        .fold(0.0, f64::max)
        / (largest * inv);
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

/// Why e^A is out of range.
const VALUE_OVERFLOWS: &str = "e^A, or a squaring on the way to it, overflows the dtype";

/// Why L(A, E) is out of range.
const DERIVATIVE_OVERFLOWS: &str = "L(A, E), or a squaring on the way to it, overflows the dtype";

/// `Err(OutOfRange)` on `a` (its inputs are finite, so a non-finite result
/// is an overflow) unless every entry of `m` is finite.
fn in_range<T: Field>(m: MatRef<'_, T>, why: &'static str) -> Result<(), Failure> {
    max_abs_mat(m).map(|_| ()).ok_or(Failure::OutOfRange { arg: "a", why })
}
