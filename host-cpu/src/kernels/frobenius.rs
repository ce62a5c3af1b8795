//! The Frobenius norm in one vectorised pass: the plain sum of squares
//! wherever it neither overflows nor loses more than ε of itself to squares
//! that underflow (then its error is the rounding of the sum, as faer's),
//! faer's scaled norm everywhere else. faer's `norm_l2` scales as it goes
//! (about 9 ns per entry here): it was three quarters of the SVD guard, 6 %
//! of an SVD.

use super::columns::packed;
use super::finite::add_lanes;
use crate::field::Field;
use faer::MatRef;
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Σ (re² + im²) over `s`, in sixteen lane sums.
#[inline(always)]
fn squares<T: Field>(s: &[T]) -> Re<T> {
    let mut lanes = [T::zero(); 16];
    let square = |x: T| {
        let (re, im) = (Scalar::re(x), Scalar::im(x));
        T::from_parts(re * re, im * im)
    };
    let rest = add_lanes(&mut lanes, s, square);
    lanes.iter().fold(Scalar::re(rest) + Scalar::im(rest), |t, &l| t + Scalar::re(l) + Scalar::im(l))
}

with_avx2! {
    /// [`squares`] out of line (AVX2 code when the CPU has it).
    #[inline(never)]
    fn slice_squares<T: Field>(s: &[T]) -> Re<T> => squares
}

/// ‖x‖_F for any `x`: the plain sum of squares when `x` (or its transpose)
/// is packed and the sum is finite and at least q·MIN_POSITIVE/ε, for the
/// q squares it adds (one per entry, two for complex ones): each square
/// lost to underflow is below MIN_POSITIVE (even where subnormals flush to
/// zero), so together they are less than ε of the sum. faer's scaled norm
/// otherwise (strided views, huge or tiny entries, NaN or ∞).
pub(crate) fn frobenius_norm<T: Field>(x: MatRef<'_, T>) -> Re<T> {
    if let Some(s) = packed(x).or_else(|| packed(x.transpose())) {
        let sum = slice_squares(s);
        let squares = s.len() * if <T as Scalar>::IS_COMPLEX { 2 } else { 1 };
        let floor = Re::<T>::from_usize(squares) * Re::<T>::MIN_POSITIVE / Re::<T>::EPSILON;
        if sum.is_finite_real() && sum >= floor {
            return Scalar::sqrt(sum);
        }
    }
    Scalar::re(T::from_real_impl(&x.norm_l2()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::{c64, Mat};

    /// The plain sum where it is safe (scale 1, and 1e150 and 1e-140 near
    /// its limits), faer's scaled norm beyond them (1e±160, 1e±300, 0) and
    /// on strided views: the same value to a few ulps everywhere, and NaN
    /// or ∞ where an entry is.
    #[test]
    fn agrees_with_the_scaled_norm_at_every_scale() {
        let close = |got: f64, want: f64, what: &str| {
            assert!((got - want).abs() <= 2e-15 * want, "{what}: {got} vs {want}");
        };
        for scale in [1.0, 1e150, 1e-140, 1e-300, 1e300, 1e-160, 1e160, 0.0] {
            let m = Mat::<f64>::from_fn(37, 5, |i, j| scale * ((i * 5 + j) as f64 - 90.0));
            for (view, what) in
                [(m.as_ref(), "packed"), (m.transpose(), "transposed"), (m.subrows(1, 30), "strided")]
            {
                close(frobenius_norm(view), view.norm_l2(), &format!("{what}, scale {scale}"));
            }
            let z = Mat::<c64>::from_fn(9, 9, |i, j| c64::new(scale * i as f64, -scale * j as f64));
            close(frobenius_norm(z.as_ref()), z.norm_l2(), &format!("complex, scale {scale}"));
        }
        let mut bad = Mat::<f64>::zeros(4, 4);
        bad[(2, 1)] = f64::NAN;
        assert!(frobenius_norm(bad.as_ref()).is_nan());
        bad[(2, 1)] = f64::INFINITY;
        assert_eq!(frobenius_norm(bad.as_ref()), f64::INFINITY);
    }
}
