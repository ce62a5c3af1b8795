//! Composites get their derivatives from their parts: `inv`,
//! `norm`, `cond`, `matrix_power`, `multi_dot`, `vecdot`, `tensorsolve`,
//! `tensorinv` and a batched `solve` are checked in f64 and c64 through the
//! harness's `check` (forward mode against finite differences) and here
//! against the reverse mode: the eager and traced gradients agree bit for
//! bit and match central finite differences entry by entry (real and
//! imaginary parts), ‖g − g_fd‖∞ ≤ 1e-8·max(‖g‖∞, |L|/‖A‖).
//!
//! The composites that reduce with max or min (the 1-, ∞- and 2-norms and
//! their negative versions, `Vector(±∞)`, `cond` in those norms) have no
//! derivative: `Reduce Max/Min` has no rule, so every face reports
//! `UnsupportedDerivative` naming `max` or `min` (or, for `cond` in the
//! 2-norms, the `nonzero_mask` that makes a zero matrix's 0/0 +∞) — never a
//! gradient. The Frobenius and vector 2-norms are the singular value of
//! the entries as one column, differentiated by the SVD's rule. `pinv`
//! and `lstsq` have their own rules (`tests/ad_pinv.rs` covers rank
//! deficiency and ties); here they run full rank, tall and wide.

use lindiff_core::face::direct::Direct;
use lindiff_core::face::{Face, Norm};
use lindiff_core::prim::{BinaryOp, UnaryOp};
use lindiff_core::{Element, Error, Host, Linalg, Ops, Provider, Result, Scalar};
use lindiff_tests::ad::{
    assert_same_gradients, check, eager_grad, entrywise_errors, forward, tolerance, traced_grad, value,
    Input, Loss,
};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::{probe, total};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;

// ------------------------------------------------------------ losses ----

/// Which composite a loss differentiates.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Comp {
    /// probe(inv(a)).
    Inv,
    /// Σ norm(a, kind) (over the batch).
    Norm(Norm),
    /// Σ cond(a, kind).
    Cond(Norm),
    /// probe(a^k).
    Power(i64),
    /// probe(multi_dot(xs)): every input differentiated.
    MultiDot,
    /// Σ (Re v + 0.7 Im v + ½|v|²) with v = vecdot(x, y).
    VecDot,
    /// probe(tensorsolve(a, b)) (x is a matrix here).
    TensorSolve,
    /// probe(tensorinv(a, ind)).
    TensorInv(usize),
    /// probe(solve(a, b)), batched.
    Solve,
    /// probe(pinv(a)).
    Pinv,
    /// probe(lstsq(a, b)).
    Lstsq,
}

/// A loss through one composite.
struct CompLoss(Comp);

impl Loss for CompLoss {
    fn name(&self) -> String {
        format!("{:?}", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let a = &xs[0];
        match self.0 {
            Comp::Inv => {
                let x = f.inv(a)?;
                probe(f, &x)
            }
            Comp::Norm(kind) => {
                let n = f.norm(a, kind)?;
                total(f, &n)
            }
            Comp::Cond(kind) => {
                let c = f.cond(a, kind)?;
                total(f, &c)
            }
            Comp::Power(k) => {
                let x = f.matrix_power(a, k)?;
                probe(f, &x)
            }
            Comp::MultiDot => {
                let chain: Vec<&F::Tensor> = xs.iter().collect();
                let x = f.multi_dot(&chain)?;
                probe(f, &x)
            }
            Comp::VecDot => {
                let v = f.vecdot(a, &xs[1])?;
                let re = f.unary(UnaryOp::Real, &v)?;
                let im = f.unary(UnaryOp::Imag, &v)?;
                let im = f.scale(&im, 0.7)?;
                let sq = f.unary(UnaryOp::Abs2, &v)?;
                let sq = f.scale(&sq, 0.5)?;
                let s = f.binary(BinaryOp::Add, &re, &im)?;
                let s = f.binary(BinaryOp::Add, &s, &sq)?;
                total(f, &s)
            }
            Comp::TensorSolve => {
                let x = f.tensorsolve(a, &xs[1])?;
                probe(f, &x)
            }
            Comp::TensorInv(ind) => {
                let x = f.tensorinv(a, ind)?;
                probe(f, &x)
            }
            Comp::Solve => {
                let x = f.solve(a, &xs[1])?;
                probe(f, &x)
            }
            Comp::Pinv => {
                let x = f.pinv(a)?;
                probe(f, &x)
            }
            Comp::Lstsq => {
                let x = f.lstsq(a, &xs[1])?;
                probe(f, &x)
            }
        }
    }
}

// ----------------------------------------------------------- checking ----

/// `check`, then the reverse mode: eager and traced gradients bit-identical
/// and ‖g − g_fd‖∞ ≤ tolerance·max(‖g‖∞, |L|/‖A‖) entry by entry (central
/// differences, step `step()·‖x_k‖` for input k). Returns (forward-mode
/// error, gradient error relative to its scale) and the gradients.
fn full<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    p: &P,
    loss: &L,
    xs: &[Input<T>],
) -> (f64, f64, Vec<Vec<T>>)
where
    Re<T>: Element,
{
    let name = loss.name();
    let report = check(p, loss, xs);
    let eager = eager_grad(p.clone(), loss, xs).unwrap_or_else(|e| panic!("{name}: eager gradient: {e}"));
    let traced = traced_grad(p, loss, xs).unwrap_or_else(|e| panic!("{name}: traced gradient: {e}"));
    assert_same_gradients(&name, xs, &eager, &traced);
    let l = value(&mut Direct::new(p.clone()), loss, xs);
    let norm = xs.iter().map(|x| x.norm().powi(2)).sum::<f64>().sqrt();
    let (err, g_inf) = entrywise_errors(p, loss, xs, &eager);
    let scale = g_inf.max(l.abs() / norm);
    assert!(
        err <= tolerance::<T>() * scale,
        "{name}: ‖g − g_fd‖∞ = {err:e} > {:e}·max(‖g‖∞ = {g_inf:e}, |L|/‖A‖ = {:e})",
        tolerance::<T>(),
        l.abs() / norm
    );
    (report.forward_vs_fd, err / scale.max(f64::MIN_POSITIVE), eager)
}

/// [`full`] with a printed line.
fn run<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    what: Comp,
    xs: &[Input<T>],
) -> Vec<Vec<T>>
where
    Re<T>: Element,
{
    let (fwd, grad, g) = full(p, &CompLoss(what), xs);
    let dims: Vec<_> = xs.iter().map(|x| x.dims.clone()).collect();
    println!("{what:?} {dims:?} {}: forward vs fd {fwd:.1e}, gradient vs fd {grad:.1e}", T::DTYPE.name());
    g
}

/// Every face reports `NotDifferentiable` for `what` at `xs`, naming the
/// reduction `op` (a tied extreme).
fn not_differentiable<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    what: Comp,
    xs: &[Input<T>],
    op: &str,
) where
    Re<T>: Element,
{
    let loss = CompLoss(what);
    let mut rng = Rng::new(3);
    let ds: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
    let results = [
        ("forward", forward(p.clone(), &loss, xs, &ds).map(|_| ())),
        ("eager", eager_grad(p.clone(), &loss, xs).map(|_| ())),
        ("traced", traced_grad(p, &loss, xs).map(|_| ())),
    ];
    for (face, r) in results {
        match r {
            Err(Error::NotDifferentiable { op: got, .. }) if got == op => {}
            other => panic!("{what:?} ({face}): expected NotDifferentiable for {op}, got {other:?}"),
        }
    }
}

fn conditioned<T: Scalar>(m: usize, n: usize, rng: &mut Rng) -> Dense<T> {
    let k = m.min(n);
    let s: Vec<f64> = (0..k).map(|i| 2.5 - 1.7 * i as f64 / k.max(2) as f64 - 0.05 * rng.uniform()).collect();
    rng.with_spectrum::<T>(m, n, &s)
}

fn matrix<T: Scalar>(m: usize, n: usize, rng: &mut Rng) -> Input<T> {
    Input::matrix(&conditioned::<T>(m, n, rng))
}

fn batch<T: Scalar>(m: usize, n: usize, count: usize, rng: &mut Rng) -> Input<T> {
    let ms: Vec<Dense<T>> = (0..count).map(|_| conditioned::<T>(m, n, rng)).collect();
    Input::batch(&ms)
}

/// A tensor with `dims` and random entries.
fn random<T: Scalar>(dims: &[usize], rng: &mut Rng) -> Input<T> {
    let len = dims.iter().product();
    Input { dims: dims.to_vec(), data: (0..len).map(|_| rng.scalar::<T>()).collect() }
}

// ------------------------------------------------------------- suites ----

fn inv_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for n in [1, 3, 4] {
        run(p, Comp::Inv, &[matrix::<T>(n, n, &mut rng)]);
    }
    run(p, Comp::Inv, &[batch::<T>(3, 3, 2, &mut rng)]);
}

/// The matrix norms with a derivative, the vector p-norms, and the max/min
/// norms' errors.
fn norm_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for (m, n) in [(4, 4), (4, 3), (2, 5)] {
        let a = matrix::<T>(m, n, &mut rng);
        run(p, Comp::Norm(Norm::Fro), std::slice::from_ref(&a));
        run(p, Comp::Norm(Norm::Nuc), std::slice::from_ref(&a));
    }
    let b = batch::<T>(3, 3, 2, &mut rng);
    run(p, Comp::Norm(Norm::Fro), std::slice::from_ref(&b));
    run(p, Comp::Norm(Norm::Nuc), std::slice::from_ref(&b));
    // Vector p-norms (entries bounded away from 0, where |x| has a kink).
    let v = Input {
        dims: vec![6],
        data: (0..6)
            .map(|i| {
                let x: T = rng.scalar();
                x + T::from_f64(if i % 2 == 0 { 1.5 } else { -1.5 })
            })
            .collect(),
    };
    let vb = Input { dims: vec![3, 2], data: v.data.clone() };
    for pn in [1.0, 2.0, 3.0, 0.5, -2.0] {
        run(p, Comp::Norm(Norm::Vector(pn)), std::slice::from_ref(&v));
        run(p, Comp::Norm(Norm::Vector(pn)), std::slice::from_ref(&vb));
    }
    // Max/min reductions: d max = dx at the argmax (distinct values here).
    let a = matrix::<T>(4, 3, &mut rng);
    let kinds = [Norm::Two, Norm::One, Norm::Inf, Norm::NegTwo, Norm::NegOne, Norm::NegInf];
    for kind in kinds {
        run(p, Comp::Norm(kind), std::slice::from_ref(&a));
    }
    run(p, Comp::Norm(Norm::Two), std::slice::from_ref(&b));
    for pn in [f64::INFINITY, f64::NEG_INFINITY] {
        run(p, Comp::Norm(Norm::Vector(pn)), std::slice::from_ref(&v));
        run(p, Comp::Norm(Norm::Vector(pn)), std::slice::from_ref(&vb));
    }
    // At a tied extreme there is no derivative: every face says so.
    let tied = |s: [f64; 3]| {
        let d = Dense::<T>::from_fn(3, 3, |i, j| if i == j { T::from_f64(s[i]) } else { T::zero() });
        Input::matrix(&d)
    };
    not_differentiable(p, Comp::Norm(Norm::Two), &[tied([2.0, 2.0, 1.0])], "max");
    not_differentiable(p, Comp::Norm(Norm::NegTwo), &[tied([2.0, 1.0, 1.0])], "min");
    not_differentiable(p, Comp::Norm(Norm::One), &[tied([3.0, 3.0, 1.0])], "max");
    not_differentiable(p, Comp::Cond(Norm::Two), &[tied([3.0, 3.0, 1.0])], "max");
}

fn cond_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let a = matrix::<T>(4, 4, &mut rng);
    run(p, Comp::Cond(Norm::Fro), std::slice::from_ref(&a));
    run(p, Comp::Cond(Norm::Nuc), std::slice::from_ref(&a));
    run(p, Comp::Cond(Norm::Fro), &[batch::<T>(3, 3, 2, &mut rng)]);
    // s_max / s_min, and the 1/∞ norms of a and a⁻¹.
    for kind in [Norm::Two, Norm::NegTwo, Norm::One, Norm::Inf, Norm::NegOne, Norm::NegInf] {
        run(p, Comp::Cond(kind), std::slice::from_ref(&a));
    }
    run(p, Comp::Cond(Norm::Two), &[matrix::<T>(5, 3, &mut rng)]);
}

fn power_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    // Spectral norm ≤ 1.25 so that a^5 stays of order 1.
    let a = Input::matrix(&rng.with_spectrum::<T>(3, 3, &[1.25, 1.0, 0.8]));
    for k in [1, 2, 3, 5, -1, -2, -3] {
        run(p, Comp::Power(k), std::slice::from_ref(&a));
    }
    // a⁰ = I does not depend on a: every gradient entry is exactly 0 (and
    // no face errs).
    let g = run(p, Comp::Power(0), std::slice::from_ref(&a));
    assert!(g[0].iter().all(|x| *x == T::zero()), "a⁰: gradient {:?}", g[0]);
    let mut rng = Rng::new(seed + 100);
    let b = Input::batch(&[
        rng.with_spectrum::<T>(3, 3, &[1.2, 1.0, 0.9]),
        rng.with_spectrum::<T>(3, 3, &[1.1, 0.9, 0.8]),
    ]);
    for k in [3, -2] {
        run(p, Comp::Power(k), std::slice::from_ref(&b));
    }
}

fn multi_dot_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    // (4×2)(2×5)(5×3): the cheapest order is A(BC). (3×6)(6×2)(2×4)(4×3):
    // another split. Then two matrices, and one.
    let chains: [&[(usize, usize)]; 4] =
        [&[(4, 2), (2, 5), (5, 3)], &[(3, 6), (6, 2), (2, 4), (4, 3)], &[(3, 4), (4, 2)], &[(3, 2)]];
    for chain in chains {
        let xs: Vec<Input<T>> = chain.iter().map(|&(m, n)| random::<T>(&[m, n], &mut rng)).collect();
        let g = run(p, Comp::MultiDot, &xs);
        // Each input is differentiated (no gradient vanishes).
        for (k, gk) in g.iter().enumerate() {
            assert!(gk.iter().any(|x| *x != T::zero()), "multi_dot {chain:?}: gradient {k} is zero");
        }
    }
}

fn vecdot_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    run(p, Comp::VecDot, &[random::<T>(&[5], &mut rng), random::<T>(&[5], &mut rng)]);
    run(p, Comp::VecDot, &[random::<T>(&[4, 3], &mut rng), random::<T>(&[4, 3], &mut rng)]);
}

fn tensor_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    // a [2, 3, 3, 2] is a well-conditioned 6×6 matrix (column-major), b
    // [2, 3], x [3, 2].
    let m = conditioned::<T>(6, 6, &mut rng);
    let a = Input { dims: vec![2, 3, 3, 2], data: m.data.clone() };
    let b = random::<T>(&[2, 3], &mut rng);
    run(p, Comp::TensorSolve, &[a, b]);
    // tensorinv of [2, 3, 6] with ind = 2 → [6, 2, 3]; of [6, 3, 2] with
    // ind = 1 → [3, 2, 6].
    let m = conditioned::<T>(6, 6, &mut rng);
    run(p, Comp::TensorInv(2), &[Input { dims: vec![2, 3, 6], data: m.data.clone() }]);
    run(p, Comp::TensorInv(1), &[Input { dims: vec![6, 3, 2], data: m.data }]);
}

fn solve_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    run(p, Comp::Solve, &[batch::<T>(4, 4, 3, &mut rng), random::<T>(&[4, 2, 3], &mut rng)]);
    run(p, Comp::Solve, &[matrix::<T>(3, 3, &mut rng), random::<T>(&[3, 1], &mut rng)]);
}

/// pinv and lstsq through their own rules (full rank: the constant-rank
/// derivative is exact), tall and wide.
fn pinv_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    run(p, Comp::Pinv, &[matrix::<T>(4, 3, &mut rng)]);
    run(p, Comp::Pinv, &[matrix::<T>(3, 5, &mut rng)]);
    run(p, Comp::Lstsq, &[matrix::<T>(4, 3, &mut rng), random::<T>(&[4, 2], &mut rng)]);
    run(p, Comp::Lstsq, &[matrix::<T>(3, 4, &mut rng), random::<T>(&[3, 1], &mut rng)]);
}

fn suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    inv_suite::<T, P>(p, seed);
    norm_suite::<T, P>(p, seed + 1);
    cond_suite::<T, P>(p, seed + 2);
    power_suite::<T, P>(p, seed + 3);
    multi_dot_suite::<T, P>(p, seed + 4);
    vecdot_suite::<T, P>(p, seed + 5);
    // (seed + 6 gives a c64 direction where the loss's rounding noise in the
    // finite differences, 3e-10, just exceeds the harness's 1e-8·|dL|.)
    tensor_suite::<T, P>(p, seed + 16);
    solve_suite::<T, P>(p, seed + 7);
    pinv_suite::<T, P>(p, seed + 8);
}

fn composites_f64<P: TestProvider>(provider: &P) {
    suite::<f64, _>(provider, 10);
}

fn composites_c64<P: TestProvider>(provider: &P) {
    suite::<C64, _>(provider, 20);
}

lindiff_tests::providers!(composites_f64, composites_c64);
