//! Array helpers of [`Var`]: the matrix product and transposes, slices (a
//! column, rows, a block, an element), reductions (sum, mean, trace, dot),
//! elementwise maps, and the dtype and shape conversions the operators use
//! (real → complex promotion, scalar broadcasting).

use super::Var;
use crate::error::{Error, Result};
use crate::face::{Face, Ops};
use crate::op::MatOp;
use crate::prim::{BinaryOp, PrimOp, Reduce, ReduceOp, Reshape, Scale, Slice, Spread, Unary, UnaryOp};
use crate::shape::MAX_RANK;
use crate::tensor::TensorMeta;
use core::ops::Range;

impl<F: Face> Var<F> {
    /// The matrix product `self · b` (batched).
    pub fn matmul(&self, b: &Var<F>) -> Var<F> {
        self.matmul_with(MatOp::Identity, b, MatOp::Identity)
    }

    /// `op_a(self) · op_b(b)` without forming the transposes.
    pub fn matmul_with(&self, op_a: MatOp, b: &Var<F>, op_b: MatOp) -> Var<F> {
        let (a, b) = self.promoted(b);
        a.single(PrimOp::Matmul(crate::prim::Matmul::new(op_a, op_b)).into(), &[&b])
    }

    /// The conjugate transpose `selfᴴ`.
    pub fn h(&self) -> Var<F> {
        self.single(PrimOp::Adjoint(crate::prim::Adjoint(MatOp::Adjoint)).into(), &[])
    }

    /// The transpose `selfᵀ` (no conjugation).
    pub fn t(&self) -> Var<F> {
        self.single(PrimOp::Adjoint(crate::prim::Adjoint(MatOp::Transpose)).into(), &[])
    }

    /// Column `j` of each matrix, as an m×1 matrix.
    pub fn col(&self, j: usize) -> Var<F> {
        self.cols(j..j + 1)
    }

    /// Columns `range` of each matrix.
    pub fn cols(&self, range: Range<usize>) -> Var<F> {
        self.sliced(None, Some(range))
    }

    /// Row `i` of each matrix, as a 1×n matrix.
    pub fn row(&self, i: usize) -> Var<F> {
        self.rows(i..i + 1)
    }

    /// Rows `range` of each matrix.
    pub fn rows(&self, range: Range<usize>) -> Var<F> {
        self.sliced(Some(range), None)
    }

    /// The block `rows × cols` of each matrix.
    pub fn block(&self, rows: Range<usize>, cols: Range<usize>) -> Var<F> {
        self.sliced(Some(rows), Some(cols))
    }

    /// Entry (i, j) of each matrix: a scalar (or one per batch item).
    pub fn at(&self, i: usize, j: usize) -> Var<F> {
        let entry = self.block(i..i + 1, j..j + 1);
        match entry.dims() {
            Ok(dims) => entry.reshape(&dims[2..]),
            Err(e) => entry.wrap(Err(e)),
        }
    }

    /// Element `i` of each vector (`[len, batch…]`): a scalar, or one per
    /// batch item.
    pub fn get(&self, i: usize) -> Var<F> {
        self.as_column("get").at(i, 0)
    }

    /// Elements `range` of each vector (`[len, batch…]`), e.g. the k
    /// largest singular values `s.elems(0..k)`.
    pub fn elems(&self, range: Range<usize>) -> Var<F> {
        let len = range.len();
        let part = self.as_column("elems").rows(range);
        match self.dims() {
            Ok(dims) => {
                let mut out: heapless::Vec<usize, MAX_RANK> = heapless::Vec::new();
                let _ = out.push(len); // the rank fits: `as_column` checked it
                let _ = out.extend_from_slice(&dims[1..]);
                part.reshape(&out)
            }
            Err(e) => part.wrap(Err(e)),
        }
    }

    /// Each vector `[len, batch…]` as a `[len, 1, batch…]` column, for the
    /// matrix slices; a non-vector is an error naming `op`.
    fn as_column(&self, op: &'static str) -> Var<F> {
        match self.dims() {
            Ok(dims) if !dims.is_empty() => {
                let mut column: heapless::Vec<usize, MAX_RANK> = heapless::Vec::new();
                let fits = column.push(dims[0]).is_ok()
                    && column.push(1).is_ok()
                    && dims[1..].iter().all(|&d| column.push(d).is_ok());
                if !fits {
                    return self.wrap(Err(Error::TooManyDims { op, arg: "x", rank: dims.len() + 1 }));
                }
                self.reshape(&column)
            }
            Ok(_) => self.wrap(Err(Error::Rank {
                op,
                arg: "x",
                expected: crate::ArgKind::Vector,
                shape: self.shape_or_default(),
            })),
            Err(e) => self.wrap(Err(e)),
        }
    }

    /// The main diagonal of each matrix.
    pub fn diag(&self) -> Var<F> {
        self.single(PrimOp::DiagPart(crate::prim::DiagPart).into(), &[])
    }

    /// Square matrices with the vector(s) `self` on the diagonal.
    pub fn diag_embed(&self) -> Var<F> {
        self.single(PrimOp::DiagEmbed(crate::prim::DiagEmbed).into(), &[])
    }

    /// `self · diag(v)`: column j scaled by v_j.
    pub fn scale_cols(&self, v: &Var<F>) -> Var<F> {
        let (a, v) = self.promoted(v);
        a.single(PrimOp::ScaleCols(crate::prim::ScaleCols).into(), &[&v])
    }

    /// `diag(v) · self`: row i scaled by v_i.
    pub fn scale_rows(&self, v: &Var<F>) -> Var<F> {
        let (a, v) = self.promoted(v);
        a.single(PrimOp::ScaleRows(crate::prim::ScaleRows).into(), &[&v])
    }

    /// The same elements under new dims (column-major order).
    pub fn reshape(&self, dims: &[usize]) -> Var<F> {
        match heapless::Vec::from_slice(dims) {
            Ok(dims) => self.single(PrimOp::Reshape(Reshape { dims }).into(), &[]),
            Err(_) => self.wrap(Err(Error::TooManyDims { op: "reshape", arg: "dims", rank: dims.len() })),
        }
    }

    /// The sum of every element: a scalar.
    pub fn sum(&self) -> Var<F> {
        match self.meta() {
            Ok(meta) => self.reduce(ReduceOp::Sum, meta.shape.rank()),
            Err(e) => self.wrap(Err(e)),
        }
    }

    /// The mean of every element: a scalar.
    pub fn mean(&self) -> Var<F> {
        match self.meta().map(|m| m.shape.numel()) {
            Ok(Some(n)) if n > 0 => self.sum() * (1.0 / n as f64),
            Ok(_) => self.wrap(Err(Error::Empty {
                op: "mean",
                arg: "x",
                shape: self.shape_or_default(),
                why: "has no elements to average",
            })),
            Err(e) => self.wrap(Err(e)),
        }
    }

    /// The trace of each matrix (a scalar per batch item).
    pub fn trace(&self) -> Var<F> {
        self.diag().reduce(ReduceOp::Sum, 1)
    }

    /// The inner product Σ conj(selfᵢ)·bᵢ over every element (complex for
    /// complex input): ⟨self, b⟩.
    pub fn dot(&self, b: &Var<F>) -> Var<F> {
        (&self.conj() * b).sum()
    }

    /// The largest element over every element (real input).
    pub fn max(&self) -> Var<F> {
        match self.meta() {
            Ok(meta) => self.reduce(ReduceOp::Max, meta.shape.rank()),
            Err(e) => self.wrap(Err(e)),
        }
    }

    /// The smallest element over every element (real input).
    pub fn min(&self) -> Var<F> {
        match self.meta() {
            Ok(meta) => self.reduce(ReduceOp::Min, meta.shape.rank()),
            Err(e) => self.wrap(Err(e)),
        }
    }

    /// A reduction over the first `core_rank` dims.
    pub fn reduce(&self, how: ReduceOp, core_rank: usize) -> Var<F> {
        self.single(PrimOp::Reduce(Reduce { op: how, core_rank }).into(), &[])
    }

    /// An elementwise map.
    pub fn map(&self, how: UnaryOp) -> Var<F> {
        self.single(PrimOp::Unary(Unary(how)).into(), &[])
    }

    /// conj(x) (identity for real).
    pub fn conj(&self) -> Var<F> {
        self.map(UnaryOp::Conj)
    }

    /// Re x (real dtype).
    pub fn re(&self) -> Var<F> {
        self.map(UnaryOp::Real)
    }

    /// Im x (real dtype).
    pub fn im(&self) -> Var<F> {
        self.map(UnaryOp::Imag)
    }

    /// |x| (real dtype).
    pub fn abs(&self) -> Var<F> {
        self.map(UnaryOp::Abs)
    }

    /// |x|² (real dtype).
    pub fn abs2(&self) -> Var<F> {
        self.map(UnaryOp::Abs2)
    }

    /// The principal square root.
    pub fn sqrt(&self) -> Var<F> {
        self.map(UnaryOp::Sqrt)
    }

    /// exp(x) (real input).
    pub fn exp(&self) -> Var<F> {
        self.map(UnaryOp::Exp)
    }

    /// ln(x) (real input).
    pub fn ln(&self) -> Var<F> {
        self.map(UnaryOp::Log)
    }

    /// 1/x.
    pub fn recip(&self) -> Var<F> {
        self.map(UnaryOp::Recip)
    }

    /// x·x elementwise.
    pub fn square(&self) -> Var<F> {
        self * self
    }

    /// x + 0i: the complex tensor of a real one (the same tensor when
    /// already complex).
    pub fn to_complex(&self) -> Var<F> {
        match self.meta() {
            Ok(m) if m.dtype.is_complex() => self.clone(),
            Ok(_) => self.map(UnaryOp::ToComplex),
            Err(e) => self.wrap(Err(e)),
        }
    }

    /// `factor · self` for a real factor.
    pub fn scaled(&self, factor: f64) -> Var<F> {
        self.single(PrimOp::Scale(Scale(factor)).into(), &[])
    }

    /// A tensor of this one's dtype and shape filled with `value`.
    pub fn full_like(&self, value: f64) -> Var<F> {
        self.with_face(|f, t| {
            let meta = f.meta(t);
            f.fill(meta, value)
        })
    }

    /// The block `rows × cols` (whole dims where `None`).
    fn sliced(&self, rows: Option<Range<usize>>, cols: Option<Range<usize>>) -> Var<F> {
        let meta = match self.meta() {
            Ok(m) => m,
            Err(e) => return self.wrap(Err(e)),
        };
        let dims = meta.shape.dims();
        let (m, n) = (dims.first().copied().unwrap_or(0), dims.get(1).copied().unwrap_or(0));
        let rows = rows.unwrap_or(0..m);
        let cols = cols.unwrap_or(0..n);
        let size = [rows.end.saturating_sub(rows.start), cols.end.saturating_sub(cols.start)];
        self.single(PrimOp::Slice(Slice { start: [rows.start, cols.start], size }).into(), &[])
    }

    /// The shape for messages (empty when unknown).
    fn shape_or_default(&self) -> crate::Shape {
        self.meta().map(|m| m.shape).unwrap_or_default()
    }

    /// `self` and `other` with a real one promoted to complex when the
    /// other is complex of the same precision (the only promotion that is
    /// unambiguous).
    pub(super) fn promoted(&self, other: &Var<F>) -> (Var<F>, Var<F>) {
        match (self.meta(), other.meta()) {
            (Ok(a), Ok(b)) if a.dtype.is_complex() && !b.dtype.is_complex() && b.dtype == a.dtype.real() => {
                (self.clone(), other.map(UnaryOp::ToComplex))
            }
            (Ok(a), Ok(b)) if b.dtype.is_complex() && !a.dtype.is_complex() && a.dtype == b.dtype.real() => {
                (self.map(UnaryOp::ToComplex), other.clone())
            }
            _ => (self.clone(), other.clone()),
        }
    }

    /// `self` spread to `target`'s shape when `self` is a single value
    /// (rank 0) and `target` is not.
    pub(super) fn broadcast_to(&self, target: &TensorMeta) -> Var<F> {
        match self.meta() {
            Ok(meta) if meta.shape.rank() == 0 && target.shape.rank() > 0 => {
                let core: heapless::Vec<usize, MAX_RANK> = target.shape.dims().iter().copied().collect();
                self.single(PrimOp::Spread(Spread { core }).into(), &[])
            }
            _ => self.clone(),
        }
    }

    /// Elementwise `self ∘ other` with promotion and scalar broadcasting.
    pub(super) fn zip(&self, how: BinaryOp, other: &Var<F>) -> Var<F> {
        let (a, b) = self.promoted(other);
        let (a, b) = match (a.meta(), b.meta()) {
            (Ok(ma), Ok(mb)) => (a.broadcast_to(&mb), b.broadcast_to(&ma)),
            _ => (a, b),
        };
        a.single(PrimOp::Binary(crate::prim::Binary(how)).into(), &[&b])
    }

    /// Reads the single value of a real scalar handle.
    ///
    /// # Errors
    /// As [`Var::value`]; a non-scalar or complex handle.
    pub(super) fn check_scalar_loss(&self) -> Result<TensorMeta> {
        let meta = self.meta()?;
        if meta.shape.rank() != 0 {
            return Err(Error::Program { why: "the loss must be a scalar (rank 0): sum or index it" });
        }
        if !meta.dtype.is_float() || meta.dtype.is_complex() {
            return Err(Error::Program { why: "the loss must be real-valued" });
        }
        Ok(meta)
    }
}
