//! The non-finite input check every decomposition runs (faer does not check
//! everywhere, and a NaN must be reported naming the argument, not returned
//! as NaN outputs or a hang).

use crate::batch::Failure;
use crate::field::Field;
use faer::MatRef;
use lindiff_core::Scalar;

/// `true` when every entry of `m` is finite.
pub fn all_finite<T: Field>(m: MatRef<'_, T>) -> bool {
    (0..m.ncols()).all(|j| (0..m.nrows()).all(|i| Scalar::is_finite(m[(i, j)])))
}

/// `Err(NonFinite(arg))` when `m` has a NaN or infinite entry.
pub(super) fn check_finite<T: Field>(m: MatRef<'_, T>, arg: &'static str) -> Result<(), Failure> {
    if all_finite(m) {
        Ok(())
    } else {
        Err(Failure::NonFinite(arg))
    }
}
