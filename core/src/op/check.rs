//! Shared argument checks. Ops, composites and faces call these so that every
//! message has the same form and names op, argument and shape.

use super::Outputs;
use crate::dtype::DType;
use crate::error::{ArgKind, DTypeReq, Dim, Error, Result};
use crate::shape::Shape;
use crate::tensor::TensorMeta;

/// A matrix argument that passed [`float_matrix`] (or [`matrix_of`]).
#[derive(Clone, Copy, Debug)]
pub struct Mat<'a> {
    /// Dim 0.
    pub rows: usize,
    /// Dim 1.
    pub cols: usize,
    /// Dims after the matrix dims.
    pub batch: &'a [usize],
    /// Element type.
    pub dtype: DType,
    /// The whole shape (for messages).
    pub shape: &'a Shape,
}

impl Mat<'_> {
    /// `min(rows, cols)`.
    pub fn k(&self) -> usize {
        self.rows.min(self.cols)
    }
}

/// Checks that the element count and byte size of `meta` fit in `usize`.
///
/// # Errors
/// [`Error::Overflow`].
pub fn sized(op: &'static str, arg: &'static str, meta: &TensorMeta) -> Result<()> {
    meta.bytes().map(|_| ()).ok_or_else(|| Error::Overflow { op, arg, shape: meta.shape.clone() })
}

/// `arg` must have at least the core dims of `kind`.
///
/// # Errors
/// [`Error::Rank`].
pub fn rank(op: &'static str, arg: &'static str, meta: &TensorMeta, kind: ArgKind) -> Result<()> {
    if meta.shape.rank() < kind.core_rank() {
        return Err(Error::Rank { op, arg, expected: kind, shape: meta.shape.clone() });
    }
    Ok(())
}

/// `arg` must have dtype `expected`.
///
/// # Errors
/// [`Error::DType`].
pub fn dtype(op: &'static str, arg: &'static str, meta: &TensorMeta, expected: DType) -> Result<()> {
    if meta.dtype != expected {
        return Err(Error::DType { op, arg, expected: DTypeReq::Exactly(expected), got: meta.dtype });
    }
    Ok(())
}

/// A matrix of any dtype in `[rows, cols, batch…]` whose size fits.
///
/// # Errors
/// [`Error::Rank`], [`Error::Overflow`].
pub fn matrix_of<'a>(op: &'static str, arg: &'static str, meta: &'a TensorMeta) -> Result<Mat<'a>> {
    rank(op, arg, meta, ArgKind::Matrix)?;
    sized(op, arg, meta)?;
    let dims = meta.shape.dims();
    Ok(Mat { rows: dims[0], cols: dims[1], batch: &dims[2..], dtype: meta.dtype, shape: &meta.shape })
}

/// A float (f32, f64, c32, c64) matrix.
///
/// # Errors
/// [`Error::Rank`], [`Error::DType`], [`Error::Overflow`].
pub fn float_matrix<'a>(op: &'static str, arg: &'static str, meta: &'a TensorMeta) -> Result<Mat<'a>> {
    let m = matrix_of(op, arg, meta)?;
    if !m.dtype.is_float() {
        return Err(Error::DType { op, arg, expected: DTypeReq::Float, got: m.dtype });
    }
    Ok(m)
}

/// A square float matrix.
///
/// # Errors
/// As [`float_matrix`], plus [`Error::NotSquare`].
///
/// ```
/// use lindiff_core::{op::check, DType, Shape, TensorMeta};
/// let a = TensorMeta::new(DType::F32, Shape::new(&[2, 3]).unwrap());
/// let err = check::square("inv", "a", &a).unwrap_err();
/// assert_eq!(err.to_string(), "inv: argument `a` must be square, got 2×3");
/// ```
pub fn square<'a>(op: &'static str, arg: &'static str, meta: &'a TensorMeta) -> Result<Mat<'a>> {
    let m = float_matrix(op, arg, meta)?;
    if m.rows != m.cols {
        return Err(Error::NotSquare { op, arg, shape: meta.shape.clone() });
    }
    Ok(m)
}

/// A vector `[len, batch…]` of dtype `expected`; returns `(len, batch)`.
///
/// # Errors
/// [`Error::Rank`], [`Error::DType`], [`Error::Overflow`].
pub fn vector<'a>(
    op: &'static str,
    arg: &'static str,
    meta: &'a TensorMeta,
    expected: DType,
) -> Result<(usize, &'a [usize])> {
    rank(op, arg, meta, ArgKind::Vector)?;
    dtype(op, arg, meta, expected)?;
    sized(op, arg, meta)?;
    let dims = meta.shape.dims();
    Ok((dims[0], &dims[1..]))
}

/// Dim `dim` of `arg` (value `actual`) must equal `expected`, which
/// `because_of` implies.
///
/// # Errors
/// [`Error::DimMismatch`].
pub fn dim(
    op: &'static str,
    arg: &'static str,
    shape: &Shape,
    dim: Dim,
    actual: usize,
    expected: usize,
    because_of: &'static str,
) -> Result<()> {
    if actual != expected {
        return Err(Error::DimMismatch { op, arg, dim, expected, because_of, shape: shape.clone() });
    }
    Ok(())
}

/// `arg`'s batch dims must equal `other`'s.
///
/// # Errors
/// [`Error::BatchMismatch`].
pub fn same_batch(
    op: &'static str,
    (arg, shape, batch): (&'static str, &Shape, &[usize]),
    (other, other_shape, other_batch): (&'static str, &Shape, &[usize]),
) -> Result<()> {
    if batch != other_batch {
        return Err(Error::BatchMismatch {
            op,
            arg,
            shape: shape.clone(),
            other,
            other_shape: other_shape.clone(),
        });
    }
    Ok(())
}

/// `b` must be a matrix with `a`'s dtype and batch dims (a second operand).
///
/// # Errors
/// As [`matrix_of`], plus [`Error::DType`] and [`Error::BatchMismatch`].
pub fn operand<'a>(
    op: &'static str,
    a_name: &'static str,
    a: &Mat<'_>,
    b_name: &'static str,
    b: &'a TensorMeta,
) -> Result<Mat<'a>> {
    let bm = matrix_of(op, b_name, b)?;
    dtype(op, b_name, b, a.dtype)?;
    same_batch(op, (b_name, bm.shape, bm.batch), (a_name, a.shape, a.batch))?;
    Ok(bm)
}

/// The meta of an output with `core` dims followed by `batch`.
///
/// # Errors
/// [`Error::TooManyDims`], [`Error::Overflow`].
pub fn out(
    op: &'static str,
    arg: &'static str,
    dtype: DType,
    core: &[usize],
    batch: &[usize],
) -> Result<TensorMeta> {
    let shape = Shape::from_parts(core, batch).map_err(|e| Error::TooManyDims { op, arg, rank: e.rank })?;
    let meta = TensorMeta::new(dtype, shape);
    sized(op, arg, &meta)?;
    Ok(meta)
}

/// Collects present outputs.
pub fn outputs<const N: usize>(items: [Option<TensorMeta>; N]) -> Outputs {
    const { assert!(N <= super::MAX_OUTPUTS) };
    let mut v = Outputs::new();
    for item in items {
        // N ≤ MAX_OUTPUTS is checked at compile time above.
        let _ = v.push(item);
    }
    v
}

/// A tensor of a float dtype whose size fits (any rank).
///
/// # Errors
/// [`Error::DType`], [`Error::Overflow`].
pub fn float_tensor(op: &'static str, arg: &'static str, meta: &TensorMeta) -> Result<()> {
    if !meta.dtype.is_float() {
        return Err(Error::DType { op, arg, expected: DTypeReq::Float, got: meta.dtype });
    }
    sized(op, arg, meta)
}

/// An option value must be finite.
///
/// # Errors
/// [`Error::InvalidOption`].
pub fn finite(op: &'static str, option: &'static str, value: f64) -> Result<()> {
    if !value.is_finite() {
        return Err(Error::InvalidOption { op, option, why: "must be finite" });
    }
    Ok(())
}

/// A derivative broadening ε must be absent or a finite number > 0.
///
/// # Errors
/// [`Error::InvalidOption`].
pub fn derivative_eps(op: &'static str, eps: Option<f64>) -> Result<()> {
    match eps {
        Some(eps) if !(eps.is_finite() && eps > 0.0) => Err(Error::InvalidOption {
            op,
            option: "derivative_eps",
            why: "must be a finite number > 0 (use None for the exact rule)",
        }),
        _ => Ok(()),
    }
}

/// An option value must be finite and ≥ 0.
///
/// # Errors
/// [`Error::InvalidOption`].
pub fn nonnegative(op: &'static str, option: &'static str, value: f64) -> Result<()> {
    if !(value.is_finite() && value >= 0.0) {
        return Err(Error::InvalidOption { op, option, why: "must be a finite number ≥ 0" });
    }
    Ok(())
}

/// A right-hand side `b` for a solve with square `a`: a matrix with `a`'s
/// dtype, batch dims and row count.
///
/// # Errors
/// As [`operand`], plus [`Error::DimMismatch`].
pub fn rhs<'a>(
    op: &'static str,
    a_name: &'static str,
    a: &Mat<'_>,
    b_name: &'static str,
    b: &'a TensorMeta,
) -> Result<Mat<'a>> {
    let bm = operand(op, a_name, a, b_name, b)?;
    dim(op, b_name, bm.shape, Dim::Rows, bm.rows, a.rows, a_name)?;
    Ok(bm)
}

/// A permutation vector (`i64`, length `len`) belonging to matrix `a`.
///
/// # Errors
/// [`Error::Rank`], [`Error::DType`], [`Error::DimMismatch`],
/// [`Error::BatchMismatch`].
pub fn perm(
    op: &'static str,
    name: &'static str,
    meta: &TensorMeta,
    len: usize,
    a_name: &'static str,
    a: &Mat<'_>,
) -> Result<()> {
    let (got, batch) = vector(op, name, meta, DType::I64)?;
    dim(op, name, &meta.shape, Dim::Len, got, len, a_name)?;
    same_batch(op, (name, &meta.shape, batch), (a_name, a.shape, a.batch))
}
