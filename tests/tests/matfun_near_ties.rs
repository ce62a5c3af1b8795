//! The general matrix functions `expm`, `logm` and `sqrtm` at near ties:
//! value, gradient and Hessian-vector product of Re⟨W, f(A)⟩, each within
//! a fixed tolerance of a reference that divides by no gap, over gaps 0 and
//! 1e-14 … 1e-4 between three eigenvalues, in f64 and c64.
//!
//! The input is non-normal and diagonalisable by construction,
//! A = X diag(λ) X⁻¹ with X = Q T (Q unitary, T unit upper triangular with
//! entries of order ½, so cond(X) is a few and X⁻¹ = T⁻¹ Qᴴ is exact to
//! rounding), λ = (1, 1 + g, 1 + 2g, 2.2). The references are the
//! Daleckii–Krein formulas in that basis (docs/ad-rules.md, "Matrix
//! functions" and "Second order of a Hermitian matrix function"; they hold
//! for any diagonalisable A, not only Hermitian ones):
//!
//! * f(A) = X f(Λ) X⁻¹;
//! * ∇_A = X⁻ᴴ (Γ ∘ (Xᴴ W X⁻ᴴ)) Xᴴ with Γ_ij = f[λ_i, λ_j];
//! * H·(D, 0) (forward over reverse on both faces, bit for bit, and
//!   reverse over reverse within 1e-12), A part: X⁻ᴴ G Xᴴ with
//!   G_ab = Σ_j W̃_aj f[λ_a, λ_b, λ_j] conj(D̃_bj) + Σ_i W̃_ib f[λ_i, λ_a, λ_b] conj(D̃_ia),
//!   W̃ = Xᴴ W X⁻ᴴ, D̃ = X⁻¹ D X; W part: L(A, D) = X (Γ ∘ D̃) X⁻¹.
//!
//! The divided differences come from the Taylor series of f about the
//! points' mean, f[x_0, …, x_k] = Σ_j f^(k+j)(m)/(k+j)! · h_j(x − m) (h_j
//! the complete homogeneous symmetric polynomials), wherever the points lie
//! within 0.1 of each other, and from the quotient of two lower ones across
//! a spread above 0.1 (where it loses nothing): no quotient over a small
//! gap anywhere, so the references keep full precision at every gap.
//! lindiff's own kernels share none of this: Padé with scaling and
//! squaring (expm), Schur with inverse scaling and squaring (logm, sqrtm),
//! and block-triangular Fréchet derivatives.

use lindiff_core::face::Face;
use lindiff_core::{Element, Ops, Result, Scalar};
use lindiff_tests::ad::{eager_grad, traced_grad, Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::hvp::{assert_same_bits, eager_hvp, relative_error, reverse_hvp, traced_hvp};
use lindiff_tests::losses::pairing;
use num_complex::Complex;

const N: usize = 4;

/// The three functions, each with its Taylor coefficients about m.
#[derive(Clone, Copy, Debug)]
enum Function {
    Exp,
    Log,
    Sqrt,
}

impl Function {
    const ALL: [Function; 3] = [Function::Exp, Function::Log, Function::Sqrt];

    /// f(x) for real x > 0.
    fn at(self, x: f64) -> f64 {
        match self {
            Function::Exp => x.exp(),
            Function::Log => x.ln(),
            Function::Sqrt => x.sqrt(),
        }
    }

    /// f^(n)(m)/n!.
    fn taylor(self, m: f64, n: usize) -> f64 {
        match self {
            Function::Exp => m.exp() / (1..=n).map(|k| k as f64).product::<f64>(),
            Function::Log if n == 0 => m.ln(),
            Function::Log => (if n % 2 == 1 { 1.0 } else { -1.0 }) / (n as f64 * m.powi(n as i32)),
            Function::Sqrt => {
                // binom(1/2, n) m^(1/2 − n)
                let binom: f64 = (0..n).map(|k| (0.5 - k as f64) / (k + 1) as f64).product();
                binom * m.sqrt() / m.powi(n as i32)
            }
        }
    }

    /// f[x_0, …, x_k], by the series about the mean where the points are
    /// within 0.1 of each other, else by the quotient across the widest
    /// pair (sorted, so the pair is the first and last).
    fn divided(self, points: &[f64]) -> f64 {
        let mut x = points.to_vec();
        x.sort_by(f64::total_cmp);
        let k = x.len() - 1;
        if k == 0 {
            return self.at(x[0]);
        }
        let spread = x[k] - x[0];
        if spread > 0.1 {
            return (self.divided(&x[1..]) - self.divided(&x[..k])) / spread;
        }
        let m = x.iter().sum::<f64>() / x.len() as f64;
        // h_j(δ) by adding one variable at a time: h_j ← h_j + δ·h_{j−1}.
        const TERMS: usize = 30;
        let mut h = [0.0; TERMS];
        h[0] = 1.0;
        for &xi in &x {
            let d = xi - m;
            for j in 1..TERMS {
                h[j] += d * h[j - 1];
            }
        }
        (0..TERMS).map(|j| self.taylor(m, k + j) * h[j]).sum()
    }

    fn name(self) -> &'static str {
        match self {
            Function::Exp => "expm",
            Function::Log => "logm",
            Function::Sqrt => "sqrtm",
        }
    }
}

/// Re⟨W, f(A)⟩ with inputs (A, W).
struct Pairing(Function);

impl Loss for Pairing {
    fn name(&self) -> String {
        format!("Re<W, {}(A)>", self.0.name())
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let fa = match self.0 {
            Function::Exp => f.expm(&xs[0])?,
            Function::Log => f.logm(&xs[0])?,
            Function::Sqrt => f.sqrtm(&xs[0])?,
        };
        pairing(f, &xs[1], &fa)
    }
}

fn real<T: Scalar>(x: f64) -> T {
    T::from_f64(x)
}

/// A·Γ entrywise with a real Γ.
fn hadamard<T: Scalar>(a: &Dense<T>, gamma: &[[f64; N]; N]) -> Dense<T> {
    Dense::from_fn(N, N, |i, j| a[(i, j)] * real::<T>(gamma[i][j]))
}

/// The inverse of a unit upper-triangular T by back substitution.
fn unit_upper_inverse<T: Scalar>(t: &Dense<T>) -> Dense<T> {
    let mut inv = Dense::<T>::eye(N, N);
    for c in 0..N {
        for k in (0..N).rev() {
            let x = inv[(k, c)];
            for i in 0..k {
                let update = t[(i, k)] * x;
                inv[(i, c)] -= update;
            }
        }
    }
    inv
}

/// The test problem at one gap: A, its basis X, X⁻¹, and λ.
struct Problem<T> {
    a: Dense<T>,
    x: Dense<T>,
    x_inv: Dense<T>,
    lambda: [f64; N],
}

impl<T: Scalar> Problem<T> {
    fn new(gap: f64, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let q = rng.unitary::<T>(N);
        let t = Dense::from_fn(N, N, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => rng.scalar::<T>().scale(Re::<T>::from_f64(0.5)),
            std::cmp::Ordering::Equal => T::one(),
            std::cmp::Ordering::Greater => T::zero(),
        });
        let x = q.matmul(&t);
        let x_inv = unit_upper_inverse(&t).matmul(&q.adjoint());
        let lambda = [1.0, 1.0 + gap, 1.0 + 2.0 * gap, 2.2];
        let a = Self::spectral(&x, &x_inv, &lambda);
        Problem { a, x, x_inv, lambda }
    }

    /// X diag(d) X⁻¹.
    fn spectral(x: &Dense<T>, x_inv: &Dense<T>, d: &[f64; N]) -> Dense<T> {
        let d: Vec<Re<T>> = d.iter().map(|&v| Re::<T>::from_f64(v)).collect();
        x.scale_cols(&d).matmul(x_inv)
    }

    fn gamma(&self, f: Function) -> [[f64; N]; N] {
        let l = self.lambda;
        std::array::from_fn(|i| std::array::from_fn(|j| f.divided(&[l[i], l[j]])))
    }

    /// f(A), ∇_A, ∇_W (= f(A)), and H·(D, 0) for both inputs.
    fn reference(&self, f: Function, w: &Dense<T>, d: &Dense<T>) -> ([Dense<T>; 2], [Dense<T>; 2]) {
        let (x, xi) = (&self.x, &self.x_inv);
        let gamma = self.gamma(f);
        let fa = Self::spectral(x, xi, &self.lambda.map(|l| f.at(l)));
        let wt = x.adjoint().matmul(w).matmul(&xi.adjoint());
        let grad_a = xi.adjoint().matmul(&hadamard(&wt, &gamma)).matmul(&x.adjoint());
        let dt = xi.matmul(d).matmul(x);
        let l = self.lambda;
        let f3 = |i: usize, j: usize, k: usize| real::<T>(f.divided(&[l[i], l[j], l[k]]));
        let g = Dense::from_fn(N, N, |a, b| {
            let mut s = T::zero();
            for j in 0..N {
                s += wt[(a, j)] * f3(a, b, j) * dt[(b, j)].conj();
            }
            for i in 0..N {
                s += wt[(i, b)] * f3(i, a, b) * dt[(i, a)].conj();
            }
            s
        });
        let hvp_a = xi.adjoint().matmul(&g).matmul(&x.adjoint());
        let hvp_w = x.matmul(&hadamard(&dt, &gamma)).matmul(xi);
        ([grad_a, fa], [hvp_a, hvp_w])
    }
}

/// The largest of the inputs' errors, each relative to its own largest
/// reference entry (a missing or misshapen result fails).
fn per_input_error<T: Scalar>(at: &str, got: &[Vec<T>], want: &[Vec<T>]) -> f64 {
    assert_eq!(got.len(), want.len(), "{at}: result count");
    got.iter()
        .zip(want)
        .map(|(g, w)| {
            assert_eq!(g.len(), w.len(), "{at}: result length");
            relative_error(std::slice::from_ref(g), std::slice::from_ref(w))
        })
        .fold(0.0, f64::max)
}

/// The gaps swept.
const GAPS: [f64; 7] = [0.0, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4];

/// Largest relative errors of (gradient, HVP) over the sweep for one
/// function and dtype; panics where the faces disagree in bits or a step
/// fails.
fn sweep<T: Scalar + Element>(f: Function) -> (f64, f64) {
    let cpu = lindiff_tests::Cpu::default();
    let loss = Pairing(f);
    let (mut grad_err, mut hvp_err) = (0.0f64, 0.0f64);
    for seed in [1, 2] {
        for gap in GAPS {
            let p = Problem::<T>::new(gap, seed);
            let mut rng = Rng::new(100 + seed);
            let w = rng.matrix::<T>(N, N);
            let d = rng.matrix::<T>(N, N);
            let (grads, hvps) = p.reference(f, &w, &d);
            let want_g: Vec<Vec<T>> = grads.iter().map(|m| m.data.clone()).collect();
            let want_h: Vec<Vec<T>> = hvps.iter().map(|m| m.data.clone()).collect();
            let xs = [Input::matrix(&p.a), Input::matrix(&w)];
            let ds = [Input::matrix(&d), Input::matrix(&Dense::zeros(N, N))];
            let at = format!("{} gap {gap:e} seed {seed}", loss.name());
            let eager = eager_grad(cpu, &loss, &xs).unwrap_or_else(|e| panic!("{at}: eager gradient: {e}"));
            let traced =
                traced_grad(&cpu, &loss, &xs).unwrap_or_else(|e| panic!("{at}: traced gradient: {e}"));
            assert_same_bits(&at, &eager, &traced);
            grad_err = grad_err.max(per_input_error(&at, &eager, &want_g));
            let eager = eager_hvp(cpu, &loss, &xs, &ds).unwrap_or_else(|e| panic!("{at}: eager HVP: {e}"));
            let traced =
                traced_hvp(&cpu, &loss, &xs, &ds).unwrap_or_else(|e| panic!("{at}: traced HVP: {e}"));
            assert_same_bits(&at, &eager, &traced);
            let reverse =
                reverse_hvp(&cpu, &loss, &xs, &ds).unwrap_or_else(|e| panic!("{at}: reverse HVP: {e}"));
            let gap = per_input_error(&at, &reverse, &eager);
            assert!(gap <= 1e-12, "{at}: reverse over reverse vs forward over reverse: {gap:.1e}");
            hvp_err = hvp_err.max(per_input_error(&at, &eager, &want_h));
        }
    }
    (grad_err, hvp_err)
}

/// Every function, gap and dtype: the gradient and the HVP within 1e-13 of
/// the reference, relative to its largest entry (measured: 4.2e-15 at
/// most; the margin is for other CPUs' rounding).
fn near_ties_are_exact<T: Scalar + Element>(dtype: &str) {
    let mut failures = Vec::new();
    for f in Function::ALL {
        let (g, h) = sweep::<T>(f);
        eprintln!("{dtype} {:<6} gradient {g:.1e}  HVP {h:.1e}", f.name());
        if g > 1e-13 || h > 1e-13 {
            failures.push(format!("{dtype} {}: gradient {g:e}, HVP {h:e}", f.name()));
        }
    }
    assert!(failures.is_empty(), "off the reference: {failures:?}");
}

#[test]
fn general_matrix_functions_at_near_ties_f64() {
    near_ties_are_exact::<f64>("f64");
}

#[test]
fn general_matrix_functions_at_near_ties_c64() {
    near_ties_are_exact::<Complex<f64>>("c64");
}

/// The reference's divided differences themselves, against closed forms
/// away from ties (where the plain quotients are exact to rounding) and
/// at exact ties (derivatives): the series and the quotient agree.
#[test]
fn reference_divided_differences() {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-14 * b.abs().max(1.0);
    for f in Function::ALL {
        // First order across a spread of 0.05 (series) against the quotient.
        let (x, y) = (1.3, 1.35);
        assert!(close(f.divided(&[x, y]), (f.at(y) - f.at(x)) / (y - x)), "{f:?} first order");
        // Second order at a triple tie: f''(x)/2.
        let second = match f {
            Function::Exp => x.exp() / 2.0,
            Function::Log => -1.0 / (2.0 * x * x),
            Function::Sqrt => -0.125 / (x * x.sqrt()),
        };
        assert!(close(f.divided(&[x, x, x]), second), "{f:?} second order at a tie");
        // Second order over a wide spread: the recursive quotient.
        let (a, b, c) = (1.0, 1.05, 2.2);
        let want = ((f.at(c) - f.at(b)) / (c - b) - (f.at(b) - f.at(a)) / (b - a)) / (c - a);
        assert!((f.divided(&[a, b, c]) - want).abs() <= 1e-12, "{f:?} second order, wide");
    }
}
