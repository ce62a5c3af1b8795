//! Determinants as ops (not composites): `det` needs its own adjugate
//! derivative rule to stay finite at singular matrices, so the adjugate is an
//! op too. Square input only; a singular matrix is not an error (det ≈
//! rounding level, slogdet very negative); the determinant of a 0×0 matrix is
//! 1.

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

/// `a` (n×n) → `adj` (n×n, dtype of `a`): the adjugate, with
/// `a · adj = adj · a = det(a) · I`. Finite for every finite `a`: nonzero at
/// a singular matrix of corank 1, zero at corank ≥ 2 (never formed through
/// `a⁻¹`). It is the derivative of `det`: d det = tr(adj(a) da).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Adjugate;

impl OpSpec for Det {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "det", a.dtype, &[], a.batch)?)]))
    }
}

impl OpSpec for Slogdet {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([
            Some(out(Self::NAME, "sign", a.dtype, &[], a.batch)?),
            Some(out(Self::NAME, "logabsdet", a.dtype.real(), &[], a.batch)?),
        ]))
    }
}

impl OpSpec for Adjugate {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "adj", a.dtype, &[a.rows, a.cols], a.batch)?)]))
    }
}
