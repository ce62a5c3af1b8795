//! Triangular solve: `op(a) x = b` (left) or `x op(a) = b` (right), reading
//! only the chosen triangle of `a` (and not its diagonal when unit).

use super::check::{dim, operand, out, outputs, square};
use super::{MatOp, OpSpec, Outputs};
use crate::error::{Dim, Result};
use crate::tensor::TensorMeta;

/// Which triangle of `a` holds the matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Triangle {
    /// On and below the diagonal.
    #[default]
    Lower,
    /// On and above the diagonal.
    Upper,
}

/// Whether the diagonal of `a` is read or taken as ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Diagonal {
    /// Read the diagonal.
    #[default]
    NonUnit,
    /// Ones on the diagonal (the stored diagonal is ignored).
    Unit,
}

/// What an exactly zero entry on a non-unit diagonal of `a` does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ZeroPivot {
    /// `Error::Singular` (rcond 0), as LAPACK's ?trtrs refuses it.
    #[default]
    Error,
    /// The plain substitution: ±∞ or NaN in the entries of `x` the zero
    /// pivot reaches, and no output range check. For a caller that discards
    /// exactly those entries — the LU derivative, where the zero last pivot
    /// of a corank-1 matrix reaches only the column its `tril` mask drops.
    Propagate,
}

/// Which side `a` multiplies `x` from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Side {
    /// `op(a) x = b`; `b` is n×r.
    #[default]
    Left,
    /// `x op(a) = b`; `b` is r×n.
    Right,
}

/// Options of [`TriangularSolve`].
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let o = TriangularSolveOptions::default().triangle(Triangle::Upper).side(Side::Right);
/// assert_eq!((o.triangle, o.diagonal, o.side), (Triangle::Upper, Diagonal::NonUnit, Side::Right));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TriangularSolveOptions {
    /// Lower or upper.
    pub triangle: Triangle,
    /// Unit or stored diagonal.
    pub diagonal: Diagonal,
    /// Left or right.
    pub side: Side,
    /// `a`, `aᵀ` or `aᴴ`.
    pub op: MatOp,
    /// What a zero on a non-unit diagonal does.
    pub zero_pivot: ZeroPivot,
}

impl TriangularSolveOptions {
    /// Sets the triangle.
    pub fn triangle(mut self, triangle: Triangle) -> Self {
        self.triangle = triangle;
        self
    }
    /// Sets the diagonal.
    pub fn diagonal(mut self, diagonal: Diagonal) -> Self {
        self.diagonal = diagonal;
        self
    }
    /// Sets the side.
    pub fn side(mut self, side: Side) -> Self {
        self.side = side;
        self
    }
    /// Sets how `a` is applied.
    pub fn op(mut self, op: MatOp) -> Self {
        self.op = op;
        self
    }
    /// Sets what a zero on a non-unit diagonal does.
    pub fn zero_pivot(mut self, zero_pivot: ZeroPivot) -> Self {
        self.zero_pivot = zero_pivot;
        self
    }
}

/// `a` (n×n triangular), `b` → `x` (shape of `b`). An exactly zero entry on
/// a non-unit diagonal is `Error::Singular` (rcond 0, as LAPACK's ?trtrs
/// refuses it; [`ZeroPivot`] can let it through); nothing short of zero is refused (a triangular solve is
/// backward stable entry by entry, so a tiny pivot gives the accurate
/// solution of the system as stated), but a solution beyond the dtype's
/// range is `Error::OutOfRange`. For a pivot-ratio or condition test, use
/// the LU solves' [`SolveOptions`](crate::op::SolveOptions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TriangularSolve(pub TriangularSolveOptions);

impl OpSpec for TriangularSolve {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        let a = square(op, "a", inputs[0])?;
        let b = operand(op, "a", &a, "b", inputs[1])?;
        match self.0.side {
            Side::Left => dim(op, "b", b.shape, Dim::Rows, b.rows, a.rows, "a")?,
            Side::Right => dim(op, "b", b.shape, Dim::Cols, b.cols, a.rows, "a")?,
        }
        Ok(outputs([Some(out(op, "x", a.dtype, &[b.rows, b.cols], a.batch)?)]))
    }
}
