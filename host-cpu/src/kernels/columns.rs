//! Column copies and fills for the short columns of small matrices, where
//! faer's general strided `copy_from`/`fill` cost more than the work itself
//! (they show up in the per-call overhead of the direct face at n ≤ 64).

use crate::field::Field;
use core::mem::MaybeUninit;
use faer::reborrow::ReborrowMut;
use faer::{ColMut, ColRef, MatMut, MatRef};

/// `dst = src`: one `memcpy` when both are contiguous.
pub(crate) fn copy_col<T: Field>(src: ColRef<'_, T>, mut dst: ColMut<'_, T>) {
    match (src.try_as_col_major(), dst.rb_mut().try_as_col_major_mut()) {
        (Some(s), Some(d)) => d.as_slice_mut().copy_from_slice(s.as_slice()),
        _ => dst.copy_from(src),
    }
}

/// `dst = src` into uninitialised memory (`dst.len()` = `src.nrows()`):
/// one slice copy when `src` is contiguous, else element by element.
pub(crate) fn write_col<T: Field>(src: ColRef<'_, T>, dst: &mut [MaybeUninit<T>]) {
    debug_assert_eq!(dst.len(), src.nrows(), "dst has src's rows");
    let write = |(d, s): (&mut MaybeUninit<T>, &T)| {
        d.write(*s);
    };
    match src.try_as_col_major() {
        Some(s) => dst.iter_mut().zip(s.as_slice()).for_each(write),
        None => dst.iter_mut().zip(src.iter()).for_each(write),
    }
}

/// Sets every entry of `dst` to zero.
pub(crate) fn zero_col<T: Field>(mut dst: ColMut<'_, T>) {
    match dst.rb_mut().try_as_col_major_mut() {
        Some(d) => d.as_slice_mut().fill(T::zero()),
        None => dst.fill(T::zero()),
    }
}

/// `m`'s elements as one slice when it is column-major without gaps between
/// columns (and not empty).
pub fn packed<'a, T: Field>(m: MatRef<'a, T>) -> Option<&'a [T]> {
    let (rows, cols) = (m.nrows(), m.ncols());
    if rows * cols > 0 && m.row_stride() == 1 && (cols == 1 || m.col_stride() == rows as isize) {
        // SAFETY: column-major with consecutive columns, so the view's
        // rows·cols elements are one contiguous run from its pointer, inside
        // the memory the view borrows for 'a.
        Some(unsafe { core::slice::from_raw_parts(m.as_ptr(), rows * cols) })
    } else {
        None
    }
}

/// [`packed`] for a mutable view.
pub fn packed_mut<'a, T: Field>(m: MatMut<'a, T>) -> Option<&'a mut [T]> {
    let (rows, cols) = (m.nrows(), m.ncols());
    if rows * cols > 0 && m.row_stride() == 1 && (cols == 1 || m.col_stride() == rows as isize) {
        // SAFETY: as in `packed`; the view is unique for 'a, so is the slice.
        Some(unsafe { core::slice::from_raw_parts_mut(m.as_ptr_mut(), rows * cols) })
    } else {
        None
    }
}

/// `dst = src` for matrices of the same shape: one `memcpy` when both are
/// column-major without gaps between columns, else column by column.
pub(crate) fn copy_mat<T: Field>(src: MatRef<'_, T>, mut dst: MatMut<'_, T>) {
    if let (Some(s), Some(d)) = (packed(src), packed_mut(dst.rb_mut())) {
        d.copy_from_slice(s);
        return;
    }
    for j in 0..src.ncols() {
        copy_col(src.col(j), dst.rb_mut().col_mut(j));
    }
}

/// The entries of a column with unit row stride, as a slice (the small
/// kernels' columns; they check the stride before they start).
#[inline(always)]
pub(crate) fn column<T: Field>(col: ColMut<'_, T>) -> &mut [T] {
    col.try_as_col_major_mut().expect("columns are contiguous").as_slice_mut()
}

/// [`column`] for a shared view.
#[inline(always)]
pub(crate) fn column_ref<T: Field>(col: ColRef<'_, T>) -> &[T] {
    col.try_as_col_major().expect("columns are contiguous").as_slice()
}

/// Σ aᵢ·bᵢ (no conjugate: the small real kernels' products) over the
/// shorter of two slices, in eight lane sums, which compile to packed
/// multiplies and adds.
#[inline(always)]
pub(crate) fn dot<T: Field>(a: &[T], b: &[T]) -> T {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut lanes = [T::zero(); 8];
    let (mut ca, mut cb) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut ca).zip(&mut cb) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    let mut sum = T::zero();
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        sum += *x * *y;
    }
    let pairs = [lanes[0] + lanes[4], lanes[1] + lanes[5], lanes[2] + lanes[6], lanes[3] + lanes[7]];
    sum + ((pairs[0] + pairs[2]) + (pairs[1] + pairs[3]))
}
