//! QR kernels: unpivoted Householder QR (`qr`, thin or complete) and
//! column-pivoted, rank-revealing QR (`rank_revealing_qr`), over faer's
//! in-place factorizations; in std builds, real matrices up to 96 rows and
//! columns go to lindiff's own unblocked kernel (`super::qr_small`: 0.3–0.75
//! of faer's time for square f64 matrices from n = 8 to 96, `cargo xtask
//! bench`'s `qr` rows), with the same conventions.
//!
//! Conventions (every provider): diag(R) is real and ≥ 0. faer returns
//! R[k,k] = −phase(x₀)·‖x‖ (negative or complex), so after factoring, for
//! each k with d = R[k,k] ≠ 0, row k of R is multiplied by conj(d)/|d| and
//! column k of Q by d/|d|; Q R is unchanged and R[k,k] becomes |d| (written
//! exactly real).
//!
//! Rank-deficient input to the *unpivoted* QR: faer skips columns whose
//! remaining norm is negligible (≤ 16·(m−k)·ε·‖column‖), so R is upper
//! triangular in echelon form: a diagonal entry may be ~0 while entries to
//! its right in the same row are not. `qr_small` applies the same test
//! (to a last diagonal entry too, which faer keeps) and zeroes such a
//! column's remaining part: R[k, k] = 0, no echelon shift. A = Q R still holds to rounding and Q
//! is still unitary, and diag(R) is still real and ≥ 0, but it is then *not*
//! a rank or conditioning estimate; use `rank_revealing_qr` for that.

use super::columns::{copy_col, packed_mut, zero_col};
use super::householder::phase;
use super::qr_small;
use super::range::copy_range;
use super::scaling::{Range, Scaling};
use crate::batch::{square_fits, Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
};
use faer::linalg::qr::{col_pivoting, no_pivoting};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{unzip, zip, ColRef, Conj, MatMut, MatRef, Par};
use lindiff_core::op::{Qr, QrMode, RankRevealingQr};
use lindiff_core::{RealScalar, Scalar};

/// faer's block size for an m×n QR (at least 1).
fn block_size<T: Field>(m: usize, n: usize) -> usize {
    no_pivoting::factor::recommended_block_size::<T>(m, n)
}

/// Writes the explicit Q (its first `q.ncols()` columns) of a factored
/// matrix `qr` (faer's packed storage with block factors `coeff`) into `q`,
/// with the diag(R) ≥ 0 phase fix applied to its first k columns. The fix
/// rides along for free: H₁⋯H_k applied to diag(c) instead of I gives
/// (H₁⋯H_k)·diag(c), so no pass over Q scales its columns afterwards.
fn form_q<T: Field>(
    qr: MatRef<'_, T>,
    coeff: MatRef<'_, T>,
    phases: &[T],
    mut q: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) {
    let k = qr.nrows().min(qr.ncols());
    q.fill(T::zero());
    for i in 0..q.nrows().min(q.ncols()) {
        q[(i, i)] = if i < k { Scalar::conj(phases[i]) } else { T::one() };
    }
    if k == 0 {
        return;
    }
    apply_block_householder_sequence_on_the_left_in_place_with_conj(
        qr,
        coeff,
        Conj::No,
        q.rb_mut(),
        par,
        stack,
    );
}

/// The phases conj(d)/|d| of R's diagonal entries d (1 for d = 0): row i of
/// R is multiplied by `phases[i]`, column i of Q by its conjugate.
fn row_phases<T: Field>(qr: MatRef<'_, T>, phases: &mut [T]) {
    for (i, c) in phases.iter_mut().enumerate() {
        *c = Scalar::conj(phase(qr[(i, i)]));
    }
}

fn form_r<T: Field>(qr: MatRef<'_, T>, phases: &[T], mut r: MatMut<'_, T>) {
    let rows = r.nrows();
    let k = phases.len().min(rows);
    let phases = ColRef::from_slice(phases);
    // Column by column (R can be large): the scaled rows above the diagonal,
    // the real diagonal |r_jj|, zeros below.
    for j in 0..r.ncols() {
        let top = j.min(rows);
        let scaled = top.min(k);
        let (src, mut dst) = (qr.col(j), r.rb_mut().col_mut(j));
        zip!(dst.rb_mut().subrows_mut(0, scaled), src.subrows(0, scaled), phases.subrows(0, scaled))
            .for_each(|unzip!(d, s, c)| *d = *s * *c);
        copy_col(src.subrows(scaled, top - scaled), dst.rb_mut().subrows_mut(scaled, top - scaled));
        if j < rows {
            // j < k here: R has k = min(m, n) rows, or m ≥ n = k rows.
            dst[j] = T::from_real(Scalar::abs(src[j]));
            let below = rows - j - 1;
            zero_col(dst.subrows_mut(j + 1, below));
        }
    }
}

/// [`form_r`] in place, for a factorization made in R's own memory (R has
/// A's shape): rows scaled by their phases above the diagonal, the real
/// diagonal |r_jj|, zeros below (where the Householder vectors were).
fn fix_r<T: Field>(r: MatMut<'_, T>, phases: &[T]) {
    let rows = r.nrows();
    if rows * r.ncols() == 0 {
        return;
    }
    // R is an output, packed column-major (batch.rs): plain slice loops,
    // inlined and vectorised, instead of a strided call per column.
    let data = packed_mut(r).expect("R is a kernel output: packed column-major");
    // R has A's shape here, so its k = min(m, n) phases are at most its rows.
    debug_assert!(phases.len() <= rows);
    fix_packed_r(data, rows, phases);
}

with_avx2! {
    /// [`fix_r`] on R's packed columns of `rows` entries (AVX2 code when the
    /// CPU has it: the loops are short, and baseline x86-64 packs only two
    /// f64s).
    fn fix_packed_r<T: Field>(data: &mut [T], rows: usize, phases: &[T]) => fix_packed_r_body
}

#[inline(always)]
fn fix_packed_r_body<T: Field>(data: &mut [T], rows: usize, phases: &[T]) {
    let rephase = phases.iter().any(|&c| c != T::one());
    for (j, col) in data.chunks_exact_mut(rows).enumerate() {
        if rephase {
            col.iter_mut().zip(&phases[..j.min(phases.len())]).for_each(|(x, c)| *x *= *c);
        }
        if j < rows {
            col[j] = T::from_real(Scalar::abs(col[j]));
            col[j + 1..].fill(T::zero());
        }
    }
}

impl<T: Field> Kernel<T> for Qr {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let k = m.min(n);
        let qcols = match self.0.mode {
            QrMode::Reduced => k,
            QrMode::Complete if !square_fits(m) => return StackReq::OVERFLOW,
            QrMode::Complete => m,
        };
        let bs = block_size::<T>(m, n);
        StackReq::all_of(&[
            temp_mat_scratch::<T>(m, n),  // packed QR
            temp_mat_scratch::<T>(bs, k), // block Householder factors
            StackReq::new::<T>(k),        // row phases of R
            StackReq::new::<T>(k),        // τ of `qr_small`'s reflectors
            StackReq::any_of(&[
                no_pivoting::factor::qr_in_place_scratch::<T>(m, n, bs, par, Default::default()),
                apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, qcols),
            ]),
        ])
    }

    /// Where R has A's shape (m ≤ n, or the complete mode), A is factored
    /// in R's own memory and R is fixed up in place; otherwise in a
    /// temporary that R is then formed from.
    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let bs = block_size::<T>(m, n);
        let (mut q, mut r) = item.out_pair::<T, T>(0, 1);
        let in_r = r.nrows() == m;
        // SAFETY: `qr` (R's memory or the temporary) is fully written by
        // `copy_range` before it is read; faer writes (and only then reads)
        // the upper triangle of each diagonal block of `coeff`, which is all
        // the apply reads.
        let (mut tmp, stack) = unsafe { temp_mat_uninit::<T, _, _>(m, if in_r { 0 } else { n }, stack) };
        let (mut coeff, stack) = unsafe { temp_mat_uninit::<T, _, _>(bs, k, stack) };
        let (mut phases, stack) = stack.make_with(k, |_| T::one());
        let (mut tau, stack) = stack.make_with(k, |_| T::zero());
        let mut coeff = coeff.as_mat_mut();
        let own = qr_small::serves::<T>(m, n, q.ncols()) && q.row_stride() == 1;
        let mut factor = |mut qr: MatMut<'_, T>| -> Result<Scaling, Failure> {
            // A scaled into the safe range (only out of it): R comes out
            // scaled alike, Q does not.
            let scaling = copy_range(a, qr.rb_mut(), "a", Range::Squares)?;
            scaling.apply_mat(qr.rb_mut());
            if own && qr.row_stride() == 1 {
                qr_small::factor(qr.rb_mut(), &mut tau);
                row_phases(qr.rb(), &mut phases);
                qr_small::form_q(qr.rb(), &tau, &phases, q.rb_mut());
                return Ok(scaling);
            }
            if k > 0 {
                no_pivoting::factor::qr_in_place(
                    qr.rb_mut(),
                    coeff.rb_mut(),
                    par,
                    &mut *stack,
                    Default::default(),
                );
            }
            row_phases(qr.rb(), &mut phases);
            form_q(qr.rb(), coeff.rb(), &phases, q.rb_mut(), par, &mut *stack);
            Ok(scaling)
        };
        let scaling = if in_r {
            let scaling = factor(r.rb_mut())?;
            fix_r(r.rb_mut(), &phases);
            scaling
        } else {
            let mut tmp = tmp.as_mat_mut();
            let scaling = factor(tmp.rb_mut())?;
            form_r(tmp.rb(), &phases, r.rb_mut());
            scaling
        };
        scaling.undo_mat(r);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for RankRevealingQr {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let k = m.min(n);
        let bs = block_size::<T>(m, n);
        StackReq::all_of(&[
            temp_mat_scratch::<T>(m, n),
            temp_mat_scratch::<T>(bs, k),
            StackReq::new::<T>(k),                 // row phases of R
            StackReq::new_aligned::<usize>(n, 64), // col_perm
            StackReq::new_aligned::<usize>(n, 64), // col_perm_inv
            StackReq::any_of(&[
                col_pivoting::factor::qr_in_place_scratch::<usize, T>(m, n, bs, par, Default::default()),
                apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, k),
            ]),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let bs = block_size::<T>(m, n);
        // SAFETY: as in `Qr::run`: `qr` is written (by `copy_range`) before
        // it is read, and faer writes the part of `coeff` it later reads.
        let (mut qr, stack) = unsafe { temp_mat_uninit::<T, _, _>(m, n, stack) };
        let mut qr = qr.as_mat_mut();
        let scaling = copy_range(a, qr.rb_mut(), "a", Range::Squares)?;
        let all_zero = (0..n).all(|j| (0..m).all(|i| a[(i, j)] == T::zero()));
        if k == 0 || all_zero {
            // faer divides by the largest column norm: an all-zero matrix
            // would give NaN. Its QR is Q = I[:, :k], R = 0, P = I, rank 0.
            let mut q = item.out_mat::<T>(0);
            q.fill(T::zero());
            for i in 0..k {
                q[(i, i)] = T::one();
            }
            item.out_mat::<T>(1).fill(T::zero());
            for j in 0..n {
                item.set::<i64>(2, j, j as i64);
            }
            item.set::<i64>(3, 0, 0);
            return Ok(());
        }
        // SAFETY: faer writes the part of `coeff` it later reads.
        let (mut coeff, stack) = unsafe { temp_mat_uninit::<T, _, _>(bs, k, stack) };
        let (mut phases, stack) = stack.make_with(k, |_| T::one());
        let mut coeff = coeff.as_mat_mut();
        let (mut fwd, stack) = stack.make_aligned_with::<usize>(n, 64, |j| j);
        let (mut inv, stack) = stack.make_aligned_with::<usize>(n, 64, |j| j);
        scaling.apply_mat(qr.rb_mut());
        col_pivoting::factor::qr_in_place::<usize, T>(
            qr.rb_mut(),
            coeff.rb_mut(),
            &mut fwd,
            &mut inv,
            par,
            stack,
            Default::default(),
        );
        row_phases(qr.rb(), &mut phases);
        form_q(qr.rb(), coeff.rb(), &phases, item.out_mat::<T>(0), par, stack);
        let mut r = item.out_mat::<T>(1);
        form_r(qr.rb(), &phases, r.rb_mut());
        scaling.undo_mat(r);
        // faer: A[:, fwd[j]] = (Q R)[:, j], which is our `a[:, perm] = q r`.
        for (j, &p) in fwd.iter().enumerate() {
            item.set::<i64>(2, j, p as i64);
        }
        // |R[i,i]| is non-increasing (greedy pivoting), so the rank is the
        // prefix above the threshold max(atol, rtol·|R[0,0]|): the relative
        // test on the scaled R (scale-free), the absolute one on |R[i,i]|
        // scaled back.
        let eps = <T as Scalar>::Real::EPSILON.to_f64();
        let rtol = self.0.rtol.unwrap_or(m.max(n) as f64 * eps);
        let r00 = Scalar::abs(qr[(0, 0)]).to_f64();
        let kept = |i: usize| {
            let rii = Scalar::abs(qr[(i, i)]);
            rii.to_f64() > rtol * r00 && scaling.undo(rii).to_f64() > self.0.atol
        };
        let rank = (0..k).take_while(|&i| kept(i)).count();
        item.set::<i64>(3, 0, rank as i64);
        Ok(())
    }
}
