//! SVD family: thin `Svd`, values-only `SvdVals`, and `SvdFull`.
//!
//! For `a` of shape m×n (k = min(m, n)): `u` is m×k (m×m for `SvdFull`), `s`
//! has k real values in descending order, `vh` is k×n (n×n for `SvdFull`) and
//! holds Vᴴ, not V. The largest-magnitude entry of each column of `u` is real
//! and positive; `vh` is adjusted to match, so `a = u diag(s) vh`.

use super::check::{float_matrix, out, outputs};
use super::{LinalgOp, Live, OpSpec, Outputs};
use crate::error::Result;
use crate::tensor::TensorMeta;

/// Which algorithm computes the SVD.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SvdDriver {
    /// The provider's fastest accurate choice (faer: divide and conquer from
    /// min(m, n) ≥ 128, checked and redone with QR iteration if inaccurate;
    /// LAPACK: ?gesdd).
    #[default]
    Auto,
    /// Divide and conquer (LAPACK ?gesdd), still guarded where unchecked.
    DivideAndConquer,
    /// Bidiagonal QR iteration only (LAPACK ?gesvd): slower, never D&C.
    QrIteration,
    /// One-sided Jacobi (cuSOLVER gesvdj); providers without it use `Auto`.
    Jacobi,
}

/// Which singular vectors an `Svd` computes. Pruning sets this when only one
/// side is used; the other output is then absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SvdVectors {
    /// U and Vᴴ.
    #[default]
    Both,
    /// U only (`vh` absent).
    Left,
    /// Vᴴ only (`u` absent).
    Right,
}

/// Options shared by the SVD ops.
///
/// ```
/// use lindiff_core::op::{SvdDriver, SvdOptions};
/// let opts = SvdOptions::default().derivative_eps(1e-6).driver(SvdDriver::QrIteration);
/// assert_eq!(opts.derivative_eps, Some(1e-6));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SvdOptions {
    /// `None` (default): the exact partial-fraction derivative rule (no
    /// broadening). `Some(ε)`: the reference's Lorentzian broadening
    /// F = Δ/(Δ² + ε²) for users who want its behaviour.
    pub derivative_eps: Option<f64>,
    /// Algorithm choice.
    pub driver: SvdDriver,
    /// Which vectors to compute (thin `Svd` only).
    pub vectors: SvdVectors,
}

impl SvdOptions {
    /// Sets the Lorentzian broadening ε of the derivative rule.
    pub fn derivative_eps(mut self, eps: f64) -> Self {
        self.derivative_eps = Some(eps);
        self
    }

    /// Sets the algorithm.
    pub fn driver(mut self, driver: SvdDriver) -> Self {
        self.driver = driver;
        self
    }

    /// Sets which vectors to compute.
    pub fn vectors(mut self, vectors: SvdVectors) -> Self {
        self.vectors = vectors;
        self
    }

    fn validate(&self, op: &'static str) -> Result<()> {
        super::check::derivative_eps(op, self.derivative_eps)
    }
}

/// Thin SVD: `a` (m×n) → `u` (m×k), `s` (k, real), `vh` (k×n).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Svd(pub SvdOptions);

/// Singular values only: `a` → `s` (k, real, descending). Always computed
/// without vectors, so it may differ from `Svd`'s `s` in the last bit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SvdVals(pub SvdOptions);

/// Full SVD: `a` (m×n) → `u` (m×m), `s` (k, real), `vh` (n×n).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SvdFull(pub SvdOptions);

impl OpSpec for Svd {
    const NAME: &'static str = "svd";
    const INPUTS: &'static [&'static str] = &["a"];
    const OUTPUTS: &'static [&'static str] = &["u", "s", "vh"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        self.0.validate(Self::NAME)?;
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        let (m, n, k) = (a.rows, a.cols, a.k());
        let u = out(Self::NAME, "u", a.dtype, &[m, k], a.batch)?;
        let s = out(Self::NAME, "s", a.dtype.real(), &[k], a.batch)?;
        let vh = out(Self::NAME, "vh", a.dtype, &[k, n], a.batch)?;
        let (u, vh) = match self.0.vectors {
            SvdVectors::Both => (Some(u), Some(vh)),
            SvdVectors::Left => (Some(u), None),
            SvdVectors::Right => (None, Some(vh)),
        };
        Ok(outputs([u, Some(s), vh]))
    }

    fn prune(&self, live: Live) -> Option<LinalgOp> {
        let (u, vh) = (live.contains(0), live.contains(2));
        let vectors = match (u, vh) {
            (false, false) => return Some(LinalgOp::SvdVals(SvdVals(self.0))),
            (true, false) => SvdVectors::Left,
            (false, true) => SvdVectors::Right,
            (true, true) => return None,
        };
        (vectors != self.0.vectors).then(|| LinalgOp::Svd(Svd(self.0.vectors(vectors))))
    }
}

impl OpSpec for SvdVals {
    const NAME: &'static str = "svd_vals";
    const INPUTS: &'static [&'static str] = &["a"];
    const OUTPUTS: &'static [&'static str] = &["s"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        self.0.validate(Self::NAME)?;
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "s", a.dtype.real(), &[a.k()], a.batch)?)]))
    }
}

impl OpSpec for SvdFull {
    const NAME: &'static str = "svd_full";
    const INPUTS: &'static [&'static str] = &["a"];
    const OUTPUTS: &'static [&'static str] = &["u", "s", "vh"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        self.0.validate(Self::NAME)?;
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        let (m, n) = (a.rows, a.cols);
        Ok(outputs([
            Some(out(Self::NAME, "u", a.dtype, &[m, m], a.batch)?),
            Some(out(Self::NAME, "s", a.dtype.real(), &[a.k()], a.batch)?),
            Some(out(Self::NAME, "vh", a.dtype, &[n, n], a.batch)?),
        ]))
    }

    fn prune(&self, live: Live) -> Option<LinalgOp> {
        (!live.contains(0) && !live.contains(2)).then_some(LinalgOp::SvdVals(SvdVals(self.0)))
    }
}
