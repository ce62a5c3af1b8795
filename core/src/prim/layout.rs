//! Primitives that move elements: transpose/adjoint, sums over the core dims
//! and their broadcast, and matrix blocks (slice) with their zero-padding.

use crate::error::{ArgKind, Error, Result};
use crate::op::check::{float_matrix, float_tensor, out, outputs};
use crate::op::{MatOp, OpSpec, Outputs};
use crate::shape::MAX_RANK;
use crate::tensor::TensorMeta;

/// `op(x)` of each matrix: identity copy, transpose or adjoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Adjoint(pub MatOp);

/// Sum over the first `core_rank` dims: `[core…, batch…]` → `[batch…]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sum {
    /// How many leading dims to sum over.
    pub core_rank: usize,
}

/// Broadcast a `[batch…]` tensor over new leading dims `core`:
/// `y[c…, b…] = x[b…]`. The transpose of [`Sum`].
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
    let ok = (0..2).all(|d| {
        start[d]
            .checked_add(size[d])
            .is_some_and(|end| end <= outer[d])
    });
    if !ok {
        return Err(Error::OutOfBounds {
            op,
            arg,
            shape: x.shape.clone(),
            start,
            size,
        });
    }
    Ok(())
}

impl OpSpec for Adjoint {
    const NAME: &'static str = "adjoint";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = float_matrix(Self::NAME, "x", inputs[0])?;
        let (r, c) = super::matmul::applied(self.0, x.rows, x.cols);
        Ok(outputs([Some(out(
            Self::NAME,
            "y",
            x.dtype,
            &[r, c],
            x.batch,
        )?)]))
    }
}

impl OpSpec for Sum {
    const NAME: &'static str = "sum";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = inputs[0];
        float_tensor(Self::NAME, "x", x)?;
        if x.shape.rank() < self.core_rank {
            let expected = if self.core_rank >= 2 {
                ArgKind::Matrix
            } else {
                ArgKind::Vector
            };
            return Err(Error::Rank {
                op: Self::NAME,
                arg: "x",
                expected,
                shape: x.shape.clone(),
            });
        }
        Ok(outputs([Some(out(
            Self::NAME,
            "y",
            x.dtype,
            &[],
            x.shape.batch(self.core_rank),
        )?)]))
    }
}

impl OpSpec for Spread {
    const NAME: &'static str = "spread";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = inputs[0];
        float_tensor(Self::NAME, "x", x)?;
        Ok(outputs([Some(out(
            Self::NAME,
            "y",
            x.dtype,
            &self.core,
            x.shape.dims(),
        )?)]))
    }
}

impl OpSpec for Slice {
    const NAME: &'static str = "slice";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = float_matrix(Self::NAME, "x", inputs[0])?;
        fits(
            Self::NAME,
            "x",
            inputs[0],
            self.start,
            self.size,
            [x.rows, x.cols],
        )?;
        Ok(outputs([Some(out(
            Self::NAME,
            "y",
            x.dtype,
            &self.size,
            x.batch,
        )?)]))
    }
}

impl OpSpec for Pad {
    const NAME: &'static str = "pad";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = float_matrix(Self::NAME, "x", inputs[0])?;
        fits(
            Self::NAME,
            "x",
            inputs[0],
            self.start,
            [x.rows, x.cols],
            self.size,
        )?;
        Ok(outputs([Some(out(
            Self::NAME,
            "y",
            x.dtype,
            &self.size,
            x.batch,
        )?)]))
    }
}
