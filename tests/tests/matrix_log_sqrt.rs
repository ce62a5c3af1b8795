//! The principal logarithm and square root of general matrices (`logm`,
//! `sqrtm`) and their Fréchet derivatives (`logm_frechet`,
//! `sqrtm_frechet`; docs/ad-rules.md#logarithm-and-square-root):
//! * the forward against closed forms that share no code with the kernel:
//!   2×2 triangular matrices, a rotation (log R(θ) = θ·J), a non-normal
//!   similarity S diag(d) S⁻¹ (f(A) = S diag(f(d)) S⁻¹), and the identities
//!   (A^{1/2})² = A and e^{log A} = A on random matrices, real and complex;
//!   f32 and c32 against f64;
//! * the Fréchet derivatives against their defining equations:
//!   S L + L S = E for the square root, L_exp(log A, L_log(A, E)) = E for
//!   the logarithm; the flags against explicitly transposed inputs;
//! * gradients of ⟨W, f(A)⟩ and ⟨W, L_f(op(A), E)⟩ by the `check` harness,
//!   also at repeated, nearly repeated and defective eigenvalues;
//! * domain errors (a real negative eigenvalue, a zero one, also through
//!   the Fréchet ops), shapes, a batch, 0×0;
//! * scales where squares under- or overflow, a cyclic permutation, a −0
//!   imaginary part on the branch cut.

use lindiff_core::face::direct::Direct;
use lindiff_core::face::Face;
use lindiff_core::op::{LinalgOp, LogmFrechet, SqrtmFrechet};
use lindiff_core::{Element, Error, MatOp, Op, Ops, Result, Scalar};
use lindiff_tests::ad::{check, Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::pairing;
use lindiff_tests::taylor::{jordan_block, plus, relative, scaled, similarity, with_eigenvalues};
use lindiff_tests::TestProvider;
use num_complex::Complex;

#[derive(Clone, Copy, Debug, PartialEq)]
enum F {
    Log,
    Sqrt,
}

/// A random n×n matrix scaled by 1/√n plus `shift`·I: eigenvalues in a
/// disc of radius about 2 around `shift`, off the negative real axis for
/// shift ≥ 3.
fn shifted<T: Scalar>(n: usize, shift: f64, seed: u64) -> Dense<T> {
    let r = Rng::new(seed).matrix::<T>(n, n);
    plus(&scaled(&r, 1.0 / (n as f64).sqrt()), &scaled(&Dense::<T>::eye(n, n), shift))
}

fn run<T: Scalar + Element, P: TestProvider>(p: &P, f: F, a: &Dense<T>) -> Result<Dense<T>> {
    let mut la = Direct::new(*p);
    let t = la.tensor(&[a.rows, a.cols], &a.data)?;
    let y = match f {
        F::Log => la.logm(&t)?,
        F::Sqrt => la.sqrtm(&t)?,
    };
    Ok(Dense::from_col_major(a.rows, a.cols, y.to_vec::<T>()?))
}

fn frechet<T: Scalar + Element, P: TestProvider>(
    p: &P,
    f: F,
    a: &Dense<T>,
    e: &Dense<T>,
    how: MatOp,
) -> Dense<T> {
    let mut la = Direct::new(*p);
    let ta = la.tensor(&[a.rows, a.cols], &a.data).unwrap();
    let te = la.tensor(&[e.rows, e.cols], &e.data).unwrap();
    let l = la.single(frechet_op(f, how), &[&ta, &te]).unwrap();
    Dense::from_col_major(a.rows, a.cols, l.to_vec::<T>().unwrap())
}

fn frechet_op(f: F, how: MatOp) -> Op {
    Op::Linalg(match f {
        F::Log => LinalgOp::LogmFrechet(LogmFrechet(how)),
        F::Sqrt => LinalgOp::SqrtmFrechet(SqrtmFrechet(how)),
    })
}

fn expm<T: Scalar + Element, P: TestProvider>(p: &P, a: &Dense<T>) -> Dense<T> {
    let mut la = Direct::new(*p);
    let t = la.tensor(&[a.rows, a.cols], &a.data).unwrap();
    Dense::from_col_major(a.rows, a.cols, la.expm(&t).unwrap().to_vec::<T>().unwrap())
}

fn forward_accuracy<T: Scalar + Element, P: TestProvider>(p: &P) {
    let name = T::DTYPE.name();
    let re = |x: f64| T::from_real(Re::<T>::from_f64(x));
    // [[a, b], [0, c]]: log has b·(ln a − ln c)/(a − c) above the diagonal,
    // sqrt b/(√a + √c).
    for (a, b, c) in [(2.0f64, 3.0f64, 5.0f64), (0.5, -1.0, 0.5), (1e-3, 1.0, 4.0)] {
        let m = Dense::from_fn(2, 2, |i, j| re([[a, b], [0.0, c]][i][j]));
        let coupling = if a == c { b / a } else { b * (f64::ln(a) - f64::ln(c)) / (a - c) };
        let want = Dense::from_fn(2, 2, |i, j| re([[a.ln(), coupling], [0.0, c.ln()]][i][j]));
        let err = relative(&run(p, F::Log, &m).unwrap(), &want);
        assert!(err <= 1e-15, "{name} log [[{a}, {b}], [0, {c}]]: {err:.2e}");
        let want =
            Dense::from_fn(2, 2, |i, j| re([[a.sqrt(), b / (a.sqrt() + c.sqrt())], [0.0, c.sqrt()]][i][j]));
        let err = relative(&run(p, F::Sqrt, &m).unwrap(), &want);
        assert!(err <= 1e-15, "{name} sqrt [[{a}, {b}], [0, {c}]]: {err:.2e}");
    }
    // log R(θ) = [[0, θ], [−θ, 0]] for |θ| < π (eigenvalues e^{±iθ}).
    for theta in [0.3f64, 2.5, 3.1] {
        let r =
            Dense::from_fn(2, 2, |i, j| re([[theta.cos(), theta.sin()], [-theta.sin(), theta.cos()]][i][j]));
        let want = Dense::from_fn(2, 2, |i, j| re([[0.0, theta], [-theta, 0.0]][i][j]));
        let err = relative(&run(p, F::Log, &r).unwrap(), &want);
        assert!(err <= 1e-14, "{name} log R({theta}): {err:.2e}");
    }
    // S diag(d) S⁻¹, non-normal.
    let (s, s_inv) = similarity::<T>(5, 6);
    let d = [0.01, 0.5, 1.0, 3.0, 40.0];
    let with = |g: fn(f64) -> f64| {
        let v: Vec<Re<T>> = d.iter().map(|&x| Re::<T>::from_f64(g(x))).collect();
        s.scale_cols(&v).matmul(&s_inv)
    };
    let a = with(|x| x);
    let err = relative(&run(p, F::Log, &a).unwrap(), &with(f64::ln));
    assert!(err <= 1e-13, "{name} log of a non-normal similarity: {err:.2e}");
    let err = relative(&run(p, F::Sqrt, &a).unwrap(), &with(f64::sqrt));
    assert!(err <= 1e-13, "{name} sqrt of a non-normal similarity: {err:.2e}");
    // Random matrices, n = 3 … 40: (A^{1/2})² = A, e^{log A} = A.
    for (k, n) in [3, 8, 20, 40].into_iter().enumerate() {
        let a = shifted::<T>(n, 3.0, 10 + k as u64);
        let r = run(p, F::Sqrt, &a).unwrap();
        let err = relative(&r.matmul(&r), &a);
        assert!(err <= 1e-13, "{name} n = {n}: (A^½)² vs A {err:.2e}");
        let l = run(p, F::Log, &a).unwrap();
        let err = relative(&expm(p, &l), &a);
        assert!(err <= 1e-13, "{name} n = {n}: e^(log A) vs A {err:.2e}");
    }
}

fn forward_f64<P: TestProvider>(p: &P) {
    forward_accuracy::<f64, P>(p);
}

fn forward_c64<P: TestProvider>(p: &P) {
    forward_accuracy::<Complex<f64>, P>(p);
}

/// Single precision against double precision at the same rounded input.
fn forward_single<P: TestProvider>(p: &P) {
    let a = shifted::<f64>(5, 3.0, 20);
    let a32 = Dense::from_fn(5, 5, |i, j| a[(i, j)] as f32);
    let a64 = Dense::from_fn(5, 5, |i, j| f64::from(a32[(i, j)]));
    let c32 = Dense::from_fn(5, 5, |i, j| Complex::new(a32[(i, j)], 0.0f32));
    for f in [F::Log, F::Sqrt] {
        let want = run(p, f, &a64).unwrap();
        let got = run(p, f, &a32).unwrap();
        let err = relative(&Dense::from_fn(5, 5, |i, j| f64::from(got[(i, j)])), &want);
        assert!(err <= 1e-5, "f32 {f:?}: {err:.2e}");
        let got = run(p, f, &c32).unwrap();
        let err = relative(&Dense::from_fn(5, 5, |i, j| f64::from(got[(i, j)].re)), &want);
        assert!(err <= 1e-5, "c32 {f:?}: {err:.2e}");
    }
}

/// S L + L S = E for the square root; L_exp(log A, L_log(A, E)) = E for the
/// logarithm; each flag equals the plain op on op(A), bit for bit.
fn frechet_identities<T: Scalar + Element, P: TestProvider>(p: &P) {
    let name = T::DTYPE.name();
    for (k, n) in [3, 8, 20].into_iter().enumerate() {
        let a = shifted::<T>(n, 3.0, 30 + k as u64);
        let e = Rng::new(40 + k as u64).matrix::<T>(n, n);
        let s = run(p, F::Sqrt, &a).unwrap();
        let l = frechet(p, F::Sqrt, &a, &e, MatOp::Identity);
        let err = relative(&plus(&s.matmul(&l), &l.matmul(&s)), &e);
        assert!(err <= 1e-12, "{name} n = {n}: S L + L S vs E {err:.2e}");
        let log_a = run(p, F::Log, &a).unwrap();
        let l = frechet(p, F::Log, &a, &e, MatOp::Identity);
        let mut la = Direct::new(*p);
        let (tx, tl) = (la.tensor(&[n, n], &log_a.data).unwrap(), la.tensor(&[n, n], &l.data).unwrap());
        let back = Dense::from_col_major(n, n, la.expm_frechet(&tx, &tl).unwrap().to_vec::<T>().unwrap());
        let err = relative(&back, &e);
        assert!(err <= 1e-11, "{name} n = {n}: L_exp(log A, L_log(A, E)) vs E {err:.2e}");
        for f in [F::Log, F::Sqrt] {
            let at = Dense::from_fn(n, n, |i, j| a[(j, i)]);
            assert_eq!(
                frechet(p, f, &a, &e, MatOp::Transpose).data,
                frechet(p, f, &at, &e, MatOp::Identity).data
            );
            let ah = a.adjoint();
            assert_eq!(
                frechet(p, f, &a, &e, MatOp::Adjoint).data,
                frechet(p, f, &ah, &e, MatOp::Identity).data
            );
        }
    }
}

fn frechet_f64<P: TestProvider>(p: &P) {
    frechet_identities::<f64, P>(p);
}

fn frechet_c64<P: TestProvider>(p: &P) {
    frechet_identities::<Complex<f64>, P>(p);
}

/// ⟨W, f(A)⟩.
#[derive(Clone, Copy, Debug)]
struct Pairing(F);

impl Loss for Pairing {
    fn name(&self) -> String {
        format!("<W, {:?}m(A)>", self.0)
    }

    fn eval<G: Face + ?Sized>(&self, f: &mut G, xs: &[G::Tensor]) -> Result<G::Tensor> {
        let y = match self.0 {
            F::Log => f.logm(&xs[0])?,
            F::Sqrt => f.sqrtm(&xs[0])?,
        };
        pairing(f, &xs[1], &y)
    }
}

/// ⟨W, L_f(op(A), E)⟩, differentiated in A and E.
#[derive(Clone, Copy, Debug)]
struct FrechetPairing(F, MatOp);

impl Loss for FrechetPairing {
    fn name(&self) -> String {
        format!("<W, {:?}m_frechet({:?}(A), E)>", self.0, self.1)
    }

    fn eval<G: Face + ?Sized>(&self, f: &mut G, xs: &[G::Tensor]) -> Result<G::Tensor> {
        let l = f.single(frechet_op(self.0, self.1), &[&xs[0], &xs[1]])?;
        pairing(f, &xs[2], &l)
    }
}

/// The harness at a random A, and at repeated eigenvalues, where the
/// Fréchet derivative exists and the algorithms divide by no gap: a
/// diagonalizable non-normal S diag(2, 2, 3, 3) S⁻¹, a nearly repeated one
/// (gap 1e-9), and a defective 2I + N (one Jordan block).
fn gradients<T: Scalar + Element, P: TestProvider>(p: &P) {
    let w = Rng::new(51).matrix::<T>(4, 4);
    let e = Rng::new(52).matrix::<T>(4, 4);
    let repeated = with_eigenvalues::<T>(&[2.0, 2.0, 3.0, 3.0], 53);
    let near = with_eigenvalues::<T>(&[2.0, 2.0 + 1e-9, 3.0, 3.5], 53);
    for a in [shifted::<T>(4, 3.0, 50), repeated, near, jordan_block::<T>(4, 2.0, 54)] {
        for f in [F::Log, F::Sqrt] {
            check(p, &Pairing(f), &[Input::matrix(&a), Input::matrix(&w)]);
            for how in [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint] {
                check(p, &FrechetPairing(f, how), &[Input::matrix(&a), Input::matrix(&e), Input::matrix(&w)]);
            }
        }
    }
}

fn gradients_f64<P: TestProvider>(p: &P) {
    gradients::<f64, P>(p);
}

fn gradients_c64<P: TestProvider>(p: &P) {
    gradients::<Complex<f64>, P>(p);
}

/// A real matrix with a negative eigenvalue has no real logarithm or
/// square root (`OutsideDomain`); as complex input it has principal ones.
/// A zero eigenvalue is `Singular` for log; two coupled zero eigenvalues
/// are `Singular` for sqrt (no root exists), while the zero matrix has the
/// root 0. NaN, shapes, a batch, 0×0.
fn domains_and_shapes<P: TestProvider>(p: &P) {
    let negative = with_eigenvalues::<f64>(&[-2.0, 1.0, 3.0], 60);
    for f in [F::Log, F::Sqrt] {
        let op = if f == F::Log { "logm" } else { "sqrtm" };
        let err = run(p, f, &negative).unwrap_err();
        assert!(matches!(err, Error::OutsideDomain { op: o, arg: "a", .. } if o == op), "{f:?}: {err}");
    }
    let complex = Dense::from_fn(3, 3, |i, j| Complex::new(negative[(i, j)], 0.0));
    let l = run(p, F::Log, &complex).unwrap();
    assert!(relative(&expm(p, &l), &complex) <= 1e-13, "e^(log A) = A for a complex A with λ = −2");
    let r = run(p, F::Sqrt, &complex).unwrap();
    assert!(relative(&r.matmul(&r), &complex) <= 1e-13, "(A^½)² = A for a complex A with λ = −2");
    let zero = Dense::from_fn(3, 3, |_, _| 0.0f64);
    assert!(matches!(run(p, F::Log, &zero), Err(Error::Singular { op: "logm", arg: "a", .. })));
    assert!(run(p, F::Sqrt, &zero).unwrap().data.iter().all(|&x| x == 0.0));
    let jordan = Dense::from_fn(2, 2, |i, j| if (i, j) == (0, 1) { 1.0f64 } else { 0.0 });
    assert!(matches!(run(p, F::Sqrt, &jordan), Err(Error::Singular { op: "sqrtm", arg: "a", .. })));
    let mut nan = shifted::<f64>(3, 3.0, 61);
    nan[(0, 1)] = f64::NAN;
    assert!(matches!(run(p, F::Log, &nan), Err(Error::NonFinite { op: "logm", arg: "a", .. })));
    let mut la = Direct::new(*p);
    let wide = la.tensor(&[2, 3], &[1.0f64; 6]).unwrap();
    assert!(matches!(la.sqrtm(&wide), Err(Error::NotSquare { op: "sqrtm", arg: "a", .. })));
    let a = la.tensor(&[3, 3], &shifted::<f64>(3, 3.0, 62).data).unwrap();
    let e4 = la.tensor(&[4, 4], &[0.0f64; 16]).unwrap();
    assert!(matches!(la.logm_frechet(&a, &e4), Err(Error::DimMismatch { op: "logm_frechet", arg: "e", .. })));
    let ms: Vec<Dense<f64>> = (0..3).map(|k| shifted::<f64>(3, 3.0 + k as f64, 63 + k as u64)).collect();
    let data: Vec<f64> = ms.iter().flat_map(|m| m.data.clone()).collect();
    let batch = la.tensor(&[3, 3, 3], &data).unwrap();
    let out = la.logm(&batch).unwrap().to_vec::<f64>().unwrap();
    for (k, m) in ms.iter().enumerate() {
        assert_eq!(out[9 * k..9 * k + 9], run(p, F::Log, m).unwrap().data[..], "batch item {k}");
    }
    let empty = la.tensor(&[0, 0], &[0.0f64; 0]).unwrap();
    assert!(la.sqrtm(&empty).unwrap().to_vec::<f64>().unwrap().is_empty());
}

/// Inputs the Schur form must not stumble on:
/// * scale: sqrtm(2^k B) = 2^{k/2} sqrtm(B), logm(2^k B) = logm(B) + k ln 2·I
///   at k = ±600 (f64) and ±70 (f32), where squares of entries under- or
///   overflow;
/// * a cyclic permutation (complex, n = 6: eigenvalues the 6th roots of
///   unity, −1 among them), where unshifted QR cycles: e^{log P} = P,
///   (P^{1/2})² = P;
/// * an eigenvalue −2 with a −0 imaginary part (the conjugate of a real
///   triangular matrix): the diagonal and the square roots take the same
///   branch, so e^{log A} = A.
fn hard_inputs<P: TestProvider>(p: &P) {
    let b = shifted::<f64>(4, 3.0, 70);
    let (sqrt_b, log_b) = (run(p, F::Sqrt, &b).unwrap(), run(p, F::Log, &b).unwrap());
    for k in [-600, 600] {
        let a = scaled(&b, 2f64.powi(k));
        let want = scaled(&sqrt_b, 2f64.powi(k / 2));
        let err = relative(&run(p, F::Sqrt, &a).unwrap(), &want);
        assert!(err <= 1e-13, "sqrtm(2^{k} B): {err:.2e}");
        let shift = scaled(&Dense::<f64>::eye(4, 4), k as f64 * std::f64::consts::LN_2);
        let err = relative(&run(p, F::Log, &a).unwrap(), &plus(&log_b, &shift));
        assert!(err <= 1e-13, "logm(2^{k} B): {err:.2e}");
    }
    let b32 = Dense::from_fn(4, 4, |i, j| b[(i, j)] as f32);
    let sqrt_b32 = run(p, F::Sqrt, &b32).unwrap();
    for k in [-70, 70] {
        let a = Dense::from_fn(4, 4, |i, j| b32[(i, j)] * 2f32.powi(k));
        let got = run(p, F::Sqrt, &a).unwrap();
        let want = Dense::from_fn(4, 4, |i, j| sqrt_b32[(i, j)] * 2f32.powi(k / 2));
        assert!(relative(&got, &want) <= 1e-5, "f32 sqrtm(2^{k} B)");
    }
    let c = |x: f64| Complex::new(x, 0.0);
    let cyclic = Dense::from_fn(6, 6, |i, j| if (i + 1) % 6 == j { c(1.0) } else { c(0.0) });
    let l = run(p, F::Log, &cyclic).unwrap();
    assert!(relative(&expm(p, &l), &cyclic) <= 1e-13, "e^(log P) = P");
    let r = run(p, F::Sqrt, &cyclic).unwrap();
    assert!(relative(&r.matmul(&r), &cyclic) <= 1e-13, "(P^½)² = P");
    let minus_zero = |x: f64| Complex::new(x, -0.0);
    let a = Dense::from_fn(2, 2, |i, j| minus_zero([[-2.0, 1.0], [0.0, 3.0]][i][j]));
    let l = run(p, F::Log, &a).unwrap();
    assert!(relative(&expm(p, &l), &a) <= 1e-14, "e^(log A) = A with λ = −2 − 0i");
}

/// The Fréchet ops keep the function's domain (a real X with a negative
/// eigenvalue), and L(X, 0) = 0.
fn frechet_domain<P: TestProvider>(p: &P) {
    let negative = with_eigenvalues::<f64>(&[-2.0, 1.0, 3.0], 80);
    let e = Rng::new(81).matrix::<f64>(3, 3);
    for f in [F::Log, F::Sqrt] {
        let mut la = Direct::new(*p);
        let ta = la.tensor(&[3, 3], &negative.data).unwrap();
        let te = la.tensor(&[3, 3], &e.data).unwrap();
        let err = la.single(frechet_op(f, MatOp::Identity), &[&ta, &te]).unwrap_err();
        assert!(matches!(err, Error::OutsideDomain { arg: "a", .. }), "{f:?}: {err}");
        let zero = Dense::from_fn(3, 3, |_, _| 0.0f64);
        let a = shifted::<f64>(3, 3.0, 82);
        assert!(frechet(p, f, &a, &zero, MatOp::Identity).data.iter().all(|&x| x == 0.0));
    }
}

lindiff_tests::providers!(
    forward_f64,
    forward_c64,
    forward_single,
    frechet_f64,
    frechet_c64,
    gradients_f64,
    gradients_c64,
    domains_and_shapes,
    hard_inputs,
    frechet_domain
);
