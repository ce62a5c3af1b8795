//! Hermitian eigendecomposition kernels: `Eigh` (values and vectors) and
//! `EighVals` (values only), over faer's `self_adjoint_evd`, or for real
//! matrices with vectors from n = 128 (`std` builds) over faer's reduction
//! to tridiagonal form, lindiff's own tridiagonal divide and conquer
//! (`super::tridiagonal_dc`) and faer's back-transformation.
//!
//! * Only the lower triangle of `a` is read, and the imaginary part of its
//!   diagonal is ignored. faer reads the lower triangle only, but it does
//!   *not* ignore an imaginary diagonal (its tridiagonalization uses the
//!   complex diagonal; checked: a diagonal `0.7i·k` changed the eigenvalues
//!   by O(1)). So for complex input whose diagonal has a nonzero imaginary
//!   part, the lower triangle is first copied into scratch with a real
//!   diagonal. faer copies the lower triangle itself before it starts, so the
//!   result is the same bits either way.
//! * The lower triangle is checked for NaN/∞ first (the diagonal's real part
//!   only, as its imaginary part is ignored): faer does not check, and a
//!   non-finite input can make it iterate for seconds before failing.
//! * Eigenvalues are real and ascending (faer sorts them), written as the
//!   real type of the input. Eigenvectors have the canonical phase: the
//!   largest-magnitude entry of each column is real and positive.
//! * Algorithms: values only always use the tridiagonal QR algorithm; with
//!   vectors, faer's QR below n = 128 and divide and conquer from there on
//!   (lindiff's for real matrices in `std` builds, faer's otherwise).
//!   `EighVals` may therefore differ from `Eigh`'s `w` in the last bits.
//! * Scale-robust (`super::scaling`): when the lower triangle's largest
//!   entry lies outside the safe range, faer runs on a copy of it scaled by
//!   2^e into the range (the same copy as for a complex diagonal) and the
//!   eigenvalues are scaled back; the scan that measures it is the
//!   non-finite check's (`super::range::lower_range`).
//!
//! Scratch: the eigenvalues as `T` (n×1), an n×n copy of the lower triangle
//! (for a complex diagonal or a scaled matrix), and the eigensolver's own.

use super::columns::copy_col;
use super::finite::lower_finite;
use super::range::lower_range;
use super::scaling::Scaling;
use super::tridiagonal_dc;
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::evd::{self_adjoint_evd, self_adjoint_evd_scratch, ComputeEigenvectors};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::{Eigh, EighVals};
use lindiff_core::Scalar;

/// `Err(NonFinite("a"))` if the lower triangle of `a` has a NaN or infinite
/// entry; on the diagonal only the real part counts (the imaginary part is
/// ignored by the Hermitian kernels).
pub(super) fn check_finite_lower<T: Field>(a: MatRef<'_, T>) -> Result<(), Failure> {
    if lower_finite(a) {
        Ok(())
    } else {
        Err(Failure::NonFinite("a"))
    }
}

/// `true` when some diagonal entry of `a` has a nonzero imaginary part.
fn has_complex_diagonal<T: Field>(a: MatRef<'_, T>) -> bool {
    <T as Scalar>::IS_COMPLEX && (0..a.nrows()).any(|j| Scalar::im(a[(j, j)]) != <T as Scalar>::Real::zero())
}

/// Writes the lower triangle of `a` into `dst` with the diagonal's imaginary
/// part cleared (the strict upper triangle of `dst` is not touched).
pub(super) fn copy_lower_real_diagonal<T: Field>(a: MatRef<'_, T>, mut dst: MatMut<'_, T>) {
    let n = a.nrows();
    for j in 0..a.ncols() {
        copy_col(a.col(j).subrows(j, n - j), dst.rb_mut().col_mut(j).subrows_mut(j, n - j));
        if <T as Scalar>::IS_COMPLEX {
            dst[(j, j)] = T::from_real(Scalar::re(a[(j, j)]));
        }
    }
}

fn compute_flag(vectors: bool) -> ComputeEigenvectors {
    if vectors {
        ComputeEigenvectors::Yes
    } else {
        ComputeEigenvectors::No
    }
}

/// Multiplies the lower triangle of the square `m` by 2^e (e of `scaling`).
fn scale_lower<T: Field>(mut m: MatMut<'_, T>, scaling: Scaling) {
    if scaling.is_none() {
        return;
    }
    for j in 0..m.ncols() {
        for i in j..m.nrows() {
            m[(i, j)] = scaling.apply(m[(i, j)]);
        }
    }
}

/// Scratch of [`compute`] for an n×n input.
fn scratch<T: Field>(n: usize, vectors: bool, par: Par) -> StackReq {
    if n == 0 {
        // faer's scratch function underflows (`n - 1`) for n = 0 with vectors.
        return StackReq::EMPTY;
    }
    StackReq::all_of(&[
        temp_mat_scratch::<T>(n, 1), // eigenvalues, as T
        decompose_scratch::<T>(n, vectors, par),
    ])
}

/// Scratch of [`decompose`] for an n×n input (n ≥ 1).
pub(super) fn decompose_scratch<T: Field>(n: usize, vectors: bool, par: Par) -> StackReq {
    StackReq::all_of(&[
        temp_mat_scratch::<T>(n, n), // lower triangle with a real diagonal, scaled
        if vectors && tridiagonal_dc::serves::<T>(n) {
            tridiagonal_dc::evd_scratch::<T>(n, par)
        } else {
            self_adjoint_evd_scratch::<T>(n, compute_flag(vectors), par, Default::default())
        },
    ])
}

/// The eigenvalues of the Hermitian `a` (n ≥ 1, its lower triangle) into
/// `s` (n×1, as T, scaled by the returned [`Scaling`]) and, with `v`, the
/// canonical eigenvectors into it.
///
/// # Errors
/// `NonFinite("a")`, `NonConvergence`.
pub(super) fn decompose<T: Field>(
    a: MatRef<'_, T>,
    mut s: MatMut<'_, T>,
    v: Option<MatMut<'_, T>>,
    par: Par,
    stack: &mut MemStack,
) -> Result<Scaling, Failure> {
    let n = a.nrows();
    let scaling = lower_range(a).ok_or(Failure::NonFinite("a"))?;
    // SAFETY: the copy's lower triangle is written below before faer reads
    // it, and faer reads nothing else of it; it is unused otherwise.
    let (mut copy, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
    let mut copy = copy.as_mat_mut();
    let src = if !scaling.is_none() || has_complex_diagonal(a) {
        copy_lower_real_diagonal(a, copy.rb_mut());
        scale_lower(copy.rb_mut(), scaling);
        copy.rb()
    } else {
        a
    };
    match v {
        Some(mut v) => {
            // Either eigensolver writes every element of `s` and `v` without
            // reading it.
            if tridiagonal_dc::serves::<T>(n) {
                tridiagonal_dc::self_adjoint_evd(src, s.rb_mut(), v.rb_mut(), par, stack)
                    .map_err(|()| Failure::NonConvergence)?;
            } else {
                let diag = s.rb_mut().col_mut(0).as_diagonal_mut();
                self_adjoint_evd(src, diag, Some(v.rb_mut()), par, stack, Default::default())
                    .map_err(|_| Failure::NonConvergence)?;
            }
            super::gauge::canonicalize_columns(v);
        }
        None => self_adjoint_evd(src, s.col_mut(0).as_diagonal_mut(), None, par, stack, Default::default())
            .map_err(|_| Failure::NonConvergence)?,
    }
    Ok(scaling)
}

/// Computes the eigenvalues (output 0, real) and, when `vectors` and the
/// output is present, the canonical eigenvectors (output 1) of item `a`.
fn compute<T: Field>(
    item: &mut Item<'_>,
    vectors: bool,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    let a = item.mat::<T>(0);
    let n = a.nrows();
    if n == 0 {
        return Ok(()); // both outputs are empty
    }
    // SAFETY: `s` is written by the eigensolver (without being read) before
    // we read it.
    let (mut s, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    let mut s = s.as_mat_mut();
    let scaling = if vectors && item.has_output(1) {
        decompose(a, s.rb_mut(), Some(item.out_mat::<T>(1)), par, stack)?
    } else {
        decompose(a, s.rb_mut(), None, par, stack)?
    };
    super::svd::store_values(item, 0, s.rb(), scaling);
    Ok(())
}

values_and_vectors!(Eigh, EighVals);
