//! Primitives that move elements: transpose/adjoint, reductions over the core
//! dims and their broadcast, reshapes, and matrix blocks (slice) with their
//! zero-padding.

use super::PrimSpec;
use crate::error::{ArgKind, DTypeReq, Error, Result};
use crate::op::check::{float_matrix, float_tensor, out, outputs};
use crate::op::{MatOp, Outputs};
use crate::shape::MAX_RANK;
use crate::tensor::TensorMeta;

/// `op(x)` of each matrix: identity copy, transpose or adjoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Adjoint(pub MatOp);

/// How [`Reduce`] combines elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (any float dtype).
    Sum,
    /// Largest element (real dtypes only; NaN propagates).
    Max,
    /// Smallest element (real dtypes only; NaN propagates).
    Min,
}

/// Reduces over the first `core_rank` dims: `[core…, batch…]` → `[batch…]`.
/// The max/min of an empty set is −∞/+∞; the sum is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reduce {
    /// How elements combine.
    pub op: ReduceOp,
    /// How many leading dims to reduce over.
    pub core_rank: usize,
}

/// The same elements in column-major order under a new shape (equal element
/// count). Batch dims are part of the shape here: reshape is a whole-tensor
/// op.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reshape {
    /// The new dims.
    pub dims: heapless::Vec<usize, MAX_RANK>,
}

/// Broadcast a `[batch…]` tensor over new leading dims `core`:
/// `y[c…, b…] = x[b…]`. The transpose of a [`Reduce`] sum.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spread {
    /// The new leading dims.
    pub core: heapless::Vec<usize, MAX_RANK>,
}

/// The block of each matrix starting at `start` with `size` (rows, cols).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slice {
    /// Top-left corner (row, column).
    pub start: [usize; 2],
    /// Block size (rows, columns).
    pub size: [usize; 2],
}

/// Zero matrices of size `size` with `x` placed at `start`: the transpose of
/// [`Slice`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pad {
    /// Where `x`'s top-left element goes.
    pub start: [usize; 2],
    /// Output matrix size (rows, columns).
    pub size: [usize; 2],
}

fn fits(
    op: &'static str,
    arg: &'static str,
    x: &TensorMeta,
    start: [usize; 2],
    size: [usize; 2],
    outer: [usize; 2],
) -> Result<()> {
    let ok = (0..2).all(|d| start[d].checked_add(size[d]).is_some_and(|end| end <= outer[d]));
    if !ok {
        return Err(Error::OutOfBounds { op, arg, shape: x.shape.clone(), start, size });
    }
    Ok(())
}

impl PrimSpec for Adjoint {
    const NAME: &'static str = "adjoint";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = float_matrix(Self::NAME, "x", inputs[0])?;
        let (r, c) = super::matmul::applied(self.0, x.rows, x.cols);
        Ok(outputs([Some(out(Self::NAME, "y", x.dtype, &[r, c], x.batch)?)]))
    }
}

impl PrimSpec for Reduce {
    const NAME: &'static str = "reduce";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = inputs[0];
        let name = self.name();
        float_tensor(name, "x", x)?;
        if self.op != ReduceOp::Sum && x.dtype.is_complex() {
            return Err(Error::DType {
                op: name,
                arg: "x",
                expected: DTypeReq::Exactly(x.dtype.real()),
                got: x.dtype,
            });
        }
        if x.shape.rank() < self.core_rank {
            let expected = if self.core_rank >= 2 { ArgKind::Matrix } else { ArgKind::Vector };
            return Err(Error::Rank { op: name, arg: "x", expected, shape: x.shape.clone() });
        }
        Ok(outputs([Some(out(name, "y", x.dtype, &[], x.shape.batch(self.core_rank))?)]))
    }
}

impl Reduce {
    /// `"sum"`, `"max"` or `"min"`.
    pub const fn name(&self) -> &'static str {
        match self.op {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
}

impl PrimSpec for Reshape {
    const NAME: &'static str = "reshape";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = inputs[0];
        float_tensor(Self::NAME, "x", x)?;
        let y = out(Self::NAME, "y", x.dtype, &self.dims, &[])?;
        if y.shape.numel() != x.shape.numel() {
            return Err(Error::InvalidOption {
                op: Self::NAME,
                option: "dims",
                why: "must keep the element count",
            });
        }
        Ok(outputs([Some(y)]))
    }
}

impl PrimSpec for Spread {
    const NAME: &'static str = "spread";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = inputs[0];
        float_tensor(Self::NAME, "x", x)?;
        Ok(outputs([Some(out(Self::NAME, "y", x.dtype, &self.core, x.shape.dims())?)]))
    }
}

impl PrimSpec for Slice {
    const NAME: &'static str = "slice";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = float_matrix(Self::NAME, "x", inputs[0])?;
        fits(Self::NAME, "x", inputs[0], self.start, self.size, [x.rows, x.cols])?;
        Ok(outputs([Some(out(Self::NAME, "y", x.dtype, &self.size, x.batch)?)]))
    }
}

impl PrimSpec for Pad {
    const NAME: &'static str = "pad";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = float_matrix(Self::NAME, "x", inputs[0])?;
        fits(Self::NAME, "x", inputs[0], self.start, [x.rows, x.cols], self.size)?;
        Ok(outputs([Some(out(Self::NAME, "y", x.dtype, &self.size, x.batch)?)]))
    }
}
