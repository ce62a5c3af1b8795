//! The array primitives derivative programs are written in. Every provider
//! implements all of them, so the set is kept small: batched matmul with
//! transpose/conjugate flags, elementwise arithmetic and a few nonlinear maps,
//! transpose/adjoint, diagonal extract/embed, triangular masks, row/column
//! scaling, reductions and their broadcasts, reshapes, slices and
//! zero-padding, constants.
//!
//! Shapes follow the crate conventions: matrix arguments are
//! `[rows, cols, batch…]`, and all arguments of one call share batch dims.

mod constant;
mod diag;
mod elementwise;
mod extreme;
mod layout;
mod mask;
mod matmul;
mod spectral;

pub use constant::{Eye, Fill};
pub use diag::{DiagEmbed, DiagPart, ScaleCols, ScaleRows, TriMask};
pub use elementwise::{Binary, BinaryOp, Scale, Unary, UnaryOp};
pub use extreme::ExtremeMask;
pub use layout::{Adjoint, Pad, Reduce, ReduceOp, Reshape, Slice, Spread};
pub use mask::RankMask;
pub use matmul::Matmul;
pub use spectral::{Pair, PairInv, PivotPhase, Regularize};

use crate::error::{Error, Result};
use crate::op::Outputs;
use crate::tensor::TensorMeta;

/// Every array primitive.
#[derive(Clone, Debug, PartialEq)]
pub enum PrimOp {
    /// `c = op(a) · op(b)`, batched.
    Matmul(Matmul),
    /// One-input elementwise map.
    Unary(Unary),
    /// Two-input elementwise arithmetic (same shape and dtype).
    Binary(Binary),
    /// Multiply by a real constant.
    Scale(Scale),
    /// Transpose or conjugate-transpose of the matrix dims.
    Adjoint(Adjoint),
    /// Main diagonal of each matrix.
    DiagPart(DiagPart),
    /// Square matrices with the given diagonals.
    DiagEmbed(DiagEmbed),
    /// Keep one triangle, scaling the diagonal.
    TriMask(TriMask),
    /// `a · diag(v)`.
    ScaleCols(ScaleCols),
    /// `diag(v) · a`.
    ScaleRows(ScaleRows),
    /// Sum, max or min over the core dims.
    Reduce(Reduce),
    /// Same elements, new shape.
    Reshape(Reshape),
    /// Fill the core dims with a per-batch value (the transpose of a sum).
    Spread(Spread),
    /// A block of the matrix dims.
    Slice(Slice),
    /// Zero-pad the matrix dims (the transpose of `Slice`).
    Pad(Pad),
    /// A constant filled tensor.
    Fill(Fill),
    /// Batched identity matrices.
    Eye(Eye),
    /// Pairwise inverse gaps of a spectrum (spectral derivative rules).
    PairInv(PairInv),
    /// Reciprocal of each column's pivot entry (phase-gauge correction).
    PivotPhase(PivotPhase),
    /// 0/1 vector selecting the first `rank` entries (truncation rules).
    RankMask(RankMask),
    /// 0/1 tensor marking where a max or min is attained (their rules).
    ExtremeMask(ExtremeMask),
}

/// What a primitive's own file says about it.
pub(crate) trait PrimSpec {
    /// The primitive's name as used in messages.
    const NAME: &'static str;
    /// Input names, in order.
    const INPUTS: &'static [&'static str];
    /// Output names, in order.
    const OUTPUTS: &'static [&'static str];

    /// Output metas for these inputs (arity already checked).
    ///
    /// # Errors
    /// The primitive's typed shape/dtype error.
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs>;
}

/// `T::NAME` of a value.
fn name_of<T: PrimSpec>(_: &T) -> &'static str {
    T::NAME
}
/// `T::INPUTS` of a value.
fn inputs_of<T: PrimSpec>(_: &T) -> &'static [&'static str] {
    T::INPUTS
}
/// `T::OUTPUTS` of a value.
fn outputs_of<T: PrimSpec>(_: &T) -> &'static [&'static str] {
    T::OUTPUTS
}

macro_rules! dispatch_prim {
    ($self:expr, $op:ident => $body:expr) => {
        match $self {
            PrimOp::Matmul($op) => $body,
            PrimOp::Unary($op) => $body,
            PrimOp::Binary($op) => $body,
            PrimOp::Scale($op) => $body,
            PrimOp::Adjoint($op) => $body,
            PrimOp::DiagPart($op) => $body,
            PrimOp::DiagEmbed($op) => $body,
            PrimOp::TriMask($op) => $body,
            PrimOp::ScaleCols($op) => $body,
            PrimOp::ScaleRows($op) => $body,
            PrimOp::Reduce($op) => $body,
            PrimOp::Reshape($op) => $body,
            PrimOp::Spread($op) => $body,
            PrimOp::Slice($op) => $body,
            PrimOp::Pad($op) => $body,
            PrimOp::Fill($op) => $body,
            PrimOp::Eye($op) => $body,
            PrimOp::PairInv($op) => $body,
            PrimOp::PivotPhase($op) => $body,
            PrimOp::RankMask($op) => $body,
            PrimOp::ExtremeMask($op) => $body,
        }
    };
}

impl PrimOp {
    /// The primitive's name (elementwise ops use their map's name).
    pub fn name(&self) -> &'static str {
        match self {
            PrimOp::Unary(u) => u.0.name(),
            PrimOp::Binary(b) => b.0.name(),
            PrimOp::Reduce(r) => r.name(),
            other => dispatch_prim!(other, op => name_of(op)),
        }
    }

    /// Input names, in order.
    pub fn input_names(&self) -> &'static [&'static str] {
        dispatch_prim!(self, op => inputs_of(op))
    }

    /// Output names, in order.
    pub fn output_names(&self) -> &'static [&'static str] {
        dispatch_prim!(self, op => outputs_of(op))
    }

    /// Output metas for these inputs.
    ///
    /// # Errors
    /// [`Error::Arity`] or the primitive's typed shape/dtype error.
    pub fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let expected = self.input_names().len();
        if inputs.len() != expected {
            return Err(Error::Arity { op: self.name(), expected, got: inputs.len() });
        }
        dispatch_prim!(self, op => op.infer(inputs))
    }
}
