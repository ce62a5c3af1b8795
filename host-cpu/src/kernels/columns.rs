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
