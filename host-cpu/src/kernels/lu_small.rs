//! lindiff's own partial-pivot LU for small matrices (both dimensions up
//! to [`SMALL_UP_TO`]), where faer's recursive, blocked kernel spends most
//! of its time on dispatch and bookkeeping (n = 8: 0.48 µs for ~340
//! flops).
//!
//! Right-looking and unblocked (LAPACK's `?getf2`): at step j the entry of
//! largest `|re| + |im|` in column j, rows j..m (the first such entry on a
//! tie), is swapped into row j; the entries below it are divided by it;
//! and each later column c takes `col_c[j+1..] −= l[j+1..] · u[j, c]`. A
//! pivot column that is exactly zero is skipped (its L column stays zero),
//! so singular input factors without error and finite input never gives a
//! NaN. Backward stable like every partial-pivot LU: the computed factors
//! satisfy P A = L U + E with |E| ≤ γ_n·|L||U| (Higham, *Accuracy and
//! Stability of Numerical Algorithms*, Thm 9.3).

use super::columns::column;
use super::lu::{abs1, div_real};
use crate::field::Field;
use faer::reborrow::ReborrowMut;
use faer::MatMut;
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Largest dimension for which [`factor`] serves rather than faer's
/// `lu_in_place`: measured on square f64 and f32 matrices, the direct `lu`
/// call took 0.75–0.98 of faer's kernel alone from n = 8 to 32 (`cargo
/// xtask bench`'s `lu` rows) and 0.93 at 48; at 64 this kernel lost (1.03),
/// as its updates are one column at a time.
const SMALL_UP_TO: usize = 48;

/// Whether [`factor`] serves an m×n factorization of `T`: a real `T`
/// (complex pivots go to faer, whose reciprocal of a tiny complex pivot
/// this kernel would have to re-derive) with both dimensions small.
pub(super) fn serves<T: Field>(m: usize, n: usize) -> bool {
    super::SMALL_KERNELS && !<T as Scalar>::IS_COMPLEX && m <= SMALL_UP_TO && n <= SMALL_UP_TO
}

with_avx2! {
    /// Factors `lu` (m×n, rows contiguous within each column) in place into
    /// the packed factors (L strictly below the diagonal, unit diagonal
    /// implied; U on and above it), writes the row permutation into `perm`
    /// (length m: row i of P·A is row `perm[i]` of A) and returns the
    /// number of row transpositions.
    pub(super) fn factor<T: Field>(lu: MatMut<'_, T>, perm: &mut [usize]) -> usize => factor_body
}

#[inline(always)]
fn factor_body<T: Field>(mut lu: MatMut<'_, T>, perm: &mut [usize]) -> usize {
    debug_assert!(!<T as Scalar>::IS_COMPLEX, "real matrices only");
    let (m, n) = (lu.nrows(), lu.ncols());
    assert!(perm.len() == m && lu.row_stride() == 1, "perm has m entries, columns are contiguous");
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    let zero = Re::<T>::zero();
    // Below this pivot size its reciprocal overflows: divide instead.
    let tiny = Re::<T>::MIN_POSITIVE;
    let mut swaps = 0;
    for j in 0..m.min(n) {
        let (mut left, mut right) = lu.rb_mut().split_at_col_mut(j + 1);
        let l = column(left.rb_mut().col_mut(j));
        let (mut piv, best) = pivot(&l[j..]);
        if best == zero {
            // Nothing but zeros and NaNs: a NaN, if any, onto the diagonal,
            // where the callers' check of U's diagonal sees it (skipped, it
            // would stay in L alone).
            piv = l[j..].iter().position(|x| !Scalar::is_finite(*x)).unwrap_or(0);
        }
        let piv = j + piv;
        if piv != j {
            for c in 0..j {
                column(left.rb_mut().col_mut(c)).swap(j, piv);
            }
            for c in 0..n - j - 1 {
                column(right.rb_mut().col_mut(c)).swap(j, piv);
            }
            let l = column(left.rb_mut().col_mut(j));
            l.swap(j, piv);
            perm.swap(j, piv);
            swaps += 1;
        }
        if best == zero {
            continue;
        }
        let l = column(left.col_mut(j));
        let (top, below) = l.split_at_mut(j + 1);
        let p = top[j];
        if best >= tiny {
            let r = <T as Scalar>::one() / p;
            below.iter_mut().for_each(|x| *x *= r);
        } else {
            // Scaled to abs1 = 1 first: the quotients stay ≤ √2 in size.
            let p = div_real(p, best);
            below.iter_mut().for_each(|x| *x = div_real(*x, best) / p);
        }
        for c in 0..n - j - 1 {
            let col = column(right.rb_mut().col_mut(c));
            let (top, rest) = col.split_at_mut(j + 1);
            let t = top[j];
            rest.iter_mut().zip(&*below).for_each(|(x, l)| *x -= *l * t);
        }
    }
    swaps
}

/// The index of the first entry of largest `|x|` in the real column `col`
/// and that size (index 0 and size 0 for a column of zeros or NaNs): the
/// largest size over four lanes (vectorised; a NaN never wins a `>`), then
/// the first entry of that size.
#[inline(always)]
fn pivot<T: Field>(col: &[T]) -> (usize, Re<T>) {
    let zero = Re::<T>::zero();
    if col.len() < 16 {
        // Short: one pass, no second search.
        let (mut piv, mut best) = (0, zero);
        for (i, &x) in col.iter().enumerate() {
            let x = abs1(x);
            if x > best {
                (piv, best) = (i, x);
            }
        }
        return (piv, best);
    }
    let mut lanes = [zero; 4];
    let mut chunks = col.chunks_exact(4);
    for chunk in &mut chunks {
        for (best, &x) in lanes.iter_mut().zip(chunk) {
            let x = abs1(x);
            *best = if x > *best { x } else { *best };
        }
    }
    let mut best = zero;
    for x in lanes.into_iter().chain(chunks.remainder().iter().map(|&x| abs1(x))) {
        best = if x > best { x } else { best };
    }
    if best == zero {
        return (0, zero);
    }
    (col.iter().position(|&x| abs1(x) == best).unwrap_or(0), best)
}

#[cfg(test)]
mod tests {
    use super::factor;
    use crate::field::Field;
    use faer::MatMut;
    use lindiff_core::{RealScalar, Scalar};

    /// The real value of a real `T`.
    fn f<T: Field>(x: T) -> f64 {
        Scalar::re(x).to_f64()
    }

    /// Factors the m×n column-major `a` with a column stride of `ld` ≥ m
    /// (the rows between hold NaN, which the kernel must never read) and
    /// checks the definition: `perm` is a permutation, |L| ≤ 1 with L unit
    /// lower triangular, each pivot is the first entry of largest size in
    /// its column of the partly reduced matrix, and P A = L U to
    /// 4·k·ε·max|a|·… (Higham's γ bound with |L| ≤ 1). Returns the factors.
    fn check<T: Field>(a: &[f64], m: usize, n: usize, ld: usize) -> (Vec<T>, Vec<usize>) {
        let mut w = vec![T::from_f64(f64::NAN); ld * n];
        for j in 0..n {
            for i in 0..m {
                w[i + j * ld] = T::from_f64(a[i + j * m]);
            }
        }
        let mut perm = vec![usize::MAX; m];
        let swaps = factor(MatMut::from_column_major_slice_with_stride_mut(&mut w, m, n, ld), &mut perm);
        let lu = |i: usize, j: usize| f(w[i + j * ld]);
        let mut seen = vec![false; m];
        perm.iter().for_each(|&p| seen[p] = true);
        assert!(seen.iter().all(|&s| s), "{m}×{n}: perm {perm:?} is a permutation");
        // The parity of the swaps is the permutation's (det's sign): the
        // parity of m minus its number of cycles.
        let mut visited = vec![false; m];
        let mut cycles = 0;
        for start in 0..m {
            let mut i = start;
            cycles += usize::from(!visited[i]);
            while !visited[i] {
                visited[i] = true;
                i = perm[i];
            }
        }
        assert!(swaps <= m && swaps % 2 == (m - cycles) % 2, "{m}×{n}: {swaps} swaps for {perm:?}");
        let k = m.min(n);
        let l = |i: usize, j: usize| {
            if i == j {
                1.0
            } else if i > j {
                lu(i, j)
            } else {
                0.0
            }
        };
        let u = |i: usize, j: usize| if i <= j { lu(i, j) } else { 0.0 };
        let big = a.iter().fold(0.0f64, |b, x| b.max(x.abs()));
        let eps = <T as Scalar>::Real::EPSILON.to_f64();
        let tol = 4.0 * (k + 1) as f64 * eps * big * (k as f64).max(1.0);
        for i in 0..m {
            for j in 0..n {
                if j < k && i > j {
                    assert!(l(i, j).abs() <= 1.0, "{m}×{n}: |l[{i}, {j}]| = {} > 1", l(i, j));
                }
                let lu_ij: f64 = (0..k).map(|t| l(i, t) * u(t, j)).sum();
                let err = (lu_ij - a[perm[i] + j * m]).abs();
                assert!(err <= tol, "{m}×{n}: |(L U − P A)[{i}, {j}]| = {err:e} > {tol:e}");
            }
        }
        // The pivots, replayed on the exact product: column j of the
        // reduced matrix at step j is (P A)[j.., j] − L[j.., ..j] U[..j, j],
        // whose first entry of largest size is row j (to rounding: a tie
        // within tol may go either way).
        for j in 0..k {
            let reduced = |i: usize| a[perm[i] + j * m] - (0..j).map(|t| l(i, t) * u(t, j)).sum::<f64>();
            let pivot = reduced(j).abs();
            for i in j + 1..m {
                assert!(reduced(i).abs() <= pivot + tol, "{m}×{n}: row {i} beats pivot {j}");
            }
        }
        ((0..n).flat_map(|j| w[j * ld..j * ld + m].to_vec()).collect(), perm)
    }

    /// A deterministic m×n matrix with entries in [−0.5, 0.5).
    fn matrix(m: usize, n: usize, seed: usize) -> Vec<f64> {
        (0..m * n).map(|k| ((k * 7919 + seed * 104_729) % 1009) as f64 / 1009.0 - 0.5).collect()
    }

    #[test]
    fn factors_square_and_rectangular_in_f64_and_f32() {
        for (m, n) in
            (1..=20).map(|n| (n, n)).chain([(48, 48), (5, 3), (3, 5), (48, 17), (17, 48), (1, 9), (9, 1)])
        {
            for ld in [m, m + 3] {
                check::<f64>(&matrix(m, n, 1), m, n, ld);
                check::<f32>(&matrix(m, n, 2), m, n, ld);
            }
        }
    }

    /// Entries in {−1, 0, 1}: ties everywhere, each resolved to the first
    /// row of largest size (the replay in `check`), and singular matrices
    /// among them factor without NaN.
    #[test]
    fn ties_and_singular_matrices() {
        for seed in 0..200 {
            let n = 2 + seed % 7;
            let a: Vec<f64> = (0..n * n).map(|k| ((k * 31 + seed * 17) % 3) as f64 - 1.0).collect();
            let (lu, _) = check::<f64>(&a, n, n, n);
            assert!(lu.iter().all(|x| x.is_finite()), "seed {seed}: finite factors");
        }
        // The first of equal entries is the pivot: no swap, in a short
        // column and in a long one (the lane search).
        let (_, perm) = check::<f64>(&[1.0, -1.0, 2.0, 3.0], 2, 2, 2);
        assert_eq!(perm, [0, 1]);
        let mut a = matrix(20, 20, 4);
        a[..20].iter_mut().enumerate().for_each(|(i, x)| *x = if i % 3 == 0 { -1.0 } else { 1.0 });
        let (_, perm) = check::<f64>(&a, 20, 20, 20);
        assert_eq!(perm[0], 0, "the first of twenty ±1 entries");
        a[0] = 0.5;
        let (_, perm) = check::<f64>(&a, 20, 20, 20);
        assert_eq!(perm[0], 1, "the first of nineteen ±1 entries");
    }

    /// A zero pivot column is skipped (L's column stays zero, U's pivot is
    /// zero); a subnormal pivot divides without overflow; a NaN reaches
    /// U's diagonal.
    #[test]
    fn zero_subnormal_and_nan_pivots() {
        let (lu, perm) = check::<f64>(&[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 7.0], 3, 3, 3);
        assert_eq!(&lu[..3], &[0.0, 0.0, 0.0], "the zero column stays zero");
        assert_eq!(perm[0], 0, "no swap for a zero column");
        let tiny = 4.0 * f64::MIN_POSITIVE * f64::EPSILON;
        let (lu, _) = check::<f64>(&[tiny, tiny / 2.0, 1.0, 1.0], 2, 2, 2);
        assert_eq!(lu[1], 0.5, "l = (tiny/2)/tiny, exactly");
        let mut a = matrix(6, 6, 3);
        a[3 + 2 * 6] = f64::NAN;
        // A column of zeros and a NaN below the diagonal: its elimination
        // step is skipped, so the NaN would stay in L.
        let mut b = vec![0.0; 9];
        b[0] = 1.0;
        b[5] = f64::NAN;
        b[7] = 2.0;
        b[8] = 3.0;
        for (mut w, n) in [(a, 6), (b, 3)] {
            let mut perm = vec![0; n];
            factor(MatMut::from_column_major_slice_mut(&mut w, n, n), &mut perm);
            assert!((0..n).any(|i| w[i * (n + 1)].is_nan()), "{n}×{n}: a NaN reaches U's diagonal");
        }
    }
}
