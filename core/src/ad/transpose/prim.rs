//! Transposes of the linear array primitives, under ⟨X, Y⟩ = Re tr(XᴴY).
//!
//! * Matmul C = op_a(A) op_b(B), tangent in A: Ā = op_a*(C̄ op_b(B)ᴴ), where
//!   op_a* undoes op_a under the inner product (Identity: G, Adjoint: Gᴴ,
//!   Transpose: Gᵀ). Written as one product: Ā = C̄ op_b(B)ᴴ,
//!   op_b(B) C̄ᴴ or conj(op_b(B)) C̄ᵀ. Tangent in B likewise: B̄ =
//!   op_a(A)ᴴ C̄, C̄ᴴ op_a(A) or C̄ᵀ conj(op_a(A)). The conjugates that no
//!   flag expresses (op(X)ᴴ with op = Transpose is conj(X); conj(op(X))
//!   with op = Identity is conj(X)) are taken of the primal coefficient.
//! * Elementwise: x̄ = conj(p) ∘ ȳ for y = p ∘ x; x̄ = ȳ / conj(p) for
//!   y = x / p; Add gives (ȳ, ȳ), Sub (ȳ, −ȳ); Scale(f) is self-adjoint.
//! * Unary: Neg, Conj, Copy are self-adjoint; Real (complex → real) goes
//!   back by ToComplex (a copy for real input); Imag (complex → real) by
//!   i·ToComplex (zero for real input, where Imag is the zero map);
//!   ToComplex by Real (a copy for complex input); MulI by −MulI.
//! * Adjoint(op) and TriMask are self-adjoint; DiagPart ↔ DiagEmbed (a
//!   rectangular input gets the embedded diagonal padded to m×n);
//!   Reduce Sum ↔ Spread; Slice ↔ Pad; Reshape back to the input dims.
//! * ScaleCols/ScaleRows in `a`: ā = ȳ diag(conj v) (or diag(conj v) ȳ).

use super::{only, Coefs, Cotangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::{ArgKind, Error, Result};
use crate::op::MatOp;
use crate::prim::{BinaryOp, PrimOp, UnaryOp};
use crate::provider::Op;
use crate::tensor::TensorMeta;
use crate::Ops;

/// The cotangents of `prim`'s tangent inputs (the first at `pos`) given
/// the (defined, nonzero) cotangent `ct` of its output.
pub(super) fn transpose<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    prim: &PrimOp,
    coefs: &Coefs<'_, '_, C::P>,
    metas: &[TensorMeta],
    pos: usize,
    ct: &Tangent<C::T>,
) -> Result<Cotangents<C::T>> {
    let x = &metas[pos];
    let g = match prim {
        PrimOp::Matmul(m) => {
            let other = coefs.at(op, 1 - pos)?;
            let complex = x.dtype.is_complex();
            if pos == 0 {
                matmul_a(cx, m.a, other, m.b, ct, complex)?
            } else {
                matmul_b(cx, other, m.a, m.b, ct, complex)?
            }
        }
        PrimOp::Binary(b) => match b.0 {
            BinaryOp::Add => return Ok([ct.clone(), ct.clone()].into_iter().collect()),
            BinaryOp::Sub => return Ok([ct.clone(), cx.neg(ct)?].into_iter().collect()),
            BinaryOp::Mul => {
                let coef = conj_if(cx, coefs.at(op, 1 - pos)?, x.dtype.is_complex())?;
                cx.mul(&coef, ct)?
            }
            BinaryOp::Div => {
                let coef = conj_if(cx, coefs.at(op, 1)?, x.dtype.is_complex())?;
                cx.div(ct, &coef)?
            }
        },
        PrimOp::Unary(u) => unary(cx, u.0, x, ct)?,
        PrimOp::Scale(s) => cx.scale(ct, s.0)?,
        PrimOp::Adjoint(a) => cx.adjoint(ct, a.0)?,
        PrimOp::DiagPart(_) => {
            let [m, n] = matrix(op, x)?;
            let d = cx.diag_embed(ct)?;
            if m == n {
                d
            } else {
                cx.pad(&d, [0, 0], [m, n])?
            }
        }
        PrimOp::DiagEmbed(_) => cx.diag_part(ct)?,
        PrimOp::TriMask(mask) => cx.tri_mask(ct, mask.triangle, mask.diagonal)?,
        PrimOp::ScaleCols(_) | PrimOp::ScaleRows(_) => {
            let v = coefs.at(op, 1)?;
            let complex = cx.primal().meta(v).dtype.is_complex();
            let v = conj_if(cx, v, complex)?;
            if matches!(prim, PrimOp::ScaleCols(_)) {
                cx.scale_cols(ct, &v)?
            } else {
                cx.scale_rows(ct, &v)?
            }
        }
        PrimOp::Reduce(r) => {
            let dims = x.shape.dims();
            let core = dims.get(..r.core_rank).ok_or_else(|| rank_error(op, x, ArgKind::Matrix))?;
            cx.spread(ct, core)?
        }
        PrimOp::Spread(s) => cx.sum(ct, s.core.len())?,
        PrimOp::Reshape(_) => cx.reshape(ct, x.shape.dims())?,
        PrimOp::Slice(s) => cx.pad(ct, s.start, matrix(op, x)?)?,
        PrimOp::Pad(s) => cx.slice(ct, s.start, matrix(op, x)?)?,
        _ => {
            let name = op.input_names().get(pos).copied().unwrap_or("?");
            return Err(Error::UnsupportedDerivative { op: op.name(), output: name });
        }
    };
    Ok(only(metas.len(), pos, g))
}

/// Ā for C = op_a(A) op_b(B) with B primal.
fn matmul_a<C: Cx + ?Sized>(
    cx: &mut C,
    op_a: MatOp,
    b: &C::P,
    op_b: MatOp,
    ct: &Tangent<C::T>,
    complex: bool,
) -> Result<Tangent<C::T>> {
    match op_a {
        // Ā = C̄ op_b(B)ᴴ.
        MatOp::Identity => {
            let (conj, how) = herm(op_b);
            let b = conj_if(cx, b, conj && complex)?;
            cx.matmul(t(ct), MatOp::Identity, p(&b), how)
        }
        // Ā = (C̄ op_b(B)ᴴ)ᴴ = op_b(B) C̄ᴴ.
        MatOp::Adjoint => cx.matmul(p(b), op_b, t(ct), MatOp::Adjoint),
        // Ā = (C̄ op_b(B)ᴴ)ᵀ = conj(op_b(B)) C̄ᵀ.
        MatOp::Transpose => {
            let (conj, how) = conj_of(op_b);
            let b = conj_if(cx, b, conj && complex)?;
            cx.matmul(p(&b), how, t(ct), MatOp::Transpose)
        }
    }
}

/// B̄ for C = op_a(A) op_b(B) with A primal.
fn matmul_b<C: Cx + ?Sized>(
    cx: &mut C,
    a: &C::P,
    op_a: MatOp,
    op_b: MatOp,
    ct: &Tangent<C::T>,
    complex: bool,
) -> Result<Tangent<C::T>> {
    match op_b {
        // B̄ = op_a(A)ᴴ C̄.
        MatOp::Identity => {
            let (conj, how) = herm(op_a);
            let a = conj_if(cx, a, conj && complex)?;
            cx.matmul(p(&a), how, t(ct), MatOp::Identity)
        }
        // B̄ = (op_a(A)ᴴ C̄)ᴴ = C̄ᴴ op_a(A).
        MatOp::Adjoint => cx.matmul(t(ct), MatOp::Adjoint, p(a), op_a),
        // B̄ = (op_a(A)ᴴ C̄)ᵀ = C̄ᵀ conj(op_a(A)).
        MatOp::Transpose => {
            let (conj, how) = conj_of(op_a);
            let a = conj_if(cx, a, conj && complex)?;
            cx.matmul(t(ct), MatOp::Transpose, p(&a), how)
        }
    }
}

/// op(X)ᴴ as (conjugate X first?, flag): Xᴴ, X, or conj(X) for
/// Identity, Adjoint, Transpose.
fn herm(op: MatOp) -> (bool, MatOp) {
    match op {
        MatOp::Identity => (false, MatOp::Adjoint),
        MatOp::Adjoint => (false, MatOp::Identity),
        MatOp::Transpose => (true, MatOp::Identity),
    }
}

/// conj(op(X)) as (conjugate X first?, flag): conj(X), Xᵀ, or Xᴴ for
/// Identity, Adjoint, Transpose.
fn conj_of(op: MatOp) -> (bool, MatOp) {
    match op {
        MatOp::Identity => (true, MatOp::Identity),
        MatOp::Adjoint => (false, MatOp::Transpose),
        MatOp::Transpose => (false, MatOp::Adjoint),
    }
}

/// conj(x) on the primal face when `conj` (complex coefficients), else `x`.
fn conj_if<C: Cx + ?Sized>(cx: &mut C, x: &C::P, conj: bool) -> Result<C::P> {
    if conj {
        cx.primal().unary(UnaryOp::Conj, x)
    } else {
        Ok(x.clone())
    }
}

/// The transpose of a linear elementwise map `how` applied to `x`.
fn unary<C: Cx + ?Sized>(
    cx: &mut C,
    how: UnaryOp,
    x: &TensorMeta,
    ct: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let complex = x.dtype.is_complex();
    match how {
        UnaryOp::Neg | UnaryOp::Conj | UnaryOp::Copy => cx.unary(how, ct),
        // ⟨ȳ, Re x⟩ = ⟨ȳ + 0i, x⟩.
        UnaryOp::Real if complex => cx.unary(UnaryOp::ToComplex, ct),
        UnaryOp::Real => cx.unary(UnaryOp::Copy, ct),
        // ⟨ȳ, Im x⟩ = Re(ȳ·(−i)·x) = ⟨i ȳ, x⟩.
        UnaryOp::Imag if complex => {
            let z = cx.unary(UnaryOp::ToComplex, ct)?;
            cx.unary(UnaryOp::MulI, &z)
        }
        UnaryOp::Imag => Ok(Tangent::Zero),
        // ⟨ȳ, x + 0i⟩ = ⟨Re ȳ, x⟩ (a copy for complex input).
        UnaryOp::ToComplex if complex => cx.unary(UnaryOp::Copy, ct),
        UnaryOp::ToComplex => cx.unary(UnaryOp::Real, ct),
        // ⟨ȳ, i x⟩ = Re(conj(ȳ) i x) = ⟨−i ȳ, x⟩.
        UnaryOp::MulI => {
            let z = cx.unary(UnaryOp::MulI, ct)?;
            cx.neg(&z)
        }
        _ => Err(Error::UnsupportedDerivative { op: how.name(), output: "x" }),
    }
}

/// `[rows, cols]` of a matrix input.
fn matrix(op: &Op, x: &TensorMeta) -> Result<[usize; 2]> {
    match x.shape.dims() {
        [m, n, ..] => Ok([*m, *n]),
        _ => Err(rank_error(op, x, ArgKind::Matrix)),
    }
}

/// An input with fewer dims than the op needs.
fn rank_error(op: &Op, x: &TensorMeta, expected: ArgKind) -> Error {
    Error::Rank {
        op: op.name(),
        arg: op.input_names().first().copied().unwrap_or("x"),
        expected,
        shape: x.shape.clone(),
    }
}
