//! Shapes: fixed-capacity dimension lists, column-major by convention.
//!
//! # Conventions
//!
//! * A tensor's dims are `[core…, batch…]`. For a **matrix argument** the core
//!   dims are `[rows, cols]`; for a **vector argument** (singular values,
//!   pivots, Householder scalars) `[len]`; for a **scalar argument**
//!   (a determinant, a rank) there are none. Every dim after the core dims is a
//!   batch dim: `[3, 3, 10]` is a batch of ten 3×3 matrices.
//! * **Batch rule:** all arguments of one call (inputs and outputs) have the
//!   *same* batch dims, in the same order. There is no implicit broadcasting: a
//!   mismatch is an [`Error::BatchMismatch`](crate::Error::BatchMismatch)
//!   naming both arguments.
//! * Storage is column-major: element `(i, j, b…)` of a contiguous tensor sits at
//!   `i + rows·(j + cols·b…)`. Other layouts (row-major, sub-matrices) are
//!   described by strides in a [`TensorDesc`](crate::TensorDesc).
//! * Every element-count and byte-size product is overflow-checked.

use core::fmt;

/// The most dims a tensor may have: two matrix dims plus six batch dims.
pub const MAX_RANK: usize = 8;

/// A tensor shape: up to [`MAX_RANK`] dims, stored inline (no heap).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: heapless::Vec<usize, MAX_RANK>,
}

/// The error of building a [`Shape`] with more than [`MAX_RANK`] dims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyDims {
    /// The rank that was asked for.
    pub rank: usize,
}

impl fmt::Display for TooManyDims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a shape of rank {} exceeds the maximum rank {MAX_RANK}", self.rank)
    }
}

impl Shape {
    /// The shape of a scalar (rank 0, one element).
    pub const fn scalar() -> Shape {
        Shape { dims: heapless::Vec::new() }
    }

    /// A shape from its dims.
    ///
    /// # Errors
    /// [`TooManyDims`] when `dims.len() > MAX_RANK`.
    ///
    /// ```
    /// use lindiff_cpu::prelude::*;
    /// let s = Shape::new(&[4, 3, 10]).unwrap();
    /// assert_eq!(s.to_string(), "4×3×10");
    /// assert!(Shape::new(&[1; 9]).is_err());
    /// ```
    pub fn new(dims: &[usize]) -> Result<Shape, TooManyDims> {
        heapless::Vec::from_slice(dims)
            .map(|dims| Shape { dims })
            .map_err(|_| TooManyDims { rank: dims.len() })
    }

    /// `core` dims followed by `batch` dims.
    ///
    /// # Errors
    /// [`TooManyDims`] when the two together exceed [`MAX_RANK`].
    pub fn from_parts(core: &[usize], batch: &[usize]) -> Result<Shape, TooManyDims> {
        let mut shape = Shape::new(core)?;
        shape.dims.extend_from_slice(batch).map_err(|_| TooManyDims { rank: core.len() + batch.len() })?;
        Ok(shape)
    }

    /// The dims.
    #[inline]
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Number of dims.
    #[inline]
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Dim `i`, or `None` when out of range.
    pub fn dim(&self, i: usize) -> Option<usize> {
        self.dims.get(i).copied()
    }

    /// The dims after the first `core_rank` (empty when the rank is smaller).
    #[inline]
    pub fn batch(&self, core_rank: usize) -> &[usize] {
        self.dims.get(core_rank..).unwrap_or(&[])
    }

    /// Number of elements, or `None` when the product overflows `usize`.
    pub fn numel(&self) -> Option<usize> {
        checked_product(&self.dims)
    }

    /// Number of matrices/vectors in the batch (product of the dims after
    /// `core_rank`), or `None` on overflow.
    pub fn batch_count(&self, core_rank: usize) -> Option<usize> {
        checked_product(self.batch(core_rank))
    }

    /// `true` when some dim is zero.
    pub fn is_empty(&self) -> bool {
        self.dims.contains(&0)
    }
}

/// Product of `dims`, or `None` when it overflows `usize`.
pub fn checked_product(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

impl fmt::Display for Shape {
    /// `4×3×10`; a vector prints as `[3]` and a scalar as `scalar`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.dims.as_slice() {
            [] => return f.write_str("scalar"),
            [len] => return write!(f, "[{len}]"),
            _ => {}
        }
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str("×")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.dims.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn products_are_checked() {
        let s = Shape::new(&[usize::MAX, 2]).unwrap();
        assert_eq!(s.numel(), None);
        assert_eq!(Shape::new(&[0, usize::MAX, 2]).unwrap().numel(), Some(0));
        assert_eq!(Shape::scalar().numel(), Some(1));
    }

    #[test]
    fn batch_dims_follow_core_dims() {
        let s = Shape::from_parts(&[4, 3], &[2, 5]).unwrap();
        assert_eq!(s.batch(2), &[2, 5]);
        assert_eq!(s.batch_count(2), Some(10));
        assert_eq!(s.batch(7), &[] as &[usize]);
        assert_eq!(Shape::from_parts(&[1; 4], &[1; 5]), Err(TooManyDims { rank: 9 }));
    }

    #[test]
    fn display() {
        assert_eq!(Shape::new(&[2, 3]).unwrap().to_string(), "2×3");
        assert_eq!(Shape::scalar().to_string(), "scalar");
        assert_eq!(Shape::new(&[3]).unwrap().to_string(), "[3]");
    }
}
