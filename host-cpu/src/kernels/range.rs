//! The input scan of the scale-robust kernels: the non-finite check and the
//! [`Scaling`] of a matrix in one pass, so that the common case (finite, in
//! the safe range) costs what the non-finite check alone cost.
//!
//! The pass adds |re| + |im| of every entry into sixteen lane sums (the
//! non-finite check's sums of the entries themselves, with the sign bits
//! cleared: one `and` more per vector). Their total S bounds the largest
//! entry M from both sides, S / len ≤ M ≤ S, so S ≤ BIG and S ≥ len·SMALL
//! prove M inside the safe range (and a finite S proves every entry
//! finite). Otherwise — a NaN or ∞, or an input near the range's ends, or
//! one whose lane sums overflow — an exact scan decides (the largest
//! max(|re|, |im|), or a non-finite entry).

use super::columns::{copy_col, packed, packed_mut};
use super::finite::{add_lanes, copy_add_lanes};
use super::scaling::{max_abs, max_abs_mat, Range, Scaling};
use crate::batch::Failure;
use crate::field::Field;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{MatMut, MatRef};
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// `x` with the sign bits of its parts cleared.
#[inline(always)]
fn abs_parts<T: Field>(x: T) -> T {
    T::from_parts(Scalar::abs(Scalar::re(x)), Scalar::abs(Scalar::im(x)))
}

/// The real total of sixteen lane sums and a remainder sum.
#[inline(always)]
fn total<T: Field>(lanes: &[T; 16], rest: T) -> Re<T> {
    lanes.iter().fold(Scalar::re(rest) + Scalar::im(rest), |t, &l| t + Scalar::re(l) + Scalar::im(l))
}

/// Σ (|re| + |im|) over `s` in sixteen lanes (∞ or NaN when an entry is,
/// or when the sum overflows).
#[inline(always)]
fn abs_sum<T: Field>(s: &[T]) -> Re<T> {
    let mut lanes = [T::zero(); 16];
    let rest = add_lanes(&mut lanes, s, abs_parts);
    total(&lanes, rest)
}

with_avx2! {
    /// [`abs_sum`], kept out of line so that it vectorises on its own (AVX2
    /// code when the CPU has it).
    #[inline(never)]
    fn slice_abs_sum<T: Field>(s: &[T]) -> Re<T> => abs_sum
}

/// `dst = src` and [`abs_sum`] of `src`, each entry stored and summed from
/// the same load.
#[inline(always)]
fn copy_abs_sum<T: Field>(src: &[T], dst: &mut [T]) -> Re<T> {
    let mut lanes = [T::zero(); 16];
    let rest = copy_add_lanes(&mut lanes, src, dst, abs_parts);
    total(&lanes, rest)
}

with_avx2! {
    /// [`copy_abs_sum`] out of line (AVX2 code when the CPU has it).
    fn copy_slice_abs_sum<T: Field>(src: &[T], dst: &mut [T]) -> Re<T> => copy_abs_sum
}

/// `true` when a sum `sum` of `len` entries' |re| + |im| proves their
/// largest inside `range` (false for a NaN or ∞ sum).
#[inline(always)]
fn sum_in_range<R: RealScalar>(sum: R, len: usize, range: Range) -> bool {
    let (small, big) = range.bounds::<R>();
    sum <= big && sum >= small * R::from_usize(len)
}

/// The scaling of `m` into `range` for a scale-robust kernel, or `None`
/// when an entry is NaN or infinite. A packed matrix (or the transpose of
/// one: a row-major input) is summed in one pass; a strided one scanned
/// exactly.
pub(crate) fn range_of<T: Field>(m: MatRef<'_, T>, range: Range) -> Option<Scaling> {
    let of_max = |max| Scaling::of_max(max, range);
    let slice = packed(m).or_else(|| packed(m.transpose()));
    if let Some(s) = slice {
        if sum_in_range(slice_abs_sum(s), s.len(), range) {
            return Some(Scaling::NONE);
        }
        return max_abs(s.iter().copied()).map(of_max);
    }
    max_abs_mat(m).map(of_max)
}

/// `range_of`, with `Err(NonFinite(arg))` for a NaN or infinite entry.
pub fn check_range<T: Field>(m: MatRef<'_, T>, arg: &'static str, range: Range) -> Result<Scaling, Failure> {
    range_of(m, range).ok_or(Failure::NonFinite(arg))
}

/// `dst = src` (always the whole copy, unscaled) and [`check_range`] of
/// `src`, in one pass when both are packed.
///
/// # Panics
/// If `src` and `dst` differ in shape.
pub fn copy_range<T: Field>(
    src: MatRef<'_, T>,
    mut dst: MatMut<'_, T>,
    arg: &'static str,
    range: Range,
) -> Result<Scaling, Failure> {
    assert_eq!((src.nrows(), src.ncols()), (dst.nrows(), dst.ncols()), "copy_range: shapes differ");
    let of_max = |max| Scaling::of_max(max, range);
    let scaling = match (packed(src), packed_mut(dst.rb_mut())) {
        (Some(s), Some(d)) => {
            if sum_in_range(copy_slice_abs_sum(s, d), s.len(), range) {
                Some(Scaling::NONE)
            } else {
                max_abs(s.iter().copied()).map(of_max)
            }
        }
        _ => {
            for j in 0..src.ncols() {
                copy_col(src.col(j), dst.rb_mut().col_mut(j));
            }
            max_abs_mat(dst.rb()).map(of_max)
        }
    };
    scaling.ok_or(Failure::NonFinite(arg))
}

/// [`range_of`] ([`Range::Squares`]) of the lower triangle of the square
/// `m`, the diagonal's real part only (what the Hermitian kernels read).
/// The fast pass sums the whole matrix (an upper bound of the triangle's
/// largest entry) and the diagonal (n times a lower bound); the exact scan
/// covers the triangle.
pub(crate) fn lower_range<T: Field>(m: MatRef<'_, T>) -> Option<Scaling> {
    let n = m.nrows();
    if let Some(s) = packed(m) {
        let (small, big) = Range::Squares.bounds::<Re<T>>();
        let diagonal = (0..n).fold(Re::<T>::zero(), |d, k| d + Scalar::abs(Scalar::re(s[k * n + k])));
        if slice_abs_sum(s) <= big && diagonal >= small * Re::<T>::from_usize(n) {
            return Some(Scaling::NONE);
        }
    }
    let mut max = Re::<T>::zero();
    for j in 0..n {
        let d = Scalar::re(m[(j, j)]);
        if !d.is_finite_real() {
            return None;
        }
        let below = max_abs(m.col(j).subrows(j + 1, n - j - 1).iter().copied())?;
        max = max.max_real(Scalar::abs(d)).max_real(below);
    }
    Some(Scaling::of_max(max, Range::Squares))
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use num_complex::Complex;

    fn scaled<T: Field>(value: impl Fn(f64, f64) -> T, scale: f64, n: usize) -> Mat<T> {
        Mat::from_fn(n, n, |i, j| value((i as f64 - 1.5 * j as f64) * scale, 0.25 * scale))
    }

    /// The fused pass agrees with the exact scan (scaling or not, NaN and ∞
    /// found), packed, row-major and strided, copying or not.
    fn agrees<T: Field>(value: impl Fn(f64, f64) -> T + Copy) {
        for range in [Range::Squares, Range::Linear] {
            for scale in [1.0, 1e-300, 1e-310, 1e300, 1e-140, 1e140, 0.0] {
                for n in [1, 3, 17, 40] {
                    let m = scaled(value, scale, n);
                    let want = max_abs_mat(m.as_ref()).map(|max| Scaling::of_max(max, range));
                    let packed: Vec<T> = (0..n * n).map(|k| m[(k % n, k / n)]).collect();
                    let p = MatRef::from_column_major_slice(&packed, n, n);
                    assert_eq!(range_of(p, range), want, "{scale:e} {n}");
                    assert_eq!(range_of(p.transpose(), range), want, "{scale:e} {n} row-major");
                    assert_eq!(range_of(m.as_ref(), range), want, "{scale:e} {n} strided");
                    let mut d = Mat::<T>::zeros(n, n);
                    assert_eq!(copy_range(p, d.as_mut(), "a", range).ok(), want, "{scale:e} {n} copy");
                    assert!(d == m);
                    let mut spoiled = packed.clone();
                    spoiled[n * n / 2] = value(f64::NAN, 0.0);
                    let q = MatRef::from_column_major_slice(&spoiled, n, n);
                    assert_eq!(range_of(q, range), None);
                    assert_eq!(copy_range(q, d.as_mut(), "a", range), Err(Failure::NonFinite("a")));
                }
            }
        }
    }

    #[test]
    fn fused_scan_agrees_with_the_exact_one() {
        agrees(|re, _| re);
        agrees(|re, _| re as f32);
        agrees(Complex::new);
        agrees(|re, im| Complex::new(re as f32, im as f32));
    }

    #[test]
    fn lower_range_reads_the_lower_triangle_only() {
        let mut m = Mat::<f64>::from_fn(3, 3, |i, j| if i >= j { 1e-310 } else { 1.0 });
        let want = Some(Scaling::of_max(1e-310, Range::Squares));
        assert_eq!(lower_range(m.as_ref()), want);
        m[(0, 2)] = f64::NAN;
        assert_eq!(lower_range(m.as_ref()), want);
        m[(2, 0)] = f64::INFINITY;
        assert_eq!(lower_range(m.as_ref()), None);
        let z =
            Mat::<Complex<f64>>::from_fn(2, 2, |i, j| Complex::new(1.0, if i == j { 1e300 } else { 0.0 }));
        assert_eq!(lower_range(z.as_ref()), Some(Scaling::NONE));
    }
}
