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
}

/// `a` (n×n triangular), `b` → `x` (shape of `b`). A zero on a non-unit
/// diagonal gives infinities, as in LAPACK ?trtrs without the check; use the
/// LU solves for singular detection.
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
