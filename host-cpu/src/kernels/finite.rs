//! The non-finite input check every decomposition runs (faer does not check
//! everywhere, and a NaN must be reported naming the argument, not returned
//! as NaN outputs or a hang).

use super::columns::{copy_col, copy_mat, packed};
use crate::batch::Failure;
use crate::field::Field;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{ColRef, MatMut, MatRef};
use lindiff_core::{RealScalar, Scalar};

/// `true` when every entry of `m` is finite.
pub fn all_finite<T: Field>(m: MatRef<'_, T>) -> bool {
    match packed(m) {
        Some(s) => slice_finite(s),
        None => (0..m.ncols()).all(|j| col_finite(m.col(j))),
    }
}

/// `true` when every entry of `c` is finite. A contiguous column is scanned
/// without early exit, which the compiler vectorises (the check runs on every
/// input of every decomposition, so at small n it is a visible part of a
/// call); a strided one entry by entry.
pub(crate) fn col_finite<T: Field>(c: ColRef<'_, T>) -> bool {
    match c.try_as_col_major() {
        Some(c) => slice_finite(c.as_slice()),
        None => c.iter().all(|&x| Scalar::is_finite(x)),
    }
}

/// `dst = src` (always the whole copy), with `Err(NonFinite(arg))` when
/// `src` has a NaN or infinite entry: the non-finite input check in the pass
/// that copies the input anyway. A small matrix is copied whole (one
/// `memcpy` when both are packed) and then checked in cache; a larger one
/// column by column, each column checked while it is still in cache — one
/// pass over `src` where a check followed by a copy would make two.
///
/// # Errors
/// `Failure::NonFinite(arg)` as above.
pub fn copy_finite<T: Field>(
    src: MatRef<'_, T>,
    mut dst: MatMut<'_, T>,
    arg: &'static str,
) -> Result<(), Failure> {
    let finite = if src.nrows() * src.ncols() <= IN_CACHE {
        copy_mat(src, dst.rb_mut());
        all_finite(dst.rb())
    } else {
        (0..src.ncols()).fold(true, |ok, j| {
            copy_col(src.col(j), dst.rb_mut().col_mut(j));
            ok & col_finite(dst.rb().col(j))
        })
    };
    if finite {
        Ok(())
    } else {
        Err(Failure::NonFinite(arg))
    }
}

/// Entries up to which [`copy_finite`] copies first and checks after (a
/// 64×64 f64 matrix, 32 KiB: in L1 or L2 for the check).
const IN_CACHE: usize = 64 * 64;

/// `Err(NonFinite(arg))` when `m` has a NaN or infinite entry.
pub(super) fn check_finite<T: Field>(m: MatRef<'_, T>, arg: &'static str) -> Result<(), Failure> {
    if all_finite(m) {
        Ok(())
    } else {
        Err(Failure::NonFinite(arg))
    }
}

/// `true` when the lower triangle of the square `m` is finite; on the
/// diagonal only the real part counts (the Hermitian kernels ignore the
/// imaginary part). A packed matrix is scanned in one call (AVX2 code when
/// the CPU has it, as [`slice_finite`]), not column by column: per-column
/// calls cost more than the ~n/2 entries each scans at small n.
pub(crate) fn lower_finite<T: Field>(m: MatRef<'_, T>) -> bool {
    let n = m.nrows();
    if let Some(s) = packed(m) {
        #[cfg(all(feature = "std", target_arch = "x86_64"))]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { packed_lower_finite_avx2(s, n) };
        }
        return packed_lower_finite(s, n);
    }
    (0..m.ncols())
        .all(|j| Scalar::re(m[(j, j)]).is_finite_real() && col_finite(m.col(j).subrows(j + 1, n - j - 1)))
}

/// [`packed_lower_finite`] compiled for AVX2.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
unsafe fn packed_lower_finite_avx2<T: Field>(s: &[T], n: usize) -> bool {
    packed_lower_finite(s, n)
}

/// [`lower_finite`] of the n×n matrix packed in `s` (n ≥ 1): sums of x·0,
/// as in [`sums_finite`], over the part of each column below the diagonal,
/// four lanes wide (the parts are short), and over the diagonal's real parts.
#[inline(always)]
fn packed_lower_finite<T: Field>(s: &[T], n: usize) -> bool {
    let zero = <T as Scalar>::Real::zero();
    let mut lanes = [T::zero(); 4];
    let mut diagonal = zero;
    for (j, col) in s.chunks_exact(n).enumerate() {
        diagonal += Scalar::re(col[j]) * zero;
        let mut chunks = col[j + 1..].chunks_exact(4);
        for c in &mut chunks {
            for (sum, &x) in lanes.iter_mut().zip(c) {
                *sum += x.scale(zero);
            }
        }
        for &x in chunks.remainder() {
            lanes[0] += x.scale(zero);
        }
    }
    diagonal == zero && lanes.iter().all(|&sum| sum == T::zero())
}

/// `true` when every entry of `s` is finite, kept out of line so that the
/// compiler vectorises it on its own: sixteen independent sums of x·0
/// (±0 for a finite x, NaN for ∞ or NaN) stay zero exactly when every entry
/// is finite. With `std` on
/// x86-64 the scan runs as AVX2 code when the CPU has it (std's cached
/// detection; the crate itself is built for baseline x86-64, whose SSE2 scan
/// was ~140 ns of a 32×32 host-blas solve's checks, AVX2 ~80 ns).
#[inline(never)]
pub fn slice_finite<T: Field>(s: &[T]) -> bool {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above).
        return unsafe { slice_finite_avx2(s) };
    }
    sums_finite(s)
}

/// [`sums_finite`] compiled for AVX2.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(all(feature = "std", target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
unsafe fn slice_finite_avx2<T: Field>(s: &[T]) -> bool {
    sums_finite(s)
}

/// x·0 is ±0 for a finite x (subnormals too) and NaN for ∞ or NaN, so
/// sixteen independent sums of x·0 stay zero exactly when every entry is
/// finite: packed multiplies and adds, where a fold of `is_finite` compiles
/// to a scalar compare per entry (≈ 4 instructions each). Complex entries
/// are scaled and summed part by part.
#[inline(always)]
fn sums_finite<T: Field>(s: &[T]) -> bool {
    let zero = <T as Scalar>::Real::zero();
    let mut lanes = [T::zero(); 16];
    let mut chunks = s.chunks_exact(16);
    for c in &mut chunks {
        for (sum, &x) in lanes.iter_mut().zip(c) {
            *sum += x.scale(zero);
        }
    }
    let rest = chunks.remainder().iter().fold(T::zero(), |sum, &x| sum + x.scale(zero));
    lanes.iter().all(|&sum| sum == T::zero()) && rest == T::zero()
}

#[cfg(test)]
mod tests {
    use super::{lower_finite, slice_finite, sums_finite};
    use crate::field::Field;
    use lindiff_core::Scalar;
    use num_complex::Complex;

    /// Every length to 40 and every position of one NaN, +∞ or −∞ (in the
    /// real or the imaginary part), through the dispatching scan and the
    /// portable one.
    fn exact<T: Field>(value: impl Fn(f64, f64) -> T) {
        for len in 0..=40 {
            let clean: Vec<T> = (0..len).map(|i| value(i as f64 - 7.5, 1e-300 * i as f64)).collect();
            assert!(slice_finite(&clean) && sums_finite(&clean), "len {len}");
            for at in 0..len {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    for imag in [false, true] {
                        if imag && !<T as Scalar>::IS_COMPLEX {
                            continue;
                        }
                        let mut s = clean.clone();
                        s[at] = if imag { value(1.0, bad) } else { value(bad, 0.0) };
                        assert!(
                            !slice_finite(&s) && !sums_finite(&s),
                            "len {len}, at {at}, {bad}, imag {imag}"
                        );
                    }
                }
            }
        }
    }

    /// Every order to 12 and every position of one NaN, +∞ or −∞: found in
    /// the lower triangle (an imaginary diagonal part excepted), ignored in
    /// the strict upper one, packed and through a strided view alike.
    fn lower<T: Field>(value: impl Fn(f64, f64) -> T) {
        use faer::Mat;
        for n in 1..=12 {
            let clean = Mat::<T>::from_fn(n, n, |i, j| value(i as f64 - 2.5 * j as f64, 0.25));
            let strided = |m: &Mat<T>| {
                let mut big = Mat::<T>::zeros(n + 1, n);
                big.as_mut().subrows_mut(0, n).copy_from(m);
                big
            };
            assert!(lower_finite(clean.as_ref()), "{n}");
            for i in 0..n {
                for j in 0..n {
                    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                        for imag in [false, true] {
                            if imag && !<T as Scalar>::IS_COMPLEX {
                                continue;
                            }
                            let mut m = clean.clone();
                            m[(i, j)] = if imag { value(1.0, bad) } else { value(bad, 0.0) };
                            let want = i < j || (imag && i == j);
                            let big = strided(&m);
                            assert_eq!(lower_finite(m.as_ref()), want, "{n}: ({i}, {j}) {bad} imag {imag}");
                            assert_eq!(
                                lower_finite(big.as_ref().subrows(0, n)),
                                want,
                                "strided {n}: ({i}, {j})"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn lower_triangle_every_dtype_every_position() {
        lower(|re, _| re);
        lower(|re, _| re as f32);
        lower(Complex::new);
        lower(|re, im| Complex::new(re as f32, im as f32));
    }

    #[test]
    fn every_dtype_every_position() {
        exact(|re, _| re);
        exact(|re, _| re as f32);
        exact(Complex::new);
        exact(|re, im| Complex::new(re as f32, im as f32));
    }
}
