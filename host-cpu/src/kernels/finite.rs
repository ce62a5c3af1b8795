//! The non-finite input check every decomposition runs (faer does not check
//! everywhere, and a NaN must be reported naming the argument, not returned
//! as NaN outputs or a hang).

use super::columns::{copy_col, packed, packed_mut};
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
/// that copies the input anyway. When both are packed this is one fused
/// pass (each entry stored and checked from the same load; AVX2 code when
/// the CPU has it), about half the cost of a copy followed by a scan (plus
/// an exact scan when the pass's lane sums are not finite, see
/// [`slice_finite`]); otherwise column by column, each column checked while
/// still in cache.
///
/// # Errors
/// `Failure::NonFinite(arg)` as above.
///
/// # Panics
/// If `src` and `dst` differ in shape.
pub fn copy_finite<T: Field>(
    src: MatRef<'_, T>,
    mut dst: MatMut<'_, T>,
    arg: &'static str,
) -> Result<(), Failure> {
    assert_eq!((src.nrows(), src.ncols()), (dst.nrows(), dst.ncols()), "copy_finite: shapes differ");
    let finite = match (packed(src), packed_mut(dst.rb_mut())) {
        (Some(s), Some(d)) => copy_slice_finite(s, d),
        _ => (0..src.ncols()).fold(true, |ok, j| {
            copy_col(src.col(j), dst.rb_mut().col_mut(j));
            ok & col_finite(dst.rb().col(j))
        }),
    };
    if finite {
        Ok(())
    } else {
        Err(Failure::NonFinite(arg))
    }
}

with_avx2! {
    /// `dst = src` (same length) and whether every entry is finite, in one
    /// pass.
    fn copy_slice_finite<T: Field>(src: &[T], dst: &mut [T]) -> bool => copy_sums_finite
}

/// [`sums_finite`] of `src` while copying it into `dst`: each entry stored
/// and summed from the same load (the exact scan, when needed, reads `src`
/// again).
#[inline(always)]
fn copy_sums_finite<T: Field>(src: &[T], dst: &mut [T]) -> bool {
    let mut lanes = [T::zero(); 16];
    let rest = copy_add_lanes(&mut lanes, src, dst, |x| x);
    (all_sums_finite(&lanes) && Scalar::is_finite(rest)) || exactly_finite(src)
}

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
pub fn lower_finite<T: Field>(m: MatRef<'_, T>) -> bool {
    let n = m.nrows();
    if let Some(s) = packed(m) {
        return packed_lower_finite(s, n);
    }
    (0..m.ncols())
        .all(|j| Scalar::re(m[(j, j)]).is_finite_real() && col_finite(m.col(j).subrows(j + 1, n - j - 1)))
}

with_avx2! {
    /// [`lower_finite`] of the n×n matrix packed in `s` (n ≥ 1).
    fn packed_lower_finite<T: Field>(s: &[T], n: usize) -> bool => lower_sums_finite
}

/// [`packed_lower_finite`]: first [`lane_sums_finite`] over the
/// whole matrix (every entry finite proves the lower triangle finite, and
/// one pass over the contiguous n² entries in sixteen lanes costs less than
/// n short column parts: at n = 32 ~0.4k instructions instead of ~2.6k;
/// an input that keeps NaN/∞ above the diagonal pays this pass on top);
/// when one is not finite, sums over the part of each column below the
/// diagonal, four lanes wide, and over the diagonal's real parts; sums of
/// x·0 (as in [`exactly_finite`]) when one of those is not finite.
#[inline(always)]
fn lower_sums_finite<T: Field>(s: &[T], n: usize) -> bool {
    if lane_sums_finite(s) {
        return true;
    }
    let (diagonal, rest, lanes) = lower_sums(s, n, |x| x);
    if diagonal.is_finite_real() && Scalar::is_finite(rest) && all_sums_finite(&lanes) {
        return true;
    }
    let zero = <T as Scalar>::Real::zero();
    let (diagonal, rest, lanes) = lower_sums(s, n, |x| x.scale(zero));
    diagonal == zero && rest == T::zero() && all_zero(&lanes)
}

/// Sums of `map` over the n×n matrix packed in `s`: of the diagonal's real
/// parts, and (as [`add_lanes`], four lanes, the remainders apart) of the
/// entries below it.
#[inline(always)]
fn lower_sums<T: Field>(s: &[T], n: usize, map: impl Fn(T) -> T) -> (<T as Scalar>::Real, T, [T; 4]) {
    let mut lanes = [T::zero(); 4];
    let (mut diagonal, mut rest) = (<T as Scalar>::Real::zero(), T::zero());
    for (j, col) in s.chunks_exact(n).enumerate() {
        diagonal += Scalar::re(map(T::from_real(Scalar::re(col[j]))));
        rest += add_lanes(&mut lanes, &col[j + 1..], &map);
    }
    (diagonal, rest, lanes)
}

with_avx2! {
    /// `true` when every entry of `s` is finite, kept out of line so that the
    /// compiler vectorises it on its own: sixteen lane sums of the entries,
    /// which end finite only if every entry is (∞ and NaN never add back to
    /// a finite value), then the exact scan (sums of x·0) only when a sum is
    /// not finite, which finite entries can also make by overflowing. AVX2
    /// code when the CPU has it (the crate itself is built for baseline
    /// x86-64; with the earlier x·0 scan, SSE2 took ~140 ns of a 32×32
    /// host-blas solve's checks, AVX2 ~80 ns).
    #[inline(never)]
    pub fn slice_finite<T: Field>(s: &[T]) -> bool => sums_finite
}

/// Sixteen independent sums of the entries (packed adds, where a fold of
/// `is_finite` compiles to a scalar compare per entry, ≈ 4 instructions
/// each): a sum stays finite only if every entry in it is (∞ and NaN never
/// add back to a finite value), so finite sums prove the entries finite.
/// Sums that are not finite may also come from finite entries
/// overflowing: [`exactly_finite`] then decides. Complex entries are summed
/// part by part.
#[inline(always)]
fn sums_finite<T: Field>(s: &[T]) -> bool {
    lane_sums_finite(s) || exactly_finite(s)
}

/// The quick half of [`sums_finite`]: sixteen lane sums of the entries,
/// all finite (which proves every entry finite; a `false` may still be an
/// overflow of finite entries).
#[inline(always)]
fn lane_sums_finite<T: Field>(s: &[T]) -> bool {
    let mut lanes = [T::zero(); 16];
    let rest = add_lanes(&mut lanes, s, |x| x);
    all_sums_finite(&lanes) && Scalar::is_finite(rest)
}

/// The exact check: x·0 is ±0 for a finite x (subnormals too) and NaN for
/// ∞ or NaN, so sixteen independent sums of x·0 stay zero exactly when
/// every entry is finite (a multiply per entry more than [`sums_finite`]'s
/// pass, which runs first).
#[inline(always)]
fn exactly_finite<T: Field>(s: &[T]) -> bool {
    let zero = <T as Scalar>::Real::zero();
    let mut lanes = [T::zero(); 16];
    let rest = add_lanes(&mut lanes, s, |x| x.scale(zero));
    rest == T::zero() && all_zero(&lanes)
}

/// Adds `map(x)` of every entry x of `xs` to `lanes`, `L` entries at a
/// time (the lanes are independent sums, which compile to packed adds);
/// returns the sum over the remainder (kept apart: a remainder added to
/// one of the lanes makes the compiler split them into unequal vectors).
#[inline(always)]
pub(super) fn add_lanes<T: Field, const L: usize>(lanes: &mut [T; L], xs: &[T], map: impl Fn(T) -> T) -> T {
    let mut chunks = xs.chunks_exact(L);
    for c in &mut chunks {
        for (sum, &x) in lanes.iter_mut().zip(c) {
            *sum += map(x);
        }
    }
    chunks.remainder().iter().fold(T::zero(), |rest, &x| rest + map(x))
}

/// [`add_lanes`] while copying `src` into `dst` (same length): each entry
/// stored and summed from the same load.
#[inline(always)]
pub(super) fn copy_add_lanes<T: Field, const L: usize>(
    lanes: &mut [T; L],
    src: &[T],
    dst: &mut [T],
    map: impl Fn(T) -> T,
) -> T {
    debug_assert_eq!(src.len(), dst.len());
    let (mut from, mut to) = (src.chunks_exact(L), dst.chunks_exact_mut(L));
    for (s, d) in (&mut from).zip(&mut to) {
        for ((sum, &x), y) in lanes.iter_mut().zip(s).zip(d) {
            *y = x;
            *sum += map(x);
        }
    }
    let mut rest = T::zero();
    for (&x, y) in from.remainder().iter().zip(to.into_remainder()) {
        *y = x;
        rest += map(x);
    }
    rest
}

/// `true` when every lane sum of the entries is finite.
#[inline(always)]
fn all_sums_finite<T: Field, const L: usize>(lanes: &[T; L]) -> bool {
    lanes.iter().all(|&sum| Scalar::is_finite(sum))
}

/// `true` while every lane sum of x·0 is still zero: no entry added to the
/// lanes was NaN or infinite (the callers check the returned
/// remainder sum the same way).
#[inline(always)]
fn all_zero<T: Field, const L: usize>(lanes: &[T; L]) -> bool {
    lanes.iter().all(|&sum| sum == T::zero())
}

#[cfg(test)]
mod tests {
    use super::{copy_slice_finite, copy_sums_finite, lower_finite, slice_finite, sums_finite};
    use crate::field::Field;
    use lindiff_core::Scalar;
    use num_complex::Complex;

    /// Each NaN, +∞ and −∞, in the real part and (complex `T`) in the
    /// imaginary part, with its description.
    fn spoilers<T: Field>(value: &impl Fn(f64, f64) -> T) -> Vec<(T, bool, String)> {
        let mut all = Vec::new();
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            all.push((value(bad, 0.0), false, format!("{bad}")));
            if <T as Scalar>::IS_COMPLEX {
                all.push((value(1.0, bad), true, format!("{bad} imag")));
            }
        }
        all
    }

    /// Every length to 40 and every position of one NaN, +∞ or −∞ (in the
    /// real or the imaginary part), through the dispatching scan and the
    /// portable one.
    fn exact<T: Field>(value: impl Fn(f64, f64) -> T) {
        for len in 0..=40 {
            let clean: Vec<T> = (0..len).map(|i| value(i as f64 - 7.5, 1e-300 * i as f64)).collect();
            assert!(slice_finite(&clean) && sums_finite(&clean), "len {len}");
            let copied = |s: &[T]| {
                let same = |d: &[T]| {
                    d.iter().zip(s).all(|(a, b)| a == b || (!Scalar::is_finite(*a) && !Scalar::is_finite(*b)))
                };
                let (mut d1, mut d2) = (vec![T::zero(); s.len()], vec![T::zero(); s.len()]);
                let ok = (copy_slice_finite(s, &mut d1), copy_sums_finite(s, &mut d2));
                assert!(same(&d1) && same(&d2), "copy of len {len}");
                ok
            };
            assert_eq!(copied(&clean), (true, true), "len {len}");
            for at in 0..len {
                for (bad, _, what) in spoilers(&value) {
                    let mut s = clean.clone();
                    s[at] = bad;
                    assert!(!slice_finite(&s) && !sums_finite(&s), "len {len}, at {at}, {what}");
                    assert_eq!(copied(&s), (false, false), "copy: len {len}, at {at}, {what}");
                }
            }
        }
    }

    /// Every order to 12 and every position of one NaN, +∞ or −∞: found in
    /// the lower triangle (an imaginary diagonal part excepted), ignored in
    /// the strict upper one, packed (its own scan) and through strided
    /// views alike (faer's `Mat` pads its columns).
    fn lower<T: Field>(value: impl Fn(f64, f64) -> T) {
        use faer::{Mat, MatRef};
        for n in 1..=12 {
            let clean = Mat::<T>::from_fn(n, n, |i, j| value(i as f64 - 2.5 * j as f64, 0.25));
            let strided = |m: &Mat<T>| {
                let mut big = Mat::<T>::zeros(n + 1, n);
                big.as_mut().subrows_mut(0, n).copy_from(m);
                big
            };
            assert!(lower_finite(clean.as_ref()), "{n}");
            let clean_packed: Vec<T> = (0..n * n).map(|k| clean[(k % n, k / n)]).collect();
            assert!(lower_finite(MatRef::from_column_major_slice(&clean_packed, n, n)), "packed {n}");
            for i in 0..n {
                for j in 0..n {
                    for (bad, imag, what) in spoilers(&value) {
                        let mut m = clean.clone();
                        m[(i, j)] = bad;
                        let want = i < j || (imag && i == j);
                        let big = strided(&m);
                        let packed: Vec<T> = (0..n * n).map(|k| m[(k % n, k / n)]).collect();
                        let packed = MatRef::from_column_major_slice(&packed, n, n);
                        assert_eq!(lower_finite(packed), want, "packed {n}: ({i}, {j}) {what}");
                        assert_eq!(lower_finite(m.as_ref()), want, "{n}: ({i}, {j}) {what}");
                        assert_eq!(lower_finite(big.as_ref().subrows(0, n)), want, "strided {n}: ({i}, {j})");
                    }
                }
            }
        }
    }

    /// Finite entries whose sums overflow (`big` near the dtype's largest
    /// value: lanes 0–7 and the remainder reach −∞, lanes 8–15 +∞, once two
    /// entries share a sum) are still finite: the exact scan decides; each
    /// NaN, +∞ or −∞ among them is found. The lower triangle packed (its
    /// own scan) and strided alike.
    fn overflowing_sums<T: Field>(value: impl Fn(f64, f64) -> T, big: f64) {
        use faer::{Mat, MatRef};
        let entry = |i: usize| value(if i % 16 < 8 { -big } else { big }, big);
        for len in 0..=40 {
            let s: Vec<T> = (0..len).map(entry).collect();
            let mut d = vec![T::zero(); len];
            assert!(slice_finite(&s) && sums_finite(&s), "len {len}");
            assert!(copy_slice_finite(&s, &mut d) && d == s, "copy: len {len}");
            assert!(copy_sums_finite(&s, &mut d) && d == s, "copy: len {len}");
            for at in 0..len {
                for (bad, _, what) in spoilers(&value) {
                    let mut s = s.clone();
                    s[at] = bad;
                    assert!(!slice_finite(&s) && !sums_finite(&s), "len {len}, at {at}, {what}");
                    assert!(
                        !copy_slice_finite(&s, &mut d) && !copy_sums_finite(&s, &mut d),
                        "copy: {len} {at}"
                    );
                }
            }
        }
        for n in 1..=12 {
            let mut v: Vec<T> = (0..n * n).map(entry).collect();
            let strided = Mat::<T>::from_fn(n + 1, n, |i, j| if i < n { v[i + j * n] } else { T::zero() });
            assert!(lower_finite(MatRef::from_column_major_slice(&v, n, n)), "lower {n}");
            assert!(lower_finite(strided.as_ref().subrows(0, n)), "strided lower {n}");
            v[n - 1] = value(f64::NAN, 0.0);
            assert!(!lower_finite(MatRef::from_column_major_slice(&v, n, n)), "lower {n} with NaN");
        }
    }

    #[test]
    fn sums_that_overflow_are_rechecked() {
        overflowing_sums(|re, _| re, 1e308);
        overflowing_sums(|re, _| re as f32, 3e38);
        overflowing_sums(Complex::new, 1e308);
        overflowing_sums(|re, im| Complex::new(re as f32, im as f32), 3e38);
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
