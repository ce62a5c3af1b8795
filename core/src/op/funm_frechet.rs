//! The first and second derivatives of a function of a Hermitian matrix,
//! as ops of their own so that each has a rule (docs/ad-rules.md#second-order-of-a-hermitian-matrix-function).
//!
//! Both read the decomposition A = V Λ Vᴴ and the divided differences
//! Γ_ij = f[λ_i, λ_j] that [`FunmHermitianFactors`](super::FunmHermitianFactors)
//! returns, so neither decomposes again:
//! * [`FunmHermitianFrechet`]: L(E) = V (Γ∘(Vᴴ E V)) Vᴴ, the Daleckii–Krein
//!   derivative of f(A) in the direction E (E Hermitian; for any other E,
//!   the complex-linear extension). It is linear in E and self-adjoint
//!   under ⟨X, Y⟩ = Re tr(XᴴY).
//! * [`FunmHermitianSecond`]: the derivative of L(E) in A along D,
//!   V R Vᴴ with R_ij = Σ_k f[λ_i, λ_k, λ_j] (Ẽ_ik D̃_kj + D̃_ik Ẽ_kj),
//!   Ẽ = Vᴴ E V and D̃ = Vᴴ D V. The second divided differences are
//!   symmetric, so it is symmetric in E and D, and linear in D with the
//!   adjoint G ↦ (the same op)(Eᴴ, G).
//!
//! Like f[λ_i, λ_j], f[λ_i, λ_k, λ_j] needs no gap: f″/2 where the three
//! values tie, so both are exact at tied eigenvalues.

use super::check::{dim, dtype, matrix_of, operand, out, outputs, same_batch, square, vector};
use super::{MatrixFunction, OpSpec, Outputs};
use crate::error::{Dim, Error, Result};
use crate::tensor::TensorMeta;

/// `a` (n×n Hermitian), its `v`, `w`, `gamma` (as
/// [`FunmHermitianFactors`](super::FunmHermitianFactors) returns them) and
/// `e` (n×n) → `l` = V (Γ∘(Vᴴ e V)) Vᴴ (n×n). `a` itself is read by the
/// rule only: its tangent is the one the second derivative follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunmHermitianFrechet(pub MatrixFunction);

/// `v`, `w`, `gamma` (of a Hermitian matrix, as
/// [`FunmHermitianFactors`](super::FunmHermitianFactors) returns them), `e`
/// and `d` (n×n) → `l` = V R Vᴴ with R_ij = Σ_k f[λ_i, λ_k, λ_j]
/// (Ẽ_ik D̃_kj + D̃_ik Ẽ_kj) (n×n). A caller's f needs its second derivative
/// ([`MatrixFunction::with_second_derivative`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunmHermitianSecond(pub MatrixFunction);

/// Why a caller's f without f″ has no second derivative.
pub(crate) const NO_SECOND_DERIVATIVE: &str = "a caller's function has second derivatives only with its f″: \
     MatrixFunction::custom(..).with_second_derivative(d2f)";

/// Checks `v`, `w`, `gamma` at `first` and after, and the n×n operands
/// `names` (at the positions given) against them; returns the output `l`.
fn factors(
    op: &'static str,
    inputs: &[&TensorMeta],
    first: usize,
    names: &[(&'static str, usize)],
) -> Result<Outputs> {
    let v = square(op, "v", inputs[first])?;
    let n = v.rows;
    let real = v.dtype.real();
    let w = inputs[first + 1];
    let (len, w_batch) = vector(op, "w", w, real)?;
    dim(op, "w", &w.shape, Dim::Rows, len, n, "v")?;
    same_batch(op, ("w", &w.shape, w_batch), ("v", v.shape, v.batch))?;
    let gamma = matrix_of(op, "gamma", inputs[first + 2])?;
    dtype(op, "gamma", inputs[first + 2], real)?;
    same_batch(op, ("gamma", gamma.shape, gamma.batch), ("v", v.shape, v.batch))?;
    dim(op, "gamma", gamma.shape, Dim::Rows, gamma.rows, n, "v")?;
    dim(op, "gamma", gamma.shape, Dim::Cols, gamma.cols, n, "v")?;
    for &(name, at) in names {
        let e = operand(op, "v", &v, name, inputs[at])?;
        dim(op, name, e.shape, Dim::Rows, e.rows, n, "v")?;
        dim(op, name, e.shape, Dim::Cols, e.cols, n, "v")?;
    }
    Ok(outputs([Some(out(op, "l", v.dtype, &[n, n], v.batch)?)]))
}

impl OpSpec for FunmHermitianFrechet {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        square(Self::NAME, "a", inputs[0])?;
        factors(Self::NAME, inputs, 1, &[("a", 0), ("e", 4)])
    }
}

impl OpSpec for FunmHermitianSecond {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = FunmHermitianSecond::NAME;
        if let MatrixFunction::Custom(s) = self.0 {
            if s.d2f.is_none() {
                return Err(Error::Unsupported {
                    op: OP,
                    provider: "lindiff-core",
                    why: NO_SECOND_DERIVATIVE,
                });
            }
        }
        factors(OP, inputs, 0, &[("e", 3), ("d", 4)])
    }
}
