//! SVD recombinations that are ops with their own derivative rules, because
//! recombining the factors through `svd` loses all precision at and near ties
//! (`docs/ad-rules.md#recombinations`): low-rank approximation, polar factor, pseudo-inverse and
//! least squares.

use super::check::{float_matrix, nonnegative, out, outputs, rhs};
use super::{OpSpec, Outputs};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::TensorMeta;

/// How many singular triplets to keep, decided from the data at run time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Truncation {
    /// Keep the `p` largest (capped at min(m, n)).
    Count(usize),
    /// Keep the values with s > max(atol, rtol·s₀).
    Tolerance {
        /// Absolute threshold.
        atol: f64,
        /// Relative threshold.
        rtol: f64,
    },
}

impl Default for Truncation {
    fn default() -> Self {
        Truncation::Count(usize::MAX)
    }
}

/// Checks a truncation: thresholds finite and ≥ 0, and a count of at least
/// one triplet (shared by `low_rank_approx` and `svd_truncated`).
pub(super) fn validate_truncation(op: &'static str, t: &Truncation) -> Result<()> {
    match *t {
        Truncation::Tolerance { atol, rtol } => {
            nonnegative(op, "atol", atol)?;
            nonnegative(op, "rtol", rtol)?;
        }
        Truncation::Count(0) => {
            return Err(Error::InvalidOption { op, option: "rank", why: "must keep at least one triplet" });
        }
        Truncation::Count(_) => {}
    }
    Ok(())
}

/// Best rank-p approximation `u_p diag(s_p) v_pᴴ`: `a` (m×n) → `a_p` (m×n),
/// `rank` (i64 scalar: the p used). Differentiable when the kept values are
/// separated from the discarded ones; ties inside the kept block are fine.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LowRankApprox(pub Truncation);

/// Polar factor `w = u vᴴ` of `a` (m×n) → `w` (m×n). Differentiable where
/// `a` has full rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Polar;

/// Options of [`Pinv`] and [`Lstsq`]: singular values with
/// s ≤ max(atol, rtol·s₀) count as zero.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PinvOptions {
    /// Absolute threshold (default 0).
    pub atol: f64,
    /// Relative threshold; `None` means `max(m, n)·ε` of the dtype.
    pub rtol: Option<f64>,
}

impl PinvOptions {
    /// Sets the absolute threshold.
    pub fn atol(mut self, atol: f64) -> Self {
        self.atol = atol;
        self
    }
    /// Sets the relative threshold.
    pub fn rtol(mut self, rtol: f64) -> Self {
        self.rtol = Some(rtol);
        self
    }
    fn validate(&self, op: &'static str) -> Result<()> {
        nonnegative(op, "atol", self.atol)?;
        if let Some(rtol) = self.rtol {
            nonnegative(op, "rtol", rtol)?;
        }
        Ok(())
    }
}

/// Options of [`Lstsq`] (the same thresholds as [`PinvOptions`]).
pub type LstsqOptions = PinvOptions;

/// Pseudo-inverse: `a` (m×n) → `pinv` (n×m). Differentiable where the
/// numerical rank is locally constant (Golub–Pereyra).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pinv(pub PinvOptions);

/// Numerical rank: `a` (m×n) → `rank` (i64 scalar), counted with the
/// thresholds of [`Pinv`]. Integer-valued: not differentiable.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MatrixRank(pub PinvOptions);

/// Minimum-norm least squares: `a` (m×n), `b` (m×r) → `x` (n×r), `rank`
/// (i64 scalar). Handles rank-deficient and wide systems.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lstsq(pub LstsqOptions);

impl OpSpec for LowRankApprox {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        validate_truncation(Self::NAME, &self.0)?;
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([
            Some(out(Self::NAME, "a_p", a.dtype, &[a.rows, a.cols], a.batch)?),
            Some(out(Self::NAME, "rank", DType::I64, &[], a.batch)?),
        ]))
    }
}

impl OpSpec for Polar {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "w", a.dtype, &[a.rows, a.cols], a.batch)?)]))
    }
}

impl OpSpec for Pinv {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        self.0.validate(Self::NAME)?;
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "pinv", a.dtype, &[a.cols, a.rows], a.batch)?)]))
    }
}

impl OpSpec for MatrixRank {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        self.0.validate(Self::NAME)?;
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "rank", DType::I64, &[], a.batch)?)]))
    }
}

impl OpSpec for Lstsq {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        self.0.validate(op)?;
        let a = float_matrix(op, "a", inputs[0])?;
        let b = rhs(op, "a", &a, "b", inputs[1])?;
        Ok(outputs([
            Some(out(op, "x", a.dtype, &[a.cols, b.cols], a.batch)?),
            Some(out(op, "rank", DType::I64, &[], a.batch)?),
        ]))
    }
}
