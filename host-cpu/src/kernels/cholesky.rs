//! Cholesky kernel: `Cholesky` (`a = l lᴴ`), over faer's `cholesky_in_place`
//! — except, in `std` builds, for real matrices up to n = 132, which run
//! lindiff's own [`cholesky_small`] kernel (faster than faer's there; same
//! checks, errors and output conventions; f32 at n = 128 excepted): in
//! place in a packed output, or for f64 at n = 128 on a copy with padded
//! columns (`cholesky_small::leading_dim`).
//!
//! * Only the lower triangle of `a` is used, and the imaginary part of its
//!   diagonal is ignored: on faer's path `a` is copied into the output `l`
//!   with a real diagonal and factored there in place (lindiff's kernel, in
//!   `l` or in the padded copy, reads the upper triangle but never lets it
//!   reach L; faer computes from the lower
//!   triangle only; `tests/tests/cholesky.rs` puts a NaN above the diagonal).
//!   faer does not clear an imaginary diagonal itself, and its SIMD kernel
//!   (column-major input) *reads and writes* the strict upper triangle of
//!   each diagonal block (checked: a nonzero `l[0,1]` for n = 2, contrary to
//!   docs/faer-scratch-apis.md §10; the values it reads there do not
//!   reach the lower triangle), so that triangle is initialised before the
//!   factorization and zeroed again afterwards where faer may have written
//!   ([`FAER_LEAF`]).
//! * NaN/∞ in the lower triangle (the diagonal's real part only) →
//!   `NonFinite("a")`, checked when the factorization shows one (see `run`);
//!   a pivot that is not > 0 → `NotPositiveDefinite("a")`.
//! * `l` has zeros strictly above the diagonal and a real positive diagonal
//!   (faer takes the square root of the pivot's real part; any rounding-level
//!   imaginary part is cleared afterwards).
//!
//! * Scale-robust (`super::scaling`): the entries of a positive definite
//!   matrix are bounded by its largest diagonal entry (|a_ij|² ≤ a_ii·a_jj),
//!   so when that lies outside the safe range the kernel factors
//!   `a · 4^k` (an even power of two, found by an O(n) scan of the
//!   diagonal) and scales L back by 2^−k: a positive definite matrix of
//!   subnormal entries is factored to full precision instead of failing
//!   on pivots that lost their bits.
//!
//! Scratch: faer's (one n×1 temporary), or for the padded copy its ld×n
//! elements; otherwise no copy, as `l` itself is the working matrix.

use super::cholesky_small;
use super::columns::{copy_col, copy_mat, packed_mut, write_col, zero_col};
use super::eigh::check_finite_lower;
use super::scaling::{max_abs, scale_mat, Range, Scaling};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use core::mem::MaybeUninit;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch};
use faer::reborrow::ReborrowMut;
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::Cholesky;
use lindiff_core::Scalar;

impl<T: Field> Kernel<T> for Cholesky {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let faer = cholesky_in_place_scratch::<T>(n, par, Default::default());
        match small_ld::<T>(n) {
            Some(ld) if ld != n => faer.or(StackReq::new_aligned::<T>(ld * n, 64)),
            _ => faer,
        }
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        let scaling = diagonal_scaling(a);
        let mut l = item.out_mat::<T>(0);
        if let Some(ld) = small_ld::<T>(n) {
            if let Some(result) = small(a, l.rb_mut(), ld, scaling, stack) {
                if result.is_ok() {
                    scale_mat(l, -scaling.exponent() / 2);
                }
                return result;
            }
        }
        copy_lower(a, l.rb_mut());
        scaling.apply_mat(l.rb_mut());
        if <T as Scalar>::IS_COMPLEX {
            for k in 0..n {
                l[(k, k)] = T::from_real(Scalar::re(l[(k, k)]));
            }
        }
        // `a` is scanned for NaN/∞ only when the factorization fails or its
        // diagonal is not finite (the scan would cost as much as a small
        // factorization): every entry of row i of the lower triangle enters
        // l[i, i]² = a[i, i] − Σ_k |l[i, k]|², so a NaN or ∞ there makes that
        // pivot NaN, −∞ (rejected) or +∞ (a non-finite diagonal).
        let factored = cholesky_in_place(l.rb_mut(), Default::default(), par, stack, Default::default());
        if factored.is_err() || !(0..n).all(|k| Scalar::is_finite(l[(k, k)])) {
            check_finite_lower(a)?;
        }
        factored.map_err(|_| Failure::NotPositiveDefinite("a"))?;
        // faer's SIMD kernel writes rounding garbage into the strict upper
        // triangle of its diagonal blocks; the output has zeros there.
        if n < TRIANGLE_FROM {
            // The whole upper triangle came from `a`.
            zero_strict_upper(l.rb_mut());
        } else {
            zero_leaf_uppers(l.rb_mut());
        }
        for k in 0..n {
            l[(k, k)] = T::from_real(Scalar::re(l[(k, k)]));
        }
        scale_mat(l, -scaling.exponent() / 2);
        Ok(())
    }
}

/// The scaling (an even power of two) that brings the largest diagonal
/// entry of `a` (real parts) into the safe range; none when it lies in it,
/// or when the diagonal has NaN/∞ (the factorization reports that).
fn diagonal_scaling<T: Field>(a: MatRef<'_, T>) -> Scaling {
    let diagonal = (0..a.nrows()).map(|k| Scalar::re(a[(k, k)]));
    match max_abs(diagonal) {
        Some(max) => Scaling::from_exponent(Scaling::of_max(max, Range::Linear).exponent() & !1),
        None => Scaling::NONE,
    }
}

/// The leading dimension lindiff's own [`cholesky_small::factor`] runs
/// with for an n×n `T` (`None`: faer's kernel serves; complex dtypes and
/// builds without `std` always go to faer).
fn small_ld<T: Field>(n: usize) -> Option<usize> {
    let own = super::SMALL_KERNELS && !<T as Scalar>::IS_COMPLEX;
    own.then(|| cholesky_small::leading_dim::<T>(n)).flatten()
}

/// [`Kernel::run`] for a small real matrix, with lindiff's own
/// [`cholesky_small::factor`] at leading dimension `ld`: with `ld = n`, in
/// place in `l` when `l` is packed (`None` otherwise: faer's path serves);
/// else in a padded copy in `stack` (as [`Kernel::scratch`] sized it),
/// copied out to `l` afterwards. `a` is copied whole (its strict upper
/// triangle is read but never reaches L, and the factorization zeroes it);
/// the same non-finite and positive-definite checks as faer's path.
#[inline(always)]
fn small<T: Field>(
    a: MatRef<'_, T>,
    l: MatMut<'_, T>,
    ld: usize,
    scaling: Scaling,
    stack: &mut MemStack,
) -> Option<Result<(), Failure>> {
    let n = a.nrows();
    let (factored, diag_finite) = if ld == n {
        let l = packed_mut(l)?;
        copy_mat(a, MatMut::from_column_major_slice_mut(&mut *l, n, n));
        scaling.apply_mat(MatMut::from_column_major_slice_mut(&mut *l, n, n));
        (cholesky_small::factor(l, n, n), diagonal_finite(l, n, n))
    } else {
        let (buf, _) = stack.make_aligned_uninit::<T>(ld * n, 64);
        // Column j: a's column (its upper part too, as `factor` reads it),
        // then zeros in the padding rows, so every element is written.
        for (j, col) in buf.chunks_exact_mut(ld).enumerate() {
            let (top, pad) = col.split_at_mut(n);
            write_col(a.col(j), top);
            pad.iter_mut().for_each(|d| {
                d.write(T::zero());
            });
        }
        // SAFETY: every element of `buf` was written just above (ld·n of
        // them: n rows per column from `a`, ld − n zeros), and `T` has the
        // layout of `MaybeUninit<T>`.
        let w = unsafe { &mut *(core::ptr::from_mut::<[MaybeUninit<T>]>(buf) as *mut [T]) };
        scaling.apply_mat(MatMut::from_column_major_slice_with_stride_mut(&mut *w, n, n, ld));
        let factored = cholesky_small::factor(w, n, ld);
        if factored {
            copy_mat(MatRef::from_column_major_slice_with_stride(w, n, n, ld), l);
        }
        (factored, diagonal_finite(w, n, ld))
    };
    if !factored || !diag_finite {
        if let Err(failure) = check_finite_lower(a) {
            return Some(Err(failure));
        }
    }
    Some(if factored { Ok(()) } else { Err(Failure::NotPositiveDefinite("a")) })
}

/// Whether the diagonal of the n×n column-major `l` (leading dimension
/// `ld`) is finite.
fn diagonal_finite<T: Field>(l: &[T], n: usize, ld: usize) -> bool {
    (0..n).all(|k| Scalar::is_finite(l[k * ld + k]))
}

/// Column count from which [`copy_lower`] copies the lower triangle alone.
const TRIANGLE_FROM: usize = 64;

/// Starts `l` as `a`'s lower triangle, every entry initialised (faer's SIMD
/// kernel reads the strict upper triangle of its diagonal blocks too). Small
/// matrices are copied whole, in one `memcpy` (cheaper than 2n short
/// writes); from [`TRIANGLE_FROM`] on the lower triangle is copied and the
/// upper one zeroed, so `a`'s upper half is never read.
fn copy_lower<T: Field>(a: MatRef<'_, T>, mut l: MatMut<'_, T>) {
    let n = a.nrows();
    if n < TRIANGLE_FROM {
        copy_mat(a, l);
        return;
    }
    for j in 0..n {
        let mut col = l.rb_mut().col_mut(j);
        zero_col(col.rb_mut().subrows_mut(0, j));
        copy_col(a.col(j).subrows(j, n - j), col.subrows_mut(j, n - j));
    }
}

/// Side of the aligned diagonal blocks outside which faer's Cholesky never
/// touches the strict upper triangle (its `LltParams` recursion threshold).
///
/// faer 0.24's `cholesky_in_place` (LLT, default parameters: recursion
/// threshold 64, block size 128; unit test `faer_parameters_are_the_proven_ones`)
/// factors n ≤ 64 in one SIMD kernel call and splits larger matrices into
/// diagonal blocks of min(n.next_power_of_two() / 2, 128) columns, each
/// factored recursively (so the leaves are at most 64 wide and start at
/// multiples of 64), then a triangular solve for the block below the
/// diagonal block and a lower-triangular rank update of the trailing
/// block — neither reads nor writes above the diagonal. Inside a leaf, the
/// SIMD kernel (`simd_cholesky_row_batch`) reads and overwrites the strict
/// upper part of the leaf (its row batches are full columns of the batch's
/// rows); the scalar fallback touches only the lower triangle. So after the
/// factorization, entries above the diagonal differ from what `copy_lower`
/// put there only inside the 64×64 diagonal blocks aligned at multiples of
/// 64 (unit test `faer_writes_above_the_diagonal_only_inside_its_leaves`
/// runs faer itself with markers there; tests/tests/cholesky.rs checks exact
/// zeros above the diagonal for n up to 200 in every dtype).
const FAER_LEAF: usize = 64;

/// Zeroes what faer may have written above the diagonal of `l` when
/// `copy_lower` had zeroed it before: the strict upper part of each
/// [`FAER_LEAF`]-aligned diagonal block (about 64/n of the triangle: half
/// of it at n = 128, an eighth at 512).
fn zero_leaf_uppers<T: Field>(mut l: MatMut<'_, T>) {
    for j in 0..l.ncols() {
        let top = j - j % FAER_LEAF;
        zero_col(l.rb_mut().col_mut(j).subrows_mut(top, j - top));
    }
}

/// Sets the entries of `l` strictly above the diagonal to zero.
fn zero_strict_upper<T: Field>(mut l: MatMut<'_, T>) {
    let m = l.nrows();
    for j in 0..l.ncols() {
        zero_col(l.rb_mut().col_mut(j).subrows_mut(0, j.min(m)));
    }
}

#[cfg(test)]
mod tests {
    use crate::field::Field;
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::cholesky::llt::factor::{cholesky_in_place, cholesky_in_place_scratch, LltParams};
    use faer::{Auto, Mat, Par};
    use lindiff_core::Scalar;

    /// faer itself, run as the kernel runs it, leaves every entry above the
    /// diagonal outside the `FAER_LEAF`-aligned diagonal blocks as it found
    /// it: a marker there survives (sizes with whole, partial and split
    /// blocks; four dtypes, so every SIMD batch width).
    fn leaves_only<T: Field>() {
        const MARKER: f64 = 7.25;
        for n in [65, 100, 130, 200, 300] {
            let b = Mat::<T>::from_fn(n, n, |i, j| T::from_f64(((i * 31 + j * 17) % 13) as f64 / 13.0 - 0.5));
            let mut l = Mat::<T>::from_fn(n, n, |i, j| {
                let dot = (0..n).fold(T::zero(), |acc, k| acc + b[(i, k)] * Scalar::conj(b[(j, k)]));
                match i.cmp(&j) {
                    core::cmp::Ordering::Less => T::from_f64(MARKER),
                    core::cmp::Ordering::Equal => dot + T::from_f64(n as f64),
                    core::cmp::Ordering::Greater => dot,
                }
            });
            let mut mem = MemBuffer::new(cholesky_in_place_scratch::<T>(n, Par::Seq, Default::default()));
            cholesky_in_place(
                l.as_mut(),
                Default::default(),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .expect("positive definite");
            for j in 0..n {
                for i in 0..j - j % super::FAER_LEAF {
                    assert!(
                        l[(i, j)] == T::from_f64(MARKER),
                        "{:?} n = {n}: faer wrote l[{i}, {j}]",
                        T::DTYPE
                    );
                }
            }
        }
    }

    #[test]
    fn faer_writes_above_the_diagonal_only_inside_its_leaves() {
        leaves_only::<f64>();
        leaves_only::<f32>();
        leaves_only::<faer::c64>();
        leaves_only::<faer::c32>();
    }

    /// `FAER_LEAF`'s argument holds for faer's parameters as they are:
    /// a faer upgrade that changes them fails here, not in the output.
    #[test]
    fn faer_parameters_are_the_proven_ones() {
        fn params<T: faer::traits::ComplexField>() -> (usize, usize) {
            let p = <LltParams as Auto<T>>::auto();
            (p.recursion_threshold, p.block_size)
        }
        let proven = (super::FAER_LEAF, 128);
        assert_eq!(params::<f64>(), proven);
        assert_eq!(params::<f32>(), proven);
        assert_eq!(params::<faer::c64>(), proven);
        assert_eq!(params::<faer::c32>(), proven);
    }
}
