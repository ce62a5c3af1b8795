//! Partial-pivot LU, `P A = L U` (docs/ad-rules.md#lu and docs/ad-rules.md#solves). The
//! permutation is integer-valued (no tangent) and locally constant, so the
//! factors move with the rows of dA permuted like A's: B = P dA (not Pᵀ dA).
//! With k = min(m, n), L₁, U₁ the leading k×k blocks and
//! K = L₁⁻¹ B₁ U₁⁻¹:
//!
//! * dU = L₁⁻¹ B[:k, :] − tril(K, −1) U (k×n; its leading block is
//!   triu(K) U₁, and for m < n its trailing block L₁⁻¹ B₂ − tril(K, −1) U₂);
//! * dL₁ = L₁ tril(K, −1), and for m > n dL₂ = B₂ U₁⁻¹ − L₂ triu(K)
//!   (B₂ = the trailing rows of B).
//!
//! P is applied as a solve with identity factors: `LuSolvePrepared(I, perm)`
//! solves Pᵀ x = b, i.e. x = P b, so no new primitive is needed, and the map
//! stays linear in its right-hand side (its transpose is the transposed solve).
//!
//! The packed `lu` output (strictly-lower L, U on and above the diagonal) has
//! the tangent packed the same way: dL below the diagonal, dU on and above.
//!
//! Solves (`x` with `op(A) x = b`, `A = Pᵀ L U`): dx = op(A)⁻¹ (db − op(dA) x)
//! with the saved factors, so reverse mode never factors A again. For
//! [`LuSolvePrepared`] the tangent of its `lu` input is a packed (dL, dU) and
//! dA = Pᵀ (dL U + L dU).
//!
//! Singular matrices: K is formed as (L₁⁻¹ B₁) U₁⁻¹, so a zero pivot only
//! poisons the columns of K from its own on. When the only zero pivot is the
//! last one (a generic corank-1 square matrix), tril(K, −1) never reads that
//! column and the square and wide (m < n) tangents are finite and exact (the
//! factors are smooth there; that one solve propagates the zero pivot,
//! `PivotCheck::Off`). A zero pivot earlier gives non-finite forward
//! tangents; the last one of a tall matrix (dL₂ needs all of U₁⁻¹), and
//! any zero pivot in reverse mode (whose transposed solve cannot mask), is
//! `Error::Singular` from the solve. The fused solve of a singular matrix
//! fails in its forward pass.

use super::{integer_output, tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::{
    Diagonal, LinalgOp, LuSolvePrepared, MatOp, PivotCheck, Side, SolveOptions, Triangle,
    TriangularSolveOptions,
};
use crate::prim::{BinaryOp, Pad, PrimOp, TriMask};
use crate::provider::Op;
use crate::Ops;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    match l {
        LinalgOp::Lu(_) => {
            let (perm, lo, up) = (primals.output(op, 0)?, primals.output(op, 1)?, primals.output(op, 2)?);
            let b = permute_rows(cx, perm, &dx[0], MatOp::Identity)?;
            let (dl, du) = factor_tangent(cx, lo, up, &b)?;
            Ok(tangents([integer_output(op, "perm"), dl, du]))
        }
        LinalgOp::LuFactor(_) => {
            let (lu, perm) = (primals.output(op, 0)?, primals.output(op, 1)?);
            let dlu = packed_tangent(cx, lu, perm, &dx[0])?;
            Ok(tangents([dlu, integer_output(op, "perm")]))
        }
        LinalgOp::LuFactorSolve(solve) => {
            let x = primals.output(op, 0)?;
            let (lu, perm) = (primals.output(op, 1)?, primals.output(op, 2)?);
            // dx = A⁻¹ (db − dA x) with the saved factors.
            let da_x = cx.matmul(t(&dx[0]), MatOp::Identity, p(x), MatOp::Identity)?;
            let rhs = cx.sub(&dx[1], &da_x)?;
            let dsol = cx.lu_solve(lu, perm, &rhs, MatOp::Identity, solve.0.for_derivative())?;
            let dlu = packed_tangent(cx, lu, perm, &dx[0])?;
            Ok(tangents([dsol, dlu, integer_output(op, "perm")]))
        }
        LinalgOp::LuSolvePrepared(LuSolvePrepared(how, options)) => {
            let (lu, perm, x) = (primals.input(0), primals.input(1), primals.output(op, 0)?);
            let da = if is_value(&dx[0]) {
                let (lo, up) = unpack(cx, lu)?;
                let m = recombine(cx, &lo, &up, &dx[0])?;
                permute_rows(cx, perm, &m, MatOp::Transpose)?
            } else {
                dx[0].clone()
            };
            // The integer `perm` input has no tangent (dx[1] is ignored).
            let coupling = cx.matmul(t(&da), *how, p(x), MatOp::Identity)?;
            let rhs = cx.sub(&dx[2], &coupling)?;
            Ok(tangents([cx.lu_solve(lu, perm, &rhs, *how, options.for_derivative())?]))
        }
        _ => Ok(unsupported(op)),
    }
}

/// `true` for a recorded tangent (zero and undefined ones need no primal
/// work: every helper passes them through).
pub(super) fn is_value<T>(x: &Tangent<T>) -> bool {
    matches!(x, Tangent::Value(_))
}

/// Dims of a primal value.
fn dims_of<C: Cx + ?Sized>(cx: &mut C, x: &C::P) -> heapless::Vec<usize, { crate::MAX_RANK }> {
    let meta = cx.primal().meta(x);
    heapless::Vec::from_slice(meta.shape.dims()).unwrap_or_default()
}

/// Identity matrices of size `n` with the dtype and batch dims of the
/// matrix `like`.
fn eye_like<C: Cx + ?Sized>(cx: &mut C, like: &C::P, n: usize) -> Result<C::P> {
    let dtype = cx.primal().meta(like).dtype;
    let dims = dims_of(cx, like);
    cx.primal().eye(dtype, n, dims.get(2..).unwrap_or(&[]))
}

/// `P x` (`how` = identity) or `Pᵀ x` (`how` = transpose) for the
/// permutation `perm` (`(P x)[i, :] = x[perm[i], :]`), as the LU solve with
/// identity factors: P A = I gives A = Pᵀ, A⁻¹ = P, A⁻ᵀ = Pᵀ. Exact (every
/// product is by 1 or 0), and linear in `x`.
///
/// # Errors
/// As [`Cx::linear`].
pub(super) fn permute_rows<C: Cx + ?Sized>(
    cx: &mut C,
    perm: &C::P,
    x: &Tangent<C::T>,
    how: MatOp,
) -> Result<Tangent<C::T>> {
    let Tangent::Value(v) = x else {
        return Ok(x.clone());
    };
    let meta = cx.tangent_meta(v);
    let n = meta.shape.dims()[0];
    let dims = dims_of(cx, perm);
    let eye = cx.primal().eye(meta.dtype, n, dims.get(1..).unwrap_or(&[]))?;
    cx.lu_solve(&eye, perm, x, how, SolveOptions::raw())
}

/// `x Q` for the column permutation `perm` (`(x Q)[:, j] = x[:, perm[j]]`):
/// (x Q)ᵀ = P_perm xᵀ.
///
/// # Errors
/// As [`Cx::linear`].
pub(super) fn permute_cols<C: Cx + ?Sized>(
    cx: &mut C,
    perm: &C::P,
    x: &Tangent<C::T>,
    how: MatOp,
) -> Result<Tangent<C::T>> {
    let xt = cx.adjoint(x, MatOp::Transpose)?;
    let y = permute_rows(cx, perm, &xt, how)?;
    cx.adjoint(&y, MatOp::Transpose)
}

/// A primal primitive with one input.
fn prim<C: Cx + ?Sized>(cx: &mut C, op: PrimOp, x: &C::P) -> Result<C::P> {
    cx.primal().single(Op::Prim(op), &[x])
}

/// The explicit factors `(L, U)` (m×k unit lower, k×n upper) of a packed
/// m×n `lu`.
///
/// # Errors
/// The primal face's.
pub(super) fn unpack<C: Cx + ?Sized>(cx: &mut C, lu: &C::P) -> Result<(C::P, C::P)> {
    let dims = dims_of(cx, lu);
    let (m, n) = (dims[0], dims[1]);
    let k = m.min(n);
    let left = if n == k { lu.clone() } else { cx.primal().slice(lu, [0, 0], [m, k])? };
    let strict = prim(cx, PrimOp::TriMask(TriMask { triangle: Triangle::Lower, diagonal: 0.0 }), &left)?;
    let eye = eye_like(cx, lu, k)?;
    let eye = if m == k { eye } else { prim(cx, PrimOp::Pad(Pad { start: [0, 0], size: [m, k] }), &eye)? };
    let lower = cx.primal().binary(BinaryOp::Add, &strict, &eye)?;
    let top = if m == k { lu.clone() } else { cx.primal().slice(lu, [0, 0], [k, n])? };
    let upper = prim(cx, PrimOp::TriMask(TriMask { triangle: Triangle::Upper, diagonal: 1.0 }), &top)?;
    Ok((lower, upper))
}

/// `dL U + L dU` for the packed tangent `dlu` of `lu = (L, U)`.
///
/// # Errors
/// As [`Cx::linear`].
pub(super) fn recombine<C: Cx + ?Sized>(
    cx: &mut C,
    lo: &C::P,
    up: &C::P,
    dlu: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let (l_dims, u_dims) = (dims_of(cx, lo), dims_of(cx, up));
    let (m, k, n) = (l_dims[0], l_dims[1], u_dims[1]);
    let left = if n == k { dlu.clone() } else { cx.slice(dlu, [0, 0], [m, k])? };
    let dl = cx.tri_mask(&left, Triangle::Lower, 0.0)?;
    let top = if m == k { dlu.clone() } else { cx.slice(dlu, [0, 0], [k, n])? };
    let du = cx.tri_mask(&top, Triangle::Upper, 1.0)?;
    let a = cx.matmul(t(&dl), MatOp::Identity, p(up), MatOp::Identity)?;
    let b = cx.matmul(p(lo), MatOp::Identity, t(&du), MatOp::Identity)?;
    cx.add(&a, &b)
}

/// `(dL, dU)`: the tangents of the two factors.
pub(super) type FactorTangents<T> = (Tangent<T>, Tangent<T>);

/// `(dL, dU)` of `P A = L U` (L m×k, U k×n) given `b` = P dA (see the module
/// docs).
///
/// # Errors
/// As [`Cx::linear`]; the primal face's.
pub(super) fn factor_tangent<C: Cx + ?Sized>(
    cx: &mut C,
    lo: &C::P,
    up: &C::P,
    b: &Tangent<C::T>,
) -> Result<FactorTangents<C::T>> {
    if !is_value(b) {
        return Ok((b.clone(), b.clone()));
    }
    let (l_dims, u_dims) = (dims_of(cx, lo), dims_of(cx, up));
    let (m, k, n) = (l_dims[0], l_dims[1], u_dims[1]);
    let l1 = if m == k { lo.clone() } else { cx.primal().slice(lo, [0, 0], [k, k])? };
    let u1 = if n == k { up.clone() } else { cx.primal().slice(up, [0, 0], [k, k])? };
    let lower = TriangularSolveOptions::default().triangle(Triangle::Lower).diagonal(Diagonal::Unit);
    let upper_right = TriangularSolveOptions::default().triangle(Triangle::Upper).side(Side::Right);
    // L₁⁻¹ B[:k, :], then K = (L₁⁻¹ B₁) U₁⁻¹: a zero last pivot reaches
    // only K's last column, which tril(K, −1) drops (`PivotCheck::Off`).
    let propagate = upper_right.pivot_check(PivotCheck::Off);
    let b_top = if m == k { b.clone() } else { cx.slice(b, [0, 0], [k, n])? };
    let linv_b = cx.tri_solve(&l1, &b_top, lower)?;
    let linv_b1 = if n == k { linv_b.clone() } else { cx.slice(&linv_b, [0, 0], [k, k])? };
    let kk = cx.tri_solve(&u1, &linv_b1, propagate)?;
    let k_low = cx.tri_mask(&kk, Triangle::Lower, 0.0)?;
    let k_low_u = cx.matmul(t(&k_low), MatOp::Identity, p(up), MatOp::Identity)?;
    let du = cx.sub(&linv_b, &k_low_u)?;
    let dl1 = cx.matmul(p(&l1), MatOp::Identity, t(&k_low), MatOp::Identity)?;
    if m == k {
        return Ok((dl1, du));
    }
    // Tall: dL₂ = B₂ U₁⁻¹ − L₂ triu(K).
    let b2 = cx.slice(b, [k, 0], [m - k, n])?;
    let b2_uinv = cx.tri_solve(&u1, &b2, upper_right)?;
    let l2 = cx.primal().slice(lo, [k, 0], [m - k, k])?;
    let k_up = cx.tri_mask(&kk, Triangle::Upper, 1.0)?;
    let l2_k = cx.matmul(p(&l2), MatOp::Identity, t(&k_up), MatOp::Identity)?;
    let dl2 = cx.sub(&b2_uinv, &l2_k)?;
    let top = cx.pad(&dl1, [0, 0], [m, k])?;
    let bottom = cx.pad(&dl2, [k, 0], [m, k])?;
    Ok((cx.add(&top, &bottom)?, du))
}

/// `(dL, dU)` packed like `lu` (m×n): dL below the diagonal, dU on and above.
///
/// # Errors
/// As [`Cx::linear`].
pub(super) fn pack<C: Cx + ?Sized>(
    cx: &mut C,
    dims: [usize; 2],
    dl: &Tangent<C::T>,
    du: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let [m, n] = dims;
    let k = m.min(n);
    let dl = if n == k { dl.clone() } else { cx.pad(dl, [0, 0], [m, n])? };
    let du = if m == k { du.clone() } else { cx.pad(du, [0, 0], [m, n])? };
    cx.add(&dl, &du)
}

/// The packed tangent of `lu` (with row permutation `perm`) along `da`.
///
/// # Errors
/// As [`Cx::linear`]; the primal face's.
fn packed_tangent<C: Cx + ?Sized>(
    cx: &mut C,
    lu: &C::P,
    perm: &C::P,
    da: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    if !is_value(da) {
        return Ok(da.clone());
    }
    let dims = dims_of(cx, lu);
    let (lo, up) = unpack(cx, lu)?;
    let b = permute_rows(cx, perm, da, MatOp::Identity)?;
    let (dl, du) = factor_tangent(cx, &lo, &up, &b)?;
    pack(cx, [dims[0], dims[1]], &dl, &du)
}
