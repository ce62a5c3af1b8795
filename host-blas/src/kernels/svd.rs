//! SVD kernels (`svd`, `svd_vals`, `svd_full`, `svd_truncated`) over ?gesdd
//! (divide and conquer; the default) or ?gesvd (bidiagonal QR iteration,
//! for `SvdDriver::QrIteration`).
//!
//! The input is copied into a column-major scratch buffer (both routines
//! destroy it), checked for NaN/∞ in the same pass (`NonFinite("a")`, before
//! LAPACK sees it: it would iterate on it). U and Vᴴ are computed straight
//! into the outputs (their contiguous column-major layout is LAPACK's, with
//! LDU = m and LDVT = Vᴴ's rows), into scratch when switched off, and get
//! the canonical phase there (the largest-magnitude entry of each U column
//! real and positive, host-cpu's `canonicalize_pairs_adjoint` on U and Vᴴ).
//! LAPACK's singular values are already real and descending. With one
//! vector side switched off both are still computed (U fixes the phase).
//! `info > 0` is `NonConvergence`. The workspace query is remembered per
//! (job, shape, dtype) (`query_cache`).

use super::query_cache::{self, cached};
use super::{
    carve_uninit, copy_finite, fits, info_ok, int, ld, mat_ptr, queried_work, req, uninit_ptr, uninit_view,
    written,
};
use crate::lapack::{Lapack, Re};
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::ReborrowMut;
use faer::{MatMut, Par};
use lindiff_core::op::{SvdDriver, SvdOptions, Truncation};
use lindiff_core::Scalar;
use lindiff_cpu::kernel_api::{canonicalize_pairs_adjoint, Failure, Item, Kernel, Shapes};

/// Which factors are computed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Job {
    /// Values only (JOBZ = 'N').
    Values,
    /// Thin U (m×k) and Vᴴ (k×n) (JOBZ = 'S').
    Thin,
    /// Full U (m×m) and Vᴴ (n×n) (JOBZ = 'A').
    Full,
}

impl Job {
    fn code(self) -> u8 {
        match self {
            Job::Values => b'N',
            Job::Thin => b'S',
            Job::Full => b'A',
        }
    }

    /// A small number naming the job (a part of the query cache's key).
    fn index(self) -> u32 {
        match self {
            Job::Values => 0,
            Job::Thin => 1,
            Job::Full => 2,
        }
    }
}

/// What the kernel writes.
#[derive(Clone, Copy)]
enum Store {
    /// `s` only, as output 0.
    Values,
    /// `u`, `s`, `vh` as outputs 0, 1, 2 (whichever are present).
    Factors,
    /// The thin factors cut to the triplets kept, and `rank` (output 3).
    Truncated(Truncation),
}

/// One SVD op on LAPACK.
pub(super) struct SvdKernel {
    /// ?gesvd instead of ?gesdd.
    qr_iteration: bool,
    job: Job,
    store: Store,
}

impl SvdKernel {
    /// The thin SVD (`svd`), ?gesvd when the driver asks for QR iteration.
    pub(super) fn thin(o: &SvdOptions) -> SvdKernel {
        SvdKernel { qr_iteration: qr_iteration(o), job: Job::Thin, store: Store::Factors }
    }

    /// Values only (`svd_vals`).
    pub(super) fn values(o: &SvdOptions) -> SvdKernel {
        SvdKernel { qr_iteration: qr_iteration(o), job: Job::Values, store: Store::Values }
    }

    /// The full SVD (`svd_full`).
    pub(super) fn full(o: &SvdOptions) -> SvdKernel {
        SvdKernel { qr_iteration: qr_iteration(o), job: Job::Full, store: Store::Factors }
    }

    /// The truncated SVD: the thin SVD with default options (the factors
    /// `svd` returns), cut to the kept triplets.
    pub(super) fn truncated(keep: Truncation) -> SvdKernel {
        SvdKernel { qr_iteration: false, job: Job::Thin, store: Store::Truncated(keep) }
    }
}

/// ?gesvd (bidiagonal QR iteration) instead of ?gesdd.
fn qr_iteration(o: &SvdOptions) -> bool {
    o.driver == SvdDriver::QrIteration
}

/// Array sizes of one m×n SVD (elements), from the workspace query.
struct Sizes {
    m: usize,
    n: usize,
    k: usize,
    /// Columns of U and rows of Vᴴ computed.
    ucols: usize,
    vrows: usize,
    work: usize,
    rwork: usize,
    iwork: usize,
}

impl SvdKernel {
    fn sizes<T: Lapack>(&self, m: usize, n: usize) -> Sizes {
        let k = m.min(n);
        let (ucols, vrows) = match self.job {
            Job::Values => (0, 0),
            Job::Thin => (k, k),
            Job::Full => (m, n),
        };
        let mut s = Sizes { m, n, k, ucols, vrows, work: 0, rwork: 0, iwork: 0 };
        if k == 0 {
            return s;
        }
        let big = m.max(n);
        let tag = query_cache::SVD | (u32::from(self.qr_iteration) << 4) | self.job.index();
        s.work = cached::<T>(tag, m, n, || [self.query::<T>(m, n, ucols, vrows), 0, 0])[0];
        if <T as Scalar>::IS_COMPLEX {
            s.rwork = if self.qr_iteration {
                5 * k
            } else if self.job == Job::Values {
                7 * k
            } else {
                k * (5 * k + 7).max(2 * big + 2 * k + 1)
            };
        }
        if !self.qr_iteration {
            s.iwork = 8 * k;
        }
        s
    }

    /// ?gesdd's / ?gesvd's optimal LWORK for an m×n input (k > 0).
    fn query<T: Lapack>(&self, m: usize, n: usize, ucols: usize, vrows: usize) -> usize {
        let mut work = [T::zero(); 1];
        let (mut a, mut sv, mut u, mut vt) =
            ([T::zero(); 1], [Re::<T>::zero(); 1], [T::zero(); 1], [T::zero(); 1]);
        let (mut rwork, mut iwork) = ([Re::<T>::zero(); 1], [0i32; 1]);
        let (ldu, ldvt) = (ld(if ucols > 0 { m } else { 1 }), ld(vrows));
        // SAFETY: a workspace query (LWORK = -1) only writes WORK(1); every
        // array passed has at least one element and the leading dimensions
        // are valid for the sizes.
        let info = unsafe {
            if self.qr_iteration {
                T::gesvd(
                    self.job.code(),
                    self.job.code(),
                    int(m),
                    int(n),
                    a.as_mut_ptr(),
                    int(ld(m)),
                    sv.as_mut_ptr(),
                    u.as_mut_ptr(),
                    int(ldu),
                    vt.as_mut_ptr(),
                    int(ldvt),
                    work.as_mut_ptr(),
                    -1,
                    rwork.as_mut_ptr(),
                )
            } else {
                T::gesdd(
                    self.job.code(),
                    int(m),
                    int(n),
                    a.as_mut_ptr(),
                    int(ld(m)),
                    sv.as_mut_ptr(),
                    u.as_mut_ptr(),
                    int(ldu),
                    vt.as_mut_ptr(),
                    int(ldvt),
                    work.as_mut_ptr(),
                    -1,
                    rwork.as_mut_ptr(),
                    iwork.as_mut_ptr(),
                )
            }
        };
        info_ok("svd workspace query", info);
        queried_work(work[0], 1)
    }
}

impl Sizes {
    fn req<T: Lapack>(&self) -> StackReq {
        StackReq::all_of(&[
            req::<T>(ld(self.m) * self.n),            // a
            req::<Re<T>>(self.k),                     // s
            req::<T>(ld(self.m) * self.ucols.max(1)), // u
            req::<T>(ld(self.vrows) * self.n.max(1)), // vt
            req::<T>(self.work),
            req::<Re<T>>(self.rwork),
            req::<i32>(self.iwork),
            req::<T>(self.vrows), // phases
        ])
    }
}

impl<T: Lapack> Kernel<T> for SvdKernel {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        self.sizes::<T>(m, n).req::<T>()
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let (m, n) = (a.nrows(), a.ncols());
        let z = self.sizes::<T>(m, n);
        let k = z.k;
        if k == 0 {
            write_empty::<T>(item, self.job, self.store, m, n);
            return Ok(());
        }
        let (lda, ldu, ldvt) = (ld(m), ld(m), ld(z.vrows));
        let (abuf, stack) = carve_uninit::<T>(stack, lda * n);
        let mut abuf = uninit_view(abuf, m, n, lda);
        copy_finite(a, abuf.rb_mut(), "a")?;
        let (s, stack) = carve_uninit::<Re<T>>(stack, k);
        let (ubuf, stack) = carve_uninit::<T>(stack, ldu * z.ucols.max(1));
        let (vbuf, stack) = carve_uninit::<T>(stack, ldvt * n.max(1));
        let (work, stack) = carve_uninit::<T>(stack, z.work);
        let (rwork, stack) = carve_uninit::<Re<T>>(stack, z.rwork);
        let (iwork, stack) = carve_uninit::<i32>(stack, z.iwork);
        // The phases of Vᴴ's rows (written before they are read).
        let (phases, _) = carve_uninit::<T>(stack, z.vrows);
        let phases = uninit_view(phases, z.vrows, 1, z.vrows.max(1)).col_mut(0);
        // U and Vᴴ: the outputs themselves where present, else scratch.
        let (mut u, mut vt) = if self.job == Job::Values {
            (uninit_view(ubuf, 1, 1, 1), uninit_view(vbuf, 1, 1, 1)) // not referenced
        } else {
            match (item.has_output(0), item.has_output(2)) {
                (true, true) => item.out_pair::<T, T>(0, 2),
                (true, false) => (item.out_mat::<T>(0), uninit_view(vbuf, z.vrows, n, ldvt)),
                (false, true) => (uninit_view(ubuf, m, z.ucols, ldu), item.out_mat::<T>(2)),
                (false, false) => (uninit_view(ubuf, m, z.ucols, ldu), uninit_view(vbuf, z.vrows, n, ldvt)),
            }
        };
        if self.job != Job::Values {
            assert!(u.nrows() == m && u.ncols() == z.ucols && vt.nrows() == z.vrows && vt.ncols() == n);
        }
        fits(s.len(), k);
        fits(rwork.len(), z.rwork);
        fits(iwork.len(), z.iwork);
        let (pa, pu, pvt) = (mat_ptr(&mut abuf, lda), mat_ptr(&mut u, ldu), mat_ptr(&mut vt, ldvt));
        let job = self.job.code();
        let lwork_i = int(work.len());
        // SAFETY: A is the m×n scratch copy with LDA (its layout checked by
        // `mat_ptr`), S holds k, U and VT are m×ucols and vrows×n with LDU
        // and LDVT (checked by the assert and `mat_ptr`; not referenced for
        // JOBZ = 'N'), RWORK and IWORK as the sizes require (checked above);
        // LWORK is WORK's length. WORK, RWORK, IWORK, S, U and VT are only
        // written by LAPACK.
        let info = unsafe {
            if self.qr_iteration {
                T::gesvd(
                    job,
                    job,
                    int(m),
                    int(n),
                    pa,
                    int(lda),
                    uninit_ptr(s),
                    pu,
                    int(ldu),
                    pvt,
                    int(ldvt),
                    uninit_ptr(work),
                    lwork_i,
                    uninit_ptr(rwork),
                )
            } else {
                T::gesdd(
                    job,
                    int(m),
                    int(n),
                    pa,
                    int(lda),
                    uninit_ptr(s),
                    pu,
                    int(ldu),
                    pvt,
                    int(ldvt),
                    uninit_ptr(work),
                    lwork_i,
                    uninit_ptr(rwork),
                    uninit_ptr(iwork),
                )
            }
        };
        if info_ok("?gesdd/?gesvd", info) > 0 {
            return Err(Failure::NonConvergence);
        }
        // SAFETY: with info = 0 LAPACK wrote all k singular values.
        let s = unsafe { written(s, k) };
        if self.job == Job::Values {
            for (i, &v) in s.iter().enumerate() {
                item.set::<Re<T>>(0, i, v);
            }
            return Ok(());
        }
        // U and VT are written in full (JOBZ = 'S' or 'A', info = 0).
        // Conjugated, VT is Vᵀ, which `canonicalize_pairs_adjoint` takes:
        // it phases U and writes conj(V·c) back down VT's contiguous
        // columns (scaling VT's rows in place strode across the whole
        // matrix for every row: ~3 % of a 512×512 SVD).
        conjugate(vt.rb_mut());
        canonicalize_pairs_adjoint(u.rb_mut(), vt.rb_mut(), k, phases);
        let kept = match self.store {
            Store::Truncated(t) => kept_by_truncation(&t, s),
            _ => usize::MAX,
        };
        // Triplets from `kept` on are zero (`usize::MAX`: none; full
        // factors keep their completion columns).
        let ucols = u.ncols();
        u.get_mut(.., kept.min(ucols)..).fill(T::zero());
        let vrows = vt.nrows();
        vt.get_mut(kept.min(vrows).., ..).fill(T::zero());
        for (i, &v) in s.iter().enumerate() {
            item.set::<Re<T>>(1, i, if i < kept { v } else { Re::<T>::zero() });
        }
        if let Store::Truncated(_) = self.store {
            if item.has_output(3) {
                item.set::<i64>(3, 0, kept as i64);
            }
        }
        Ok(())
    }
}

/// Conjugates every entry of `m` (nothing for real types).
fn conjugate<T: Lapack>(mut m: MatMut<'_, T>) {
    if <T as Scalar>::IS_COMPLEX {
        for j in 0..m.ncols() {
            for i in 0..m.nrows() {
                m[(i, j)] = Scalar::conj(m[(i, j)]);
            }
        }
    }
}

/// Outputs of an SVD with k = 0: empty thin factors; full U and Vᴴ are
/// identities.
fn write_empty<T: Lapack>(item: &mut Item<'_>, job: Job, store: Store, m: usize, n: usize) {
    if job == Job::Full {
        for (i, dim) in [(0, m), (2, n)] {
            if item.has_output(i) {
                let mut out = item.out_mat::<T>(i);
                out.fill(T::zero());
                for d in 0..dim {
                    out[(d, d)] = T::one();
                }
            }
        }
    }
    if let Store::Truncated(_) = store {
        if item.has_output(3) {
            item.set::<i64>(3, 0, 0);
        }
    }
}

/// How many triplets `truncation` keeps for the descending values `s`
/// (host-cpu's rule: a count capped at k, or s_i > max(atol, rtol·s₀)).
fn kept_by_truncation<R: lindiff_core::RealScalar>(truncation: &Truncation, s: &[R]) -> usize {
    match *truncation {
        Truncation::Count(p) => p.min(s.len()),
        Truncation::Tolerance { atol, rtol } => {
            let s0 = s.first().map_or(0.0, |v| v.to_f64());
            let threshold = atol.max(rtol * s0);
            s.iter().take_while(|v| v.to_f64() > threshold).count()
        }
    }
}
