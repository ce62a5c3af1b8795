//! Batched matrix product with transpose/conjugate flags.

use super::PrimSpec;
use crate::error::{Dim, Result};
use crate::op::check::{dim, float_matrix, operand, out, outputs};
use crate::op::{MatOp, Outputs};
use crate::tensor::TensorMeta;

/// `c = op_a(a) · op_b(b)`: `op_a(a)` is m×k, `op_b(b)` is k×n, `c` is m×n.
/// NaN and ∞ propagate as IEEE arithmetic does (no check: ∞·0 is NaN;
/// complex products are formed from the parts, so a complex ∞ may come out
/// with a NaN part); k = 0 gives zeros.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Matmul {
    /// How `a` is applied.
    pub a: MatOp,
    /// How `b` is applied.
    pub b: MatOp,
}

impl Matmul {
    /// `a · b`.
    pub const PLAIN: Matmul = Matmul { a: MatOp::Identity, b: MatOp::Identity };

    /// `op_a(a) · op_b(b)`.
    pub const fn new(a: MatOp, b: MatOp) -> Matmul {
        Matmul { a, b }
    }
}

/// Rows and columns of `op(x)` for an r×c matrix `x`.
pub(crate) const fn applied(op: MatOp, rows: usize, cols: usize) -> (usize, usize) {
    match op {
        MatOp::Identity => (rows, cols),
        MatOp::Transpose | MatOp::Adjoint => (cols, rows),
    }
}

impl PrimSpec for Matmul {
    const NAME: &'static str = "matmul";
    const INPUTS: &'static [&'static str] = &["a", "b"];
    const OUTPUTS: &'static [&'static str] = &["c"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        let a = float_matrix(op, "a", inputs[0])?;
        let b = operand(op, "a", &a, "b", inputs[1])?;
        let (m, k) = applied(self.a, a.rows, a.cols);
        let (kb, n) = applied(self.b, b.rows, b.cols);
        let which = match self.b {
            MatOp::Identity => Dim::Rows,
            _ => Dim::Cols,
        };
        dim(op, "b", b.shape, which, kb, k, "a")?;
        Ok(outputs([Some(out(op, "c", a.dtype, &[m, n], a.batch)?)]))
    }
}
