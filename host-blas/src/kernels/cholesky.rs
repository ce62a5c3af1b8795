//! Cholesky kernel (`cholesky`) over ?potrf, lower triangle, in place in the
//! output `l`.
//!
//! `a` is copied into `l` with a real diagonal, its lower triangle checked
//! for NaN/∞ in the same pass (diagonal: real part only) → `NonFinite("a")`;
//! ?potrf factors it there (it reads and writes only the lower triangle),
//! and the strict upper triangle is zeroed after. `info > 0` (a pivot that is not > 0) is
//! `NotPositiveDefinite("a")`. ?potrf's diagonal is real.

use super::{copy_lower_finite, fits, info_ok, init_out_slice, int, ld, span};
use crate::lapack::Lapack;
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::ReborrowMut;
use faer::Par;
use lindiff_cpu::kernel_api::{Failure, Item, Kernel, Shapes};

/// `cholesky` on LAPACK.
pub(super) struct CholeskyKernel;

impl<T: Lapack> Kernel<T> for CholeskyKernel {
    fn scratch(&self, _shapes: &Shapes, _par: Par) -> StackReq {
        StackReq::EMPTY
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, _stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        if n == 0 {
            return Ok(());
        }
        let mut l = item.out_mat::<T>(0);
        if !copy_lower_finite(a, l.rb_mut()) {
            return Err(Failure::NonFinite("a"));
        }
        // SAFETY: `copy_lower_finite` wrote every element of `l`.
        let buf = unsafe { init_out_slice(&mut l) };
        fits(buf.len(), span(n, n, ld(n)));
        // SAFETY: A is n×n with LDA = n (checked above).
        let info = unsafe { T::potrf(int(n), buf.as_mut_ptr(), int(n)) };
        for j in 1..n {
            l.rb_mut().get_mut(..j, j).fill(T::zero());
        }
        if info_ok("?potrf", info) > 0 {
            return Err(Failure::NotPositiveDefinite("a"));
        }
        Ok(())
    }
}
