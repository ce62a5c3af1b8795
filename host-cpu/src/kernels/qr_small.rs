//! lindiff's own Householder QR for small real matrices (both dimensions
//! up to [`SMALL_UP_TO`]), where faer's blocked kernel and its block
//! Householder apply spend most of their time on dispatch and bookkeeping
//! (n = 8: 2.3 µs for ~1.4k flops of factor and Q).
//!
//! Unblocked, as LAPACK's `?geqr2` and `?org2r`. Step k turns column k,
//! rows k..m, x = (α, x₁), into (β, 0) with H_k = I − τ v vᵀ, v = (1, v₁):
//! β = −sign(α)·‖x‖, τ = (β − α)/β and v₁ = x₁/(α − β) (`?larfg`; the sign
//! keeps α − β free of cancellation, so |v₁| ≤ 1 and τ ∈ [1, 2]); where
//! x₁ = 0, H_k = I; where x is negligible against the whole column (the
//! matrix is rank deficient there), x is set to zero and H_k = I. The later
//! columns take H_k from the left. Q = H₀⋯H_{k−1} applied to the first
//! columns of the identity, accumulated from the last reflector back so
//! that each step touches only the rows and columns it changes. Householder QR is backward stable: Q R = A + E with
//! ‖E‖ ≤ c·m·n·ε·‖A‖ (Higham, *Accuracy and Stability of Numerical
//! Algorithms*, Thm 19.4).

use super::columns::{column, column_ref, dot};
use super::scaling::{max_abs, Range, Scaling};
use crate::field::Field;
use faer::reborrow::ReborrowMut;
use faer::{MatMut, MatRef};
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Largest dimension for which [`factor`] and [`form_q`] serve rather than
/// faer's blocked QR: measured against faer at f64 and f32 (`cargo xtask
/// bench`'s `qr` rows), the own kernel takes 0.3–0.75 of faer's time up to
/// 96 and crosses over near 150.
const SMALL_UP_TO: usize = 96;

/// Whether [`factor`] and [`form_q`] serve the QR of an m×n real `T` with
/// a Q of `qcols` columns.
pub(super) fn serves<T: Field>(m: usize, n: usize, qcols: usize) -> bool {
    super::SMALL_KERNELS && !<T as Scalar>::IS_COMPLEX && m.max(n).max(qcols) <= SMALL_UP_TO
}

with_avx2! {
    /// Factors `qr` (m×n, rows contiguous within each column) in place: R
    /// on and above the diagonal (its diagonal of either sign), the
    /// reflectors' v₁ below it, and their τ in `tau` (length min(m, n)).
    pub(super) fn factor<T: Field>(qr: MatMut<'_, T>, tau: &mut [T]) => factor_body
}

#[inline(always)]
fn factor_body<T: Field>(mut qr: MatMut<'_, T>, tau: &mut [T]) {
    debug_assert!(!<T as Scalar>::IS_COMPLEX, "real matrices only");
    let (m, n) = (qr.nrows(), qr.ncols());
    assert!(tau.len() == m.min(n), "one τ per reflector");
    for (k, tau) in tau.iter_mut().enumerate() {
        let (mut left, right) = qr.rb_mut().split_at_col_mut(k + 1);
        let col = column(left.rb_mut().col_mut(k));
        if negligible(col, k) {
            // Rank deficient here (to 16·(m − k)·ε of the column): R[k, k]
            // = 0 exactly, so that the derivative rule's division by it
            // shows (faer's path gets its zeros through an echelon shift).
            col[k..].fill(T::zero());
            *tau = T::zero();
            continue;
        }
        let x = &mut col[k..];
        let (beta, t) = reflector(x);
        *tau = t;
        if t != T::zero() {
            x[0] = beta;
            reflect(&x[1..], t, right, k);
        }
    }
}

/// Whether what is left of column `col` from row `k` down is negligible
/// against the whole column (whose norm the reflectors so far kept):
/// ‖col[k..]‖ ≤ 16·(m − k)·ε·‖col‖, faer's test for a column to skip
/// (its `qr` factor), applied here to the last row too (faer keeps a
/// diagonal entry with nothing below it: a last column dependent to
/// rounding gives R[k, k] ≈ 0 there, 0 here). With plain sums of squares
/// where the column's is at least len·MIN_POSITIVE/ε (what underflows then
/// blurs only decisions within a fraction of a percent of the threshold);
/// else on the column scaled by a power of two that brings its largest
/// entry into the safe range, so that a column of tiny entries is judged by
/// its shape, not by squares that underflow.
#[inline(always)]
fn negligible<T: Field>(col: &[T], k: usize) -> bool {
    let c = Re::<T>::from_usize(16 * (col.len() - k)) * Re::<T>::EPSILON;
    let whole = sum_of_squares(col);
    let floor = Re::<T>::from_usize(col.len()) * Re::<T>::MIN_POSITIVE / Re::<T>::EPSILON;
    if whole >= floor {
        return sum_of_squares(&col[k..]) <= c * c * whole;
    }
    // The input is finite (scanned before the kernel).
    let big = max_abs(col.iter().copied()).unwrap_or(Re::<T>::zero());
    if big == Re::<T>::zero() {
        return true;
    }
    let scaling = Scaling::of_max(big, Range::Squares);
    let scaled_squares = |xs: &[T]| {
        xs.iter().fold(Re::<T>::zero(), |sum, x| {
            let y = Scalar::re(scaling.apply(*x));
            sum + y * y
        })
    };
    scaled_squares(&col[k..]) <= c * c * scaled_squares(col)
}

/// `?larfg` for the real x = (α, x₁): returns (β, τ) with H x = (β, 0) for
/// H = I − τ (1, v)(1, v)ᵀ, and overwrites x₁ with v (x[0] is left as it
/// is); τ = 0 (H = I, β = α) where x₁ = 0. ‖x‖ is the plain sum of squares
/// where that is at least len·MIN_POSITIVE/ε (the squares lost to
/// underflow are then less than ε of it) and x₁'s squares are not all
/// lost. Below that (the safe-range scaling of the matrix looks at its
/// largest entry only, so a column can be this small), the reflector of
/// x·2^e with x's largest entry in the safe range: τ and v do not change
/// with the scale, β scales back exactly, and no square or reciprocal of a
/// subnormal number enters (either would make H not orthogonal).
#[inline(always)]
fn reflector<T: Field>(x: &mut [T]) -> (T, T) {
    let len = x.len();
    let (head, v) = x.split_at_mut(1);
    let zero = Re::<T>::zero();
    let mut alpha = Scalar::re(head[0]);
    let mut tail = sum_of_squares(v);
    let floor = Re::<T>::from_usize(len) * Re::<T>::MIN_POSITIVE / Re::<T>::EPSILON;
    let mut scaling = Scaling::NONE;
    if alpha * alpha + tail < floor || tail == zero {
        if v.iter().all(|x| *x == T::zero()) {
            return (head[0], T::zero());
        }
        let max = max_abs(core::iter::once(head[0]).chain(v.iter().copied())).unwrap_or(zero);
        scaling = Scaling::of_max(max, Range::Squares);
        alpha = scaling.apply(alpha);
        v.iter_mut().for_each(|x| *x = scaling.apply(*x));
        tail = sum_of_squares(v);
    }
    let norm = (alpha * alpha + tail).sqrt();
    let beta = if alpha > zero { -norm } else { norm };
    let scale = T::from_real(Re::<T>::one() / (alpha - beta));
    v.iter_mut().for_each(|x| *x *= scale);
    (T::from_real(scaling.undo(beta)), T::from_real((beta - alpha) / beta))
}

/// Σ xᵢ² of a real `x` in eight lanes (`super::columns::dot`: short
/// columns need the lanes more than long ones).
#[inline(always)]
fn sum_of_squares<T: Field>(x: &[T]) -> Re<T> {
    Scalar::re(dot(x, x))
}

/// Applies H = I − τ (1, v)(1, v)ᵀ to rows `k..` of every column of `cols`.
#[inline(always)]
fn reflect<T: Field>(v: &[T], tau: T, mut cols: MatMut<'_, T>, k: usize) {
    for c in 0..cols.ncols() {
        let x = &mut column(cols.rb_mut().col_mut(c))[k..];
        let (head, rest) = x.split_at_mut(1);
        let w = tau * (head[0] + dot(v, rest));
        head[0] -= w;
        rest.iter_mut().zip(v).for_each(|(x, v)| *x -= w * *v);
    }
}

with_avx2! {
    /// Writes Q·D into `q` (m×q, q ≥ k = `tau.len()` columns, rows
    /// contiguous within each column): Q = H₀⋯H_{k−1} from the reflectors
    /// `factor` left in `qr`, its first k columns scaled by `signs` (±1:
    /// the sign that makes R's diagonal entry ≥ 0, as `super::qr` applies
    /// it to R's rows).
    pub(super) fn form_q<T: Field>(qr: MatRef<'_, T>, tau: &[T], signs: &[T], q: MatMut<'_, T>) => form_q_body
}

#[inline(always)]
fn form_q_body<T: Field>(qr: MatRef<'_, T>, tau: &[T], signs: &[T], mut q: MatMut<'_, T>) {
    debug_assert!(!<T as Scalar>::IS_COMPLEX, "real matrices only");
    let (m, k) = (q.nrows(), tau.len());
    assert!(signs.len() == k && q.ncols() >= k && qr.nrows() == m, "q is m×q, q ≥ k");
    for j in 0..q.ncols() {
        let col = column(q.rb_mut().col_mut(j));
        col.fill(T::zero());
        if j < m {
            col[j] = if j < k { signs[j] } else { T::one() };
        }
    }
    // Backward: H_i acts on rows i.. of columns i.. (the columns before are
    // still d_j e_j there, the rows before still zero).
    for i in (0..k).rev() {
        let v = &column_ref(qr.col(i))[i + 1..];
        let (mut left, right) = q.rb_mut().split_at_col_mut(i + 1);
        reflect(v, tau[i], right, i);
        // Column i is d_i e_i: H_i d_i e_i = d_i (1 − τ, −τ v).
        let col = &mut column(left.rb_mut().col_mut(i))[i..];
        let (head, rest) = col.split_at_mut(1);
        let d = head[0];
        head[0] = d - tau[i] * d;
        rest.iter_mut().zip(v).for_each(|(x, v)| *x = -(tau[i] * d) * *v);
    }
}

#[cfg(test)]
mod tests {
    use super::{factor, form_q};
    use crate::field::Field;
    use faer::{MatMut, MatRef};
    use lindiff_core::{RealScalar, Scalar};

    /// The real value of a real `T`.
    fn f<T: Field>(x: T) -> f64 {
        Scalar::re(x).to_f64()
    }

    /// Factors the m×n column-major `a` (stored with column stride `ld`,
    /// NaN in the rows between, which must never be read), forms a Q of
    /// `qcols` columns with the signs that make R's diagonal ≥ 0, and
    /// checks the definition: QᵀQ = I, R = D·(upper triangle) has a
    /// diagonal ≥ 0, and Q[:, ..k]·R = A, to c·m·n·ε (with ‖A‖ ≤ 1).
    fn check<T: Field>(a: &[f64], m: usize, n: usize, qcols: usize, ld: usize) {
        let k = m.min(n);
        let mut w = vec![T::from_f64(f64::NAN); ld * n];
        for j in 0..n {
            for i in 0..m {
                w[i + j * ld] = T::from_f64(a[i + j * m]);
            }
        }
        let mut tau = vec![T::zero(); k];
        factor(MatMut::from_column_major_slice_with_stride_mut(&mut w, m, n, ld), &mut tau);
        let signs: Vec<T> =
            (0..k).map(|i| T::from_f64(if f(w[i + i * ld]) < 0.0 { -1.0 } else { 1.0 })).collect();
        let mut q = vec![T::from_f64(f64::NAN); ld * qcols];
        form_q(
            MatRef::from_column_major_slice_with_stride(&w, m, n, ld),
            &tau,
            &signs,
            MatMut::from_column_major_slice_with_stride_mut(&mut q, m, qcols, ld),
        );
        let q = |i: usize, j: usize| f(q[i + j * ld]);
        let r = |i: usize, j: usize| if i <= j { f(signs[i]) * f(w[i + j * ld]) } else { 0.0 };
        let tol = 16.0 * m.max(n) as f64 * <T as Scalar>::Real::EPSILON.to_f64();
        for i in 0..qcols {
            for j in 0..qcols {
                let dot: f64 = (0..m).map(|t| q(t, i) * q(t, j)).sum();
                let err = (dot - if i == j { 1.0 } else { 0.0 }).abs();
                assert!(err <= tol, "{m}×{n}, {qcols} columns: |(QᵀQ − I)[{i}, {j}]| = {err:e}");
            }
        }
        for i in 0..k {
            assert!(r(i, i) >= 0.0, "{m}×{n}: r[{i}, {i}] = {} < 0", r(i, i));
        }
        for i in 0..m {
            for j in 0..n {
                let qr: f64 = (0..k).map(|t| q(i, t) * r(t, j)).sum();
                let err = (qr - a[i + j * m]).abs();
                assert!(err <= tol, "{m}×{n}: |(Q R − A)[{i}, {j}]| = {err:e} > {tol:e}");
            }
        }
    }

    /// A deterministic m×n matrix with entries in [−0.5, 0.5).
    fn matrix(m: usize, n: usize, seed: usize) -> Vec<f64> {
        (0..m * n).map(|k| ((k * 7919 + seed * 104_729) % 1009) as f64 / 1009.0 - 0.5).collect()
    }

    /// Square, tall (thin and complete Q) and wide matrices, every size to
    /// 20 and the largest the kernel serves, packed and with padding, in
    /// f64 and f32.
    #[test]
    fn factors_square_tall_and_wide_in_f64_and_f32() {
        let shapes =
            (1..=20).map(|n| (n, n)).chain([(96, 96), (9, 4), (4, 9), (96, 7), (7, 96), (1, 5), (5, 1)]);
        for (m, n) in shapes {
            let qcols = [m.min(n), m];
            for (ld, qcols) in [m, m + 3].into_iter().flat_map(|ld| qcols.map(|q| (ld, q))) {
                check::<f64>(&matrix(m, n, 1), m, n, qcols, ld);
                check::<f32>(&matrix(m, n, 2), m, n, qcols, ld);
            }
        }
    }

    /// Columns with nothing below the diagonal (H = I, of either sign of
    /// α), a zero column, repeated columns (rank deficient), and a column
    /// whose entries below the diagonal are far smaller than α.
    #[test]
    fn degenerate_columns() {
        // Upper triangular with a negative diagonal entry: every x₁ = 0.
        check::<f64>(&[-2.0, 0.0, 0.0, 1.0, 3.0, 0.0, 4.0, 5.0, -6.0], 3, 3, 3, 3);
        check::<f64>(&[0.0; 12], 4, 3, 4, 4);
        let mut a = matrix(5, 4, 3);
        a.copy_within(0..5, 5);
        a.copy_within(0..5, 15);
        check::<f64>(&a, 5, 4, 5, 5);
        check::<f64>(&[1.0, 1e-200, -1e-190, 0.5, 0.25, 1.0, 0.0, 1.0, 2.0], 3, 3, 3, 3);
    }

    /// R[k, k] of the column factored on the matrix `a` (m×n, packed).
    fn diagonal(a: &[f64], m: usize, n: usize) -> Vec<f64> {
        let mut w = a.to_vec();
        let mut tau = vec![0.0; m.min(n)];
        factor(MatMut::from_column_major_slice_mut(&mut w, m, n), &mut tau);
        (0..m.min(n)).map(|k| w[k + k * m]).collect()
    }

    /// A column that depends on the earlier ones to rounding gets
    /// R[k, k] = 0 exactly (faer's test, so that the derivative rule's
    /// division by it shows); a nearly dependent one (R[1, 1] = 1e−10·√(5/14)
    /// by hand) and a tiny independent one (1e−170 next to 1) do not.
    #[test]
    fn rank_deficient_columns() {
        let rank_one: Vec<f64> = (0..9).map(|k| 1.0 + (k % 3) as f64).collect();
        let d = diagonal(&rank_one, 3, 3);
        assert!(d[0] != 0.0 && d[1] == 0.0 && d[2] == 0.0, "{d:?}");
        check::<f64>(&rank_one, 3, 3, 3, 3);
        let nearly = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0 + 1e-10];
        let r11 = diagonal(&nearly, 3, 2)[1].abs();
        assert!((r11 - 1e-10 * (5.0f64 / 14.0).sqrt()).abs() < 1e-14, "R[1, 1] = {r11:e}");
        let tiny = [1.0, 0.0, 0.0, 1e-170];
        assert_eq!(diagonal(&tiny, 2, 2)[1].abs(), 1e-170);
    }

    /// A column whose squares are subnormal, in part or whole, or whose
    /// entries are, next to an O(1) one (the scaling into the safe range
    /// looks at the largest entry only): the norm must still be right to ε,
    /// or H is not orthogonal (a plain sum of squares gave ‖QᵀQ − I‖ = 1e−2
    /// at 1e−161), and v must stay finite (a reciprocal of a subnormal
    /// α − β overflows).
    #[test]
    fn columns_with_subnormal_squares() {
        for s in [1e-150, 1e-155, 1e-158, 1e-160, 1e-161, 1e-163, 1e-170, 1e-300, 1e-310, 5e-324] {
            check::<f64>(&[1.0, 0.0, 0.0, 0.0, s, s], 3, 2, 3, 3);
            check::<f64>(&[1.0, 0.0, 0.0, 0.0, s, -3.0 * s, 0.5 * s, 2.0 * s], 4, 2, 4, 4);
        }
        for s in [1e-19f32, 1e-20, 1e-21, 1e-22, 1e-23, 1e-30, 1e-40, 1e-45] {
            let s = f64::from(s);
            check::<f32>(&[1.0, 0.0, 0.0, 0.0, s, s], 3, 2, 3, 3);
        }
    }
}
