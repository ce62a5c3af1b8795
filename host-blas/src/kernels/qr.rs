//! QR kernels: unpivoted `qr` (?geqrf, then ?orgqr/?ungqr for Q, thin or
//! complete) and `rank_revealing_qr` (?geqp3, then ?orgqr/?ungqr).
//!
//! Convention (every provider): diag(R) real and ≥ 0. LAPACK's R[j,j] = β_j
//! is real but may be negative, so for each j with d = R[j,j] ≠ 0 row j of R
//! is multiplied by conj(d)/|d| and column j of Q by d/|d| (Q R unchanged),
//! and R[j,j] is written as |d|.
//!
//! The input is copied (NaN/∞ → `NonFinite("a")`, checked in the same
//! pass) into the output Q itself when Q has the input's shape (thin QR of
//! a tall or square matrix, complete QR of a square one), else into scratch,
//! and factored there. R is written from the factored matrix with its rows
//! scaled in the same pass; then ?orgqr/?ungqr expands the reflectors in
//! place in Q (copied there first when factored in scratch: the first k
//! columns, the rest zeroed), and only the columns of Q whose phase is not
//! 1 are scaled. The workspace queries are remembered per (op, shape,
//! dtype) (`query_cache`).
//!
//! `rank_revealing_qr`: `perm[j] = jpvt[j] − 1` (so `a[:, perm] = q r`);
//! |R[i,i]| is non-increasing, and the rank is the prefix above
//! max(atol, rtol·|R[0,0]|), rtol defaulting to max(m, n)·ε, as on host-cpu.
//! An all-zero matrix gives Q = I[:, :k], R = 0, the identity permutation
//! and rank 0 without calling LAPACK (host-cpu's special case).

use super::query_cache::{self, cached};
use super::{
    carve_int, carve_uninit, fits, info_ok, int, ld, mat_ptr, phase, queried_work, req, uninit_ptr,
    uninit_view, written,
};
use crate::lapack::{Lapack, Re};
use core::mem::MaybeUninit;
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::{QrMode, RankRevealingQrOptions};
use lindiff_core::{RealScalar, Scalar};
use lindiff_cpu::kernel_api::{copy_range, scale_column, Failure, Item, Kernel, Range, Shapes};

/// One QR op on LAPACK.
pub(super) enum QrKernel {
    /// `qr` with Q's column count chosen by the mode.
    Plain(QrMode),
    /// `rank_revealing_qr`.
    Pivoted(RankRevealingQrOptions),
}

impl QrKernel {
    /// Columns of Q for an m×n input.
    fn qcols(&self, m: usize, n: usize) -> usize {
        match self {
            QrKernel::Plain(QrMode::Complete) => m,
            _ => m.min(n),
        }
    }

    /// `true` when the input is factored in the output Q itself (same
    /// m×n shape), saving the scratch copy and the copy into Q.
    fn in_q(&self, m: usize, n: usize) -> bool {
        self.qcols(m, n) == n
    }

    /// (lwork, rwork) for an m×n input: the larger of the factorization's
    /// and the Q expansion's queried sizes.
    fn work<T: Lapack>(&self, m: usize, n: usize) -> (usize, usize) {
        if m.min(n) == 0 {
            return (0, 0);
        }
        let tag = match self {
            QrKernel::Plain(QrMode::Reduced) => query_cache::QR,
            QrKernel::Plain(QrMode::Complete) => query_cache::QR | 1,
            QrKernel::Pivoted(_) => query_cache::QR | 2,
        };
        let lwork = cached::<T>(tag, m, n, || [self.query::<T>(m, n), 0, 0])[0];
        let rwork = match self {
            QrKernel::Pivoted(_) if <T as Scalar>::IS_COMPLEX => 2 * n,
            _ => 0,
        };
        (lwork, rwork)
    }

    /// The larger of the factorization's and the Q expansion's optimal
    /// LWORK for an m×n input (k > 0).
    fn query<T: Lapack>(&self, m: usize, n: usize) -> usize {
        let k = m.min(n);
        let qcols = self.qcols(m, n);
        let (mut a, mut tau, mut w1, mut w2) =
            ([T::zero(); 1], [T::zero(); 1], [T::zero(); 1], [T::zero(); 1]);
        let (mut jpvt, mut rwork) = ([0i32; 1], [Re::<T>::zero(); 1]);
        let (a, tau, jpvt, rwork) = (a.as_mut_ptr(), tau.as_mut_ptr(), jpvt.as_mut_ptr(), rwork.as_mut_ptr());
        // SAFETY: workspace queries (LWORK = -1) only write WORK(1); every
        // array has one element and LDA = max(1, m) is valid.
        let (i1, i2) = unsafe {
            let i1 = match self {
                QrKernel::Plain(_) => T::geqrf(int(m), int(n), a, int(ld(m)), tau, w1.as_mut_ptr(), -1),
                QrKernel::Pivoted(_) => {
                    T::geqp3(int(m), int(n), a, int(ld(m)), jpvt, tau, w1.as_mut_ptr(), -1, rwork)
                }
            };
            (i1, T::ungqr(int(m), int(qcols), int(k), a, int(ld(m)), tau, w2.as_mut_ptr(), -1))
        };
        info_ok("qr workspace query", i1);
        info_ok("?orgqr workspace query", i2);
        queried_work(w1[0], n).max(queried_work(w2[0], qcols))
    }
}

impl<T: Lapack> Kernel<T> for QrKernel {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let (work, rwork) = self.work::<T>(m, n);
        let pivots = if matches!(self, QrKernel::Pivoted(_)) { n } else { 0 };
        let factored = if self.in_q(m, n) { 0 } else { ld(m) * n };
        StackReq::all_of(&[
            req::<T>(factored), // the factored matrix (when not in Q)
            req::<T>(m.min(n)), // tau
            req::<T>(m.min(n)), // the phases of R's diagonal
            req::<i32>(pivots), // jpvt
            req::<T>(work),
            req::<Re<T>>(rwork),
        ])
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let pivoted = matches!(self, QrKernel::Pivoted(_));
        // An all-zero matrix is finite: the trivial case needs no check.
        if k == 0 || (pivoted && (0..n).all(|j| (0..m).all(|i| a[(i, j)] == T::zero()))) {
            write_trivial::<T>(item, pivoted, n);
            return Ok(());
        }
        let (work_len, rwork_len) = self.work::<T>(m, n);
        let (in_q, lda) = (self.in_q(m, n), ld(m));
        let (hbuf, stack) = carve_uninit::<T>(stack, if in_q { 0 } else { lda * n });
        let (tau, stack) = carve_uninit::<T>(stack, k);
        let (phases, stack) = carve_uninit::<T>(stack, k);
        // JPVT is an input of ?geqp3 too: zeroed, every column free.
        let (mut jpvt, stack) = carve_int(stack, if pivoted { n } else { 0 });
        let (work, stack) = carve_uninit::<T>(stack, work_len);
        let (rwork, _) = carve_uninit::<Re<T>>(stack, rwork_len);
        let mut arrays = Arrays { tau, phases, jpvt: &mut jpvt, work, rwork };
        let (mut q, mut r) = item.out_pair::<T, T>(0, 1);
        if in_q {
            self.factor(a, q.rb_mut(), &mut arrays, r.rb_mut())?;
        } else {
            let mut h = uninit_view(hbuf, m, n, lda);
            self.factor(a, h.rb_mut(), &mut arrays, r.rb_mut())?;
            copy_reflectors(h.rb(), q.rb_mut());
        }
        // SAFETY: `factor` wrote the k phases, and ?geqrf/?geqp3 (info = 0)
        // all k scalars of TAU.
        let (phases, tau) = unsafe { (written(arrays.phases, k), written(arrays.tau, k)) };
        form_q(tau, q.rb_mut(), arrays.work);
        for (j, &c) in phases.iter().enumerate() {
            scale_column(&mut q, j, c); // nothing for c = 1
        }
        let jpvt = arrays.jpvt;
        if let QrKernel::Pivoted(opts) = self {
            let eps = <Re<T> as RealScalar>::EPSILON.to_f64();
            let rtol = opts.rtol.unwrap_or(m.max(n) as f64 * eps);
            let abs_r = |i: usize| Scalar::re(r[(i, i)]).to_f64(); // |R[i,i]|, real
            let threshold = opts.atol.max(rtol * abs_r(0));
            let rank = (0..k).take_while(|&i| abs_r(i) > threshold).count();
            for (j, &p) in jpvt.iter().enumerate() {
                item.set::<i64>(2, j, i64::from(p) - 1);
            }
            item.set::<i64>(3, 0, rank as i64);
        }
        Ok(())
    }
}

/// The scratch arrays of one QR: TAU, the phases of R's diagonal, JPVT,
/// and LAPACK's work arrays.
struct Arrays<'s, T: Lapack> {
    tau: &'s mut [MaybeUninit<T>],
    phases: &'s mut [MaybeUninit<T>],
    jpvt: &'s mut [i32],
    work: &'s mut [MaybeUninit<T>],
    rwork: &'s mut [MaybeUninit<Re<T>>],
}

impl QrKernel {
    /// Copies `a` into `h` (m×n, LAPACK's layout; `NonFinite("a")` for
    /// NaN/∞), factors it there with ?geqrf / ?geqp3, writes the phases of
    /// its diagonal and R (`r`) from its upper trapezoid.
    ///
    /// Scale-robust as host-cpu's QR: `a` outside the safe range (found by
    /// the non-finite check's pass) is factored as `a · 2^e` and R scaled
    /// back (?geqrf does not scale, and takes a column of subnormal entries
    /// for zero).
    fn factor<T: Lapack>(
        &self,
        a: MatRef<'_, T>,
        mut h: MatMut<'_, T>,
        x: &mut Arrays<'_, T>,
        mut r: MatMut<'_, T>,
    ) -> Result<(), Failure> {
        let scaling = copy_range(a, h.rb_mut(), "a", Range::Squares)?;
        scaling.apply_mat(h.rb_mut());
        let (m, n) = (h.nrows(), h.ncols());
        let (k, lda) = (m.min(n), ld(m));
        fits(x.tau.len(), k);
        fits(x.phases.len(), k);
        let (ph, ptau, lwork) = (mat_ptr(&mut h, lda), uninit_ptr(x.tau), int(x.work.len()));
        let info = if let QrKernel::Pivoted(_) = self {
            fits(x.jpvt.len(), n);
            if <T as Scalar>::IS_COMPLEX {
                fits(x.rwork.len(), 2 * n);
            }
            // SAFETY: H is m×n with LDA = max(1, m) (layout checked by
            // `mat_ptr`, written in full above), TAU k, JPVT n (zeroed),
            // RWORK 2n for complex (checked above); LWORK is WORK's length.
            // TAU, WORK and RWORK are only written.
            unsafe {
                let (pjpvt, pwork, prwork) = (x.jpvt.as_mut_ptr(), uninit_ptr(x.work), uninit_ptr(x.rwork));
                T::geqp3(int(m), int(n), ph, int(lda), pjpvt, ptau, pwork, lwork, prwork)
            }
        } else {
            // SAFETY: as above, without JPVT and RWORK.
            unsafe { T::geqrf(int(m), int(n), ph, int(lda), ptau, uninit_ptr(x.work), lwork) }
        };
        info_ok("?geqrf/?geqp3", info);
        for (j, p) in x.phases.iter_mut().enumerate().take(k) {
            p.write(phase(h[(j, j)]));
        }
        // SAFETY: the k phases were written just above.
        form_r(h.rb(), unsafe { written(x.phases, k) }, r.rb_mut());
        scaling.undo_mat(r);
        Ok(())
    }
}

/// Copies the k = min(m, n) reflectors of `h` (m×n) into the first k
/// columns of `q` (m×qcols) and zeroes the rest of `q`.
fn copy_reflectors<T: Lapack>(h: MatRef<'_, T>, mut q: MatMut<'_, T>) {
    let k = h.nrows().min(h.ncols());
    q.rb_mut().get_mut(.., ..k).copy_from(h.get(.., ..k));
    q.get_mut(.., k..).fill(T::zero());
}

/// Expands the reflectors in `q` (m×qcols, scalars `tau`, qcols ≥ k =
/// `tau.len()`) into the explicit Q with ?orgqr / ?ungqr, in place.
fn form_q<T: Lapack>(tau: &[T], mut q: MatMut<'_, T>, work: &mut [MaybeUninit<T>]) {
    let (m, qcols, k) = (q.nrows(), q.ncols(), tau.len());
    assert!(qcols >= k && m >= k, "Q holds the k reflectors");
    let pq = mat_ptr(&mut q, ld(m));
    // SAFETY: Q is m×qcols with LDA = max(1, m) (layout checked by
    // `mat_ptr`, every element written), qcols ≥ k reflectors, TAU k;
    // LWORK is WORK's length, which covers the queried size; WORK is only
    // written.
    let info = unsafe {
        T::ungqr(int(m), int(qcols), int(k), pq, int(ld(m)), tau.as_ptr(), uninit_ptr(work), int(work.len()))
    };
    info_ok("?orgqr/?ungqr", info);
}

/// Writes R (`r.nrows()` rows) from the upper trapezoid of `h`, row i
/// scaled by conj(`phases[i]`) (phases[i] = phase(h[i,i])) so that the
/// diagonal is real and ≥ 0. Column by column over contiguous slices (`h`
/// and `r` have unit row stride).
fn form_r<T: Lapack>(h: MatRef<'_, T>, phases: &[T], mut r: MatMut<'_, T>) {
    let k = phases.len();
    for j in 0..r.ncols() {
        let hc = h.col(j).try_as_col_major().expect("unit row stride").as_slice();
        let mut rc = r.rb_mut().col_mut(j);
        let rc = rc.rb_mut().try_as_col_major_mut().expect("unit row stride").as_slice_mut();
        let top = j.min(k);
        for ((x, &y), &p) in rc[..top].iter_mut().zip(&hc[..top]).zip(&phases[..top]) {
            *x = y * Scalar::conj(p);
        }
        let below = if j < k {
            rc[j] = T::from_real(Scalar::abs(hc[j]));
            j + 1
        } else {
            top
        };
        rc[below..].fill(T::zero());
    }
}

/// Outputs for k = 0 or (pivoted) an all-zero matrix: Q = I[:, :qcols],
/// R = 0, and for the pivoted QR the identity permutation and rank 0.
fn write_trivial<T: Lapack>(item: &mut Item<'_>, pivoted: bool, n: usize) {
    let mut q = item.out_mat::<T>(0);
    q.fill(T::zero());
    for i in 0..q.nrows().min(q.ncols()) {
        q[(i, i)] = T::one();
    }
    item.out_mat::<T>(1).fill(T::zero());
    if pivoted {
        for j in 0..n {
            item.set::<i64>(2, j, j as i64);
        }
        item.set::<i64>(3, 0, 0);
    }
}
