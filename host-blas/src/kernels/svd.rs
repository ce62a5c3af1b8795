//! SVD kernels (`svd`, `svd_vals`, `svd_full`, `svd_truncated`) over ?gesdd
//! (divide and conquer; the default) or ?gesvd (bidiagonal QR iteration,
//! for `SvdDriver::QrIteration`).
//!
//! The input is copied into a column-major buffer (both routines destroy
//! it); U and Vᴴ come back in buffers, get the canonical phase (the
//! largest-magnitude entry of each U column real and positive, host-cpu's
//! `canonicalize_pairs` on U and V = (Vᴴ)ᴴ), and are written to the outputs.
//! LAPACK's singular values are already real and descending. With one
//! vector side switched off both are still computed (U fixes the phase).
//! NaN/∞ input is `NonFinite("a")` (checked first: LAPACK would iterate on
//! it); `info > 0` is `NonConvergence`.

use super::{
    carve, carve_int, check_finite, copy_in, fits, info_ok, int, ld, queried_work, req, span, view_mut,
};
use crate::lapack::{Lapack, Re};
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::ReborrowMut;
use faer::{MatMut, Par};
use lindiff_core::op::{SvdDriver, SvdOptions, Truncation};
use lindiff_core::{LinalgOp, Scalar};
use lindiff_cpu::kernel_api::{canonicalize_pairs, Failure, Item, Kernel, Shapes};

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

/// The kernel of `op` if it belongs to this family.
pub(super) fn find(op: &LinalgOp) -> Option<SvdKernel> {
    let qr = |o: &SvdOptions| o.driver == SvdDriver::QrIteration;
    Some(match op {
        LinalgOp::Svd(k) => SvdKernel { qr_iteration: qr(&k.0), job: Job::Thin, store: Store::Factors },
        LinalgOp::SvdVals(k) => SvdKernel { qr_iteration: qr(&k.0), job: Job::Values, store: Store::Values },
        LinalgOp::SvdFull(k) => SvdKernel { qr_iteration: qr(&k.0), job: Job::Full, store: Store::Factors },
        // The thin SVD with default options: the factors `svd` returns.
        LinalgOp::SvdTruncated(k) => {
            SvdKernel { qr_iteration: false, job: Job::Thin, store: Store::Truncated(k.0) }
        }
        _ => return None,
    })
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
                    &mut a,
                    int(ld(m)),
                    &mut sv,
                    &mut u,
                    int(ldu),
                    &mut vt,
                    int(ldvt),
                    &mut work,
                    -1,
                    &mut rwork,
                )
            } else {
                T::gesdd(
                    self.job.code(),
                    int(m),
                    int(n),
                    &mut a,
                    int(ld(m)),
                    &mut sv,
                    &mut u,
                    int(ldu),
                    &mut vt,
                    int(ldvt),
                    &mut work,
                    -1,
                    &mut rwork,
                    &mut iwork,
                )
            }
        };
        info_ok("svd workspace query", info);
        s.work = queried_work(work[0], 1);
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
        check_finite(a, "a")?;
        let z = self.sizes::<T>(a.nrows(), a.ncols());
        let (m, n, k) = (z.m, z.n, z.k);
        if k == 0 {
            write_empty::<T>(item, self.job, self.store, m, n);
            return Ok(());
        }
        let (lda, ldu, ldvt) = (ld(m), ld(m), ld(z.vrows));
        let (mut abuf, stack) = carve::<T>(stack, lda * n);
        let (mut s, stack) = carve::<Re<T>>(stack, k);
        let (mut u, stack) = carve::<T>(stack, ldu * z.ucols.max(1));
        let (mut vt, stack) = carve::<T>(stack, ldvt * n.max(1));
        let (mut work, stack) = carve::<T>(stack, z.work);
        let (mut rwork, stack) = carve::<Re<T>>(stack, z.rwork);
        let (mut iwork, _) = carve_int(stack, z.iwork);
        copy_in(a, &mut abuf, lda);
        fits(abuf.len(), span(m, n, lda));
        fits(s.len(), k);
        fits(u.len(), span(m, z.ucols, ldu));
        fits(vt.len(), span(z.vrows, n, ldvt));
        fits(rwork.len(), z.rwork);
        fits(iwork.len(), z.iwork);
        let job = self.job.code();
        let lwork_i = int(work.len());
        // SAFETY: every array was checked above to hold what LAPACK accesses
        // for these sizes and leading dimensions (U and VT are not accessed
        // for JOBZ = 'N'); LWORK is WORK's length.
        let info = unsafe {
            if self.qr_iteration {
                T::gesvd(
                    job,
                    job,
                    int(m),
                    int(n),
                    &mut abuf,
                    int(lda),
                    &mut s,
                    &mut u,
                    int(ldu),
                    &mut vt,
                    int(ldvt),
                    &mut work,
                    lwork_i,
                    &mut rwork,
                )
            } else {
                T::gesdd(
                    job,
                    int(m),
                    int(n),
                    &mut abuf,
                    int(lda),
                    &mut s,
                    &mut u,
                    int(ldu),
                    &mut vt,
                    int(ldvt),
                    &mut work,
                    lwork_i,
                    &mut rwork,
                    &mut iwork,
                )
            }
        };
        if info_ok("?gesdd/?gesvd", info) > 0 {
            return Err(Failure::NonConvergence);
        }
        if self.job == Job::Values {
            for (i, &v) in s.iter().enumerate() {
                item.set::<Re<T>>(0, i, v);
            }
            return Ok(());
        }
        let mut u = view_mut(&mut u, m, z.ucols, ldu);
        let mut vt = view_mut(&mut vt, z.vrows, n, ldvt);
        // V = (Vᴴ)ᴴ: conjugate VT in place and view it transposed.
        conjugate(vt.rb_mut());
        canonicalize_pairs(u.rb_mut(), vt.rb_mut().transpose_mut(), k);
        conjugate(vt.rb_mut());
        let kept = match self.store {
            Store::Truncated(t) => kept_by_truncation(&t, &s),
            _ => usize::MAX,
        };
        store(item, &s, u, vt, kept);
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

/// Writes `u` (output 0), `s` (output 1) and `vh` (output 2), each if
/// present, with the triplets from `kept` on set to zero (`usize::MAX`:
/// none; full factors keep their completion columns).
fn store<T: Lapack>(item: &mut Item<'_>, s: &[Re<T>], u: MatMut<'_, T>, vt: MatMut<'_, T>, kept: usize) {
    for (i, &v) in s.iter().enumerate() {
        item.set::<Re<T>>(1, i, if i < kept { v } else { Re::<T>::zero() });
    }
    if item.has_output(0) {
        let mut out = item.out_mat::<T>(0);
        out.copy_from(u.as_ref());
        let cols = out.ncols();
        out.rb_mut().get_mut(.., kept.min(cols)..).fill(T::zero());
    }
    if item.has_output(2) {
        let mut out = item.out_mat::<T>(2);
        out.copy_from(vt.as_ref());
        let rows = out.nrows();
        out.rb_mut().get_mut(kept.min(rows).., ..).fill(T::zero());
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
