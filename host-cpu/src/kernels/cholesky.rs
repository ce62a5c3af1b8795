//! Cholesky kernel: `Cholesky` (`a = l lᴴ`), over faer's `cholesky_in_place`.
//!
//! * Only the lower triangle of `a` is read, and the imaginary part of its
//!   diagonal is ignored: the lower triangle is copied into the output `l`
//!   with a real diagonal and zeros strictly above it, and factored there in
//!   place. faer reads only the lower triangle, but does not clear an
//!   imaginary diagonal itself, and its SIMD kernel (column-major input)
//!   *writes* the strict upper triangle of each column block (checked: a
//!   nonzero `l[0,1]` for n = 2, contrary to docs/dev/faer-0.24-scratch-apis.md
//!   §10), so the strict upper triangle is zeroed again afterwards.
//! * The lower triangle is checked for NaN/∞ first (the diagonal's real part
//!   only) → `NonFinite("a")`; a pivot that is not > 0 →
//!   `NotPositiveDefinite("a")`.
//! * `l` has zeros strictly above the diagonal and a real positive diagonal
//!   (faer takes the square root of the pivot's real part; any rounding-level
//!   imaginary part is cleared afterwards).
//!
//! Scratch: faer's (one n×1 temporary); no copy, as `l` itself is the
//! working matrix.

use super::eigh::{check_finite_lower, copy_lower_real_diagonal};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::reborrow::ReborrowMut;
use faer::{MatMut, Par};
use lindiff_core::op::Cholesky;
use lindiff_core::{LinalgOp, Scalar};

impl<T: Field> Kernel<T> for Cholesky {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        cholesky_in_place_scratch::<T>(n, par, Default::default())
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        check_finite_lower(a)?;
        let mut l = item.out_mat::<T>(0);
        // The whole of `l` is initialised before faer sees it: zeros above
        // the diagonal, the lower triangle of `a` on and below it.
        zero_strict_upper(l.rb_mut());
        copy_lower_real_diagonal(a, l.rb_mut());
        cholesky_in_place(l.rb_mut(), Default::default(), par, stack, Default::default())
            .map_err(|_| Failure::NotPositiveDefinite("a"))?;
        // faer's SIMD kernel writes rounding garbage into the strict upper
        // triangle of each column block; the output has zeros there.
        zero_strict_upper(l.rb_mut());
        for k in 0..n {
            l[(k, k)] = T::from_real(Scalar::re(l[(k, k)]));
        }
        Ok(())
    }
}

/// Sets the entries of `l` strictly above the diagonal to zero.
fn zero_strict_upper<T: Field>(mut l: MatMut<'_, T>) {
    for j in 0..l.ncols() {
        for i in 0..j.min(l.nrows()) {
            l[(i, j)] = T::zero();
        }
    }
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find<T: Field>(op: &LinalgOp) -> Option<&dyn Kernel<T>> {
    match op {
        LinalgOp::Cholesky(k) => Some(k),
        _ => None,
    }
}
