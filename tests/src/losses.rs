//! Loss building blocks shared by the AD tests: written once against the
//! generic face methods, so every face evaluates the same loss.

use lindiff_core::face::Face;
use lindiff_core::op::Triangle;
use lindiff_core::prim::{BinaryOp, PrimOp, ReduceOp, TriMask, UnaryOp};
use lindiff_core::{DType, Linalg, MatOp, Op, Result, Shape, TensorMeta};

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
