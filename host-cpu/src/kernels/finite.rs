//! The non-finite input check every decomposition runs (faer does not check
//! everywhere, and a NaN must be reported naming the argument, not returned
//! as NaN outputs or a hang).

use super::columns::copy_col;
use crate::batch::Failure;
use crate::field::Field;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{ColRef, MatMut, MatRef};
use lindiff_core::Scalar;

/// `true` when every entry of `m` is finite.
pub fn all_finite<T: Field>(m: MatRef<'_, T>) -> bool {
    (0..m.ncols()).all(|j| col_finite(m.col(j)))
}

/// `true` when every entry of `c` is finite. A contiguous column is scanned
/// without early exit, which the compiler vectorises (the check runs on every
/// input of every decomposition, so at small n it is a visible part of a
/// call); a strided one entry by entry.
pub(crate) fn col_finite<T: Field>(c: ColRef<'_, T>) -> bool {
    match c.try_as_col_major() {
        Some(c) => slice_finite(c.as_slice()),
        None => c.iter().all(|&x| Scalar::is_finite(x)),
    }
}

/// `dst = src`, column by column, checking each copied column while it is
/// still in cache: `Err(NonFinite(arg))` when `src` has a NaN or infinite
/// entry (then `dst` holds a partial copy). One pass over `src` where a
/// check followed by a copy would make two.
pub(super) fn copy_finite<T: Field>(
    src: MatRef<'_, T>,
    mut dst: MatMut<'_, T>,
    arg: &'static str,
) -> Result<(), Failure> {
    for j in 0..src.ncols() {
        copy_col(src.col(j), dst.rb_mut().col_mut(j));
        if !col_finite(dst.rb().col(j)) {
            return Err(Failure::NonFinite(arg));
        }
    }
    Ok(())
}

/// `Err(NonFinite(arg))` when `m` has a NaN or infinite entry.
pub(super) fn check_finite<T: Field>(m: MatRef<'_, T>, arg: &'static str) -> Result<(), Failure> {
    if all_finite(m) {
        Ok(())
    } else {
        Err(Failure::NonFinite(arg))
    }
}

/// `true` when every entry of `s` is finite; a branch-free fold, kept out of
/// line so that the compiler vectorises it on its own.
#[inline(never)]
fn slice_finite<T: Field>(s: &[T]) -> bool {
    s.iter().fold(true, |ok, &x| ok & Scalar::is_finite(x))
}
