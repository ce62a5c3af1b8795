//! The exponential of a general square matrix and its Fréchet derivative,
//! by scaling and squaring with a diagonal Padé approximant
//! (docs/ad-rules.md#matrix-exponential).
//!
//! [`Expm`] is e^A. [`ExpmFrechet`] is L(op(A), E), the Fréchet derivative
//! of the exponential at op(A) in the direction E: the derivative of
//! e^{op(A) + tE} at t = 0. It is linear in E, so it is both expm's rule (the
//! JVP is L(A, dA); the VJP is L(Aᴴ, Ē), since ⟨Ē, L(A, E)⟩ = ⟨L(Aᴴ, Ē), E⟩)
//! and an op a user may call directly.

use super::check::{dim, operand, out, outputs, square};
use super::{MatOp, OpSpec, Outputs};
use crate::error::{Dim, Result};
use crate::tensor::TensorMeta;

/// `a` (n×n) → `ea` = e^a (n×n, `a`'s dtype).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Expm;

/// `a` (n×n), `e` (n×n) → `l` = L(op(a), e), the Fréchet derivative of the
/// exponential at op(a) in the direction e (n×n).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExpmFrechet(pub MatOp);

impl OpSpec for Expm {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "ea", a.dtype, &[a.rows, a.rows], a.batch)?)]))
    }
}

impl OpSpec for ExpmFrechet {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = ExpmFrechet::NAME;
        let a = square(OP, "a", inputs[0])?;
        let e = operand(OP, "a", &a, "e", inputs[1])?;
        dim(OP, "e", e.shape, Dim::Rows, e.rows, a.rows, "a")?;
        dim(OP, "e", e.shape, Dim::Cols, e.cols, a.rows, "a")?;
        Ok(outputs([Some(out(OP, "l", a.dtype, &[a.rows, a.rows], a.batch)?)]))
    }
}
