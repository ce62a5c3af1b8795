//! CPU kernels of the recombine family: products of the thin SVD's factors
//! formed directly in the outputs (`low_rank_approx`, `polar`, `pinv`,
//! `lstsq`).
//!
//! Each kernel runs the shared thin SVD (`super::svd::compute`: guarded,
//! canonical phases, U m×k, s k×1 as `T`, V n×k with k = min(m, n)) and, in its
//! callback, scales the temporary U or V in place by s or 1/s and multiplies
//! the kept columns into the output with faer's `matmul` (`Accum::Replace`,
//! which never reads the uninitialised output). The kept count is decided
//! per item from the data: s_i > threshold over the descending values.

use super::finite::check_finite;
use super::svd::{compute, scratch as svd_scratch, Shape};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::matmul::matmul;
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::traits::Conjugate;
use faer::{Accum, MatMut, MatRef, Par};
use lindiff_core::op::{LowRankApprox, Lstsq, Pinv, PinvOptions, Polar, SvdOptions, Truncation};
use lindiff_core::{LinalgOp, RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Singular value `i` (stored as `T` with zero imaginary part) as `f64`.
fn value<T: Field>(s: MatRef<'_, T>, i: usize) -> f64 {
    RealScalar::to_f64(Scalar::re(s[(i, 0)]))
}

/// The largest singular value, 0 for an empty matrix.
fn largest<T: Field>(s: MatRef<'_, T>) -> f64 {
    if s.nrows() == 0 {
        0.0
    } else {
        value(s, 0)
    }
}

/// Number of leading (descending) singular values strictly above `threshold`.
fn count_above<T: Field>(s: MatRef<'_, T>, threshold: f64) -> usize {
    (0..s.nrows()).take_while(|&i| value(s, i) > threshold).count()
}

/// How many triplets `truncation` keeps for the values `s` (also used by
/// the `svd_truncated` kernel).
pub(super) fn kept_by_truncation<T: Field>(truncation: &Truncation, s: MatRef<'_, T>) -> usize {
    match *truncation {
        Truncation::Count(p) => p.min(s.nrows()),
        Truncation::Tolerance { atol, rtol } => count_above(s, atol.max(rtol * largest(s))),
    }
}

/// Numerical rank under the pinv/lstsq thresholds: s_i > max(atol, rtol·s₀),
/// rtol defaulting to max(m, n)·ε of the dtype.
fn kept_by_pinv<T: Field>(opts: &PinvOptions, m: usize, n: usize, s: MatRef<'_, T>) -> usize {
    let eps = RealScalar::to_f64(<Re<T> as RealScalar>::EPSILON);
    let rtol = opts.rtol.unwrap_or(m.max(n) as f64 * eps);
    count_above(s, opts.atol.max(rtol * largest(s)))
}

/// Multiplies column j of `x` by s_j (or divides it by s_j when `invert`),
/// for j < `count`.
fn scale_cols<T: Field>(mut x: MatMut<'_, T>, s: MatRef<'_, T>, count: usize, invert: bool) {
    for j in 0..count {
        let sj: Re<T> = Scalar::re(s[(j, 0)]);
        let f = if invert { <Re<T> as Scalar>::one() / sj } else { sj };
        for i in 0..x.nrows() {
            x[(i, j)] = Scalar::scale(x[(i, j)], f);
        }
    }
}

/// `dst = lhs · rhs` (dst uninitialised on entry; every element written).
fn product<T, L, R>(mut dst: MatMut<'_, T>, lhs: MatRef<'_, L>, rhs: MatRef<'_, R>, par: Par)
where
    T: Field,
    L: Conjugate<Canonical = T>,
    R: Conjugate<Canonical = T>,
{
    if lhs.ncols() == 0 {
        dst.fill(<T as Scalar>::zero());
    } else {
        matmul(dst.rb_mut(), Accum::Replace, lhs, rhs, <T as Scalar>::one(), par);
    }
}

/// Writes the i64 scalar output `i` (also used by `svd_truncated`).
pub(super) fn set_rank(item: &mut Item<'_>, i: usize, rank: usize) {
    if item.has_output(i) {
        item.set::<i64>(i, 0, rank as i64);
    }
}

/// Scratch of a thin SVD of input 0.
fn thin_scratch<T: Field>(shapes: &Shapes, par: Par) -> StackReq {
    let (m, n) = shapes.input(0);
    svd_scratch::<T>(&SvdOptions::default(), Shape::Thin, m, n, par)
}

impl<T: Field> Kernel<T> for LowRankApprox {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        thin_scratch::<T>(shapes, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, s, v| {
            let (mut u, v) = (u.expect("thin SVD has U"), v.expect("thin SVD has V"));
            let p = kept_by_truncation(&self.0, s);
            // a_p = (U_p diag(s_p)) V_pᴴ.
            scale_cols(u.rb_mut(), s, p, false);
            if item.has_output(0) {
                let lhs = u.rb().get(.., ..p);
                let rhs = v.rb().get(.., ..p).adjoint();
                product(item.out_mat::<T>(0), lhs, rhs, par);
            }
            set_rank(item, 1, p);
        })
    }
}

impl<T: Field> Kernel<T> for Polar {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        thin_scratch::<T>(shapes, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, _s, v| {
            let (u, v) = (u.expect("thin SVD has U"), v.expect("thin SVD has V"));
            // w = U Vᴴ.
            product(item.out_mat::<T>(0), u.rb(), v.rb().adjoint(), par);
        })
    }
}

impl<T: Field> Kernel<T> for Pinv {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        thin_scratch::<T>(shapes, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        let (m, n) = (a.nrows(), a.ncols());
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, s, v| {
            let (u, mut v) = (u.expect("thin SVD has U"), v.expect("thin SVD has V"));
            let r = kept_by_pinv(&self.0, m, n, s);
            // pinv = (V_r diag(1/s_r)) U_rᴴ.
            scale_cols(v.rb_mut(), s, r, true);
            let lhs = v.rb().get(.., ..r);
            let rhs = u.rb().get(.., ..r).adjoint();
            product(item.out_mat::<T>(0), lhs, rhs, par);
        })
    }
}

impl<T: Field> Kernel<T> for Lstsq {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let (_, nrhs) = shapes.input(1);
        StackReq::all_of(&[temp_mat_scratch::<T>(m.min(n), nrhs), thin_scratch::<T>(shapes, par)])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let b = item.mat::<T>(1);
        check_finite(a, "a")?;
        check_finite(b, "b")?;
        let (m, n) = (a.nrows(), a.ncols());
        // SAFETY: `t` (k×nrhs) is only read in rows 0..r after those rows
        // are written by the `Accum::Replace` product below.
        let (mut t, stack) = unsafe { temp_mat_uninit::<T, _, _>(m.min(n), b.ncols(), stack) };
        let mut t = t.as_mat_mut();
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, s, v| {
            let (u, v) = (u.expect("thin SVD has U"), v.expect("thin SVD has V"));
            let r = kept_by_pinv(&self.0, m, n, s);
            // x = V_r diag(1/s_r) (U_rᴴ b): minimum-norm for rank-deficient
            // and wide systems.
            let mut t = t.rb_mut().get_mut(..r, ..);
            product(t.rb_mut(), u.rb().get(.., ..r).adjoint(), b, par);
            scale_cols(t.rb_mut().transpose_mut(), s, r, true);
            if item.has_output(0) {
                product(item.out_mat::<T>(0), v.rb().get(.., ..r), t.rb(), par);
            }
            set_rank(item, 1, r);
        })
    }
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find<T: Field>(op: &LinalgOp) -> Option<&dyn Kernel<T>> {
    match op {
        LinalgOp::LowRankApprox(k) => Some(k),
        LinalgOp::Polar(k) => Some(k),
        LinalgOp::Pinv(k) => Some(k),
        LinalgOp::Lstsq(k) => Some(k),
        _ => None,
    }
}
