//! Partial-pivot LU, `P a = L U` with L unit lower triangular, and the solves
//! built on it. Permutations are `i64` vectors: `(P a)[i, :] = a[perm[i], :]`.
//! A singular matrix factors without error (a zero pivot in U); only solves
//! report [`Error::Singular`](crate::Error::Singular) — for `a`/`lu` singular
//! to working precision (the [`SolveOptions`] test, by default the pivot
//! ratio), or for a `perm` input that is not a permutation of 0..n.

use super::check::{float_matrix, out, outputs, perm, rhs, square};
use super::{MatOp, OpSpec, Outputs, SolveOptions};
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::TensorMeta;

/// `a` (m×n) → `perm` (m, i64), `l` (m×k, unit lower), `u` (k×n, upper).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Lu;

/// `a` (m×n) → `lu` (m×n: strictly-lower L below the diagonal, U on and
/// above), `perm` (m, i64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LuFactor;

/// Fused solve `a x = b`: `a` (n×n), `b` (n×r) → `x` (n×r), `lu`, `perm`.
/// Its derivative reuses `lu` and `perm` (through [`LuSolvePrepared`], with
/// these options' pivot test), so reverse mode factors `a` once. Never
/// pruned to a plain solve. A singular `a` — to working precision, by the
/// options' test — is [`Error::Singular`](crate::Error::Singular).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LuFactorSolve(pub SolveOptions);

/// Solve with saved factors: `lu` (n×n), `perm` (n), `b` (n×r) → `x` with
/// `op(a) x = b` (`op` = identity, transpose or adjoint); the options'
/// singularity test runs on `lu`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LuSolvePrepared(pub MatOp, pub SolveOptions);

impl LuSolvePrepared {
    /// `op(a) x = b` with the default options.
    pub const fn new(how: MatOp) -> LuSolvePrepared {
        LuSolvePrepared(how, SolveOptions::new())
    }
}

impl OpSpec for Lu {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        let (m, n, k) = (a.rows, a.cols, a.k());
        Ok(outputs([
            Some(out(Self::NAME, "perm", DType::I64, &[m], a.batch)?),
            Some(out(Self::NAME, "l", a.dtype, &[m, k], a.batch)?),
            Some(out(Self::NAME, "u", a.dtype, &[k, n], a.batch)?),
        ]))
    }
}

impl OpSpec for LuFactor {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let a = float_matrix(Self::NAME, "a", inputs[0])?;
        Ok(outputs([
            Some(out(Self::NAME, "lu", a.dtype, &[a.rows, a.cols], a.batch)?),
            Some(out(Self::NAME, "perm", DType::I64, &[a.rows], a.batch)?),
        ]))
    }
}

impl OpSpec for LuFactorSolve {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        let a = square(op, "a", inputs[0])?;
        let b = rhs(op, "a", &a, "b", inputs[1])?;
        Ok(outputs([
            Some(out(op, "x", a.dtype, &[b.rows, b.cols], a.batch)?),
            Some(out(op, "lu", a.dtype, &[a.rows, a.cols], a.batch)?),
            Some(out(op, "perm", DType::I64, &[a.rows], a.batch)?),
        ]))
    }
}

impl OpSpec for LuSolvePrepared {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let op = Self::NAME;
        let lu = square(op, "lu", inputs[0])?;
        perm(op, "perm", inputs[1], lu.rows, "lu", &lu)?;
        let b = rhs(op, "lu", &lu, "b", inputs[2])?;
        Ok(outputs([Some(out(op, "x", lu.dtype, &[b.rows, b.cols], lu.batch)?)]))
    }
}
