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
//! [`Failure::Singular`] of `a` (fused solve) or `lu` (prepared solve), and
//! a matrix singular to working precision by the op's `SolveOptions` test
//! (by default the pivot ratio) [`Failure::NearlySingular`]; a
//! `row_perm` / `col_perm` input that is not a permutation of `0..n` is
//! `Singular("row_perm")` / `Singular("col_perm")` (see `lu.rs`).
//!
//! Scale-robust as `lu.rs`: a matrix outside the safe range is factored as
//! `a · 2^e` (so a matrix of subnormal entries is eliminated rather than
//! refused) and U scaled back; the solves scale `b` too, and the prepared
//! solve a copy of `lu` whose pivots lie outside the range.

use super::columns::copy_mat;
use super::finite::check_finite;
use super::lu::{
    carve_perms, copy_scaled, perms_scratch, read_perm, solve_mode, undo_upper, upper_range, write_l,
    write_perm, write_u,
};
use super::range::check_range;
use super::scaling::{scale_mat, Range, Scaling};
use super::singular::{
    estimate_len, estimate_scratch, factored_norm, one_norm, pivots, singular_test, Pivots,
};
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
use lindiff_core::{RealScalar, Scalar};

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

/// Copies `a · 2^e` (e of `scaling`) into `lu` (any contents) and factors
/// it there in place.
fn factor<T: Field>(
    a: MatRef<'_, T>,
    mut lu: MatMut<'_, T>,
    perms: &mut FullPerms<'_>,
    scaling: Scaling,
    par: Par,
    stack: &mut MemStack,
) {
    lu.copy_from(a);
    scaling.apply_mat(lu.rb_mut());
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

/// The pivots of a square full-pivot factor, a refused (subnormal) pivot
/// counted as zero.
fn full_pivots<T: Field>(lu: MatRef<'_, T>) -> Pivots<<T as Scalar>::Real> {
    let mut p = pivots(lu);
    p.zero |= has_singular_pivot(lu);
    p
}

/// The condition estimate's solve with full-pivot factors.
fn vector_solve<'a, T: Field>(
    lu: MatRef<'a, T>,
    rows: PermRef<'a, usize>,
    cols: PermRef<'a, usize>,
    par: Par,
) -> impl FnMut(bool, &mut [T], &mut MemStack) + 'a {
    move |adjoint, v, stack| {
        let n = v.len();
        let x = MatMut::from_column_major_slice_mut(v, n, 1);
        if adjoint {
            solve_transpose_in_place_with_conj(lu, lu, rows, cols, Conj::Yes, x, par, stack);
        } else {
            solve_in_place_with_conj(lu, lu, rows, cols, Conj::No, x, par, stack);
        }
    }
}

/// Scratch of faer's full-pivot solves of one right-hand side, plain and
/// adjoint (the condition estimate's).
fn vector_solves_scratch<T: Field>(n: usize, par: Par) -> StackReq {
    solve_in_place_scratch::<usize, T>(n, 1, par).or(solve_transpose_in_place_scratch::<usize, T>(n, 1, par))
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
        let scaling = check_range(a, "a", Range::Linear)?;
        let (m, n) = (a.nrows(), a.ncols());
        // SAFETY: `factor` overwrites the whole temporary before reading it.
        let (mut lu, stack) = unsafe { temp_mat_uninit::<T, _, _>(m, n, stack) };
        let mut lu = lu.as_mat_mut();
        let (mut perms, stack) = carve_full_perms(stack, m, n);
        factor(a, lu.rb_mut(), &mut perms, scaling, par, stack);
        write_perm(item, 0, &perms.row);
        write_perm(item, 1, &perms.col);
        write_l(lu.rb(), item.out_mat::<T>(2));
        write_u(lu.rb(), item.out_mat::<T>(3), scaling);
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
        let scaling = check_range(a, "a", Range::Linear)?;
        let (mut perms, stack) = carve_full_perms(stack, a.nrows(), a.ncols());
        let mut lu = item.out_mat::<T>(0);
        factor(a, lu.rb_mut(), &mut perms, scaling, par, stack);
        undo_upper(lu, scaling);
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
            StackReq::any_of(&[
                factor_scratch::<T>(n, n, par),
                solve_in_place_scratch::<usize, T>(n, r, par),
                estimate_scratch::<T>(n).and(vector_solves_scratch::<T>(n, par)),
            ]),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
        let a_scaling = check_range(a, "a", Range::Linear)?;
        let b_scaling = check_range(b, "b", Range::Linear)?;
        let n = a.nrows();
        // SAFETY: `factor` overwrites the whole temporary before reading it.
        let (mut lu, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
        let mut lu = lu.as_mat_mut();
        let (mut perms, stack) = carve_full_perms(stack, n, n);
        factor(a, lu.rb_mut(), &mut perms, a_scaling, par, stack);
        let piv = full_pivots(lu.rb());
        let anorm = |_: &mut [T], _: &mut [T]| one_norm(a, a_scaling);
        let solve = vector_solve(lu.rb(), perms.rows(), perms.cols(), par);
        singular_test(&piv, n, self.0.check, anorm, solve, "a", stack)?;
        {
            let mut x = item.out_mat::<T>(0);
            copy_scaled(b, x.rb_mut(), b_scaling);
            let (rows, cols) = (perms.rows(), perms.cols());
            solve_in_place_with_conj(lu.rb(), lu.rb(), rows, cols, Conj::No, x.rb_mut(), par, stack);
            // a' x' = b' with a' = a·2^ea, b' = b·2^eb: x = x'·2^(ea − eb).
            scale_mat(x, a_scaling.exponent() - b_scaling.exponent());
        }
        undo_upper(lu.rb_mut(), a_scaling);
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
        StackReq::all_of(&[
            full_perms_scratch(n, n),
            temp_mat_scratch::<T>(n, n), // `lu` with U scaled into range
            StackReq::new::<T>(n),       // the condition estimate's permutation vector
            StackReq::any_of(&[
                solve_in_place_scratch::<usize, T>(n, r, par),
                solve_transpose_in_place_scratch::<usize, T>(n, r, par),
                estimate_scratch::<T>(n).and(vector_solves_scratch::<T>(n, par)),
            ]),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (lu, b) = (item.mat::<T>(0), item.mat::<T>(3));
        let n = lu.nrows();
        let (mut perms, stack) = carve_full_perms(stack, n, n);
        read_perm(item, 1, "row_perm", &mut perms.row, &mut perms.row_inv)?;
        read_perm(item, 2, "col_perm", &mut perms.col, &mut perms.col_inv)?;
        check_finite(lu, "lu")?;
        let b_scaling = check_range(b, "b", Range::Linear)?;
        // A copy of `lu` with U scaled into the safe range when its pivots
        // lie outside it (factors of a matrix far from O(1), which faer's
        // solve would take for singular below the smallest normal number).
        // SAFETY: the copy is written in full before it is read, and only
        // when it is used.
        let (mut copy, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
        let mut copy = copy.as_mat_mut();
        let scaling = if pivots(lu).in_range() {
            Scaling::NONE
        } else {
            // `lu` is finite (checked above), so `upper_range` is `Some`.
            upper_range(lu).unwrap_or(Scaling::NONE)
        };
        let factors = if scaling.is_none() {
            lu
        } else {
            copy_mat(lu, copy.rb_mut());
            for j in 0..n {
                for i in 0..=j {
                    copy[(i, j)] = scaling.apply(copy[(i, j)]);
                }
            }
            copy.rb()
        };
        let piv = full_pivots(factors);
        let (rows, cols) = (perms.rows(), perms.cols());
        // ‖a‖₁ for the condition estimate from the factors, a = Pᵀ L U Qᵀ.
        let (mut tmp, stack) = stack.make_with(estimate_len(self.1.check, n), |_| T::zero());
        let (row_fwd, col_fwd) = (&perms.row[..], &perms.col[..]);
        let anorm =
            |v: &mut [T], xi: &mut [T]| factored_norm(factors, row_fwd, Some(col_fwd), (v, xi), &mut tmp);
        singular_test(&piv, n, self.1.check, anorm, vector_solve(factors, rows, cols, par), "lu", stack)?;
        let mut x = item.out_mat::<T>(0);
        copy_scaled(b, x.rb_mut(), b_scaling);
        match solve_mode(self.0) {
            (false, conj) => {
                solve_in_place_with_conj(factors, factors, rows, cols, conj, x.rb_mut(), par, stack)
            }
            (true, conj) => {
                solve_transpose_in_place_with_conj(factors, factors, rows, cols, conj, x.rb_mut(), par, stack)
            }
        }
        scale_mat(x, scaling.exponent() - b_scaling.exponent());
        Ok(())
    }
}
