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
//!
//! Scale-robust: the SVD is of `a · 2^e` when `a` lies outside the safe
//! range (`super::scaling`), so the products are formed from its values
//! and scaled once at the end (a_p by 2^−e, pinv by 2^e; `lstsq` scales
//! `b` too when it lies outside the range, x = x'·2^(e_a − e_b)); the
//! thresholds compare s_i scaled back (absolute) or relative to s₀.

use super::columns::copy_mat;
use super::kept::{kept_by_pinv, kept_by_truncation, set_rank};
use super::range::check_range;
use super::scaling::{scale_mat, Range};
use super::svd::{compute, scratch as svd_scratch, Shape};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use crate::gemm::matmul;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{IntoConst, Reborrow, ReborrowMut};
use faer::traits::Conjugate;
use faer::{Accum, MatMut, MatRef, Par};
use lindiff_core::op::{LowRankApprox, Lstsq, MatrixRank, Pinv, Polar, SvdOptions};
use lindiff_core::Scalar;

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

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
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, s, v, scaling| {
            let (mut u, v) = (u.expect("thin SVD has U"), v.expect("thin SVD has V"));
            let p = kept_by_truncation(&self.0, s, scaling);
            // a_p = (U_p diag(s_p)) V_pᴴ, of the scaled matrix: scaled back.
            scale_cols(u.rb_mut(), s, p, false);
            if item.has_output(0) {
                let lhs = u.rb().get(.., ..p);
                let rhs = v.rb().get(.., ..p).adjoint();
                let mut out = item.out_mat::<T>(0);
                product(out.rb_mut(), lhs, rhs, par);
                scaling.undo_mat(out);
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
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, _s, v, _scaling| {
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
        let (m, n) = (a.nrows(), a.ncols());
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, s, v, scaling| {
            let (u, mut v) = (u.expect("thin SVD has U"), v.expect("thin SVD has V"));
            let r = kept_by_pinv(&self.0, m, n, s, scaling);
            // pinv = (V_r diag(1/s_r)) U_rᴴ; of a·2^e it is pinv(a)·2^−e.
            scale_cols(v.rb_mut(), s, r, true);
            let lhs = v.rb().get(.., ..r);
            let rhs = u.rb().get(.., ..r).adjoint();
            let mut out = item.out_mat::<T>(0);
            product(out.rb_mut(), lhs, rhs, par);
            scale_mat(out, scaling.exponent());
        })
    }
}

impl<T: Field> Kernel<T> for Lstsq {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let (_, nrhs) = shapes.input(1);
        StackReq::all_of(&[
            temp_mat_scratch::<T>(m.min(n), nrhs),
            temp_mat_scratch::<T>(m, nrhs), // b scaled into the safe range
            thin_scratch::<T>(shapes, par),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let b = item.mat::<T>(1);
        let (m, n) = (a.nrows(), a.ncols());
        // `a` is measured (and NaN/∞ found) by the SVD, then `b`.
        let a_range = check_range(a, "a", Range::Squares)?;
        let b_scaling = check_range(b, "b", Range::Linear)?;
        // SAFETY: `t` (k×nrhs) is only read in rows 0..r after those rows
        // are written by the `Accum::Replace` product below; the copy of `b`
        // is written in full before it is read, and only when it is used.
        let (mut t, stack) = unsafe { temp_mat_uninit::<T, _, _>(m.min(n), b.ncols(), stack) };
        let mut t = t.as_mat_mut();
        let (mut copy, stack) =
            unsafe { temp_mat_uninit::<T, _, _>(m, if b_scaling.is_none() { 0 } else { b.ncols() }, stack) };
        let b = if b_scaling.is_none() {
            b
        } else {
            let mut copy = copy.as_mat_mut();
            copy_mat(b, copy.rb_mut());
            b_scaling.apply_mat(copy.rb_mut());
            copy.into_const()
        };
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, s, v, scaling| {
            debug_assert_eq!(scaling, a_range);
            let (u, v) = (u.expect("thin SVD has U"), v.expect("thin SVD has V"));
            let r = kept_by_pinv(&self.0, m, n, s, scaling);
            // x = V_r diag(1/s_r) (U_rᴴ b): minimum-norm for rank-deficient
            // and wide systems; of a·2^ea and b·2^eb it is x·2^(eb − ea).
            let mut t = t.rb_mut().get_mut(..r, ..);
            product(t.rb_mut(), u.rb().get(.., ..r).adjoint(), b, par);
            scale_cols(t.rb_mut().transpose_mut(), s, r, true);
            if item.has_output(0) {
                let mut x = item.out_mat::<T>(0);
                product(x.rb_mut(), v.rb().get(.., ..r), t.rb(), par);
                scale_mat(x, scaling.exponent() - b_scaling.exponent());
            }
            set_rank(item, 1, r);
        })
    }
}

impl<T: Field> Kernel<T> for MatrixRank {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        svd_scratch::<T>(&SvdOptions::default(), Shape::Values, m, n, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let (m, n) = (a.nrows(), a.ncols());
        compute(a, &SvdOptions::default(), Shape::Values, par, stack, |_, s, _, scaling| {
            set_rank(item, 0, kept_by_pinv(&self.0, m, n, s, scaling));
        })
    }
}
