//! The singularity tests of the LU solves (`lindiff_core::op::SingularCheck`):
//! the pivot ratio, from the pivots every solve scans anyway, and the
//! 1-norm condition estimate of LAPACK's `?gecon` (Hager's method with
//! Higham's refinements, as `?lacn2`), written once over closures that
//! apply A⁻¹, A⁻ᴴ (or A, Aᴴ) to a vector.

use super::lu::abs1;
use super::scaling::{Range, Scaling};
use crate::batch::Failure;
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::MatRef;
use lindiff_core::op::SingularCheck;
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// What the diagonal of a packed LU factor holds, in one pass: its pivot
/// sizes in |re| + |im| (faer's and LAPACK's pivot score).
#[derive(Clone, Copy, Debug)]
pub struct Pivots<R> {
    /// Every pivot is finite.
    pub finite: bool,
    /// Some pivot is exactly zero.
    pub zero: bool,
    /// The smallest pivot size (0 with a zero pivot, or without pivots).
    pub min: R,
    /// The largest pivot size.
    pub max: R,
}

impl<R: RealScalar> Pivots<R> {
    /// `true` when every nonzero pivot lies in the elimination's safe
    /// range ([`Range::Linear`]), so that no step of the factorization
    /// underflowed or overflowed beyond rounding.
    pub fn in_range(&self) -> bool {
        let (small, big) = Range::Linear.bounds::<R>();
        self.finite && self.max <= big && (self.min == R::zero() || self.min >= small)
    }

    /// min / max, the pivot ratio (1 without pivots).
    pub fn ratio(&self) -> R {
        if self.max == R::zero() {
            if self.zero {
                R::zero()
            } else {
                R::one()
            }
        } else {
            self.min / self.max
        }
    }
}

/// Scans the diagonal of the packed factor `lu`.
pub fn pivots<T: Field>(lu: MatRef<'_, T>) -> Pivots<Re<T>> {
    let k = lu.nrows().min(lu.ncols());
    let mut p = Pivots { finite: true, zero: false, min: Re::<T>::zero(), max: Re::<T>::zero() };
    for i in 0..k {
        let d = lu[(i, i)];
        let size = abs1(d);
        p.finite &= Scalar::is_finite(d);
        p.zero |= d == T::zero();
        p.max = if size > p.max { size } else { p.max };
        p.min = if i == 0 || size < p.min { size } else { p.min };
    }
    p
}

/// n·ε of the dtype: the threshold of every test.
pub(super) fn threshold<R: RealScalar>(n: usize) -> R {
    R::from_usize(n.max(1)) * R::EPSILON
}

/// The checks that need only the pivots: an exactly zero pivot is
/// `Singular(arg)` whatever `check`; the pivot ratio below n·ε is
/// `NearlySingular` unless `check` is `None`.
pub(super) fn pivot_test<R: RealScalar>(
    p: &Pivots<R>,
    n: usize,
    check: SingularCheck,
    arg: &'static str,
) -> Result<(), Failure> {
    if p.zero {
        return Err(Failure::Singular(arg));
    }
    let ratio = p.ratio();
    if check != SingularCheck::None && ratio < threshold::<R>(n) {
        return Err(Failure::NearlySingular { arg, rcond: ratio.to_f64() });
    }
    Ok(())
}

/// The condition test: `NearlySingular` when 1/(anorm · ‖a⁻¹‖₁), with
/// ‖a⁻¹‖₁ estimated by [`one_norm_estimate`] through `solve` (which
/// overwrites a vector v with a⁻¹ v, or a⁻ᴴ v when its flag is `true`), is
/// below n·ε. `v` and `xi` are n-element work vectors.
pub(super) fn condition_test<T: Field>(
    anorm: Re<T>,
    v: &mut [T],
    xi: &mut [T],
    solve: impl FnMut(bool, &mut [T]),
    arg: &'static str,
) -> Result<(), Failure> {
    let n = v.len();
    if n == 0 {
        return Ok(());
    }
    let inverse = one_norm_estimate(v, xi, solve);
    let rcond = Re::<T>::one() / anorm / inverse;
    // A NaN (an overflowing estimate over a zero norm) counts as singular.
    if rcond.partial_cmp(&threshold::<Re<T>>(n)).is_none_or(|o| o.is_lt()) {
        let rcond = if rcond.is_finite_real() { rcond.to_f64() } else { 0.0 };
        return Err(Failure::NearlySingular { arg, rcond });
    }
    Ok(())
}

/// max_j Σ_i |a_ij · 2^e|, the 1-norm of `a` scaled by `scaling` (as the
/// factorization saw it: no overflow for an `a` scaled into range).
pub fn one_norm<T: Field>(a: MatRef<'_, T>, scaling: Scaling) -> Re<T> {
    let mut best = Re::<T>::zero();
    for j in 0..a.ncols() {
        let sum = a.col(j).iter().fold(Re::<T>::zero(), |s, &x| s + scaling.apply(Scalar::abs(x)));
        best = best.max_real(sum);
    }
    best
}

/// x / |x| (1 for 0): the "sign" of Hager's method.
fn sign<T: Field>(x: T) -> T {
    let size = Scalar::abs(x);
    if size == Re::<T>::zero() {
        T::one()
    } else {
        T::from_parts(Scalar::re(x) / size, Scalar::im(x) / size)
    }
}

/// Σ |v_i|.
fn norm1<T: Field>(v: &[T]) -> Re<T> {
    v.iter().fold(Re::<T>::zero(), |s, &x| s + Scalar::abs(x))
}

/// The first index of the largest |v_i|.
fn argmax<T: Field>(v: &[T]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if Scalar::abs(x) > Scalar::abs(v[best]) {
            best = i;
        }
    }
    best
}

/// A lower estimate of ‖M‖₁ for an n×n operator M given by `apply`
/// (overwrites v with M v, or Mᴴ v when its flag is `true`): Hager's method
/// with Higham's refinements, as LAPACK's `?lacn2` — at most 5 iterations
/// of one M and one Mᴴ product, then one with an alternating-sign vector
/// (4–6 products in all, typically). `v` and `xi` are n-element work
/// vectors (n ≥ 1).
pub(super) fn one_norm_estimate<T: Field>(
    v: &mut [T],
    xi: &mut [T],
    mut apply: impl FnMut(bool, &mut [T]),
) -> Re<T> {
    let n = v.len();
    let inv_n = Re::<T>::one() / Re::<T>::from_usize(n);
    v.fill(T::from_real(inv_n));
    apply(false, v);
    if n == 1 {
        return Scalar::abs(v[0]);
    }
    let mut est = norm1(v);
    let sign_of = |v: &mut [T], xi: &mut [T]| {
        for (s, &x) in xi.iter_mut().zip(v.iter()) {
            *s = sign(x);
        }
        v.copy_from_slice(xi);
    };
    sign_of(v, xi);
    apply(true, v);
    let mut j = argmax(v);
    let mut iter = 2;
    loop {
        v.fill(T::zero());
        v[j] = T::one();
        apply(false, v);
        let old = est;
        est = norm1(v);
        if est <= old {
            break;
        }
        sign_of(v, xi);
        apply(true, v);
        let last = j;
        j = argmax(v);
        if Scalar::abs(v[last]) == Scalar::abs(v[j]) || iter >= 5 {
            break;
        }
        iter += 1;
    }
    // Higham's alternating-sign vector catches what the iteration missed.
    let denom = Re::<T>::from_usize(n - 1);
    for (i, x) in v.iter_mut().enumerate() {
        let size = Re::<T>::one() + Re::<T>::from_usize(i) / denom;
        *x = T::from_real(if i % 2 == 0 { size } else { -size });
    }
    apply(false, v);
    let two_thirds = Re::<T>::from_f64(2.0) / Re::<T>::from_usize(3 * n);
    est.max_real(norm1(v) * two_thirds)
}

/// Scratch of the condition estimate's two work vectors (n each).
pub fn estimate_scratch<T: Field>(n: usize) -> StackReq {
    StackReq::new::<T>(n).array(2)
}

/// Length of the permutation work vector of [`factored_norm`] for `check`
/// (0 unless it estimates the condition).
pub fn estimate_len(check: SingularCheck, n: usize) -> usize {
    if check == SingularCheck::ConditionEstimate {
        n
    } else {
        0
    }
}

/// The options' singularity test of a square factorization with pivots
/// `p`: the pivot tests, then for `ConditionEstimate` the condition test
/// with ‖a‖₁ from `anorm` (given two work vectors) and ‖a⁻¹‖₁ estimated
/// through `solve` (v ← a⁻¹ v, or a⁻ᴴ v when its flag is `true`, with the
/// rest of the stack).
pub fn singular_test<T: Field>(
    p: &Pivots<Re<T>>,
    n: usize,
    check: SingularCheck,
    anorm: impl FnOnce(&mut [T], &mut [T]) -> Re<T>,
    mut solve: impl FnMut(bool, &mut [T], &mut MemStack),
    arg: &'static str,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    pivot_test(p, n, check, arg)?;
    if check != SingularCheck::ConditionEstimate || n == 0 {
        return Ok(());
    }
    let (mut v, stack) = stack.make_with(n, |_| T::zero());
    let (mut xi, stack) = stack.make_with(n, |_| T::zero());
    let anorm = anorm(&mut v, &mut xi);
    condition_test(anorm, &mut v, &mut xi, |adjoint, v| solve(adjoint, v, &mut *stack), arg)
}

/// Overwrites `v` with `a v` (or `aᴴ v`) for a = Pᵀ L U Qᵀ given by the
/// packed square factor `lu`, its row permutation `rows` (`rows[i]` = the
/// row of `a` at row i of P a) and, for a full-pivot factor, its column
/// permutation `cols` (`cols[j]` = the column of `a` at column j of a Q),
/// with `tmp` (n elements) for the permutations: the products of the
/// condition estimate of ‖a‖₁ when only the factors are known.
pub(super) fn apply_factored<T: Field>(
    lu: MatRef<'_, T>,
    rows: &[usize],
    cols: Option<&[usize]>,
    adjoint: bool,
    v: &mut [T],
    tmp: &mut [T],
) {
    let n = v.len();
    if !adjoint {
        // v ← Qᵀ v, then U v, then L v, then Pᵀ v.
        if let Some(cols) = cols {
            for (t, &c) in tmp.iter_mut().zip(cols) {
                *t = v[c];
            }
            v.copy_from_slice(tmp);
        }
        for i in 0..n {
            v[i] = (i..n).fold(T::zero(), |s, k| s + lu[(i, k)] * v[k]);
        }
        for i in (0..n).rev() {
            v[i] = (0..i).fold(v[i], |s, k| s + lu[(i, k)] * v[k]);
        }
        for (i, &r) in rows.iter().enumerate() {
            tmp[r] = v[i];
        }
        v.copy_from_slice(tmp);
    } else {
        // v ← P v, then Lᴴ v, then Uᴴ v, then Q v.
        for (t, &r) in tmp.iter_mut().zip(rows) {
            *t = v[r];
        }
        v.copy_from_slice(tmp);
        for i in 0..n {
            v[i] = (i + 1..n).fold(v[i], |s, k| s + Scalar::conj(lu[(k, i)]) * v[k]);
        }
        for i in (0..n).rev() {
            v[i] = (0..=i).fold(T::zero(), |s, k| s + Scalar::conj(lu[(k, i)]) * v[k]);
        }
        if let Some(cols) = cols {
            for (j, &c) in cols.iter().enumerate() {
                tmp[c] = v[j];
            }
            v.copy_from_slice(tmp);
        }
    }
}

/// ‖a‖₁ estimated from square factors (see `apply_factored`) with the
/// work vectors `v`, `xi` and `tmp`.
pub fn factored_norm<T: Field>(
    lu: MatRef<'_, T>,
    rows: &[usize],
    cols: Option<&[usize]>,
    (v, xi): (&mut [T], &mut [T]),
    tmp: &mut [T],
) -> Re<T> {
    if v.is_empty() {
        return Re::<T>::zero();
    }
    one_norm_estimate(v, xi, |adjoint, v| apply_factored(lu, rows, cols, adjoint, v, tmp))
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;

    /// The estimate of an explicit matrix's 1-norm is a lower bound within
    /// a factor of 3 (exact for most matrices).
    #[test]
    fn estimate_is_a_close_lower_bound() {
        for n in [1, 2, 5, 16] {
            for seed in 0..5u64 {
                let m = Mat::<f64>::from_fn(n, n, |i, j| {
                    let x = ((i * 31 + j * 17 + seed as usize * 7) % 13) as f64 - 6.0;
                    x * if j == (seed as usize) % n { 10.0 } else { 1.0 }
                });
                let exact = one_norm(m.as_ref(), Scaling::NONE);
                let (mut v, mut xi) = (vec![0.0; n], vec![0.0; n]);
                let est = one_norm_estimate(&mut v, &mut xi, |adjoint, v| {
                    let w: Vec<f64> = (0..n)
                        .map(|i| (0..n).map(|k| if adjoint { m[(k, i)] } else { m[(i, k)] } * v[k]).sum())
                        .collect();
                    v.copy_from_slice(&w);
                });
                assert!(
                    est <= exact * (1.0 + 1e-12) && est >= exact / 3.0,
                    "n {n} seed {seed}: {est} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn pivot_ratio_and_zero_pivots() {
        let p = Pivots { finite: true, zero: false, min: 1e-17, max: 1.0 };
        assert!(matches!(
            pivot_test(&p, 2, SingularCheck::PivotRatio, "a"),
            Err(Failure::NearlySingular { arg: "a", rcond }) if rcond == 1e-17
        ));
        assert!(pivot_test(&p, 2, SingularCheck::None, "a").is_ok());
        let z = Pivots { finite: true, zero: true, min: 0.0, max: 1.0 };
        assert_eq!(pivot_test(&z, 2, SingularCheck::None, "a"), Err(Failure::Singular("a")));
        let ok = Pivots { finite: true, zero: false, min: 1e-3, max: 1.0 };
        assert!(pivot_test(&ok, 2, SingularCheck::PivotRatio, "a").is_ok());
    }
}
