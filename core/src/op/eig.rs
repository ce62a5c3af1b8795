//! General (non-Hermitian) eigendecomposition: `Eig` and `EigVals`.
//!
//! Outputs are complex even for real input. Eigenvectors have unit 2-norm
//! with their largest-magnitude entry real and positive.

use super::check::{out, outputs, square};
use super::{LinalgOp, Live, OpSpec, Outputs};
use crate::error::Result;
use crate::tensor::TensorMeta;

/// `a` (n×n) → `w` (n, complex), `v` (n×n, complex) with `a v = v diag(w)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Eig;

/// `a` (n×n) → `w` (n, complex).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EigVals;

impl OpSpec for Eig {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        let c = a.dtype.complex();
        Ok(outputs([
            Some(out(Self::NAME, "w", c, &[a.rows], a.batch)?),
            Some(out(Self::NAME, "v", c, &[a.rows, a.rows], a.batch)?),
        ]))
    }

    fn prune(&self, live: Live) -> Option<LinalgOp> {
        (!live.contains(1)).then_some(LinalgOp::EigVals(EigVals))
    }
}

impl OpSpec for EigVals {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "w", a.dtype.complex(), &[a.rows], a.batch)?)]))
    }
}
