//! Cholesky kernel (`cholesky`) over ?potrf, lower triangle, in place in the
//! output `l`.
//!
//! The lower triangle of `a` is checked for NaN/∞ (diagonal: real part
//! only) → `NonFinite("a")`, then copied into `l` with a real diagonal and
//! zeros above it; ?potrf factors it there (it does not touch the strict
//! upper triangle). `info > 0` (a pivot that is not > 0) is
//! `NotPositiveDefinite("a")`. ?potrf's diagonal is real.

use super::{check_finite_lower, copy_lower, fits, info_ok, int, ld, out_slice, span};
use crate::lapack::Lapack;
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::ReborrowMut;
use faer::Par;
use lindiff_core::LinalgOp;
use lindiff_cpu::kernel_api::{Failure, Item, Kernel, Shapes};

/// `cholesky` on LAPACK.
pub(super) struct CholeskyKernel;

/// The kernel of `op` if it belongs to this family.
pub(super) fn find(op: &LinalgOp) -> Option<CholeskyKernel> {
    matches!(op, LinalgOp::Cholesky(_)).then_some(CholeskyKernel)
}

impl<T: Lapack> Kernel<T> for CholeskyKernel {
    fn scratch(&self, _shapes: &Shapes, _par: Par) -> StackReq {
        StackReq::EMPTY
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, _stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        check_finite_lower(a)?;
        if n == 0 {
            return Ok(());
        }
        let mut l = item.out_mat::<T>(0);
        copy_lower(a, l.rb_mut());
        // SAFETY: `copy_lower` wrote every element of `l`.
        let buf = unsafe { out_slice(&mut l) };
        fits(buf.len(), span(n, n, ld(n)));
        // SAFETY: A is n×n with LDA = n (checked above).
        let info = unsafe { T::potrf(int(n), buf, int(n)) };
        if info_ok("?potrf", info) > 0 {
            return Err(Failure::NotPositiveDefinite("a"));
        }
        Ok(())
    }
}
