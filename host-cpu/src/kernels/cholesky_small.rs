//! lindiff's own Cholesky factorization for real matrices up to
//! [`SMALL_UP_TO`], where faer's kernel spends most of its instructions on
//! loop bookkeeping (n = 32: 17.8k instructions for ~5.5k multiply-adds;
//! this one 12k; the 32×32 bench rows read 0.78–0.80 × faer in `cargo xtask bench`).
//!
//! Left-looking, by columns: column j of L is
//! `l[i, j] = (a[i, j] − Σ_{k<j} l[i, k]·conj(l[j, k])) / l[j, j]` for i ≥ j,
//! with `l[j, j]` the square root of the same expression at i = j. The sums
//! run over blocks of 16, 8 or 4 rows with two partial sums per row (even
//! and odd k) held in registers; a last block of fewer than 4 rows is
//! computed over the 4 rows that end at n and only its new rows stored.
//! Backward stable like every Cholesky ordering: the computed L satisfies
//! L Lᴴ = A + E with |E| ≤ γ_{n+1}·|L||Lᴴ| (Higham, *Accuracy and Stability
//! of Numerical Algorithms*, Thm 10.3), whatever the summation order.

use crate::field::Field;
use lindiff_core::Scalar;

/// Largest n for which the Cholesky kernel of a real dtype uses [`factor`]
/// rather than faer's `cholesky_in_place` (measured against faer, f64 and
/// f32: 0.6–0.95 of its time from n = 2 to 132 where [`leading_dim`]
/// chooses it; beyond, 0.9–1.4 by size and placement).
pub(super) const SMALL_UP_TO: usize = 132;

/// The leading dimension [`factor`] runs with for an n×n real matrix of
/// `T`, or `None` where faer's kernel serves (n > [`SMALL_UP_TO`]). In
/// place (n) unless n > 64 and n columns span a multiple of 512 bytes:
/// the sums for a block of rows read those rows in every earlier column,
/// and columns a multiple of 512 bytes apart fall into a fraction of the
/// L1 cache's sets, which then evict each other. Measured at n = 128: f64
/// (columns 1 KiB apart) 1.5× faer's time in place, 0.94× on a copy with
/// columns 132 apart (copying in and out included) → n + 4; f32 (512
/// bytes) 1.35× in place, 1.0–1.09× on the padded copy, as faer's f32
/// kernel is twice as wide → faer.
pub(super) fn leading_dim<T>(n: usize) -> Option<usize> {
    let bytes = n.saturating_mul(core::mem::size_of::<T>());
    match n {
        0..=64 => Some(n),
        _ if n > SMALL_UP_TO => None,
        _ if bytes.is_multiple_of(1024) => Some(n + 4),
        _ if bytes.is_multiple_of(512) => None,
        _ => Some(n),
    }
}

with_avx2! {
    /// Factors the n×n column-major `l` (leading dimension `ld` ≥ n) in
    /// place: on entry its lower triangle holds A's (the strict upper
    /// triangle is read, but never reaches L: any values, NaN too; rows n
    /// to ld of each column are never read); on success L, with zeros above
    /// the diagonal. `false` when a pivot is not > 0 (a NaN pivot too), with
    /// `l` partly overwritten.
    pub(super) fn factor<T: Field>(l: &mut [T], n: usize, ld: usize) -> bool => factor_body
}

#[inline(always)]
fn factor_body<T: Field>(l: &mut [T], n: usize, ld: usize) -> bool {
    assert!(ld >= n && l.len() >= ld * n, "l is n×n with leading dimension ld");
    for j in 0..n {
        let (done, rest) = l.split_at_mut(j * ld);
        let col = &mut rest[..n];
        // Blocks start at multiples of 4 rows, where the previous columns'
        // vector stores did, so their loads are forwarded from those stores
        // whole (a load straddling two stores waits for them to retire:
        // twice the time at n = 16). The first block may start above the
        // diagonal: those rows are zeroed below.
        let mut i = j - j % 4;
        while i < n {
            i = match n - i {
                left if left >= 16 => update::<T, 16>(done, col, ld, j, i),
                left if left >= 8 => update::<T, 8>(done, col, ld, j, i),
                _ if n >= 4 => update::<T, 4>(done, col, ld, j, i),
                _ => update::<T, 1>(done, col, ld, j, i),
            };
        }
        let d = Scalar::re(col[j]);
        // Not > 0, a NaN included.
        if d.partial_cmp(&<T as Scalar>::Real::zero()) != Some(core::cmp::Ordering::Greater) {
            return false;
        }
        let r = d.sqrt();
        // 1/√d as √d·(1/d): the root and the division both wait on d alone
        // and run side by side, where 1/√d waits for the root (the chain
        // from one pivot to the next is most of a small factorization).
        // 1/d overflows only for d ≤ 2^−1024 (f64; 2^−128 in f32), where
        // 1/√d does not.
        let q = <T as Scalar>::Real::one() / d;
        let inv = if Scalar::is_finite(q) { r * q } else { <T as Scalar>::Real::one() / r };
        // One pass over the whole column (no short `memset` call per
        // column): zeros above the diagonal, the scaled entries below.
        for (row, x) in col.iter_mut().enumerate() {
            *x = if row < j { T::zero() } else { x.scale(inv) };
        }
        col[j] = T::from_real(r);
    }
    true
}

/// Subtracts `Σ_{k<j} l[r, k]·conj(l[j, k])` from `col[r]` for the rows r
/// of the block of `B` rows that starts at `i` or, where fewer than `B` rows
/// are left, ends at n = `col.len()` (only its rows from `i` on are
/// stored); returns the row after the block. `done` holds the columns
/// k < j, `ld` apart.
#[inline(always)]
fn update<T: Field, const B: usize>(done: &[T], col: &mut [T], ld: usize, j: usize, i: usize) -> usize {
    let start = i.min(col.len() - B);
    let sums = block_sums::<T, B>(done, ld, col.len(), j, start);
    let end = start + B;
    col[i..end].iter_mut().zip(&sums[i - start..]).for_each(|(x, s)| *x -= *s);
    end
}

/// `Σ_{k<j} l[start + r, k]·conj(l[j, k])` for r < `B`, over the `j`
/// columns of `done` (leading dimension `ld`, n rows read).
#[inline(always)]
fn block_sums<T: Field, const B: usize>(done: &[T], ld: usize, n: usize, j: usize, start: usize) -> [T; B] {
    assert!(start + B <= n && j < n && n <= ld, "the block and row j lie in the n rows");
    let mut even = [T::zero(); B];
    let mut odd = [T::zero(); B];
    let mut pairs = done.chunks_exact(2 * ld);
    for pair in &mut pairs {
        let (x, y) = pair.split_at(ld);
        let (c, d) = (Scalar::conj(x[j]), Scalar::conj(y[j]));
        let (x, y) = (&x[start..start + B], &y[start..start + B]);
        for r in 0..B {
            even[r] += x[r] * c;
            odd[r] += y[r] * d;
        }
    }
    if let Some(x) = pairs.remainder().get(..ld) {
        let c = Scalar::conj(x[j]);
        let x = &x[start..start + B];
        for r in 0..B {
            even[r] += x[r] * c;
        }
    }
    for r in 0..B {
        even[r] += odd[r];
    }
    even
}

#[cfg(test)]
mod tests {
    use super::factor;
    use crate::field::Field;
    use lindiff_core::{RealScalar, Scalar};

    /// The real value of a real `T`.
    fn f<T: Field>(x: T) -> f64 {
        Scalar::re(x).to_f64()
    }

    /// A = B Bᵀ + n·I for a deterministic B (column-major), and B's entries.
    fn spd<T: Field>(n: usize) -> Vec<T> {
        let b = |i: usize, j: usize| ((i * 37 + j * 11 + 5) % 17) as f64 / 17.0 - 0.5;
        let mut a = vec![T::zero(); n * n];
        for j in 0..n {
            for i in 0..n {
                let dot: f64 = (0..n).map(|k| b(i, k) * b(j, k)).sum();
                a[i + j * n] = T::from_f64(dot + if i == j { n as f64 } else { 0.0 });
            }
        }
        a
    }

    /// Every size from 1 to 40 (each block shape and tail) and the larger
    /// ones the kernel runs at, with leading dimension n and a padded one:
    /// L is lower triangular with a positive diagonal and L Lᵀ reproduces
    /// A to n·ε·‖A‖, in f64 and f32; a NaN above the diagonal or in the
    /// padding changes nothing.
    fn reconstructs<T: Field>() {
        for (n, pad) in (1..=40).chain([47, 64, 95, 96, 128, 132]).flat_map(|n| [(n, 0), (n, 4)]) {
            let a = spd::<T>(n);
            let ld = n + pad;
            // What the kernel must ignore: NaN everywhere strictly above
            // the diagonal and in the padding rows.
            let mut padded = vec![T::from_f64(f64::NAN); ld * n];
            for j in 0..n {
                padded[j * ld + j..j * ld + n].copy_from_slice(&a[j * n + j..j * n + n]);
            }
            assert!(factor(&mut padded, n, ld), "n = {n}, ld = {ld}: positive definite");
            let l: Vec<T> = (0..n).flat_map(|j| padded[j * ld..j * ld + n].to_vec()).collect();
            let norm = a.iter().map(|x| f(*x).abs()).fold(0.0, f64::max);
            let tol = 4.0 * n as f64 * <T as Scalar>::Real::EPSILON.to_f64() * norm;
            for j in 0..n {
                for i in 0..n {
                    let lij = f(l[i + j * n]);
                    if i < j {
                        assert!(lij == 0.0, "n = {n}: l[{i}, {j}] = {lij} above the diagonal");
                        continue;
                    }
                    if i == j {
                        assert!(lij > 0.0, "n = {n}: l[{i}, {i}] = {lij}");
                    }
                    let llt: f64 = (0..=j).map(|k| f(l[i + k * n]) * f(l[j + k * n])).sum();
                    let err = (llt - f(a[i + j * n])).abs();
                    assert!(err <= tol, "n = {n}: |(L Lᵀ − A)[{i}, {j}]| = {err:e} > {tol:e}");
                }
            }
        }
    }

    #[test]
    fn reconstructs_a_in_f64_and_f32() {
        reconstructs::<f64>();
        reconstructs::<f32>();
    }

    /// A pivot ≤ 0 (an indefinite matrix, a zero one, a NaN on the
    /// diagonal) fails, at the first column or later.
    #[test]
    fn rejects_what_is_not_positive_definite() {
        for n in [1, 3, 4, 17, 32] {
            let mut indefinite = spd::<f64>(n);
            let last = n * n - 1;
            indefinite[last] = -indefinite[last];
            assert!(!factor(&mut indefinite, n, n), "n = {n}: a negative last pivot");
            assert!(!factor(&mut vec![0.0f64; n * n], n, n), "n = {n}: zero");
            let mut nan = spd::<f64>(n);
            nan[0] = f64::NAN;
            assert!(!factor(&mut nan, n, n), "n = {n}: NaN pivot");
        }
    }

    /// A pivot whose reciprocal overflows (d = 2^−1030, subnormal) scales
    /// its column by 1/√d = 2^515 all the same: 2^−1030·[[1, 1], [1, 2]]
    /// has L = 2^−515·[[1, 0], [1, 1]], every entry a power of two.
    #[test]
    fn subnormal_pivots_scale_by_their_root() {
        let t = f64::MIN_POSITIVE / 256.0;
        let mut a = [t, t, t, 2.0 * t];
        assert!(factor(&mut a, 2, 2));
        let h = 2f64.powi(-515);
        assert_eq!(a, [h, h, 0.0, h]);
    }

    /// The kernel's columns are never a multiple of 512 bytes apart from
    /// n = 65 on: f64 at 128 is padded, f32 at 128 left to faer.
    #[test]
    fn leading_dims_avoid_aliasing_columns() {
        use super::{leading_dim, SMALL_UP_TO};
        assert_eq!(leading_dim::<f64>(64), Some(64));
        assert_eq!(leading_dim::<f64>(120), Some(120));
        assert_eq!(leading_dim::<f64>(128), Some(132));
        assert_eq!(leading_dim::<f32>(128), None);
        assert_eq!(leading_dim::<f64>(SMALL_UP_TO + 1), None);
        for n in 65..=SMALL_UP_TO {
            for (ld, size) in [(leading_dim::<f64>(n), 8), (leading_dim::<f32>(n), 4)] {
                if let Some(ld) = ld {
                    assert!(ld >= n && !(ld * size).is_multiple_of(512), "n = {n}: ld = {ld}");
                }
            }
        }
    }
}
