//! Determinant kernels (`det`, `slogdet`) from a partial-pivot LU
//! (`lu::factor`, which never puts NaN in the factors of a finite matrix):
//! `det a = sign(P) · Π U[k, k]`.
//!
//! * `det` multiplies the pivots with exact power-of-two rescaling
//!   ([`ScaledProduct`]), so no intermediate product overflows or underflows
//!   when the determinant itself is representable, and products of small
//!   integers stay exact. A singular matrix gives a rounding-level value (or
//!   exactly 0), never an error. The determinant of a 0×0 matrix is 1.
//! * `slogdet` sums `ln |U[k, k]|` (no product, so no overflow for large
//!   matrices) and multiplies unit phases `U[k, k] / |U[k, k]|` for the sign
//!   (±1 for real input, a unit-modulus complex number for complex input).
//!   An exactly zero pivot gives sign 0 and `logabsdet = −∞`.
//!
//! Input with NaN or infinity is `Failure::NonFinite("a")`, as for `lu`.
//!
//! Scale-robust: a matrix outside the safe range (`super::scaling`) is
//! factored as `a · 2^e`, and det(a) = det(a · 2^e) · 2^(−n·e) goes into the
//! product's exponent (log|det| gets −n·e·ln 2): the determinant of a 2×2
//! matrix of 1e−310 entries is 0 only because 1e−620 is.

use super::lu::{abs1, carve_perms, div_real, factor, factor_scratch};
use super::range::check_range;
use super::scaling::{Range, Scaling};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{MatRef, Par};
use lindiff_core::op::{Det, Slogdet};
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Scratch of [`factor_square`] for an n×n matrix.
pub(super) fn scratch<T: Field>(n: usize, par: Par) -> StackReq {
    temp_mat_scratch::<T>(n, n).and(factor_scratch::<T>(n, n, par))
}

/// Factors the n×n `a · 2^e` (e of `scaling`) in scratch and hands the
/// packed LU and the parity of the row permutation (`true` when odd) to `f`.
pub(super) fn factor_square<T: Field, R>(
    a: MatRef<'_, T>,
    scaling: Scaling,
    par: Par,
    stack: &mut MemStack,
    f: impl FnOnce(MatRef<'_, T>, bool) -> R,
) -> R {
    let n = a.nrows();
    // SAFETY: `factor` overwrites the whole temporary before reading it.
    let (mut lu, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
    let mut lu = lu.as_mat_mut();
    let (mut fwd, mut inv, stack) = carve_perms(stack, n);
    let swaps = factor(a, lu.rb_mut(), &mut fwd, &mut inv, scaling, par, stack);
    f(lu.rb(), swaps % 2 == 1)
}

/// `2^e` for `|e| ≤ 1000`, exactly.
fn pow2<R: RealScalar>(e: i32) -> R {
    debug_assert!(e.abs() <= 1000);
    R::from_f64(f64::from_bits(((e + 1023) as u64) << 52))
}

/// Bits moved per rescaling step (2^±32 is a normal number in f32 and f64).
const STEP: i32 = 32;

/// A product `mantissa · 2^exponent` whose mantissa is kept with
/// `|re| + |im|` in [2^−32, 2^32] by exact power-of-two rescaling.
pub(super) struct ScaledProduct<T: Field> {
    mantissa: T,
    exponent: i64,
}

impl<T: Field> ScaledProduct<T> {
    /// The empty product, 1.
    pub(super) fn one() -> Self {
        ScaledProduct { mantissa: T::one(), exponent: 0 }
    }

    /// Brings `x` into range, moving powers of two into `exponent`.
    fn normalize(mut x: T, exponent: &mut i64) -> T {
        let (big, small) = (pow2::<Re<T>>(STEP), pow2::<Re<T>>(-STEP));
        loop {
            let size = abs1(x);
            if !size.is_finite_real() || x == T::zero() {
                return x;
            }
            if size > big {
                x = x.scale(small);
                *exponent += i64::from(STEP);
            } else if size < small {
                x = x.scale(big);
                *exponent -= i64::from(STEP);
            } else {
                return x;
            }
        }
    }

    /// Multiplies by 2^k.
    pub(super) fn mul_pow2(&mut self, k: i64) {
        self.exponent = self.exponent.saturating_add(k);
    }

    /// Multiplies by `factor`.
    pub(super) fn mul(&mut self, factor: T) {
        let f = Self::normalize(factor, &mut self.exponent);
        self.mantissa = Self::normalize(self.mantissa * f, &mut self.exponent);
    }

    /// The product as a plain number (infinite or zero when out of range).
    pub(super) fn value(self) -> T {
        let (big, small) = (pow2::<Re<T>>(STEP), pow2::<Re<T>>(-STEP));
        let (mut m, mut e) = (self.mantissa, self.exponent);
        while e >= i64::from(STEP) && m.is_finite() && m != T::zero() {
            m = m.scale(big);
            e -= i64::from(STEP);
        }
        while e <= -i64::from(STEP) && m != T::zero() {
            m = m.scale(small);
            e += i64::from(STEP);
        }
        if e.unsigned_abs() < STEP.unsigned_abs().into() {
            m = m.scale(pow2::<Re<T>>(e as i32));
        }
        m
    }
}

impl<T: Field> Kernel<T> for Det {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let scaling = check_range(a, "a", Range::Linear)?;
        let det = factor_square(a, scaling, par, stack, |lu, odd| {
            let mut product = ScaledProduct::<T>::one();
            for k in 0..lu.nrows() {
                product.mul(lu[(k, k)]);
            }
            product.mul_pow2(-i64::from(scaling.exponent()) * lu.nrows() as i64);
            let det = product.value();
            if odd {
                -det
            } else {
                det
            }
        });
        item.set::<T>(0, 0, det);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for Slogdet {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let scaling = check_range(a, "a", Range::Linear)?;
        let (sign, logabsdet) = factor_square(a, scaling, par, stack, |lu, odd| {
            let mut sign = if odd { -T::one() } else { T::one() };
            let mut log = <Re<T> as Scalar>::zero();
            for k in 0..lu.nrows() {
                let u = lu[(k, k)];
                let size = Scalar::abs(u);
                if size == <Re<T> as Scalar>::zero() {
                    return (T::zero(), <Re<T> as Scalar>::from_f64(f64::NEG_INFINITY));
                }
                sign *= div_real(u, size);
                log += size.ln();
            }
            // log|det a| = log|det(a·2^e)| − n·e·ln 2.
            let shift = -(f64::from(scaling.exponent()) * lu.nrows() as f64) * core::f64::consts::LN_2;
            log += <Re<T> as Scalar>::from_f64(shift);
            // Renormalize the accumulated phase (for complex input its modulus
            // drifts by rounding; for real input it is ±1 exactly).
            (div_real(sign, Scalar::abs(sign)), log)
        });
        item.set::<T>(0, 0, sign);
        item.set::<Re<T>>(1, 0, logabsdet);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

    #[test]
    fn scaled_product_survives_intermediate_overflow() {
        let mut p = ScaledProduct::<f64>::one();
        for f in [1e200, 1e200, 1e-300, -3.0] {
            p.mul(f);
        }
        let v = p.value();
        assert!((v + 3e100).abs() <= 1e-14 * 3e100, "{v}");
        let mut q = ScaledProduct::<f32>::one();
        for f in [1e30f32, 1e30, 1e-35, 1e-20] {
            q.mul(f);
        }
        let w = q.value();
        assert!((w - 1e5).abs() <= 1e-6 * 1e5 * 4.0, "{w}");
    }

    #[test]
    fn scaled_product_is_exact_for_small_integers_and_saturates() {
        let mut p = ScaledProduct::<Complex<f64>>::one();
        for f in [Complex::new(2.0, 1.0), Complex::new(3.0, 0.0), Complex::new(0.0, -1.0)] {
            p.mul(f);
        }
        assert_eq!(p.value(), Complex::new(3.0, -6.0));
        let mut big = ScaledProduct::<f64>::one();
        for _ in 0..4 {
            big.mul(1e200);
        }
        assert_eq!(big.value(), f64::INFINITY);
        let mut tiny = ScaledProduct::<f64>::one();
        for _ in 0..4 {
            tiny.mul(1e-200);
        }
        assert_eq!(tiny.value(), 0.0);
        let mut zero = ScaledProduct::<f64>::one();
        zero.mul(0.0);
        zero.mul(1e300);
        assert_eq!(zero.value(), 0.0);
    }

    #[test]
    fn pow2_is_exact() {
        assert_eq!(pow2::<f64>(-3), 0.125);
        assert_eq!(pow2::<f32>(32), 4294967296.0);
    }
}
