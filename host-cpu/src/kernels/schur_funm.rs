//! The principal logarithm (`Logm`) and square root (`Sqrtm`) of a general
//! matrix, and their Fréchet derivatives (`LogmFrechet`, `SqrtmFrechet`),
//! over the complex Schur form A = Q T Qᴴ (`super::schur`;
//! docs/ad-rules.md#logarithm-and-square-root):
//! * sqrt: the Björck–Hammarling recurrence on T, R_ii = √t_ii and
//!   R_ij = (t_ij − Σ_{i<k<j} R_ik R_kj)/(R_ii + R_jj);
//! * log: inverse scaling and squaring (Higham 2008, §11.5): square roots
//!   of T until ‖T^{1/2^k} − I‖₁ ≤ 1/4, then the [8/8] Padé approximant of
//!   log(I + X) as 8-point Gauss–Legendre quadrature of ∫₀¹ X(I + tX)⁻¹ dt
//!   (error below 2⁻⁵³ for ‖X‖ ≤ 1/4, Kenney and Laub's bound), times 2^k;
//!   the diagonal is then set to log t_ii exactly;
//! * the Fréchet derivatives L(op(A), E): the square root's from the
//!   Sylvester equation S L + L S = E in the Schur basis of X = op(A); the
//!   logarithm's by the block identity
//!   log([[X, E], [0, X]]) = [[log X, L(X, E)], [0, log X]], with E scaled by
//!   a power of two to X's size (L is linear in E).
//!
//! A matrix far from 1 in size (largest entry outside the safe range for
//! sums of squares, `super::scaling::Range::Squares`) is
//! evaluated scaled by an even power of two (exactly, but for entries
//! below 2^−emax of the largest, which underflow): √A = 2^s·√(A·4^−s),
//! log A = log(A·4^−s) + 2s·ln 2·I, L_√(A, E) = 2^−s·L_√(A·4^−s, E),
//! L_log(A, E) = 4^−s·L_log(A·4^−s, E) (the Schur form's sums of squares
//! would leave the range). A result that is still not finite (its entries
//! beyond the dtype's range, or L_√ unbounded at a zero eigenvalue) is
//! `OutOfRange` on `a`.
//!
//! Real input runs in complex arithmetic and returns the real part, which
//! is the real principal function when it exists: a real input with an
//! eigenvalue on the negative real axis (within n·ε·max|t| of it) has
//! none, and is `OutsideDomain("a")`; pass it as complex. A zero
//! eigenvalue is `Singular("a")` for log (for real input, one within
//! n·ε·max|λ| of 0); for sqrt only where two of them meet a nonzero
//! coupling (no primary square root exists).
//!
//! Scratch: 8 complex n×n matrices (2n×2n for the logarithm's derivative)
//! and two vectors.

use super::gauss_legendre::{NODES, WEIGHTS};
use super::output_range::{RESULT, UNBOUNDED};
use super::pool::Pool;
use super::scaling::{exponent, max_abs_mat, scale_mat, Range, Scaling};
use super::schur::{schur, schur_scratch};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use crate::gemm::matmul;
use crate::trsm::solve_upper_triangular_in_place;
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use lindiff_core::op::{Logm, LogmFrechet, MatOp, Sqrtm, SqrtmFrechet};
use lindiff_core::{DType, Element, RealScalar, Scalar};
use num_complex::Complex;

type Re<C> = <C as Scalar>::Real;

/// The function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Primary {
    Log,
    Sqrt,
}

/// ‖T^{1/2^k} − I‖₁ at which the Padé approximant is applied.
const PADE_RADIUS: f64 = 0.25;

/// At most this many square roots (for |log λ| up to 2^60/4).
const MAX_ROOTS: i32 = 60;

/// Complex n×n matrices one evaluation takes from its pool: the input
/// and result, Q, f(T) and a product, and the logarithm's three.
const TEMPS: usize = 8;

impl<T: Field> Kernel<T> for Logm {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        dispatch_scratch::<T>(shapes.input(0).0, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        dispatch::<T>(item, Primary::Log, None, par, stack)
    }
}

impl<T: Field> Kernel<T> for Sqrtm {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        dispatch_scratch::<T>(shapes.input(0).0, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        dispatch::<T>(item, Primary::Sqrt, None, par, stack)
    }
}

impl<T: Field> Kernel<T> for LogmFrechet {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        dispatch_scratch::<T>(2 * shapes.input(0).0, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        dispatch::<T>(item, Primary::Log, Some(self.0), par, stack)
    }
}

impl<T: Field> Kernel<T> for SqrtmFrechet {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        dispatch_scratch::<T>(shapes.input(0).0, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        dispatch::<T>(item, Primary::Sqrt, Some(self.0), par, stack)
    }
}

fn scratch_for<R: RealScalar>(m: usize, par: Par) -> StackReq
where
    Complex<R>: Field,
{
    if m == 0 {
        return StackReq::EMPTY;
    }
    StackReq::all_of(&[
        StackReq::new::<Complex<R>>(TEMPS * m * m + 2 * m),
        schur_scratch::<Complex<R>>(m, par),
    ])
}

fn dispatch_scratch<T: Field>(m: usize, par: Par) -> StackReq {
    #[allow(unreachable_patterns)]
    match <T as Element>::DTYPE {
        DType::F32 | DType::C32 => scratch_for::<f32>(m, par),
        DType::F64 | DType::C64 => scratch_for::<f64>(m, par),
        _ => StackReq::EMPTY,
    }
}

fn dispatch<T: Field>(
    item: &mut Item<'_>,
    f: Primary,
    how: Option<MatOp>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    #[allow(unreachable_patterns)]
    match <T as Element>::DTYPE {
        #[cfg(feature = "f32")]
        DType::F32 => run::<f32, f32>(item, f, how, par, stack),
        #[cfg(feature = "f64")]
        DType::F64 => run::<f64, f64>(item, f, how, par, stack),
        #[cfg(feature = "c32")]
        DType::C32 => run::<f32, Complex<f32>>(item, f, how, par, stack),
        #[cfg(feature = "c64")]
        DType::C64 => run::<f64, Complex<f64>>(item, f, how, par, stack),
        other => unreachable!("logm/sqrtm kernel dispatched for dtype {other:?}"),
    }
}

/// One batch item with input and output scalars `T` (R or Complex<R>).
fn run<R, T>(
    item: &mut Item<'_>,
    f: Primary,
    how: Option<MatOp>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure>
where
    R: RealScalar + Field,
    T: Field + Scalar<Real = R>,
    Complex<R>: Field + Scalar<Real = R>,
{
    let a = item.mat::<T>(0);
    let n = a.nrows();
    if n == 0 {
        return Ok(());
    }
    let x_max = max_abs_mat(a).ok_or(Failure::NonFinite("a"))?;
    let real = !<T as Element>::DTYPE.is_complex();
    let widen = |x: T| Complex::new(Scalar::re(x), Scalar::im(x));
    // The logarithm's derivative runs on the 2n×2n block.
    let m = if how.is_some() && f == Primary::Log { 2 * n } else { n };
    let (mut block, stack) = stack.make_with(TEMPS * m * m + 2 * m, |_| Complex::<R>::zero());
    let (mats, v) = block.split_at_mut(TEMPS * m * m);
    let mut pool = Pool::new(mats, m);
    let mut input = pool.take();
    let shift = range_shift(x_max);
    match how {
        None => {
            for j in 0..n {
                for i in 0..n {
                    input[(i, j)] = widen(a[(i, j)]);
                }
            }
            scale_mat(input.rb_mut(), -2 * shift);
        }
        Some(how) => {
            let e = item.mat::<T>(1);
            let e_max = max_abs_mat(e).ok_or(Failure::NonFinite("e"))?;
            if e_max == R::zero() {
                item.out_mat::<T>(0).fill(T::zero());
                return Ok(());
            }
            let op_a = |i: usize, j: usize| match how {
                MatOp::Identity => a[(i, j)],
                MatOp::Transpose => a[(j, i)],
                MatOp::Adjoint => a[(j, i)].conj(),
            };
            if f == Primary::Sqrt {
                let mut e_c = pool.take();
                for j in 0..n {
                    for i in 0..n {
                        input[(i, j)] = widen(op_a(i, j));
                        e_c[(i, j)] = widen(e[(i, j)]);
                    }
                }
                scale_mat(input.rb_mut(), -2 * shift);
                let mut result = pool.take();
                sqrt_frechet(input.rb_mut(), e_c.rb(), result.rb_mut(), &mut pool, v, real, par, stack)
                    .map_err(out_of_range(UNBOUNDED))?;
                scale_mat(result.rb_mut(), -shift);
                let mut out = item.out_mat::<T>(0);
                return write(result.rb(), out.rb_mut(), UNBOUNDED);
            }
            // [[X, E·2^-k], [0, X]] (X = op(A)·4^−s) with max|E·2^-k| near
            // max|X|.
            let k = exponent(e_max) - if x_max > R::zero() { exponent(x_max) - 2 * shift } else { 0 };
            for j in 0..n {
                for i in 0..n {
                    let x = op_a(i, j);
                    input[(i, j)] = widen(x);
                    input[(i + n, j + n)] = widen(x);
                    input[(i, j + n)] = widen(e[(i, j)]);
                }
            }
            scale_mat(input.rb_mut().submatrix_mut(0, 0, n, n), -2 * shift);
            scale_mat(input.rb_mut().submatrix_mut(n, n, n, n), -2 * shift);
            scale_mat(input.rb_mut().submatrix_mut(0, n, n, n), -k);
            let mut result = pool.take();
            evaluate(f, true, input.rb_mut(), result.rb_mut(), &mut pool, v, real, par, stack)
                .map_err(out_of_range(UNBOUNDED))?;
            let mut out = item.out_mat::<T>(0);
            let mut corner = result.rb_mut().submatrix_mut(0, n, n, n);
            scale_mat(corner.rb_mut(), k - 2 * shift);
            return write(corner.rb(), out.rb_mut(), UNBOUNDED);
        }
    }
    let mut result = pool.take();
    evaluate(f, false, input.rb_mut(), result.rb_mut(), &mut pool, v, real, par, stack)
        .map_err(out_of_range(RESULT))?;
    // f(A) from f(A·4^−s): √A = 2^s·√(A·4^−s), log A = log(A·4^−s) + 2s·ln 2·I.
    match f {
        Primary::Sqrt => scale_mat(result.rb_mut(), shift),
        Primary::Log if shift != 0 => {
            let c = Complex::new(R::from_f64(f64::from(2 * shift) * core::f64::consts::LN_2), R::zero());
            for i in 0..n {
                result[(i, i)] += c;
            }
        }
        Primary::Log => {}
    }
    let mut out = item.out_mat::<T>(0);
    write(result.rb(), out.rb_mut(), RESULT)
}

/// A kernel step's `NonFinite` (its input is finite, so the non-finite
/// value is one it formed) as `OutOfRange` on `a`, for `why`.
fn out_of_range(why: &'static str) -> impl Fn(Failure) -> Failure {
    move |e| match e {
        Failure::NonFinite(_) => Failure::OutOfRange { arg: "a", why },
        other => other,
    }
}

/// s with A·4^−s of largest entry in [1, 4) when `x_max` lies outside the
/// safe range for sums of squares (`Range::Squares`: the Schur form's
/// would leave the dtype's range), else 0: sqrt and log are evaluated on
/// A·4^−s, exactly scaled.
fn range_shift<R: RealScalar>(x_max: R) -> i32 {
    if Scaling::of_max(x_max, Range::Squares).is_none() {
        0
    } else {
        exponent(x_max).div_euclid(2)
    }
}

/// `out` = `z` (its real part for a real `T`); `OutOfRange` on `a`, for
/// `why`, unless finite.
fn write<R, T>(z: MatRef<'_, Complex<R>>, mut out: MatMut<'_, T>, why: &'static str) -> Result<(), Failure>
where
    R: RealScalar + Field,
    T: Field + Scalar<Real = R>,
    Complex<R>: Field,
{
    for j in 0..z.ncols() {
        for i in 0..z.nrows() {
            let x = z[(i, j)];
            out[(i, j)] = T::from_parts(x.re, x.im);
        }
    }
    max_abs_mat(out.rb()).map(|_| ()).ok_or(Failure::OutOfRange { arg: "a", why })
}

/// f(A) = Q f(T) Qᴴ into `out`, for `a` (overwritten by T).
#[allow(clippy::too_many_arguments)]
fn evaluate<C: Field>(
    f: Primary,
    block: bool,
    mut a: MatMut<'_, C>,
    mut out: MatMut<'_, C>,
    pool: &mut Pool<'_, C>,
    v: &mut [C],
    real: bool,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    let mut q = pool.take();
    schur(a.rb_mut(), q.rb_mut(), v, par, stack)?;
    let t = a.rb();
    check_domain(f, t, real, block)?;
    let mut ft = pool.take();
    match f {
        Primary::Sqrt => sqrt_upper(t, ft.rb_mut())?,
        Primary::Log => log_upper(t, ft.rb_mut(), pool, par)?,
    }
    let mut tmp = pool.take();
    matmul(tmp.rb_mut(), Accum::Replace, q.rb(), ft.rb(), C::one(), par);
    matmul(out.rb_mut(), Accum::Replace, tmp.rb(), q.rb().adjoint(), C::one(), par);
    Ok(())
}

/// L_sqrt(X, E) into `out` for `x` (overwritten by T): with X = Q T Qᴴ
/// and R = T^{1/2}, L = Q L̃ Qᴴ where R L̃ + L̃ R = Qᴴ E Q — the Sylvester
/// equation S L + L S = E in the Schur basis, solved column by column (one
/// shifted triangular back substitution each, O(n³) in all).
#[allow(clippy::too_many_arguments)]
fn sqrt_frechet<C: Field>(
    mut x: MatMut<'_, C>,
    e: MatRef<'_, C>,
    mut out: MatMut<'_, C>,
    pool: &mut Pool<'_, C>,
    v: &mut [C],
    real: bool,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    let n = x.nrows();
    let mut q = pool.take();
    schur(x.rb_mut(), q.rb_mut(), v, par, stack)?;
    check_domain(Primary::Sqrt, x.rb(), real, false)?;
    let (mut r, mut l, mut tmp) = (pool.take(), pool.take(), pool.take());
    sqrt_upper(x.rb(), r.rb_mut())?;
    matmul(tmp.rb_mut(), Accum::Replace, q.rb().adjoint(), e, C::one(), par);
    matmul(l.rb_mut(), Accum::Replace, tmp.rb(), q.rb(), C::one(), par);
    for j in 0..n {
        // Column j: (R + r_jj I) l_j = c_j − Σ_{k<j} l_k r_kj.
        for k in 0..j {
            let rkj = r[(k, j)];
            for i in 0..n {
                let lik = l[(i, k)];
                l[(i, j)] -= lik * rkj;
            }
        }
        for i in (0..n).rev() {
            let mut s = l[(i, j)];
            for k in i + 1..n {
                s -= r[(i, k)] * l[(k, j)];
            }
            l[(i, j)] = over_root_sum(s, r[(i, i)] + r[(j, j)])?;
        }
    }
    matmul(tmp.rb_mut(), Accum::Replace, q.rb(), l.rb(), C::one(), par);
    matmul(out.rb_mut(), Accum::Replace, tmp.rb(), q.rb().adjoint(), C::one(), par);
    Ok(())
}

/// s/(r_ii + r_jj), the step both triangular recurrences of the square root
/// share (its own, and its Fréchet derivative's Sylvester equation). The
/// sum is 0 only for two zero eigenvalues: 0/0 is 0, anything else over 0
/// means no primary square root (and no derivative) exists.
fn over_root_sum<C: Field>(s: C, sum: C) -> Result<C, Failure> {
    if sum.abs() != Re::<C>::zero() {
        Ok(s / sum)
    } else if s.abs() == Re::<C>::zero() {
        Ok(C::zero())
    } else {
        Err(Failure::Singular("a"))
    }
}

/// Eigenvalues (the diagonal of T) the function cannot take. `block`: T is
/// the Schur form of the Fréchet path's [[X, E], [0, X]], whose doubled
/// eigenvalues split by about √ε; a real input's eigenvalue then counts as
/// real within √ε·max|t_ii| of the axis, not n·ε·max|t_ii|.
fn check_domain<C: Field>(f: Primary, t: MatRef<'_, C>, real: bool, block: bool) -> Result<(), Failure> {
    let n = t.nrows();
    let largest = (0..n).map(|i| t[(i, i)].abs()).fold(Re::<C>::zero(), |m, x| m.max_real(x));
    let eps = Re::<C>::EPSILON;
    let slack = largest * if block { eps.sqrt() } else { Re::<C>::from_usize(n) * eps };
    for i in 0..n {
        let lambda = t[(i, i)];
        let (re, im) = (Scalar::re(lambda), Scalar::abs(Scalar::im(lambda)));
        if f == Primary::Log && lambda.abs() == Re::<C>::zero() {
            return Err(Failure::Singular("a"));
        }
        if !real || im > slack {
            continue;
        }
        // A real matrix's eigenvalue on the negative axis: no real f(A). For
        // sqrt, one within the slack of 0 is a rounded zero; for log, 0 has
        // no logarithm at all.
        match f {
            Primary::Sqrt if re < -slack => return Err(Failure::OutsideDomain("a")),
            Primary::Log if re.abs() <= slack => return Err(Failure::Singular("a")),
            Primary::Log if re < Re::<C>::zero() => return Err(Failure::OutsideDomain("a")),
            _ => {}
        }
    }
    Ok(())
}

/// The principal square root R of the upper triangular `t` (Björck–Hammarling).
fn sqrt_upper<C: Field>(t: MatRef<'_, C>, mut r: MatMut<'_, C>) -> Result<(), Failure> {
    let n = t.nrows();
    for j in 0..n {
        for i in 0..n {
            r[(i, j)] = C::zero();
        }
        r[(j, j)] = t[(j, j)].sqrt();
    }
    for j in 0..n {
        for i in (0..j).rev() {
            let mut s = t[(i, j)];
            for k in i + 1..j {
                s -= r[(i, k)] * r[(k, j)];
            }
            r[(i, j)] = over_root_sum(s, r[(i, i)] + r[(j, j)])?;
        }
    }
    Ok(())
}

/// The principal logarithm of the upper triangular `t` into `l` (inverse
/// scaling and squaring; see the module docs).
fn log_upper<C: Field>(
    t: MatRef<'_, C>,
    mut l: MatMut<'_, C>,
    pool: &mut Pool<'_, C>,
    par: Par,
) -> Result<(), Failure> {
    let n = t.nrows();
    let (mut s, mut m, mut y) = (pool.take(), pool.take(), pool.take());
    s.copy_from(t);
    let mut k = 0;
    while distance_to_identity(s.rb()) > Re::<C>::from_f64(PADE_RADIUS) {
        if k == MAX_ROOTS {
            return Err(Failure::NonConvergence);
        }
        sqrt_upper(s.rb(), m.rb_mut())?;
        s.copy_from(m.rb());
        k += 1;
    }
    // X = S − I (in s); L = Σ w_j (I + t_j X)⁻¹ X (X and I + t_j X commute).
    for i in 0..n {
        s[(i, i)] -= C::one();
    }
    l.fill(C::zero());
    for (&node, &weight) in NODES.iter().zip(WEIGHTS.iter()) {
        for j in 0..n {
            for i in 0..n {
                let eye = if i == j { C::one() } else { C::zero() };
                m[(i, j)] = if i <= j { eye + s[(i, j)].scale(Re::<C>::from_f64(node)) } else { C::zero() };
            }
        }
        y.copy_from(s.rb());
        solve_upper_triangular_in_place(m.rb(), y.rb_mut(), par);
        for j in 0..n {
            for i in 0..=j {
                l[(i, j)] += y[(i, j)].scale(Re::<C>::from_f64(weight));
            }
        }
    }
    scale_mat(l.rb_mut(), k);
    for i in 0..n {
        let lambda = t[(i, i)];
        let (re, im) = (Scalar::re(lambda), Scalar::im(lambda));
        // +0 for a −0 imaginary part: the square roots above take a −0 as
        // +0 (the branch Im = +π on the cut), and so must this.
        l[(i, i)] = C::from_parts(lambda.abs().ln(), (im + Re::<C>::zero()).atan2(re));
    }
    Ok(())
}

/// ‖S − I‖₁ of an upper triangular S.
fn distance_to_identity<C: Field>(s: MatRef<'_, C>) -> Re<C> {
    let n = s.nrows();
    (0..n)
        .map(|j| {
            (0..=j).fold(Re::<C>::zero(), |acc, i| {
                acc + (s[(i, j)] - if i == j { C::one() } else { C::zero() }).abs()
            })
        })
        .fold(Re::<C>::zero(), |m, x| m.max_real(x))
}
