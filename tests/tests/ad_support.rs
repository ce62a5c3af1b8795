//! `ad_support()` agrees with the rules: for every op of the table (each
//! linear-algebra op and each primitive, in f64 and c64 where the op takes
//! the dtype), each output is differentiated on its own through the eager
//! face with the loss Σ|y + W|² (W a fixed random tensor, so the loss sees
//! phases and is not constant on unitary outputs; Σ|W|²∘|y|² on complex
//! singular vectors and eigenvectors, whose column phases are free):
//!
//! * `Supported` outputs give a finite gradient that matches a central
//!   finite difference along a random direction (on inputs where the
//!   caveats do not bite: generic, well-conditioned, square where needed);
//! * `NotDifferentiable` outputs give exactly the error
//!   `op: output `name` is not differentiable here: why` with the table's
//!   `why`, `Unsupported` outputs exactly
//!   `op: the derivative of output `name` is not implemented`;
//! * integer outputs (which no real loss can read) are exactly the ones the
//!   table marks "integer-valued".
//!
//! A second test checks the shape conditions the caveats name (full SVD and
//! complete QR of tall and wide inputs), a third the option-dependent
//! entries.

use lindiff_core::ad::{ad_support, ad_support_ops, ad_support_table, Eager, Support, Tracked};
use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::op::{
    Diagonal, Eigh, EighOptions, FullPivLuSolvePrepared, HouseholderQrApply, LinalgOp, LowRankApprox,
    LuSolvePrepared, Qr, QrMode, QrOptions, Side, Svd, SvdFull, SvdOptions, SvdTruncated, SvdVectors,
    Triangle, TriangularSolve, TriangularSolveOptions, Truncation,
};
use lindiff_core::prim::{
    Adjoint, BinaryOp, Matmul, Pad, PrimOp, Reduce, ReduceOp, Reshape, Slice, Spread, UnaryOp,
};
use lindiff_core::{DType, Element, Face, MatOp, Op, Ops, RealScalar, Result, Scalar};
use lindiff_tests::ad::{inner, Input};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;
type Eg<P> = Eager<Direct<P>>;

/// One input of a case.
enum Arg<T> {
    /// A float tensor: watched, and perturbed by the finite-difference check.
    Float(Input<T>),
    /// An integer tensor (a permutation): a constant.
    Int(Tensor),
}

/// Σ |y + w|² over every element: a real scalar. For an output whose
/// columns carry a free complex phase (`phased`), Σ |w|²∘|y|² instead: a
/// loss that reads the phase is not a function of the input, and reverse
/// mode reports it (`tests/ad_gauge.rs`).
fn loss<F: Face + ?Sized>(f: &mut F, y: &F::Tensor, w: &F::Tensor, phased: bool) -> Result<F::Tensor> {
    let sq = if phased {
        let w2 = f.unary(UnaryOp::Abs2, w)?;
        let y2 = f.unary(UnaryOp::Abs2, y)?;
        f.binary(BinaryOp::Mul, &w2, &y2)?
    } else {
        let shifted = f.binary(BinaryOp::Add, y, w)?;
        f.unary(UnaryOp::Abs2, &shifted)?
    };
    let rank = f.meta(&sq).shape.rank();
    f.reduce(ReduceOp::Sum, &sq, rank)
}

/// Whether output `out` of `op` is a complex matrix of singular vectors or
/// eigenvectors whose column phases the gauge check watches.
fn phased(op: &Op, out: usize, dtype: DType) -> bool {
    let vectors = match op {
        Op::Linalg(LinalgOp::Svd(_) | LinalgOp::SvdFull(_) | LinalgOp::SvdTruncated(_)) => out != 1,
        Op::Linalg(LinalgOp::Eigh(_)) => out == 1,
        _ => false,
    };
    vectors && dtype.is_complex()
}

/// A fixed random tensor of `dtype` (f64 or c64) and `dims`.
fn weight<P: TestProvider>(face: &mut Direct<P>, dtype: DType, dims: &[usize], seed: u64) -> Tensor {
    let mut rng = Rng::new(seed);
    let len = dims.iter().product();
    match dtype {
        DType::F64 => face.tensor(dims, &(0..len).map(|_| rng.scalar::<f64>()).collect::<Vec<_>>()).unwrap(),
        DType::C64 => face.tensor(dims, &(0..len).map(|_| rng.scalar::<C64>()).collect::<Vec<_>>()).unwrap(),
        other => panic!("no weight of dtype {other:?}"),
    }
}

fn input<T: Scalar>(m: &Dense<T>) -> Arg<T> {
    Arg::Float(Input::matrix(m))
}

fn vector<T: Scalar>(data: Vec<T>) -> Arg<T> {
    Arg::Float(Input { dims: vec![data.len()], data })
}

/// A float tensor computed on the direct face, as case data.
fn read<T: Scalar + Element>(t: &Tensor) -> Arg<T> {
    Arg::Float(Input { dims: t.dims().to_vec(), data: t.to_vec::<T>().unwrap() })
}

/// Entries with real part in [1, 2] and imaginary part in [−½, ½]: away
/// from 0 and from the branch cut of sqrt.
fn positive<T: Scalar>(rng: &mut Rng, rows: usize, cols: usize) -> Dense<T> {
    let shift = T::from_f64(1.5);
    let half = Re::<T>::from_f64(0.5);
    Dense::from_fn(rows, cols, |_, _| shift + rng.scalar::<T>().scale(half))
}

fn plus_diagonal<T: Scalar>(a: &Dense<T>, d: f64) -> Dense<T> {
    let mut a = a.clone();
    for i in 0..a.rows.min(a.cols) {
        a[(i, i)] += T::from_f64(d);
    }
    a
}

/// A runnable instance of `op` (the table's instance where it runs as is)
/// with valid, well-conditioned inputs in `T`; `None` when the op does not
/// take `T`. The arms list every variant the table holds; a new one fails
/// here by name.
fn case<T: Scalar + Element, P: TestProvider>(face: &mut Direct<P>, op: &Op) -> Option<(Op, Vec<Arg<T>>)> {
    let complex = T::DTYPE.is_complex();
    let mut rng = Rng::new(7);
    // Generic but well-conditioned (condition numbers 4 and 3).
    let a: Dense<T> = rng.with_spectrum(4, 4, &[4.0, 3.0, 2.0, 1.0]);
    let tall: Dense<T> = rng.with_spectrum(5, 3, &[3.0, 2.0, 1.0]);
    let b: Dense<T> = rng.matrix(4, 2);
    let b5: Dense<T> = rng.matrix(5, 2);
    let spd = plus_diagonal(&a.matmul(&a.adjoint()), 4.0);
    // Eigenvalues near 1, 2, 3, 4: simple, with distinct real parts.
    let q = rng.unitary::<T>(4);
    let spectrum: Vec<Re<T>> = [1.0, 2.0, 3.0, 4.0].iter().map(|&x| Re::<T>::from_f64(x)).collect();
    let nudge: Dense<T> = rng.matrix(4, 4);
    let general =
        q.scale_cols(&spectrum).matmul(&q.adjoint()).sub(&nudge.scale_cols(&[Re::<T>::from_f64(-0.05); 4]));
    let triangular = plus_diagonal(&a, 4.0);
    let x: Dense<T> = positive(&mut rng, 4, 3);
    let y: Dense<T> = positive(&mut rng, 4, 3);
    let t = |face: &mut Direct<P>, m: &Dense<T>| face.tensor(&[m.rows, m.cols], &m.data).unwrap();
    let same = |args: Vec<Arg<T>>| Some((op.clone(), args));
    match op {
        Op::Linalg(l) => match l {
            // Complete mode: a tall input has no derivative of q (see
            // `caveat_conditions_bite_as_stated`).
            LinalgOp::Qr(q) if q.0.mode == QrMode::Complete => same(vec![input(&a)]),
            LinalgOp::Svd(_)
            | LinalgOp::SvdVals(_)
            | LinalgOp::Qr(_)
            | LinalgOp::RankRevealingQr(_)
            | LinalgOp::HouseholderQrFactor(_) => same(vec![input(&tall)]),
            // Square: u and vh have no completion columns.
            LinalgOp::SvdFull(_) => same(vec![input(&a)]),
            // Keeps 2 of the 3 triplets (s = 3, 2, 1: the cut is separated).
            LinalgOp::SvdTruncated(_) => Some((
                Op::Linalg(LinalgOp::SvdTruncated(SvdTruncated(Truncation::Count(2)))),
                vec![input(&tall)],
            )),
            LinalgOp::HouseholderQrAppend(_) => {
                let first = t(face, &tall.cols_range(0, 2));
                let st = face.householder_qr(&first).unwrap();
                same(vec![read(&st.h), read(&st.tau), input(&b5)])
            }
            LinalgOp::HouseholderQrQ(_) | LinalgOp::HouseholderQrR(_) | LinalgOp::HouseholderQrApply(_) => {
                let whole = t(face, &tall);
                let st = face.householder_qr(&whole).unwrap();
                let mut args = vec![read(&st.h)];
                if !matches!(l, LinalgOp::HouseholderQrR(_)) {
                    args.push(read(&st.tau));
                }
                if matches!(l, LinalgOp::HouseholderQrApply(_)) {
                    args.push(input(&b5));
                }
                same(args)
            }
            LinalgOp::Eigh(_)
            | LinalgOp::EighVals(_)
            | LinalgOp::FunmHermitian(_)
            | LinalgOp::FunmHermitianFactors(_)
            | LinalgOp::Cholesky(_) => same(vec![input(&spd)]),
            LinalgOp::Eig(_) | LinalgOp::EigVals(_) => same(vec![input(&general)]),
            LinalgOp::Lu(_)
            | LinalgOp::LuFactor(_)
            | LinalgOp::FullPivLu(_)
            | LinalgOp::FullPivLuFactor(_)
            | LinalgOp::Det(_)
            | LinalgOp::Slogdet(_)
            | LinalgOp::Adjugate(_)
            | LinalgOp::Polar(_)
            | LinalgOp::Pinv(_)
            | LinalgOp::MatrixRank(_) => same(vec![input(&a)]),
            LinalgOp::LowRankApprox(_) => Some((
                Op::Linalg(LinalgOp::LowRankApprox(LowRankApprox(Truncation::Count(2)))),
                vec![input(&a)],
            )),
            // Eigenvalues 1…4 (spd) are inside every function's domain.
            LinalgOp::Expm(_) | LinalgOp::Logm(_) | LinalgOp::Sqrtm(_) => same(vec![input(&general)]),
            LinalgOp::ExpmFactors(_) => same(vec![input(&general)]),
            LinalgOp::ExpmFrechetFactored(_) => {
                // The terms are functions of `a` that the rule reads as data
                // (their tangents are `a`'s): constants here, as above.
                let ta = t(face, &general);
                let outs = face.apply(Op::Linalg(LinalgOp::ExpmFactors(Default::default())), &[&ta]).unwrap();
                let (terms, piv) = (outs[1].clone().unwrap(), outs[2].clone().unwrap());
                same(vec![Arg::Int(ta), Arg::Int(terms), Arg::Int(piv), input(&a)])
            }
            LinalgOp::ExpmFrechet(_) | LinalgOp::LogmFrechet(_) | LinalgOp::SqrtmFrechet(_) => {
                same(vec![input(&general), input(&a)])
            }
            // The factors are functions of `a` that the rules read as data
            // (their tangents are `a`'s): constants here, so the check
            // follows the linear argument alone.
            LinalgOp::FunmHermitianFrechet(_) | LinalgOp::FunmHermitianSecond(_) => {
                let f = LinalgOp::FunmHermitianFactors(lindiff_core::op::FunmHermitianFactors(
                    Default::default(),
                ));
                let ts = t(face, &spd);
                let outs = face.apply(Op::Linalg(f), &[&ts]).unwrap();
                let [v, w, gamma] = [2, 1, 3].map(|i| Arg::Int(outs[i].clone().unwrap()));
                let mut args =
                    if matches!(l, LinalgOp::FunmHermitianFrechet(_)) { vec![Arg::Int(ts)] } else { vec![] };
                args.extend([v, w, gamma]);
                if matches!(l, LinalgOp::FunmHermitianSecond(_)) {
                    args.push(Arg::Int(t(face, &general)));
                }
                args.push(input(&a));
                same(args)
            }
            LinalgOp::LuFactorSolve(_) | LinalgOp::FullPivLuSolve(_) => same(vec![input(&a), input(&b)]),
            LinalgOp::Lstsq(_) => same(vec![input(&tall), input(&b5)]),
            LinalgOp::LuSolvePrepared(_) => {
                let ta = t(face, &a);
                let f = face.apply(Op::Linalg(LinalgOp::LuFactor(Default::default())), &[&ta]).unwrap();
                let (lu, perm) = (f[0].clone().unwrap(), f[1].clone().unwrap());
                same(vec![read(&lu), Arg::Int(perm), input(&b)])
            }
            LinalgOp::FullPivLuSolvePrepared(_) => {
                let factor = Op::Linalg(LinalgOp::FullPivLuFactor(Default::default()));
                let ta = t(face, &a);
                let f = face.apply(factor, &[&ta]).unwrap();
                let [lu, rows, cols] = [0, 1, 2].map(|i| f[i].clone().unwrap());
                same(vec![read(&lu), Arg::Int(rows), Arg::Int(cols), input(&b)])
            }
            LinalgOp::TriangularSolve(ts) if ts.0.side == Side::Right => {
                same(vec![input(&triangular), input(&b.adjoint())])
            }
            LinalgOp::TriangularSolve(_) => same(vec![input(&triangular), input(&b)]),
        },
        Op::Prim(p) => match p {
            PrimOp::Matmul(m) => {
                // op_a(a) 4×3 times op_b(b) 3×2.
                let c: Dense<T> = rng.matrix(3, 2);
                let stored =
                    |how, m: &Dense<T>| if how == MatOp::Identity { m.clone() } else { m.transpose() };
                same(vec![input(&stored(m.a, &x)), input(&stored(m.b, &c))])
            }
            PrimOp::Unary(u) => match u.0 {
                UnaryOp::Exp | UnaryOp::Log if complex => None,
                UnaryOp::MulI if !complex => None,
                _ => same(vec![input(&x)]),
            },
            PrimOp::Binary(_) => same(vec![input(&x), input(&y)]),
            PrimOp::Reduce(r) if r.op != ReduceOp::Sum && complex => None,
            PrimOp::Reduce(r) => {
                Some((Op::Prim(PrimOp::Reduce(Reduce { op: r.op, core_rank: 2 })), vec![input(&x)]))
            }
            PrimOp::Scale(_) | PrimOp::Adjoint(_) | PrimOp::DiagPart(_) | PrimOp::PivotPhase(_) => {
                same(vec![input(&x)])
            }
            PrimOp::TriMask(_) => same(vec![input(&a)]),
            PrimOp::DiagEmbed(_) => same(vec![vector(x.data[..3].to_vec())]),
            PrimOp::ScaleCols(_) => same(vec![input(&x), vector(y.data[..3].to_vec())]),
            PrimOp::ScaleRows(_) => same(vec![input(&x), vector(y.data[..4].to_vec())]),
            PrimOp::Reshape(_) => {
                let dims = heapless::Vec::from_slice(&[2, 6]).unwrap();
                Some((Op::Prim(PrimOp::Reshape(Reshape { dims })), vec![input(&x)]))
            }
            PrimOp::Spread(_) => {
                let core = heapless::Vec::from_slice(&[2]).unwrap();
                Some((Op::Prim(PrimOp::Spread(Spread { core })), vec![vector(x.data[..3].to_vec())]))
            }
            PrimOp::Slice(_) => {
                Some((Op::Prim(PrimOp::Slice(Slice { start: [1, 0], size: [2, 2] })), vec![input(&x)]))
            }
            PrimOp::Pad(_) => {
                Some((Op::Prim(PrimOp::Pad(Pad { start: [1, 1], size: [5, 4] })), vec![input(&x)]))
            }
            // Constants: no input to differentiate with respect to.
            PrimOp::Fill(_) | PrimOp::Eye(_) => None,
            PrimOp::PairInv(_) => same(vec![vector((1..=4).map(|i| T::from_f64(i as f64)).collect())]),
            // Its only input is an integer count: nothing to differentiate.
            PrimOp::RankMask(_) => None,
            // A 0/1 mask of its input (piecewise constant): no rule to check.
            PrimOp::ExtremeMask(_) => None,
        },
        // Internal ops are not in the support table.
        Op::Internal(_) => None,
    }
}

/// The float inputs of a case, perturbed by `h` along `dirs` (one per float
/// input, in order).
fn perturbed<T: Scalar>(args: &[Arg<T>], h: f64, dirs: &[Input<T>]) -> Vec<Arg<T>> {
    let mut dirs = dirs.iter();
    args.iter()
        .map(|a| match a {
            Arg::Float(x) => Arg::Float(x.axpy(h, dirs.next().unwrap())),
            Arg::Int(t) => Arg::Int(t.clone()),
        })
        .collect()
}

/// Output `out` of `op` on the direct face.
fn forward<T: Scalar + Element, P: TestProvider>(
    face: &mut Direct<P>,
    op: &Op,
    args: &[Arg<T>],
    out: usize,
) -> Option<Tensor> {
    let ts: Vec<Tensor> = args
        .iter()
        .map(|a| match a {
            Arg::Float(x) => face.tensor(&x.dims, &x.data).unwrap(),
            Arg::Int(t) => t.clone(),
        })
        .collect();
    let refs: Vec<&Tensor> = ts.iter().collect();
    let outs = face.apply(op.clone(), &refs).unwrap_or_else(|e| panic!("{}: forward failed: {e}", op.name()));
    outs[out].clone()
}

/// The loss on the direct face.
fn value<T: Scalar + Element, P: TestProvider>(
    face: &mut Direct<P>,
    op: &Op,
    args: &[Arg<T>],
    out: usize,
    seed: u64,
) -> f64 {
    let y = forward(face, op, args, out).unwrap();
    let meta = face.meta(&y);
    let w = weight(face, meta.dtype, meta.shape.dims(), seed);
    let l = loss(face, &y, &w, phased(op, out, meta.dtype)).unwrap();
    l.to_vec::<f64>().unwrap()[0]
}

/// The gradients of the loss on output `out` with respect to every float
/// input, through the eager face.
fn gradients<T: Scalar + Element, P: TestProvider>(
    op: &Op,
    args: &[Arg<T>],
    out: usize,
    seed: u64,
) -> Result<Vec<Vec<T>>> {
    let mut eager: Eg<P> = Eager::new(Direct::new(P::default()));
    let mut vars: Vec<Tracked<Tensor>> = Vec::new();
    let mut watched = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let v = match a {
            Arg::Float(x) => {
                let t = eager.inner().tensor(&x.dims, &x.data)?;
                watched.push(i);
                eager.watch(t)?
            }
            Arg::Int(t) => Eg::<P>::constant(t.clone()),
        };
        vars.push(v);
    }
    let refs: Vec<&Tracked<Tensor>> = vars.iter().collect();
    let outs = eager.apply(op.clone(), &refs)?;
    let y = outs[out].clone().expect("a present output");
    let meta = eager.meta(&y);
    let w = weight(eager.inner(), meta.dtype, meta.shape.dims(), seed);
    let l = loss(&mut eager, &y, &Eg::<P>::constant(w), phased(op, out, meta.dtype))?;
    let wrt: Vec<&Tracked<Tensor>> = watched.iter().map(|&i| &vars[i]).collect();
    let grads = eager.backward(&l, &wrt)?;
    Ok(grads.iter().map(|g| g.to_vec::<T>().unwrap()).collect())
}

/// Checks every output of `op` (one case) against the table; returns how
/// many outputs were differentiated successfully.
fn check_case<T: Scalar + Element, P: TestProvider>(face: &mut Direct<P>, op: &Op, args: &[Arg<T>]) -> usize {
    let table = ad_support(op);
    assert_eq!(table.len(), op.output_names().len(), "{}", op.name());
    let name = op.name();
    let mut passed = 0;
    for (i, &(output, support)) in table.iter().enumerate() {
        assert_eq!(output, op.output_names()[i]);
        let label = format!("{name} `{output}` ({:?})", T::DTYPE);
        let Some(y) = forward(face, op, args, i) else {
            assert!(!support.is_supported(), "{label}: absent output marked supported");
            continue;
        };
        let dtype = face.meta(&y).dtype;
        let integer = Support::NotDifferentiable { why: "it is integer-valued" };
        if !dtype.is_float() {
            assert_eq!(support, integer, "{label}: an integer output must be marked integer-valued");
            continue;
        }
        assert_ne!(support, integer, "{label}: a float output marked integer-valued");
        let seed = 1000 + i as u64;
        let result = gradients::<T, P>(op, args, i, seed);
        match support {
            Support::Supported { caveat } => {
                let grads =
                    result.unwrap_or_else(|e| panic!("{label}: supported (caveat {caveat:?}) but {e}"));
                let finite = grads
                    .iter()
                    .flatten()
                    .all(|g| g.re().to_f64().is_finite() && g.im().to_f64().is_finite());
                assert!(finite, "{label}: non-finite gradient");
                // Directional derivative against a central difference.
                let mut rng = Rng::new(99 + i as u64);
                let floats: Vec<(usize, &Input<T>)> = args
                    .iter()
                    .enumerate()
                    .filter_map(|(j, a)| match a {
                        Arg::Float(x) => Some((j, x)),
                        Arg::Int(_) => None,
                    })
                    .collect();
                let dirs: Vec<Input<T>> = floats
                    .iter()
                    .map(|&(j, x)| {
                        let d = x.random_direction(&mut rng);
                        if op.input_names()[j] == "tau" {
                            // The state's τ is real (the provider's convention).
                            Input {
                                dims: d.dims,
                                data: d.data.iter().map(|v| T::from_real(v.re())).collect(),
                            }
                        } else {
                            d
                        }
                    })
                    .collect();
                let ad: f64 = grads.iter().zip(&dirs).map(|(g, d)| inner(g, &d.data)).sum();
                let h = 1e-6;
                let plus = value(face, op, &perturbed(args, h, &dirs), i, seed);
                let minus = value(face, op, &perturbed(args, -h, &dirs), i, seed);
                let fd = (plus - minus) / (2.0 * h);
                let l = value(face, op, args, i, seed);
                let tol = 1e-6 * ad.abs().max(l.abs()).max(1.0);
                assert!(
                    (ad - fd).abs() <= tol,
                    "{label}: gradient {ad:e} vs finite difference {fd:e} (loss {l:e})"
                );
                passed += 1;
            }
            Support::NotDifferentiable { why } => {
                let err = result
                    .map(|_| ())
                    .expect_err(&format!("{label}: {support} in the table, but the gradient succeeded"))
                    .to_string();
                assert_eq!(
                    err,
                    format!("{name}: output `{output}` is not differentiable here: {why}"),
                    "{label}"
                );
            }
            Support::Unsupported { .. } => {
                let err = result
                    .map(|_| ())
                    .expect_err(&format!("{label}: {support} in the table, but the gradient succeeded"))
                    .to_string();
                assert_eq!(
                    err,
                    format!("{name}: the derivative of output `{output}` is not implemented"),
                    "{label}"
                );
            }
        }
    }
    passed
}

/// Instances with non-default options whose rules take other paths (a
/// derivative ε small enough to be exact at these gaps, one-sided SVDs,
/// complete QR, transposed and adjoint solves, the other triangle, a unit
/// diagonal, the right side).
fn option_variants() -> Vec<Op> {
    let eps = 1e-12;
    let svd = |o| Op::Linalg(LinalgOp::Svd(Svd(o)));
    let tri = |o| Op::Linalg(LinalgOp::TriangularSolve(TriangularSolve(o)));
    let opts = TriangularSolveOptions::default;
    vec![
        svd(SvdOptions::default().derivative_eps(eps)),
        svd(SvdOptions::default().vectors(SvdVectors::Left)),
        svd(SvdOptions::default().vectors(SvdVectors::Right)),
        Op::Linalg(LinalgOp::SvdFull(SvdFull(SvdOptions::default().derivative_eps(eps)))),
        Op::Linalg(LinalgOp::Qr(Qr(QrOptions::default().mode(QrMode::Complete)))),
        Op::Linalg(LinalgOp::Eigh(Eigh(EighOptions { derivative_eps: Some(eps) }))),
        Op::Linalg(LinalgOp::HouseholderQrApply(HouseholderQrApply(MatOp::Adjoint))),
        Op::Linalg(LinalgOp::HouseholderQrApply(HouseholderQrApply(MatOp::Transpose))),
        Op::Linalg(LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Transpose))),
        Op::Linalg(LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Adjoint))),
        Op::Linalg(LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(MatOp::Adjoint))),
        tri(opts().triangle(Triangle::Upper).diagonal(Diagonal::Unit)),
        tri(opts().side(Side::Right).op(MatOp::Adjoint)),
        tri(opts().triangle(Triangle::Upper).side(Side::Right).op(MatOp::Transpose)),
        Op::Prim(PrimOp::Adjoint(Adjoint(MatOp::Adjoint))),
        Op::Prim(PrimOp::Matmul(Matmul::new(MatOp::Transpose, MatOp::Identity))),
        Op::Prim(PrimOp::Matmul(Matmul::new(MatOp::Identity, MatOp::Adjoint))),
    ]
}

fn check_all<T: Scalar + Element, P: TestProvider>() -> (usize, usize) {
    let mut face = Direct::new(P::default());
    let (mut ops, mut outputs) = (0, 0);
    for op in ad_support_ops().chain(option_variants()) {
        if let Some((op, args)) = case::<T, P>(&mut face, &op) {
            outputs += check_case(&mut face, &op, &args);
            ops += 1;
        }
    }
    (ops, outputs)
}

fn the_table_agrees_with_the_rules_f64<P: TestProvider>(_provider: &P) {
    let (ops, outputs) = check_all::<f64, P>();
    // Every op but the constants (fill, eye), the masks (the rank mask's
    // integer input, the extreme mask's piecewise-constant output) and the
    // complex-only mul_i.
    assert_eq!(ops, ad_support_ops().count() - 5 + option_variants().len());
    assert!(outputs > 60, "{outputs}");
}

fn the_table_agrees_with_the_rules_c64<P: TestProvider>(_provider: &P) {
    let (ops, outputs) = check_all::<C64, P>();
    // Without fill, eye, the masks and the real-only exp, log, max, min.
    assert_eq!(ops, ad_support_ops().count() - 8 + option_variants().len());
    assert!(outputs > 60, "{outputs}");
}

#[test]
fn the_table_lists_every_op_once() {
    let ops: Vec<Op> = ad_support_ops().collect();
    let linalg = ops.iter().filter(|op| matches!(op, Op::Linalg(_))).count();
    assert_eq!(linalg, LinalgOp::all().count());
    assert!(!ops.iter().any(Op::is_check), "internal ops are not in the table");
    let mut names: Vec<&str> = ops.iter().map(Op::name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ops.len());
    for must in
        ["adjugate", "rank_revealing_qr", "householder_qr_append", "lstsq", "max", "pivot_phase", "eye"]
    {
        assert!(names.contains(&must), "{must}");
    }
    // `--nocapture` prints the table.
    for (op, output, support) in ad_support_table() {
        println!("{op:<28} {output:<10} {support}");
    }
    let rows = ad_support_table().count();
    assert_eq!(rows, ops.iter().map(|op| op.output_names().len()).sum::<usize>());
    // The constants are supported (their tangent is zero).
    for (op, _, support) in ad_support_table().filter(|(op, _, _)| ["fill", "eye"].contains(op)) {
        assert!(support.is_supported(), "{op}");
    }
}

/// The shape conditions the caveats name: a full SVD or complete QR of a
/// tall (wide) input has no derivative for the factor with completion
/// columns, and errors naming it; the other outputs work.
fn caveat_conditions_bite_as_stated<P: TestProvider>(_provider: &P) {
    let mut rng = Rng::new(3);
    let tall: Dense<f64> = rng.matrix(5, 3);
    let wide: Dense<f64> = rng.matrix(3, 5);
    let full = Op::Linalg(LinalgOp::SvdFull(SvdFull::default()));
    let complete = Op::Linalg(LinalgOp::Qr(Qr(QrOptions::default().mode(QrMode::Complete))));
    let expect = [
        (&full, &tall, "u", false),
        (&full, &tall, "s", true),
        (&full, &tall, "vh", true),
        (&full, &wide, "u", true),
        (&full, &wide, "vh", false),
        (&complete, &tall, "q", false),
        (&complete, &tall, "r", true),
        (&complete, &wide, "q", true),
        (&complete, &wide, "r", true),
    ];
    for (op, a, output, ok) in expect {
        let table = ad_support(op);
        let i = op.output_names().iter().position(|&o| o == output).unwrap();
        let Support::Supported { caveat } = table[i].1 else {
            panic!("{} {output} not supported", op.name())
        };
        if !ok {
            let caveat = caveat.expect("a caveat naming the condition");
            let shape = if a.rows > a.cols { "tall" } else { "wide" };
            assert!(caveat.contains(shape) && caveat.contains(output), "{caveat}");
        }
        let result = gradients::<f64, P>(op, &[input(a)], i, 5);
        let label = format!("{} `{output}` on {}×{}", op.name(), a.rows, a.cols);
        match result {
            Ok(_) => assert!(ok, "{label}: expected an error"),
            Err(e) => {
                assert!(!ok, "{label}: {e}");
                let prefix = format!("{}: output `{output}` is not differentiable here", op.name());
                assert!(e.to_string().starts_with(&prefix), "{label}: {e}");
            }
        }
    }
}

/// Entries that depend on the op's options.
#[test]
fn option_dependent_entries() {
    let svd = |vectors| Op::Linalg(LinalgOp::Svd(Svd(SvdOptions::default().vectors(vectors))));
    let absent = Support::NotDifferentiable { why: "the forward did not compute it (SvdOptions::vectors)" };
    let left = ad_support(&svd(SvdVectors::Left));
    assert!(left[0].1.is_supported() && left[1].1.is_supported());
    assert_eq!(left[2], ("vh", absent));
    let right = ad_support(&svd(SvdVectors::Right));
    assert_eq!(right[0], ("u", absent));
    assert!(right[2].1.is_supported());
    // The Lorentzian rule says so.
    let eps = Op::Linalg(LinalgOp::Svd(Svd(SvdOptions::default().derivative_eps(1e-8))));
    assert!(ad_support(&eps)[0].1.note().unwrap().contains("Lorentzian"));
    // Reduced QR: no completion caveat; complete: q names it.
    let reduced = ad_support(&Op::Linalg(LinalgOp::Qr(Qr::default())));
    assert!(!reduced[0].1.note().unwrap().contains("complete"));
    let complete = ad_support(&Op::Linalg(LinalgOp::Qr(Qr(QrOptions::default().mode(QrMode::Complete)))));
    assert!(complete[0].1.note().unwrap().contains("complete"));
    // Reductions and elementwise maps are listed per map.
    let max = ad_support(&Op::Prim(PrimOp::Reduce(Reduce { op: ReduceOp::Max, core_rank: 2 })));
    assert!(max[0].1.note().unwrap().contains("argmax"));
    let sum = ad_support(&Op::Prim(PrimOp::Reduce(Reduce { op: ReduceOp::Sum, core_rank: 2 })));
    assert_eq!(sum[0].1, Support::Supported { caveat: None });
}

lindiff_tests::providers!(
    the_table_agrees_with_the_rules_f64,
    the_table_agrees_with_the_rules_c64,
    caveat_conditions_bite_as_stated
);
