//! Unpivoted QR (`Qr`) and column-pivoted, rank-revealing QR
//! (`RankRevealingQr`). diag(R) is real and ≥ 0 on every provider.

use super::check::{float_matrix, nonnegative, out, outputs};
use super::{OpSpec, Outputs};
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::TensorMeta;

/// Reduced (thin) or complete Q.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum QrMode {
    /// `q` m×k, `r` k×n.
    #[default]
    Reduced,
    /// `q` m×m, `r` m×n. The columns of `q` beyond k depend on the
    /// reflector convention (a completion basis) and are not differentiable.
    Complete,
}

/// Options of [`Qr`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct QrOptions {
    /// Thin or complete Q.
    pub mode: QrMode,
}

impl QrOptions {
    /// Sets the mode.
    pub fn mode(mut self, mode: QrMode) -> Self {
        self.mode = mode;
        self
    }
}

/// Unpivoted QR: `a` (m×n) → `q`, `r` (thin by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Qr(pub QrOptions);

impl OpSpec for Qr {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        let (m, n) = (a.rows, a.cols);
        let qcols = match self.0.mode {
            QrMode::Reduced => a.k(),
            QrMode::Complete => m,
        };
        Ok(outputs([
            Some(out(Self::NAME, "q", a.dtype, &[m, qcols], a.batch)?),
            Some(out(Self::NAME, "r", a.dtype, &[qcols, n], a.batch)?),
        ]))
    }
}

/// Options of [`RankRevealingQr`]: the numerical rank is the length of the
/// prefix with |R\[i,i\]| > max(atol, rtol·|R\[0,0\]|).
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let o = RankRevealingQrOptions::default().atol(1e-12).rtol(1e-9);
/// assert_eq!((o.atol, o.rtol), (1e-12, Some(1e-9)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RankRevealingQrOptions {
    /// Absolute threshold (default 0).
    pub atol: f64,
    /// Relative threshold; `None` means `max(m, n)·ε` of the dtype.
    pub rtol: Option<f64>,
}

impl RankRevealingQrOptions {
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
}

/// Column-pivoted QR: `a` (m×n) → `q` (m×k), `r` (k×n), `perm` (n, i64;
/// `a[:, perm] = q r`) and `rank` (i64 scalar per batch item). Shapes never
/// depend on the data. No output is differentiable.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RankRevealingQr(pub RankRevealingQrOptions);

impl OpSpec for RankRevealingQr {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        nonnegative(Self::NAME, "atol", self.0.atol)?;
        if let Some(rtol) = self.0.rtol {
            nonnegative(Self::NAME, "rtol", rtol)?;
        }
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        let (m, n, k) = (a.rows, a.cols, a.k());
        Ok(outputs([
            Some(out(Self::NAME, "q", a.dtype, &[m, k], a.batch)?),
            Some(out(Self::NAME, "r", a.dtype, &[k, n], a.batch)?),
            Some(out(Self::NAME, "perm", DType::I64, &[n], a.batch)?),
            Some(out(Self::NAME, "rank", DType::I64, &[], a.batch)?),
        ]))
    }
}
