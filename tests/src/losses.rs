//! Loss building blocks shared by the AD tests: written once against the
//! generic face methods, so every face evaluates the same loss.

use lindiff_core::face::Face;
use lindiff_core::op::Triangle;
use lindiff_core::prim::{BinaryOp, PrimOp, ReduceOp, Spread, TriMask, UnaryOp};
use lindiff_core::{DType, LinalgOp, MatOp, Op, Ops, Result, Shape, TensorMeta};

/// Re Σ over every element of `x` (a real scalar).
pub fn total<F: Face + ?Sized>(f: &mut F, x: &F::Tensor) -> Result<F::Tensor> {
    let rank = f.meta(x).shape.rank();
    let s = if rank == 0 { x.clone() } else { f.reduce(ReduceOp::Sum, x, rank)? };
    f.unary(UnaryOp::Real, &s)
}

/// ⟨g, x⟩ = Re Σ conj(g)∘x, a real scalar (a real `x` is promoted to a
/// complex `g`'s dtype).
pub fn pairing<F: Face + ?Sized>(f: &mut F, g: &F::Tensor, x: &F::Tensor) -> Result<F::Tensor> {
    let complex = f.meta(g).dtype.is_complex();
    let x =
        if complex && !f.meta(x).dtype.is_complex() { f.unary(UnaryOp::ToComplex, x)? } else { x.clone() };
    let gc = f.unary(UnaryOp::Conj, g)?;
    let prod = f.binary(BinaryOp::Mul, &gc, &x)?;
    total(f, &prod)
}

/// `TriMask` (lower, diagonal kept) of `x`.
pub fn lower<F: Face + ?Sized>(f: &mut F, x: &F::Tensor) -> Result<F::Tensor> {
    let mask = TriMask { triangle: Triangle::Lower, diagonal: 1.0 };
    f.single(Op::Prim(PrimOp::TriMask(mask)), &[x])
}

/// A fixed weight pattern of `dtype` shaped like `like` (`[m, n, batch…]`):
/// C = U_m · tril(1_{m×n}) · U_nᵀ (U = lower-triangular ones) scaled to
/// C/(mn) − 0.3 — not rank one, no two rows or columns equal — plus, for a
/// complex `dtype`, i·(½ − tril(1_{m×n})).
pub fn pattern<F: Face + ?Sized>(f: &mut F, like: &F::Tensor, dtype: DType) -> Result<F::Tensor> {
    let meta = f.meta(like);
    let dims = meta.shape.dims();
    let (m, n, batch) = (dims[0], dims[1], &dims[2..]);
    let ones = |f: &mut F, r: usize, c: usize| -> Result<F::Tensor> {
        f.fill(TensorMeta::new(dtype, Shape::from_parts(&[r, c], batch)?), 1.0)
    };
    let um = ones(f, m, m)?;
    let um = lower(f, &um)?;
    let un = ones(f, n, n)?;
    let un = lower(f, &un)?;
    let all = ones(f, m, n)?;
    let l = lower(f, &all)?;
    let c = f.matmul(&um, &l)?;
    let c = f.matmul_with(&c, MatOp::Identity, &un, MatOp::Transpose)?;
    let c = f.scale(&c, 1.0 / (m * n) as f64)?;
    let shift = f.scale(&all, 0.3)?;
    let w = f.binary(BinaryOp::Sub, &c, &shift)?;
    if dtype.is_complex() {
        let half = f.scale(&all, 0.5)?;
        let im = f.binary(BinaryOp::Sub, &half, &l)?;
        let im = f.unary(UnaryOp::MulI, &im)?;
        f.binary(BinaryOp::Add, &w, &im)
    } else {
        Ok(w)
    }
}

/// Re Σ W∘X + ½ Σ W_r∘|X|² with the fixed [`pattern`]s.
pub fn probe<F: Face + ?Sized>(f: &mut F, x: &F::Tensor) -> Result<F::Tensor> {
    let dtype = f.meta(x).dtype;
    let w = pattern(f, x, dtype)?;
    let wx = f.binary(BinaryOp::Mul, &w, x)?;
    let lin = total(f, &wx)?;
    let wr = pattern(f, x, dtype.real())?;
    let sq = f.unary(UnaryOp::Abs2, x)?;
    let wsq = f.binary(BinaryOp::Mul, &wr, &sq)?;
    let quad = total(f, &wsq)?;
    let quad = f.scale(&quad, 0.5)?;
    f.binary(BinaryOp::Add, &lin, &quad)
}

/// `c_j = n − j` (`[n, batch…]`, dtype `dtype`), for square matrices shaped
/// like `like`.
pub fn ramp<F: Face + ?Sized>(f: &mut F, like: &F::Tensor, dtype: DType) -> Result<F::Tensor> {
    let shape = f.meta(like).shape;
    let ones = f.fill(TensorMeta::new(dtype, shape), 1.0)?;
    let l = lower(f, &ones)?;
    f.reduce(ReduceOp::Sum, &l, 1)
}

/// A fixed non-symmetric weight matrix shaped like `like` (square), with
/// c = [`ramp`]: W_ij = c_i − 2c_j + c_i c_j / n, plus i·c_j for complex
/// `dtype`.
pub fn ramp_weights<F: Face + ?Sized>(f: &mut F, like: &F::Tensor, dtype: DType) -> Result<F::Tensor> {
    let n = f.meta(like).shape.dims()[0];
    let c = ramp(f, like, dtype)?;
    let core = heapless::Vec::from_slice(&[n]).expect("one dim");
    let by_col = f.single(Op::Prim(PrimOp::Spread(Spread { core })), &[&c])?;
    let by_row = f.adjoint(&by_col, MatOp::Transpose)?;
    let prod = f.binary(BinaryOp::Mul, &by_row, &by_col)?;
    let prod = f.scale(&prod, 1.0 / n as f64)?;
    let twice = f.scale(&by_col, 2.0)?;
    let w = f.binary(BinaryOp::Sub, &by_row, &twice)?;
    let w = f.binary(BinaryOp::Add, &w, &prod)?;
    if dtype.is_complex() {
        let imag = f.unary(UnaryOp::MulI, &by_col)?;
        f.binary(BinaryOp::Add, &w, &imag)
    } else {
        Ok(w)
    }
}

/// Σ |x + 1|² over every element (a real scalar).
pub fn sq1<F: Face + ?Sized>(f: &mut F, x: &F::Tensor) -> Result<F::Tensor> {
    let meta = f.meta(x);
    let rank = meta.shape.dims().len();
    let ones = f.fill(meta, 1.0)?;
    let shifted = f.binary(BinaryOp::Add, x, &ones)?;
    let sq = f.unary(UnaryOp::Abs2, &shifted)?;
    f.reduce(ReduceOp::Sum, &sq, rank)
}

/// The present outputs of a linalg op.
pub fn outputs<F: Face + ?Sized>(f: &mut F, op: LinalgOp, xs: &[&F::Tensor]) -> Result<Vec<F::Tensor>> {
    Ok(f.apply(Op::Linalg(op), xs)?.into_iter().flatten().collect())
}
