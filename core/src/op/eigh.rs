//! Hermitian eigendecomposition: `Eigh` (values and vectors) and `EighVals`.
//!
//! Reads the lower triangle of `a` only and ignores the imaginary part of its
//! diagonal (as LAPACK and faer do); the derivative rules follow the same
//! semantics. Eigenvalues are real and ascending.

use super::check::{out, outputs, square};
use super::{LinalgOp, Live, OpSpec, Outputs};
use crate::error::Result;
use crate::tensor::TensorMeta;

/// Options of the eigh ops.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EighOptions {
    /// `None`: the exact eigenvector derivative rule; `Some(ε)`: Lorentzian
    /// broadening as in [`SvdOptions::derivative_eps`](super::SvdOptions).
    pub derivative_eps: Option<f64>,
}

impl EighOptions {
    /// Sets the broadening ε.
    pub fn derivative_eps(mut self, eps: f64) -> Self {
        self.derivative_eps = Some(eps);
        self
    }

    fn validate(&self, op: &'static str) -> Result<()> {
        super::check::derivative_eps(op, self.derivative_eps)
    }
}

/// `a` (n×n Hermitian) → `w` (n, real, ascending), `v` (n×n).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Eigh(pub EighOptions);

/// `a` (n×n Hermitian) → `w` (n, real, ascending).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EighVals(pub EighOptions);

impl OpSpec for Eigh {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        self.0.validate(Self::NAME)?;
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([
            Some(out(Self::NAME, "w", a.dtype.real(), &[a.rows], a.batch)?),
            Some(out(Self::NAME, "v", a.dtype, &[a.rows, a.rows], a.batch)?),
        ]))
    }

    fn prune(&self, live: Live) -> Option<LinalgOp> {
        (!live.contains(1)).then_some(LinalgOp::EighVals(EighVals(self.0)))
    }
}

impl OpSpec for EighVals {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        self.0.validate(Self::NAME)?;
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "w", a.dtype.real(), &[a.rows], a.batch)?)]))
    }
}
