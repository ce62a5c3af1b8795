//! Functions of Hermitian matrices through their eigendecomposition:
//! f(A) = V f(Λ) Vᴴ for A = V Λ Vᴴ (the lower triangle read, as eigh reads
//! it), with f from [`MatrixFunction`].
//!
//! The derivative is the Daleckii–Krein formula (docs/ad-rules.md#matrix-functions):
//! d f(A) = V (Γ∘(Vᴴ dA V)) Vᴴ with Γ_ij = f[λ_i, λ_j], the divided
//! difference, and f′(λ_i) where the values tie — exact at every spectrum,
//! tied or not. [`FunmHermitianFactors`] also returns w, V and Γ, which the
//! rule reads; reverse mode runs it in place of [`FunmHermitian`] when the
//! input is differentiated, so the gradient needs no second decomposition.

use super::check::{out, outputs, square};
use super::{LinalgOp, Live, OpSpec, Outputs};
use crate::error::Result;
use crate::tensor::TensorMeta;

/// The scalar function applied to the eigenvalues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MatrixFunction {
    /// e^λ: the matrix exponential of a Hermitian matrix.
    #[default]
    Exp,
    /// ln λ: the principal logarithm of a positive definite matrix (an
    /// eigenvalue ≤ 0 is an error).
    Log,
    /// √λ: the positive semidefinite square root (an eigenvalue below
    /// −10·n·ε·max|λ| is an error; those above it are taken as 0).
    Sqrt,
}

impl MatrixFunction {
    /// The function's name in messages.
    pub const fn name(self) -> &'static str {
        match self {
            MatrixFunction::Exp => "exp",
            MatrixFunction::Log => "log",
            MatrixFunction::Sqrt => "sqrt",
        }
    }
}

/// `a` (n×n Hermitian) → `fa` = V f(Λ) Vᴴ (n×n, `a`'s dtype).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunmHermitian(pub MatrixFunction);

/// `a` (n×n Hermitian) → `fa`, and what the derivative reads: `w` (n, real,
/// ascending), `v` (n×n) and `gamma` (n×n, real): Γ_ij = f[λ_i, λ_j].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunmHermitianFactors(pub MatrixFunction);

impl OpSpec for FunmHermitian {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = square(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "fa", a.dtype, &[a.rows, a.rows], a.batch)?)]))
    }
}

impl OpSpec for FunmHermitianFactors {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = FunmHermitianFactors::NAME;
        let a = square(OP, "a", inputs[0])?;
        let n = a.rows;
        Ok(outputs([
            Some(out(OP, "fa", a.dtype, &[n, n], a.batch)?),
            Some(out(OP, "w", a.dtype.real(), &[n], a.batch)?),
            Some(out(OP, "v", a.dtype, &[n, n], a.batch)?),
            Some(out(OP, "gamma", a.dtype.real(), &[n, n], a.batch)?),
        ]))
    }

    fn prune(&self, live: Live) -> Option<LinalgOp> {
        (!live.contains(1) && !live.contains(2) && !live.contains(3))
            .then_some(LinalgOp::FunmHermitian(FunmHermitian(self.0)))
    }
}
