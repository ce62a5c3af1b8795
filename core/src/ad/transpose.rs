//! Transpose rules: for an op recorded by a JVP rule (linear in its tangent
//! arguments), the map from the cotangent of its output to the cotangents of
//! its tangent arguments, under the real inner product ⟨X, Y⟩ = Re tr(XᴴY):
//! ⟨Tᵀ(ct), t⟩ = ⟨ct, T(t)⟩. The transposed ops are recorded through the
//! same [`Cx`], so a reverse pass is itself a linear program.
//!
//! Which positions may hold a tangent is fixed per op ([`Linearity`]): the
//! linear primitives in their one input, Matmul and Mul in either argument
//! (never both), Div in its numerator, Add/Sub in both, row/column scaling in
//! `a`, and the solves with prepared factors in their right-hand side. A
//! tangent anywhere else is an [`Error::UnsupportedDerivative`], whatever the
//! cotangent, so a rule that records a nonlinear map fails on every run.
//!
//! The rules themselves live in [`prim`] (array primitives) and [`solve`]
//! (triangular, LU and Householder solves).

mod prim;
mod solve;

use super::cx::{Cx, Tangent};
use crate::error::{DTypeReq, Error, Result};
use crate::op::internal::InternalOp;
use crate::op::{LinalgOp, MAX_INPUTS};
use crate::prim::{BinaryOp, PrimOp, ReduceOp};
use crate::provider::Op;
use crate::tensor::TensorMeta;

/// One input of a recorded linear op, as its transpose sees it.
pub enum TArg<'a, P> {
    /// A primal coefficient.
    P(&'a P),
    /// A tangent argument, of this dtype and shape.
    T(&'a TensorMeta),
}

/// One cotangent per input of an op (zero for primal inputs).
pub type Cotangents<T> = heapless::Vec<Tangent<T>, MAX_INPUTS>;

/// The cotangents of `op`'s tangent inputs given the cotangent `ct` of its
/// (single) output.
///
/// A zero `ct` gives zero cotangents and an undefined one undefined
/// cotangents for every tangent input, without recording anything; primal
/// inputs always get [`Tangent::Zero`].
///
/// # Errors
/// [`Error::UnsupportedDerivative`] naming the op and argument when `op`
/// is not linear in that argument; [`Error::Arity`] for a wrong input count;
/// the op's shape/dtype errors for inputs it cannot take; a shape or dtype
/// error naming `cotangent` when `ct` does not match the op's output; the
/// errors of the recorded ops.
pub fn transpose<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    inputs: &[TArg<'_, C::P>],
    ct: &Tangent<C::T>,
) -> Result<Cotangents<C::T>> {
    let pos = check_linear(op, inputs)?;
    let metas = input_metas(cx, op, inputs)?;
    let refs: heapless::Vec<&TensorMeta, MAX_INPUTS> = metas.iter().collect();
    let out = op.infer(&refs)?.into_iter().next().flatten();
    let value = match ct {
        Tangent::Value(v) => v,
        Tangent::Zero => return Ok(inputs.iter().map(|_| Tangent::Zero).collect()),
        Tangent::Undefined(e) => {
            return Ok(inputs
                .iter()
                .map(|a| match a {
                    TArg::T(_) => Tangent::Undefined(e.clone()),
                    TArg::P(_) => Tangent::Zero,
                })
                .collect())
        }
    };
    check_cotangent(op, out.as_ref(), &cx.tangent_meta(value))?;
    let primals = Coefs { inputs };
    match op {
        Op::Prim(p) => prim::transpose(cx, op, p, &primals, &metas, pos, ct),
        Op::Linalg(l) => solve::transpose(cx, op, l, &primals, &metas, pos, ct),
        // The identity on the coupling (reverse mode's gauge checks see the
        // cotangent instead); the spectrum is primal.
        Op::Internal(InternalOp::TangentTieCheck(_)) => Ok([Tangent::Zero, ct.clone()].into_iter().collect()),
        // Linear in no input: `check_linear` rejected it above.
        Op::Internal(_) => Err(Error::UnsupportedDerivative { op: op.name(), output: "?" }),
    }
}

/// Where an op may hold tangents.
enum Linearity {
    /// Exactly one tangent, at one of these positions; the others primal.
    One(&'static [usize]),
    /// Every input a tangent (sums and differences).
    All,
    /// Linear in no input: no transpose.
    Nowhere,
}

/// The positions `op` is linear in (the ones [`Lin`](super::Lin) records
/// tangents at).
fn linearity(op: &Op) -> Linearity {
    use Linearity::{All, Nowhere, One};
    match op {
        Op::Prim(p) => match p {
            PrimOp::Matmul(_) => One(&[0, 1]),
            PrimOp::Binary(b) => match b.0 {
                BinaryOp::Add | BinaryOp::Sub => All,
                BinaryOp::Mul => One(&[0, 1]),
                BinaryOp::Div => One(&[0]),
            },
            PrimOp::Unary(u) if u.0.is_linear() => One(&[0]),
            PrimOp::Reduce(r) if r.op == ReduceOp::Sum => One(&[0]),
            PrimOp::Scale(_)
            | PrimOp::Adjoint(_)
            | PrimOp::DiagPart(_)
            | PrimOp::DiagEmbed(_)
            | PrimOp::TriMask(_)
            | PrimOp::ScaleCols(_)
            | PrimOp::ScaleRows(_)
            | PrimOp::Reshape(_)
            | PrimOp::Spread(_)
            | PrimOp::Slice(_)
            | PrimOp::Pad(_) => One(&[0]),
            _ => Nowhere,
        },
        Op::Linalg(l) => match l {
            LinalgOp::TriangularSolve(_)
            | LinalgOp::ExpmFrechet(_)
            | LinalgOp::LogmFrechet(_)
            | LinalgOp::SqrtmFrechet(_) => One(&[1]),
            LinalgOp::LuSolvePrepared(_) | LinalgOp::HouseholderQrApply(_) => One(&[2]),
            LinalgOp::FunmHermitianFrechet(_) | LinalgOp::FunmHermitianSecond(_) => One(&[4]),
            LinalgOp::FullPivLuSolvePrepared(_) | LinalgOp::ExpmFrechetFactored(_) => One(&[3]),
            _ => Nowhere,
        },
        // Forward mode's tie check passes its coupling through.
        Op::Internal(InternalOp::TangentTieCheck(_)) => One(&[1]),
        Op::Internal(_) => Nowhere,
    }
}

/// Checks that `op` is linear in exactly the tangent inputs; returns the
/// position of the (first) tangent.
fn check_linear<P>(op: &Op, inputs: &[TArg<'_, P>]) -> Result<usize> {
    let names = op.input_names();
    if inputs.len() != names.len() {
        return Err(Error::Arity { op: op.name(), expected: names.len(), got: inputs.len() });
    }
    let is_t = |i: &usize| matches!(inputs[*i], TArg::T(_));
    let count = (0..inputs.len()).filter(is_t).count();
    let first = (0..inputs.len()).find(is_t);
    let last = (0..inputs.len()).rev().find(is_t);
    let blame = match linearity(op) {
        Linearity::All if count == inputs.len() => return Ok(0),
        Linearity::All | Linearity::Nowhere => first.unwrap_or(0),
        Linearity::One(allowed) => {
            let outside = (0..inputs.len()).filter(is_t).find(|i| !allowed.contains(i));
            match (outside, first) {
                (None, Some(i)) if count == 1 => return Ok(i),
                (Some(i), _) => i,
                _ => last.unwrap_or(allowed[0]),
            }
        }
    };
    Err(Error::UnsupportedDerivative { op: op.name(), output: names.get(blame).copied().unwrap_or("?") })
}

/// Dtype and shape of every input (primal ones asked of the primal face).
fn input_metas<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    inputs: &[TArg<'_, C::P>],
) -> Result<heapless::Vec<TensorMeta, MAX_INPUTS>> {
    let mut metas = heapless::Vec::new();
    for a in inputs {
        let meta = match a {
            TArg::P(x) => cx.primal().meta(x),
            TArg::T(m) => (*m).clone(),
        };
        metas.push(meta).map_err(|_| Error::Arity {
            op: op.name(),
            expected: op.input_names().len(),
            got: inputs.len(),
        })?;
    }
    Ok(metas)
}

/// Checks that the cotangent has the dtype and shape of `op`'s output.
fn check_cotangent(op: &Op, out: Option<&TensorMeta>, ct: &TensorMeta) -> Result<()> {
    let name = op.output_names().first().copied().unwrap_or("?");
    let Some(out) = out else {
        return Err(Error::UnsupportedDerivative { op: op.name(), output: name });
    };
    if ct.dtype != out.dtype {
        return Err(Error::DType {
            op: op.name(),
            arg: "cotangent",
            expected: DTypeReq::Exactly(out.dtype),
            got: ct.dtype,
        });
    }
    if ct.shape != out.shape {
        return Err(Error::ShapeMismatch {
            op: op.name(),
            arg: "cotangent",
            shape: ct.shape.clone(),
            other: name,
            other_shape: out.shape.clone(),
        });
    }
    Ok(())
}

/// The primal coefficients of one op, by position.
struct Coefs<'a, 'b, P> {
    /// The op's inputs.
    inputs: &'a [TArg<'b, P>],
}

impl<P> Coefs<'_, '_, P> {
    /// The primal at position `i` (a position [`check_linear`] has found
    /// primal).
    fn at(&self, op: &Op, i: usize) -> Result<&P> {
        match self.inputs.get(i) {
            Some(TArg::P(x)) => Ok(x),
            _ => Err(Error::UnsupportedDerivative {
                op: op.name(),
                output: op.input_names().get(i).copied().unwrap_or("?"),
            }),
        }
    }
}

/// Cotangents that are zero except `g` at position `pos`.
fn only<T>(count: usize, pos: usize, g: Tangent<T>) -> Cotangents<T> {
    let mut g = Some(g);
    (0..count).map(|i| if i == pos { g.take().unwrap_or(Tangent::Zero) } else { Tangent::Zero }).collect()
}
