//! Scale-robust drivers, as LAPACK's: when the largest entry of a matrix
//! lies outside a safe range, the kernel runs on a copy scaled into it and
//! scales the results back (singular values, eigenvalues, R, U, solutions;
//! vectors and permutations are unchanged).
//!
//! Two ranges ([`Range`]), with ε the precision (`dlamch('P')`, Rust's
//! `EPSILON`) and `safmin` the smallest normal number:
//! * [`Range::Squares`], LAPACK's (`?gesvd`, `?geev`, …) for algorithms that
//!   form sums of squares (Householder reflections, rotations, norms): a
//!   matrix is scaled when `0 < max|aᵢⱼ| < SMALL = √safmin / ε` or
//!   `max|aᵢⱼ| > BIG = 1 / SMALL`: 2^±459 (≈ 6.7e−139, 1.5e138) in f64,
//!   2^±40 (≈ 9.1e−13, 1.1e12) in f32. Inside it, squares and products of
//!   two entries neither overflow nor underflow: the SVD, eigensolvers
//!   and QR run as on O(1) data.
//! * [`Range::Linear`] for elimination (LU, Cholesky, the solves), which
//!   forms no squares of entries: `SMALL = safmin / ε`, `BIG = 1 / SMALL`,
//!   2^±970 (≈ 1e∓292) in f64, 2^±103 in f32. Inside it the underflow of
//!   an elimination step is below ε relative to the matrix, and the pivot
//!   growth has 2^54 (2^23) of room before overflow. Pivots far apart
//!   (a determinant of 1e200 · 1e200 · 1e−300) keep every bit, as they
//!   would not on a matrix scaled down by 2^665.
//!
//! As LAPACK's `?lascl`, a matrix is scaled to the range's boundary (its
//! largest entry to [BIG/2, BIG) or [SMALL, 2·SMALL)), which loses the
//! fewest of its small entries to underflow, but by a power of two, so
//! scaling and unscaling are exact (an entry far below the largest may
//! lose bits to underflow, below ε·max|a|, which the backward error
//! allows).
//!
//! Complex entries are measured by max(|re|, |im|) (within √2 of |z|).

use crate::field::Field;
use faer::reborrow::ReborrowMut;
use faer::{MatMut, MatRef};
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// The binary exponent of a positive normal `f64` (its value's floor(log2)).
fn exponent_f64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// floor(log2 x) of a positive finite `x` of any real dtype (subnormals
/// too).
pub(crate) fn exponent<R: RealScalar>(x: R) -> i32 {
    let x = x.to_f64();
    if x >= f64::MIN_POSITIVE {
        exponent_f64(x)
    } else {
        // A subnormal f64: bring it up by 2^64 first (exact).
        exponent_f64(x * pow2_f64(64)) - 64
    }
}

/// 2^e as an `f64`, for e in the normal range [−1022, 1023].
fn pow2_f64(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// 2^e in `R` (exact while it is a normal number of `R`).
pub(crate) fn pow2<R: RealScalar>(e: i32) -> R {
    R::from_f64(pow2_f64(e.clamp(-1022, 1023)))
}

/// Which safe range a kernel needs (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// LAPACK's range for algorithms that form sums of squares.
    Squares,
    /// The wider range for elimination.
    Linear,
    /// [2^−8, 2^8]: for a kernel that is only right on O(1) data (faer's
    /// real eigenvectors, see `super::eig`).
    Unit,
}

impl Range {
    /// The exponent of the range's lower end, SMALL = 2^k: exponent(safmin)/2
    /// − exponent(ε) for `Squares` (−459 in f64, −40 in f32), exponent(safmin)
    /// − exponent(ε) for `Linear` (−970, −103).
    fn small_exponent<R: RealScalar>(self) -> i32 {
        let (safmin, eps) = (exponent_f64(R::MIN_POSITIVE.to_f64()), exponent_f64(R::EPSILON.to_f64()));
        match self {
            Range::Squares => safmin / 2 - eps,
            Range::Linear => safmin - eps,
            Range::Unit => -8,
        }
    }

    /// (SMALL, BIG) for the largest entry of `R` matrices.
    pub fn bounds<R: RealScalar>(self) -> (R, R) {
        let k = self.small_exponent::<R>();
        (pow2(k), pow2(-k))
    }
}

/// The largest power-of-two step [`scale_by`] takes at once: 2^±STEP is a
/// normal number in f32 and f64.
const STEP: i32 = 120;

/// `x · 2^e`, in steps of at most 2^±[`STEP`] (each exact while the
/// result stays normal; only the last can round, into the subnormals, or
/// overflow to ∞, as the exact product would).
pub(crate) fn scale_by<T: Scalar>(mut x: T, mut e: i32) -> T {
    while e != 0 {
        let step = e.clamp(-STEP, STEP);
        x = x.scale(pow2::<<T as Scalar>::Real>(step));
        e -= step;
    }
    x
}

/// How a kernel's input was scaled: it ran on `a · 2^e`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Scaling(i32);

impl Scaling {
    /// No scaling (the input was in the safe range).
    pub const NONE: Scaling = Scaling(0);

    /// The scaling for a matrix whose largest entry (in max(|re|, |im|))
    /// is `max` (finite): none inside `range` (or for 0), otherwise the
    /// power of two that brings `max` to the nearer end of it, [BIG/2, BIG)
    /// or [SMALL, 2·SMALL).
    pub fn of_max<R: RealScalar>(max: R, range: Range) -> Scaling {
        let (small, big) = range.bounds::<R>();
        let k = range.small_exponent::<R>();
        if max == R::zero() || (max >= small && max <= big) {
            Scaling::NONE
        } else if max > big {
            Scaling(-k - 1 - exponent(max))
        } else {
            Scaling(k - exponent(max))
        }
    }

    /// A scaling of exponent `e` (the input ran on `a · 2^e`).
    pub const fn from_exponent(e: i32) -> Scaling {
        Scaling(e)
    }

    /// `true` when the input ran unscaled.
    pub const fn is_none(self) -> bool {
        self.0 == 0
    }

    /// The exponent e: the kernel ran on `a · 2^e`.
    pub const fn exponent(self) -> i32 {
        self.0
    }

    /// `x · 2^e`: an input entry scaled as the kernel sees it.
    pub fn apply<T: Scalar>(self, x: T) -> T {
        scale_by(x, self.0)
    }

    /// `x · 2^−(k·e)`: a result homogeneous of degree `k` in the input
    /// scaled back (k = 1 for singular values, eigenvalues, R and U;
    /// k = −1 for an inverse; k = n − 1 for an adjugate).
    pub fn undo_power<T: Scalar>(self, x: T, k: i32) -> T {
        scale_by(x, -self.0.saturating_mul(k))
    }

    /// `x · 2^−e`: a result of degree 1 scaled back.
    pub fn undo<T: Scalar>(self, x: T) -> T {
        self.undo_power(x, 1)
    }

    /// Multiplies every entry of `m` by 2^e (nothing for [`Scaling::NONE`]).
    pub fn apply_mat<T: Field>(self, m: MatMut<'_, T>) {
        scale_mat(m, self.0);
    }

    /// Multiplies every entry of `m` by 2^−e (a degree-1 result).
    pub fn undo_mat<T: Field>(self, m: MatMut<'_, T>) {
        scale_mat(m, self.0.saturating_neg());
    }
}

/// Multiplies every entry of `m` by 2^e.
pub fn scale_mat<T: Field>(mut m: MatMut<'_, T>, e: i32) {
    // The steps of `scale_by`, each a pass with one factor: the same
    // products in the same order per entry, without forming 2^step per
    // entry (and contiguous columns vectorise).
    let mut e = e;
    while e != 0 {
        let step = e.clamp(-STEP, STEP);
        let factor = pow2::<Re<T>>(step);
        for j in 0..m.ncols() {
            let mut col = m.rb_mut().col_mut(j);
            match col.rb_mut().try_as_col_major_mut() {
                Some(c) => c.as_slice_mut().iter_mut().for_each(|x| *x = x.scale(factor)),
                None => col.iter_mut().for_each(|x| *x = x.scale(factor)),
            }
        }
        e -= step;
    }
}

/// max(|re|, |im|) of `x`.
#[inline(always)]
pub(crate) fn abs_max<T: Scalar>(x: T) -> Re<T> {
    let (re, im) = (Scalar::abs(Scalar::re(x)), Scalar::abs(Scalar::im(x)));
    if im > re {
        im
    } else {
        re
    }
}

/// The largest max(|re|, |im|) over `xs`, or `None` when an entry is NaN
/// or infinite.
pub(crate) fn max_abs<T: Scalar>(xs: impl Iterator<Item = T>) -> Option<Re<T>> {
    let mut max = Re::<T>::zero();
    for x in xs {
        if !Scalar::is_finite(x) {
            return None;
        }
        let a = abs_max(x);
        if a > max {
            max = a;
        }
    }
    Some(max)
}

/// The largest max(|re|, |im|) of the entries of `m`, or `None` when one
/// is NaN or infinite (the exact scan, column by column).
pub(crate) fn max_abs_mat<T: Field>(m: MatRef<'_, T>) -> Option<Re<T>> {
    let mut max = Re::<T>::zero();
    for j in 0..m.ncols() {
        let c = max_abs(m.col(j).iter().copied())?;
        if c > max {
            max = c;
        }
    }
    Some(max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

    #[test]
    fn the_squares_range_is_lapacks() {
        let (small, big) = Range::Squares.bounds::<f64>();
        assert_eq!(small, f64::MIN_POSITIVE.sqrt() / f64::EPSILON);
        assert_eq!(big, 1.0 / small);
        let (small, big) = Range::Squares.bounds::<f32>();
        assert_eq!(small, f32::MIN_POSITIVE.sqrt() / f32::EPSILON);
        assert_eq!(big, 1.0 / small);
        let (small, big) = Range::Linear.bounds::<f64>();
        assert_eq!((small, big), (f64::MIN_POSITIVE / f64::EPSILON, f64::EPSILON / f64::MIN_POSITIVE));
    }

    /// Out of range, the largest entry goes to the nearer end, exactly
    /// and back; inside, nothing moves.
    #[test]
    fn scaling_brings_the_largest_entry_to_the_range_and_back_exactly() {
        for range in [Range::Squares, Range::Linear] {
            let (small, big) = range.bounds::<f64>();
            for max in [1e-310, 5e-324, 1e-300, 7.6e-306, 1e300, f64::MAX] {
                let s = Scaling::of_max(max, range);
                let scaled = s.apply(max);
                if max > big {
                    assert!(scaled <= big && scaled >= big / 2.0, "{max:e} → {scaled:e}");
                } else if max < small {
                    assert!(scaled >= small && scaled < 2.0 * small, "{max:e} → {scaled:e}");
                } else {
                    assert!(s.is_none());
                }
                assert_eq!(s.undo(scaled), max, "{max:e}");
            }
            for max in [0.0, 1.0, small, big, 1e-30] {
                assert!(Scaling::of_max(max, range).is_none(), "{max:e}");
            }
            for max in [1e-45f32, 1e-40, 1e-13, 1e13, f32::MAX] {
                let s = Scaling::of_max(max, range);
                let (small, big) = range.bounds::<f32>();
                assert!((small..=big).contains(&s.apply(max)), "{max:e}");
                assert_eq!(s.undo(s.apply(max)), max);
            }
        }
        let z = Complex::new(3e-320, -1e-310);
        let s = Scaling::of_max(abs_max(z), Range::Squares);
        assert_eq!(s.undo(s.apply(z)), z);
    }

    #[test]
    fn results_out_of_range_saturate_as_ieee_says() {
        let s = Scaling::from_exponent(1100);
        assert_eq!(s.undo_power(1.5, -1), f64::INFINITY); // an inverse: 1.5·2^1100
        assert_eq!(s.undo_power(1.5, 1), 0.0);
        assert_eq!(scale_by(1.0f64, -1074), 5e-324);
        assert_eq!(scale_by(1.0f64, 1024), f64::INFINITY);
        assert_eq!(max_abs([1.0, f64::NAN].into_iter()), None);
        assert_eq!(max_abs([1.0, -3.0, 2.0].into_iter()), Some(3.0));
    }
}
