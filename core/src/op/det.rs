//! Determinants as ops (not composites): `det` needs its own adjugate
//! derivative rule to stay finite at singular matrices. Square input only; a
//! singular matrix is not an error (det ≈ rounding level, slogdet very
//! negative); the determinant of a 0×0 matrix is 1.

use super::check::{out, outputs, square};
use super::{OpSpec, Outputs};
use crate::error::Result;
use crate::tensor::TensorMeta;

/// `a` (n×n) → `det` (scalar per batch item, dtype of `a`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Det;

/// `a` (n×n) → `sign` (dtype of `a`: ±1 or 0 for real, a unit-modulus phase
/// or 0 for complex) and `logabsdet` (real; −∞ for a singular matrix).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Slogdet;

impl OpSpec for Det {
    const NAME: &'static str = "det";
    const INPUTS: &'static [&'static str] = &["a"];
    const OUTPUTS: &'static [&'static str] = &["det"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "det", a.dtype, &[], a.batch)?)]))
    }
}

impl OpSpec for Slogdet {
    const NAME: &'static str = "slogdet";
    const INPUTS: &'static [&'static str] = &["a"];
    const OUTPUTS: &'static [&'static str] = &["sign", "logabsdet"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([
            Some(out(Self::NAME, "sign", a.dtype, &[], a.batch)?),
            Some(out(Self::NAME, "logabsdet", a.dtype.real(), &[], a.batch)?),
        ]))
    }
}
