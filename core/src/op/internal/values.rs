//! [`ValuesCheck`]: the check of a cotangent that reaches a decomposition
//! through its values alone (a loss of s or w, through `svd_vals`,
//! `eigvalsh` or the values output of `svd` and `eigh` with no cotangent on
//! the vectors). The values' rule divides by no gap, so there is no bound
//! and nothing about the vectors to check; what is left is what the gauge
//! checks report for such a cotangent (`gauge.rs`):
//!
//! * a function of tied values that is not symmetric in them: unequal
//!   cotangents inside a group whose values differ by at most
//!   δ = 10·k·eps·max|x| (the rules' tie cutoff);
//! * for the SVD, a kink: a nonzero cotangent of a value at most δ
//!   (∂L/∂s_i ≠ 0 at s_i = 0).
//!
//! Each is measured against eps^{3/4}·‖g‖, as the gauge checks measure.
//! Cost: O(k²) comparisons per batch item; the values alone are read.

use super::GaugeOf;
use crate::error::{DTypeReq, Dim, Error, Result};
use crate::op::check::{dim, out, outputs, same_batch, vector};
use crate::op::{OpSpec, Outputs};
use crate::tensor::TensorMeta;

/// `x` (the values, real, `[k, batch…]`) and their cotangent `g` → `g`
/// unchanged, or `Error::NotDifferentiable` reported as the decomposition
/// `self.0` names (see the module docs; kinks only for the SVD family).
/// Served for the SVD and eigh families: eig's values are complex, and its
/// values-only cotangent is checked against its eigenvectors
/// (`EigGaugeCheck`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ValuesCheck(pub GaugeOf);

impl ValuesCheck {
    /// The op's name as used in messages.
    pub const NAME: &'static str = "values_check";
    /// Input names, in order.
    pub const INPUTS: &'static [&'static str] = &["x", "g"];
    /// Output names, in order.
    pub const OUTPUTS: &'static [&'static str] = &["g"];

    /// Whether a value at the tie cutoff with a nonzero cotangent is a
    /// kink (singular values, which are ≥ 0), not just a value.
    pub fn kinks(self) -> bool {
        matches!(self.0, GaugeOf::Svd | GaugeOf::SvdTruncated | GaugeOf::LowRankApprox)
    }

    /// The output a violation is reported on.
    pub fn output(self) -> &'static str {
        self.0.output(if self.kinks() { "s" } else { "w" })
    }
}

impl OpSpec for ValuesCheck {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = ValuesCheck::NAME;
        let dtype = inputs[0].dtype;
        if !dtype.is_float() || dtype.is_complex() {
            let expected = if dtype.is_float() { DTypeReq::Exactly(dtype.real()) } else { DTypeReq::Float };
            return Err(Error::DType { op: OP, arg: "x", expected, got: dtype });
        }
        let (k, batch) = vector(OP, "x", inputs[0], dtype)?;
        let (gk, g_batch) = vector(OP, "g", inputs[1], dtype)?;
        same_batch(OP, ("g", &inputs[1].shape, g_batch), ("x", &inputs[0].shape, batch))?;
        dim(OP, "g", &inputs[1].shape, Dim::Len, gk, k, "x")?;
        Ok(outputs([Some(out(OP, "g", dtype, &[k], batch)?)]))
    }
}
