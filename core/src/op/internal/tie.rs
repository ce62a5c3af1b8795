//! [`TieCheck`]: after a spectral op's rule is transposed, its input
//! cotangent `ga` against the error bound its gauge check found (the
//! rounding the rule's divisions by small gaps amplify): `ga` unchanged
//! when the estimated error is at most [`TieCheck::TOLERANCE`] of ‖ga‖
//! (per batch item), `Error::NearTie` naming the worst pair otherwise.

use super::GaugeOf;
use crate::error::{Dim, Result};
use crate::op::check::{dim, float_matrix, out, outputs, same_batch, vector};
use crate::op::{OpSpec, Outputs};
use crate::tensor::TensorMeta;

/// `ga` (m×n) and `bound` (`[BOUND_LEN, batch…]`: estimate, scale, i, j,
/// gap) → `ga`, or
/// `Error::NearTie` reported as the op `self.0` names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TieCheck(pub GaugeOf);

impl TieCheck {
    /// The op's name as used in messages.
    pub const NAME: &'static str = "tie_check";
    /// Input names, in order.
    pub const INPUTS: &'static [&'static str] = &["ga", "bound"];
    /// Output names, in order.
    pub const OUTPUTS: &'static [&'static str] = &["ga"];
    /// The largest estimated error, relative to ‖ga‖_F, a gradient may
    /// carry: about √ε of the dtype, half its digits (the error estimates
    /// are pessimistic by a small factor) — 1e-8 in double precision.
    pub const TOLERANCE: f64 = 1e-8;
    /// [`TieCheck::TOLERANCE`] for single precision: √ε_f32 ≈ 3.5e-4.
    pub const TOLERANCE_F32: f64 = 3.5e-4;
}

impl OpSpec for TieCheck {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = TieCheck::NAME;
        let ga = float_matrix(OP, "ga", inputs[0])?;
        let (len, batch) = vector(OP, "bound", inputs[1], ga.dtype.real())?;
        same_batch(OP, ("bound", &inputs[1].shape, batch), ("ga", ga.shape, ga.batch))?;
        dim(OP, "bound", &inputs[1].shape, Dim::Len, len, super::BOUND_LEN, "ga")?;
        Ok(outputs([Some(out(OP, "ga", ga.dtype, &[ga.rows, ga.cols], ga.batch)?)]))
    }
}
