//! The triangular-solve kernel (`triangular_solve`) over ?trtrs.
//!
//! Every case is one left solve `M y = c` in LAPACK's terms:
//! * left, `op(a) x = b`: TRANS = N/T/C on `a`, y = x, c = b;
//! * right, `x a = b` ⇔ `aᵀ xᵀ = bᵀ`: TRANS = T, c = bᵀ;
//! * right, `x aᵀ = b` ⇔ `a xᵀ = bᵀ`: TRANS = N, c = bᵀ;
//! * right, `x aᴴ = b` ⇔ `a xᴴ = bᴴ`: TRANS = N, c = bᴴ.
//!
//! Left solves run in the output `x` itself; right solves in a transposed
//! scratch copy. Only the named triangle of `a` is read (not its diagonal
//! when unit); `a` is passed in place when it is column-major, else copied.
//!
//! NaN/∞ in the read triangle of `a` or in `b` is `NonFinite`, an exactly
//! zero entry on a non-unit diagonal `Singular` (host-cpu's
//! `triangle_scaling`, before ?trtrs, which refuses the same matrices); with
//! `PivotCheck::Off` such an item is solved by faer's substitution.
//!
//! Scale-robust as host-cpu's kernel: a non-unit triangle (or `b`) outside
//! the elimination's safe range is solved scaled by a power of two (the
//! triangle in the copy of `a`), and x scaled back.

use super::{carve, copy_in, fits, in_place, info_ok, init_out_slice, int, ld, req, span, view_mut};
use crate::lapack::Lapack;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::triangular_solve::{
    solve_lower_triangular_in_place_with_conj, solve_unit_lower_triangular_in_place_with_conj,
    solve_unit_upper_triangular_in_place_with_conj, solve_upper_triangular_in_place_with_conj,
};
use faer::reborrow::ReborrowMut;
use faer::{Conj, MatMut, MatRef, Par};
use lindiff_core::op::{Diagonal, MatOp, Side, Triangle, TriangularSolveOptions};
use lindiff_cpu::kernel_api::{
    check_range, scale_mat, triangle_scaling, Failure, Item, Kernel, Range, Shapes,
};

/// `triangular_solve` on LAPACK.
pub(super) struct TriangularSolveKernel(pub(super) TriangularSolveOptions);

/// How the right-hand side is laid out for the left solve.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rhs {
    /// c = b (left solves).
    AsIs,
    /// c = bᵀ.
    Transposed,
    /// c = bᴴ.
    Adjoint,
}

/// (TRANS, how c is formed from b) for the options.
fn form(opts: &TriangularSolveOptions) -> (u8, Rhs) {
    match (opts.side, opts.op) {
        (Side::Left, MatOp::Identity) => (b'N', Rhs::AsIs),
        (Side::Left, MatOp::Transpose) => (b'T', Rhs::AsIs),
        (Side::Left, MatOp::Adjoint) => (b'C', Rhs::AsIs),
        (Side::Right, MatOp::Identity) => (b'T', Rhs::Transposed),
        (Side::Right, MatOp::Transpose) => (b'N', Rhs::Transposed),
        (Side::Right, MatOp::Adjoint) => (b'N', Rhs::Adjoint),
    }
}

impl<T: Lapack> Kernel<T> for TriangularSolveKernel {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let (br, bc) = shapes.input(1);
        let rhs = if self.0.side == Side::Right { br * bc } else { 0 };
        // A column-major copy of `a` (used when it is strided), and the
        // transposed right-hand side of a right solve.
        StackReq::all_of(&[req::<T>(rhs), req::<T>(n * n)])
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let opts = self.0;
        let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
        let a_scaling = triangle_scaling(a, &opts)?;
        let b_scaling = check_range(b, "b", Range::Linear)?;
        let n = a.nrows();
        let (trans, rhs) = form(&opts);
        let mut x = item.out_mat::<T>(0);
        // c is n×r in LAPACK's terms.
        let r = if rhs == Rhs::AsIs { b.ncols() } else { b.nrows() };
        let (mut t, stack) = carve::<T>(stack, if rhs == Rhs::AsIs { 0 } else { n * r });
        match rhs {
            Rhs::AsIs => x.copy_from(b),
            Rhs::Transposed => view_mut(&mut t, n, r, ld(n)).copy_from(b.transpose()),
            Rhs::Adjoint => view_mut(&mut t, n, r, ld(n)).copy_from(b.adjoint()),
        }
        match rhs {
            Rhs::AsIs => b_scaling.apply_mat(x.rb_mut()),
            _ => b_scaling.apply_mat(view_mut(&mut t, n, r, ld(n))),
        }
        if n == 0 || r == 0 {
            if rhs != Rhs::AsIs {
                x.fill(T::zero()); // empty anyway: n = 0 or r = 0
            }
            return Ok(());
        }
        let uplo = if opts.triangle == Triangle::Lower { b'L' } else { b'U' };
        let diag = if opts.diagonal == Diagonal::Unit { b'U' } else { b'N' };
        let direct = in_place(a).filter(|_| a_scaling.is_none());
        let (mut copy, _) = carve::<T>(stack, if direct.is_some() { 0 } else { n * n });
        let (aslice, lda) = match direct {
            Some(v) => v,
            None => {
                copy_in(a, &mut copy, ld(n));
                a_scaling.apply_mat(view_mut(&mut copy, n, n, ld(n)));
                (&copy[..], ld(n))
            }
        };
        fits(aslice.len(), span(n, n, lda));
        {
            let c: &mut [T] = match rhs {
                // SAFETY: `copy_from` wrote every element of `x`.
                Rhs::AsIs => unsafe { init_out_slice(&mut x) },
                _ => &mut t,
            };
            fits(c.len(), span(n, r, ld(n)));
            // SAFETY: A is n×n with its leading dimension and B n×r with
            // LDB = n (both checked above).
            let info = unsafe {
                T::trtrs(
                    uplo,
                    trans,
                    diag,
                    int(n),
                    int(r),
                    aslice.as_ptr(),
                    int(lda),
                    c.as_mut_ptr(),
                    int(ld(n)),
                )
            };
            if info_ok("?trtrs", info) > 0 {
                // An exactly zero diagonal entry, which `triangle_scaling`
                // let through (`PivotCheck::Off`): ?trtrs solved
                // nothing (c is still the right-hand side); substitute with
                // faer.
                let a = MatRef::from_column_major_slice_with_stride(aslice, n, n, lda);
                substitute(a, &opts, trans, view_mut(c, n, r, ld(n)));
            }
        }
        match rhs {
            Rhs::AsIs => {}
            Rhs::Transposed => x.copy_from(view_mut(&mut t, n, r, ld(n)).transpose()),
            Rhs::Adjoint => x.copy_from(view_mut(&mut t, n, r, ld(n)).adjoint()),
        }
        // op(a') x' = b' with a' = a·2^e, b' = b·2^f: x = x'·2^(e − f).
        scale_mat(x, a_scaling.exponent() - b_scaling.exponent());
        Ok(())
    }
}

/// The plain substitution `op(a) c ← c` (TRANS as for ?trtrs) with faer,
/// for a zero pivot the options propagate.
fn substitute<T: Lapack>(a: MatRef<'_, T>, opts: &TriangularSolveOptions, trans: u8, c: MatMut<'_, T>) {
    let (m, conj) = match trans {
        b'N' => (a, Conj::No),
        b'T' => (a.transpose(), Conj::No),
        _ => (a.transpose(), Conj::Yes),
    };
    let lower = (opts.triangle == Triangle::Lower) == (trans == b'N');
    let par = Par::Seq;
    match (lower, opts.diagonal) {
        (true, Diagonal::NonUnit) => solve_lower_triangular_in_place_with_conj(m, conj, c, par),
        (true, Diagonal::Unit) => solve_unit_lower_triangular_in_place_with_conj(m, conj, c, par),
        (false, Diagonal::NonUnit) => solve_upper_triangular_in_place_with_conj(m, conj, c, par),
        (false, Diagonal::Unit) => solve_unit_upper_triangular_in_place_with_conj(m, conj, c, par),
    }
}
