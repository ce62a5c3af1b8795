//! The gauge checks of reverse mode (AD-RULES.md "Gauge check (report, do
//! not guess)"): ops that return the output cotangents of an SVD or an eigh
//! unchanged, or fail with [`Error::NotDifferentiable`] when the loss is not
//! differentiable at the point, so that reverse mode reports instead of
//! answering with a gauge-dependent number. Reverse mode passes every
//! cotangent of `Svd`, `SvdVals`, `SvdFull` (thin part) and `Eigh`,
//! `EighVals` through one of them before transposing the rule
//! (`ad/vjp.rs`); they are never differentiated themselves.
//!
//! SVD, A = U diag(s) Vᴴ (k singular values), cotangents gU, gs, gV
//! (gV = gvhᴴ), a_U = ah(Uᴴ gU), a_V = ah(Vᴴ gV), δ = 10·k·eps·max s (the
//! tie cutoff of the rule). The rule transposes exactly when the cotangent
//! is gauge-invariant and the loss smooth; otherwise its answer depends on
//! the basis the forward happened to pick. Δ is the largest of
//! * |(a_U + a_V)_ij| for i ≠ j with |s_i − s_j| ≤ δ: the loss depends on
//!   the basis inside a group of tied singular values (a projector that
//!   splits the group, one entry of U);
//! * |(a_U + a_V)_ii| (complex only): it depends on the phase of a pair of
//!   singular vectors;
//! * |(a_U)_ij|, |(a_V)_ij| for s_i, s_j ≤ δ (i = j included): the vectors
//!   of zero singular values are an arbitrary basis, left and right apart;
//! * ‖P_U gU_i‖, ‖P_V gV_i‖ for s_i ≤ δ (P_U = I − UUᴴ, only where U has
//!   fewer columns than rows, likewise V): the same, outside the span of U;
//! * |gs_i| for s_i ≤ δ: a kink (the nuclear norm at a zero singular value);
//! * |gs_i − gs_j| for i ≠ j with |s_i − s_j| ≤ δ: the loss is not a
//!   symmetric function of tied values (the largest of two tied values), so
//!   its gradient U diag(gs) Vᴴ on the group depends on the basis (an
//!   addition to AD-RULES.md's list, needed for the same reason).
//!
//! The check fails when Δ > eps^{3/4}·‖(gU, gs, gV)‖ (Frobenius norm of all
//! cotangents together, eps of the dtype). eigh, A = V diag(w) Vᴴ, the same
//! with a_V = ah(Vᴴ gV), δ = 10·n·eps·max|w|: tied pairs of (a_V, gw), and
//! the phase (a_V)_ii for complex input. The error names the decomposition
//! ("svd" or "eigh"), the output whose cotangent is at fault and why.
//!
//! Cost: O((m + n)·k) to read the cotangents, O(k²) to find the tied pairs,
//! O(m + n) per tied pair and per diagonal entry, O((m + n)·k) per zero
//! singular value; no k³ work unless most singular values vanish.
//!
//! [`Error::NotDifferentiable`]: crate::Error::NotDifferentiable

/// Why a gauge check fails: the `why` of its [`Error::NotDifferentiable`],
/// one text per kind of failure, the same on every provider.
///
/// [`Error::NotDifferentiable`]: crate::Error::NotDifferentiable
pub mod why {
    /// A tied group's basis enters the cotangent (SVD).
    pub const SVD_TIE: &str =
        "the cotangent depends on the basis chosen inside a group of tied singular values \
                               (e.g. a projector that splits the group, or one entry of U)";
    /// A complex phase enters the cotangent (SVD).
    pub const SVD_PHASE: &str = "the cotangent depends on the complex phase of a singular vector";
    /// A null-space vector enters the cotangent.
    pub const SVD_NULL: &str = "the cotangent depends on the singular vectors of a zero singular value, \
                                an arbitrary basis of the null space";
    /// ∂L/∂s_i ≠ 0 at s_i = 0.
    pub const SVD_KINK: &str =
        "∂L/∂s_i ≠ 0 at s_i = 0 (a kink, e.g. the nuclear norm at a zero singular value)";
    /// ∂L/∂s differs inside a tied group.
    pub const SVD_VALUES: &str = "∂L/∂s differs between tied singular values (the loss is not a symmetric \
                                  function of them, e.g. the largest of two equal values)";
    /// A tied group's basis enters the cotangent (eigh).
    pub const EIGH_TIE: &str =
        "the cotangent depends on the basis chosen inside a group of tied eigenvalues \
                                (e.g. a projector that splits the group, or one entry of V)";
    /// A complex phase enters the cotangent (eigh).
    pub const EIGH_PHASE: &str = "the cotangent depends on the complex phase of an eigenvector";
    /// ∂L/∂w differs inside a tied group.
    pub const EIGH_VALUES: &str = "∂L/∂w differs between tied eigenvalues (the loss is not a symmetric \
                                   function of them, e.g. the smallest of two equal values)";
}

use super::check::{dim, float_matrix, operand, out, outputs, same_batch, square, vector, Mat};
use super::{OpSpec, Outputs};
use crate::error::{Dim, Result};
use crate::tensor::TensorMeta;

/// `u` (m×k), `s` (k, real), `vh` (k×n) of a thin SVD and the cotangents
/// `gu`, `gs`, `gvh` of the same shapes → `gu`, `gs`, `gvh` unchanged, or
/// `Error::NotDifferentiable { op: "svd", .. }` (see the module docs).
/// Zero matrices stand for a factor that was not computed (with a zero
/// cotangent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SvdGaugeCheck(pub GaugeOf);

/// The op whose cotangents an [`SvdGaugeCheck`] checks, named in its error:
/// the check runs on a thin SVD's factors, which for `SvdTruncated` and
/// `LowRankApprox` are the factors their rules recompute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GaugeOf {
    /// `Svd`, `SvdVals`, `SvdFull`: reported as op "svd".
    #[default]
    Svd,
    /// `SvdTruncated`: reported as op "svd_truncated".
    SvdTruncated,
    /// `LowRankApprox` (cotangents G V diag(s_K), diag(s_K) Uᴴ G of its
    /// a_p): reported as op "low_rank_approx", output "a_p".
    LowRankApprox,
}

impl GaugeOf {
    /// The op named in the error.
    pub fn op(self) -> &'static str {
        match self {
            GaugeOf::Svd => "svd",
            GaugeOf::SvdTruncated => "svd_truncated",
            GaugeOf::LowRankApprox => "low_rank_approx",
        }
    }

    /// The output named in the error for a violation found on the factor
    /// output `factor` ("u", "s" or "vh").
    pub fn output(self, factor: &'static str) -> &'static str {
        match self {
            GaugeOf::LowRankApprox => "a_p",
            GaugeOf::Svd | GaugeOf::SvdTruncated => factor,
        }
    }
}

/// `v` (n×n), `w` (n, real) of an eigh and the cotangents `gw`, `gv` →
/// `gw`, `gv` unchanged, or `Error::NotDifferentiable { op: "eigh", .. }`
/// (see the module docs). A zero `v` with a zero `gv` stands for
/// eigenvalues computed alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EighGaugeCheck;

impl OpSpec for SvdGaugeCheck {
    const NAME: &'static str = "svd_gauge_check";
    const INPUTS: &'static [&'static str] = &["u", "s", "vh", "gu", "gs", "gvh"];
    const OUTPUTS: &'static [&'static str] = &["gu", "gs", "gvh"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = SvdGaugeCheck::NAME;
        let u = float_matrix(OP, "u", inputs[0])?;
        let (k, s_batch) = vector(OP, "s", inputs[1], u.dtype.real())?;
        same_batch(OP, ("s", &inputs[1].shape, s_batch), ("u", u.shape, u.batch))?;
        dim(OP, "s", &inputs[1].shape, Dim::Len, k, u.cols, "u")?;
        let vh = operand(OP, "u", &u, "vh", inputs[2])?;
        dim(OP, "vh", vh.shape, Dim::Rows, vh.rows, k, "s")?;
        let gu = operand(OP, "u", &u, "gu", inputs[3])?;
        same_dims(OP, ("gu", &gu), ("u", &u))?;
        let gvh = operand(OP, "u", &u, "gvh", inputs[5])?;
        same_dims(OP, ("gvh", &gvh), ("vh", &vh))?;
        let (gk, gs_batch) = vector(OP, "gs", inputs[4], u.dtype.real())?;
        same_batch(OP, ("gs", &inputs[4].shape, gs_batch), ("u", u.shape, u.batch))?;
        dim(OP, "gs", &inputs[4].shape, Dim::Len, gk, k, "s")?;
        Ok(outputs([
            Some(out(OP, "gu", u.dtype, &[u.rows, k], u.batch)?),
            Some(out(OP, "gs", u.dtype.real(), &[k], u.batch)?),
            Some(out(OP, "gvh", u.dtype, &[k, vh.cols], u.batch)?),
        ]))
    }
}

impl OpSpec for EighGaugeCheck {
    const NAME: &'static str = "eigh_gauge_check";
    const INPUTS: &'static [&'static str] = &["v", "w", "gw", "gv"];
    const OUTPUTS: &'static [&'static str] = &["gw", "gv"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = EighGaugeCheck::NAME;
        let v = square(OP, "v", inputs[0])?;
        for (name, meta) in [("w", inputs[1]), ("gw", inputs[2])] {
            let (n, batch) = vector(OP, name, meta, v.dtype.real())?;
            same_batch(OP, (name, &meta.shape, batch), ("v", v.shape, v.batch))?;
            dim(OP, name, &meta.shape, Dim::Len, n, v.rows, "v")?;
        }
        let gv = operand(OP, "v", &v, "gv", inputs[3])?;
        same_dims(OP, ("gv", &gv), ("v", &v))?;
        Ok(outputs([
            Some(out(OP, "gw", v.dtype.real(), &[v.rows], v.batch)?),
            Some(out(OP, "gv", v.dtype, &[v.rows, v.rows], v.batch)?),
        ]))
    }
}

/// A cotangent `g` must have the rows and columns of its primal `x`.
///
/// # Errors
/// [`Error::DimMismatch`](crate::Error::DimMismatch).
fn same_dims(
    op: &'static str,
    (g_name, g): (&'static str, &Mat<'_>),
    (x_name, x): (&'static str, &Mat<'_>),
) -> Result<()> {
    dim(op, g_name, g.shape, Dim::Rows, g.rows, x.rows, x_name)?;
    dim(op, g_name, g.shape, Dim::Cols, g.cols, x.cols, x_name)
}
