//! Elementwise maps: linear ones the derivative programs need (negate,
//! conjugate, real/imaginary parts, real↔complex, multiply by i, scale), a
//! few nonlinear ones for losses, and a 0/1 indicator for masks.

use super::PrimSpec;
use crate::error::{DTypeReq, Error, Result};
use crate::op::check::{dtype, finite, float_tensor, out, outputs};
use crate::op::Outputs;
use crate::tensor::TensorMeta;

/// A one-input elementwise map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`.
    Neg,
    /// `conj(x)` (identity for real).
    Conj,
    /// `Re x` (complex → real dtype; identity copy for real).
    Real,
    /// `Im x` (complex → real dtype; zeros for real).
    Imag,
    /// `x + 0i` (real → complex dtype).
    ToComplex,
    /// `i·x` (complex only).
    MulI,
    /// `|x|` (real dtype).
    Abs,
    /// `|x|²` (real dtype).
    Abs2,
    /// Principal square root.
    Sqrt,
    /// `1/x`.
    Recip,
    /// `exp(x)` (real only).
    Exp,
    /// `ln(x)` (real only).
    Log,
    /// A copy (materialises a strided view contiguously).
    Copy,
    /// `1` where `x ≠ 0` (NaN included), `0` where `x = 0` (real dtype):
    /// a data-dependent mask built on the primal side (the truncated SVD
    /// rule masks its tangents with it). Piecewise constant: derivative 0
    /// (also at the jump at 0; see its `ad_support` entry).
    NonzeroMask,
}

impl UnaryOp {
    /// Name in messages.
    pub const fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Conj => "conj",
            UnaryOp::Real => "real",
            UnaryOp::Imag => "imag",
            UnaryOp::ToComplex => "to_complex",
            UnaryOp::MulI => "mul_i",
            UnaryOp::Abs => "abs",
            UnaryOp::Abs2 => "abs2",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Recip => "recip",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Copy => "copy",
            UnaryOp::NonzeroMask => "nonzero_mask",
        }
    }

    /// `true` for the maps that are linear over the reals (they have
    /// transpose rules).
    pub const fn is_linear(self) -> bool {
        matches!(
            self,
            UnaryOp::Neg
                | UnaryOp::Conj
                | UnaryOp::Real
                | UnaryOp::Imag
                | UnaryOp::ToComplex
                | UnaryOp::MulI
                | UnaryOp::Copy
        )
    }
}

/// A one-input elementwise primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Unary(pub UnaryOp);

/// A two-input elementwise map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `x + y`.
    Add,
    /// `x - y`.
    Sub,
    /// `x · y`.
    Mul,
    /// `x / y`.
    Div,
}

impl BinaryOp {
    /// Name in messages.
    pub const fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
        }
    }
}

/// A two-input elementwise primitive: same dtype, same shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Binary(pub BinaryOp);

/// Multiplies every element by a real constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale(pub f64);

impl PrimSpec for Unary {
    const NAME: &'static str = "unary";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = self.0.name();
        let x = inputs[0];
        float_tensor(op, "x", x)?;
        let result = match self.0 {
            UnaryOp::Real | UnaryOp::Imag | UnaryOp::Abs | UnaryOp::Abs2 | UnaryOp::NonzeroMask => {
                x.dtype.real()
            }
            UnaryOp::ToComplex => x.dtype.complex(),
            UnaryOp::MulI => {
                if !x.dtype.is_complex() {
                    return Err(Error::DType {
                        op,
                        arg: "x",
                        expected: DTypeReq::Exactly(x.dtype.complex()),
                        got: x.dtype,
                    });
                }
                x.dtype
            }
            UnaryOp::Exp | UnaryOp::Log => {
                dtype(op, "x", x, x.dtype.real())?;
                x.dtype
            }
            _ => x.dtype,
        };
        Ok(outputs([Some(out(op, "y", result, x.shape.dims(), &[])?)]))
    }
}

impl PrimSpec for Binary {
    const NAME: &'static str = "binary";
    const INPUTS: &'static [&'static str] = &["x", "y"];
    const OUTPUTS: &'static [&'static str] = &["z"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = self.0.name();
        let (x, y) = (inputs[0], inputs[1]);
        float_tensor(op, "x", x)?;
        dtype(op, "y", y, x.dtype)?;
        if x.shape != y.shape {
            return Err(Error::ShapeMismatch {
                op,
                arg: "y",
                shape: y.shape.clone(),
                other: "x",
                other_shape: x.shape.clone(),
            });
        }
        Ok(outputs([Some(TensorMeta::new(x.dtype, x.shape.clone()))]))
    }
}

impl PrimSpec for Scale {
    const NAME: &'static str = "scale";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = inputs[0];
        float_tensor(Self::NAME, "x", x)?;
        finite(Self::NAME, "factor", self.0)?;
        Ok(outputs([Some(x.clone())]))
    }
}
