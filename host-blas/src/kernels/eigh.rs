//! Hermitian eigendecomposition kernels (`eigh`, `eigh_vals`) over ?syevd /
//! ?heevd (divide and conquer), lower triangle.
//!
//! * Only the lower triangle of `a` is read and the imaginary part of its
//!   diagonal is ignored: the lower triangle is copied with a real diagonal
//!   (into the output `v` itself when vectors are computed, which LAPACK
//!   overwrites with the eigenvectors; else into scratch).
//! * The lower triangle is checked for NaN/∞ first → `NonFinite("a")`;
//!   `info > 0` is `NonConvergence`.
//! * Eigenvalues are real and ascending (LAPACK's order); eigenvectors get
//!   the canonical phase (host-cpu's `canonicalize_columns`).

use super::{
    carve, carve_int, check_finite_lower, copy_lower, fits, info_ok, int, ld, out_slice, queried,
    queried_work, req, span, view_mut,
};
use crate::lapack::{Lapack, Re};
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::ReborrowMut;
use faer::Par;
use lindiff_core::{LinalgOp, Scalar};
use lindiff_cpu::kernel_api::{canonicalize_columns, Failure, Item, Kernel, Shapes};

/// `eigh` (`vectors`) or `eigh_vals` on LAPACK.
pub(super) struct EighKernel {
    vectors: bool,
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find(op: &LinalgOp) -> Option<EighKernel> {
    match op {
        LinalgOp::Eigh(_) => Some(EighKernel { vectors: true }),
        LinalgOp::EighVals(_) => Some(EighKernel { vectors: false }),
        _ => None,
    }
}

/// (lwork, lrwork, liwork) of an n×n ?syevd/?heevd from its query.
fn sizes<T: Lapack>(n: usize, vectors: bool) -> (usize, usize, usize) {
    if n == 0 {
        return (0, 0, 0);
    }
    let (mut a, mut w, mut work) = ([T::zero(); 1], [Re::<T>::zero(); 1], [T::zero(); 1]);
    let (mut rwork, mut iwork) = ([Re::<T>::zero(); 1], [0i32; 1]);
    let jobz = if vectors { b'V' } else { b'N' };
    // SAFETY: a workspace query (LWORK = LRWORK = LIWORK = -1) only writes
    // WORK(1), RWORK(1) and IWORK(1); LDA = n is valid.
    let info = unsafe {
        T::heevd(jobz, b'L', int(n), &mut a, int(n), &mut w, &mut work, -1, &mut rwork, -1, &mut iwork, -1)
    };
    info_ok("?syevd/?heevd workspace query", info);
    let lrwork = if <T as Scalar>::IS_COMPLEX { queried(rwork[0], 1) } else { 0 };
    (queried_work(work[0], 1), lrwork, (iwork[0].max(1)) as usize)
}

impl<T: Lapack> Kernel<T> for EighKernel {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let (work, rwork, iwork) = sizes::<T>(n, self.vectors);
        StackReq::all_of(&[
            req::<T>(if self.vectors { 0 } else { n * n }), // the copy (values only)
            req::<Re<T>>(n),                                // w
            req::<T>(work),
            req::<Re<T>>(rwork),
            req::<i32>(iwork),
        ])
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        if n == 0 {
            return Ok(()); // both outputs are empty
        }
        check_finite_lower(a)?;
        let vectors = self.vectors; // `eigh` always has its `v` output
        let (lwork, lrwork, liwork) = sizes::<T>(n, self.vectors);
        let (mut copy, stack) = carve::<T>(stack, if self.vectors { 0 } else { n * n });
        let (mut w, stack) = carve::<Re<T>>(stack, n);
        let (mut work, stack) = carve::<T>(stack, lwork);
        let (mut rwork, stack) = carve::<Re<T>>(stack, lrwork);
        let (mut iwork, _) = carve_int(stack, liwork);
        fits(w.len(), n);
        fits(rwork.len(), lrwork);
        fits(iwork.len(), liwork);
        let jobz = if vectors { b'V' } else { b'N' };
        let (lwork_i, lrwork_i, liwork_i) = (int(work.len()), int(rwork.len()), int(iwork.len()));
        let info = if vectors {
            let mut v = item.out_mat::<T>(1);
            copy_lower(a, v.rb_mut());
            // SAFETY: `copy_lower` wrote every element of `v`.
            let buf = unsafe { out_slice(&mut v) };
            fits(buf.len(), span(n, n, ld(n)));
            // SAFETY: A is n×n with LDA = n, W n, the work arrays as queried
            // (lengths checked above and passed as LWORK/LRWORK/LIWORK).
            let info = unsafe {
                T::heevd(
                    jobz,
                    b'L',
                    int(n),
                    buf,
                    int(n),
                    &mut w,
                    &mut work,
                    lwork_i,
                    &mut rwork,
                    lrwork_i,
                    &mut iwork,
                    liwork_i,
                )
            };
            if info == 0 {
                canonicalize_columns(v);
            }
            info
        } else {
            fits(copy.len(), span(n, n, n));
            copy_lower(a, view_mut(&mut copy, n, n, n));
            // SAFETY: as above, with the copy as A.
            unsafe {
                T::heevd(
                    jobz,
                    b'L',
                    int(n),
                    &mut copy,
                    int(n),
                    &mut w,
                    &mut work,
                    lwork_i,
                    &mut rwork,
                    lrwork_i,
                    &mut iwork,
                    liwork_i,
                )
            }
        };
        if info_ok("?syevd/?heevd", info) > 0 {
            return Err(Failure::NonConvergence);
        }
        for (i, &x) in w.iter().enumerate() {
            item.set::<Re<T>>(0, i, x);
        }
        Ok(())
    }
}
