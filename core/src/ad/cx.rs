//! The context a derivative rule writes into: nonlinear work on primal
//! values goes to [`Cx::primal`] (run at once on the eager face, recorded in
//! the forward program when traced); work on tangents goes through
//! [`Cx::linear`], which records an op that is linear in its tangent
//! arguments, so that reverse mode can transpose it.

use crate::error::{Error, Result};
use crate::face::Face;
use crate::provider::Op;
use crate::tensor::TensorMeta;

/// A tangent as rules see it: a known zero, a value, or a derivative that
/// does not exist (the error says which op and output). An undefined
/// tangent is not an error until a gradient depends on it.
#[derive(Clone, Debug)]
pub enum Tangent<T> {
    /// Exactly zero (no instruction recorded).
    Zero,
    /// A recorded tangent value.
    Value(T),
    /// No derivative: asking for one that depends on this is this error.
    Undefined(Error),
}

impl<T> Tangent<T> {
    /// `true` for [`Tangent::Zero`].
    pub fn is_zero(&self) -> bool {
        matches!(self, Tangent::Zero)
    }

    /// The value, if one was recorded.
    pub fn value(&self) -> Option<&T> {
        match self {
            Tangent::Value(t) => Some(t),
            _ => None,
        }
    }
}

/// An argument of a linear op recorded through [`Cx::linear`]: a primal
/// value (a coefficient) or a tangent.
pub enum Arg<'a, P, T> {
    /// A primal value: a constant of the linear map.
    P(&'a P),
    /// A tangent: an argument the map is linear in.
    T(&'a T),
}

impl<P, T> Clone for Arg<'_, P, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P, T> Copy for Arg<'_, P, T> {}

/// Where a JVP rule records its work. Implemented by the eager tape, the
/// tracer and the forward-mode evaluator; rules are written once against it
/// (usually through the helpers of [`Lin`](super::Lin)).
pub trait Cx {
    /// A primal value.
    type P: Clone;
    /// A (nonzero, defined) tangent value.
    type T: Clone;

    /// The face that computes on primal values.
    fn primal(&mut self) -> &mut dyn Face<Tensor = Self::P>;

    /// Dtype and shape of a tangent.
    fn tangent_meta(&self, t: &Self::T) -> TensorMeta;

    /// Records `op` (one output), which must be linear over the reals in its
    /// [`Arg::T`] arguments, with the [`Arg::P`] arguments held fixed. Only
    /// the positions [`super::transpose`] can transpose may hold tangents.
    ///
    /// # Errors
    /// The op's shape/dtype errors; capacity and provider errors.
    fn linear(&mut self, op: Op, args: &[Arg<'_, Self::P, Self::T>]) -> Result<Self::T>;
}
