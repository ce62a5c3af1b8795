//! Full-pivot LU, `P A Q = L U` (docs/ad-rules.md#lu): the partial-pivot rule
//! (`lu.rs`) with B = P dA Q. Both permutations are integer-valued (no
//! tangent) and locally constant. `(P A Q)[i, j] = A[row_perm[i],
//! col_perm[j]]`, so P is applied as in `lu.rs` and `X Q` as `(P_col Xᵀ)ᵀ`.
//!
//! Solves (`op(A) x = b`, `A = Pᵀ L U Qᵀ`): dx = op(A)⁻¹ (db − op(dA) x) with
//! the saved factors; for [`FullPivLuSolvePrepared`] the packed tangent of
//! `lu` gives dA = Pᵀ (dL U + L dU) Qᵀ.
//!
//! Singular matrices: full pivoting moves every (near-)zero pivot to the end,
//! so a square matrix of corank 1 has only its last pivot zero, and its
//! factors have finite, exact tangents (see `lu.rs`); at corank ≥ 2, or a
//! tall matrix of lower rank, the tangents are non-finite (not
//! differentiable there). The fused solve of a singular matrix fails in its
//! forward pass.

use super::lu::{factor_tangent, is_value, pack, permute_cols, permute_rows, recombine, unpack};
use super::{integer_output, tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::{FullPivLuSolvePrepared, LinalgOp, MatOp};
use crate::provider::Op;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let rows = || integer_output(op, "row_perm");
    let cols = || integer_output(op, "col_perm");
    match l {
        LinalgOp::FullPivLu(_) => {
            let (rp, cp) = (primals.output(op, 0)?, primals.output(op, 1)?);
            let (lo, up) = (primals.output(op, 2)?, primals.output(op, 3)?);
            let b = permute_both(cx, rp, cp, &dx[0])?;
            let (dl, du) = factor_tangent(cx, lo, up, &b)?;
            Ok(tangents([rows(), cols(), dl, du]))
        }
        LinalgOp::FullPivLuFactor(_) => {
            let lu = primals.output(op, 0)?;
            let (rp, cp) = (primals.output(op, 1)?, primals.output(op, 2)?);
            let dlu = packed_tangent(cx, lu, rp, cp, &dx[0])?;
            Ok(tangents([dlu, rows(), cols()]))
        }
        LinalgOp::FullPivLuSolve(solve) => {
            let (x, lu) = (primals.output(op, 0)?, primals.output(op, 1)?);
            let (rp, cp) = (primals.output(op, 2)?, primals.output(op, 3)?);
            let da_x = cx.matmul(t(&dx[0]), MatOp::Identity, p(x), MatOp::Identity)?;
            let rhs = cx.sub(&dx[1], &da_x)?;
            let dsol = cx.full_piv_lu_solve(lu, rp, cp, &rhs, MatOp::Identity, solve.0.for_derivative())?;
            let dlu = packed_tangent(cx, lu, rp, cp, &dx[0])?;
            Ok(tangents([dsol, dlu, rows(), cols()]))
        }
        LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared(how, options)) => {
            let (lu, rp, cp) = (primals.input(0), primals.input(1), primals.input(2));
            let x = primals.output(op, 0)?;
            let da = if is_value(&dx[0]) {
                // dA = Pᵀ M Qᵀ with M = dL U + L dU; Y Qᵀ = (Q Yᵀ)ᵀ = (P_colᵀ Yᵀ)ᵀ.
                let (lo, up) = unpack(cx, lu)?;
                let m = recombine(cx, &lo, &up, &dx[0])?;
                let pt_m = permute_rows(cx, rp, &m, MatOp::Transpose)?;
                permute_cols(cx, cp, &pt_m, MatOp::Transpose)?
            } else {
                dx[0].clone()
            };
            // The integer permutation inputs have no tangents.
            let coupling = cx.matmul(t(&da), *how, p(x), MatOp::Identity)?;
            let rhs = cx.sub(&dx[3], &coupling)?;
            Ok(tangents([cx.full_piv_lu_solve(lu, rp, cp, &rhs, *how, options.for_derivative())?]))
        }
        _ => Ok(unsupported(op)),
    }
}

/// B = P dA Q.
///
/// # Errors
/// As [`Cx::linear`].
fn permute_both<C: Cx + ?Sized>(
    cx: &mut C,
    rp: &C::P,
    cp: &C::P,
    da: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let rows = permute_rows(cx, rp, da, MatOp::Identity)?;
    permute_cols(cx, cp, &rows, MatOp::Identity)
}

/// The packed tangent of a full-pivot `lu` along `da`.
///
/// # Errors
/// As [`Cx::linear`]; the primal face's.
fn packed_tangent<C: Cx + ?Sized>(
    cx: &mut C,
    lu: &C::P,
    rp: &C::P,
    cp: &C::P,
    da: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    if !is_value(da) {
        return Ok(da.clone());
    }
    let dims = cx.primal().meta(lu).shape;
    let (m, n) = (dims.dims()[0], dims.dims()[1]);
    let (lo, up) = unpack(cx, lu)?;
    let b = permute_both(cx, rp, cp, da)?;
    let (dl, du) = factor_tangent(cx, &lo, &up, &b)?;
    pack(cx, [m, n], &dl, &du)
}
