//! The triangular-solve kernel: `op(a) x = b` (left) or `x op(a) = b`
//! (right) with faer's in-place triangular solves on a copy of `b` written
//! into `x`. Only the named triangle of `a` is read (and not its diagonal
//! when unit). An exactly zero entry on a non-unit diagonal is
//! `Failure::Singular` (as LAPACK's `?trtrs` refuses it; `PivotCheck` adds
//! the pivot-ratio test or turns the check off); a solution beyond
//! the dtype's range is the output range check's (`output_range.rs`).
//! Nothing smaller than zero is refused: a triangular solve's error depends
//! on the right-hand side, not only on the conditioning of `a`, and the
//! substitution is backward stable entry by entry, so a tiny pivot gives
//! the accurate solution of the system as stated.
//!
//! Scale-robust (`super::scaling`, the elimination's range): a non-unit
//! triangle whose largest entry lies outside the range is solved as
//! `a · 2^e` (a copy in the workspace, the only scratch), `b` outside it
//! as `b · 2^f`, and x = x'·2^(e − f) (a unit triangle is not scaled: its
//! implicit diagonal is 1).
//!
//! Every case becomes one left solve `M y = c` with `M` a (possibly
//! transposed, possibly conjugated) view of `a`:
//! the right side `x op(a) = b` is `op(a)ᵀ xᵀ = bᵀ`, solved on the
//! transposed view of `x`; `aᵀ` flips which triangle `M` has, and `aᴴ` is
//! `aᵀ` with `Conj::Yes`.

use super::columns::copy_mat;
use super::range::check_range;
use super::scaling::{abs_max, max_abs, scale_mat, Range, Scaling};
use super::singular::threshold;
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place_with_conj, solve_unit_lower_triangular_in_place_with_conj,
    solve_unit_upper_triangular_in_place_with_conj, solve_upper_triangular_in_place_with_conj,
};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Conj, Par};
use lindiff_core::op::{
    Diagonal, MatOp, PivotCheck, Side, Triangle, TriangularSolve, TriangularSolveOptions,
};
use lindiff_core::{RealScalar, Scalar};

type Re<T> = <T as Scalar>::Real;

/// Whether the left-solve matrix `M` is `a` transposed, and whether it is
/// conjugated, for the given side and op.
fn left_form(opts: &TriangularSolveOptions) -> (bool, Conj) {
    match (opts.side, opts.op) {
        // op(a) x = b.
        (Side::Left, MatOp::Identity) => (false, Conj::No),
        (Side::Left, MatOp::Transpose) => (true, Conj::No),
        (Side::Left, MatOp::Adjoint) => (true, Conj::Yes),
        // x op(a) = b  ⇔  op(a)ᵀ xᵀ = bᵀ.
        (Side::Right, MatOp::Identity) => (true, Conj::No),
        (Side::Right, MatOp::Transpose) => (false, Conj::No),
        (Side::Right, MatOp::Adjoint) => (false, Conj::Yes),
    }
}

impl<T: Field> Kernel<T> for TriangularSolve {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        temp_mat_scratch::<T>(n, n) // `a` scaled into range
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let opts = self.0;
        let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
        let a_scaling = triangle_scaling(a, &opts)?;
        let b_scaling = check_range(b, "b", Range::Linear)?;
        let n = a.nrows();
        // SAFETY: the copy is written in full before it is read, and only
        // when it is used.
        let (mut copy, _) =
            unsafe { temp_mat_uninit::<T, _, _>(n, if a_scaling.is_none() { 0 } else { n }, stack) };
        let mut copy = copy.as_mat_mut();
        let a = if a_scaling.is_none() {
            a
        } else {
            copy_mat(a, copy.rb_mut());
            a_scaling.apply_mat(copy.rb_mut());
            copy.rb()
        };
        let mut x = item.out_mat::<T>(0);
        x.copy_from(b);
        b_scaling.apply_mat(x.rb_mut());
        let (transposed, conj) = left_form(&opts);
        let m = if transposed { a.transpose() } else { a };
        let lower = (opts.triangle == Triangle::Lower) != transposed;
        let rhs = match opts.side {
            Side::Left => x.rb_mut(),
            Side::Right => x.rb_mut().transpose_mut(),
        };
        match (lower, opts.diagonal) {
            (true, Diagonal::NonUnit) => solve_lower_triangular_in_place_with_conj(m, conj, rhs, par),
            (true, Diagonal::Unit) => solve_unit_lower_triangular_in_place_with_conj(m, conj, rhs, par),
            (false, Diagonal::NonUnit) => solve_upper_triangular_in_place_with_conj(m, conj, rhs, par),
            (false, Diagonal::Unit) => solve_unit_upper_triangular_in_place_with_conj(m, conj, rhs, par),
        }
        // op(a') x' = b' with a' = a·2^e, b' = b·2^f: x = x'·2^(e − f).
        scale_mat(x, a_scaling.exponent() - b_scaling.exponent());
        Ok(())
    }
}

/// `Err(NonFinite("a"))` when the part of `a` the solve reads (its triangle,
/// without the diagonal when unit) has a NaN or infinity, then
/// `Err(Singular("a"))` when a non-unit diagonal has an exact zero (unless
/// `PivotCheck::Off`), or a pivot ratio below n·ε (`PivotCheck::Ratio`);
/// otherwise the scaling of that part into the elimination's safe range
/// (none for a unit triangle, whose implicit diagonal cannot scale), from
/// the same pass.
pub fn triangle_scaling<T: Field>(
    a: faer::MatRef<'_, T>,
    opts: &TriangularSolveOptions,
) -> Result<Scaling, Failure> {
    let n = a.nrows();
    let unit = opts.diagonal == Diagonal::Unit;
    let mut max = <<T as lindiff_core::Scalar>::Real as lindiff_core::Scalar>::zero();
    for j in 0..n {
        let (lo, hi) = match opts.triangle {
            Triangle::Lower => (if unit { j + 1 } else { j }, n),
            Triangle::Upper => (0, if unit { j } else { j + 1 }),
        };
        let part = max_abs(a.col(j).subrows(lo, hi - lo).iter().copied()).ok_or(Failure::NonFinite("a"))?;
        max = if part > max { part } else { max };
    }
    if !unit {
        match opts.pivot_check {
            PivotCheck::Zero if (0..n).any(|j| a[(j, j)] == T::zero()) => return Err(Failure::Singular("a")),
            PivotCheck::Ratio => pivot_ratio_test(a, opts.triangle)?,
            _ => {}
        }
    }
    Ok(if unit { Scaling::NONE } else { Scaling::of_max(max, Range::Linear) })
}

/// `PivotCheck::Ratio` for a non-unit triangle: `Singular` for an exactly
/// zero pivot, `NearlySingular` when some pivot is below n·ε of the largest
/// entry beside it in its column of an upper triangle (its row of a lower
/// one: the column of R = Lᴴ), sizes max(|re|, |im|). That column of R
/// holds the projections of a factored matrix's column on the earlier ones,
/// so a dependent column's rounding-level pivot fails, while a diagonal of
/// any grading and any column scaling of R (row scaling of L) pass. The
/// stored triangle alone decides, whatever `op` and `side`, so a solve and
/// its transpose agree.
fn pivot_ratio_test<T: Field>(a: faer::MatRef<'_, T>, triangle: Triangle) -> Result<(), Failure> {
    let n = a.nrows();
    // Each ratio is at most 1 (the pivot is among the entries compared).
    let mut worst = Re::<T>::one();
    for j in 0..n {
        let pivot = abs_max(a[(j, j)]);
        if pivot == Re::<T>::zero() {
            return Err(Failure::Singular("a"));
        }
        // The pivot's column of an upper triangle, its row of a lower one,
        // down to the pivot (finite: the caller scanned the triangle).
        let column = (0..=j).map(|k| match triangle {
            Triangle::Upper => a[(k, j)],
            Triangle::Lower => a[(j, k)],
        });
        let ratio = pivot / max_abs(column).unwrap_or(pivot);
        if ratio < worst {
            worst = ratio;
        }
    }
    if worst < threshold::<Re<T>>(n) {
        Err(Failure::NearlySingular { arg: "a", rcond: worst.to_f64() })
    } else {
        Ok(())
    }
}
