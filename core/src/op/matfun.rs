//! Primary functions of general square matrices — the exponential, the
//! principal logarithm and the principal square root — and their Fréchet
//! derivatives (docs/ad-rules.md#matrix-exponential,
//! docs/ad-rules.md#logarithm-and-square-root).
//!
//! [`Expm`] is e^A, [`Logm`] log A, [`Sqrtm`] A^{1/2}. Each `…Frechet` op
//! is L_f(op(A), E), the derivative of f(op(A) + tE) at t = 0. It is linear
//! in E, so it is both the function's rule (the JVP is L_f(A, dA); the VJP
//! is L_f(Aᴴ, Ē), since f(Xᴴ) = f(X)ᴴ gives ⟨Ē, L_f(A, E)⟩ = ⟨L_f(Aᴴ, Ē), E⟩)
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

/// `a` (n×n, no eigenvalue on the closed negative real axis when real) →
/// `la` = log a, the principal logarithm (n×n, `a`'s dtype).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Logm;

/// `a`, `e` (n×n) → `l` = L_log(op(a), e).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LogmFrechet(pub MatOp);

/// `a` (n×n, no eigenvalue on the negative real axis when real) → `sa` =
/// a^{1/2}, the principal square root (n×n, `a`'s dtype).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sqrtm;

/// `a`, `e` (n×n) → `l` = L_sqrt(op(a), e).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SqrtmFrechet(pub MatOp);

/// The shapes of f(a): one n×n output named `name`.
fn function(op: &'static str, name: &'static str, inputs: &[&TensorMeta]) -> Result<Outputs> {
    let a = square(op, "a", inputs[0])?;
    Ok(outputs([Some(out(op, name, a.dtype, &[a.rows, a.rows], a.batch)?)]))
}

/// The shapes of L_f(op(a), e): `e` of `a`'s shape, dtype and batch.
fn frechet(op: &'static str, inputs: &[&TensorMeta]) -> Result<Outputs> {
    let a = square(op, "a", inputs[0])?;
    let e = operand(op, "a", &a, "e", inputs[1])?;
    dim(op, "e", e.shape, Dim::Rows, e.rows, a.rows, "a")?;
    dim(op, "e", e.shape, Dim::Cols, e.cols, a.rows, "a")?;
    Ok(outputs([Some(out(op, "l", a.dtype, &[a.rows, a.rows], a.batch)?)]))
}

impl OpSpec for Expm {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        function(Self::NAME, "ea", inputs)
    }
}

impl OpSpec for ExpmFrechet {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        frechet(Self::NAME, inputs)
    }
}

impl OpSpec for Logm {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        function(Self::NAME, "la", inputs)
    }
}

impl OpSpec for LogmFrechet {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        frechet(Self::NAME, inputs)
    }
}

impl OpSpec for Sqrtm {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        function(Self::NAME, "sa", inputs)
    }
}

impl OpSpec for SqrtmFrechet {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        frechet(Self::NAME, inputs)
    }
}
