//! lindiff's own symmetric eigendecomposition for small real matrices (n up
//! to [`SMALL_UP_TO`]), where faer's kernel spends most of its time on
//! dispatch, blocked-algorithm bookkeeping and a Givens construction with
//! a long dependency chain (n = 16: 19 µs for ~40k flops).
//!
//! Three unblocked steps, as LAPACK's `?sytd2`, `?orgtr` and `?steqr`:
//! 1. Tridiagonalisation from the lower triangle: step i turns column i
//!    below row i + 1 into zeros with the reflector H_i = I − τ v vᵀ of
//!    `super::qr_small` (`?larfg`'s sign choice), applied from both sides
//!    as the rank-2 update A ← A − v wᵀ − w vᵀ with p = τ A v and
//!    w = p − ½ τ (pᵀv) v. The diagonal d and off-diagonal e are left.
//! 2. With vectors, Z = H₀⋯H_{n−2} (the reflectors act on rows 1..), formed
//!    by `super::qr_small`'s accumulation.
//! 3. The implicit QL iteration with Wilkinson's shift on (d, e), the
//!    rotations applied to Z's columns; e[m] is negligible, and the matrix
//!    splits there, when |e[m]| ≤ ε·(|d[m]| + |d[m+1]|). Each eigenvalue
//!    gets at most [`MAX_ITERATIONS`] iterations; past that the caller
//!    falls back to faer's kernel. The eigenvalues are then sorted
//!    ascending, Z's columns with them.
//!
//! Every step is a sequence of orthogonal transformations, so the result is
//! backward stable: Z Λ Zᵀ = A + E with ‖E‖ ≤ c·n²·ε·‖A‖ and Z orthogonal to
//! c·n·ε (Golub and Van Loan, *Matrix Computations*, §8.3); the deflation
//! test keeps each eigenvalue within ε·‖A‖ of exact. The caller scales A
//! into the range where squares neither overflow nor underflow
//! (`super::scaling`), which the norms here rely on.

use super::columns::{column, column_ref, dot};
use super::qr_small::{form_q_body, reflector};
use crate::field::Field;
use faer::dyn_stack::StackReq;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::MatMut;
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Largest n for which [`eigh`] serves rather than faer's
/// `self_adjoint_evd` (measured against faer at f64 and f32: `cargo xtask
/// bench`'s `eigh` rows).
const SMALL_UP_TO: usize = 32;

/// QL iterations per eigenvalue before giving up (LAPACK's `?steqr` allows
/// 30 as well); two or three is typical.
const MAX_ITERATIONS: usize = 30;

/// Whether [`eigh`] serves the eigendecomposition of an n×n `T`.
pub(super) fn serves<T: Field>(n: usize) -> bool {
    super::SMALL_KERNELS && !<T as Scalar>::IS_COMPLEX && n <= SMALL_UP_TO
}

/// Scratch of [`eigh`] for an n×n `T`: the off-diagonal and the τ of the
/// reflectors.
pub(super) fn scratch<T: Field>(n: usize) -> StackReq {
    StackReq::new::<T>(n).array(2)
}

with_avx2! {
    /// The eigenvalues of the real symmetric matrix whose lower triangle is
    /// in `a` (n×n, rows contiguous within each column; overwritten with
    /// the reflectors) into `w` (n, ascending) and, with `z` (n×n, same
    /// layout), the orthonormal eigenvectors into its columns (signs as
    /// they come). `e` and `tau` (n each) are workspace. `false` when the
    /// QL iteration did not converge (`w` and `z` then hold no result).
    pub(super) fn eigh<T: Field>(
        a: MatMut<'_, T>,
        w: &mut [T],
        z: Option<MatMut<'_, T>>,
        e: &mut [T],
        tau: &mut [T],
    ) -> bool => eigh_body
}

#[inline(always)]
fn eigh_body<T: Field>(
    mut a: MatMut<'_, T>,
    w: &mut [T],
    mut z: Option<MatMut<'_, T>>,
    e: &mut [T],
    tau: &mut [T],
) -> bool {
    debug_assert!(!<T as Scalar>::IS_COMPLEX, "real matrices only");
    let n = a.nrows();
    assert!(w.len() == n && e.len() == n && tau.len() == n, "w, e and tau have n entries");
    if n == 0 {
        return true;
    }
    tridiagonalize(a.rb_mut(), w, e, tau);
    if let Some(z) = z.as_mut() {
        let mut z = z.rb_mut();
        for j in 0..n {
            column(z.rb_mut().col_mut(j)).fill(T::zero());
        }
        z[(0, 0)] = T::one();
        if n > 1 {
            let ones = [T::one(); SMALL_UP_TO];
            form_q_body(
                a.rb().submatrix(1, 0, n - 1, n - 1),
                &tau[..n - 1],
                &ones[..n - 1],
                z.submatrix_mut(1, 1, n - 1, n - 1),
            );
        }
    }
    if !ql(w, e, z.as_mut().map(|z| z.rb_mut())) {
        return false;
    }
    sort(w, z);
    true
}

/// `?sytd2` on the lower triangle of `a`: the diagonal into `d`, the
/// off-diagonal into `e[..n − 1]` (e[n − 1] = 0), the reflectors' v below
/// the subdiagonal of `a` and their τ into `tau[..n − 1]` (tau[n − 1] = 0).
#[inline(always)]
fn tridiagonalize<T: Field>(mut a: MatMut<'_, T>, d: &mut [T], e: &mut [T], tau: &mut [T]) {
    let n = a.nrows();
    for i in 0..n - 1 {
        let (mut left, mut right) = a.rb_mut().split_at_col_mut(i + 1);
        let col = column(left.rb_mut().col_mut(i));
        d[i] = col[i];
        let x = &mut col[i + 1..];
        let (beta, t) = reflector(x);
        e[i] = beta;
        tau[i] = t;
        if t == T::zero() {
            continue;
        }
        // v = (1, x[1..]); the trailing block is A22 = a[i+1.., i+1..].
        x[0] = T::one();
        let v = &*x;
        let p = &mut d[i + 1..];
        // p = τ A22 v from A22's lower triangle, column by column.
        p.fill(T::zero());
        for j in 0..v.len() {
            let c = &column_ref(right.rb().col(j))[i + 1 + j..];
            p[j] += c[0] * v[j] + dot(&c[1..], &v[j + 1..]);
            p[j + 1..].iter_mut().zip(&c[1..]).for_each(|(p, c)| *p += *c * v[j]);
        }
        let alpha = -(T::from_f64(0.5) * t) * dot(p, v) * t;
        p.iter_mut().zip(v).for_each(|(p, v)| *p = *p * t + alpha * *v);
        // A22 −= v wᵀ + w vᵀ, lower triangle.
        for j in 0..v.len() {
            let c = &mut column(right.rb_mut().col_mut(j))[i + 1 + j..];
            let (vj, pj) = (v[j], p[j]);
            c.iter_mut().zip(&v[j..]).zip(&p[j..]).for_each(|((c, v), p)| *c -= *v * pj + *p * vj);
        }
        x[0] = beta;
    }
    d[n - 1] = a[(n - 1, n - 1)];
    e[n - 1] = T::zero();
    tau[n - 1] = T::zero();
}

/// The implicit QL iteration (`?steqr`'s QL branch, as EISPACK's `tql2`)
/// on the diagonal `d` and off-diagonal `e` (e[i] couples i and i + 1),
/// rotating the columns of `z`; `d` ends as the eigenvalues, unsorted.
/// `false` after [`MAX_ITERATIONS`] iterations on one eigenvalue.
#[inline(always)]
fn ql<T: Field>(d: &mut [T], e: &mut [T], mut z: Option<MatMut<'_, T>>) -> bool {
    let n = d.len();
    let re = |x: T| Scalar::re(x);
    let eps = Re::<T>::EPSILON;
    let two = T::from_f64(2.0);
    for l in 0..n {
        let mut iterations = 0;
        loop {
            let mut m = l;
            while m + 1 < n && Scalar::abs(e[m]) > eps * (Scalar::abs(d[m]) + Scalar::abs(d[m + 1])) {
                m += 1;
            }
            if m == l {
                break;
            }
            if iterations == MAX_ITERATIONS {
                return false;
            }
            iterations += 1;
            // Wilkinson's shift from the leading 2×2 block at l.
            let g = (d[l + 1] - d[l]) / (two * e[l]);
            let r = hypot(re(g), Re::<T>::one());
            let signed = if re(g) < Re::<T>::zero() { -r } else { r };
            let mut g = d[m] - d[l] + e[l] / (g + T::from_real(signed));
            let (mut s, mut c, mut p) = (T::one(), T::one(), T::zero());
            let mut split = false;
            for i in (l..m).rev() {
                let (f, b) = (s * e[i], c * e[i]);
                let r = T::from_real(hypot(re(f), re(g)));
                e[i + 1] = r;
                if r == T::zero() {
                    // f = g = 0: the matrix splits at i + 1.
                    d[i + 1] -= p;
                    e[m] = T::zero();
                    split = true;
                    break;
                }
                (s, c) = (f / r, g / r);
                g = d[i + 1] - p;
                let r = (d[i] - g) * s + two * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                if let Some(z) = z.as_mut() {
                    let (mut left, mut right) = z.rb_mut().split_at_col_mut(i + 1);
                    let (zi, zj) = (column(left.rb_mut().col_mut(i)), column(right.rb_mut().col_mut(0)));
                    zi.iter_mut().zip(zj).for_each(|(x, y)| {
                        let f = *y;
                        *y = s * *x + c * f;
                        *x = c * *x - s * f;
                    });
                }
            }
            if split {
                continue;
            }
            d[l] -= p;
            e[l] = g;
            e[m] = T::zero();
        }
    }
    true
}

/// √(x² + y²) without overflow or underflow of the squares: the plain sum
/// where it is a normal number, else scaled by the larger of |x| and |y|.
#[inline(always)]
fn hypot<R: RealScalar>(x: R, y: R) -> R {
    let sum = x * x + y * y;
    if sum >= R::MIN_POSITIVE && sum <= R::MAX {
        return sum.sqrt();
    }
    let (x, y) = (x.abs(), y.abs());
    let (big, small) = if x >= y { (x, y) } else { (y, x) };
    if big == R::zero() {
        return R::zero();
    }
    let q = small / big;
    big * (R::one() + q * q).sqrt()
}

/// Sorts `w` ascending, and the columns of `z` with it (selection sort:
/// n swaps at most).
#[inline(always)]
fn sort<T: Field>(w: &mut [T], mut z: Option<MatMut<'_, T>>) {
    for i in 0..w.len() {
        let mut k = i;
        for j in i + 1..w.len() {
            if Scalar::re(w[j]) < Scalar::re(w[k]) {
                k = j;
            }
        }
        if k == i {
            continue;
        }
        w.swap(i, k);
        if let Some(z) = z.as_mut() {
            let (mut left, mut right) = z.rb_mut().split_at_col_mut(k);
            column(left.rb_mut().col_mut(i)).swap_with_slice(column(right.rb_mut().col_mut(0)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::eigh;
    use crate::field::Field;
    use faer::MatMut;
    use lindiff_core::{RealScalar, Scalar};

    /// The real value of a real `T`.
    fn f<T: Field>(x: T) -> f64 {
        Scalar::re(x).to_f64()
    }

    /// Decomposes the symmetric n×n column-major `a` (only its lower
    /// triangle is handed over: NaN above it) with vectors and without,
    /// and checks the definition: ascending eigenvalues, the same bits
    /// without vectors, ZᵀZ = I and A Z = Z Λ to c·n·ε·‖A‖. Returns them.
    fn check<T: Field>(a: &[f64], n: usize) -> Vec<f64> {
        let lower = || -> Vec<T> {
            (0..n * n)
                .map(|k| if k % n >= k / n { T::from_f64(a[k]) } else { T::from_f64(f64::NAN) })
                .collect()
        };
        let (mut w, mut e, mut tau) = (vec![T::zero(); n], vec![T::zero(); n], vec![T::zero(); n]);
        let mut z = vec![T::from_f64(f64::NAN); n * n];
        let mut work = lower();
        let zm = MatMut::from_column_major_slice_mut(&mut z, n, n);
        assert!(eigh(
            MatMut::from_column_major_slice_mut(&mut work, n, n),
            &mut w,
            Some(zm),
            &mut e,
            &mut tau
        ));
        let mut values = vec![T::zero(); n];
        let mut work = lower();
        assert!(eigh(
            MatMut::from_column_major_slice_mut(&mut work, n, n),
            &mut values,
            None,
            &mut e,
            &mut tau
        ));
        let w: Vec<f64> = w.iter().map(|&x| f(x)).collect();
        assert_eq!(
            w,
            values.iter().map(|&x| f(x)).collect::<Vec<_>>(),
            "n = {n}: values alone, the same bits"
        );
        assert!(w.windows(2).all(|p| p[0] <= p[1]), "n = {n}: ascending {w:?}");
        let norm = a.iter().fold(0.0f64, |m, x| m.max(x.abs())) * n as f64;
        let tol = 8.0 * n as f64 * <T as Scalar>::Real::EPSILON.to_f64();
        let z = |i: usize, j: usize| f(z[i + j * n]);
        for i in 0..n {
            for (j, &wj) in w.iter().enumerate() {
                let dot: f64 = (0..n).map(|k| z(k, i) * z(k, j)).sum();
                let err = (dot - if i == j { 1.0 } else { 0.0 }).abs();
                assert!(err <= tol, "n = {n}: |(ZᵀZ − I)[{i}, {j}]| = {err:e}");
                let az: f64 = (0..n).map(|k| a[i + k * n] * z(k, j)).sum();
                let err = (az - z(i, j) * wj).abs();
                assert!(
                    err <= tol * norm.max(f64::MIN_POSITIVE),
                    "n = {n}: |(A Z − Z Λ)[{i}, {j}]| = {err:e}"
                );
            }
        }
        w
    }

    /// A deterministic symmetric n×n matrix with entries in [−1, 1).
    fn symmetric(n: usize, seed: usize) -> Vec<f64> {
        let b = |k: usize| ((k * 7919 + seed * 104_729) % 1009) as f64 / 1009.0 - 0.5;
        (0..n * n).map(|k| b(k) + b((k % n) * n + k / n)).collect()
    }

    #[test]
    fn decomposes_symmetric_matrices_in_f64_and_f32() {
        for n in 1..=32 {
            check::<f64>(&symmetric(n, 1), n);
            check::<f32>(&symmetric(n, 2), n);
        }
    }

    /// The second-difference matrix tridiag(−1, 2, −1), whose eigenvalues
    /// are 2 − 2 cos(kπ/(n + 1)): computed to n·ε.
    #[test]
    fn known_eigenvalues() {
        for n in [2usize, 7, 16, 32] {
            let a: Vec<f64> = (0..n * n)
                .map(|k| match (k % n).abs_diff(k / n) {
                    0 => 2.0,
                    1 => -1.0,
                    _ => 0.0,
                })
                .collect();
            let w = check::<f64>(&a, n);
            for (k, w) in w.iter().enumerate() {
                let exact = 2.0 - 2.0 * ((k + 1) as f64 * core::f64::consts::PI / (n + 1) as f64).cos();
                assert!(
                    (w - exact).abs() <= 4.0 * n as f64 * f64::EPSILON,
                    "n = {n}: λ{k} = {w}, not {exact}"
                );
            }
        }
    }

    /// Repeated eigenvalues, a diagonal matrix out of order, zero and
    /// identity matrices, and a tridiagonal one that splits (a zero and a
    /// negligible off-diagonal entry).
    #[test]
    fn degenerate_spectra() {
        // Q diag(1, 1, 1, 3, 3) Qᵀ for the reflection Q = I − 2uuᵀ/uᵀu.
        let u = [1.0, -2.0, 0.5, 3.0, 1.5];
        let uu: f64 = u.iter().map(|x| x * x).sum();
        let lam = [1.0, 1.0, 1.0, 3.0, 3.0];
        let q = |i: usize, j: usize| if i == j { 1.0 } else { 0.0 } - 2.0 * u[i] * u[j] / uu;
        let a: Vec<f64> = (0..25).map(|k| (0..5).map(|t| q(k % 5, t) * lam[t] * q(k / 5, t)).sum()).collect();
        let w = check::<f64>(&a, 5);
        for (w, l) in w.iter().zip(lam) {
            assert!((w - l).abs() <= 1e-14, "{w} ≠ {l}");
        }
        let mut d = vec![0.0; 16];
        for (i, x) in [3.0, -1.0, 2.0, -1.0].into_iter().enumerate() {
            d[i * 5] = x;
        }
        assert_eq!(check::<f64>(&d, 4), [-1.0, -1.0, 2.0, 3.0]);
        assert_eq!(check::<f64>(&[0.0; 9], 3), [0.0; 3]);
        let eye: Vec<f64> = (0..16).map(|k| if k % 5 == 0 { 1.0 } else { 0.0 }).collect();
        assert_eq!(check::<f64>(&eye, 4), [1.0; 4]);
        let mut t = vec![0.0; 16];
        for i in 0..4 {
            t[i * 5] = [1.0, 4.0, 2.0, 3.0][i];
        }
        for (i, x) in [(0, 0.5), (1, 0.0), (2, 1e-300)] {
            t[i * 5 + 1] = x;
            t[i * 5 + 4] = x;
        }
        check::<f64>(&t, 4);
    }
}
