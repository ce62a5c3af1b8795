//! QR-family derivatives: unpivoted QR (thin tall/square/wide, complete),
//! rank-revealing QR (no derivative), and the compact Householder state
//! (factor, append, Q, R, apply), through the harness `check` (forward mode
//! against central finite differences), in f64 and c64, batched too.
//!
//! Every loss is a fixed weighted sum of Re, Im and |·|² of the outputs. Q
//! and R are unique under the diag(R) ≥ 0 convention for a full-rank A, and
//! the Householder state is a smooth function of A in the full-rank region,
//! so each loss is differentiable. Inputs have prescribed
//! singular values in [0.7, 1.5] (`Rng::with_spectrum`).

use lindiff_core::ad::{Dual, DualTensor, Tangent};
use lindiff_core::face::direct::Direct;
use lindiff_core::face::Face;
use lindiff_core::op::{QrMode, QrOptions, RankRevealingQrOptions};
use lindiff_core::prim::{BinaryOp, Pad, ReduceOp, UnaryOp};
use lindiff_core::{Element, Error, Host, MatOp, Op, Ops, PrimOp, Provider, Result, Scalar, TensorMeta};
use lindiff_tests::ad::{check, finite_difference, forward, value, Input, Loss, Report};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;

// ------------------------------------------------------------ losses ----

/// A constant real tensor of `dims` with fixed, distinct-looking entries
/// (built from 1×1 fills so every face can make it).
fn weights<F: Face + ?Sized>(f: &mut F, like: &F::Tensor, salt: usize) -> Result<F::Tensor> {
    let meta = f.meta(like);
    let dims = meta.shape.dims().to_vec();
    let total: usize = dims.iter().product();
    let real = meta.dtype.real();
    let one = TensorMeta::new(real, lindiff_core::Shape::new(&[1, 1])?);
    let mut acc = f.fill(TensorMeta::new(real, lindiff_core::Shape::new(&[total, 1])?), 0.0)?;
    for i in 0..total {
        let x = ((i * 7 + salt * 13) % 11) as f64 / 5.0 - 1.0 + 0.1 * (i % 3) as f64;
        let entry = f.fill(one.clone(), x)?;
        let placed = f.single(Op::Prim(PrimOp::Pad(Pad { start: [i, 0], size: [total, 1] })), &[&entry])?;
        acc = f.binary(BinaryOp::Add, &acc, &placed)?;
    }
    f.reshape(&acc, &dims)
}

/// Σ W₁∘Re X + Σ W₂∘Im X + ½ Σ W₃∘|X|² over all elements (a real scalar).
fn weighted<F: Face + ?Sized>(f: &mut F, x: &F::Tensor, salt: usize) -> Result<F::Tensor> {
    let rank = f.meta(x).shape.rank();
    let mut total = None;
    for (i, how) in [UnaryOp::Real, UnaryOp::Imag, UnaryOp::Abs2].into_iter().enumerate() {
        let part = f.unary(how, x)?;
        let w = weights(f, x, salt * 3 + i)?;
        let prod = f.binary(BinaryOp::Mul, &w, &part)?;
        let prod = if how == UnaryOp::Abs2 { f.scale(&prod, 0.5)? } else { prod };
        let s = f.reduce(ReduceOp::Sum, &prod, rank)?;
        total = Some(match total {
            None => s,
            Some(t) => f.binary(BinaryOp::Add, &t, &s)?,
        });
    }
    total.ok_or(Error::InvalidOption { op: "weighted", option: "x", why: "no terms" })
}

/// The sum of [`weighted`] over several outputs.
fn weighted_all<F: Face + ?Sized>(f: &mut F, xs: &[&F::Tensor]) -> Result<F::Tensor> {
    let mut total = weighted(f, xs[0], 0)?;
    for (i, x) in xs.iter().enumerate().skip(1) {
        let s = weighted(f, x, i)?;
        total = f.binary(BinaryOp::Add, &total, &s)?;
    }
    Ok(total)
}

/// `[a b]` on any face.
fn concat<F: Face + ?Sized>(f: &mut F, a: &F::Tensor, b: &F::Tensor) -> Result<F::Tensor> {
    let (ma, mb) = (f.meta(a), f.meta(b));
    let (da, db) = (ma.shape.dims(), mb.shape.dims());
    let (m, n1, n2) = (da[0], da[1], db[1]);
    let pa = f.single(Op::Prim(PrimOp::Pad(Pad { start: [0, 0], size: [m, n1 + n2] })), &[a])?;
    let pb = f.single(Op::Prim(PrimOp::Pad(Pad { start: [0, n1], size: [m, n1 + n2] })), &[b])?;
    f.binary(BinaryOp::Add, &pa, &pb)
}

/// Which factorization a loss differentiates.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `qr(A)`: Q and R.
    Qr,
    /// Complete `qr(A)`: R only.
    CompleteR,
    /// Complete `qr(A)`: Q and R.
    CompleteQr,
    /// `qr([A B])`.
    QrConcat,
    /// `householder_qr(A)`, then Q and R.
    Householder,
    /// `householder_qr(A).append_columns(B)`, then Q and R.
    HouseholderAppend,
    /// `householder_qr(A)`: the raw state (h, τ).
    State,
    /// `householder_qr(A).append_columns(B)`: the raw state (h, τ).
    StateAppend,
    /// `householder_qr(A).apply(how, B)`.
    Apply(MatOp),
    /// `rank_revealing_qr(A)`: Q and R.
    RankRevealing,
}

/// A weighted loss of the outputs of `path`.
struct QrLoss(Path);

impl Loss for QrLoss {
    fn name(&self) -> String {
        format!("weighted loss of {:?}", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        match self.0 {
            Path::Qr => {
                let qr = f.qr(&xs[0])?;
                weighted_all(f, &[&qr.q, &qr.r])
            }
            Path::CompleteR | Path::CompleteQr => {
                let qr = f.qr_with_options(&xs[0], QrOptions::default().mode(QrMode::Complete))?;
                if matches!(self.0, Path::CompleteR) {
                    weighted_all(f, &[&qr.r])
                } else {
                    weighted_all(f, &[&qr.q, &qr.r])
                }
            }
            Path::QrConcat => {
                let ab = concat(f, &xs[0], &xs[1])?;
                let qr = f.qr(&ab)?;
                weighted_all(f, &[&qr.q, &qr.r])
            }
            Path::Householder | Path::HouseholderAppend => {
                let mut state = f.householder_qr(&xs[0])?;
                if matches!(self.0, Path::HouseholderAppend) {
                    state = state.append_columns(f, &xs[1])?;
                }
                let (q, r) = (state.q(f)?, state.r(f)?);
                weighted_all(f, &[&q, &r])
            }
            Path::State | Path::StateAppend => {
                let mut state = f.householder_qr(&xs[0])?;
                if matches!(self.0, Path::StateAppend) {
                    state = state.append_columns(f, &xs[1])?;
                }
                weighted_all(f, &[&state.h, &state.tau])
            }
            Path::Apply(how) => {
                let state = f.householder_qr(&xs[0])?;
                let y = state.apply(f, how, &xs[1])?;
                weighted_all(f, &[&y])
            }
            Path::RankRevealing => {
                let qr = f.rank_revealing_qr(&xs[0], RankRevealingQrOptions::default())?;
                weighted_all(f, &[&qr.q, &qr.r])
            }
        }
    }
}

// ------------------------------------------------------------ inputs ----

/// An m×n matrix with distinct singular values in [0.7, 1.5].
fn matrix<T: Scalar>(rng: &mut Rng, m: usize, n: usize) -> Dense<T> {
    let k = m.min(n);
    let s: Vec<f64> = (0..k).map(|i| 1.5 - 0.8 * i as f64 / k.max(2) as f64 - 0.05 * rng.uniform()).collect();
    rng.with_spectrum::<T>(m, n, &s)
}

/// One input matrix.
fn input<T: Scalar>(rng: &mut Rng, m: usize, n: usize) -> Input<T> {
    Input::matrix(&matrix::<T>(rng, m, n))
}

/// A batch of two matrices.
fn batch<T: Scalar>(rng: &mut Rng, m: usize, n: usize) -> Input<T> {
    Input::batch(&[matrix::<T>(rng, m, n), matrix::<T>(rng, m, n)])
}

/// `check`, printing what it measured.
fn checked<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    path: Path,
    xs: &[Input<T>],
) -> Report
where
    Re<T>: Element,
{
    let report = check(p, &QrLoss(path), xs);
    let dims: Vec<_> = xs.iter().map(|x| x.dims.clone()).collect();
    println!("{path:?} {dims:?} {}: forward vs fd {:.2e}", core::any::type_name::<T>(), report.forward_vs_fd);
    report
}

/// The forward-mode error of `path` at `xs`, which must be an undefined
/// derivative naming `output`.
fn assert_not_differentiable<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    path: Path,
    xs: &[Input<T>],
    op: &str,
    output: &str,
) where
    Re<T>: Element,
{
    let mut rng = Rng::new(3);
    let ds: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
    match forward(p.clone(), &QrLoss(path), xs, &ds) {
        Err(Error::NotDifferentiable { op: o, output: out, .. }) => {
            assert_eq!((o, out), (op, output), "{path:?}");
        }
        other => panic!("{path:?}: expected NotDifferentiable for {op}.{output}, got {other:?}"),
    }
}

// ------------------------------------------------------------- tests ----

/// Thin QR: tall, square, wide, and a batch; f64 and c64.
fn qr_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for (m, n) in [(5, 3), (4, 4), (3, 5), (1, 1), (6, 1), (1, 4)] {
        checked(p, Path::Qr, &[input::<T>(&mut rng, m, n)]);
    }
    checked(p, Path::Qr, &[batch::<T>(&mut rng, 4, 3)]);
    checked(p, Path::Qr, &[batch::<T>(&mut rng, 3, 4)]);
}

fn qr_thin<P: TestProvider>(provider: &P) {
    qr_suite::<f64, _>(provider, 1);
    qr_suite::<C64, _>(provider, 2);
}

/// Complete QR: R (= [R; 0]) is differentiable; Q's extra columns are not,
/// so a loss on Q fails with `NotDifferentiable`; for m ≤ n complete is thin.
fn complete_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    checked(p, Path::CompleteR, &[input::<T>(&mut rng, 5, 3)]);
    checked(p, Path::CompleteR, &[batch::<T>(&mut rng, 4, 2)]);
    assert_not_differentiable(p, Path::CompleteQr, &[input::<T>(&mut rng, 5, 3)], "qr", "q");
    checked(p, Path::CompleteQr, &[input::<T>(&mut rng, 3, 5)]);
    checked(p, Path::CompleteQr, &[input::<T>(&mut rng, 4, 4)]);
}

fn qr_complete<P: TestProvider>(provider: &P) {
    complete_suite::<f64, _>(provider, 3);
    complete_suite::<C64, _>(provider, 4);
}

/// Rank-revealing QR: every output is undefined, with the reason.
fn rank_revealing_suite<P: Provider<Memory = Host> + Clone>(p: &P) {
    let mut rng = Rng::new(5);
    let a = input::<f64>(&mut rng, 4, 3);
    assert_not_differentiable(p, Path::RankRevealing, std::slice::from_ref(&a), "rank_revealing_qr", "q");
    let mut dual = Dual::new(Direct::new(p.clone()));
    let primal = dual.inner().tensor(&a.dims, &a.data).unwrap();
    let tangent = Tangent::Value(dual.inner().tensor(&a.dims, &a.data).unwrap());
    let x = DualTensor { primal, tangent };
    let out = dual.rank_revealing_qr(&x, RankRevealingQrOptions::default()).unwrap();
    for (t, name) in [(&out.q, "q"), (&out.r, "r"), (&out.perm, "perm"), (&out.rank, "rank")] {
        match &t.tangent {
            Tangent::Undefined(Error::NotDifferentiable { op, output, .. }) => {
                assert_eq!((*op, *output), ("rank_revealing_qr", name));
            }
            other => panic!("rank_revealing_qr.{name}: expected NotDifferentiable, got {other:?}"),
        }
    }
}

fn rank_revealing_qr_is_not_differentiable<P: TestProvider>(provider: &P) {
    rank_revealing_suite(provider);
}

/// The seed's QR finite-difference check (central differences,
/// step 1e-6, a scalar loss, f64, 4×3; the seed implementation measured
/// max|grad − fd| = 3.2e-10): the full gradient, entry by entry.
fn seed_fd_suite<P: Provider<Memory = Host> + Clone>(p: &P) -> f64 {
    let mut rng = Rng::new(11);
    let a = Input::matrix(&Dense::from_fn(4, 3, |_, _| rng.centered()));
    let loss = QrLoss(Path::Qr);
    let l = value(&mut Direct::new(p.clone()), &loss, std::slice::from_ref(&a));
    let (mut max_err, mut max_g) = (0.0f64, 0.0f64);
    for i in 0..a.data.len() {
        let mut e = Input { dims: a.dims.clone(), data: vec![0.0; a.data.len()] };
        e.data[i] = 1.0;
        let g = forward(p.clone(), &loss, std::slice::from_ref(&a), std::slice::from_ref(&e)).unwrap();
        let fd = finite_difference(p, &loss, std::slice::from_ref(&a), std::slice::from_ref(&e), 1e-6);
        max_err = max_err.max((g - fd).abs());
        max_g = max_g.max(g.abs());
    }
    println!("seed QR check: loss {l:+.6} max|grad| {max_g:.3} max|grad − fd| {max_err:.3e}");
    assert!(max_err <= 1e-8 * max_g.max(l.abs() / a.norm()), "max|grad − fd| = {max_err:e}");
    max_err
}

fn qr_seed_finite_differences<P: TestProvider>(provider: &P) {
    seed_fd_suite(provider);
}

/// Householder Q and R from `householder_qr`, and the raw state, checked
/// against finite differences and against plain `qr`.
fn householder_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for (m, n) in [(5, 3), (4, 4), (3, 5), (1, 1), (4, 1), (1, 3), (12, 8), (8, 12)] {
        let a = input::<T>(&mut rng, m, n);
        checked(p, Path::Householder, std::slice::from_ref(&a));
        checked(p, Path::State, std::slice::from_ref(&a));
        same_derivative(p, Path::Householder, Path::Qr, std::slice::from_ref(&a));
    }
    let a = batch::<T>(&mut rng, 5, 3);
    checked(p, Path::Householder, std::slice::from_ref(&a));
    checked(p, Path::State, std::slice::from_ref(&a));
}

/// `l1` and `l2` are the same function: their forward-mode derivatives
/// agree along random directions.
fn same_derivative<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    l1: Path,
    l2: Path,
    xs: &[Input<T>],
) where
    Re<T>: Element,
{
    let mut rng = Rng::new(17);
    let scale = value(&mut Direct::new(p.clone()), &QrLoss(l1), xs).abs();
    for _ in 0..2 {
        let ds: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        let d1 = forward(p.clone(), &QrLoss(l1), xs, &ds).unwrap();
        let d2 = forward(p.clone(), &QrLoss(l2), xs, &ds).unwrap();
        let err = (d1 - d2).abs() / d1.abs().max(scale);
        assert!(err <= 1e-11, "{l1:?} vs {l2:?}: {d1:e} vs {d2:e} (relative {err:e})");
    }
}

fn householder_factor<P: TestProvider>(provider: &P) {
    householder_suite::<f64, _>(provider, 21);
    householder_suite::<C64, _>(provider, 22);
}

/// append_columns: Q and R of the appended state have the derivative of
/// `qr([A B])`; the appended state itself matches finite differences. Covers
/// a tall result (m ≥ n₁ + n₂), a wide new block (n₁ < m < n₁ + n₂), a
/// square A (m = n₁: no new reflectors) and a wide A (m < n₁).
fn append_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for (m, n1, n2) in [(6, 2, 3), (6, 3, 3), (4, 2, 4), (4, 4, 2), (3, 4, 2), (5, 1, 1)] {
        // [A B] well conditioned: its singular values are prescribed.
        let ab = matrix::<T>(&mut rng, m, n1 + n2);
        let xs = [Input::matrix(&ab.cols_range(0, n1)), Input::matrix(&ab.cols_range(n1, n2))];
        checked(p, Path::HouseholderAppend, &xs);
        checked(p, Path::StateAppend, &xs);
        checked(p, Path::QrConcat, &xs);
        same_derivative(p, Path::HouseholderAppend, Path::QrConcat, &xs);
    }
    let abs = [matrix::<T>(&mut rng, 6, 4), matrix::<T>(&mut rng, 6, 4)];
    let a: Vec<_> = abs.iter().map(|x| x.cols_range(0, 2)).collect();
    let b: Vec<_> = abs.iter().map(|x| x.cols_range(2, 2)).collect();
    let xs = [Input::batch(&a), Input::batch(&b)];
    checked(p, Path::HouseholderAppend, &xs);
    checked(p, Path::StateAppend, &xs);
    same_derivative(p, Path::HouseholderAppend, Path::QrConcat, &xs);
}

fn householder_append<P: TestProvider>(provider: &P) {
    append_suite::<f64, _>(provider, 31);
    append_suite::<C64, _>(provider, 32);
}

/// apply: op(Q_h) b in the state's reflector convention, for every op, in A and b.
fn apply_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for how in [MatOp::Identity, MatOp::Adjoint, MatOp::Transpose] {
        for (m, n, r) in [(5, 3, 2), (4, 4, 3), (3, 5, 1)] {
            let xs = [input::<T>(&mut rng, m, n), Input::matrix(&rng.matrix::<T>(m, r))];
            checked(p, Path::Apply(how), &xs);
        }
    }
    let xs = [batch::<T>(&mut rng, 5, 3), batch::<T>(&mut rng, 5, 2)];
    checked(p, Path::Apply(MatOp::Adjoint), &xs);
}

fn householder_apply<P: TestProvider>(provider: &P) {
    apply_suite::<f64, _>(provider, 41);
    apply_suite::<C64, _>(provider, 42);
}

/// At an upper triangular A faer keeps identity reflectors and the state
/// jumps under perturbation: the Householder derivatives fail loudly (a
/// solve with a zero pivot) instead of returning a number, while `qr` is
/// fine.
fn triangular_suite<P: Provider<Memory = Host> + Clone>(p: &P) {
    let mut rng = Rng::new(9);
    let a = Dense::<f64>::from_fn(4, 3, |i, j| if i <= j { 1.0 + rng.uniform() } else { 0.0 });
    let a = Input::matrix(&a);
    let ds = vec![a.random_direction(&mut rng)];
    for path in [Path::State, Path::Householder] {
        let got = forward(p.clone(), &QrLoss(path), std::slice::from_ref(&a), &ds);
        assert!(matches!(got, Err(Error::Singular { .. } | Error::NonFinite { .. })), "{path:?}: {got:?}");
    }
    checked(p, Path::Qr, &[a]);
}

fn householder_at_triangular_input_fails_loudly<P: TestProvider>(provider: &P) {
    triangular_suite(provider);
}

lindiff_tests::providers!(
    qr_thin,
    qr_complete,
    rank_revealing_qr_is_not_differentiable,
    qr_seed_finite_differences,
    householder_factor,
    householder_append,
    householder_apply,
    householder_at_triangular_input_fails_loudly
);
