//! Determinants (docs/ad-rules.md#determinants).
//!
//! * `det`: d det = tr(adj(A) dA) = Σ_ij adj(A)_ji dA_ij — complex-linear,
//!   so the coefficient is adj(A)ᵀ, not adj(A)ᴴ. The adjugate is its own op
//!   ([`Adjugate`](crate::op::Adjugate)), finite at every matrix: the
//!   derivative is exact at a singular A of corank 1 (a nonzero adjugate) and
//!   zero at corank ≥ 2, never formed through A⁻¹.
//! * `slogdet`: with t = tr(A⁻¹ dA) = Σ_ij (A⁻ᵀ)_ij dA_ij,
//!   d logabsdet = Re t and d sign = i Im(t) · sign (zero for real A: the
//!   sign is locally constant). A⁻¹ = U⁻¹ (L⁻¹ P) from a partial-pivot LU of
//!   A (one more factorization), by triangular solves, which do not check for
//!   singularity. slogdet is not differentiable at a singular A
//!   (logabsdet = −∞, gradient A⁻ᴴ unbounded); a rule cannot inspect values
//!   (its primal face may be a tracer), so there the tangent is non-finite
//!   (infinities or NaN) rather than an error.
//! * `adjugate`: no derivative rule (unsupported).

use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::{Diagonal, LinalgOp, LuSolvePrepared, MatOp, SolveOptions, Triangle, TriangularSolveOptions};
use crate::prim::UnaryOp;
use crate::provider::Op;
use crate::Ops;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    if !matches!(dx[0], Tangent::Value(_)) && !matches!(l, LinalgOp::Adjugate(_)) {
        // An undefined input tangent: no primal work (`jvp` already answered
        // the all-zero case).
        return Ok((0..op.output_names().len()).map(|_| dx[0].clone()).collect());
    }
    match l {
        LinalgOp::Det(_) => {
            let adj = cx.primal().adjugate(a)?;
            let coef = cx.primal().adjoint(&adj, MatOp::Transpose)?;
            let terms = cx.mul(&coef, &dx[0])?;
            Ok(tangents([cx.sum(&terms, 2)?]))
        }
        LinalgOp::Slogdet(_) => {
            let sign = primals.output(op, 0)?;
            let inv_t = inverse_transpose(cx, a)?;
            let terms = cx.mul(&inv_t, &dx[0])?;
            let trace = cx.sum(&terms, 2)?;
            if !cx.primal().meta(a).dtype.is_complex() {
                return Ok(tangents([Tangent::Zero, trace]));
            }
            let log = cx.unary(UnaryOp::Real, &trace)?;
            let im = cx.unary(UnaryOp::Imag, &trace)?;
            let im = cx.unary(UnaryOp::ToComplex, &im)?;
            let phase = cx.unary(UnaryOp::MulI, &im)?;
            Ok(tangents([cx.mul(sign, &phase)?, log]))
        }
        _ => Ok(unsupported(op)),
    }
}

/// A⁻ᵀ (primal) from a partial-pivot LU, A⁻¹ = U⁻¹ (L⁻¹ P): the U solve
/// comes last, so a zero pivot gives infinities instead of failing a later
/// solve's finiteness check.
///
/// # Errors
/// The primal face's.
fn inverse_transpose<C: Cx + ?Sized>(cx: &mut C, a: &C::P) -> Result<C::P> {
    let meta = cx.primal().meta(a);
    let dims = meta.shape.dims();
    let factors = cx.primal().lu(a)?;
    let eye = cx.primal().eye(meta.dtype, dims[0], &dims[2..])?;
    // P as the LU solve with identity factors (P A = I: A⁻¹ = P).
    let solve = Op::Linalg(LinalgOp::LuSolvePrepared(LuSolvePrepared(MatOp::Identity, SolveOptions::raw())));
    let perm = cx.primal().single(solve, &[&eye, &factors.perm, &eye])?;
    let lower = TriangularSolveOptions::default().triangle(Triangle::Lower).diagonal(Diagonal::Unit);
    let upper = TriangularSolveOptions::default().triangle(Triangle::Upper);
    let y = cx.primal().triangular_solve(&factors.l, &perm, lower)?;
    let inv = cx.primal().triangular_solve(&factors.u, &y, upper)?;
    cx.primal().adjoint(&inv, MatOp::Transpose)
}
