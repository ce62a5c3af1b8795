//! Derivatives of `pinv` (Golub–Pereyra) and `lstsq` (x = A⁺b),
//! `docs/ad-rules.md#recombinations`.
//!
//! Losses: ⟨W, A⁺⟩ = Re Σ conj(W)∘A⁺ (W a second input, so it is
//! differentiated too), Σ|x|² and ⟨w, x⟩ for x = lstsq(A, b) with b
//! differentiated. Each case goes through [`check`] (forward mode against
//! finite differences) and through [`reverse`] here: the eager and traced
//! gradients bit-identical, and ⟨g, d⟩ equal to the forward-mode derivative
//! along random directions (the dot-product test of the transpose).
//!
//! Cases, f64 and c64: full rank tall (overdetermined; one set with a
//! residual of norm 3, where the dAᴴ(b − Ax) term carries a tangent of the
//! size of the rest), wide (minimum norm), square, 1×3, 3×1, batched;
//! rank-deficient A = B C (thin B, C, differentiated with respect to B and
//! C, so every perturbation keeps the rank), tall, wide, square and
//! batched, with the default thresholds and with rtol = 1e-10; a constant A
//! (only b has a tangent: the rule's dA = 0 path); thresholds: s = (2, 1, δ)
//! under rtol = 1e-4, perturbed along every direction, δ = 0 (the exact
//! derivative of the truncated pseudo-inverse) and δ = 1e-10 (dropped by
//! the forward and by the rule alike; a rule recomputing A⁺ with the
//! default thresholds would be off by ~1e10).

use lindiff_core::face::Face;
use lindiff_core::op::LstsqOptions;
use lindiff_core::prim::{BinaryOp, UnaryOp};
use lindiff_core::{DType, Element, Host, Ops, Provider, RealScalar, Result, Scalar, TensorMeta};
use lindiff_tests::ad::{check, Input, Loss, Report};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::total;
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;

/// How the loss gets A.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// A is the first input.
    Input,
    /// A = B C from the first two inputs (rank ≤ inner dim, kept under any
    /// perturbation of B and C).
    Product,
    /// A = [I; 0] + ¼·1 (m×n, a constant: its tangent is exactly zero).
    Constant(usize, usize),
}

impl Source {
    /// How many inputs A takes.
    fn count(self) -> usize {
        match self {
            Source::Input => 1,
            Source::Product => 2,
            Source::Constant(..) => 0,
        }
    }

    /// A, and the remaining inputs.
    fn matrix<'a, F: Face + ?Sized>(
        self,
        f: &mut F,
        xs: &'a [F::Tensor],
        dtype: DType,
    ) -> Result<(F::Tensor, &'a [F::Tensor])> {
        let a = match self {
            Source::Input => xs[0].clone(),
            Source::Product => f.matmul(&xs[0], &xs[1])?,
            Source::Constant(m, n) => {
                let eye = f.eye(dtype, m.max(n), &[])?;
                let top = f.slice(&eye, [0, 0], [m, n])?;
                let shape = lindiff_core::Shape::new(&[m, n])?;
                let quarter = f.fill(TensorMeta::new(dtype, shape), 0.25)?;
                f.binary(BinaryOp::Add, &top, &quarter)?
            }
        };
        Ok((a, &xs[self.count()..]))
    }
}

/// ⟨g, x⟩ = Re Σ conj(g)∘x.
fn dot<F: Face + ?Sized>(f: &mut F, g: &F::Tensor, x: &F::Tensor) -> Result<F::Tensor> {
    let gc = f.unary(UnaryOp::Conj, g)?;
    let prod = f.binary(BinaryOp::Mul, &gc, x)?;
    total(f, &prod)
}

/// ⟨W, pinv(A)⟩; inputs: A's, then W (n×m).
#[derive(Clone, Copy, Debug)]
struct PinvLoss {
    /// Where A comes from.
    source: Source,
    /// `pinv_with_rtol` when set, else `pinv`.
    rtol: Option<f64>,
    /// The dtype (for a constant A).
    dtype: DType,
}

impl Loss for PinvLoss {
    fn name(&self) -> String {
        format!("<W, pinv(A)>, A {:?}, rtol {:?}", self.source, self.rtol)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let (a, rest) = self.source.matrix(f, xs, self.dtype)?;
        let pa = match self.rtol {
            Some(rtol) => f.pinv_with_rtol(&a, rtol)?,
            None => f.pinv(&a)?,
        };
        dot(f, &rest[0], &pa)
    }
}

/// What an lstsq loss reads from x.
#[derive(Clone, Copy, Debug)]
enum Obs {
    /// Σ |x|².
    Norm,
    /// ⟨w, x⟩ (w n×r, the last input).
    Weighted,
}

/// A loss of x = lstsq(A, b); inputs: A's, b (m×r), then w for `Weighted`.
#[derive(Clone, Copy, Debug)]
struct LstsqLoss {
    /// Where A comes from.
    source: Source,
    /// What is read from x.
    obs: Obs,
    /// `lstsq_with_options` with this rtol when set, else `lstsq`.
    rtol: Option<f64>,
    /// The dtype (for a constant A).
    dtype: DType,
}

impl Loss for LstsqLoss {
    fn name(&self) -> String {
        format!("{:?} of lstsq(A, b), A {:?}, rtol {:?}", self.obs, self.source, self.rtol)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let (a, rest) = self.source.matrix(f, xs, self.dtype)?;
        let x = match self.rtol {
            Some(rtol) => f.lstsq_with_options(&a, &rest[0], LstsqOptions::default().rtol(rtol))?.0,
            None => f.lstsq(&a, &rest[0])?,
        };
        match self.obs {
            Obs::Norm => {
                let sq = f.unary(UnaryOp::Abs2, &x)?;
                total(f, &sq)
            }
            Obs::Weighted => dot(f, &rest[1], &x),
        }
    }
}

/// The harness's [`check`] (forward mode vs FD, eager and traced gradients
/// bit-identical, the dot-product test, entrywise FD on small inputs): the
/// forward-vs-FD and dot-product errors.
fn both<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    p: &P,
    loss: &L,
    xs: &[Input<T>],
) -> (f64, f64)
where
    Re<T>: Element,
{
    let r: Report = check(p, loss, xs);
    (r.forward_vs_fd, r.dot_product)
}

/// The worst errors so far (forward vs FD, dot product).
#[derive(Clone, Copy, Debug, Default)]
struct Worst(f64, f64);

impl Worst {
    fn add(&mut self, (fd, dot): (f64, f64)) {
        self.0 = self.0.max(fd);
        self.1 = self.1.max(dot);
    }
}

/// An m×n matrix (or a batch of `batch` of them, 0 for none) with a
/// well-separated spectrum in [0.8, 2].
fn full_rank<T: Scalar>(rng: &mut Rng, m: usize, n: usize, batch: usize) -> Input<T> {
    let k = m.min(n);
    let s: Vec<f64> = (0..k).map(|i| 2.0 - 1.2 * i as f64 / k.max(2) as f64).collect();
    if batch == 0 {
        Input::matrix(&rng.with_spectrum::<T>(m, n, &s))
    } else {
        Input::batch(&(0..batch).map(|_| rng.with_spectrum::<T>(m, n, &s)).collect::<Vec<_>>())
    }
}

/// A random r×c matrix (batched like [`full_rank`]).
fn random<T: Scalar>(rng: &mut Rng, r: usize, c: usize, batch: usize) -> Input<T> {
    if batch == 0 {
        Input::matrix(&rng.matrix::<T>(r, c))
    } else {
        Input::batch(&(0..batch).map(|_| rng.matrix::<T>(r, c)).collect::<Vec<_>>())
    }
}

/// Full-rank pinv and lstsq: tall, wide, square, and batched (tall and wide).
fn full_rank_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Worst
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let dtype = T::DTYPE;
    let mut worst = Worst::default();
    for (m, n, batch) in [(5, 3, 0), (3, 5, 0), (4, 4, 0), (1, 3, 0), (3, 1, 0), (4, 3, 2), (3, 4, 2)] {
        let a = full_rank::<T>(&mut rng, m, n, batch);
        let w = random::<T>(&mut rng, n, m, batch);
        let loss = PinvLoss { source: Source::Input, rtol: None, dtype };
        worst.add(both(p, &loss, &[a.clone(), w]));
        let b = random::<T>(&mut rng, m, 2, batch);
        let wx = random::<T>(&mut rng, n, 2, batch);
        let norm = LstsqLoss { source: Source::Input, obs: Obs::Norm, rtol: None, dtype };
        worst.add(both(p, &norm, &[a.clone(), b.clone()]));
        let weighted = LstsqLoss { source: Source::Input, obs: Obs::Weighted, rtol: None, dtype };
        worst.add(both(p, &weighted, &[a, b, wx]));
    }
    worst
}

/// Full rank: tall, wide, square, batched, in f64 and c64.
fn full_rank_tall_wide_square_batched<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = full_rank_suite::<f64, _>(&p, 1);
    let complex = full_rank_suite::<C64, _>(&p, 2);
    eprintln!(
        "full rank: fd {:.1e} / dot {:.1e} (f64), fd {:.1e} / dot {:.1e} (c64)",
        real.0, real.1, complex.0, complex.1
    );
}

/// Tied and nearly tied singular values (where the plain SVD route loses
/// all precision): the rules divide by no gap inside the kept spectrum, so
/// they stay exact. Tall and wide, f64 and c64.
fn ties_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Worst
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let dtype = T::DTYPE;
    let mut worst = Worst::default();
    for s in [[2.0, 2.0, 1.0], [2.0, 2.0 - 1e-13, 1.0], [1.5, 1.5, 1.5]] {
        for (m, n) in [(5, 3), (3, 5)] {
            let a = Input::matrix(&rng.with_spectrum::<T>(m, n, &s));
            let w = random::<T>(&mut rng, n, m, 0);
            let loss = PinvLoss { source: Source::Input, rtol: None, dtype };
            worst.add(both(p, &loss, &[a.clone(), w]));
            let b = random::<T>(&mut rng, m, 2, 0);
            let wx = random::<T>(&mut rng, n, 2, 0);
            let weighted = LstsqLoss { source: Source::Input, obs: Obs::Weighted, rtol: None, dtype };
            worst.add(both(p, &weighted, &[a, b, wx]));
        }
    }
    worst
}

fn tied_and_nearly_tied_values<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = ties_suite::<f64, _>(&p, 21);
    let complex = ties_suite::<C64, _>(&p, 22);
    eprintln!(
        "ties: fd {:.1e} / dot {:.1e} (f64), fd {:.1e} / dot {:.1e} (c64)",
        real.0, real.1, complex.0, complex.1
    );
}

/// Overdetermined systems whose b has a residual of norm 3 (b = A c + 3 r,
/// r a unit vector orthogonal to range(A)): the dAᴴ(b − Ax) term, absent
/// from the derivative of A⁻¹b, carries a tangent of the size of the rest.
fn residual_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Worst
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let dtype = T::DTYPE;
    let mut worst = Worst::default();
    for (m, n) in [(6, 2), (5, 3)] {
        let a = rng.with_spectrum::<T>(m, n, &[1.5, 1.0, 0.9][..n]);
        let c = rng.matrix::<T>(n, 1);
        let noise = rng.matrix::<T>(m, 1);
        let b = residual_rhs(&a, &c, &noise);
        for obs in [Obs::Norm, Obs::Weighted] {
            let loss = LstsqLoss { source: Source::Input, obs, rtol: None, dtype };
            let mut xs = vec![Input::matrix(&a), Input::matrix(&b)];
            if let Obs::Weighted = obs {
                xs.push(Input::matrix(&rng.matrix::<T>(n, 1)));
            }
            worst.add(both(p, &loss, &xs));
        }
    }
    worst
}

/// A c + 3 r, r the unit vector along (I − A A⁺) noise (Gram–Schmidt
/// against A's columns; A has full column rank).
fn residual_rhs<T: Scalar>(a: &Dense<T>, c: &Dense<T>, noise: &Dense<T>) -> Dense<T> {
    let (m, n) = (a.rows, a.cols);
    let mut basis: Vec<Vec<T>> = Vec::new();
    for j in 0..n {
        let mut v: Vec<T> = (0..m).map(|i| a[(i, j)]).collect();
        orthogonalize(&mut v, &basis);
        basis.push(v);
    }
    let mut r: Vec<T> = (0..m).map(|i| noise[(i, 0)]).collect();
    orthogonalize(&mut r, &basis);
    let ac = a.matmul(c);
    let three = Re::<T>::from_f64(3.0);
    Dense::from_fn(m, 1, |i, _| ac[(i, 0)] + r[i].scale(three))
}

/// v ← normalized (v − Σ q qᴴ v) over the orthonormal `basis`, twice.
fn orthogonalize<T: Scalar>(v: &mut [T], basis: &[Vec<T>]) {
    for _ in 0..2 {
        for q in basis {
            let d: T = q.iter().zip(v.iter()).fold(T::zero(), |s, (a, b)| s + a.conj() * *b);
            for (x, y) in v.iter_mut().zip(q) {
                *x -= d * *y;
            }
        }
    }
    let norm = v.iter().map(|x| x.abs2().to_f64()).sum::<f64>().sqrt();
    let inv = Re::<T>::from_f64(1.0 / norm);
    for x in v.iter_mut() {
        *x = x.scale(inv);
    }
}

/// Overdetermined systems with a large residual.
fn tall_with_residual<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = residual_suite::<f64, _>(&p, 3);
    let complex = residual_suite::<C64, _>(&p, 4);
    eprintln!(
        "residual: fd {:.1e} / dot {:.1e} (f64), fd {:.1e} / dot {:.1e} (c64)",
        real.0, real.1, complex.0, complex.1
    );
}

/// Rank-deficient A = B C (B m×2, C 2×n, both full rank): every
/// perturbation of B and C keeps rank 2, so A⁺ is differentiable along it.
/// Tall, wide, square and batched, with the default thresholds (the
/// rounding-level singular values of B C fall below max(m, n)·ε·s₀) and
/// with rtol = 1e-10.
fn rank_deficient_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Worst
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let dtype = T::DTYPE;
    let mut worst = Worst::default();
    for (m, n, batch, rtol) in [
        (5, 4, 0, None),
        (3, 5, 0, None),
        (4, 4, 0, None),
        (4, 3, 2, None),
        (5, 4, 0, Some(1e-10)),
        (3, 5, 0, Some(1e-10)),
        (4, 4, 0, Some(1e-10)),
        (3, 4, 2, Some(1e-10)),
    ] {
        let inner = 2;
        let spectrum = |rng: &mut Rng, r: usize, c: usize| -> Input<T> {
            let ms: Vec<Dense<T>> =
                (0..batch.max(1)).map(|_| rng.with_spectrum::<T>(r, c, &[1.6, 1.1])).collect();
            if batch == 0 {
                Input::matrix(&ms[0])
            } else {
                Input::batch(&ms)
            }
        };
        let bm = spectrum(&mut rng, m, inner);
        let cm = spectrum(&mut rng, inner, n);
        let w = random::<T>(&mut rng, n, m, batch);
        let loss = PinvLoss { source: Source::Product, rtol, dtype };
        worst.add(both(p, &loss, &[bm.clone(), cm.clone(), w]));
        let b = random::<T>(&mut rng, m, 2, batch);
        let wx = random::<T>(&mut rng, n, 2, batch);
        let norm = LstsqLoss { source: Source::Product, obs: Obs::Norm, rtol, dtype };
        worst.add(both(p, &norm, &[bm.clone(), cm.clone(), b.clone()]));
        let weighted = LstsqLoss { source: Source::Product, obs: Obs::Weighted, rtol, dtype };
        worst.add(both(p, &weighted, &[bm, cm, b, wx]));
    }
    worst
}

/// Constant-rank derivatives at rank-deficient matrices.
fn rank_deficient_product<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = rank_deficient_suite::<f64, _>(&p, 5);
    let complex = rank_deficient_suite::<C64, _>(&p, 6);
    eprintln!(
        "rank deficient: fd {:.1e} / dot {:.1e} (f64), fd {:.1e} / dot {:.1e} (c64)",
        real.0, real.1, complex.0, complex.1
    );
}

/// A constant A: only b has a tangent (the rule's dA = 0 path, dx = A⁺ db).
fn constant_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Worst
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let dtype = T::DTYPE;
    let mut worst = Worst::default();
    for (m, n) in [(5, 3), (3, 5)] {
        let source = Source::Constant(m, n);
        let b = random::<T>(&mut rng, m, 2, 0);
        let norm = LstsqLoss { source, obs: Obs::Norm, rtol: None, dtype };
        worst.add(both(p, &norm, core::slice::from_ref(&b)));
        let wx = random::<T>(&mut rng, n, 2, 0);
        let weighted = LstsqLoss { source, obs: Obs::Weighted, rtol: None, dtype };
        worst.add(both(p, &weighted, &[b, wx]));
    }
    worst
}

/// lstsq with a constant matrix.
fn constant_matrix<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = constant_suite::<f64, _>(&p, 7);
    let complex = constant_suite::<C64, _>(&p, 8);
    eprintln!(
        "constant A: fd {:.1e} / dot {:.1e} (f64), fd {:.1e} / dot {:.1e} (c64)",
        real.0, real.1, complex.0, complex.1
    );
}

/// Thresholds: A with singular values (2, 1, δ) and rtol = 1e-4, so the
/// forward drops the third value (rank 2) and so must the rule's A⁺.
/// Perturbations along every direction: a step of 1e-6·‖A‖ keeps the third
/// value under the threshold, so the loss is the truncated pseudo-inverse
/// (A_2)⁺, smooth there. At δ = 0 the rule is its exact derivative; at
/// δ = 1e-10 it is off by O(δ/s₂) (module docs of the rule), far below the
/// tolerance. A rule that recomputed A⁺ with the default thresholds would
/// keep 1/δ = 1e10 at δ = 1e-10.
fn threshold_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Worst
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let dtype = T::DTYPE;
    let rtol = Some(1e-4);
    let mut worst = Worst::default();
    for (m, n, delta) in [(5, 3, 1e-10), (3, 5, 1e-10), (3, 3, 1e-10), (5, 3, 0.0), (3, 5, 0.0)] {
        let a = Input::matrix(&rng.with_spectrum::<T>(m, n, &[2.0, 1.0, delta]));
        let w = random::<T>(&mut rng, n, m, 0);
        let loss = PinvLoss { source: Source::Input, rtol, dtype };
        worst.add(both(p, &loss, &[a.clone(), w]));
        let b = random::<T>(&mut rng, m, 2, 0);
        let wx = random::<T>(&mut rng, n, 2, 0);
        let norm = LstsqLoss { source: Source::Input, obs: Obs::Norm, rtol, dtype };
        worst.add(both(p, &norm, &[a.clone(), b.clone()]));
        let weighted = LstsqLoss { source: Source::Input, obs: Obs::Weighted, rtol, dtype };
        worst.add(both(p, &weighted, &[a, b, wx]));
    }
    worst
}

/// The rule's A⁺ uses the forward's thresholds.
fn thresholds_match_the_forward<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = threshold_suite::<f64, _>(&p, 9);
    let complex = threshold_suite::<C64, _>(&p, 10);
    eprintln!(
        "thresholds: fd {:.1e} / dot {:.1e} (f64), fd {:.1e} / dot {:.1e} (c64)",
        real.0, real.1, complex.0, complex.1
    );
}

lindiff_tests::providers!(
    full_rank_tall_wide_square_batched,
    tied_and_nearly_tied_values,
    tall_with_residual,
    rank_deficient_product,
    constant_matrix,
    thresholds_match_the_forward,
);
