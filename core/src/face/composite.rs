//! Composites: methods built from ops and primitives only, so their
//! derivatives come from their parts. Every check names the composite.

use super::methods::Linalg;
use crate::error::{ArgKind, Error, Result};
use crate::op::{check, MatOp};
use crate::prim::{BinaryOp, Pad, PrimOp, ReduceOp, UnaryOp};
use crate::provider::Op;
use crate::shape::{checked_product, Shape, MAX_RANK};

/// Which norm [`Linalg::norm`] computes. Matrix norms act on `[m, n, batch…]`;
/// `Vector(p)` on `[len, batch…]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Norm {
    /// Frobenius norm.
    Fro,
    /// Nuclear norm (sum of singular values).
    Nuc,
    /// Largest column sum of |a|.
    One,
    /// Smallest column sum of |a|.
    NegOne,
    /// Largest row sum of |a|.
    Inf,
    /// Smallest row sum of |a|.
    NegInf,
    /// Largest singular value.
    Two,
    /// Smallest singular value.
    NegTwo,
    /// Vector p-norm over the first dim (p = ±∞ allowed; p ≠ 0).
    Vector(f64),
}

/// Column order of [`Linalg::vander`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VanderOrder {
    /// Columns x^(n−1), …, x, 1 (NumPy's default).
    #[default]
    Decreasing,
    /// Columns 1, x, …, x^(n−1).
    Increasing,
}

fn sum_of<F: Linalg + ?Sized>(f: &mut F, x: &F::Tensor, core: usize) -> Result<F::Tensor> {
    f.reduce(ReduceOp::Sum, x, core)
}

pub(super) fn norm<F: Linalg + ?Sized>(f: &mut F, a: &F::Tensor, kind: Norm) -> Result<F::Tensor> {
    let meta = f.meta(a);
    if let Norm::Vector(p) = kind {
        check::rank("norm", "x", &meta, ArgKind::Vector)?;
        check::float_tensor("norm", "x", &meta)?;
        return vector_norm(f, a, p);
    }
    check::float_matrix("norm", "a", &meta)?;
    let by_columns = |f: &mut F, a: &F::Tensor, how: ReduceOp| -> Result<F::Tensor> {
        let abs = f.unary(UnaryOp::Abs, a)?;
        let sums = sum_of(f, &abs, 1)?;
        f.reduce(how, &sums, 1)
    };
    match kind {
        Norm::Fro => {
            let sq = f.unary(UnaryOp::Abs2, a)?;
            let total = sum_of(f, &sq, 2)?;
            f.unary(UnaryOp::Sqrt, &total)
        }
        Norm::Nuc => {
            let s = f.svd_vals(a)?;
            sum_of(f, &s, 1)
        }
        Norm::Two | Norm::NegTwo => {
            let s = f.svd_vals(a)?;
            f.reduce(if kind == Norm::Two { ReduceOp::Max } else { ReduceOp::Min }, &s, 1)
        }
        Norm::One => by_columns(f, a, ReduceOp::Max),
        Norm::NegOne => by_columns(f, a, ReduceOp::Min),
        Norm::Inf | Norm::NegInf => {
            let t = f.adjoint(a, MatOp::Transpose)?;
            by_columns(f, &t, if kind == Norm::Inf { ReduceOp::Max } else { ReduceOp::Min })
        }
        Norm::Vector(_) => unreachable_vector(),
    }
}

/// `Norm::Vector` returns before the matrix match; kept as a typed error
/// rather than a panic should that ever change.
fn unreachable_vector<T>() -> Result<T> {
    Err(Error::InvalidOption { op: "norm", option: "kind", why: "vector norms apply to vectors" })
}

fn vector_norm<F: Linalg + ?Sized>(f: &mut F, x: &F::Tensor, p: f64) -> Result<F::Tensor> {
    if p.is_nan() || p == 0.0 {
        return Err(Error::InvalidOption {
            op: "norm", option: "p", why: "must be a nonzero number or ±∞"
        });
    }
    let abs = f.unary(UnaryOp::Abs, x)?;
    if p == f64::INFINITY {
        return f.reduce(ReduceOp::Max, &abs, 1);
    }
    if p == f64::NEG_INFINITY {
        return f.reduce(ReduceOp::Min, &abs, 1);
    }
    if p == 1.0 {
        return sum_of(f, &abs, 1);
    }
    if p == 2.0 {
        let sq = f.unary(UnaryOp::Abs2, x)?;
        let total = sum_of(f, &sq, 1)?;
        return f.unary(UnaryOp::Sqrt, &total);
    }
    // (Σ |x|^p)^(1/p) = exp(log(Σ exp(p·log|x|)) / p).
    let log = f.unary(UnaryOp::Log, &abs)?;
    let scaled = f.scale(&log, p)?;
    let pow = f.unary(UnaryOp::Exp, &scaled)?;
    let total = sum_of(f, &pow, 1)?;
    let log_total = f.unary(UnaryOp::Log, &total)?;
    let root = f.scale(&log_total, 1.0 / p)?;
    f.unary(UnaryOp::Exp, &root)
}

pub(super) fn cond<F: Linalg + ?Sized>(f: &mut F, a: &F::Tensor, kind: Norm) -> Result<F::Tensor> {
    let meta = f.meta(a);
    match kind {
        Norm::Two | Norm::NegTwo => {
            check::float_matrix("cond", "a", &meta)?;
            let s = f.svd_vals(a)?;
            let max = f.reduce(ReduceOp::Max, &s, 1)?;
            let min = f.reduce(ReduceOp::Min, &s, 1)?;
            if kind == Norm::Two {
                f.binary(BinaryOp::Div, &max, &min)
            } else {
                f.binary(BinaryOp::Div, &min, &max)
            }
        }
        Norm::Vector(_) => {
            Err(Error::InvalidOption { op: "cond", option: "kind", why: "must be a matrix norm" })
        }
        _ => {
            check::square("cond", "a", &meta)?;
            let inverse = f.inv(a)?;
            let na = f.norm(a, kind)?;
            let ni = f.norm(&inverse, kind)?;
            f.binary(BinaryOp::Mul, &na, &ni)
        }
    }
}

pub(super) fn matrix_power<F: Linalg + ?Sized>(f: &mut F, a: &F::Tensor, k: i64) -> Result<F::Tensor> {
    let meta = f.meta(a);
    let m = check::square("matrix_power", "a", &meta)?;
    if k == 0 {
        return f.eye(meta.dtype, m.rows, m.batch);
    }
    let mut base = if k < 0 { f.inv(a)? } else { a.clone() };
    let mut e = k.unsigned_abs();
    let mut result: Option<F::Tensor> = None;
    loop {
        if e & 1 == 1 {
            result = Some(match result {
                None => base.clone(),
                Some(r) => f.matmul(&r, &base)?,
            });
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        base = f.matmul(&base, &base)?;
    }
    // `k ≠ 0`, so the loop ran its odd step at least once.
    result.ok_or(Error::InvalidOption { op: "matrix_power", option: "k", why: "must be nonzero here" })
}

/// Longest chain ordered optimally; longer chains multiply left to right.
const MAX_DP_CHAIN: usize = 16;

pub(super) fn multi_dot<F: Linalg + ?Sized>(f: &mut F, chain: &[&F::Tensor]) -> Result<F::Tensor> {
    match chain.len() {
        0 => {
            return Err(Error::InvalidOption {
                op: "multi_dot",
                option: "chain",
                why: "must hold at least one matrix",
            })
        }
        1 => return Ok(chain[0].clone()),
        2 => return f.matmul(chain[0], chain[1]),
        _ => {}
    }
    let n = chain.len();
    if n > MAX_DP_CHAIN {
        let mut acc = f.matmul(chain[0], chain[1])?;
        for t in &chain[2..] {
            acc = f.matmul(&acc, t)?;
        }
        return Ok(acc);
    }
    // dims[i] × dims[i+1] is matrix i.
    let mut dims = [0usize; MAX_DP_CHAIN + 1];
    for (i, t) in chain.iter().enumerate() {
        let meta = f.meta(t);
        let m = check::float_matrix("multi_dot", "chain", &meta)?;
        dims[i] = m.rows;
        dims[i + 1] = m.cols;
    }
    // cost[i][j]: cheapest flops for matrices i..=j; split[i][j]: where.
    let mut cost = [[0u128; MAX_DP_CHAIN]; MAX_DP_CHAIN];
    let mut split = [[0usize; MAX_DP_CHAIN]; MAX_DP_CHAIN];
    for len in 1..n {
        for i in 0..n - len {
            let j = i + len;
            cost[i][j] = u128::MAX;
            for s in i..j {
                let c = cost[i][s]
                    .saturating_add(cost[s + 1][j])
                    .saturating_add(dims[i] as u128 * dims[s + 1] as u128 * dims[j + 1] as u128);
                if c < cost[i][j] {
                    cost[i][j] = c;
                    split[i][j] = s;
                }
            }
        }
    }
    chain_product(f, chain, &split, 0, n - 1)
}

fn chain_product<F: Linalg + ?Sized>(
    f: &mut F,
    chain: &[&F::Tensor],
    split: &[[usize; MAX_DP_CHAIN]; MAX_DP_CHAIN],
    i: usize,
    j: usize,
) -> Result<F::Tensor> {
    if i == j {
        return Ok(chain[i].clone());
    }
    let s = split[i][j];
    let left = chain_product(f, chain, split, i, s)?;
    let right = chain_product(f, chain, split, s + 1, j)?;
    f.matmul(&left, &right)
}

pub(super) fn vecdot<F: Linalg + ?Sized>(f: &mut F, x: &F::Tensor, y: &F::Tensor) -> Result<F::Tensor> {
    let meta = f.meta(x);
    check::rank("vecdot", "x", &meta, ArgKind::Vector)?;
    let cx = f.unary(UnaryOp::Conj, x)?;
    let prod = f.binary(BinaryOp::Mul, &cx, y)?;
    sum_of(f, &prod, 1)
}

pub(super) fn vander<F: Linalg + ?Sized>(
    f: &mut F,
    x: &F::Tensor,
    n: usize,
    order: VanderOrder,
) -> Result<F::Tensor> {
    let meta = f.meta(x);
    check::rank("vander", "x", &meta, ArgKind::Vector)?;
    check::float_tensor("vander", "x", &meta)?;
    let dims = meta.shape.dims();
    let (len, batch) = (dims[0], &dims[1..]);
    let full = Shape::from_parts(&[len, n], batch)?;
    let mut acc = f.fill(crate::TensorMeta::new(meta.dtype, full), 0.0)?;
    let column_dims = Shape::from_parts(&[len, 1], batch)?;
    let mut power = f.fill(meta.clone(), 1.0)?;
    for j in 0..n {
        let column = f.reshape(&power, column_dims.dims())?;
        let at = match order {
            VanderOrder::Increasing => j,
            VanderOrder::Decreasing => n - 1 - j,
        };
        let placed = f.single(Op::Prim(PrimOp::Pad(Pad { start: [0, at], size: [len, n] })), &[&column])?;
        acc = f.binary(BinaryOp::Add, &acc, &placed)?;
        if j + 1 < n {
            power = f.binary(BinaryOp::Mul, &power, x)?;
        }
    }
    Ok(acc)
}

fn product(op: &'static str, dims: &[usize], shape: &Shape) -> Result<usize> {
    checked_product(dims).ok_or_else(|| Error::Overflow { op, arg: "a", shape: shape.clone() })
}

pub(super) fn tensorinv<F: Linalg + ?Sized>(f: &mut F, a: &F::Tensor, ind: usize) -> Result<F::Tensor> {
    let meta = f.meta(a);
    let dims = meta.shape.dims();
    if ind == 0 || ind >= dims.len() {
        return Err(Error::InvalidOption {
            op: "tensorinv",
            option: "ind",
            why: "must be between 1 and rank − 1",
        });
    }
    let rows = product("tensorinv", &dims[..ind], &meta.shape)?;
    let cols = product("tensorinv", &dims[ind..], &meta.shape)?;
    if rows != cols {
        return Err(Error::NotSquare { op: "tensorinv", arg: "a", shape: meta.shape.clone() });
    }
    let matrix = f.reshape(a, &[rows, cols])?;
    let inverse = f.inv(&matrix)?;
    let mut out: heapless::Vec<usize, MAX_RANK> = heapless::Vec::new();
    for &d in dims[ind..].iter().chain(&dims[..ind]) {
        let _ = out.push(d); // same count as `dims`, which fits MAX_RANK
    }
    f.reshape(&inverse, &out)
}

pub(super) fn tensorsolve<F: Linalg + ?Sized>(f: &mut F, a: &F::Tensor, b: &F::Tensor) -> Result<F::Tensor> {
    let (am, bm) = (f.meta(a), f.meta(b));
    let (ad, bd) = (am.shape.dims(), bm.shape.dims());
    if bd.len() >= ad.len() || ad[..bd.len()] != *bd {
        return Err(Error::ShapeMismatch {
            op: "tensorsolve",
            arg: "a",
            shape: am.shape.clone(),
            other: "b",
            other_shape: bm.shape.clone(),
        });
    }
    let rows = product("tensorsolve", bd, &bm.shape)?;
    let cols = product("tensorsolve", &ad[bd.len()..], &am.shape)?;
    if rows != cols {
        return Err(Error::NotSquare { op: "tensorsolve", arg: "a", shape: am.shape.clone() });
    }
    let matrix = f.reshape(a, &[rows, cols])?;
    let rhs = f.reshape(b, &[rows, 1])?;
    let x = f.solve(&matrix, &rhs)?;
    f.reshape(&x, &ad[bd.len()..])
}
