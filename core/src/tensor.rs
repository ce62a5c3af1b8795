//! What core knows about a tensor without touching its memory: its dtype and
//! shape ([`TensorMeta`]) and, for inputs, the strides that say where each
//! element lives ([`TensorDesc`]).

use crate::dtype::DType;
use crate::shape::{Shape, MAX_RANK};

/// A tensor's dtype and shape — what [`infer`](crate::LinalgOp::infer)
/// consumes and produces.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorMeta {
    /// Element type.
    pub dtype: DType,
    /// Dims, `[core…, batch…]`.
    pub shape: Shape,
}

impl TensorMeta {
    /// A meta from its parts.
    pub fn new(dtype: DType, shape: Shape) -> TensorMeta {
        TensorMeta { dtype, shape }
    }

    /// Bytes of a contiguous tensor with this meta, or `None` on overflow.
    #[inline]
    pub fn bytes(&self) -> Option<usize> {
        self.shape.numel()?.checked_mul(self.dtype.size())
    }
}

/// Element strides, one per dim, in elements (not bytes).
pub type Strides = heapless::Vec<usize, MAX_RANK>;

/// A strided view: where the elements of a tensor live in its buffer.
///
/// Element `(i₀, i₁, …)` is at element offset `offset + Σ iₖ·strides[k]`.
/// A contiguous column-major tensor has strides `[1, rows, rows·cols, …]`;
/// a row-major `rows×cols` matrix (a JS or NumPy array) is the same buffer
/// read with strides `[cols, 1]` — a view, not a copy.
///
/// ```
/// use lindiff_cpu::prelude::*;
/// // The row-major 2×3 matrix [[1, 2, 3], [4, 5, 6]] as a view.
/// let desc = TensorDesc::row_major_matrix(DType::F64, 2, 3).unwrap();
/// assert_eq!(desc.strides.as_slice(), &[3, 1]);
/// assert_eq!(desc.span(), Some(6));
/// assert!(!desc.is_contiguous());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorDesc {
    /// Dtype and shape.
    pub meta: TensorMeta,
    /// One stride per dim, in elements.
    pub strides: Strides,
    /// Offset of element `(0, 0, …)` from the start of the buffer, in elements.
    pub offset: usize,
}

impl TensorDesc {
    /// The contiguous column-major layout of `meta`.
    ///
    /// Returns `None` when a stride overflows `usize`.
    pub fn contiguous(meta: TensorMeta) -> Option<TensorDesc> {
        let mut strides = Strides::new();
        let mut stride = 1usize;
        for (k, &d) in meta.shape.dims().iter().enumerate() {
            // Capacity: `meta.shape` has at most MAX_RANK dims, like `strides`.
            strides.push(stride).ok()?;
            if k + 1 < meta.shape.rank() {
                stride = stride.checked_mul(d.max(1))?;
            }
        }
        Some(TensorDesc { meta, strides, offset: 0 })
    }

    /// A row-major `rows×cols` matrix: strides `[cols, 1]`.
    ///
    /// Returns `None` when `rows·cols` overflows.
    pub fn row_major_matrix(dtype: DType, rows: usize, cols: usize) -> Option<TensorDesc> {
        rows.checked_mul(cols)?;
        let shape = Shape::new(&[rows, cols]).ok()?;
        let strides = Strides::from_slice(&[cols, 1]).ok()?;
        Some(TensorDesc { meta: TensorMeta::new(dtype, shape), strides, offset: 0 })
    }

    /// Number of elements the buffer must hold for this view: one past the
    /// largest element offset (0 for an empty tensor), or `None` on overflow
    /// or when `strides` has the wrong length.
    pub fn span(&self) -> Option<usize> {
        let dims = self.meta.shape.dims();
        if dims.len() != self.strides.len() {
            return None;
        }
        if dims.contains(&0) {
            return Some(0);
        }
        let mut last = self.offset;
        for (&d, &s) in dims.iter().zip(self.strides.iter()) {
            last = last.checked_add((d - 1).checked_mul(s)?)?;
        }
        last.checked_add(1)
    }

    /// `true` when the view is the contiguous column-major layout with no
    /// offset (size-1 dims may have any stride).
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1usize;
        for (&d, &s) in self.meta.shape.dims().iter().zip(self.strides.iter()) {
            if d != 1 && s != expected {
                return false;
            }
            expected = match expected.checked_mul(d.max(1)) {
                Some(e) => e,
                None => return false,
            };
        }
        self.offset == 0 && self.strides.len() == self.meta.shape.rank()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_strides_are_column_major() {
        let meta = TensorMeta::new(DType::F64, Shape::new(&[4, 3, 2]).unwrap());
        let desc = TensorDesc::contiguous(meta).unwrap();
        assert_eq!(desc.strides.as_slice(), &[1, 4, 12]);
        assert_eq!(desc.span(), Some(24));
        assert!(desc.is_contiguous());
    }

    #[test]
    fn span_is_overflow_checked() {
        let mut desc = TensorDesc::row_major_matrix(DType::F32, 2, 2).unwrap();
        desc.strides[0] = usize::MAX;
        assert_eq!(desc.span(), None);
        desc.meta.shape = Shape::new(&[0, 2]).unwrap();
        assert_eq!(desc.span(), Some(0));
    }
}
