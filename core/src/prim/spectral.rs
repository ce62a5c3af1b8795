//! Primal-side helpers of the spectral derivative rules
//! (`docs/ad-rules.md#partial-fractions-and-the-tie-cutoff`): the
//! pairwise inverse-gap matrices F⁻, F⁺ formed from a spectrum without
//! squaring it, and the pivot mask that the phase-gauge correction reads.
//! Neither is linear in its input; rules apply them to primal values only.

use super::PrimSpec;
use crate::error::{Error, Result};
use crate::op::check::{float_matrix, float_tensor, out, outputs, rank};
use crate::op::Outputs;
use crate::tensor::TensorMeta;
use crate::ArgKind;

/// How [`PairInv`] combines two entries of its spectrum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pair {
    /// `x_j − x_i` (antisymmetric; zero diagonal).
    Diff,
    /// `x_i + x_j`.
    Sum,
}

/// How [`PairInv`] inverts a combined entry `z`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Regularize {
    /// inv_δ(z) = 1/z if |z| > δ else 0, with δ = `relative`·max_i |x_i|
    /// per batch item (docs/ad-rules.md#partial-fractions-and-the-tie-cutoff).
    Cutoff {
        /// δ relative to the largest |x_i|.
        relative: f64,
    },
    /// The Lorentzian broadening conj(z)/(|z|² + ε²) (no cutoff).
    Lorentzian {
        /// ε.
        eps: f64,
    },
}

/// `y[i, j, b…] = g(x_j ∘ x_i)` for a spectrum `x` (`[k, batch…]`, real or
/// complex) → `[k, k, batch…]` of `x`'s dtype, with ∘ from [`Pair`] and the
/// inversion `g` from [`Regularize`]. The diagonal of [`Pair::Diff`] is 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairInv {
    /// Difference or sum.
    pub pair: Pair,
    /// Cutoff or broadening.
    pub regularize: Regularize,
}

/// For each column j of `u` (`[m, k, batch…]`), at the row r_j of its
/// largest-magnitude entry (the first on ties — the row the providers' phase
/// gauge makes real and positive): `y[r_j, j] = 1/u[r_j, j]`, zeros elsewhere
/// (an all-zero column gives a zero column). Then Im Σ_r y_rj·dU_rj is the
/// phase the gauge correction removes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PivotPhase;

impl PrimSpec for PairInv {
    const NAME: &'static str = "pair_inv";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = inputs[0];
        rank(Self::NAME, "x", x, ArgKind::Vector)?;
        float_tensor(Self::NAME, "x", x)?;
        let valid = match self.regularize {
            Regularize::Cutoff { relative } => relative.is_finite() && relative >= 0.0,
            Regularize::Lorentzian { eps } => eps.is_finite() && eps > 0.0,
        };
        if !valid {
            return Err(Error::InvalidOption {
                op: Self::NAME,
                option: "regularize",
                why: "needs a finite cutoff ≥ 0 or a finite broadening > 0",
            });
        }
        let dims = x.shape.dims();
        Ok(outputs([Some(out(Self::NAME, "y", x.dtype, &[dims[0], dims[0]], &dims[1..])?)]))
    }
}

impl PrimSpec for PivotPhase {
    const NAME: &'static str = "pivot_phase";
    const INPUTS: &'static [&'static str] = &["u"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        float_matrix(Self::NAME, "u", inputs[0])?;
        Ok(outputs([Some(inputs[0].clone())]))
    }
}
