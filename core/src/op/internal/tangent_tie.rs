//! [`TangentTieCheck`]: forward mode's check at a tie. A spectral op's
//! JVP rule multiplies a coupling matrix C (for eigh, Vᴴ dA V) entry by
//! entry by a pair inverse F_ij = 1/(x_j ∓ x_i), cut to 0 where
//! |x_j ∓ x_i| ≤ δ (`PairInv` with `Regularize::Cutoff`). At a cut pair the
//! exact term is C_ij/0: it has a limit only when C_ij = 0 — the direction
//! does not couple the tied vectors — and then the cut gives it. Where
//! C_ij ≠ 0 the vectors' tangent depends on how the tie splits along the
//! direction, which the rule cannot see, so the check reports it instead of
//! letting a 0 through (docs/ad-rules.md#second-order). Reverse mode
//! never runs it (its transpose is the identity); its gauge checks see the
//! cotangent instead.
//!
//! The SVD's rule multiplies the Hermitian and the anti-Hermitian part of
//! its coupling by different pair inverses; the check takes the coupling
//! itself and forms the part it is asked about ([`Part`]), so that a part
//! which is all rounding is measured against the coupling it came from.
//! An entry counts as zero when it is at most eps^{3/4}·‖C‖_F over the
//! batch item (the Frobenius norm: the rounding of a product such as
//! UᴴdAV grows with its size). Cost: O(k²) per batch item.

use super::GaugeOf;
use crate::error::{Dim, Error, Result};
use crate::op::check::{dim, float_matrix, out, outputs, same_batch, vector};
use crate::op::{OpSpec, Outputs};
use crate::tensor::TensorMeta;

/// `x` (the spectrum, `[k, batch…]`, real or complex) and a tangent
/// coupling `c` (`[k, k, batch…]`, complex when `x` is) → `c` unchanged,
/// or `Error::NotDifferentiable` reported as the decomposition `of` names,
/// when the `part` of `c` is nonzero at a pair the cutoff `relative` cuts
/// (see [`Cut`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TangentTieCheck {
    /// The decomposition named in the error.
    pub of: GaugeOf,
    /// Which pairs the rule's pair inverse cuts.
    pub cut: Cut,
    /// δ relative to max|x| (the rule's cutoff).
    pub relative: f64,
    /// Which part of `c` the cut pair inverse multiplies.
    pub part: Part,
}

/// The part of the coupling C a rule multiplies by its cut pair inverse,
/// entry (i, j).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Part {
    /// C_ij itself.
    #[default]
    Whole,
    /// C_ij + conj(C_ji).
    Hermitian,
    /// C_ij − conj(C_ji).
    AntiHermitian,
}

/// The pairs (i, j) of a spectrum x a rule's pair inverse cuts, with
/// δ = `relative`·max|x|.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cut {
    /// i ≠ j with |x_j − x_i| ≤ δ: tied values (`Pair::Diff`).
    Tie,
    /// Any (i, j) with |x_i + x_j| ≤ δ: zero singular values (`Pair::Sum`).
    Zero,
}

impl Default for TangentTieCheck {
    fn default() -> Self {
        TangentTieCheck { of: GaugeOf::default(), cut: Cut::Tie, relative: 0.0, part: Part::Whole }
    }
}

impl TangentTieCheck {
    /// The op's name as used in messages.
    pub const NAME: &'static str = "tangent_tie_check";
    /// Input names, in order.
    pub const INPUTS: &'static [&'static str] = &["x", "c"];
    /// Output names, in order.
    pub const OUTPUTS: &'static [&'static str] = &["c"];

    /// The output a violation is reported on (the vectors).
    pub fn output(self) -> &'static str {
        self.of.output(match self.of {
            GaugeOf::Eigh | GaugeOf::Eig => "v",
            GaugeOf::Svd | GaugeOf::SvdTruncated | GaugeOf::LowRankApprox => "u",
        })
    }

    /// The error for a coupled pair.
    pub fn error(self) -> Error {
        let why = match self.cut {
            Cut::Tie => super::why::FORWARD_TIE,
            Cut::Zero => super::why::FORWARD_NULL,
        };
        Error::NotDifferentiable { op: self.of.op(), output: self.output(), why }
    }
}

impl OpSpec for TangentTieCheck {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = TangentTieCheck::NAME;
        if !(self.relative.is_finite() && self.relative >= 0.0) {
            return Err(Error::InvalidOption {
                op: OP,
                option: "relative",
                why: "needs a finite cutoff ≥ 0",
            });
        }
        let c = float_matrix(OP, "c", inputs[1])?;
        let x_dtype = if inputs[0].dtype.is_complex() { c.dtype } else { c.dtype.real() };
        let (k, batch) = vector(OP, "x", inputs[0], x_dtype)?;
        same_batch(OP, ("c", &inputs[1].shape, c.batch), ("x", &inputs[0].shape, batch))?;
        dim(OP, "c", &inputs[1].shape, Dim::Rows, c.rows, k, "x")?;
        dim(OP, "c", &inputs[1].shape, Dim::Cols, c.cols, k, "x")?;
        Ok(outputs([Some(out(OP, "c", c.dtype, &[k, k], batch)?)]))
    }
}
