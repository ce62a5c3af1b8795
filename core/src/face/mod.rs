//! Faces: the same method names on every way of running lindiff, written
//! once. A face only has to say how to run one op ([`Face::apply`]); every
//! op and primitive is a method of [`Ops`] (generated from the op table,
//! `op/table.rs`), and the composites (inv, norm, cond, matrix_power,
//! multi_dot, vecdot, vander, tensorinv, tensorsolve) are methods of
//! [`Linalg`], built from ops, so the direct, eager and traced faces share
//! one implementation and composites get their derivatives from their parts.
//!
//! Modules import downward only: `factors` (the structs decompositions
//! return) ← `ops` ← `composite` ← `linalg`.

mod composite;
#[cfg(feature = "alloc")]
pub mod direct;
mod factors;
mod linalg;
mod ops;
#[cfg(feature = "alloc")]
pub(crate) mod truncated;

pub use composite::{Norm, VanderOrder};
pub use factors::{
    EigFactors, EighFactors, FullPivLuFactors, HouseholderQr, LuFactors, QrFactors, RankRevealingQrFactors,
    SvdFactors, SvdTruncatedFactors,
};
pub use linalg::Linalg;
pub use ops::Ops;

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

/// A face borrowed mutably is a face (so an [`Eager`](crate::ad::Eager)
/// tape can run over a face it does not own).
impl<F: Face + ?Sized> Face for &mut F {
    type Tensor = F::Tensor;

    fn meta(&self, t: &Self::Tensor) -> TensorMeta {
        (**self).meta(t)
    }

    fn apply(&mut self, op: Op, inputs: &[&Self::Tensor]) -> Result<Applied<Self::Tensor>> {
        (**self).apply(op, inputs)
    }
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

/// Takes the output called `name` of an op whose outputs are `names`.
pub(crate) fn take_named<T>(
    outs: &mut Applied<T>,
    op: &'static str,
    names: &[&'static str],
    name: &'static str,
) -> Result<T> {
    let i = names.iter().position(|&n| n == name).unwrap_or(names.len());
    take(outs, op, i, name)
}

/// Runs an op with exactly one output on `face` and returns it.
///
/// # Errors
/// The op's and the face's.
pub(crate) fn single<F: Face + ?Sized>(face: &mut F, op: Op, inputs: &[&F::Tensor]) -> Result<F::Tensor> {
    let name = op.name();
    let mut outs = face.apply(op, inputs)?;
    take(&mut outs, name, 0, "output")
}
