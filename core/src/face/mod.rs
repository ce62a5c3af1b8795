//! Faces: the same method names on every way of running lindiff, written
//! once. A face only has to say how to run one op ([`Face::apply`]); every
//! method — decompositions, solves and the composites (inv, norm, cond,
//! matrix_power, multi_dot, vecdot, vander, tensorinv, tensorsolve) — comes
//! from [`Linalg`], so the direct, eager and traced faces share one
//! implementation and composites get their derivatives from their parts.

mod composite;
#[cfg(feature = "alloc")]
pub mod direct;
mod methods;
#[cfg(feature = "alloc")]
mod truncated;

pub use composite::{Norm, VanderOrder};
pub use methods::{
    EigFactors, EighFactors, FullPivLuFactors, HouseholderQr, LuFactors, QrFactors, RankRevealingQrFactors,
    SvdFactors, SvdTruncatedFactors,
};

use crate::error::{Error, Result};
use crate::op::MAX_OUTPUTS;
use crate::provider::Op;
use crate::tensor::TensorMeta;

/// The outputs of one op on a face: one entry per output, `None` where the
/// op's options switch an output off.
pub type Applied<T> = heapless::Vec<Option<T>, MAX_OUTPUTS>;

/// A way of running ops: directly on a provider, recorded on a tape, or
/// traced into a program.
pub trait Face {
    /// The face's tensor handle (cheap to clone).
    type Tensor: Clone;

    /// Dtype and shape of a tensor.
    fn meta(&self, t: &Self::Tensor) -> TensorMeta;

    /// Runs (or records) one op.
    ///
    /// # Errors
    /// The op's shape/dtype errors, the allocator's and the provider's.
    fn apply(&mut self, op: Op, inputs: &[&Self::Tensor]) -> Result<Applied<Self::Tensor>>;
}

/// Takes output `i` of an applied op (present by construction of the op's
/// options in the method that asked for it).
pub(crate) fn take<T>(outs: &mut Applied<T>, op: &'static str, i: usize, name: &'static str) -> Result<T> {
    outs.get_mut(i).and_then(Option::take).ok_or(Error::Buffer {
        op,
        arg: name,
        why: "was not produced by the face",
        needed: 1,
        got: 0,
    })
}

pub use methods::Linalg;
