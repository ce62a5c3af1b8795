//! Full-pivot LU kernels (`full_piv_lu`, `full_piv_lu_factor`,
//! `full_piv_lu_solve`, `full_piv_lu_solve_prepared`) over faer's scratch
//! APIs.
//!
//! Convention: `P a Q = L U` with `(P a Q)[i, j] = a[row_perm[i], col_perm[j]]`,
//! L unit lower triangular, U upper triangular. Singular and rectangular
//! matrices factor without error: faer's elimination stops once every
//! remaining entry is below the smallest normal number (zero or subnormal)
//! and leaves that trailing block as it is (zeros for an exactly rank-deficient
//! matrix), so no NaN appears.
//!
//! The solves call a pivot singular when `U[k, k]` is zero or subnormal (both
//! parts below the smallest positive normal number): the pivots faer's
//! elimination refuses (it scores a real entry by |x| and a complex one by
//! its larger part on its SIMD path, by |re| + |im| on its scalar path, and
//! stops below the smallest normal number). That is
//! [`Failure::Singular`] of `a` (fused solve) or `lu` (prepared solve); a
//! `row_perm` / `col_perm` input that is not a permutation of `0..n` is
//! `Singular("row_perm")` / `Singular("col_perm")` (see `lu.rs`).

use super::finite::check_finite;
use super::lu::{carve_perms, perms_scratch, read_perm, solve_mode, write_l, write_perm, write_u};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::lu::full_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::lu::full_pivoting::solve::{
    solve_in_place_scratch, solve_in_place_with_conj, solve_transpose_in_place_scratch,
    solve_transpose_in_place_with_conj,
};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::perm::PermRef;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Conj, MatMut, MatRef, Par};
use lindiff_core::op::{FullPivLu, FullPivLuFactor, FullPivLuSolve, FullPivLuSolvePrepared};
use lindiff_core::{LinalgOp, RealScalar, Scalar};

/// The four permutation arrays of a full-pivot factorization.
struct FullPerms<'s> {
    row: faer::dyn_stack::DynArray<'s, usize>,
    row_inv: faer::dyn_stack::DynArray<'s, usize>,
    col: faer::dyn_stack::DynArray<'s, usize>,
    col_inv: faer::dyn_stack::DynArray<'s, usize>,
}

impl FullPerms<'_> {
    fn rows(&self) -> PermRef<'_, usize> {
        PermRef::new_checked(&self.row, &self.row_inv, self.row.len())
    }
    fn cols(&self) -> PermRef<'_, usize> {
        PermRef::new_checked(&self.col, &self.col_inv, self.col.len())
    }
}

/// Carves the row (m) and column (n) permutation arrays.
fn carve_full_perms(stack: &mut MemStack, m: usize, n: usize) -> (FullPerms<'_>, &mut MemStack) {
    let (row, row_inv, stack) = carve_perms(stack, m);
    let (col, col_inv, stack) = carve_perms(stack, n);
    (FullPerms { row, row_inv, col, col_inv }, stack)
}

/// Scratch of [`carve_full_perms`].
fn full_perms_scratch(m: usize, n: usize) -> StackReq {
    perms_scratch(m).and(perms_scratch(n))
}

/// faer's scratch for an m×n full-pivot factorization.
fn factor_scratch<T: Field>(m: usize, n: usize, par: Par) -> StackReq {
    lu_in_place_scratch::<usize, T>(m, n, par, Default::default())
}

/// Copies `a` into `lu` (any contents) and factors it there in place.
fn factor<T: Field>(
    a: MatRef<'_, T>,
    mut lu: MatMut<'_, T>,
    perms: &mut FullPerms<'_>,
    par: Par,
    stack: &mut MemStack,
) {
    lu.copy_from(a);
    let _ = lu_in_place(
        lu,
        &mut perms.row[..],
        &mut perms.row_inv[..],
        &mut perms.col[..],
        &mut perms.col_inv[..],
        par,
        stack,
        Default::default(),
    );
}

/// `true` when a pivot of the packed `lu` is zero or subnormal: both parts
/// below the smallest positive normal number, the entries faer's elimination
/// refuses (it scores complex entries by their larger part).
fn has_singular_pivot<T: Field>(lu: MatRef<'_, T>) -> bool {
    let tiny = <<T as Scalar>::Real as RealScalar>::MIN_POSITIVE;
    (0..lu.nrows().min(lu.ncols())).any(|k| {
        let u = lu[(k, k)];
        Scalar::abs(Scalar::re(u)) < tiny && Scalar::abs(Scalar::im(u)) < tiny
    })
}

impl<T: Field> Kernel<T> for FullPivLu {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        StackReq::all_of(&[
            temp_mat_scratch::<T>(m, n),
            full_perms_scratch(m, n),
            factor_scratch::<T>(m, n, par),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        let (m, n) = (a.nrows(), a.ncols());
        // SAFETY: `factor` overwrites the whole temporary before reading it.
        let (mut lu, stack) = unsafe { temp_mat_uninit::<T, _, _>(m, n, stack) };
        let mut lu = lu.as_mat_mut();
        let (mut perms, stack) = carve_full_perms(stack, m, n);
        factor(a, lu.rb_mut(), &mut perms, par, stack);
        write_perm(item, 0, &perms.row);
        write_perm(item, 1, &perms.col);
        write_l(lu.rb(), item.out_mat::<T>(2));
        write_u(lu.rb(), item.out_mat::<T>(3));
        Ok(())
    }
}

impl<T: Field> Kernel<T> for FullPivLuFactor {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        full_perms_scratch(m, n).and(factor_scratch::<T>(m, n, par))
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        let (mut perms, stack) = carve_full_perms(stack, a.nrows(), a.ncols());
        factor(a, item.out_mat::<T>(0), &mut perms, par, stack);
        write_perm(item, 1, &perms.row);
        write_perm(item, 2, &perms.col);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for FullPivLuSolve {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let (_, r) = shapes.input(1);
        StackReq::all_of(&[
            temp_mat_scratch::<T>(n, n),
            full_perms_scratch(n, n),
            factor_scratch::<T>(n, n, par).or(solve_in_place_scratch::<usize, T>(n, r, par)),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
        check_finite(a, "a")?;
        check_finite(b, "b")?;
        let n = a.nrows();
        // SAFETY: `factor` overwrites the whole temporary before reading it.
        let (mut lu, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
        let mut lu = lu.as_mat_mut();
        let (mut perms, stack) = carve_full_perms(stack, n, n);
        factor(a, lu.rb_mut(), &mut perms, par, stack);
        if has_singular_pivot(lu.rb()) {
            return Err(Failure::Singular("a"));
        }
        {
            let mut x = item.out_mat::<T>(0);
            x.copy_from(b);
            solve_in_place_with_conj(lu.rb(), lu.rb(), perms.rows(), perms.cols(), Conj::No, x, par, stack);
        }
        item.out_mat::<T>(1).copy_from(lu.rb());
        write_perm(item, 2, &perms.row);
        write_perm(item, 3, &perms.col);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for FullPivLuSolvePrepared {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let (_, r) = shapes.input(3);
        full_perms_scratch(n, n).and(
            solve_in_place_scratch::<usize, T>(n, r, par)
                .or(solve_transpose_in_place_scratch::<usize, T>(n, r, par)),
        )
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (lu, b) = (item.mat::<T>(0), item.mat::<T>(3));
        let n = lu.nrows();
        let (mut perms, stack) = carve_full_perms(stack, n, n);
        read_perm(item, 1, "row_perm", &mut perms.row, &mut perms.row_inv)?;
        read_perm(item, 2, "col_perm", &mut perms.col, &mut perms.col_inv)?;
        check_finite(lu, "lu")?;
        check_finite(b, "b")?;
        if has_singular_pivot(lu) {
            return Err(Failure::Singular("lu"));
        }
        let mut x = item.out_mat::<T>(0);
        x.copy_from(b);
        let (rows, cols) = (perms.rows(), perms.cols());
        match solve_mode(self.0) {
            (false, conj) => solve_in_place_with_conj(lu, lu, rows, cols, conj, x, par, stack),
            (true, conj) => solve_transpose_in_place_with_conj(lu, lu, rows, cols, conj, x, par, stack),
        }
        Ok(())
    }
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find<T: Field>(op: &LinalgOp) -> Option<&dyn Kernel<T>> {
    match op {
        LinalgOp::FullPivLu(k) => Some(k),
        LinalgOp::FullPivLuFactor(k) => Some(k),
        LinalgOp::FullPivLuSolve(k) => Some(k),
        LinalgOp::FullPivLuSolvePrepared(k) => Some(k),
        _ => None,
    }
}
