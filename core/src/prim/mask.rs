//! The rank mask: a data-dependent count turned into a 0/1 vector, so a
//! derivative rule can select the kept triplets of a truncation (whose count
//! is a run-time value, the `rank` output of `low_rank_approx`) with static
//! shapes — on the traced face a rule cannot read values. Not linear in
//! anything (its input is an integer): rules use it on the primal side only.

use super::PrimSpec;
use crate::dtype::DType;
use crate::error::{DTypeReq, Error, Result};
use crate::op::check::{dtype, out, outputs};
use crate::op::Outputs;
use crate::tensor::TensorMeta;

/// `y[i, b…] = 1` if `i < rank[b…]`, else 0: `rank` (i64, `[batch…]`) →
/// `y` (`[k, batch…]` of `dtype`). A negative rank gives all zeros, a rank
/// ≥ k all ones. `dtype` must be a float dtype (complex gives 1 + 0i).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RankMask {
    /// Length of the mask.
    pub k: usize,
    /// Dtype of the result.
    pub dtype: DType,
}

impl PrimSpec for RankMask {
    const NAME: &'static str = "rank_mask";
    const INPUTS: &'static [&'static str] = &["rank"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        if !self.dtype.is_float() {
            return Err(Error::DType {
                op: Self::NAME,
                arg: "y",
                expected: DTypeReq::Float,
                got: self.dtype,
            });
        }
        let rank = inputs[0];
        dtype(Self::NAME, "rank", rank, DType::I64)?;
        Ok(outputs([Some(out(Self::NAME, "y", self.dtype, &[self.k], rank.shape.dims())?)]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::Shape;
    use std::string::ToString;

    fn meta(dtype: DType, dims: &[usize]) -> TensorMeta {
        TensorMeta::new(dtype, Shape::new(dims).unwrap())
    }

    #[test]
    fn shapes_and_errors() {
        let op = RankMask { k: 4, dtype: DType::F64 };
        let y = op.infer(&[&meta(DType::I64, &[2, 3])]).unwrap();
        assert_eq!(y[0].as_ref().unwrap(), &meta(DType::F64, &[4, 2, 3]));
        let y = op.infer(&[&meta(DType::I64, &[])]).unwrap();
        assert_eq!(y[0].as_ref().unwrap(), &meta(DType::F64, &[4]));
        let err = op.infer(&[&meta(DType::F64, &[2])]).unwrap_err().to_string();
        assert!(err.starts_with("rank_mask: argument `rank`"), "{err}");
        let bad = RankMask { k: 4, dtype: DType::I64 };
        let err = bad.infer(&[&meta(DType::I64, &[2])]).unwrap_err().to_string();
        assert!(err.starts_with("rank_mask: argument `y`"), "{err}");
    }
}
