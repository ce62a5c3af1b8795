//! Transpose rules: for an op recorded by a JVP rule (linear in its tangent
//! arguments), the map from the cotangent of its output to the cotangents of
//! its tangent arguments, under the real inner product ⟨X, Y⟩ = Re tr(XᴴY):
//! ⟨Tᵀ(ct), t⟩ = ⟨ct, T(t)⟩. The transposed ops are recorded through the
//! same [`Cx`], so a reverse pass is itself a linear program.

use super::cx::{Cx, Tangent};
use crate::error::{Error, Result};
use crate::op::MAX_INPUTS;
use crate::provider::Op;
use crate::tensor::TensorMeta;

/// One input of a recorded linear op, as its transpose sees it.
pub enum TArg<'a, P> {
    /// A primal coefficient.
    P(&'a P),
    /// A tangent argument, of this dtype and shape.
    T(&'a TensorMeta),
}

/// One cotangent per input of an op (zero for primal inputs).
pub type Cotangents<T> = heapless::Vec<Tangent<T>, MAX_INPUTS>;

/// The cotangents of `op`'s tangent inputs given the cotangent `ct` of its
/// (single) output.
///
/// # Errors
/// [`Error::UnsupportedDerivative`] naming the op and argument when `op`
/// is not linear in that argument; the errors of the recorded ops.
pub fn transpose<C: Cx + ?Sized>(
    _cx: &mut C,
    op: &Op,
    inputs: &[TArg<'_, C::P>],
    _ct: &Tangent<C::T>,
) -> Result<Cotangents<C::T>> {
    let arg =
        inputs.iter().zip(op.input_names()).find(|(a, _)| matches!(a, TArg::T(_))).map_or("?", |(_, n)| *n);
    Err(Error::UnsupportedDerivative { op: op.name(), output: arg })
}
