//! SVD family: thin `Svd`, values-only `SvdVals`, `SvdFull`, and the
//! truncated `SvdTruncated` (rank chosen from the data at run time).
//!
//! For `a` of shape m×n (k = min(m, n)): `u` is m×k (m×m for `SvdFull`), `s`
//! has k real values in descending order, `vh` is k×n (n×n for `SvdFull`) and
//! holds Vᴴ, not V. The largest-magnitude entry of each column of `u` is real
//! and positive; `vh` is adjusted to match, so `a = u diag(s) vh`.

use super::check::{float_matrix, out, outputs};
use super::recombine::{validate_truncation, Truncation};
use super::{LinalgOp, Live, OpSpec, Outputs};
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::TensorMeta;

/// Which algorithm computes the SVD. (A lindiff-cpu built with its
/// `svd-jacobi` feature, for small matrices on firmware, runs its one-sided
/// Jacobi SVD whatever the driver; a `std` lindiff-cpu runs it for
/// `Jacobi`, and for `Auto` up to 8×8, where it is faster than faer's.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SvdDriver {
    /// The provider's fastest accurate choice (host-cpu: lindiff's one-sided
    /// Jacobi up to 8×8 in `std` builds, then faer's QR iteration, and
    /// faer's divide and conquer from min(m, n) ≥ 128, checked and redone
    /// with QR iteration if inaccurate; LAPACK: ?gesdd).
    #[default]
    Auto,
    /// Divide and conquer (LAPACK ?gesdd), still guarded where unchecked.
    DivideAndConquer,
    /// Bidiagonal QR iteration only (LAPACK ?gesvd): slower, never D&C.
    QrIteration,
    /// One-sided Jacobi (cuSOLVER gesvdj; lindiff-cpu's own, in `std`
    /// builds: high relative accuracy, O(m·n²) per sweep, so slow for large
    /// matrices); providers without it use `Auto`.
    Jacobi,
    /// Polar-decomposition SVD (cuSOLVER `Xgesvdp`); providers without it
    /// (host-cpu, host-blas) use `Auto`.
    Polar,
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
/// use lindiff_cpu::prelude::*;
/// let opts = SvdOptions::default().derivative_eps(1e-6).driver(SvdDriver::QrIteration);
/// assert_eq!(opts.derivative_eps, Some(1e-6));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SvdOptions {
    /// `None` (default): the exact partial-fraction derivative rule (no
    /// broadening). `Some(ε)`: the Lorentzian broadening
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

/// Truncated thin SVD, the rank chosen per batch item from the data at run
/// time: `a` (m×n) → `u` (m×k), `s` (k, real), `vh` (k×n), `rank` (i64
/// scalar per batch item), with k = min(m, n).
///
/// The thin SVD (default [`SvdOptions`], so the same factors as [`Svd`])
/// is cut to its first p triplets, p = min(count, k) for
/// [`Truncation::Count`] and the number of s_i > max(atol, rtol·s₀) for
/// [`Truncation::Tolerance`]; `rank` holds p.
///
/// **Static shapes, masked.** The outputs keep the thin SVD's shapes on
/// every face: the triplets beyond p are zeroed (columns p.. of `u`, entries
/// p.. of `s`, rows p.. of `vh`), so `u diag(s) vh` is the rank-p
/// approximation and a traced program needs no shape known only at run time
/// (upper-bound shapes with an i64 `rank` output). Eager and traced faces
/// record this same op, so their results and gradients are bit-identical.
/// The direct and eager faces also offer real slicing
/// (`svd_truncated_sliced`: the factors cut to the largest `rank` of the
/// batch), which a traced program cannot express.
///
/// Derivative (docs/ad-rules.md#truncated-svd): the thin rule with zero
/// cotangents on the discarded triplets, exact where the kept values are
/// separated from the discarded ones (p locally constant).
///
/// ```
/// use lindiff_core::op::{SvdTruncated, Truncation};
/// use lindiff_core::{DType, LinalgOp, Shape, TensorMeta};
/// let a = TensorMeta::new(DType::F64, Shape::new(&[7, 5, 2])?);
/// let op = LinalgOp::SvdTruncated(SvdTruncated(Truncation::Tolerance { atol: 0.0, rtol: 1e-2 }));
/// let outs = op.infer(&[&a])?;
/// assert_eq!(outs[0].as_ref().map(|u| u.shape.dims()), Some(&[7, 5, 2][..]));
/// let rank = outs[3].as_ref().map(|r| (r.shape.dims(), r.dtype));
/// assert_eq!(rank, Some((&[2][..], DType::I64)));
/// # Ok::<(), lindiff_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SvdTruncated(pub Truncation);

impl OpSpec for Svd {
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
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        self.0.validate(Self::NAME)?;
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "s", a.dtype.real(), &[a.k()], a.batch)?)]))
    }
}

impl OpSpec for SvdFull {
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

impl OpSpec for SvdTruncated {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        validate_truncation(Self::NAME, &self.0)?;
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        let (m, n, k) = (a.rows, a.cols, a.k());
        Ok(outputs([
            Some(out(Self::NAME, "u", a.dtype, &[m, k], a.batch)?),
            Some(out(Self::NAME, "s", a.dtype.real(), &[k], a.batch)?),
            Some(out(Self::NAME, "vh", a.dtype, &[k, n], a.batch)?),
            Some(out(Self::NAME, "rank", DType::I64, &[], a.batch)?),
        ]))
    }
}
