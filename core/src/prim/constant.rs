//! Constants: filled tensors and identity matrices (no inputs).

use super::PrimSpec;
use crate::dtype::DType;
use crate::error::{DTypeReq, Error, Result};
use crate::op::check::{finite, out, outputs, sized};
use crate::op::Outputs;
use crate::tensor::TensorMeta;

/// A tensor of `meta`'s dtype and shape with every element `value`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fill {
    /// Dtype and shape of the result.
    pub meta: TensorMeta,
    /// The value (real part; imaginary part 0).
    pub value: f64,
}

/// Identity matrices: `[n, n, batch…]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Eye {
    /// Dtype of the result.
    pub dtype: DType,
    /// Matrix size.
    pub n: usize,
    /// Batch dims.
    pub batch: heapless::Vec<usize, { crate::MAX_RANK - 2 }>,
}

impl PrimSpec for Fill {
    const NAME: &'static str = "fill";
    const INPUTS: &'static [&'static str] = &[];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, _inputs: &[&TensorMeta]) -> Result<Outputs> {
        finite(Self::NAME, "value", self.value)?;
        if !self.meta.dtype.is_float() {
            return Err(Error::DType {
                op: Self::NAME,
                arg: "y",
                expected: DTypeReq::Float,
                got: self.meta.dtype,
            });
        }
        sized(Self::NAME, "y", &self.meta)?;
        Ok(outputs([Some(self.meta.clone())]))
    }
}

impl PrimSpec for Eye {
    const NAME: &'static str = "eye";
    const INPUTS: &'static [&'static str] = &[];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, _inputs: &[&TensorMeta]) -> Result<Outputs> {
        if !self.dtype.is_float() {
            return Err(Error::DType {
                op: Self::NAME,
                arg: "y",
                expected: DTypeReq::Float,
                got: self.dtype,
            });
        }
        Ok(outputs([Some(out(Self::NAME, "y", self.dtype, &[self.n, self.n], &self.batch)?)]))
    }
}
