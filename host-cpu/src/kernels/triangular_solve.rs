//! The triangular-solve kernel: `op(a) x = b` (left) or `x op(a) = b`
//! (right) with faer's in-place triangular solves on a copy of `b` written
//! into `x`. Only the named triangle of `a` is read (and not its diagonal
//! when unit). No scratch; no singularity check (a zero on a non-unit
//! diagonal gives infinities, as the op documents).
//!
//! Every case becomes one left solve `M y = c` with `M` a (possibly
//! transposed, possibly conjugated) view of `a`:
//! the right side `x op(a) = b` is `op(a)ᵀ xᵀ = bᵀ`, solved on the
//! transposed view of `x`; `aᵀ` flips which triangle `M` has, and `aᴴ` is
//! `aᵀ` with `Conj::Yes`.

use super::finite::check_finite;
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place_with_conj, solve_unit_lower_triangular_in_place_with_conj,
    solve_unit_upper_triangular_in_place_with_conj, solve_upper_triangular_in_place_with_conj,
};
use faer::{Conj, Par};
use lindiff_core::op::{Diagonal, MatOp, Side, Triangle, TriangularSolve, TriangularSolveOptions};
use lindiff_core::LinalgOp;

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
    fn scratch(&self, _shapes: &Shapes, _par: Par) -> StackReq {
        StackReq::EMPTY
    }

    fn run(&self, item: &mut Item<'_>, par: Par, _stack: &mut MemStack) -> Result<(), Failure> {
        let opts = self.0;
        let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
        check_triangle_finite(a, &opts)?;
        check_finite(b, "b")?;
        let mut x = item.out_mat::<T>(0);
        x.copy_from(b);
        let (transposed, conj) = left_form(&opts);
        let m = if transposed { a.transpose() } else { a };
        let lower = (opts.triangle == Triangle::Lower) != transposed;
        let rhs = match opts.side {
            Side::Left => x,
            Side::Right => x.transpose_mut(),
        };
        match (lower, opts.diagonal) {
            (true, Diagonal::NonUnit) => solve_lower_triangular_in_place_with_conj(m, conj, rhs, par),
            (true, Diagonal::Unit) => solve_unit_lower_triangular_in_place_with_conj(m, conj, rhs, par),
            (false, Diagonal::NonUnit) => solve_upper_triangular_in_place_with_conj(m, conj, rhs, par),
            (false, Diagonal::Unit) => solve_unit_upper_triangular_in_place_with_conj(m, conj, rhs, par),
        }
        Ok(())
    }
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find<T: Field>(op: &LinalgOp) -> Option<&dyn Kernel<T>> {
    match op {
        LinalgOp::TriangularSolve(k) => Some(k),
        _ => None,
    }
}

/// `Err(NonFinite("a"))` when the part of `a` the solve reads (its triangle,
/// without the diagonal when unit) has a NaN or infinity.
fn check_triangle_finite<T: Field>(
    a: faer::MatRef<'_, T>,
    opts: &TriangularSolveOptions,
) -> Result<(), Failure> {
    let n = a.nrows();
    let unit = opts.diagonal == Diagonal::Unit;
    for j in 0..n {
        let (lo, hi) = match opts.triangle {
            Triangle::Lower => (if unit { j + 1 } else { j }, n),
            Triangle::Upper => (0, if unit { j } else { j + 1 }),
        };
        for i in lo..hi {
            if !lindiff_core::Scalar::is_finite(a[(i, j)]) {
                return Err(Failure::NonFinite("a"));
            }
        }
    }
    Ok(())
}
