//! General eigendecomposition A V = V diag(λ) (`Eig`, `EigVals`); outputs
//! are complex even for real A, so a real tangent dA is made complex first.
//!
//! With dP = V⁻¹ dA V (docs/ad-rules.md#eig), V⁻¹ applied through an LU
//! factorization of the primal V (`LuFactor`) and the prepared solve, which
//! is linear in its right-hand side:
//! * dλ = diag(dP);
//! * dV₀ = V (F∘dP), F_ij = inv_δ(λ_j − λ_i) off the diagonal (complex;
//!   δ = 10·n·eps·max|λ| only guards exact ties, where the eigenvectors are
//!   not differentiable anyway) — the tangent with no component along v_i;
//! * the forward's gauge (unit 2-norm columns whose largest-magnitude entry,
//!   at row r_i, is real and positive) fixes that component:
//!   dV = dV₀ + V diag(d), d_i = −Re(v_iᴴ dV₀_i) − i·Im(dV₀_{r_i,i} / V_{r_i,i}).
//!   The real part keeps Re(v_iᴴ dv_i) = 0 (unit norm, as ‖v_i‖ = 1); the
//!   imaginary part keeps Im dV_{r_i,i} = 0 (the pivot stays real) and does
//!   not disturb the norm.
//!
//! `EigVals` has no V among its outputs: its rule computes the primal
//! eigenvectors again with a full `Eig` (recorded in the forward program
//! when traced: roughly the cost of the values-only forward again, plus the
//! vectors) and forms the left eigenvectors V⁻ᵀ once on the primal side
//! (LU of V, then a solve with the identity, O(n³)). Then
//! dλ_i = Σ_r (V⁻ᵀ)_ri (dA V)_ri: one tangent matmul and an elementwise
//! product per tangent.
//!
//! Caveat (both ops): λ is sorted by (real part, imaginary part); where two
//! eigenvalues' real parts agree only up to rounding the order is not
//! smooth and neither is λ as a function of A. `Eig` and `EigVals` may even
//! order such eigenvalues differently (`host-cpu` kernel docs), so the
//! `EigVals` rule assumes a spectrum whose order both runs agree on.

use super::eigh::{pivot_phase, scale_columns, tie_cutoff};
use super::tie_checked;
use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{Error, Result};
use crate::op::internal::{Cut, GaugeOf, Part, TangentTieCheck};
use crate::op::{LinalgOp, LuFactor, LuSolvePrepared, MatOp, SolveOptions};
use crate::prim::{Pair, PairInv, Regularize, UnaryOp};
use crate::provider::Op;
use crate::Ops;

/// Output tangents of `Eig` (dλ, dV) or `EigVals` (dλ).
pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    let da = if cx.primal().meta(a).dtype.is_complex() {
        dx[0].clone()
    } else {
        cx.unary(UnaryOp::ToComplex, &dx[0])?
    };
    match l {
        LinalgOp::Eig(_) => {
            let w = primals.output(op, 0)?;
            let v = primals.output(op, 1)?;
            let (lu, perm) = lu_factor(cx, v)?;
            let dav = cx.matmul(t(&da), MatOp::Identity, p(v), MatOp::Identity)?;
            let dp = cx.lu_solve(&lu, &perm, &dav, MatOp::Identity, SolveOptions::raw())?;
            let dw = cx.diag_part(&dp)?;
            let dv = vectors(cx, w, v, &dp)?;
            Ok(tangents([dw, dv]))
        }
        LinalgOp::EigVals(_) => {
            let v = cx.primal().eig(a)?.v;
            let left = left_vectors(cx, &v)?;
            let dav = cx.matmul(t(&da), MatOp::Identity, p(&v), MatOp::Identity)?;
            let prod = cx.mul(&left, &dav)?;
            Ok(tangents([cx.sum(&prod, 1)?]))
        }
        _ => Ok(unsupported(op)),
    }
}

/// The partial-pivot LU factors (`lu`, `perm`) of the primal V.
fn lu_factor<C: Cx + ?Sized>(cx: &mut C, v: &C::P) -> Result<(C::P, C::P)> {
    let op = Op::Linalg(LinalgOp::LuFactor(LuFactor));
    let name = op.name();
    let mut outs = cx.primal().apply(op, &[v])?.into_iter();
    let missing =
        |arg| Error::Buffer { op: name, arg, why: "was not produced by the face", needed: 1, got: 0 };
    let lu = outs.next().flatten().ok_or_else(|| missing("lu"))?;
    let perm = outs.next().flatten().ok_or_else(|| missing("perm"))?;
    Ok((lu, perm))
}

/// V⁻ᵀ (its columns are the left eigenvectors, scaled so that uᵢᵀvᵢ = 1),
/// from the LU factors of V and a transposed solve with the identity.
fn left_vectors<C: Cx + ?Sized>(cx: &mut C, v: &C::P) -> Result<C::P> {
    let (lu, perm) = lu_factor(cx, v)?;
    let meta = cx.primal().meta(v);
    let dims = meta.shape.dims();
    let n = dims.first().copied().unwrap_or(0);
    let eye = cx.primal().eye(meta.dtype, n, dims.get(2..).unwrap_or(&[]))?;
    let solve = Op::Linalg(LinalgOp::LuSolvePrepared(LuSolvePrepared(MatOp::Transpose, SolveOptions::raw())));
    cx.primal().single(solve, &[&lu, &perm, &eye])
}

/// dV = V (F∘dP) + V diag(d) in the forward's gauge (see the module docs).
fn vectors<C: Cx + ?Sized>(cx: &mut C, w: &C::P, v: &C::P, dp: &Tangent<C::T>) -> Result<Tangent<C::T>> {
    let meta = cx.primal().meta(w);
    let n = meta.shape.dims().first().copied().unwrap_or(0);
    let relative = tie_cutoff(meta.dtype, n);
    let check = TangentTieCheck { of: GaugeOf::Eig, cut: Cut::Tie, relative, part: Part::Whole };
    let dp = tie_checked(cx, check, w, dp)?;
    let f =
        cx.primal().pair_inv(w, PairInv { pair: Pair::Diff, regularize: Regularize::Cutoff { relative } })?;
    let g = cx.mul(&f, &dp)?;
    let dv0 = cx.matmul(p(v), MatOp::Identity, t(&g), MatOp::Identity)?;
    // −Re(v_iᴴ dV₀_i), made complex.
    let vc = cx.primal().unary(UnaryOp::Conj, v)?;
    let along = cx.mul(&vc, &dv0)?;
    let along = cx.sum(&along, 1)?;
    let along = cx.unary(UnaryOp::Real, &along)?;
    let along = cx.unary(UnaryOp::ToComplex, &along)?;
    // i·Im(dV₀_{r_i,i} / V_{r_i,i}).
    let phase = pivot_phase(cx, v, &dv0)?;
    let i_phase = cx.unary(UnaryOp::MulI, &phase)?;
    let d = cx.add(&along, &i_phase)?;
    let fix = scale_columns(cx, v, &d)?;
    cx.sub(&dv0, &fix)
}
