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

/// Which pivots (entries of a non-unit diagonal of `a`) make the solve
/// `Error::Singular`. A unit diagonal has none to check.
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let mut la = Direct::new(Cpu::new());
/// // A pivot of 1e-17 beside a 1 in its column: solvable as stated,
/// // singular to working precision.
/// let a = la.tensor_row_major(2, 2, &[1.0, 1.0, 0.0, 1e-17])?;
/// let b = la.tensor(&[2, 1], &[1.0, 1.0])?;
/// let upper = TriangularSolveOptions::default().triangle(Triangle::Upper);
/// let x = la.triangular_solve(&a, &b, upper)?.to_vec::<f64>()?;
/// assert!((x[1] - 1e17).abs() <= 1e17 * f64::EPSILON);
/// let ratio = upper.pivot_check(PivotCheck::Ratio);
/// assert_eq!(la.triangular_solve(&a, &b, ratio).unwrap_err().kind(), "Singular");
/// // A graded diagonal passes: nothing above either pivot in its column.
/// let d = la.tensor_row_major(2, 2, &[1.0, 0.0, 0.0, 1e-17])?;
/// assert!(la.triangular_solve(&d, &b, ratio).is_ok());
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PivotCheck {
    /// An exactly zero pivot (rcond 0), as LAPACK's ?trtrs refuses it.
    #[default]
    Zero,
    /// Also a pivot below n·ε of the largest entry above it in its column
    /// of an upper triangle, or before it in its row of a lower one (sizes
    /// max(|re|, |im|); n·ε is the threshold of the LU solves' default
    /// test, [`SingularCheck::PivotRatio`](crate::op::SingularCheck)). In
    /// R of A = QR that column holds the projections of A's column on the
    /// earlier ones: a dependent column's rounding-level pivot fails, while
    /// a diagonal of any grading, and any scaling of A's columns, pass. The
    /// stored triangle alone decides, whatever `op` and `side`. For a
    /// caller whose triangle comes from a factorization of a matrix that may
    /// be singular to working precision (the QR derivative's R₁).
    Ratio,
    /// None: the plain substitution, ±∞ or NaN in the entries of `x` a zero
    /// pivot reaches, and no output range check. For a caller that discards
    /// exactly those entries — the LU derivative, where the zero last pivot
    /// of a corank-1 matrix reaches only the column its `tril` mask drops.
    Off,
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
    /// Which pivots are singular.
    pub pivot_check: PivotCheck,
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
    /// Sets which pivots are singular.
    pub fn pivot_check(mut self, pivot_check: PivotCheck) -> Self {
        self.pivot_check = pivot_check;
        self
    }
}

/// `a` (n×n triangular), `b` → `x` (shape of `b`). By default an exactly
/// zero entry on a non-unit diagonal is `Error::Singular` (rcond 0, as
/// LAPACK's ?trtrs refuses it) and nothing short of zero is refused: a
/// triangular solve is backward stable entry by entry, so a tiny pivot
/// gives the accurate solution of the system as stated. [`PivotCheck`]
/// asks for the pivot-ratio test too, or for none. A solution beyond the
/// dtype's range is `Error::OutOfRange`.
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
