//! Transposes of the solves in their right-hand side `b`, of the Fréchet
//! derivatives (`expm_frechet`, `expm_frechet_factored`, `logm_frechet`,
//! `sqrtm_frechet`, `funm_hermitian_frechet`) in their direction `e`, and of
//! `funm_hermitian_second` in `d`, under ⟨X, Y⟩ = Re tr(XᴴY).
//!
//! For x = op(A)⁻¹ b (or op(Q) b), ⟨x̄, op(A)⁻¹ b⟩ = ⟨op(A)⁻ᴴ x̄, b⟩, so
//! b̄ = (op(A)ᴴ)⁻¹ x̄: the same solve with the adjoint flag. Identity and
//! Adjoint swap. For Transpose, (Aᵀ)ᴴ = conj(A), which no flag expresses:
//! conj(A)⁻¹ x̄ = conj(A⁻¹ conj(x̄)), i.e. the Identity solve between two
//! conjugations of the cotangent (for real dtypes conj is the identity and
//! Transpose is Adjoint, so the conjugations are skipped). The right-sided
//! triangular solve x = b op(A)⁻¹ gives b̄ = x̄ (op(A)ᴴ)⁻¹ with the same
//! flags. The conjugations act on the cotangent, not on the factors, so no
//! provider's factor layout is assumed.

use super::{only, Coefs, Cotangents};
use crate::ad::linear::{p, t};
use crate::ad::rules::frechet_of;
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{Error, Result};
use crate::op::{
    ExpmFrechet, ExpmFrechetFactored, LinalgOp, LogmFrechet, MatOp, PivotCheck, SqrtmFrechet,
    TriangularSolveOptions,
};
use crate::prim::UnaryOp;
use crate::provider::Op;
use crate::tensor::TensorMeta;
use crate::Ops;

/// The cotangent of the right-hand side `b` (at `pos`) of a solve given the
/// (defined, nonzero) cotangent `ct` of its solution.
pub(super) fn transpose<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    linalg: &LinalgOp,
    coefs: &Coefs<'_, '_, C::P>,
    metas: &[TensorMeta],
    pos: usize,
    ct: &Tangent<C::T>,
) -> Result<Cotangents<C::T>> {
    let complex = metas[pos].dtype.is_complex();
    let g = match linalg {
        LinalgOp::TriangularSolve(s) => {
            let a = coefs.at(op, 0)?;
            let (how, conj) = adjoint_of(s.0.op, complex);
            // The transposed solve meets a zero pivot first, with nothing
            // to mask what it reaches: never `Off`.
            let pivot_check =
                if s.0.pivot_check == PivotCheck::Off { PivotCheck::Zero } else { s.0.pivot_check };
            let options = TriangularSolveOptions { op: how, pivot_check, ..s.0 };
            sandwich(cx, conj, ct, |cx, x| cx.tri_solve(a, x, options))?
        }
        LinalgOp::LuSolvePrepared(s) => {
            let (lu, perm) = (coefs.at(op, 0)?, coefs.at(op, 1)?);
            let (how, conj) = adjoint_of(s.0, complex);
            sandwich(cx, conj, ct, |cx, x| cx.lu_solve(lu, perm, x, how, s.1))?
        }
        LinalgOp::FullPivLuSolvePrepared(s) => {
            let (lu, rows, cols) = (coefs.at(op, 0)?, coefs.at(op, 1)?, coefs.at(op, 2)?);
            let (how, conj) = adjoint_of(s.0, complex);
            sandwich(cx, conj, ct, |cx, x| cx.full_piv_lu_solve(lu, rows, cols, x, how, s.1))?
        }
        LinalgOp::HouseholderQrApply(s) => {
            let (h, tau) = (coefs.at(op, 0)?, coefs.at(op, 1)?);
            let (how, conj) = adjoint_of(s.0, complex);
            sandwich(cx, conj, ct, |cx, x| cx.householder_apply(h, tau, x, how))?
        }
        LinalgOp::ExpmFrechet(ExpmFrechet(flag))
        | LinalgOp::LogmFrechet(LogmFrechet(flag))
        | LinalgOp::SqrtmFrechet(SqrtmFrechet(flag)) => {
            // ⟨Ē, L_f(X, E)⟩ = ⟨L_f(Xᴴ, Ē), E⟩ (f(Xᴴ) = f(X)ᴴ), the same flags as a solve.
            let a = coefs.at(op, 0)?;
            let (how, conj) = adjoint_of(*flag, complex);
            let transposed = frechet_of(linalg, how).map(|(f, _)| Op::Linalg(f));
            let transposed = transposed.ok_or(Error::UnsupportedDerivative { op: op.name(), output: "e" })?;
            sandwich(cx, conj, ct, |cx, x| cx.lin(transposed, &[p(a), t(x)]))?
        }
        LinalgOp::ExpmFrechetFactored(ExpmFrechetFactored(flag)) => {
            let (a, terms, piv) = (coefs.at(op, 0)?, coefs.at(op, 1)?, coefs.at(op, 2)?);
            let (how, conj) = adjoint_of(*flag, complex);
            let transposed = Op::Linalg(LinalgOp::ExpmFrechetFactored(ExpmFrechetFactored(how)));
            sandwich(cx, conj, ct, |cx, x| cx.lin(transposed, &[p(a), p(terms), p(piv), t(x)]))?
        }
        LinalgOp::FunmHermitianFrechet(_) => {
            // V (Γ∘(Vᴴ E V)) Vᴴ with Γ real is its own adjoint.
            let (a, v, w, gamma) = (coefs.at(op, 0)?, coefs.at(op, 1)?, coefs.at(op, 2)?, coefs.at(op, 3)?);
            cx.lin(op.clone(), &[p(a), p(v), p(w), p(gamma), t(ct)])?
        }
        LinalgOp::FunmHermitianSecond(_) => {
            // ⟨G, S(E, D)⟩ = ⟨S(Eᴴ, G), D⟩: the second divided differences
            // are symmetric in their three arguments.
            let (v, w, gamma, e) = (coefs.at(op, 0)?, coefs.at(op, 1)?, coefs.at(op, 2)?, coefs.at(op, 3)?);
            let e = cx.primal().adjoint(e, MatOp::Adjoint)?;
            cx.lin(op.clone(), &[p(v), p(w), p(gamma), p(&e), t(ct)])?
        }
        _ => {
            let name = op.input_names().get(pos).copied().unwrap_or("?");
            return Err(Error::UnsupportedDerivative { op: op.name(), output: name });
        }
    };
    Ok(only(metas.len(), pos, g))
}

/// op(M)ᴴ for M = A (or A⁻¹) as (flag, conjugate around it?): Adjoint,
/// Identity, or conj(·) of Identity for complex Transpose.
fn adjoint_of(how: MatOp, complex: bool) -> (MatOp, bool) {
    match how {
        MatOp::Identity => (MatOp::Adjoint, false),
        MatOp::Adjoint => (MatOp::Identity, false),
        MatOp::Transpose => (MatOp::Identity, complex),
    }
}

/// `solve(ct)`, or `conj(solve(conj(ct)))` when `conj`.
fn sandwich<C: Cx + ?Sized>(
    cx: &mut C,
    conj: bool,
    ct: &Tangent<C::T>,
    solve: impl FnOnce(&mut C, &Tangent<C::T>) -> Result<Tangent<C::T>>,
) -> Result<Tangent<C::T>> {
    if !conj {
        return solve(cx, ct);
    }
    let c = cx.unary(UnaryOp::Conj, ct)?;
    let y = solve(cx, &c)?;
    cx.unary(UnaryOp::Conj, &y)
}
