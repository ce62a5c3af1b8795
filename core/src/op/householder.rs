//! Compact Householder QR and incremental column appends.
//!
//! The state of a factorization of an m×n matrix is `h` (m×n: R on and above
//! the diagonal, the essential parts of the reflectors v_j strictly below it,
//! with an implicit unit at v_j[j]) and `tau` (k = min(m, n) LAPACK-style
//! scalars: H_j = I − τ_j v_j v_jᴴ, τ = 0 for an identity reflector). The
//! state keeps the reflector convention: the diagonal of `h` may be negative or
//! complex. `householder_qr_q` / `householder_qr_r` return the normalised
//! factors, Q = Q_h[:, :k]·diag(phase(h_jj)) and R with diag(R) real and ≥ 0;
//! `householder_qr_apply` applies the raw Q_h = H_0⋯H_{k−1} in the state's
//! convention. `HouseholderQrAppend` factors `[a b]` from the state of `a` by
//! applying the stored reflectors to `b` only — no re-factorization, Q never
//! formed.

use super::check::{dim, float_matrix, operand, out, outputs, vector};
use super::{MatOp, OpSpec, Outputs};
use crate::error::{Dim, Error, Result};
use crate::tensor::TensorMeta;

/// `a` (m×n) → `h` (m×n), `tau` (k).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HouseholderQrFactor;

/// `h` (m×n₁), `tau` (min(m, n₁)), `b` (m×n₂) → `h` (m×(n₁+n₂)),
/// `tau` (min(m, n₁+n₂)): the compact QR of `[a b]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HouseholderQrAppend;

/// `h`, `tau` → `q` (m×k): the thin Q.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HouseholderQrQ;

/// `h` (m×n) → `r` (k×n): the upper triangle of the first k rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HouseholderQrR;

/// `h`, `tau`, `b` (m×r) → `y` (m×r) = Q b or Qᴴ b (full m×m Q), per `MatOp`
/// (`Transpose` is Qᵀ b).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HouseholderQrApply(pub MatOp);

/// Checks a compact state `(h, tau)`; returns (m, n, dtype, batch) of `h`.
fn state<'a>(op: &'static str, h: &'a TensorMeta, tau: &'a TensorMeta) -> Result<super::check::Mat<'a>> {
    let hm = float_matrix(op, "h", h)?;
    let (len, batch) = vector(op, "tau", tau, hm.dtype)?;
    dim(op, "tau", &tau.shape, Dim::Len, len, hm.k(), "h")?;
    super::check::same_batch(op, ("tau", &tau.shape, batch), ("h", hm.shape, hm.batch))?;
    Ok(hm)
}

impl OpSpec for HouseholderQrFactor {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([
            Some(out(Self::NAME, "h", a.dtype, &[a.rows, a.cols], a.batch)?),
            Some(out(Self::NAME, "tau", a.dtype, &[a.k()], a.batch)?),
        ]))
    }
}

impl OpSpec for HouseholderQrAppend {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        let h = state(op, inputs[0], inputs[1])?;
        let b = operand(op, "h", &h, "b", inputs[2])?;
        dim(op, "b", b.shape, Dim::Rows, b.rows, h.rows, "h")?;
        let n = h.cols.checked_add(b.cols).ok_or_else(|| Error::Overflow {
            op,
            arg: "b",
            shape: b.shape.clone(),
        })?;
        Ok(outputs([
            Some(out(op, "h", h.dtype, &[h.rows, n], h.batch)?),
            Some(out(op, "tau", h.dtype, &[h.rows.min(n)], h.batch)?),
        ]))
    }
}

impl OpSpec for HouseholderQrQ {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let h = state(Self::NAME, inputs[0], inputs[1])?;
        Ok(outputs([Some(out(Self::NAME, "q", h.dtype, &[h.rows, h.k()], h.batch)?)]))
    }
}

impl OpSpec for HouseholderQrR {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let h = float_matrix(Self::NAME, "h", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "r", h.dtype, &[h.k(), h.cols], h.batch)?)]))
    }
}

impl OpSpec for HouseholderQrApply {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        let h = state(op, inputs[0], inputs[1])?;
        let b = operand(op, "h", &h, "b", inputs[2])?;
        dim(op, "b", b.shape, Dim::Rows, b.rows, h.rows, "h")?;
        Ok(outputs([Some(out(op, "y", h.dtype, &[b.rows, b.cols], h.batch)?)]))
    }
}
