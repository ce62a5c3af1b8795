//! The matrix exponential with what its gradient reads
//! (docs/ad-rules.md#matrix-exponential).
//!
//! [`ExpmFactors`] is `expm` that also returns the scaling-and-squaring
//! terms it formed: the scaled X = A/2^s, its even powers, the Padé sum W
//! (U = X·W), the approximant r_m(X) before squaring, the LU factors of
//! q_m(X) and their row permutation, with the degree and s. Reverse mode
//! runs it in place of [`Expm`](super::Expm) when the input is
//! differentiated, and the gradient is [`ExpmFrechetFactored`]: the Fréchet
//! derivative from those terms, which forms only the derivative's own
//! products instead of the whole exponential again.

use super::check::{dim, operand, out, outputs, perm, square};
use super::{Expm, LinalgOp, Live, MatOp, OpSpec, Outputs};
use crate::dtype::DType;
use crate::error::{Dim, Result};
use crate::tensor::TensorMeta;

/// How many n×n blocks `terms` holds, side by side: X, X², X⁴, X⁶, X⁸, W,
/// r_m(X) and the packed LU of q_m(X) (a low degree leaves the powers it
/// does not use as zeros).
pub const EXPM_TERMS: usize = 8;

/// `a` (n×n) → `ea` = e^a, `terms` (n×8n: the blocks of [`EXPM_TERMS`]) and
/// `piv` (n + 2, `i64`: the LU's row permutation, then the Padé degree's
/// index 0…4 for m = 3, 5, 7, 9, 13, then s). The degree and s follow the
/// thresholds of the Fréchet derivative (ℓ_m), so the terms serve it as
/// accurately as `expm_frechet`'s own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExpmFactors;

/// `a`, its `terms` and `piv` (as [`ExpmFactors`] returns them) and `e`
/// (n×n) → `l` = L(op(a), e), the Fréchet derivative of the exponential,
/// from the terms (`a` itself is read by the rule only: its tangent is the
/// one the second derivative follows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExpmFrechetFactored(pub MatOp);

impl OpSpec for ExpmFactors {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = ExpmFactors::NAME;
        let a = square(OP, "a", inputs[0])?;
        let n = a.rows;
        let wide = n.saturating_mul(EXPM_TERMS);
        Ok(outputs([
            Some(out(OP, "ea", a.dtype, &[n, n], a.batch)?),
            Some(out(OP, "terms", a.dtype, &[n, wide], a.batch)?),
            Some(out(OP, "piv", DType::I64, &[n.saturating_add(2)], a.batch)?),
        ]))
    }

    fn prune(&self, live: Live) -> Option<LinalgOp> {
        (!live.contains(1) && !live.contains(2)).then_some(LinalgOp::Expm(Expm))
    }
}

impl OpSpec for ExpmFrechetFactored {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = ExpmFrechetFactored::NAME;
        let a = square(OP, "a", inputs[0])?;
        let n = a.rows;
        let terms = operand(OP, "a", &a, "terms", inputs[1])?;
        dim(OP, "terms", terms.shape, Dim::Rows, terms.rows, n, "a")?;
        dim(OP, "terms", terms.shape, Dim::Cols, terms.cols, n.saturating_mul(EXPM_TERMS), "a")?;
        perm(OP, "piv", inputs[2], n.saturating_add(2), "a", &a)?;
        let e = operand(OP, "a", &a, "e", inputs[3])?;
        dim(OP, "e", e.shape, Dim::Rows, e.rows, n, "a")?;
        dim(OP, "e", e.shape, Dim::Cols, e.cols, n, "a")?;
        Ok(outputs([Some(out(OP, "l", a.dtype, &[n, n], a.batch)?)]))
    }
}
