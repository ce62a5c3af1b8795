//! Truncated SVD (`SvdTruncated`): the thin SVD cut to p triplets, p chosen
//! from the data per batch item, returned masked (the discarded columns of
//! u, values of s and rows of vh are zero; `rank` = p).
//!
//! Rule (docs/ad-rules.md#truncated-svd): with the full thin SVD computed and
//! then cut, the derivative of the kept triplets is exactly the thin rule
//! with zero cotangents on the discarded ones — the coupling of the kept
//! vectors to the discarded spectrum is already in F⁻ and F⁺ (no separate
//! correction, and the rule that ignores the discarded part is 5–40 %
//! wrong). So, for a fixed p (p locally constant: the kept values separated
//! from the discarded ones, as the rank must not jump under a perturbation):
//! 1. the masked outputs lost the discarded triplets, which the thin rule
//!    needs: the primal side runs one thin SVD of A (`svd`, the default
//!    options the kernel uses, so the same factors bit for bit);
//! 2. [du, ds, dvh] = the thin rule at those factors (`svd::thin_tangents`);
//! 3. the output tangents are masked like the outputs: du·diag(m),
//!    m∘ds, diag(m)·dvh, with m_i = 1 for the kept triplets (i < p), 0
//!    otherwise — linear in the tangents (column/row scaling and an
//!    elementwise product by a primal), so reverse mode is its transpose.
//!
//! The mask m is read from the masked u on the primal side: a kept column
//! has unit norm and a discarded one is exactly zero, so
//! m = `NonzeroMask`(Σ_rows |u_ij|²) is exactly 0/1 (unlike s, which can
//! hold a kept zero value under `Truncation::Count`).
//!
//! `rank` is integer-valued: no tangent.

use super::svd::thin_tangents;
use super::{integer_output, tangents, Primals, Tangents};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{Error, Result};
use crate::face::Face;
use crate::op::SvdOptions;
use crate::prim::{ReduceOp, UnaryOp};
use crate::provider::Op;
use crate::Ops;

/// Output tangents of `SvdTruncated` (see the module docs).
pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    _l: &crate::op::LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    let da = dx.first().ok_or(Error::Arity { op: op.name(), expected: 1, got: 0 })?;
    let u_kept = primals.output(op, 0)?;
    // Step 1: the whole thin SVD (the kernel's options, so the same factors).
    let opts = SvdOptions::default();
    let full = cx.primal().svd_with_options(a, opts)?;
    // Step 2: the thin rule.
    let [du, ds, dvh] = thin_tangents(cx, &opts, a, &full, da)?;
    // Step 3: mask like the outputs.
    let mask = kept_mask(cx.primal(), u_kept)?;
    let du = cx.scale_cols(&du, &mask)?;
    let ds = cx.mul(&mask, &ds)?;
    let dvh = cx.scale_rows(&dvh, &mask)?;
    Ok(tangents([du, ds, dvh, integer_output(op, "rank")]))
}

/// m_i = 1 where column i of the masked `u` is kept (unit norm), 0 where it
/// was zeroed: `NonzeroMask`(Σ_rows |u_ij|²), real, `[k, batch…]`. Also
/// the gauge check's mask (`ad/vjp/gauge.rs`).
pub(crate) fn kept_mask<F: Face + ?Sized>(f: &mut F, u_kept: &F::Tensor) -> Result<F::Tensor> {
    let sq = f.unary(UnaryOp::Abs2, u_kept)?;
    let norms = f.reduce(ReduceOp::Sum, &sq, 1)?;
    f.unary(UnaryOp::NonzeroMask, &norms)
}
