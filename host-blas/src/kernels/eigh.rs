//! Hermitian eigendecomposition kernels (`eigh`, `eigh_vals`) over ?syevd /
//! ?heevd (divide and conquer), lower triangle.
//!
//! * Only the lower triangle of `a` is read and the imaginary part of its
//!   diagonal is ignored: the lower triangle is copied with a real diagonal
//!   (into the output `v` itself when vectors are computed, which LAPACK
//!   overwrites with the eigenvectors; else into scratch).
//! * The lower triangle is checked for NaN/∞ in the same pass, before LAPACK
//!   sees it → `NonFinite("a")`; `info > 0` is `NonConvergence`.
//! * The workspace query is remembered per (job, n, dtype) (`query_cache`).
//! * Eigenvalues are real and ascending (LAPACK's order); eigenvectors get
//!   the canonical phase (host-cpu's `canonicalize_columns`).

use super::query_cache::{self, cached};
use super::{
    carve_uninit, copy_lower_finite, fits, info_ok, int, mat_ptr, queried, queried_work, req, uninit_ptr,
    uninit_view, written,
};
use crate::lapack::{Lapack, Re};
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::ReborrowMut;
use faer::Par;
use lindiff_core::Scalar;
use lindiff_cpu::kernel_api::{canonicalize_columns, Failure, Item, Kernel, Shapes};

/// `eigh` (`vectors`) or `eigh_vals` on LAPACK.
pub(super) struct EighKernel {
    /// Eigenvectors too (`eigh`), or values only (`eigh_vals`).
    pub(super) vectors: bool,
}

/// (lwork, lrwork, liwork) of an n×n ?syevd/?heevd.
fn sizes<T: Lapack>(n: usize, vectors: bool) -> (usize, usize, usize) {
    if n == 0 {
        return (0, 0, 0);
    }
    let [work, rwork, iwork] =
        cached::<T>(query_cache::EIGH | u32::from(vectors), n, n, || query::<T>(n, vectors));
    (work, rwork, iwork)
}

/// The workspace query of an n×n ?syevd/?heevd (n > 0).
fn query<T: Lapack>(n: usize, vectors: bool) -> [usize; 3] {
    let (mut a, mut w, mut work) = ([T::zero(); 1], [Re::<T>::zero(); 1], [T::zero(); 1]);
    let (mut rwork, mut iwork) = ([Re::<T>::zero(); 1], [0i32; 1]);
    let jobz = if vectors { b'V' } else { b'N' };
    // SAFETY: a workspace query (LWORK = LRWORK = LIWORK = -1) only writes
    // WORK(1), RWORK(1) and IWORK(1); LDA = n is valid.
    let info = unsafe {
        T::heevd(
            jobz,
            b'L',
            int(n),
            a.as_mut_ptr(),
            int(n),
            w.as_mut_ptr(),
            work.as_mut_ptr(),
            -1,
            rwork.as_mut_ptr(),
            -1,
            iwork.as_mut_ptr(),
            -1,
        )
    };
    info_ok("?syevd/?heevd workspace query", info);
    let lrwork = if <T as Scalar>::IS_COMPLEX { queried(rwork[0], 1) } else { 0 };
    [queried_work(work[0], 1), lrwork, (iwork[0].max(1)) as usize]
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
        let vectors = self.vectors; // `eigh` always has its `v` output
        let (lwork, lrwork, liwork) = sizes::<T>(n, vectors);
        let (copy, stack) = carve_uninit::<T>(stack, if vectors { 0 } else { n * n });
        let (w, stack) = carve_uninit::<Re<T>>(stack, n);
        let (work, stack) = carve_uninit::<T>(stack, lwork);
        let (rwork, stack) = carve_uninit::<Re<T>>(stack, lrwork);
        let (iwork, _) = carve_uninit::<i32>(stack, liwork);
        fits(w.len(), n);
        fits(rwork.len(), lrwork);
        fits(iwork.len(), liwork);
        let jobz = if vectors { b'V' } else { b'N' };
        let (lwork_i, lrwork_i, liwork_i) = (int(work.len()), int(rwork.len()), int(iwork.len()));
        // A: the output `v` (which LAPACK overwrites with the eigenvectors)
        // or the scratch copy.
        let mut v = if vectors { item.out_mat::<T>(1) } else { uninit_view(copy, n, n, n) };
        if !copy_lower_finite(a, v.rb_mut()) {
            return Err(Failure::NonFinite("a"));
        }
        let pv = mat_ptr(&mut v, n);
        // SAFETY: A is n×n with LDA = n (layout checked by `mat_ptr`, every
        // element written by `copy_lower_finite`), W n, the work arrays as
        // queried (lengths checked above and passed as LWORK/LRWORK/LIWORK);
        // W and the work arrays are only written.
        let info = unsafe {
            T::heevd(
                jobz,
                b'L',
                int(n),
                pv,
                int(n),
                uninit_ptr(w),
                uninit_ptr(work),
                lwork_i,
                uninit_ptr(rwork),
                lrwork_i,
                uninit_ptr(iwork),
                liwork_i,
            )
        };
        if info_ok("?syevd/?heevd", info) > 0 {
            return Err(Failure::NonConvergence);
        }
        if vectors {
            canonicalize_columns(v);
        }
        // SAFETY: with info = 0 LAPACK wrote all n eigenvalues.
        for (i, &x) in unsafe { written(w, n) }.iter().enumerate() {
            item.set::<Re<T>>(0, i, x);
        }
        Ok(())
    }
}
