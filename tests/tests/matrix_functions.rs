//! Functions of Hermitian matrices (`funm_hermitian`, `expm_hermitian`,
//! `logm_pd`, `sqrtm_psd`; docs/ad-rules.md#matrix-functions):
//! * the forward against references that share no code with the kernel:
//!   exp by scaling and squaring a 30-term Taylor series, log by
//!   exp(log A) = A, sqrt by R² = A (f64, c64; f32 and c32 against the
//!   double-precision result);
//! * the gradient of ⟨W, f(A)⟩ by the `check` harness (forward mode and
//!   entrywise finite differences, eager and traced bits) and against the
//!   Daleckii–Krein formula with divided differences by series, at a tie
//!   and at gaps 1e-14 … 1e-4;
//! * a caller's (f, f′) (`MatrixFunction::custom`): tanh, x² and exp, the
//!   same checks with reference divided differences of their own;
//! * domain errors, batches and shapes;
//! * orders where GEMM reads Vᴴ slowly in place and the kernels copy it
//!   first (c64 at n = 256, f64 at 512): exp and its gradient against the
//!   general `expm` and its gradient (Padé, a different algorithm).

use lindiff_core::face::direct::Direct;
use lindiff_core::face::Face;
use lindiff_core::op::MatrixFunction;
use lindiff_core::{Element, Error, Ops, Result, Scalar};
use lindiff_tests::ad::{check, eager_grad, traced_grad, Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::hvp::{eager_hvp, fd_hvp, relative_error, traced_hvp};
use lindiff_tests::losses::pairing;
use lindiff_tests::taylor::{expm_taylor, relative};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// tanh given as a caller's (f, f′).
const TANH: MatrixFunction = MatrixFunction::custom("tanh", f64::tanh, |x| 1.0 - x.tanh() * x.tanh());
/// x², whose divided difference a + b is exact.
const SQUARE: MatrixFunction = MatrixFunction::custom("square", |x| x * x, |x| 2.0 * x);
/// exp given as a caller's (f, f′), against the built-in one.
const EXP: MatrixFunction = MatrixFunction::custom("exp", f64::exp, f64::exp);

const FUNCTIONS: [MatrixFunction; 6] =
    [MatrixFunction::Exp, MatrixFunction::Log, MatrixFunction::Sqrt, TANH, SQUARE, EXP];

/// Q diag(λ) Qᴴ for a random unitary Q (returned too).
fn hermitian<T: Scalar>(lambda: &[f64], seed: u64) -> (Dense<T>, Dense<T>) {
    let q = Rng::new(seed).unitary::<T>(lambda.len());
    let l: Vec<Re<T>> = lambda.iter().map(|&x| Re::<T>::from_f64(x)).collect();
    (q.scale_cols(&l).matmul(&q.adjoint()), q)
}

/// f(A) on the direct face.
fn funm<T: Scalar + Element, P: TestProvider>(p: &P, a: &Dense<T>, f: MatrixFunction) -> Result<Dense<T>> {
    let mut la = Direct::new(*p);
    let t = la.tensor(&[a.rows, a.cols], &a.data)?;
    let y = la.funm_hermitian(&t, f)?;
    Ok(Dense::from_col_major(a.rows, a.cols, y.to_vec::<T>()?))
}

/// The forward against the references, on spectra from 1e-3 to 20.
fn forward_accuracy<T: Scalar + Element, P: TestProvider>(p: &P) {
    for (seed, lambda) in
        [(1, vec![0.2, 1.0, 2.5, 3.1, 4.0]), (2, vec![1e-3, 0.5, 7.0, 20.0]), (3, vec![1.0; 3])]
    {
        let (a, _) = hermitian::<T>(&lambda, seed);
        let e = funm(p, &a, MatrixFunction::Exp).unwrap();
        let err = relative(&e, &expm_taylor(&a));
        assert!(err <= 1e-12, "{} exp {lambda:?}: {err:.2e}", T::DTYPE.name());
        let l = funm(p, &a, MatrixFunction::Log).unwrap();
        let err = relative(&expm_taylor(&l), &a);
        assert!(err <= 1e-12, "{} log {lambda:?}: exp(log A) vs A {err:.2e}", T::DTYPE.name());
        let r = funm(p, &a, MatrixFunction::Sqrt).unwrap();
        let err = relative(&r.matmul(&r), &a);
        assert!(err <= 1e-13, "{} sqrt {lambda:?}: R² vs A {err:.2e}", T::DTYPE.name());
        assert!(relative(&r, &r.adjoint()) <= 1e-14, "sqrt is Hermitian");
        // A caller's (f, f′): tanh against Q diag(tanh λ) Qᴴ, x² against A²,
        // exp against the built-in exp.
        let (_, q) = hermitian::<T>(&lambda, seed);
        let th: Vec<Re<T>> = lambda.iter().map(|&x| Re::<T>::from_f64(f64::tanh(x))).collect();
        let want = q.scale_cols(&th).matmul(&q.adjoint());
        let err = relative(&funm(p, &a, TANH).unwrap(), &want);
        assert!(err <= 1e-14, "{} tanh {lambda:?}: {err:.2e}", T::DTYPE.name());
        let err = relative(&funm(p, &a, SQUARE).unwrap(), &a.matmul(&a));
        assert!(err <= 1e-13, "{} x² {lambda:?}: {err:.2e}", T::DTYPE.name());
        let err = relative(&funm(p, &a, EXP).unwrap(), &e);
        assert!(err <= 1e-14, "{} a caller's exp vs exp {lambda:?}: {err:.2e}", T::DTYPE.name());
    }
}

fn forward_f64<P: TestProvider>(p: &P) {
    forward_accuracy::<f64, P>(p);
}

fn forward_c64<P: TestProvider>(p: &P) {
    forward_accuracy::<Complex<f64>, P>(p);
}

/// Single precision against double precision at the same (rounded) input.
fn forward_single<P: TestProvider>(p: &P) {
    let (a, _) = hermitian::<f64>(&[0.3, 1.0, 2.0, 3.5], 4);
    let a32 = Dense::from_fn(4, 4, |i, j| a[(i, j)] as f32);
    let a64 = Dense::from_fn(4, 4, |i, j| f64::from(a32[(i, j)]));
    let c32 = Dense::from_fn(4, 4, |i, j| Complex::new(a32[(i, j)], 0.0f32));
    for f in FUNCTIONS {
        let want = funm(p, &a64, f).unwrap();
        let got = funm(p, &a32, f).unwrap();
        let got = Dense::from_fn(4, 4, |i, j| f64::from(got[(i, j)]));
        assert!(relative(&got, &want) <= 1e-5, "f32 {f:?}");
        let got = funm(p, &c32, f).unwrap();
        let got = Dense::from_fn(4, 4, |i, j| f64::from(got[(i, j)].re));
        assert!(relative(&got, &want) <= 1e-5, "c32 {f:?}");
    }
}

/// ⟨W, f(A)⟩ (W the second input).
#[derive(Clone, Copy, Debug)]
struct Pairing(MatrixFunction);

impl Loss for Pairing {
    fn name(&self) -> String {
        format!("<W, {}(A)>", self.0.name())
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let fa = f.funm_hermitian(&xs[0], self.0)?;
        pairing(f, &xs[1], &fa)
    }
}

/// f′ and the divided difference by series (no code shared with the
/// kernel's forms): ((f(b) − f(a))/(b − a) through expm1 and log1p series).
fn divided(f: MatrixFunction, a: f64, b: f64) -> f64 {
    let h = b - a;
    // Σ x^k/(k+1)!: (e^x − 1)/x.
    let expm1_x = |x: f64| (0..40).rev().fold(0.0, |acc, k| 1.0 + acc * x / (k as f64 + 2.0));
    // Σ (−x)^k/(k+1): ln(1 + x)/x, for |x| < 0.1.
    let log1p_x = |x: f64| (0..60).rev().fold(0.0, |acc, k| 1.0 / (k as f64 + 1.0) - x * acc);
    match f {
        MatrixFunction::Exp if h.abs() < 1.0 => a.exp() * expm1_x(h),
        MatrixFunction::Exp => (b.exp() - a.exp()) / h,
        MatrixFunction::Log if (h / a).abs() < 0.1 => log1p_x(h / a) / a,
        MatrixFunction::Log => (b.ln() - a.ln()) / h,
        MatrixFunction::Sqrt => 1.0 / (a.sqrt() + b.sqrt()),
        MatrixFunction::Custom(s) => match s.name {
            "exp" => divided(MatrixFunction::Exp, a, b),
            "square" => a + b,
            // tanh a − tanh b = tanh(a − b)(1 − tanh a tanh b); tanh(h)/h by its series.
            "tanh" => {
                let tanhc =
                    if h.abs() < 1e-3 { 1.0 - h * h / 3.0 + 2.0 * h.powi(4) / 15.0 } else { h.tanh() / h };
                (1.0 - a.tanh() * b.tanh()) * tanhc
            }
            other => panic!("no reference divided difference for {other}"),
        },
    }
}

/// The gradient of ⟨W, f(A)⟩ by Daleckii–Krein: K = Q (Γ∘(Qᴴ W Q)) Qᴴ,
/// read on the lower triangle as eigh reads A: G = tril(K + Kᴴ, −1) +
/// Re diag(K).
fn daleckii_krein<T: Scalar>(f: MatrixFunction, lambda: &[f64], q: &Dense<T>, w: &Dense<T>) -> Dense<T> {
    let n = lambda.len();
    let inner = q.adjoint().matmul(w).matmul(q);
    let gamma =
        Dense::from_fn(n, n, |i, j| inner[(i, j)].scale(Re::<T>::from_f64(divided(f, lambda[i], lambda[j]))));
    let k = q.matmul(&gamma).matmul(&q.adjoint());
    Dense::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => k[(i, j)] + k[(j, i)].conj(),
        std::cmp::Ordering::Equal => T::from_real(k[(i, i)].re()),
        std::cmp::Ordering::Less => T::zero(),
    })
}

/// At an exact tie and at gaps 1e-14 … 1e-4 the gradient matches the
/// formula to 1e-10 (both faces); the harness's finite differences, with
/// a step far above the gap, agree to its 1e-8.
fn gradient_at_ties<T: Scalar + Element, P: TestProvider>(p: &P) {
    for gap in [0.0, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-1] {
        let lambda = [0.5, 1.0, 1.0 + gap, 2.0];
        let (a, q) = hermitian::<T>(&lambda, 11);
        let w = Rng::new(12).matrix::<T>(4, 4);
        let xs = [Input::matrix(&a), Input::matrix(&w)];
        for f in FUNCTIONS {
            let loss = Pairing(f);
            let want = daleckii_krein(f, &lambda, &q, &w);
            let eager = eager_grad(*p, &loss, &xs).unwrap_or_else(|e| panic!("{}: {e}", loss.name()));
            let traced = traced_grad(p, &loss, &xs).unwrap_or_else(|e| panic!("{}: {e}", loss.name()));
            lindiff_tests::hvp::assert_same_bits(&loss.name(), &eager, &traced);
            let got = Dense::from_col_major(4, 4, eager[0].clone());
            let err = relative(&got, &want);
            assert!(
                err <= 1e-10,
                "{} {} gap {gap:e}: vs Daleckii–Krein {err:.2e}",
                T::DTYPE.name(),
                loss.name()
            );
            if gap == 0.0 || gap == 1e-4 {
                check(p, &loss, &xs);
            }
        }
    }
}

fn gradient_f64<P: TestProvider>(p: &P) {
    gradient_at_ties::<f64, P>(p);
}

fn gradient_c64<P: TestProvider>(p: &P) {
    gradient_at_ties::<Complex<f64>, P>(p);
}

/// log needs λ > 0 and sqrt λ ≥ −10·n·ε·max|λ|: typed errors naming the op
/// and the argument; a tiny negative eigenvalue from rounding is a zero for
/// sqrt; a rectangular input is a shape error; a batch of 3 is 3 matrices.
fn domains_and_shapes<P: TestProvider>(p: &P) {
    let (indefinite, _) = hermitian::<f64>(&[-0.5, 1.0, 2.0], 5);
    for f in [MatrixFunction::Log, MatrixFunction::Sqrt] {
        let err = funm(p, &indefinite, f).unwrap_err();
        assert!(
            matches!(err, Error::NotPositiveDefinite { op: "funm_hermitian", arg: "a", .. }),
            "{f:?}: {err}"
        );
    }
    let nan = MatrixFunction::custom("nan", |x| if x > 1.5 { f64::NAN } else { x }, |_| 1.0);
    let (a, _) = hermitian::<f64>(&[0.5, 1.0, 2.0], 9);
    assert!(matches!(funm(p, &a, nan), Err(Error::NonFinite { op: "funm_hermitian", arg: "fa", .. })));
    let (big, _) = hermitian::<f64>(&[1.0, 800.0], 10);
    let err = funm(p, &big, MatrixFunction::Exp).unwrap_err();
    assert!(
        matches!(err, Error::OutOfRange { op: "funm_hermitian", arg: "a", .. }),
        "e^800 overflows: {err}"
    );
    let (singular, _) = hermitian::<f64>(&[0.0, 1.0, 2.0], 6);
    assert!(matches!(funm(p, &singular, MatrixFunction::Log), Err(Error::NotPositiveDefinite { .. })));
    let r = funm(p, &singular, MatrixFunction::Sqrt).unwrap();
    assert!(relative(&r.matmul(&r), &singular) <= 1e-13);
    let mut la = Direct::new(*p);
    let wide = la.tensor(&[2, 3], &[1.0f64; 6]).unwrap();
    assert!(matches!(la.expm_hermitian(&wide), Err(Error::NotSquare { .. })));
    let (a, _) = hermitian::<f64>(&[0.1, 0.7, 1.3], 7);
    let (b, _) = hermitian::<f64>(&[2.0, 3.0, 5.0], 8);
    let data: Vec<f64> = [&a, &b, &a].iter().flat_map(|m| m.data.clone()).collect();
    let batch = la.tensor(&[3, 3, 3], &data).unwrap();
    let out = la.sqrtm_psd(&batch).unwrap().to_vec::<f64>().unwrap();
    for (k, m) in [&a, &b, &a].iter().enumerate() {
        let want = funm(p, m, MatrixFunction::Sqrt).unwrap();
        assert_eq!(out[9 * k..9 * k + 9], want.data[..], "batch item {k}");
    }
}

/// A random Hermitian n×n matrix of norm about 1.
fn random_hermitian<T: Scalar>(n: usize, seed: u64) -> Dense<T> {
    let r = Rng::new(seed).matrix::<T>(n, n);
    let scale = Re::<T>::from_f64(0.5 / (n as f64).sqrt());
    r.add(&r.adjoint()).scale_cols(&vec![scale; n])
}

/// At orders whose Vᴴ GEMM reads slowly in place (rows 4 KiB apart: c64 at
/// n = 256, f64 at 512), the Hermitian exponential goes through a copy of
/// Vᴴ (`slow_rhs` in lindiff-cpu's gemm): Σ Re exp(A) and its gradient
/// against the general `expm`'s, folded onto the lower triangle that eigh
/// reads.
fn large_order<T: Scalar + Element, P: TestProvider>(p: &P, n: usize) {
    let mut la = Direct::new(*p);
    let a = random_hermitian::<T>(n, 21);
    let t = la.tensor(&[n, n], &a.data).unwrap();
    let hermitian = la.value_and_grad([&t], |[x]| x.expm_hermitian().re().sum()).unwrap();
    let general = la.value_and_grad([&t], |[x]| x.expm().re().sum()).unwrap();
    let what = format!("{} {n}", T::DTYPE.name());
    let err = (hermitian.value - general.value).abs() / general.value.abs();
    assert!(err <= 1e-13, "{what}: Σ Re expm_hermitian vs Σ Re expm {err:.2e}");
    let k = Dense::from_col_major(n, n, general.grads[0].to_vec::<T>().unwrap());
    let folded = Dense::from_fn(n, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => k[(i, j)] + k[(j, i)].conj(),
        std::cmp::Ordering::Equal => T::from_real(k[(i, i)].re()),
        std::cmp::Ordering::Less => T::zero(),
    });
    let got = Dense::from_col_major(n, n, hermitian.grads[0].to_vec::<T>().unwrap());
    let err = relative(&got, &folded);
    assert!(err <= 1e-12, "{what}: gradient vs the general expm's, folded {err:.2e}");
}

/// The second derivative at such an order (c64, n = 256): the HVP of
/// ⟨W, exp(A)⟩ along (D, 0), whose rule rotates out through the copy of Vᴴ
/// twice (the second-order term and the Fréchet term for W), against
/// central differences of the gradient with a Richardson step, and the
/// traced face's bits against the eager face's.
fn large_order_hvp<P: TestProvider>(p: &P) {
    let n = 256;
    type C = Complex<f64>;
    let (a, d) = (random_hermitian::<C>(n, 23), random_hermitian::<C>(n, 24));
    let w = Rng::new(25).matrix::<C>(n, n);
    let xs = [Input::matrix(&a), Input::matrix(&w)];
    let ds = [Input::matrix(&d), Input::matrix(&Dense::zeros(n, n))];
    let loss = Pairing(MatrixFunction::Exp);
    let eager = eager_hvp(*p, &loss, &xs, &ds).unwrap();
    let traced = traced_hvp(p, &loss, &xs, &ds).unwrap();
    lindiff_tests::hvp::assert_same_bits(&loss.name(), &eager, &traced);
    let fd = fd_hvp(p, &loss, &xs, &ds, 1e-3);
    let err = relative_error(&eager, &fd);
    assert!(err <= 1e-7, "c64 256: HVP vs differences of the gradient {err:.2e}");
}

fn large_orders<P: TestProvider>(p: &P) {
    large_order::<Complex<f64>, P>(p, 256);
    large_order::<f64, P>(p, 512);
    large_order_hvp(p);
}

lindiff_tests::providers!(
    large_orders,
    forward_f64,
    forward_c64,
    forward_single,
    gradient_f64,
    gradient_c64,
    domains_and_shapes
);

/// The derivative ops read their factors as data that `a` determines:
/// factors that move while `a` does not (a caller differentiating them as
/// inputs of their own) are an error, not a silent zero.
#[test]
fn factors_moving_alone_are_an_error() {
    use lindiff_core::ad::Eager;
    type Eg = Eager<Direct<lindiff_tests::Cpu>>;
    use lindiff_core::op::{ExpmFactors, ExpmFrechetFactored, FunmHermitianFactors, FunmHermitianFrechet};
    use lindiff_core::{LinalgOp, MatOp, Op};
    let mut eager: Eg = Eager::new(Direct::new(lindiff_tests::Cpu::default()));
    let a = eager.inner().tensor_row_major(2, 2, &[2.0, 0.5, 0.5, 1.0]).unwrap();
    let e = eager.inner().tensor_row_major(2, 2, &[1.0, 0.0, 0.3, 1.0]).unwrap();
    let funm = Op::Linalg(LinalgOp::FunmHermitianFactors(FunmHermitianFactors(MatrixFunction::Exp)));
    let f = eager.inner().apply(funm, &[&a]).unwrap();
    let expm = eager.inner().apply(Op::Linalg(LinalgOp::ExpmFactors(ExpmFactors)), &[&a]).unwrap();
    let constant = |t: &lindiff_core::face::direct::Tensor| Eg::constant(t.clone());
    let cases = [
        (
            Op::Linalg(LinalgOp::FunmHermitianFrechet(FunmHermitianFrechet(MatrixFunction::Exp))),
            vec![a.clone(), f[2].clone().unwrap(), f[1].clone().unwrap(), f[3].clone().unwrap(), e.clone()],
            3,
        ),
        (
            Op::Linalg(LinalgOp::ExpmFrechetFactored(ExpmFrechetFactored(MatOp::Identity))),
            vec![a.clone(), expm[1].clone().unwrap(), expm[2].clone().unwrap(), e.clone()],
            1,
        ),
    ];
    for (op, inputs, watched) in cases {
        let mut vars: Vec<_> = inputs.iter().map(constant).collect();
        vars[watched] = eager.watch(inputs[watched].clone()).unwrap();
        let refs: Vec<_> = vars.iter().collect();
        let l = eager.apply(op.clone(), &refs).unwrap()[0].clone().unwrap();
        let s = pairing(&mut eager, &constant(&e), &l).unwrap();
        let err = eager.backward(&s, &[&vars[watched]]).unwrap_err();
        assert!(matches!(err, Error::UnsupportedDerivative { .. }), "{}: {err}", op.name());
    }
}
