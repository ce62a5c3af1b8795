//! Partial-pivot LU kernels (`lu`, `lu_factor`, `lu_factor_solve`,
//! `lu_solve_prepared`) over faer's scratch APIs, and the factorization
//! helpers the determinant kernels share.
//!
//! Convention: `P a = L U` with `(P a)[i, :] = a[perm[i], :]`, L unit lower
//! triangular, U upper triangular; permutations are `i64` vectors.
//!
//! Singular matrices factor without error. faer's blocked LU puts NaN in L
//! when a pivot column is exactly zero (it scales by `1 / 0`), so a factor
//! with a non-finite entry is redone by [`factor_unblocked`], a LAPACK-style
//! right-looking LU that leaves a zero pivot column as zeros (for example a
//! zero matrix gives `L = I`, `U = 0`). Only the solves report singularity:
//! an exactly zero pivot `U[k, k]` is [`Failure::Singular`].
//!
//! `lu_solve_prepared` validates its `perm` input: a vector that is not a
//! permutation of `0..n` (an entry out of range or repeated) selects rows
//! with a singular 0/1 matrix and is reported as `Singular("perm")`.

use super::columns::copy_mat;
use super::finite::{all_finite, check_finite};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{DynArray, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::lu::partial_pivoting::solve::{
    solve_in_place_scratch, solve_in_place_with_conj, solve_transpose_in_place_scratch,
    solve_transpose_in_place_with_conj,
};
use faer::linalg::matmul::matmul;
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::perm::PermRef;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Conj, MatMut, MatRef, Par};
use lindiff_core::op::{Lu, LuFactor, LuFactorSolve, LuSolvePrepared, MatOp};
use lindiff_core::{LinalgOp, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// `|re| + |im|`: the pivot score of faer and LAPACK.
pub(super) fn abs1<T: Field>(x: T) -> Re<T> {
    Scalar::abs(Scalar::re(x)) + Scalar::abs(Scalar::im(x))
}

/// `x / s` for a real `s`, part by part (no overflow for a subnormal `s`).
pub(super) fn div_real<T: Field>(x: T, s: Re<T>) -> T {
    T::from_parts(Scalar::re(x) / s, Scalar::im(x) / s)
}

/// Carves a forward and an inverse permutation array of length `n`.
pub(super) fn carve_perms(
    stack: &mut MemStack,
    n: usize,
) -> (DynArray<'_, usize>, DynArray<'_, usize>, &mut MemStack) {
    let (fwd, stack) = stack.make_with(n, |i| i);
    let (inv, stack) = stack.make_with(n, |i| i);
    (fwd, inv, stack)
}

/// What the diagonal of the packed factor `lu` holds, in one pass.
pub(super) struct Pivots {
    /// Every diagonal entry is finite.
    pub(super) finite: bool,
    /// Some diagonal entry is exactly zero.
    pub(super) zero: bool,
}

/// Scans the diagonal of the packed factor `lu`.
pub(super) fn pivots<T: Field>(lu: MatRef<'_, T>) -> Pivots {
    let mut p = Pivots { finite: true, zero: false };
    for k in 0..lu.nrows().min(lu.ncols()) {
        let d = lu[(k, k)];
        p.finite &= Scalar::is_finite(d);
        p.zero |= d == T::zero();
    }
    p
}

/// Scratch of [`factor`] for an m×n matrix plus its two perm arrays (m
/// each, carved first with [`carve_perms`]).
pub(super) fn factor_scratch<T: Field>(m: usize, n: usize, par: Par) -> StackReq {
    perms_scratch(m).and(factor_only_scratch::<T>(m, n, par))
}

/// Scratch of [`carve_perms`].
pub(super) fn perms_scratch(n: usize) -> StackReq {
    StackReq::new::<usize>(n).array(2)
}

/// Scratch of [`factor`] itself (the stack it is handed).
fn factor_only_scratch<T: Field>(m: usize, n: usize, par: Par) -> StackReq {
    lu_in_place_scratch::<usize, T>(m, n, par, Default::default())
}

/// Factors `a` (m×n) into `lu` (m×n, any contents; overwritten with the packed
/// factors: strictly lower L, U on and above the diagonal), writes the row
/// permutation into `fwd` and its inverse into `inv` (length m each), and
/// returns the number of row transpositions (the parity of `P`). Never fails:
/// singular input gives zero pivots, never NaN (for finite `a`).
pub(super) fn factor<T: Field>(
    a: MatRef<'_, T>,
    mut lu: MatMut<'_, T>,
    fwd: &mut [usize],
    inv: &mut [usize],
    par: Par,
    stack: &mut MemStack,
) -> usize {
    copy_mat(a, lu.rb_mut());
    let (info, _) = lu_in_place(lu.rb_mut(), &mut *fwd, &mut *inv, par, stack, Default::default());
    // faer scales a zero (or subnormal) pivot column by 1/0. In a square
    // factorization every such column feeds a later pivot, so a finite
    // diagonal proves a finite result; rectangular ones are scanned whole.
    let finite = if lu.nrows() == lu.ncols() { pivots(lu.rb()).finite } else { all_finite(lu.rb()) };
    if finite {
        return info.transposition_count;
    }
    // An exactly zero (or subnormal) pivot column: faer scaled it by 1/0.
    lu.copy_from(a);
    let swaps = factor_unblocked(lu.rb_mut(), fwd);
    for (i, &p) in fwd.iter().enumerate() {
        inv[p] = i;
    }
    swaps
}

/// Right-looking partial-pivot LU of `lu` in place (LAPACK ?getf2 style): a
/// zero pivot column is skipped (its L column stays zero). Writes `perm`
/// (length m) and returns the number of row transpositions.
fn factor_unblocked<T: Field>(mut lu: MatMut<'_, T>, perm: &mut [usize]) -> usize {
    let (m, n) = (lu.nrows(), lu.ncols());
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    let mut swaps = 0;
    for j in 0..m.min(n) {
        let (mut piv, mut best) = (j, <Re<T> as Scalar>::zero());
        for i in j..m {
            let score = abs1(lu[(i, j)]);
            if score > best {
                (piv, best) = (i, score);
            }
        }
        if piv != j {
            for c in 0..n {
                let t = lu[(j, c)];
                lu[(j, c)] = lu[(piv, c)];
                lu[(piv, c)] = t;
            }
            perm.swap(j, piv);
            swaps += 1;
        }
        if best == <Re<T> as Scalar>::zero() {
            continue;
        }
        // Divide by the pivot scaled to abs1 = 1: safe for subnormal pivots,
        // and every |entry| ≤ abs1(pivot) keeps the quotients ≤ √2.
        let p = div_real(lu[(j, j)], best);
        for i in j + 1..m {
            lu[(i, j)] = div_real(lu[(i, j)], best) / p;
        }
        // Rank-1 update of the trailing block (faer's allocation-free kernel).
        let (_, top_right, bottom_left, trailing) = lu.rb_mut().split_at_mut(j + 1, j + 1);
        matmul(
            trailing,
            Accum::Add,
            bottom_left.rb().col(j).as_mat(),
            top_right.rb().row(j).as_mat(),
            -<T as Scalar>::one(),
            Par::Seq,
        );
    }
    swaps
}

/// Writes the m×k unit lower factor of the packed `lu` (explicit ones on the
/// diagonal, zeros above) into `l`.
pub(super) fn write_l<T: Field>(lu: MatRef<'_, T>, mut l: MatMut<'_, T>) {
    for j in 0..l.ncols() {
        for i in 0..l.nrows() {
            l[(i, j)] = match i.cmp(&j) {
                core::cmp::Ordering::Greater => lu[(i, j)],
                core::cmp::Ordering::Equal => T::one(),
                core::cmp::Ordering::Less => T::zero(),
            };
        }
    }
}

/// Writes the k×n upper factor of the packed `lu` (zeros below) into `u`.
pub(super) fn write_u<T: Field>(lu: MatRef<'_, T>, mut u: MatMut<'_, T>) {
    for j in 0..u.ncols() {
        for i in 0..u.nrows() {
            u[(i, j)] = if i <= j { lu[(i, j)] } else { T::zero() };
        }
    }
}

/// Writes a permutation into the i64 vector output `out`.
pub(super) fn write_perm(item: &mut Item<'_>, out: usize, perm: &[usize]) {
    let dst = item.out_slice::<i64>(out);
    assert_eq!(dst.len(), perm.len(), "a permutation output has one entry per row");
    for (d, &p) in dst.iter_mut().zip(perm) {
        d.write(p as i64);
    }
}

/// Reads the i64 vector input `input` (length n) into `fwd` and its inverse
/// into `inv`; `Err(Singular(arg))` unless it is a permutation of `0..n`.
pub(super) fn read_perm(
    item: &Item<'_>,
    input: usize,
    arg: &'static str,
    fwd: &mut [usize],
    inv: &mut [usize],
) -> Result<(), Failure> {
    let n = fwd.len();
    inv.fill(usize::MAX);
    for (i, f) in fwd.iter_mut().enumerate() {
        let p = item.get::<i64>(input, i);
        let p = usize::try_from(p).ok().filter(|&p| p < n).ok_or(Failure::Singular(arg))?;
        if inv[p] != usize::MAX {
            return Err(Failure::Singular(arg));
        }
        *f = p;
        inv[p] = i;
    }
    Ok(())
}

/// The `Conj` flag and whether to use the transposed solve for `op`.
pub(super) fn solve_mode(op: MatOp) -> (bool, Conj) {
    match op {
        MatOp::Identity => (false, Conj::No),
        MatOp::Transpose => (true, Conj::No),
        MatOp::Adjoint => (true, Conj::Yes),
    }
}

impl<T: Field> Kernel<T> for Lu {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        temp_mat_scratch::<T>(m, n).and(factor_scratch::<T>(m, n, par))
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        // SAFETY: `factor` overwrites the whole temporary before reading it.
        let (mut lu, stack) = unsafe { temp_mat_uninit::<T, _, _>(a.nrows(), a.ncols(), stack) };
        let mut lu = lu.as_mat_mut();
        let (mut fwd, mut inv, stack) = carve_perms(stack, a.nrows());
        factor(a, lu.rb_mut(), &mut fwd, &mut inv, par, stack);
        write_perm(item, 0, &fwd);
        write_l(lu.rb(), item.out_mat::<T>(1));
        write_u(lu.rb(), item.out_mat::<T>(2));
        Ok(())
    }
}

impl<T: Field> Kernel<T> for LuFactor {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        factor_scratch::<T>(m, n, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        let (mut fwd, mut inv, stack) = carve_perms(stack, a.nrows());
        factor(a, item.out_mat::<T>(0), &mut fwd, &mut inv, par, stack);
        write_perm(item, 1, &fwd);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for LuFactorSolve {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let (_, r) = shapes.input(1);
        StackReq::all_of(&[
            perms_scratch(n),
            factor_only_scratch::<T>(n, n, par).or(solve_in_place_scratch::<usize, T>(n, r, par)),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
        let n = a.nrows();
        let (mut fwd, mut inv, stack) = carve_perms(stack, n);
        {
            // Factor straight into the `lu` output, then solve into `x`.
            let (mut x, mut lu) = item.out_pair::<T, T>(0, 1);
            factor(a, lu.rb_mut(), &mut fwd, &mut inv, par, stack);
            // The inputs are scanned for NaN/∞ only when a result shows one
            // (the scans would cost as much as the small solves): a
            // non-finite entry of `a` always reaches the diagonal of `U` (it
            // is chosen as a pivot, or its row turns non-finite through the
            // trailing updates and every row is a pivot row once), and one of
            // `b` reaches `x`. A finite `a` gives finite factors (see
            // `factor`), so `x` can only overflow.
            let pivots = pivots(lu.rb());
            if !pivots.finite {
                check_finite(a, "a")?;
            }
            if pivots.zero {
                check_finite(b, "b")?;
                return Err(Failure::Singular("a"));
            }
            copy_mat(b, x.rb_mut());
            // SAFETY: `factor` wrote `fwd` as a permutation of 0..n and `inv`
            // as its inverse (faer's, or `factor_unblocked`'s swaps).
            let perm = unsafe { PermRef::new_unchecked(&fwd, &inv, n) };
            solve_in_place_with_conj(lu.rb(), lu.rb(), perm, Conj::No, x.rb_mut(), par, stack);
            if !all_finite(x.rb()) {
                check_finite(b, "b")?;
            }
        }
        write_perm(item, 2, &fwd);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for LuSolvePrepared {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let (_, r) = shapes.input(2);
        StackReq::all_of(&[
            perms_scratch(n),
            solve_in_place_scratch::<usize, T>(n, r, par)
                .or(solve_transpose_in_place_scratch::<usize, T>(n, r, par)),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (lu, b) = (item.mat::<T>(0), item.mat::<T>(2));
        let n = lu.nrows();
        let (mut fwd, mut inv, stack) = carve_perms(stack, n);
        read_perm(item, 1, "perm", &mut fwd, &mut inv)?;
        check_finite(lu, "lu")?;
        check_finite(b, "b")?;
        if pivots(lu).zero {
            return Err(Failure::Singular("lu"));
        }
        let perm = PermRef::new_checked(&fwd, &inv, n);
        let mut x = item.out_mat::<T>(0);
        x.copy_from(b);
        match solve_mode(self.0) {
            (false, conj) => solve_in_place_with_conj(lu, lu, perm, conj, x, par, stack),
            (true, conj) => solve_transpose_in_place_with_conj(lu, lu, perm, conj, x, par, stack),
        }
        Ok(())
    }
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find<T: Field>(op: &LinalgOp) -> Option<&dyn Kernel<T>> {
    match op {
        LinalgOp::Lu(k) => Some(k),
        LinalgOp::LuFactor(k) => Some(k),
        LinalgOp::LuFactorSolve(k) => Some(k),
        LinalgOp::LuSolvePrepared(k) => Some(k),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use lindiff_core::RealScalar;

    #[test]
    fn unblocked_lu_of_zero_column_has_no_nan() {
        let a = Mat::<f64>::from_fn(3, 3, |i, j| if j == 0 { 0.0 } else { (i + 2 * j) as f64 });
        let mut lu = a.clone();
        let mut perm = [0usize; 3];
        let _ = factor_unblocked(lu.as_mut(), &mut perm);
        assert!(all_finite(lu.as_ref()));
        assert_eq!(lu[(0, 0)], 0.0);
    }

    #[test]
    fn abs1_is_sum_of_parts() {
        let z = num_complex::Complex::new(-3.0f64, 4.0);
        assert_eq!(abs1(z), 7.0);
        assert_eq!(<f64 as RealScalar>::to_f64(abs1(-2.5f64)), 2.5);
    }
}
