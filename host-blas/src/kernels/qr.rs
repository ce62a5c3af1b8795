//! QR kernels: unpivoted `qr` (?geqrf, then ?orgqr/?ungqr for Q, thin or
//! complete) and `rank_revealing_qr` (?geqp3, then ?orgqr/?ungqr).
//!
//! Convention (every provider): diag(R) real and ≥ 0. LAPACK's R[j,j] = β_j
//! is real but may be negative, so for each j with d = R[j,j] ≠ 0 row j of R
//! is multiplied by conj(d)/|d| and column j of Q by d/|d| (Q R unchanged),
//! and R[j,j] is written as |d|.
//!
//! Q is formed in the output itself: the reflectors are copied into its
//! first k columns (the rest zeroed) and ?orgqr/?ungqr expands them in place.
//! NaN/∞ input is `NonFinite("a")`, checked first.
//!
//! `rank_revealing_qr`: `perm[j] = jpvt[j] − 1` (so `a[:, perm] = q r`);
//! |R[i,i]| is non-increasing, and the rank is the prefix above
//! max(atol, rtol·|R[0,0]|), rtol defaulting to max(m, n)·ε, as on host-cpu.
//! An all-zero matrix gives Q = I[:, :k], R = 0, the identity permutation
//! and rank 0 without calling LAPACK (host-cpu's special case).

use super::{
    carve, carve_int, check_finite, copy_in, fits, info_ok, int, ld, out_slice, phase, queried_work, req,
    span, view_mut,
};
use crate::lapack::{Lapack, Re};
use faer::dyn_stack::{MemStack, StackReq};
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::{QrMode, RankRevealingQrOptions};
use lindiff_core::{LinalgOp, RealScalar, Scalar};
use lindiff_cpu::kernel_api::{Failure, Item, Kernel, Shapes};

/// One QR op on LAPACK.
pub(super) enum QrKernel {
    /// `qr` with Q's column count chosen by the mode.
    Plain(QrMode),
    /// `rank_revealing_qr`.
    Pivoted(RankRevealingQrOptions),
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find(op: &LinalgOp) -> Option<QrKernel> {
    match op {
        LinalgOp::Qr(k) => Some(QrKernel::Plain(k.0.mode)),
        LinalgOp::RankRevealingQr(k) => Some(QrKernel::Pivoted(k.0)),
        _ => None,
    }
}

impl QrKernel {
    /// Columns of Q for an m×n input.
    fn qcols(&self, m: usize, n: usize) -> usize {
        match self {
            QrKernel::Plain(QrMode::Complete) => m,
            _ => m.min(n),
        }
    }

    /// (lwork, rwork) for an m×n input: the larger of the factorization's
    /// and the Q expansion's queried sizes.
    fn work<T: Lapack>(&self, m: usize, n: usize) -> (usize, usize) {
        let k = m.min(n);
        if k == 0 {
            return (0, 0);
        }
        let qcols = self.qcols(m, n);
        let (mut a, mut tau, mut w1, mut w2) =
            ([T::zero(); 1], [T::zero(); 1], [T::zero(); 1], [T::zero(); 1]);
        let (mut jpvt, mut rwork) = ([0i32; 1], [Re::<T>::zero(); 1]);
        // SAFETY: workspace queries (LWORK = -1) only write WORK(1); every
        // array has one element and LDA = max(1, m) is valid.
        let (i1, i2) = unsafe {
            let i1 = match self {
                QrKernel::Plain(_) => T::geqrf(int(m), int(n), &mut a, int(ld(m)), &mut tau, &mut w1, -1),
                QrKernel::Pivoted(_) => {
                    T::geqp3(int(m), int(n), &mut a, int(ld(m)), &mut jpvt, &mut tau, &mut w1, -1, &mut rwork)
                }
            };
            (i1, T::ungqr(int(m), int(qcols), int(k), &mut a, int(ld(m)), &tau, &mut w2, -1))
        };
        info_ok("qr workspace query", i1);
        info_ok("?orgqr workspace query", i2);
        let rwork = match self {
            QrKernel::Pivoted(_) if <T as Scalar>::IS_COMPLEX => 2 * n,
            _ => 0,
        };
        (queried_work(w1[0], n).max(queried_work(w2[0], qcols)), rwork)
    }
}

impl<T: Lapack> Kernel<T> for QrKernel {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let (work, rwork) = self.work::<T>(m, n);
        let pivots = if matches!(self, QrKernel::Pivoted(_)) { n } else { 0 };
        StackReq::all_of(&[
            req::<T>(ld(m) * n), // the factored matrix
            req::<T>(m.min(n)),  // tau
            req::<i32>(pivots),  // jpvt
            req::<T>(work),
            req::<Re<T>>(rwork),
        ])
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let pivoted = matches!(self, QrKernel::Pivoted(_));
        let all_zero = (0..n).all(|j| (0..m).all(|i| a[(i, j)] == T::zero()));
        if k == 0 || (pivoted && all_zero) {
            write_trivial::<T>(item, pivoted, n);
            return Ok(());
        }
        let (work_len, rwork_len) = self.work::<T>(m, n);
        let lda = ld(m);
        let (mut h, stack) = carve::<T>(stack, lda * n);
        let (mut tau, stack) = carve::<T>(stack, k);
        let (mut jpvt, stack) = carve_int(stack, if pivoted { n } else { 0 });
        let (mut work, stack) = carve::<T>(stack, work_len);
        let (mut rwork, _) = carve::<Re<T>>(stack, rwork_len);
        copy_in(a, &mut h, lda);
        fits(h.len(), span(m, n, lda));
        fits(tau.len(), k);
        fits(rwork.len(), rwork_len);
        let lwork_i = int(work.len());
        // SAFETY: H is m×n with LDA = max(1, m), TAU has k elements, JPVT
        // (zeroed: every column free) n, RWORK 2n for complex (checked
        // above); LWORK is WORK's length.
        let info = unsafe {
            if pivoted {
                fits(jpvt.len(), n);
                T::geqp3(
                    int(m),
                    int(n),
                    &mut h,
                    int(lda),
                    &mut jpvt,
                    &mut tau,
                    &mut work,
                    lwork_i,
                    &mut rwork,
                )
            } else {
                T::geqrf(int(m), int(n), &mut h, int(lda), &mut tau, &mut work, lwork_i)
            }
        };
        info_ok("?geqrf/?geqp3", info);
        let hv = view_mut(&mut h, m, n, lda);
        form_q(hv.as_ref(), &tau, item.out_mat::<T>(0), &mut work);
        form_r(hv.as_ref(), item.out_mat::<T>(1));
        if let QrKernel::Pivoted(opts) = self {
            for (j, &p) in jpvt.iter().enumerate() {
                item.set::<i64>(2, j, i64::from(p) - 1);
            }
            let eps = <Re<T> as RealScalar>::EPSILON.to_f64();
            let rtol = opts.rtol.unwrap_or(m.max(n) as f64 * eps);
            let r00 = Scalar::abs(hv[(0, 0)]).to_f64();
            let threshold = opts.atol.max(rtol * r00);
            let rank = (0..k).take_while(|&i| Scalar::abs(hv[(i, i)]).to_f64() > threshold).count();
            item.set::<i64>(3, 0, rank as i64);
        }
        Ok(())
    }
}

/// Expands the reflectors of `h` (m×n, k = min(m, n) of them, scalars
/// `tau`) into the explicit Q in `q` (m×qcols, qcols ≥ k) with ?orgqr /
/// ?ungqr, then applies the diag(R) ≥ 0 phase to its first k columns.
fn form_q<T: Lapack>(h: MatRef<'_, T>, tau: &[T], mut q: MatMut<'_, T>, work: &mut [T]) {
    let lwork = int(work.len());
    let (m, qcols) = (q.nrows(), q.ncols());
    let k = h.nrows().min(h.ncols());
    for j in 0..qcols {
        for i in 0..m {
            q[(i, j)] = if j < k { h[(i, j)] } else { T::zero() };
        }
    }
    {
        // SAFETY: every element of `q` was written just above.
        let slice = unsafe { out_slice(&mut q) };
        fits(slice.len(), span(m, qcols, ld(m)));
        fits(tau.len(), k);
        // SAFETY: Q is m×qcols with LDA = m (contiguous output, checked by
        // `out_slice`), qcols ≥ k reflectors, TAU k; LWORK is WORK's length,
        // which covers the queried size.
        let info = unsafe { T::ungqr(int(m), int(qcols), int(k), slice, int(ld(m)), tau, work, lwork) };
        info_ok("?orgqr/?ungqr", info);
    }
    for j in 0..k {
        let c = phase(h[(j, j)]);
        for i in 0..m {
            q[(i, j)] *= c;
        }
    }
}

/// Writes R (`r.nrows()` rows) from the upper trapezoid of `h`, row j scaled
/// by conj(phase(h[j,j])) so that the diagonal is real and ≥ 0.
fn form_r<T: Lapack>(h: MatRef<'_, T>, mut r: MatMut<'_, T>) {
    let k = h.nrows().min(h.ncols()).min(r.nrows());
    for j in 0..r.ncols() {
        for i in 0..r.nrows() {
            r[(i, j)] = if i > j || i >= h.nrows() {
                T::zero()
            } else if i == j {
                T::from_real(Scalar::abs(h[(i, i)]))
            } else if i < k {
                h[(i, j)] * Scalar::conj(phase(h[(i, i)]))
            } else {
                h[(i, j)]
            };
        }
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
