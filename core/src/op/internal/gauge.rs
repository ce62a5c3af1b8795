//! The gauge checks of reverse mode (`docs/ad-rules.md`, "Ties and gauge
//! checks"): before an SVD's, an eigh's or an eig's rule is transposed, its
//! output cotangents pass through one of these, which returns them
//! unchanged with a bound on the error the rule will make, or fails when the
//! rule cannot answer:
//!
//! * `Error::NotDifferentiable` when the loss is not differentiable at the
//!   point: the cotangent depends on the basis chosen inside a group of tied
//!   values (the gauge), on a complex phase or on null-space vectors; a kink
//!   (∂L/∂s_i ≠ 0 at s_i = 0); a function of tied values that is not
//!   symmetric in them (unequal ∂L/∂s inside a group whose vectors the
//!   cotangent does not couple); a defective eigenvalue (eig);
//! * `Error::NearTie` when two values are tied and the cotangent couples
//!   their vectors: the rule's term for the pair is 0/0 there, whose limit
//!   the first-order cotangents do not determine (a reconstruction
//!   U diag(s) Vᴴ and a projector onto a whole tied group look alike and
//!   need different limits).
//!
//! SVD, A = U diag(s) Vᴴ (k values), cotangents gU, gs, gV (gV = gvhᴴ),
//! J = Uᴴ gU, K = Vᴴ gV, δ = 10·k·eps·max s (the rule's tie cutoff). For a
//! tied pair (|s_i − s_j| ≤ δ, i ≠ j) the gauge projection is
//! ah(J + K)_ij; the coupling |J_ij| + |J_ji| + |K_ij| + |K_ji|; both are
//! measured against eps^{3/4}·‖(gU, gs, gV)‖. The diagonal phase
//! ah(J + K)_ii (complex input), the null-space blocks (a_U, a_V and
//! ‖P_U gU_i‖, ‖P_V gV_i‖ at s_i ≤ δ) and kinks as the list above. eigh
//! (A = V diag(w) Vᴴ, J = Vᴴ gV): gauge ah(J)_ij, coupling |J_ij| + |J_ji|.
//! eig (A V = V diag(λ), J = Vᴴ gV): the gauge of a semisimple repeated
//! eigenvalue mixes its eigenvectors by any invertible map, so J_ij and
//! J_ji themselves are the gauge projection; tied eigenvectors that are
//! parallel (|v_iᴴ v_j| ≈ 1) mark a defective eigenvalue.
//!
//! The bound (the fourth output for the SVD, third for eigh and eig, a real
//! `[5, batch…]`: estimate, scale, i, j, gap) covers the pairs that are not
//! tied:
//! the rule divides a gauge projection computed with rounding error
//! ≈ eps·(‖g_i‖ + ‖g_j‖) by their gap, and gU_i/s_i by small values. Its
//! estimate is the Frobenius norm of those errors over every pair (the
//! worst pair and its gap named); its scale, ‖gs‖ + (‖gU‖ + ‖gV‖)/s_max
//! (‖gw‖ + ‖gV‖/max|w| for eigh and eig), is the size ∂L/∂A has unless
//! it cancels. After the transpose, [`TieCheck`](super::TieCheck) compares
//! the estimate with max(‖∂L/∂A‖, scale).
//!
//! Cost: O((m + n)·k) to read the cotangents, O(k²) over pairs, O(m + n)
//! per tied or near-tied pair and per diagonal entry, O((m + n)·k) per zero
//! singular value; no k³ work unless most values are tied or vanish.

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
    /// A tied group's basis enters the cotangent (eig).
    pub const EIG_TIE: &str = "the cotangent depends on the eigenvectors chosen inside a repeated \
                               eigenvalue's eigenspace (any invertible mix of them is as valid)";
    /// ∂L/∂λ differs inside a tied group (eig).
    pub const EIG_VALUES: &str = "∂L/∂λ differs between repeated eigenvalues (the loss is not a \
                                  symmetric function of them)";
    /// Forward mode: the tangent couples vectors of tied values.
    pub const FORWARD_TIE: &str = "forward mode at a tie: the direction couples the vectors of two tied \
                                   values, whose tangent then depends on how the tie splits (a 0/0 the \
                                   rule cannot resolve); second derivatives stop here too (a spectral \
                                   function Σ f(λ) = tr f(A) of a Hermitian matrix has an exact Hessian \
                                   at ties through funm_hermitian)";
    /// Forward mode: the tangent couples vectors of zero singular values.
    pub const FORWARD_NULL: &str = "forward mode at a zero singular value: the direction moves it or \
                                    couples null-space vectors, whose tangent then depends on how they \
                                    split (a 0/0 the rule cannot resolve); second derivatives stop here too";
    /// A repeated eigenvalue with too few eigenvectors (eig).
    pub const EIG_DEFECTIVE: &str = "the eigenvalue is defective (its eigenvectors coincide): neither \
                                     the eigenvectors nor the eigenvalues are differentiable there";
}

use super::bound_meta;
use crate::error::{Dim, Result};
use crate::op::check::{dim, float_matrix, operand, out, outputs, same_batch, square, vector, Mat};
use crate::op::{OpSpec, Outputs};
use crate::tensor::TensorMeta;

/// `u` (m×k), `s` (k, real), `vh` (k×n) of a thin SVD and the cotangents
/// `gu`, `gs`, `gvh` of the same shapes → `gu`, `gs`, `gvh` unchanged and
/// the `bound` (see the module docs), or an error. Zero matrices stand for a
/// factor that was not computed (with a zero cotangent).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SvdGaugeCheck(pub GaugeOf, pub Values);

/// Whether the loss reads the decomposition's values output (its
/// cotangent is present on the tape). At an exact tie whose vectors the
/// cotangent couples, the rule's term for the pair is 0/0: its limit is 0
/// for a loss of the vectors alone that is invariant under rotations of
/// the tied group (a projector onto the group, the polar factor), and not
/// 0 for one that also reads the tied values (a reconstruction
/// U diag(s) Vᴴ, a function V f(Λ) Vᴴ) — then the check reports
/// `Error::NearTie`. (A loss that reads the tied values through another
/// op — the values of a second decomposition — is not seen: the docs say
/// so.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Values {
    /// The values output has a cotangent (the safe default).
    #[default]
    Read,
    /// It has none: only the vectors are read.
    Unread,
}

/// The op whose cotangents a check checks, named in its errors with the op
/// to use instead: an SVD check runs on a thin SVD's factors, which for
/// `SvdTruncated` and `LowRankApprox` are the factors their rules
/// recompute.
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
    /// `Eigh`, `EighVals`: reported as op "eigh".
    Eigh,
    /// `Eig`: reported as op "eig".
    Eig,
}

impl GaugeOf {
    /// The op named in the error.
    pub fn op(self) -> &'static str {
        match self {
            GaugeOf::Svd => "svd",
            GaugeOf::SvdTruncated => "svd_truncated",
            GaugeOf::LowRankApprox => "low_rank_approx",
            GaugeOf::Eigh => "eigh",
            GaugeOf::Eig => "eig",
        }
    }

    /// The output named in the error for a violation found on the output
    /// `factor` ("u", "s", "vh", or "w" and "v" for the eigen families).
    pub fn output(self, factor: &'static str) -> &'static str {
        match self {
            GaugeOf::LowRankApprox => "a_p",
            GaugeOf::Svd | GaugeOf::SvdTruncated | GaugeOf::Eigh | GaugeOf::Eig => factor,
        }
    }

    /// What to use instead when a (near) tie makes the factors' derivative
    /// undetermined or inaccurate.
    pub fn suggestion(self) -> &'static str {
        match self {
            GaugeOf::Svd | GaugeOf::SvdTruncated | GaugeOf::LowRankApprox => {
                "a loss that recombines the factors is differentiable there through an op that forms \
                 the recombination itself: low_rank_approx for U diag(s) Vᴴ (or a truncation of it), \
                 polar for U Vᴴ, pinv or lstsq for V diag(1/s) Uᴴ"
            }
            GaugeOf::Eigh => {
                "a function of a Hermitian matrix V f(Λ) Vᴴ needs f's divided differences, which the \
                 cotangents of V and w do not carry: write f(A) with matmul, solve or inv (a polynomial \
                 or rational f has no division by gaps), or use a symmetric function of the values \
                 (Σ f(λ_i) through eigvalsh, log det through cholesky or slogdet)"
            }
            GaugeOf::Eig => {
                "a function of the whole eigenspace is differentiable there through an op that forms \
                 it: det or slogdet for Π λ_i, a trace of matmul powers for Σ λ_i^k"
            }
        }
    }
}

/// `v` (n×n), `w` (n, real) of an eigh and the cotangents `gw`, `gv` →
/// `gw`, `gv` unchanged and the `bound`, or an error (see the module
/// docs). A cotangent of the eigenvalues alone goes through
/// [`ValuesCheck`](super::ValuesCheck) instead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EighGaugeCheck(pub Values);

/// `v` (n×n, complex), `w` (n, complex) of an eig and the cotangents `gw`,
/// `gv` → `gw`, `gv` unchanged and the `bound`, or an error (see the
/// module docs).
///
/// For eig, [`Values::Read`] means that the values *and* the vectors are on
/// the tape. A function V f(Λ) V⁻¹ read that way can cancel its vector
/// cotangent's coupling exactly (through V⁻¹, which has no unitary
/// structure to show it), so no measurement of the cotangents tells its
/// 0/0 limit: a tie, or a near tie whose gap is below ε/tolerance of the
/// spectrum's size (where the rule's division by the gap would cost the
/// tolerance), is then reported `Error::NearTie`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EigGaugeCheck(pub Values);

impl SvdGaugeCheck {
    /// The op's name as used in messages.
    pub const NAME: &'static str = "svd_gauge_check";
    /// Input names, in order.
    pub const INPUTS: &'static [&'static str] = &["u", "s", "vh", "gu", "gs", "gvh"];
    /// Output names, in order.
    pub const OUTPUTS: &'static [&'static str] = &["gu", "gs", "gvh", "bound"];
}

impl OpSpec for SvdGaugeCheck {
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
            Some(bound_meta(OP, u.dtype, u.batch)?),
        ]))
    }
}

impl EighGaugeCheck {
    /// The op's name as used in messages.
    pub const NAME: &'static str = "eigh_gauge_check";
    /// Input names, in order.
    pub const INPUTS: &'static [&'static str] = &["v", "w", "gw", "gv"];
    /// Output names, in order.
    pub const OUTPUTS: &'static [&'static str] = &["gw", "gv", "bound"];
}

impl OpSpec for EighGaugeCheck {
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
            Some(bound_meta(OP, v.dtype, v.batch)?),
        ]))
    }
}

impl EigGaugeCheck {
    /// The op's name as used in messages.
    pub const NAME: &'static str = "eig_gauge_check";
    /// Input names, in order.
    pub const INPUTS: &'static [&'static str] = &["v", "w", "gw", "gv"];
    /// Output names, in order.
    pub const OUTPUTS: &'static [&'static str] = &["gw", "gv", "bound"];
}

impl OpSpec for EigGaugeCheck {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = EigGaugeCheck::NAME;
        let v = square(OP, "v", inputs[0])?;
        for (name, meta) in [("w", inputs[1]), ("gw", inputs[2])] {
            let (n, batch) = vector(OP, name, meta, v.dtype)?;
            same_batch(OP, (name, &meta.shape, batch), ("v", v.shape, v.batch))?;
            dim(OP, name, &meta.shape, Dim::Len, n, v.rows, "v")?;
        }
        let gv = operand(OP, "v", &v, "gv", inputs[3])?;
        same_dims(OP, ("gv", &gv), ("v", &v))?;
        Ok(outputs([
            Some(out(OP, "gw", v.dtype, &[v.rows], v.batch)?),
            Some(out(OP, "gv", v.dtype, &[v.rows, v.rows], v.batch)?),
            Some(bound_meta(OP, v.dtype, v.batch)?),
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
