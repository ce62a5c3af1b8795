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
//!   A (one more factorization), by triangular solves. slogdet is not
//!   differentiable at a singular A (logabsdet = −∞, gradient A⁻ᴴ
//!   unbounded): there U has an exactly zero pivot, and the solve with U
//!   fails with `Singular` (reported as slogdet's, argument `a`); a
//!   numerically singular A gives the large gradient it has, or
//!   `OutOfRange` where that overflows.
//! * `adjugate`: d adj(A) through an SVD of A, exact at every A (a singular A
//!   included): see [`adjugate`].

use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::{Diagonal, LinalgOp, LuSolvePrepared, MatOp, SolveOptions, Triangle, TriangularSolveOptions};
use crate::prim::{BinaryOp, PrimOp, Spread, UnaryOp};
use crate::provider::Op;
use crate::shape::Shape;
use crate::Ops;

pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    if !matches!(dx[0], Tangent::Value(_)) {
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
        LinalgOp::Adjugate(_) => Ok(tangents([adjugate(cx, a, &dx[0])?])),
        _ => Ok(unsupported(op)),
    }
}

/// d adj(A) through A = U Σ Vᴴ, exact at every A (docs/ad-rules.md#determinants):
/// adj(A) = c · V adj(Σ) Uᴴ with c = det(U) det(Vᴴ), and adj is a
/// polynomial, so d adj(A) = c · V D Uᴴ with B = Uᴴ dA V and
/// D = diag(P diag(B)) − P∘B, P_ij = Π_{l≠i,j} σ_l (P_ii = 0) — the
/// derivative of adj at the diagonal Σ, which divides by nothing.
/// P_ij is the j-th diagonal entry of adj(Σ⁽ⁱ⁾), Σ⁽ⁱ⁾ = Σ with σ_i
/// replaced by 1: one batch of k diagonal adjugates.
fn adjugate<C: Cx + ?Sized>(cx: &mut C, a: &C::P, da: &Tangent<C::T>) -> Result<Tangent<C::T>> {
    let f = cx.primal();
    let meta = f.meta(a);
    let (dtype, dims) = (meta.dtype, meta.shape.dims());
    let (k, batch) = (dims[0], &dims[2..]);
    let svd = f.svd(a)?;
    // T[j, i] = σ_j off the diagonal, 1 on it.
    let mut core = heapless::Vec::new();
    let _ = core.push(k); // one of MAX_RANK ≥ 1 dims
    let rows = f.single(Op::Prim(PrimOp::Spread(Spread { core })), &[&svd.s])?;
    let by_row = f.adjoint(&rows, MatOp::Transpose)?;
    let sigma = f.diag_embed(&svd.s)?;
    let eye = f.eye(dtype.real(), k, batch)?;
    let off = f.binary(BinaryOp::Sub, &by_row, &sigma)?;
    let with_ones = f.binary(BinaryOp::Add, &off, &eye)?;
    let diagonals = f.diag_embed(&with_ones)?;
    let adj = f.adjugate(&diagonals)?;
    let p_full = f.diag_part(&adj)?;
    let p_diag = f.diag_part(&p_full)?;
    let p_diag = f.diag_embed(&p_diag)?;
    let mut pairs = f.binary(BinaryOp::Sub, &p_full, &p_diag)?;
    let v = f.adjoint(&svd.vh, MatOp::Adjoint)?;
    let c = {
        let du = f.det(&svd.u)?;
        let dv = f.det(&svd.vh)?;
        let c = f.binary(BinaryOp::Mul, &du, &dv)?;
        let mut core = heapless::Vec::new();
        let _ = core.extend_from_slice(&[k, k]); // two of MAX_RANK ≥ 2 dims
        f.single(Op::Prim(PrimOp::Spread(Spread { core })), &[&c])?
    };
    if dtype.is_complex() {
        pairs = f.unary(UnaryOp::ToComplex, &pairs)?;
    }
    let id = MatOp::Identity;
    let bu = cx.matmul(p(&svd.u), MatOp::Adjoint, t(da), id)?;
    let b = cx.matmul(t(&bu), id, p(&v), id)?;
    let diag = cx.diag_part(&b)?;
    let column = cx.reshape(&diag, Shape::from_parts(&[k, 1], batch)?.dims())?;
    let pb = cx.matmul(p(&pairs), id, t(&column), id)?;
    let pb = cx.reshape(&pb, Shape::from_parts(&[k], batch)?.dims())?;
    let pb = cx.diag_embed(&pb)?;
    let pbm = cx.mul(&pairs, &b)?;
    let d = cx.sub(&pb, &pbm)?;
    let vd = cx.matmul(p(&v), id, t(&d), id)?;
    let vdu = cx.matmul(t(&vd), id, p(&svd.u), MatOp::Adjoint)?;
    cx.mul(&c, &vdu)
}

/// A⁻ᵀ (primal) from a partial-pivot LU, A⁻¹ = U⁻¹ (L⁻¹ P): an exactly
/// zero pivot is the U solve's `Singular` error.
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
