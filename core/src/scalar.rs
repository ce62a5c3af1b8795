//! One scalar abstraction for the four float dtypes, so that every algorithm in
//! lindiff is written once, generically, instead of once per dtype.
//!
//! [`Scalar`] covers `f32`, `f64`, `Complex<f32>` and `Complex<f64>`;
//! [`RealScalar`] is the real subset. Transcendental functions come from
//! `libm` (through `num-complex`'s `libm` feature), so everything here works
//! without `std` and gives the same bits on every target. The square root
//! is the hardware instruction with the `std` feature (`f64::sqrt`, which
//! takes the encoding of the code around it — VEX inside AVX kernels) and
//! libm's without it: libm's x86 square root is legacy-SSE inline assembly,
//! which stalls inside AVX code on some CPUs. Both are correctly rounded.

use crate::dtype::Element;
use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};
use num_complex::Complex;

/// A floating-point element: real or complex, single or double precision.
pub trait Scalar:
    Element
    + Debug
    + PartialEq
    + Default
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
{
    /// The real type of the same precision (`Self` for real scalars).
    type Real: RealScalar;

    /// `true` for the complex scalars.
    const IS_COMPLEX: bool;

    /// Additive identity.
    fn zero() -> Self;
    /// Multiplicative identity.
    fn one() -> Self;
    /// `re + i·im`; the imaginary part is dropped for real scalars.
    fn from_parts(re: Self::Real, im: Self::Real) -> Self;
    /// Embeds a real value.
    fn from_real(re: Self::Real) -> Self {
        Self::from_parts(re, Self::Real::zero())
    }
    /// Converts an `f64` (rounding to the precision of `Self`).
    fn from_f64(x: f64) -> Self;
    /// Real part.
    fn re(self) -> Self::Real;
    /// Imaginary part (zero for real scalars).
    fn im(self) -> Self::Real;
    /// Complex conjugate (identity for real scalars).
    fn conj(self) -> Self;
    /// Modulus |z|, computed without overflow for large parts.
    fn abs(self) -> Self::Real;
    /// Squared modulus |z|².
    fn abs2(self) -> Self::Real {
        let (re, im) = (self.re(), self.im());
        re * re + im * im
    }
    /// Principal square root.
    fn sqrt(self) -> Self;
    /// Multiplies by a real factor.
    fn scale(self, factor: Self::Real) -> Self;
    /// `true` when both parts are finite.
    fn is_finite(self) -> bool {
        // `&`, not `&&`: no branch, so scans over slices vectorise.
        self.re().is_finite_real() & self.im().is_finite_real()
    }
}

/// A real floating-point scalar (`f32` or `f64`).
pub trait RealScalar: Scalar<Real = Self> + PartialOrd {
    /// Machine epsilon.
    const EPSILON: Self;
    /// Smallest positive normal number.
    const MIN_POSITIVE: Self;
    /// Largest finite number.
    const MAX: Self;

    /// Widens to `f64` exactly.
    fn to_f64(self) -> f64;
    /// Converts a count (exact below 2²⁴ for `f32`, 2⁵³ for `f64`).
    fn from_usize(n: usize) -> Self;
    /// `true` when neither infinite nor NaN.
    fn is_finite_real(self) -> bool;
    /// `sqrt(a² + b²)` without undue overflow or underflow.
    fn hypot(self, other: Self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Exponential.
    fn exp(self) -> Self;
    /// Four-quadrant arctangent of `self / x`.
    fn atan2(self, x: Self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// The larger of two values (NaN-ignoring like `f64::max`).
    fn max_real(self, other: Self) -> Self;
    /// The smaller of two values (NaN-ignoring like `f64::min`).
    fn min_real(self, other: Self) -> Self;
}

macro_rules! real_scalar {
    ($t:ty, $sqrt:path, $hypot:path, $log:path, $exp:path, $atan2:path, $sin:path, $cos:path) => {
        impl Scalar for $t {
            type Real = $t;
            const IS_COMPLEX: bool = false;
            fn zero() -> Self {
                0.0
            }
            fn one() -> Self {
                1.0
            }
            fn from_parts(re: Self, _im: Self) -> Self {
                re
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn re(self) -> Self {
                self
            }
            fn im(self) -> Self {
                0.0
            }
            fn conj(self) -> Self {
                self
            }
            fn abs(self) -> Self {
                // Clear the sign bit (also maps -0.0 to 0.0).
                <$t>::from_bits((self.to_bits() << 1) >> 1)
            }
            fn sqrt(self) -> Self {
                $sqrt(self)
            }
            fn scale(self, factor: Self) -> Self {
                self * factor
            }
        }

        impl RealScalar for $t {
            const EPSILON: Self = <$t>::EPSILON;
            const MIN_POSITIVE: Self = <$t>::MIN_POSITIVE;
            const MAX: Self = <$t>::MAX;
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_usize(n: usize) -> Self {
                n as $t
            }
            fn is_finite_real(self) -> bool {
                // The same test as `is_finite`, spelled so that a fold of it
                // over a slice vectorises (finite-input scans run on every
                // decomposition's inputs). NaN compares false.
                Scalar::abs(self) < <$t>::INFINITY
            }
            fn hypot(self, other: Self) -> Self {
                $hypot(self, other)
            }
            fn ln(self) -> Self {
                $log(self)
            }
            fn exp(self) -> Self {
                $exp(self)
            }
            fn atan2(self, x: Self) -> Self {
                $atan2(self, x)
            }
            fn sin(self) -> Self {
                $sin(self)
            }
            fn cos(self) -> Self {
                $cos(self)
            }
            fn max_real(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            fn min_real(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
        }
    };
}

/// The square roots: the hardware instruction with `std`, libm's otherwise.
#[cfg(feature = "std")]
mod roots {
    pub(super) fn sqrtf(x: f32) -> f32 {
        x.sqrt()
    }
    pub(super) fn sqrt(x: f64) -> f64 {
        x.sqrt()
    }
}
#[cfg(not(feature = "std"))]
mod roots {
    pub(super) use libm::{sqrt, sqrtf};
}

real_scalar!(f32, roots::sqrtf, libm::hypotf, libm::logf, libm::expf, libm::atan2f, libm::sinf, libm::cosf);
real_scalar!(f64, roots::sqrt, libm::hypot, libm::log, libm::exp, libm::atan2, libm::sin, libm::cos);

macro_rules! complex_scalar {
    ($r:ty) => {
        impl Scalar for Complex<$r> {
            type Real = $r;
            const IS_COMPLEX: bool = true;
            fn zero() -> Self {
                Complex::new(<$r>::zero(), <$r>::zero())
            }
            fn one() -> Self {
                Complex::new(<$r>::one(), <$r>::zero())
            }
            fn from_parts(re: $r, im: $r) -> Self {
                Complex::new(re, im)
            }
            fn from_f64(x: f64) -> Self {
                Complex::new(<$r>::from_f64(x), <$r>::zero())
            }
            fn re(self) -> $r {
                self.re
            }
            fn im(self) -> $r {
                self.im
            }
            fn conj(self) -> Self {
                Complex::new(self.re, -self.im)
            }
            fn abs(self) -> $r {
                RealScalar::hypot(self.re, self.im)
            }
            fn sqrt(self) -> Self {
                // Principal root via the half-angle formulas (stable for either sign
                // of `re`), using only the libm-backed real operations.
                let zero = <$r>::zero();
                if self.re == zero && self.im == zero {
                    return Self::zero();
                }
                let half = <$r>::from_f64(0.5);
                let modulus = self.abs();
                let t = Scalar::sqrt((modulus + Scalar::abs(self.re)) * half);
                if self.re >= zero {
                    Complex::new(t, self.im / (t + t))
                } else {
                    let re = Scalar::abs(self.im) / (t + t);
                    let im = if self.im < zero { -t } else { t };
                    Complex::new(re, im)
                }
            }
            fn scale(self, factor: $r) -> Self {
                Complex::new(self.re * factor, self.im * factor)
            }
        }
    };
}

complex_scalar!(f32);
complex_scalar!(f64);

#[cfg(test)]
mod tests {
    use super::*;

    fn sqrt_squares_back<T: Scalar>(z: T) {
        let r = z.sqrt();
        let back = r * r;
        let err = (back - z).abs().to_f64();
        assert!(err <= 1e-6 * (1.0 + z.abs().to_f64()), "{z:?}: {back:?}");
        assert!(r.re().to_f64() >= 0.0, "principal root of {z:?} is {r:?}");
    }

    #[test]
    fn complex_sqrt_is_principal() {
        for &(re, im) in &[(4.0, 0.0), (-4.0, 0.0), (0.0, 2.0), (-3.0, -4.0), (1e-300, 1e-300)] {
            sqrt_squares_back(Complex::<f64>::new(re, im));
            sqrt_squares_back(Complex::<f32>::new(re as f32, im as f32));
        }
        assert_eq!(Complex::<f64>::new(-4.0, 0.0).sqrt(), Complex::new(0.0, 2.0));
    }

    #[test]
    fn abs_does_not_overflow() {
        let z = Complex::<f64>::new(3e200, 4e200);
        assert!((z.abs() - 5e200).abs() < 1e186);
        assert_eq!(f64::from_parts(2.0, 7.0), 2.0);
        assert!(!f64::NAN.is_finite());
        assert!(!Complex::new(1.0, f64::INFINITY).is_finite());
    }
}
