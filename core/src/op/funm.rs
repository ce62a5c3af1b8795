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
    /// A function the caller gives with its derivative (see
    /// [`ScalarFunction`]).
    Custom(ScalarFunction),
}

impl MatrixFunction {
    /// The function's name in messages.
    pub const fn name(self) -> &'static str {
        match self {
            MatrixFunction::Exp => "exp",
            MatrixFunction::Log => "log",
            MatrixFunction::Sqrt => "sqrt",
            MatrixFunction::Custom(s) => s.name,
        }
    }

    /// A caller's f with its derivative f′, both on f64 (f32 input is
    /// widened to f64 for them).
    ///
    /// ```
    /// use lindiff_cpu::prelude::*;
    /// let mut la = Direct::new(Cpu::new());
    /// let tanh = op::MatrixFunction::custom("tanh", f64::tanh, |x| 1.0 - x.tanh() * x.tanh());
    /// let a = la.tensor_row_major(2, 2, &[0.5, 0.0, 0.0, -1.0])?;
    /// let t = la.funm_hermitian(&a, tanh)?.to_vec::<f64>()?;
    /// assert!((t[0] - 0.5f64.tanh()).abs() < 1e-15 && (t[3] - (-1f64).tanh()).abs() < 1e-15);
    /// # Ok::<(), Error>(())
    /// ```
    pub const fn custom(name: &'static str, f: fn(f64) -> f64, df: fn(f64) -> f64) -> Self {
        MatrixFunction::Custom(ScalarFunction { name, f, df, d2f: None })
    }

    /// A caller's f with its second derivative f″ as well, which second
    /// derivatives of f(A) (a Hessian-vector product through it) need. The
    /// built-in functions know theirs: for them this changes nothing.
    ///
    /// ```
    /// use lindiff_cpu::prelude::*;
    /// let cube = op::MatrixFunction::custom("cube", |x| x * x * x, |x| 3.0 * x * x)
    ///     .with_second_derivative(|x| 6.0 * x);
    /// let mut la = Direct::new(Cpu::new());
    /// let a = la.tensor_row_major(2, 2, &[2.0, 0.0, 0.0, 1.0])?;
    /// let t = la.funm_hermitian(&a, cube)?.to_vec::<f64>()?;
    /// assert!((t[0] - 8.0).abs() < 1e-14 && (t[3] - 1.0).abs() < 1e-14);
    /// # Ok::<(), Error>(())
    /// ```
    #[must_use]
    pub const fn with_second_derivative(self, d2f: fn(f64) -> f64) -> Self {
        match self {
            MatrixFunction::Custom(s) => MatrixFunction::Custom(ScalarFunction { d2f: Some(d2f), ..s }),
            other => other,
        }
    }
}

/// A real function f and its derivative f′ for [`MatrixFunction::Custom`].
///
/// The derivative of f(A) needs the divided differences
/// f[a, b] = (f(a) − f(b))/(a − b) at every pair of eigenvalues, and f′(a)
/// where they tie. Where the quotient cancels (|f(a) − f(b)| below a
/// quarter of |f(a)| + |f(b)|), the provider takes f[a, b] = ∫₀¹ f′(a + t(b − a)) dt
/// by 8-point Gauss–Legendre quadrature instead, which never subtracts: the
/// derivative stays exact at ties and accurate at near ties for any smooth
/// f′ (docs/ad-rules.md#matrix-functions).
#[derive(Clone, Copy, Debug)]
pub struct ScalarFunction {
    /// Its name in messages.
    pub name: &'static str,
    /// f.
    pub f: fn(f64) -> f64,
    /// f′.
    pub df: fn(f64) -> f64,
    /// f″, for second derivatives ([`MatrixFunction::with_second_derivative`]).
    pub d2f: Option<fn(f64) -> f64>,
}

/// Two functions are the same op when their name and all code addresses
/// agree.
impl PartialEq for ScalarFunction {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && core::ptr::fn_addr_eq(self.f, other.f)
            && core::ptr::fn_addr_eq(self.df, other.df)
            && match (self.d2f, other.d2f) {
                (Some(a), Some(b)) => core::ptr::fn_addr_eq(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
    }
}

impl Eq for ScalarFunction {}

impl core::hash::Hash for ScalarFunction {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        (self.f as usize).hash(state);
        (self.df as usize).hash(state);
        self.d2f.map(|d2f| d2f as usize).hash(state);
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
