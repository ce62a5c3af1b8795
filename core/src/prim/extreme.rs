//! [`ExtremeMask`]: where a max or min reduction takes its value — the
//! primal-side helper of their derivative rule (d max = dx at the argmax).

use super::layout::ReduceOp;
use super::PrimSpec;
use crate::error::{ArgKind, DTypeReq, Error, Result};
use crate::op::check::{float_tensor, out, outputs};
use crate::op::Outputs;
use crate::tensor::TensorMeta;

/// A real `x` → a 0/1 tensor of its shape and dtype: 1 at the element where
/// the largest (`Max`) or smallest (`Min`) value over the first
/// `core_rank` dims of each batch item is attained, 0 elsewhere. When two
/// or more elements attain it (a kink: no derivative) running it fails
/// with `Error::NotDifferentiable` naming `max` or `min`; NaN input fails
/// with `Error::NonFinite`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExtremeMask {
    /// `Max` or `Min` (a sum has no extreme).
    pub op: ReduceOp,
    /// How many leading dims each extreme is taken over.
    pub core_rank: usize,
}

impl ExtremeMask {
    /// Why a tied extreme has no derivative.
    pub const TIED: &'static str =
        "the extreme value is attained at two or more entries (a kink: no derivative there)";
}

impl PrimSpec for ExtremeMask {
    const NAME: &'static str = "extreme_mask";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["mask"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = inputs[0];
        float_tensor(Self::NAME, "x", x)?;
        if self.op == ReduceOp::Sum {
            return Err(Error::InvalidOption { op: Self::NAME, option: "op", why: "must be max or min" });
        }
        if x.dtype.is_complex() {
            return Err(Error::DType {
                op: Self::NAME,
                arg: "x",
                expected: DTypeReq::Exactly(x.dtype.real()),
                got: x.dtype,
            });
        }
        if x.shape.rank() < self.core_rank {
            let expected = if self.core_rank >= 2 { ArgKind::Matrix } else { ArgKind::Vector };
            return Err(Error::Rank { op: Self::NAME, arg: "x", expected, shape: x.shape.clone() });
        }
        Ok(outputs([Some(out(Self::NAME, "mask", x.dtype, x.shape.dims(), &[])?)]))
    }
}
