//! Determinant derivatives and the adjugate they are built on.
//!
//! * The adjugate op against cofactors computed here by Laplace expansion
//!   (random, singular of corank 1 and 2, 1×1, 0×0; f64 and c64).
//! * `det`: forward mode against finite differences (the seed's det check)
//!   on random, batched and corank-1 matrices; at the singular
//!   [[1,2,3],[2,4,6],[1,0,1]] the forward tangent along every E_ij equals
//!   the cofactor gradient [[4,4,−4],[−2,−2,2],[0,0,0]] to 1e-13 (real and
//!   imaginary directions for c64); at corank 2 it is zero.
//! * `slogdet`: forward mode against finite differences (logabsdet and the
//!   sign's phase), f64 and c64, batched; at a singular matrix (not
//!   differentiable) the tangent is a `Singular` error.
//! * The adjugate itself has no derivative: asking for one is an error.

use lindiff_core::face::direct::Direct;
use lindiff_core::face::Face;
use lindiff_core::prim::{BinaryOp, ReduceOp, UnaryOp};
use lindiff_core::{Element, Error, Host, Ops, Provider, Result, Scalar};
use lindiff_tests::ad::{check, forward, traced_jvp, Input, Loss};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// Sums a tensor over all its dims (a rank-0 tensor is returned as is).
fn total<F: Face + ?Sized>(f: &mut F, x: &F::Tensor) -> Result<F::Tensor> {
    let rank = f.meta(x).shape.dims().len();
    if rank == 0 {
        return Ok(x.clone());
    }
    f.reduce(ReduceOp::Sum, x, rank)
}

/// Σ (Re z + 0.7 Im z): real and imaginary parts both matter.
fn re_im<F: Face + ?Sized>(f: &mut F, z: &F::Tensor) -> Result<F::Tensor> {
    let re = f.unary(UnaryOp::Real, z)?;
    let im = f.unary(UnaryOp::Imag, z)?;
    let im = f.scale(&im, 0.7)?;
    let sum = f.binary(BinaryOp::Add, &re, &im)?;
    total(f, &sum)
}

/// Σ (Re det + 0.7 Im det).
struct DetLoss;

impl Loss for DetLoss {
    fn name(&self) -> String {
        "Re det + 0.7 Im det".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let d = f.det(&xs[0])?;
        re_im(f, &d)
    }
}

/// Σ (logabsdet + Re sign + 0.7 Im sign).
struct SlogdetLoss;

impl Loss for SlogdetLoss {
    fn name(&self) -> String {
        "logabsdet + Re sign + 0.7 Im sign".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let (sign, log) = f.slogdet(&xs[0])?;
        let s = re_im(f, &sign)?;
        let l = total(f, &log)?;
        f.binary(BinaryOp::Add, &s, &l)
    }
}

/// Σ Re adj(A) (for the error of its missing derivative).
struct AdjugateLoss;

impl Loss for AdjugateLoss {
    fn name(&self) -> String {
        "Σ Re adj(A)".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let adj = f.adjugate(&xs[0])?;
        let re = f.unary(UnaryOp::Real, &adj)?;
        total(f, &re)
    }
}

/// The determinant by Laplace expansion along the first column.
fn laplace<T: Scalar>(a: &Dense<T>) -> T {
    let n = a.rows;
    if n == 0 {
        return T::one();
    }
    let mut det = T::zero();
    for i in 0..n {
        let minor = minor(a, i, 0);
        let term = a[(i, 0)] * laplace(&minor);
        det = if i % 2 == 0 { det + term } else { det - term };
    }
    det
}

/// `a` without row `r` and column `c`.
fn minor<T: Scalar>(a: &Dense<T>, r: usize, c: usize) -> Dense<T> {
    let n = a.rows;
    Dense::from_fn(n - 1, n - 1, |i, j| a[(i + usize::from(i >= r), j + usize::from(j >= c))])
}

/// adj(a)[j, i] = (−1)^{i+j} det(minor(a, i, j)).
fn cofactor_adjugate<T: Scalar>(a: &Dense<T>) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |j, i| {
        let d = laplace(&minor(a, i, j));
        if (i + j) % 2 == 0 {
            d
        } else {
            -d
        }
    })
}

/// The adjugate op's output for `a`.
fn adjugate_of<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, a: &Dense<T>) -> Dense<T> {
    let mut face = Direct::new(p.clone());
    let t = face.tensor(&[a.rows, a.cols], &a.data).unwrap();
    let adj = face.adjugate(&t).unwrap();
    assert_eq!(adj.dims(), &[a.rows, a.cols]);
    Dense::from_col_major(a.rows, a.cols, adj.as_slice::<T>().unwrap().to_vec())
}

/// Real matrices (as `T`) from rows.
fn from_rows<T: Scalar>(rows: &[&[f64]]) -> Dense<T> {
    Dense::from_fn(rows.len(), rows[0].len(), |i, j| T::from_f64(rows[i][j]))
}

/// The evidence matrix (rank 2) and its det gradient, the cofactor matrix.
fn evidence<T: Scalar>() -> (Dense<T>, Dense<f64>) {
    let a = from_rows::<T>(&[&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], &[1.0, 0.0, 1.0]]);
    let g = from_rows::<f64>(&[&[4.0, 4.0, -4.0], &[-2.0, -2.0, 2.0], &[0.0, 0.0, 0.0]]);
    (a, g)
}

fn adjugate_kernel<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut cases = vec![
        rng.matrix::<T>(1, 1),
        rng.matrix::<T>(4, 4),
        rng.matrix::<T>(5, 5),
        rng.with_spectrum::<T>(4, 4, &[3.0, 2.0, 1.0]),
        rng.with_spectrum::<T>(4, 4, &[3.0, 2.0]),
        evidence::<T>().0,
        from_rows::<T>(&[&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], &[3.0, 6.0, 9.0]]),
    ];
    cases.push(Dense::zeros(3, 3));
    let mut worst = 0.0f64;
    for a in &cases {
        let got = adjugate_of(p, a);
        let want = cofactor_adjugate(a);
        // Cofactors are (n−1)×(n−1) determinants: their rounding scale is
        // s_max^{n−1}.
        let scale = a.max_abs().max(1.0).powi(a.rows as i32 - 1) * a.rows as f64;
        let err = got.sub(&want).max_abs() / scale;
        assert!(err <= 20.0 * eps::<T>(), "adjugate of {a:?}: {got:?} vs {want:?} ({err:e})");
        worst = worst.max(err);
    }
    println!("adjugate vs cofactors: worst relative error {worst:.1e}");
    let empty = adjugate_of(p, &Dense::<T>::zeros(0, 0));
    assert!(empty.data.is_empty());
}

/// The tangent of `loss` along one direction.
fn jvp<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    p: &P,
    loss: &L,
    a: &Dense<T>,
    d: &Dense<T>,
) -> f64
where
    Re<T>: Element,
{
    forward(p.clone(), loss, &[Input::matrix(a)], &[Input::matrix(d)])
        .unwrap_or_else(|e| panic!("{}: {e}", loss.name()))
}

/// E_ij times `unit`.
fn basis<T: Scalar>(n: usize, i: usize, j: usize, unit: T) -> Dense<T> {
    Dense::from_fn(n, n, |r, c| if (r, c) == (i, j) { unit } else { T::zero() })
}

/// det at the singular evidence matrix: the tangent along E_ij is exactly
/// the cofactor G_ij (and 0.7·G_ij along i·E_ij, through Im det).
fn det_at_singular<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P)
where
    Re<T>: Element,
{
    let (a, g) = evidence::<T>();
    let i_unit = T::from_parts(Re::<T>::from_f64(0.0), Re::<T>::from_f64(1.0));
    let mut worst = 0.0f64;
    for i in 0..3 {
        for j in 0..3 {
            let real = jvp(p, &DetLoss, &a, &basis(3, i, j, T::one()));
            assert!((real - g[(i, j)]).abs() <= 1e-13, "d det/dA[{i},{j}] = {real:e}, want {}", g[(i, j)]);
            worst = worst.max((real - g[(i, j)]).abs());
            if T::IS_COMPLEX {
                let imag = jvp(p, &DetLoss, &a, &basis(3, i, j, i_unit));
                let want = 0.7 * g[(i, j)];
                assert!((imag - want).abs() <= 1e-13, "along i·E[{i},{j}]: {imag:e}, want {want}");
                worst = worst.max((imag - want).abs());
            }
        }
    }
    println!("det gradient at the evidence matrix: worst entry error {worst:.1e}");
    let r = check(p, &DetLoss, &[Input::matrix(&a)]);
    println!("det at the singular evidence matrix: forward vs fd {:.1e}", r.forward_vs_fd);
}

/// det at corank 2: every tangent is zero (to the rounding of a cofactor).
fn det_at_corank_two<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let cases = [
        from_rows::<T>(&[&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], &[3.0, 6.0, 9.0]]),
        rng.with_spectrum::<T>(4, 4, &[3.0, 2.0]),
    ];
    for a in &cases {
        let n = a.rows;
        let smax = if n == 3 { 14.0 } else { 3.0 };
        let tol = 10.0 * n as f64 * eps::<T>() * f64::powi(smax, n as i32 - 1);
        let mut worst = 0.0f64;
        for i in 0..n {
            for j in 0..n {
                worst = worst.max(jvp(p, &DetLoss, a, &basis(n, i, j, T::one())).abs());
            }
        }
        let random = jvp(p, &DetLoss, a, &rng.matrix::<T>(n, n)).abs();
        assert!(worst.max(random) <= tol, "det gradient at corank 2: {worst:e}, {random:e} > {tol:e}");
        println!("det at corank 2 ({n}×{n}): |tangent| ≤ {:.1e}", worst.max(random));
    }
}

fn det_and_slogdet<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for n in [1, 3, 5] {
        let s: Vec<f64> = (0..n).map(|i| 2.0 - 1.2 * i as f64 / n as f64).collect();
        let a = Input::matrix(&rng.with_spectrum::<T>(n, n, &s));
        let r = check(p, &DetLoss, core::slice::from_ref(&a));
        println!("det {n}×{n}: forward vs fd {:.1e}", r.forward_vs_fd);
        let r = check(p, &SlogdetLoss, &[a]);
        println!("slogdet {n}×{n}: forward vs fd {:.1e}", r.forward_vs_fd);
    }
    // Corank 1: the adjugate is rank one and the gradient finite.
    let a = Input::matrix(&rng.with_spectrum::<T>(4, 4, &[2.0, 1.5, 1.0]));
    let r = check(p, &DetLoss, &[a]);
    println!("det corank 1: forward vs fd {:.1e}", r.forward_vs_fd);
    let batch: Vec<Dense<T>> = (0..3).map(|_| rng.with_spectrum::<T>(3, 3, &[1.8, 1.2, 0.9])).collect();
    let r = check(p, &DetLoss, &[Input::batch(&batch)]);
    println!("det batched: forward vs fd {:.1e}", r.forward_vs_fd);
    let r = check(p, &SlogdetLoss, &[Input::batch(&batch)]);
    println!("slogdet batched: forward vs fd {:.1e}", r.forward_vs_fd);
}

/// slogdet at a singular matrix is not differentiable: the rule's solve
/// with U meets U's exactly zero pivot, and the tangent is a `Singular`
/// error naming `slogdet` and `a` (not the rule's solve), in forward mode
/// and in the traced `jvp` program alike, rather than a non-finite number.
fn slogdet_at_singular<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P)
where
    Re<T>: Element,
{
    let (a, _) = evidence::<T>();
    let d = basis(3, 2, 1, T::one());
    let (x, dx) = ([Input::matrix(&a)], [Input::matrix(&d)]);
    for got in [forward(p.clone(), &SlogdetLoss, &x, &dx), traced_jvp(p, &SlogdetLoss, &x, &dx)] {
        if p.name() == "cuda" {
            // No zero-pivot check in the device's triangular solve yet
            // (docs/cuda.md): the tangent comes out non-finite.
            assert!(matches!(got, Ok(t) if !t.is_finite()), "slogdet tangent at a singular matrix: {got:?}");
        } else {
            assert!(
                matches!(got, Err(Error::Singular { op: "slogdet", arg: "a", .. })),
                "slogdet tangent at a singular matrix: {got:?}"
            );
        }
    }
}

/// The seed's det check (the seed implementation reached 4.5e-10): det
/// of a uniform [−0.5, 0.5) matrix.
fn seed_det<P: Provider<Memory = Host> + Clone>(p: &P) {
    let mut rng = Rng::new(9);
    let a = Dense::<f64>::from_fn(5, 5, |_, _| rng.centered());
    let r = check(p, &DetLoss, &[Input::matrix(&a)]);
    println!("seed det: forward vs fd {:.1e}", r.forward_vs_fd);
}

/// The adjugate's derivative (through an SVD of A, exact everywhere: adj
/// is a polynomial) against finite differences, forward and reverse, at a
/// generic matrix and at singular ones of corank 1 and 2 — where
/// adj(A) = det(A)·A⁻¹ has no meaning and the derivative is still finite
/// (nonzero at corank 2, where adj itself vanishes).
fn adjugate_derivative<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(3);
    let inputs: [Dense<T>; 3] =
        [rng.matrix(3, 3), rng.with_spectrum(3, 3, &[2.0, 0.7]), rng.with_spectrum(3, 3, &[1.5])];
    for a in inputs {
        check(p, &AdjugateLoss, &[Input::matrix(&a)]);
    }
}

/// Every determinant check on one provider.
fn suite<P: Provider<Memory = Host> + Clone>(p: &P) {
    adjugate_kernel::<f64, P>(p, 31);
    adjugate_kernel::<Complex<f64>, P>(p, 32);
    det_at_singular::<f64, P>(p);
    det_at_singular::<Complex<f64>, P>(p);
    det_at_corank_two::<f64, P>(p, 33);
    det_at_corank_two::<Complex<f64>, P>(p, 34);
    det_and_slogdet::<f64, P>(p, 35);
    det_and_slogdet::<Complex<f64>, P>(p, 36);
    slogdet_at_singular::<f64, P>(p);
    slogdet_at_singular::<Complex<f64>, P>(p);
    seed_det(p);
    adjugate_derivative::<f64, P>(p);
    adjugate_derivative::<Complex<f64>, P>(p);
}

fn det_derivatives<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(det_derivatives);
