//! Composites: methods built from ops and primitives only, so their
//! derivatives come from their parts. Every check names the composite.

use super::ops::Ops;
use crate::error::{ArgKind, Error, Result};
use crate::op::{check, MatOp, SolveOptions};
use crate::prim::{BinaryOp, Pad, PrimOp, ReduceOp, UnaryOp};
use crate::provider::Op;
use crate::shape::{checked_product, Shape, MAX_RANK};
use crate::tensor::TensorMeta;

/// Which norm [`Linalg::norm`](super::Linalg::norm) computes. Matrix norms act on `[m, n, batch…]`;
/// `Vector(p)` on `[len, batch…]`.
///
/// Every norm of an empty matrix or vector (no entries) is 0.
///
/// NaN and ∞: the norms built on the singular values — `Fro`, `Nuc`,
/// `Two`, `NegTwo` and `Vector(2.0)` — reject them as every decomposition
/// does ([`Error::NonFinite`](crate::Error::NonFinite) naming `a`); the
/// entrywise ones — `One`, `NegOne`, `Inf`, `NegInf` and `Vector(p)` for
/// p ≠ 2 — propagate them as IEEE arithmetic does (a NaN entry gives NaN,
/// an infinite one ∞, NaN winning over ∞).
///
/// Range: `Fro` and `Vector(2.0)` are the single singular value of the
/// entries as one column, which the SVD computes scaled into its safe
/// range — no overflow or underflow while the norm itself is
/// representable (the sum of squares of a 5×2 matrix with an entry of
/// −1.07e289 would be +∞, of `[0, −5.4e−306]` 0). Their derivative is the
/// SVD's (a/‖a‖ away from 0). `One`/`Inf` and the `Vector(p)` sums are
/// plain sums of |aᵢⱼ| (or of |xᵢ|^p through exp/log), which overflow only
/// when the norm does (p = 1, ∞) or may overflow when |xᵢ|^p does (other
/// p).
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

/// Column order of [`Linalg::vander`](super::Linalg::vander).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VanderOrder {
    /// Columns x^(n−1), …, x, 1 (NumPy's default).
    #[default]
    Decreasing,
    /// Columns 1, x, …, x^(n−1).
    Increasing,
}

pub(super) fn inv<F: Ops + ?Sized>(f: &mut F, a: &F::Tensor, options: SolveOptions) -> Result<F::Tensor> {
    let meta = f.meta(a);
    let m = check::square("inv", "a", &meta)?;
    let eye = f.eye(meta.dtype, m.rows, m.batch)?;
    f.solve_with_options(a, &eye, options)
}

fn sum_of<F: Ops + ?Sized>(f: &mut F, x: &F::Tensor, core: usize) -> Result<F::Tensor> {
    f.reduce(ReduceOp::Sum, x, core)
}

/// Zeros of the real dtype of `meta` over its batch dims (after `core`
/// core dims): every norm of an empty matrix or vector.
fn zeros<F: Ops + ?Sized>(f: &mut F, meta: &TensorMeta, core: usize) -> Result<F::Tensor> {
    let shape = Shape::new(meta.shape.batch(core))?;
    f.fill(TensorMeta::new(meta.dtype.real(), shape), 0.0)
}

/// ‖x‖₂ of the leading `rows` entries of each batch item (`x` reshaped to
/// `[rows, 1, batch…]`): the one singular value of that column, which the
/// SVD kernels compute scaled into their safe range (a scaled sum of
/// squares, as LAPACK's `?nrm2`), and whose derivative rule is the SVD's.
fn column_norm<F: Ops + ?Sized>(f: &mut F, x: &F::Tensor, rows: usize, batch: &[usize]) -> Result<F::Tensor> {
    let column = Shape::from_parts(&[rows, 1], batch)?;
    let c = f.reshape(x, column.dims())?;
    let s = f.svd_vals(&c)?;
    sum_of(f, &s, 1)
}

pub(super) fn norm<F: Ops + ?Sized>(f: &mut F, a: &F::Tensor, kind: Norm) -> Result<F::Tensor> {
    let meta = f.meta(a);
    if let Norm::Vector(p) = kind {
        check::rank("norm", "x", &meta, ArgKind::Vector)?;
        check::float_tensor("norm", "x", &meta)?;
        if p.is_nan() || p == 0.0 {
            return Err(Error::InvalidOption {
                op: "norm",
                option: "p",
                why: "must be a nonzero number or ±∞",
            });
        }
        if meta.shape.dims()[0] == 0 {
            return zeros(f, &meta, 1);
        }
        return vector_norm(f, a, p, &meta);
    }
    let m = check::float_matrix("norm", "a", &meta)?;
    let (rows, cols) = (m.rows, m.cols);
    if rows == 0 || cols == 0 {
        return zeros(f, &meta, 2);
    }
    let by_columns = |f: &mut F, a: &F::Tensor, how: ReduceOp| -> Result<F::Tensor> {
        let abs = f.unary(UnaryOp::Abs, a)?;
        let sums = sum_of(f, &abs, 1)?;
        f.reduce(how, &sums, 1)
    };
    match kind {
        Norm::Fro => {
            let len = checked_product(&[rows, cols]).ok_or_else(|| Error::Overflow {
                op: "norm",
                arg: "a",
                shape: meta.shape.clone(),
            })?;
            column_norm(f, a, len, meta.shape.batch(2))
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

fn vector_norm<F: Ops + ?Sized>(f: &mut F, x: &F::Tensor, p: f64, meta: &TensorMeta) -> Result<F::Tensor> {
    if p == 2.0 {
        let dims = meta.shape.dims();
        return column_norm(f, x, dims[0], &dims[1..]);
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
    // (Σ |x|^p)^(1/p) = exp(log(Σ exp(p·log|x|)) / p).
    let log = f.unary(UnaryOp::Log, &abs)?;
    let scaled = f.scale(&log, p)?;
    let pow = f.unary(UnaryOp::Exp, &scaled)?;
    let total = sum_of(f, &pow, 1)?;
    let log_total = f.unary(UnaryOp::Log, &total)?;
    let root = f.scale(&log_total, 1.0 / p)?;
    f.unary(UnaryOp::Exp, &root)
}

/// +∞ of the real dtype of `meta` over its batch dims (after `core` core
/// dims), as 1/0 (a fill must be finite).
fn infinities<F: Ops + ?Sized>(f: &mut F, meta: &TensorMeta, core: usize) -> Result<F::Tensor> {
    let shape = Shape::new(meta.shape.batch(core))?;
    let real = TensorMeta::new(meta.dtype.real(), shape);
    let one = f.fill(real.clone(), 1.0)?;
    let zero = f.fill(real, 0.0)?;
    f.binary(BinaryOp::Div, &one, &zero)
}

pub(super) fn cond<F: Ops + ?Sized>(f: &mut F, a: &F::Tensor, kind: Norm) -> Result<F::Tensor> {
    let meta = f.meta(a);
    if let Norm::Vector(_) = kind {
        return Err(Error::InvalidOption { op: "cond", option: "kind", why: "must be a matrix norm" });
    }
    let m = check::float_matrix("cond", "a", &meta)?;
    if m.rows == 0 || m.cols == 0 {
        return Err(Error::Empty {
            op: "cond",
            arg: "a",
            shape: meta.shape.clone(),
            why: "the condition number of an empty matrix is undefined",
        });
    }
    match kind {
        Norm::Two | Norm::NegTwo => {
            let s = f.svd_vals(a)?;
            let max = f.reduce(ReduceOp::Max, &s, 1)?;
            let min = f.reduce(ReduceOp::Min, &s, 1)?;
            // A zero matrix's 0/0 is +∞ (as NumPy's): 1 is added to the
            // numerator exactly when s_max is 0 (then s_min is too).
            let one = f.fill(f.meta(&max), 1.0)?;
            let nonzero = f.unary(UnaryOp::NonzeroMask, &max)?;
            let zero_matrix = f.binary(BinaryOp::Sub, &one, &nonzero)?;
            let (num, den) = if kind == Norm::Two { (max, min) } else { (min, max) };
            let num = f.binary(BinaryOp::Add, &zero_matrix, &num)?;
            f.binary(BinaryOp::Div, &num, &den)
        }
        _ => {
            check::square("cond", "a", &meta)?;
            match cond_by_inverse(f, a, kind) {
                Err(Error::Singular { .. }) => singular_items(f, a, kind, &meta),
                other => other,
            }
        }
    }
}

/// ‖a‖·‖a⁻¹‖ in the norm `kind` (a singular `a` is `Error::Singular`).
fn cond_by_inverse<F: Ops + ?Sized>(f: &mut F, a: &F::Tensor, kind: Norm) -> Result<F::Tensor> {
    let inverse = inv(f, a, SolveOptions::default())?;
    let na = norm(f, a, kind)?;
    let ni = norm(f, &inverse, kind)?;
    f.binary(BinaryOp::Mul, &na, &ni)
}

/// [`cond`] by the inverse when some batch item is singular: +∞ for a
/// single matrix; for a batch, item by item (each n×n block of `a` as one
/// `[n, n·B]` matrix's columns), the singular items +∞, the others
/// ‖a‖·‖a⁻¹‖, put back in the batch's shape.
fn singular_items<F: Ops + ?Sized>(
    f: &mut F,
    a: &F::Tensor,
    kind: Norm,
    meta: &TensorMeta,
) -> Result<F::Tensor> {
    let batch = meta.shape.batch(2);
    if batch.is_empty() {
        return infinities(f, meta, 2);
    }
    let n = meta.shape.dims()[0];
    let count = checked_product(batch).ok_or_else(|| Error::Overflow {
        op: "cond",
        arg: "a",
        shape: meta.shape.clone(),
    })?;
    let wide = f.reshape(a, &[n, n * count])?;
    let real = meta.dtype.real();
    let mut acc = f.fill(TensorMeta::new(real, Shape::new(&[count, 1])?), 0.0)?;
    for i in 0..count {
        let item = f.slice(&wide, [0, i * n], [n, n])?;
        let c = match cond_by_inverse(f, &item, kind) {
            Err(Error::Singular { .. }) => infinities(f, &f.meta(&item), 2)?,
            other => other?,
        };
        let c = f.reshape(&c, &[1, 1])?;
        let placed = f.single(Op::Prim(PrimOp::Pad(Pad { start: [i, 0], size: [count, 1] })), &[&c])?;
        acc = f.binary(BinaryOp::Add, &acc, &placed)?;
    }
    f.reshape(&acc, batch)
}

pub(super) fn matrix_power<F: Ops + ?Sized>(f: &mut F, a: &F::Tensor, k: i64) -> Result<F::Tensor> {
    let meta = f.meta(a);
    let m = check::square("matrix_power", "a", &meta)?;
    if k == 0 {
        return f.eye(meta.dtype, m.rows, m.batch);
    }
    let mut base = if k < 0 { inv(f, a, SolveOptions::default())? } else { a.clone() };
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

pub(super) fn multi_dot<F: Ops + ?Sized>(f: &mut F, chain: &[&F::Tensor]) -> Result<F::Tensor> {
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

fn chain_product<F: Ops + ?Sized>(
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

pub(super) fn vecdot<F: Ops + ?Sized>(f: &mut F, x: &F::Tensor, y: &F::Tensor) -> Result<F::Tensor> {
    let meta = f.meta(x);
    check::rank("vecdot", "x", &meta, ArgKind::Vector)?;
    let cx = f.unary(UnaryOp::Conj, x)?;
    let prod = f.binary(BinaryOp::Mul, &cx, y)?;
    sum_of(f, &prod, 1)
}

pub(super) fn vander<F: Ops + ?Sized>(
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
    let mut acc = f.fill(TensorMeta::new(meta.dtype, full), 0.0)?;
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

pub(super) fn tensorinv<F: Ops + ?Sized>(f: &mut F, a: &F::Tensor, ind: usize) -> Result<F::Tensor> {
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
    let inverse = inv(f, &matrix, SolveOptions::default())?;
    let mut out: heapless::Vec<usize, MAX_RANK> = heapless::Vec::new();
    for &d in dims[ind..].iter().chain(&dims[..ind]) {
        let _ = out.push(d); // same count as `dims`, which fits MAX_RANK
    }
    f.reshape(&inverse, &out)
}

pub(super) fn tensorsolve<F: Ops + ?Sized>(f: &mut F, a: &F::Tensor, b: &F::Tensor) -> Result<F::Tensor> {
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
