//! Constants (no inputs): filled tensors and batched identity matrices.

use super::strided;
use lindiff_core::{Host, Output, Result, Scalar};

/// Every element `value` (real part; imaginary part 0).
pub(super) fn fill<T: Scalar>(value: f64, out: &mut Output<'_, '_, Host>) -> Result<()> {
    let value = T::from_f64(value);
    strided::write_walk("fill", "y", out, [], |_| value)
}

/// Ones on the diagonal of each matrix, zeros elsewhere.
pub(super) fn eye<T: Scalar>(out: &mut Output<'_, '_, Host>) -> Result<()> {
    strided::write_walk("eye", "y", out, [], |p| if p.row == p.col { T::one() } else { T::zero() })
}
