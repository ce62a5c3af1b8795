//! `Polar`: W = U Vᴴ from the thin SVD A = U diag(s) Vᴴ
//! (`docs/ad-rules.md#recombinations`), for any shape: an isometry when
//! m ≥ n, a co-isometry
//! when m < n.
//!
//! dW = dU Vᴴ + U dVᴴ with the thin SVD tangents; Ω_U − Ω_V = 2F⁺∘ah(dP), so
//! dW = U (F⁺∘(dP − dPᴴ)) Vᴴ + P_U dA V diag(1/s) Vᴴ + U diag(1/s) Uᴴ dA P_V
//! with dP = Uᴴ dA V and F⁺_ij = inv_δ(s_i + s_j) (`PairInv`). Only sums of
//! singular values appear, so tied values cost no precision (the diagonal
//! of F⁺ is the complex phase part 1/(2s_i)). P_U = 0 when m ≤ n and
//! P_V = 0 when m ≥ n, so at most one projector term is formed:
//! (dA V − U dP) diag(σ⁺) Vᴴ when m > k, U diag(σ⁺)(Uᴴ dA − dP Vᴴ) when
//! n > k, σ⁺_i = inv_δ(s_i). W is gauge-invariant: no phase correction.
//!
//! Differentiable where A has full rank. At a zero singular value (within
//! δ = 10·k·eps·s_max) the cut-off 1/s and F⁺ give a finite tangent with no
//! meaning; the rule cannot read values to report it.

use super::super::{tangents, Primals, Tangents};
use super::low_rank::Thin;
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{Error, Result};
use crate::op::MatOp;
use crate::prim::Pair;
use crate::provider::Op;
use crate::Ops;

/// Output tangent `[dW]` (see the module docs).
pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    let da = dx.first().ok_or(Error::Arity { op: op.name(), expected: 1, got: 0 })?;
    let th = Thin::new(cx, a, da)?;
    let relative = th.relative_cutoff();
    let f_plus = th.pair_inv(cx, Pair::Sum, relative)?;
    let f_plus = th.like_a(cx, f_plus)?;
    // σ⁺_i = inv_δ(s_i) = 2·inv_{2δ}(2 s_i), the diagonal of F⁺ at twice the cutoff.
    let twice = th.pair_inv(cx, Pair::Sum, 2.0 * relative)?;
    let twice = cx.primal().diag_part(&twice)?;
    let inv_s = cx.primal().scale(&twice, 2.0)?;
    let dph = cx.adjoint(&th.dp, MatOp::Adjoint)?;
    let ah2 = cx.sub(&th.dp, &dph)?;
    let core = cx.mul(&f_plus, &ah2)?;
    Ok(tangents([th.recombine(cx, &core, &inv_s, da)?]))
}
