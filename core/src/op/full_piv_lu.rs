//! Full-pivot LU, `P a Q = L U`, and its solves. Factors singular and
//! rectangular matrices exactly (no error); `row_perm` and `col_perm` are
//! `i64` vectors with `(P a Q)[i, j] = a[row_perm[i], col_perm[j]]`.

use super::check::{float_matrix, out, outputs, perm, rhs, square};
use super::{MatOp, OpSpec, Outputs, SolveOptions};
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::TensorMeta;

/// `a` (m×n) → `row_perm` (m), `col_perm` (n), `l` (m×k), `u` (k×n).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FullPivLu;

/// `a` (m×n) → `lu` (m×n packed), `row_perm` (m), `col_perm` (n).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FullPivLuFactor;

/// Fused solve: `a` (n×n), `b` (n×r) → `x`, `lu`, `row_perm`, `col_perm`.
/// Reverse mode reuses the factors through [`FullPivLuSolvePrepared`]. A
/// singular `a` (to working precision, by the options' test) is
/// [`Error::Singular`](crate::Error::Singular).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FullPivLuSolve(pub SolveOptions);

/// `lu`, `row_perm`, `col_perm`, `b` → `x` with `op(a) x = b`; the
/// options' singularity test runs on `lu`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FullPivLuSolvePrepared(pub MatOp, pub SolveOptions);

impl FullPivLuSolvePrepared {
    /// `op(a) x = b` with the default options.
    pub const fn new(how: MatOp) -> FullPivLuSolvePrepared {
        FullPivLuSolvePrepared(how, SolveOptions::new())
    }
}

impl OpSpec for FullPivLu {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        let (m, n, k) = (a.rows, a.cols, a.k());
        Ok(outputs([
            Some(out(Self::NAME, "row_perm", DType::I64, &[m], a.batch)?),
            Some(out(Self::NAME, "col_perm", DType::I64, &[n], a.batch)?),
            Some(out(Self::NAME, "l", a.dtype, &[m, k], a.batch)?),
            Some(out(Self::NAME, "u", a.dtype, &[k, n], a.batch)?),
        ]))
    }
}

impl OpSpec for FullPivLuFactor {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([
            Some(out(Self::NAME, "lu", a.dtype, &[a.rows, a.cols], a.batch)?),
            Some(out(Self::NAME, "row_perm", DType::I64, &[a.rows], a.batch)?),
            Some(out(Self::NAME, "col_perm", DType::I64, &[a.cols], a.batch)?),
        ]))
    }
}

impl OpSpec for FullPivLuSolve {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        let a = square(op, "a", inputs[0])?;
        let b = rhs(op, "a", &a, "b", inputs[1])?;
        Ok(outputs([
            Some(out(op, "x", a.dtype, &[b.rows, b.cols], a.batch)?),
            Some(out(op, "lu", a.dtype, &[a.rows, a.cols], a.batch)?),
            Some(out(op, "row_perm", DType::I64, &[a.rows], a.batch)?),
            Some(out(op, "col_perm", DType::I64, &[a.cols], a.batch)?),
        ]))
    }
}

impl OpSpec for FullPivLuSolvePrepared {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        let lu = square(op, "lu", inputs[0])?;
        perm(op, "row_perm", inputs[1], lu.rows, "lu", &lu)?;
        perm(op, "col_perm", inputs[2], lu.cols, "lu", &lu)?;
        let b = rhs(op, "lu", &lu, "b", inputs[3])?;
        Ok(outputs([Some(out(op, "x", lu.dtype, &[b.rows, b.cols], lu.batch)?)]))
    }
}
