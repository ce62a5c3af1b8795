//! Cholesky factorization `a = l lᴴ`. Reads the lower triangle of `a` only and
//! ignores the imaginary part of its diagonal; a non-positive pivot is
//! [`Error::NotPositiveDefinite`](crate::Error::NotPositiveDefinite).

use super::check::{out, outputs, square};
use super::{OpSpec, Outputs};
use crate::error::Result;
use crate::tensor::TensorMeta;

/// `a` (n×n Hermitian positive definite) → `l` (n×n lower, real positive
/// diagonal, zeros above).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Cholesky;

impl OpSpec for Cholesky {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "l", a.dtype, &[a.rows, a.rows], a.batch)?)]))
    }
}
