//! Column copies and fills for the short columns of small matrices, where
//! faer's general strided `copy_from`/`fill` cost more than the work itself
//! (they show up in the per-call overhead of the direct face at n ≤ 64).

use crate::field::Field;
use faer::reborrow::ReborrowMut;
use faer::{unzip, zip, ColMut, ColRef, MatMut, MatRef};

/// `dst = src`: one `memcpy` when both are contiguous.
pub(crate) fn copy_col<T: Field>(src: ColRef<'_, T>, mut dst: ColMut<'_, T>) {
    match (src.try_as_col_major(), dst.rb_mut().try_as_col_major_mut()) {
        (Some(s), Some(d)) => d.as_slice_mut().copy_from_slice(s.as_slice()),
        _ => dst.copy_from(src),
    }
}

/// Sets every entry of `dst` to zero.
pub(crate) fn zero_col<T: Field>(mut dst: ColMut<'_, T>) {
    match dst.rb_mut().try_as_col_major_mut() {
        Some(d) => d.as_slice_mut().fill(T::zero()),
        None => dst.fill(T::zero()),
    }
}

/// `dst[i] *= by[i]` for columns of the same length: a plain slice loop
/// (vectorised) when both are contiguous.
pub(crate) fn mul_col<T: Field>(mut dst: ColMut<'_, T>, by: ColRef<'_, T>) {
    match (dst.rb_mut().try_as_col_major_mut(), by.try_as_col_major()) {
        (Some(d), Some(b)) => d.as_slice_mut().iter_mut().zip(b.as_slice()).for_each(|(x, c)| *x *= *c),
        _ => zip!(dst, by).for_each(|unzip!(x, c)| *x *= *c),
    }
}

/// `dst = src` for matrices of the same shape: one `memcpy` when both are
/// column-major without gaps between columns, else column by column.
pub(crate) fn copy_mat<T: Field>(src: MatRef<'_, T>, mut dst: MatMut<'_, T>) {
    let (m, n) = (src.nrows(), src.ncols());
    let packed = |rs: isize, cs: isize| rs == 1 && (n <= 1 || cs == m as isize);
    if m * n > 0 && packed(src.row_stride(), src.col_stride()) && packed(dst.row_stride(), dst.col_stride()) {
        // SAFETY: both views are column-major with consecutive columns, so
        // their m·n elements are one contiguous run starting at the view's
        // pointer (inside the matrices' memory, which the views borrow); the
        // two borrows cannot overlap (`dst` is unique).
        unsafe {
            let s = core::slice::from_raw_parts(src.as_ptr(), m * n);
            core::slice::from_raw_parts_mut(dst.as_ptr_mut(), m * n).copy_from_slice(s);
        }
        return;
    }
    for j in 0..n {
        copy_col(src.col(j), dst.rb_mut().col_mut(j));
    }
}
