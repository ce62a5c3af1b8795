//! The fuzz's calls: every op and primitive of lindiff (and the composites
//! of the face), with options and input shapes drawn at random, inputs
//! drawn from [`Class`]es.

use super::values::{any_class, dim, matrix, Class};
use crate::dense::{Re, Rng};
use lindiff_core::ad::ad_support_ops;
use lindiff_core::face::Norm;
use lindiff_core::op::{Diagonal, FullPivLuSolve, FullPivLuSolvePrepared, Side, Triangle};
use lindiff_core::op::{
    HouseholderQrApply, LinalgOp, LowRankApprox, Lstsq, LstsqOptions, LuFactorSolve, LuSolvePrepared, MatOp,
    Pinv, PinvOptions, Qr, QrMode, QrOptions, RankRevealingQr, RankRevealingQrOptions, SingularCheck,
    SolveOptions, SvdDriver, SvdFull, SvdOptions, SvdTruncated, SvdVals, SvdVectors, TriangularSolve,
    TriangularSolveOptions, Truncation,
};
use lindiff_core::prim::{
    Adjoint, Fill, Matmul, Pad, Pair, PairInv, PrimOp, RankMask, Reduce, ReduceOp, Regularize, Reshape,
    Scale, Slice, Spread, TriMask, Unary, UnaryOp,
};
use lindiff_core::{DType, Element, Op, RealScalar, Scalar, Shape, TensorMeta};

/// One input: its dims, data, class and the exponent it was scaled by.
#[derive(Clone, Debug)]
pub struct Arg<T> {
    /// Dims (column-major, `[rows, cols, batch…]` for matrices).
    pub dims: Vec<usize>,
    /// The elements.
    pub data: ArgData<T>,
    /// How the entries were drawn.
    pub class: Class,
    /// The power of two they were scaled by (0: none).
    pub exponent: i32,
}

/// Float or integer elements.
#[derive(Clone, Debug)]
pub enum ArgData<T> {
    /// Elements of the case's dtype.
    Float(Vec<T>),
    /// i64 elements (permutations, ranks).
    Int(Vec<i64>),
}

/// A face method built from ops (run on the direct and eager faces only).
#[derive(Clone, Copy, Debug)]
pub enum Composite {
    /// `norm(a, kind)` (a vector for `Norm::Vector`).
    Norm(Norm),
    /// `cond(a, kind)`.
    Cond(Norm),
    /// `inv_with_options(a, options)`.
    Inv(SolveOptions),
    /// `solve_with_options(a, b, options)`.
    Solve(SolveOptions),
    /// `matrix_power(a, k)`.
    MatrixPower(i64),
    /// `vecdot(x, y)`.
    Vecdot,
}

/// What a case calls.
#[derive(Clone, Debug)]
pub enum Target {
    /// An op or primitive (direct face, `call::run_into`, gradient).
    Op(Op),
    /// A composite (direct face, gradient).
    Composite(Composite),
}

impl Target {
    /// The name in reports.
    pub fn name(&self) -> String {
        match self {
            Target::Op(op) => op.name().to_string(),
            Target::Composite(c) => format!("{c:?}"),
        }
    }
}

/// One fuzz call: what, and on which inputs.
#[derive(Clone, Debug)]
pub struct Case<T> {
    /// The op or composite.
    pub target: Target,
    /// Its inputs.
    pub args: Vec<Arg<T>>,
}

fn float<T: Scalar>(rng: &mut Rng, dims: &[usize], class: Class) -> Arg<T> {
    let rows = dims.first().copied().unwrap_or(1);
    let rest: usize = dims.iter().skip(1).product();
    let (data, exponent) = matrix::<T>(rng, rows, rest, class);
    Arg { dims: dims.to_vec(), data: ArgData::Float(data), class, exponent }
}

fn int<T>(dims: &[usize], data: Vec<i64>) -> Arg<T> {
    Arg { dims: dims.to_vec(), data: ArgData::Int(data), class: Class::Integer, exponent: 0 }
}

/// A permutation of 0..n (one time in ten not a permutation).
fn perm<T>(rng: &mut Rng, n: usize) -> Arg<T> {
    let mut p: Vec<i64> = (0..n as i64).collect();
    for i in (1..n).rev() {
        let j = (rng.uniform() * (i + 1) as f64) as usize;
        p.swap(i, j);
    }
    if n > 0 && rng.uniform() < 0.1 {
        let at = (rng.uniform() * n as f64) as usize;
        p[at] = if rng.uniform() < 0.5 { n as i64 } else { p[(at + 1) % n] };
    }
    int(&[n], p)
}

/// A packed LU factor: unit-lower L with |l| ≤ 1 below the diagonal, U of
/// `class` on and above it.
fn packed_lu<T: Scalar>(rng: &mut Rng, n: usize, class: Class) -> Arg<T> {
    let mut u = float::<T>(rng, &[n, n], class);
    if let ArgData::Float(d) = &mut u.data {
        for j in 0..n {
            for i in j + 1..n {
                d[i + j * n] = rng.scalar::<T>().scale(Re::<T>::from_f64(0.7));
            }
        }
    }
    u
}

/// A Hermitian positive definite n×n matrix B Bᴴ + n·I of `class`'s scale
/// (the other classes: as drawn, positive definite or not).
fn spd<T: Scalar>(rng: &mut Rng, n: usize, class: Class) -> Arg<T> {
    let scaled = matches!(class, Class::Huge | Class::Small | Class::Tiny | Class::Subnormal);
    if !(scaled || class == Class::Normal) || rng.uniform() < 0.2 {
        return float(rng, &[n, n], class);
    }
    let b: Vec<T> = (0..n * n).map(|_| rng.scalar()).collect();
    let e = Class::exponent::<T>()(class);
    let data = (0..n * n)
        .map(|idx| {
            let (i, j) = (idx % n, idx / n);
            let s = (0..n).fold(T::zero(), |s, l| s + b[i + l * n] * b[j + l * n].conj());
            let s = if i == j { s + T::from_f64(n as f64) } else { s };
            super::values::scaled(s, e)
        })
        .collect();
    Arg { dims: vec![n, n], data: ArgData::Float(data), class, exponent: e }
}

fn pick<X: Copy>(rng: &mut Rng, xs: &[X]) -> X {
    xs[(rng.uniform() * xs.len() as f64) as usize]
}

fn mat_op(rng: &mut Rng) -> MatOp {
    pick(rng, &[MatOp::Identity, MatOp::Transpose, MatOp::Adjoint])
}

fn solve_options(rng: &mut Rng) -> SolveOptions {
    SolveOptions::default()
        .check(pick(rng, &[SingularCheck::PivotRatio, SingularCheck::ConditionEstimate, SingularCheck::None]))
}

/// Every op and primitive ([`ad_support_ops`]) and the composites.
pub fn targets() -> Vec<Target> {
    let mut all: Vec<Target> = ad_support_ops().map(Target::Op).collect();
    for kind in
        [Norm::Fro, Norm::Nuc, Norm::One, Norm::NegOne, Norm::Inf, Norm::NegInf, Norm::Two, Norm::NegTwo]
    {
        all.push(Target::Composite(Composite::Norm(kind)));
        all.push(Target::Composite(Composite::Cond(kind)));
    }
    for p in [1.0, 2.0, 3.0, f64::INFINITY] {
        all.push(Target::Composite(Composite::Norm(Norm::Vector(p))));
    }
    all.push(Target::Composite(Composite::Inv(SolveOptions::default())));
    all.push(Target::Composite(Composite::Solve(SolveOptions::default())));
    all.push(Target::Composite(Composite::MatrixPower(0)));
    all.push(Target::Composite(Composite::Vecdot));
    all
}

/// A case for `target` with random options, shapes (dims at most
/// `max_dim`) and classes (`None` when the target cannot take dtype `T`,
/// e.g. `exp` of a complex matrix).
pub fn case<T: Scalar + Element>(rng: &mut Rng, target: &Target, max_dim: usize) -> Option<Case<T>> {
    let (m, n, r) = (dim(rng, max_dim), dim(rng, max_dim), dim(rng, max_dim).min(3));
    let c = any_class(rng);
    // Right-hand sides: the matrix's class most of the time.
    let cb = if rng.uniform() < 0.7 { c } else { any_class(rng) };
    let k = m.min(n);
    let complex = T::IS_COMPLEX;
    let real = <T as Element>::DTYPE.real();
    let (target, args) = match target {
        Target::Composite(comp) => {
            let comp = match *comp {
                Composite::Inv(_) => Composite::Inv(solve_options(rng)),
                Composite::Solve(_) => Composite::Solve(solve_options(rng)),
                Composite::MatrixPower(_) => Composite::MatrixPower((rng.uniform() * 7.0) as i64 - 3),
                other => other,
            };
            let args = match comp {
                Composite::Norm(Norm::Vector(_)) | Composite::Vecdot => {
                    let x = float(rng, &[m], c);
                    if matches!(comp, Composite::Vecdot) {
                        vec![x, float(rng, &[m], cb)]
                    } else {
                        vec![x]
                    }
                }
                Composite::Norm(_) => vec![float(rng, &[m, n], c)],
                Composite::Cond(Norm::Two | Norm::NegTwo) => {
                    vec![float(rng, &[m, n], c)]
                }
                Composite::Solve(_) => vec![float(rng, &[n, n], c), float(rng, &[n, r], cb)],
                _ => vec![float(rng, &[n, n], c)],
            };
            (Target::Composite(comp), args)
        }
        Target::Op(Op::Linalg(l)) => {
            let mat = |rng: &mut Rng, r, c_, class| float::<T>(rng, &[r, c_], class);
            let (op, args) = match l {
                LinalgOp::Svd(_) | LinalgOp::SvdVals(_) | LinalgOp::SvdFull(_) => {
                    let driver = pick(rng, &[SvdDriver::Auto, SvdDriver::QrIteration, SvdDriver::Jacobi]);
                    let vectors = pick(rng, &[SvdVectors::Both, SvdVectors::Left]);
                    let opts = SvdOptions { driver, vectors, ..SvdOptions::default() };
                    let op = match l {
                        LinalgOp::Svd(_) => LinalgOp::Svd(lindiff_core::op::Svd(opts)),
                        LinalgOp::SvdVals(_) => LinalgOp::SvdVals(SvdVals(opts)),
                        _ => LinalgOp::SvdFull(SvdFull(opts.vectors(SvdVectors::Both))),
                    };
                    (op, vec![mat(rng, m, n, c)])
                }
                LinalgOp::SvdTruncated(_) => {
                    let t = if rng.uniform() < 0.5 {
                        Truncation::Count((rng.uniform() * 4.0) as usize)
                    } else {
                        Truncation::Tolerance { atol: 0.0, rtol: pick(rng, &[1e-3, 0.5]) }
                    };
                    (LinalgOp::SvdTruncated(SvdTruncated(t)), vec![mat(rng, m, n, c)])
                }
                LinalgOp::LowRankApprox(_) => {
                    let t = Truncation::Count((rng.uniform() * 4.0) as usize);
                    (LinalgOp::LowRankApprox(LowRankApprox(t)), vec![mat(rng, m, n, c)])
                }
                LinalgOp::Qr(_) => {
                    let mode = pick(rng, &[QrMode::Reduced, QrMode::Complete]);
                    (LinalgOp::Qr(Qr(QrOptions { mode })), vec![mat(rng, m, n, c)])
                }
                LinalgOp::RankRevealingQr(_) => {
                    let o = RankRevealingQrOptions { atol: 0.0, rtol: None };
                    (LinalgOp::RankRevealingQr(RankRevealingQr(o)), vec![mat(rng, m, n, c)])
                }
                LinalgOp::HouseholderQrAppend(_) => {
                    (l.clone(), vec![mat(rng, m, n, c), float(rng, &[k], Class::Normal), mat(rng, m, r, cb)])
                }
                LinalgOp::HouseholderQrQ(_) => {
                    (l.clone(), vec![mat(rng, m, n, c), float(rng, &[k], Class::Normal)])
                }
                LinalgOp::HouseholderQrApply(_) => (
                    LinalgOp::HouseholderQrApply(HouseholderQrApply(mat_op(rng))),
                    vec![mat(rng, m, n, c), float(rng, &[k], Class::Normal), mat(rng, m, r, cb)],
                ),
                LinalgOp::Eigh(_) | LinalgOp::EighVals(_) | LinalgOp::Cholesky(_) => {
                    (l.clone(), vec![spd(rng, n, c)])
                }
                LinalgOp::Eig(_)
                | LinalgOp::EigVals(_)
                | LinalgOp::Det(_)
                | LinalgOp::Slogdet(_)
                | LinalgOp::Adjugate(_) => (l.clone(), vec![mat(rng, n, n, c)]),
                LinalgOp::LuFactorSolve(_) => (
                    LinalgOp::LuFactorSolve(LuFactorSolve(solve_options(rng))),
                    vec![mat(rng, n, n, c), mat(rng, n, r, cb)],
                ),
                LinalgOp::FullPivLuSolve(_) => (
                    LinalgOp::FullPivLuSolve(FullPivLuSolve(solve_options(rng))),
                    vec![mat(rng, n, n, c), mat(rng, n, r, cb)],
                ),
                LinalgOp::LuSolvePrepared(_) => (
                    LinalgOp::LuSolvePrepared(LuSolvePrepared(mat_op(rng), solve_options(rng))),
                    vec![packed_lu(rng, n, c), perm(rng, n), mat(rng, n, r, cb)],
                ),
                LinalgOp::FullPivLuSolvePrepared(_) => (
                    LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared(mat_op(rng), solve_options(rng))),
                    vec![packed_lu(rng, n, c), perm(rng, n), perm(rng, n), mat(rng, n, r, cb)],
                ),
                LinalgOp::TriangularSolve(_) => {
                    let side = pick(rng, &[Side::Left, Side::Right]);
                    let o = TriangularSolveOptions {
                        triangle: pick(rng, &[Triangle::Lower, Triangle::Upper]),
                        diagonal: pick(rng, &[Diagonal::NonUnit, Diagonal::Unit]),
                        side,
                        op: mat_op(rng),
                        ..TriangularSolveOptions::default()
                    };
                    let b = if side == Side::Left { mat(rng, n, r, cb) } else { mat(rng, r, n, cb) };
                    (LinalgOp::TriangularSolve(TriangularSolve(o)), vec![mat(rng, n, n, c), b])
                }
                LinalgOp::Pinv(_) => (LinalgOp::Pinv(Pinv(PinvOptions::default())), vec![mat(rng, m, n, c)]),
                LinalgOp::Lstsq(_) => (
                    LinalgOp::Lstsq(Lstsq(LstsqOptions::default())),
                    vec![mat(rng, m, n, c), mat(rng, m, r, cb)],
                ),
                // Everything else takes one m×n (or n×n: shape errors are
                // typed errors too) matrix.
                _ => (l.clone(), vec![mat(rng, m, n, c)]),
            };
            (Target::Op(Op::Linalg(op)), args)
        }
        Target::Op(Op::Prim(p)) => {
            let x = |rng: &mut Rng| float::<T>(rng, &[m, n], c);
            let (op, args) = match p {
                PrimOp::Matmul(_) => {
                    let mm = Matmul::new(mat_op(rng), mat_op(rng));
                    let a = if mm.a == MatOp::Identity { [m, k] } else { [k, m] };
                    let b = if mm.b == MatOp::Identity { [k, n] } else { [n, k] };
                    (PrimOp::Matmul(mm), vec![float(rng, &a, c), float(rng, &b, cb)])
                }
                PrimOp::Unary(u) => {
                    if (matches!(u.0, UnaryOp::Exp | UnaryOp::Log) && complex)
                        || (u.0 == UnaryOp::MulI && !complex)
                    {
                        return None;
                    }
                    (PrimOp::Unary(Unary(u.0)), vec![x(rng)])
                }
                PrimOp::Binary(b) => (PrimOp::Binary(*b), vec![x(rng), float(rng, &[m, n], cb)]),
                PrimOp::Scale(_) => {
                    (PrimOp::Scale(Scale(pick(rng, &[0.0, -2.5, 1e300, 1e-300]))), vec![x(rng)])
                }
                PrimOp::Adjoint(_) => (PrimOp::Adjoint(Adjoint(mat_op(rng))), vec![x(rng)]),
                PrimOp::TriMask(_) => {
                    let t =
                        TriMask { triangle: pick(rng, &[Triangle::Lower, Triangle::Upper]), diagonal: 0.5 };
                    (PrimOp::TriMask(t), vec![float(rng, &[n, n], c)])
                }
                PrimOp::DiagEmbed(_) | PrimOp::PairInv(_) => {
                    if matches!(p, PrimOp::PairInv(_)) && complex {
                        return None;
                    }
                    let op = match p {
                        PrimOp::PairInv(_) => PrimOp::PairInv(PairInv {
                            pair: pick(rng, &[Pair::Diff, Pair::Sum]),
                            regularize: Regularize::Cutoff { relative: 1e-8 },
                        }),
                        other => other.clone(),
                    };
                    (op, vec![float(rng, &[m], c)])
                }
                PrimOp::ScaleCols(_) => (p.clone(), vec![x(rng), float(rng, &[n], cb)]),
                PrimOp::ScaleRows(_) => (p.clone(), vec![x(rng), float(rng, &[m], cb)]),
                PrimOp::Reduce(r0) => {
                    if r0.op != ReduceOp::Sum && complex {
                        return None;
                    }
                    (PrimOp::Reduce(Reduce { op: r0.op, core_rank: pick(rng, &[1, 2]) }), vec![x(rng)])
                }
                PrimOp::Reshape(_) => {
                    let dims = heapless::Vec::from_slice(&[n, m]).unwrap_or_default();
                    (PrimOp::Reshape(Reshape { dims }), vec![x(rng)])
                }
                PrimOp::Spread(_) => {
                    let core = heapless::Vec::from_slice(&[n]).unwrap_or_default();
                    (PrimOp::Spread(Spread { core }), vec![float(rng, &[m], c)])
                }
                PrimOp::Slice(_) => {
                    let (i, j) = (
                        (rng.uniform() * (m + 1) as f64) as usize,
                        (rng.uniform() * (n + 1) as f64) as usize,
                    );
                    (PrimOp::Slice(Slice { start: [i, j], size: [m - i, n - j] }), vec![x(rng)])
                }
                PrimOp::Pad(_) => (PrimOp::Pad(Pad { start: [1, 0], size: [m + 1, n + r] }), vec![x(rng)]),
                PrimOp::Fill(_) => {
                    let meta = TensorMeta::new(<T as Element>::DTYPE, Shape::new(&[m, n]).ok()?);
                    (PrimOp::Fill(Fill { meta, value: pick(rng, &[0.0, -1.5, 1e300]) }), vec![])
                }
                PrimOp::Eye(e) => {
                    let mut e = e.clone();
                    e.dtype = <T as Element>::DTYPE;
                    e.n = n;
                    (PrimOp::Eye(e), vec![])
                }
                PrimOp::RankMask(_) => {
                    let rank = (rng.uniform() * 6.0) as i64 - 1;
                    (PrimOp::RankMask(RankMask { k: n, dtype: real }), vec![int(&[], vec![rank])])
                }
                // DiagPart, PivotPhase: one matrix.
                other => (other.clone(), vec![x(rng)]),
            };
            (Target::Op(Op::Prim(op)), args)
        }
        Target::Op(_) => return None,
    };
    let _ = DType::F64;
    let _ = <Re<T> as RealScalar>::EPSILON;
    Some(Case { target, args })
}
