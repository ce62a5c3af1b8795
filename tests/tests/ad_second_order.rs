//! Second order (docs/ad-rules.md#second-order): Hessian-vector products by
//! forward over reverse, through every op whose gradient is built from
//! rules — the spectral ops, det/slogdet, the factorizations, solve, the
//! composites, expm, logm and sqrtm, and the Hermitian matrix functions.
//! For each loss, in f64 and c64:
//! * the eager face (the tape over `Dual`) and the traced face
//!   (`jvp(grad(program))`) give the same bits;
//! * the HVP matches central differences of the gradient (one Richardson step from 1e-3·‖x‖
//!   along a direction of norm ‖x‖) to 1e-6 relative (∞-norm over all
//!   inputs, against the HVP's own ∞-norm);
//! * in f32 and c32 it matches the f64/c64 HVP to 1e-3 relative.

use lindiff_core::face::{Face, Norm};
use lindiff_core::op::{EighOptions, SvdOptions, Triangle, TriangularSolveOptions, Truncation};
use lindiff_core::prim::{BinaryOp, Pair, PairInv, ReduceOp, Regularize};
use lindiff_core::{Element, Linalg, MatOp, Ops, Result, Scalar, Shape, TensorMeta};
use lindiff_tests::ad::{Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::hvp::{assert_same_bits, eager_hvp, fd_hvp, relative_error, reverse_hvp, traced_hvp};
use lindiff_tests::losses::{probe, total};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// A loss through one op: the [`probe`] of its outputs (a weighted sum and
/// a weighted sum of squares, so every second derivative is exercised).
#[derive(Clone, Copy, Debug)]
enum Case {
    /// U_2 U_2ᴴ and s² through the thin SVD (well-separated values).
    Svd,
    /// Σ s³ through `svd_vals`.
    SvdVals,
    /// V_2 V_2ᴴ and w through eigh (Hermitian input).
    Eigh,
    /// Σ w³ through `eigvalsh`.
    EighVals,
    /// Re Σ λ² + Σ |λ|² through eig's values.
    EigVals,
    /// V diag(λ²) V⁻¹ through eig's vectors (= A², gauge-free).
    EigVectors,
    /// det(A).
    Det,
    /// det(A) at a singular A of corank 1, then 2 (seeds 1, 2): the
    /// Hessian is a polynomial in A, finite there.
    DetSingular,
    /// log|det A|.
    Slogdet,
    /// Q and R.
    Qr,
    /// L and U of a partial-pivot LU.
    Lu,
    /// L (Hermitian positive definite input).
    Cholesky,
    /// A⁻¹B with a fixed B.
    Solve,
    /// A⁻¹.
    Inv,
    /// A⁺ (tall, full rank).
    Pinv,
    /// argmin ‖AX − B‖ (tall).
    Lstsq,
    /// The unitary polar factor.
    Polar,
    /// U_2 U_2ᴴ and s² through the Lorentzian-broadened SVD rule (ε = 1e-5: its bias
    /// (ε/gap)² stays below the tolerance; forward mode follows the broadened
    /// rule too).
    SvdBroadened,
    /// V_2 V_2ᴴ through the Lorentzian-broadened eigh rule (ε = 1e-5).
    EighBroadened,
    /// U_2 diag(s_2) V_2ᴴ through `low_rank_approx`.
    LowRank,
    /// V_2 V_2ᴴ through `svd_full` of a square input (a rectangular one:
    /// see [`full_svd_with_completion_columns`]).
    SvdFull,
    /// L and U of a full-pivot LU.
    FullPivLu,
    /// The Householder vectors and τ of a QR.
    Householder,
    /// A lower-triangular solve with a fixed right-hand side.
    TriangularSolve,
    /// e^A of a general A (degree 13 with one squaring): second order runs
    /// through the Fréchet derivative's own rule (the block identity).
    Expm,
    /// log A of a general A (eigenvalues around 3): through the Schur form,
    /// second order through the block identity at four times the size.
    Logm,
    /// A^{1/2} of the same A.
    Sqrtm,
    /// e^A of a Hermitian A through `expm_hermitian`: second order by the
    /// second-order Daleckii–Krein formula.
    ExpmHermitian,
    /// The same at eigenvalues (½, ½, ½, 1.7): a triple tie, where the
    /// second divided differences are f″/2.
    ExpmHermitianTied,
    /// log A of a positive definite A through `logm_pd`.
    LogmPd,
    /// A^{1/2} of the same A through `sqrtm_psd`.
    SqrtmPsd,
    /// sin A of a Hermitian A, a caller's f with f′ and f″.
    FunmCustom,
    /// The composites (`core/src/face/composite.rs`), each through the ops it is
    /// written with: ‖A‖ for the Frobenius, nuclear, spectral and
    /// smallest-singular-value norms.
    Norm(Norm),
    /// κ(A) in the 2-norm (s_max/s_min) and the Frobenius norm
    /// (‖A‖_F ‖A⁻¹‖_F).
    Cond(Norm),
    /// A^k for k = 3 (products) and k = −2 (the inverse squared).
    MatrixPower(i64),
    /// A·A·A by `multi_dot`.
    MultiDot,
    /// `tensorinv` of A seen as a 2×2×4 tensor (ind = 2), back to 4×4.
    TensorInv,
    /// `tensorsolve` of A seen as 2×2×2×2 with a fixed 2×2 right-hand side.
    TensorSolve,
}

/// sin with its derivatives, as a caller's matrix function.
fn sine() -> lindiff_core::op::MatrixFunction {
    lindiff_core::op::MatrixFunction::custom("sin", f64::sin, f64::cos).with_second_derivative(|x| -x.sin())
}

/// [`probe`] of a matrix, or of a vector as one column.
fn weigh<F: Face + ?Sized>(f: &mut F, x: &F::Tensor) -> Result<F::Tensor> {
    let dims = f.meta(x).shape.dims().to_vec();
    if dims.len() == 1 {
        let column = f.reshape(x, &[dims[0], 1])?;
        probe(f, &column)
    } else {
        probe(f, x)
    }
}

/// A fixed right-hand side shaped `rows`×2 of `a`'s dtype.
fn rhs<F: Face + ?Sized>(f: &mut F, a: &F::Tensor) -> Result<F::Tensor> {
    let meta = f.meta(a);
    let rows = meta.shape.dims()[0];
    let ones = f.fill(TensorMeta::new(meta.dtype, Shape::new(&[rows, 2])?), 1.0)?;
    let eye = f.eye(meta.dtype, rows, &[])?;
    let first = f.slice(&eye, [0, 0], [rows, 2])?;
    f.binary(BinaryOp::Add, &ones, &first)
}

impl Loss for Case {
    fn name(&self) -> String {
        format!("{self:?}")
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let a = &xs[0];
        let m = f.meta(a).shape.dims()[0];
        let sum = |f: &mut F, x: F::Tensor, y: F::Tensor| f.binary(BinaryOp::Add, &x, &y);
        match self {
            Case::Svd => {
                let svd = f.svd(a)?;
                let u2 = f.slice(&svd.u, [0, 0], [m, 2])?;
                let proj = f.matmul_with(&u2, MatOp::Identity, &u2, MatOp::Adjoint)?;
                let s2 = f.binary(BinaryOp::Mul, &svd.s, &svd.s)?;
                let (p, q) = (weigh(f, &proj)?, weigh(f, &s2)?);
                sum(f, p, q)
            }
            Case::SvdVals | Case::EighVals => {
                let s = if matches!(self, Case::SvdVals) { f.svd_vals(a)? } else { f.eigvalsh(a)? };
                let s2 = f.binary(BinaryOp::Mul, &s, &s)?;
                let s3 = f.binary(BinaryOp::Mul, &s2, &s)?;
                total(f, &s3)
            }
            Case::Eigh => {
                let e = f.eigh(a)?;
                let v2 = f.slice(&e.v, [0, 0], [m, 2])?;
                let proj = f.matmul_with(&v2, MatOp::Identity, &v2, MatOp::Adjoint)?;
                let (p, q) = (weigh(f, &proj)?, weigh(f, &e.w)?);
                sum(f, p, q)
            }
            Case::EigVals => {
                let w = f.eigvals(a)?;
                let w2 = f.binary(BinaryOp::Mul, &w, &w)?;
                let re = total(f, &w2)?;
                let abs2 = f.unary(lindiff_core::prim::UnaryOp::Abs2, &w)?;
                let sq = f.reduce(ReduceOp::Sum, &abs2, 1)?;
                sum(f, re, sq)
            }
            Case::EigVectors => {
                let e = f.eig(a)?;
                let w2 = f.binary(BinaryOp::Mul, &e.w, &e.w)?;
                let scaled = f.scale_cols(&e.v, &w2)?;
                let vinv = f.inv(&e.v)?;
                let a2 = f.matmul(&scaled, &vinv)?;
                weigh(f, &a2)
            }
            Case::Det | Case::DetSingular => {
                let d = f.det(a)?;
                total(f, &d)
            }
            Case::Slogdet => {
                let (_, log) = f.slogdet(a)?;
                total(f, &log)
            }
            Case::Qr => {
                let qr = f.qr(a)?;
                let (p, q) = (weigh(f, &qr.q)?, weigh(f, &qr.r)?);
                sum(f, p, q)
            }
            Case::Lu => {
                let lu = f.lu(a)?;
                let (p, q) = (weigh(f, &lu.l)?, weigh(f, &lu.u)?);
                sum(f, p, q)
            }
            Case::Cholesky => {
                let l = f.cholesky(a)?;
                weigh(f, &l)
            }
            Case::Solve => {
                let b = rhs(f, a)?;
                let x = f.solve(a, &b)?;
                weigh(f, &x)
            }
            Case::Inv => {
                let x = f.inv(a)?;
                weigh(f, &x)
            }
            Case::Pinv => {
                let x = f.pinv(a)?;
                weigh(f, &x)
            }
            Case::Lstsq => {
                let b = rhs(f, a)?;
                let x = f.lstsq(a, &b)?;
                weigh(f, &x)
            }
            Case::Polar => {
                let w = f.polar(a)?;
                weigh(f, &w)
            }
            Case::SvdBroadened => {
                let svd = f.svd_with_options(a, SvdOptions::default().derivative_eps(1e-5))?;
                let u2 = f.slice(&svd.u, [0, 0], [m, 2])?;
                let proj = f.matmul_with(&u2, MatOp::Identity, &u2, MatOp::Adjoint)?;
                let s2 = f.binary(BinaryOp::Mul, &svd.s, &svd.s)?;
                let (p, q) = (weigh(f, &proj)?, weigh(f, &s2)?);
                sum(f, p, q)
            }
            Case::EighBroadened => {
                let e = f.eigh_with_options(a, EighOptions::default().derivative_eps(1e-5))?;
                let v2 = f.slice(&e.v, [0, 0], [m, 2])?;
                let proj = f.matmul_with(&v2, MatOp::Identity, &v2, MatOp::Adjoint)?;
                weigh(f, &proj)
            }
            Case::LowRank => {
                let (ap, _) = f.low_rank_approx(a, Truncation::Count(2))?;
                weigh(f, &ap)
            }
            Case::SvdFull => {
                let vh = f.svd_full(a)?.vh;
                let n = f.meta(&vh).shape.dims()[0];
                let v2 = f.slice(&vh, [0, 0], [2, n])?;
                let proj = f.matmul_with(&v2, MatOp::Adjoint, &v2, MatOp::Identity)?;
                weigh(f, &proj)
            }
            Case::FullPivLu => {
                let lu = f.full_piv_lu(a)?;
                let (p, q) = (weigh(f, &lu.l)?, weigh(f, &lu.u)?);
                sum(f, p, q)
            }
            Case::Householder => {
                let qr = f.householder_qr(a)?;
                let (p, q) = (weigh(f, &qr.h)?, weigh(f, &qr.tau)?);
                sum(f, p, q)
            }
            Case::Expm => {
                let e = f.expm(a)?;
                weigh(f, &e)
            }
            Case::Logm => {
                let l = f.logm(a)?;
                weigh(f, &l)
            }
            Case::Sqrtm => {
                let r = f.sqrtm(a)?;
                weigh(f, &r)
            }
            Case::ExpmHermitian | Case::ExpmHermitianTied => {
                let e = f.expm_hermitian(a)?;
                weigh(f, &e)
            }
            Case::LogmPd => {
                let l = f.logm_pd(a)?;
                weigh(f, &l)
            }
            Case::SqrtmPsd => {
                let r = f.sqrtm_psd(a)?;
                weigh(f, &r)
            }
            Case::FunmCustom => {
                let r = f.funm_hermitian(a, sine())?;
                weigh(f, &r)
            }
            Case::Norm(kind) => {
                let n = f.norm(a, *kind)?;
                total(f, &n)
            }
            Case::Cond(kind) => {
                let c = f.cond(a, *kind)?;
                total(f, &c)
            }
            Case::MatrixPower(k) => {
                let p = f.matrix_power(a, *k)?;
                weigh(f, &p)
            }
            Case::MultiDot => {
                let p = f.multi_dot(&[a, a, a])?;
                weigh(f, &p)
            }
            Case::TensorInv => {
                let t = f.reshape(a, &[2, 2, 4])?;
                let inv = f.tensorinv(&t, 2)?;
                let inv = f.reshape(&inv, &[4, 4])?;
                weigh(f, &inv)
            }
            Case::TensorSolve => {
                let t = f.reshape(a, &[2, 2, 2, 2])?;
                let dtype = f.meta(a).dtype;
                let ones = f.fill(TensorMeta::new(dtype, Shape::new(&[2, 2])?), 1.0)?;
                let eye = f.eye(dtype, 2, &[])?;
                let b = f.binary(BinaryOp::Add, &ones, &eye)?;
                let x = f.tensorsolve(&t, &b)?;
                weigh(f, &x)
            }
            Case::TriangularSolve => {
                let b = rhs(f, a)?;
                let x =
                    f.triangular_solve(a, &b, TriangularSolveOptions::default().triangle(Triangle::Lower))?;
                weigh(f, &x)
            }
        }
    }
}

impl Case {
    /// Whether the case runs a Lorentzian-broadened rule.
    fn is_broadened(self) -> bool {
        matches!(self, Case::SvdBroadened | Case::EighBroadened)
    }

    /// The input: square 4×4 (5×3 for the tall cases) with singular values
    /// or eigenvalues well apart; Hermitian where the op reads one triangle.
    fn input<T: Scalar>(self, seed: u64) -> Dense<T> {
        let mut rng = Rng::new(seed);
        match self {
            Case::Pinv | Case::Lstsq => rng.with_spectrum(5, 3, &[3.0, 1.7, 0.6]),

            Case::TriangularSolve => {
                let mut a = rng.matrix::<T>(4, 4);
                for i in 0..4 {
                    a[(i, i)] += T::from_f64(3.0);
                }
                a
            }
            Case::Eigh | Case::EighVals | Case::EighBroadened | Case::ExpmHermitian | Case::FunmCustom => {
                hermitian(&mut rng, &[-1.3, 0.4, 1.1, 2.5])
            }
            Case::ExpmHermitianTied => hermitian(&mut rng, &[0.5, 0.5, 0.5, 1.7]),
            Case::LogmPd | Case::SqrtmPsd => hermitian(&mut rng, &[0.5, 1.2, 2.0, 3.1]),
            Case::Cholesky => {
                let b = rng.matrix::<T>(4, 4);
                let mut a = b.matmul(&b.adjoint());
                for i in 0..4 {
                    a[(i, i)] += T::from_f64(2.0);
                }
                a
            }
            Case::Logm | Case::Sqrtm => {
                let mut a = rng.matrix::<T>(4, 4);
                for i in 0..4 {
                    a[(i, i)] += T::from_f64(3.0);
                }
                a
            }
            Case::DetSingular if seed == 1 => rng.with_spectrum(4, 4, &[3.0, 1.9, 1.1]),
            Case::DetSingular => rng.with_spectrum(4, 4, &[3.0, 1.9]),
            _ => rng.with_spectrum(4, 4, &[3.0, 1.9, 1.1, 0.5]),
        }
    }

    /// A direction the op allows (Hermitian for the Hermitian ops; a general
    /// one for `expm_hermitian` and `logm_pd`, whose rules read its lower
    /// triangle), with the input's norm.
    fn direction<T: Scalar>(self, x: &Dense<T>, seed: u64) -> Dense<T> {
        let mut rng = Rng::new(seed ^ 0x5eed);
        let d = rng.matrix::<T>(x.rows, x.cols);
        let d = match self {
            Case::Eigh
            | Case::EighVals
            | Case::EighBroadened
            | Case::Cholesky
            | Case::ExpmHermitianTied
            | Case::SqrtmPsd
            | Case::FunmCustom => {
                let mut sym = Dense::from_fn(x.rows, x.cols, |i, j| d[(i, j)] + d[(j, i)].conj());
                for i in 0..x.rows {
                    sym[(i, i)] = T::from_real(sym[(i, i)].re());
                }
                sym
            }
            _ => d,
        };
        let scale = Re::<T>::from_f64(x.norm() / d.norm());
        Dense::from_fn(d.rows, d.cols, |i, j| d[(i, j)].scale(scale))
    }
}

/// Q diag(`values`) Qᴴ for a random unitary Q.
fn hermitian<T: Scalar>(rng: &mut Rng, values: &[f64]) -> Dense<T> {
    let q = rng.unitary::<T>(values.len());
    let w: Vec<Re<T>> = values.iter().map(|&x| Re::<T>::from_f64(x)).collect();
    q.scale_cols(&w).matmul(&q.adjoint())
}

const ALL: [Case; 43] = [
    Case::Svd,
    Case::SvdVals,
    Case::Eigh,
    Case::EighVals,
    Case::EigVals,
    Case::EigVectors,
    Case::Det,
    Case::DetSingular,
    Case::Slogdet,
    Case::Qr,
    Case::Lu,
    Case::Cholesky,
    Case::Solve,
    Case::Inv,
    Case::Pinv,
    Case::Lstsq,
    Case::Polar,
    Case::SvdBroadened,
    Case::EighBroadened,
    Case::LowRank,
    Case::SvdFull,
    Case::FullPivLu,
    Case::Householder,
    Case::TriangularSolve,
    Case::Expm,
    Case::Logm,
    Case::Sqrtm,
    Case::ExpmHermitian,
    Case::ExpmHermitianTied,
    Case::LogmPd,
    Case::SqrtmPsd,
    Case::FunmCustom,
    Case::Norm(Norm::Fro),
    Case::Norm(Norm::Nuc),
    Case::Norm(Norm::Two),
    Case::Norm(Norm::NegTwo),
    Case::Cond(Norm::Two),
    Case::Cond(Norm::Fro),
    Case::MatrixPower(3),
    Case::MatrixPower(-2),
    Case::MultiDot,
    Case::TensorInv,
    Case::TensorSolve,
];

/// The HVP of `case` at its input along its direction, by both faces (same
/// bits asserted), and its error against differences of the gradient.
fn hvp<T: Scalar + Element, P: TestProvider>(provider: &P, case: Case, seed: u64) -> (Vec<Vec<T>>, f64) {
    let x = case.input::<T>(seed);
    let d = case.direction(&x, seed);
    let (xs, ds) = ([Input::matrix(&x)], [Input::matrix(&d)]);
    let eager = eager_hvp(*provider, &case, &xs, &ds).unwrap_or_else(|e| panic!("{case:?} eager: {e}"));
    let traced = traced_hvp(provider, &case, &xs, &ds).unwrap_or_else(|e| panic!("{case:?} traced: {e}"));
    assert_same_bits(&case.name(), &eager, &traced);
    let reverse = reverse_hvp(provider, &case, &xs, &ds).unwrap_or_else(|e| panic!("{case:?} reverse: {e}"));
    if case.is_broadened() {
        // A broadened rule's gradient field is not a gradient: its Jacobian
        // J is not symmetric, and only ⟨d, Jᵀd⟩ = ⟨d, Jd⟩ holds.
        let dot = |h: &[Vec<T>]| lindiff_tests::ad::inner(&ds[0].data, &h[0]);
        let (r, e) = (dot(&reverse), dot(&eager));
        assert!((r - e).abs() <= 1e-12 * e.abs().max(1.0), "{case:?}: ⟨d, Jᵀd⟩ = {r}, ⟨d, Jd⟩ = {e}");
    } else {
        let gap = relative_error(&reverse, &eager);
        assert!(
            gap <= 1e-12,
            "{case:?} {}: reverse over reverse vs forward over reverse: {gap:.2e}",
            T::DTYPE.name()
        );
    }
    let fd = fd_hvp(provider, &case, &xs, &ds, 1e-3);
    let err = relative_error(&eager, &fd);
    (eager, err)
}

fn hvp_matches_differences<T: Scalar + Element, P: TestProvider>(provider: &P) {
    for case in ALL {
        for seed in [1, 2] {
            let (_, err) = hvp::<T, P>(provider, case, seed);
            assert!(
                err <= 1e-6,
                "{case:?} {}, seed {seed}: HVP vs differences of the gradient: {err:.2e}",
                T::DTYPE.name()
            );
        }
    }
}

fn second_order_f64<P: TestProvider>(provider: &P) {
    hvp_matches_differences::<f64, P>(provider);
}

fn second_order_c64<P: TestProvider>(provider: &P) {
    hvp_matches_differences::<Complex<f64>, P>(provider);
}

/// The HVP in single precision against the double-precision HVP at the
/// same (rounded) input and direction.
fn single_precision<S: Scalar + Element, D: Scalar + Element, P: TestProvider>(
    provider: &P,
    narrow: fn(D) -> S,
    widen: fn(S) -> D,
) {
    let round = |m: &Dense<D>| Dense::from_fn(m.rows, m.cols, |i, j| narrow(m[(i, j)]));
    let exact = |m: &Dense<S>| Dense::from_fn(m.rows, m.cols, |i, j| widen(m[(i, j)]));
    for case in ALL {
        let x = round(&case.input::<D>(1));
        let d = round(&case.direction(&case.input::<D>(1), 1));
        let (xs, ds) = ([Input::matrix(&x)], [Input::matrix(&d)]);
        let eager = eager_hvp(*provider, &case, &xs, &ds).unwrap_or_else(|e| panic!("{case:?} eager: {e}"));
        let traced = traced_hvp(provider, &case, &xs, &ds).unwrap_or_else(|e| panic!("{case:?} traced: {e}"));
        assert_same_bits(&case.name(), &eager, &traced);
        let (xw, dw) = ([Input::matrix(&exact(&x))], [Input::matrix(&exact(&d))]);
        let wide = eager_hvp(*provider, &case, &xw, &dw).unwrap_or_else(|e| panic!("{case:?} wide: {e}"));
        let got: Vec<Vec<D>> = eager.iter().map(|v| v.iter().map(|&x| widen(x)).collect()).collect();
        let err = relative_error(&got, &wide);
        assert!(err <= 1e-3, "{case:?} {}: HVP vs {}: {err:.2e}", S::DTYPE.name(), D::DTYPE.name());
    }
}

fn second_order_f32<P: TestProvider>(provider: &P) {
    single_precision::<f32, f64, P>(provider, |x| x as f32, f64::from);
}

fn second_order_c32<P: TestProvider>(provider: &P) {
    single_precision::<Complex<f32>, Complex<f64>, P>(
        provider,
        |x| Complex::new(x.re as f32, x.im as f32),
        |x| Complex::new(f64::from(x.re), f64::from(x.im)),
    );
}

lindiff_tests::providers!(second_order_f64, second_order_c64, second_order_f32, second_order_c32);

/// The probe of a pair inverse of a vector (input 0, `[k, 1]`).
#[derive(Clone, Copy, Debug)]
struct PairLoss(PairInv);

impl Loss for PairLoss {
    fn name(&self) -> String {
        format!("{:?}", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let k = f.meta(&xs[0]).shape.dims()[0];
        let v = f.reshape(&xs[0], &[k])?;
        let y = f.pair_inv(&v, self.0)?;
        weigh(f, &y)
    }
}

/// The pair inverse's own second derivative, every pair and regularization,
/// with a broadening ε of the order of the gaps (so the ε² term counts).
fn pair_inv_second_order<T: Scalar + Element>() {
    let mut rng = Rng::new(7);
    let x = Dense::<T>::from_fn(4, 1, |i, _| {
        T::from_f64([0.3, -1.2, 2.0, 0.7][i]) + rng.scalar::<T>().scale(Re::<T>::from_f64(0.1))
    });
    let d = rng.matrix::<T>(4, 1);
    for pair in [Pair::Diff, Pair::Sum] {
        for regularize in [Regularize::Lorentzian { eps: 0.3 }, Regularize::Cutoff { relative: 1e-9 }] {
            let loss = PairLoss(PairInv { pair, regularize });
            let (xs, ds) = ([Input::matrix(&x)], [Input::matrix(&d)]);
            let cpu = lindiff_tests::Cpu::default();
            let eager = eager_hvp(cpu, &loss, &xs, &ds).unwrap();
            assert_same_bits(&loss.name(), &eager, &traced_hvp(&cpu, &loss, &xs, &ds).unwrap());
            let err = relative_error(&eager, &fd_hvp(&cpu, &loss, &xs, &ds, 1e-3));
            assert!(err <= 1e-9, "{loss:?} {}: {err:.2e}", T::DTYPE.name());
        }
    }
}

#[test]
fn pair_inv_second_order_f64() {
    pair_inv_second_order::<f64>();
}

#[test]
fn pair_inv_second_order_c64() {
    pair_inv_second_order::<Complex<f64>>();
}

/// Through `svd_full` of a rectangular input, second order stops at the
/// completion columns: the forward tangent of the whole `u` is undefined
/// there, so the thin block the reverse pass reads has none either. The
/// error names the op and says to use the thin SVD.
#[test]
fn full_svd_with_completion_columns() {
    let x = Rng::new(3).with_spectrum::<f64>(5, 3, &[3.0, 1.7, 0.6]);
    let d = Rng::new(4).matrix::<f64>(5, 3);
    let (xs, ds) = ([Input::matrix(&x)], [Input::matrix(&d)]);
    let cpu = lindiff_tests::Cpu::default();
    let eager = eager_hvp(cpu, &Case::SvdFull, &xs, &ds).unwrap_err().to_string();
    let traced = traced_hvp(&cpu, &Case::SvdFull, &xs, &ds).unwrap_err().to_string();
    for err in [eager, traced] {
        assert!(err.contains("svd_full") && err.contains("use the thin svd"), "{err}");
    }
}

/// A Hermitian 4×4 with eigenvalues (1, 1, 2, 3) — a tied pair — and a
/// Hermitian direction Q B Qᴴ in its eigenbasis Q. With `split`, B is
/// random (it couples and splits the tied pair); without, B is random
/// except B_01 = 0 and B_00 = B_11: the pair moves together, in any basis
/// of its eigenspace.
fn tied<T: Scalar>(seed: u64, split: bool) -> (Dense<T>, Dense<T>, Dense<T>, Dense<T>) {
    let mut rng = Rng::new(seed);
    let q = rng.unitary::<T>(4);
    let lambda: Vec<Re<T>> = [1.0, 1.0, 2.0, 3.0].iter().map(|&x| Re::<T>::from_f64(x)).collect();
    let a = q.scale_cols(&lambda).matmul(&q.adjoint());
    let r = rng.matrix::<T>(4, 4);
    let mut b = Dense::from_fn(4, 4, |i, j| r[(i, j)] + r[(j, i)].conj());
    for i in 0..4 {
        b[(i, i)] = T::from_real(b[(i, i)].re());
    }
    if !split {
        b[(0, 1)] = T::zero();
        b[(1, 0)] = T::zero();
        b[(1, 1)] = b[(0, 0)];
    }
    let e = q.matmul(&b).matmul(&q.adjoint());
    (a, e, q, b)
}

/// H·E of Σ f(w) (f = x³) through `eigvalsh`, by the Daleckii–Krein
/// formula: K = Q (Γ∘B) Qᴴ with Γ_ij = (f′(λ_i) − f′(λ_j))/(λ_i − λ_j) and
/// f″(λ_i) where the values tie; the gradient lives on the lower triangle
/// (eigh reads it), so H·E = 2·tril(K, −1) + Re diag(K).
fn daleckii_krein<T: Scalar>(q: &Dense<T>, b: &Dense<T>) -> Dense<T> {
    let lambda = [1.0, 1.0, 2.0, 3.0];
    let gamma = |i: usize, j: usize| {
        let (x, y) = (lambda[i], lambda[j]);
        if x == y {
            6.0 * x
        } else {
            (3.0 * x * x - 3.0 * y * y) / (x - y)
        }
    };
    let inner = Dense::from_fn(4, 4, |i, j| b[(i, j)].scale(Re::<T>::from_f64(gamma(i, j))));
    let k = q.matmul(&inner).matmul(&q.adjoint());
    Dense::from_fn(4, 4, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => k[(i, j)].scale(Re::<T>::from_f64(2.0)),
        std::cmp::Ordering::Equal => T::from_real(k[(i, i)].re()),
        std::cmp::Ordering::Less => T::zero(),
    })
}

/// At an exact tie: a direction that moves the tied pair together gives
/// the exact Hessian (the Daleckii–Krein formula, f″ on the tie) on both
/// faces; one that splits it is reported, on both faces, as forward mode's
/// tie error — the second derivative there needs how the tie splits.
fn hvp_at_a_tie<T: Scalar + Element>() {
    let cpu = lindiff_tests::Cpu::default();
    let loss = Case::EighVals;
    for seed in [1, 2] {
        let (a, e, q, b) = tied::<T>(seed, false);
        let (xs, ds) = ([Input::matrix(&a)], [Input::matrix(&e)]);
        let eager = eager_hvp(cpu, &loss, &xs, &ds).unwrap_or_else(|err| panic!("eager: {err}"));
        let traced = traced_hvp(&cpu, &loss, &xs, &ds).unwrap_or_else(|err| panic!("traced: {err}"));
        assert_same_bits("hvp at a tie", &eager, &traced);
        let exact = [daleckii_krein(&q, &b).data];
        let err = relative_error(&eager, &exact);
        assert!(err <= 1e-12, "{}: HVP at a tie vs Daleckii–Krein: {err:.2e}", T::DTYPE.name());

        let (a, e, ..) = tied::<T>(seed, true);
        let (xs, ds) = ([Input::matrix(&a)], [Input::matrix(&e)]);
        let errors =
            [eager_hvp(cpu, &loss, &xs, &ds).unwrap_err(), traced_hvp(&cpu, &loss, &xs, &ds).unwrap_err()];
        for err in errors {
            let text = err.to_string();
            assert!(
                matches!(err, lindiff_core::Error::NotDifferentiable { op: "eigh", output: "v", .. })
                    && text.contains("forward mode at a tie"),
                "{text}"
            );
        }
    }
}

#[test]
fn hvp_at_a_tie_f64() {
    hvp_at_a_tie::<f64>();
}

#[test]
fn hvp_at_a_tie_c64() {
    hvp_at_a_tie::<Complex<f64>>();
}

/// ⟨W, A³⟩ through `funm_hermitian` with f = x³ (a caller's f with f′ and
/// f″), W = P + Pᴴ for the fixed [`pattern`](lindiff_tests::losses::pattern) P.
#[derive(Clone, Copy, Debug)]
struct Cube;

fn cube() -> lindiff_core::op::MatrixFunction {
    lindiff_core::op::MatrixFunction::custom("cube", |x| x * x * x, |x| 3.0 * x * x)
        .with_second_derivative(|x| 6.0 * x)
}

fn cube_weight<F: Face + ?Sized>(f: &mut F, a: &F::Tensor) -> Result<F::Tensor> {
    let dtype = f.meta(a).dtype;
    let p = lindiff_tests::losses::pattern(f, a, dtype)?;
    let ph = f.adjoint(&p, MatOp::Adjoint)?;
    f.binary(BinaryOp::Add, &p, &ph)
}

impl Loss for Cube {
    fn name(&self) -> String {
        "⟨W, A³⟩".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let w = cube_weight(f, &xs[0])?;
        let c = f.funm_hermitian(&xs[0], cube())?;
        lindiff_tests::losses::pairing(f, &w, &c)
    }
}

/// At tied and nearly tied eigenvalues — (1, 1 + g, 1 + 2g, 2.5) for gaps
/// g from 0 to 1e-4, along random Hermitian directions that split them —
/// the HVP through a Hermitian matrix function is the exact Hessian, which
/// exists at every spectrum. For ⟨W, A³⟩ it is a polynomial in A with no
/// eigenvalues in it: the gradient reads K = W A² + A W A + A² W on the
/// lower triangle, so H·E reads dK = W(AE + EA) + EWA + AWE + (AE + EA)W
/// there (2·tril(dK, −1) + Re diag(dK)).
fn funm_hvp_at_a_tie<T: Scalar + Element>() {
    let cpu = lindiff_tests::Cpu::default();
    for seed in [1, 2] {
        for gap in [0.0, 1e-14, 1e-10, 1e-6, 1e-4] {
            let mut rng = Rng::new(seed);
            let a = hermitian::<T>(&mut rng, &[1.0, 1.0 + gap, 1.0 + 2.0 * gap, 2.5]);
            let e = Case::Eigh.direction(&a, seed);
            let (xs, ds) = ([Input::matrix(&a)], [Input::matrix(&e)]);
            let eager = eager_hvp(cpu, &Cube, &xs, &ds).unwrap_or_else(|err| panic!("eager: {err}"));
            let traced = traced_hvp(&cpu, &Cube, &xs, &ds).unwrap_or_else(|err| panic!("traced: {err}"));
            assert_same_bits("funm hvp at a tie", &eager, &traced);
            let mut face = lindiff_core::face::direct::Direct::new(cpu);
            let ta = face.tensor(&[4, 4], &a.data).unwrap();
            let w = cube_weight(&mut face, &ta).unwrap().to_vec::<T>().unwrap();
            let w = Dense::from_fn(4, 4, |i, j| w[i + 4 * j]);
            let ae_ea = a.matmul(&e).add(&e.matmul(&a));
            let dk = w
                .matmul(&ae_ea)
                .add(&e.matmul(&w).matmul(&a))
                .add(&a.matmul(&w).matmul(&e))
                .add(&ae_ea.matmul(&w));
            let exact = Dense::from_fn(4, 4, |i, j| match i.cmp(&j) {
                std::cmp::Ordering::Greater => dk[(i, j)].scale(Re::<T>::from_f64(2.0)),
                std::cmp::Ordering::Equal => T::from_real(dk[(i, i)].re()),
                std::cmp::Ordering::Less => T::zero(),
            });
            let err = relative_error(&eager, &[exact.data]);
            assert!(err <= 1e-12, "{} gap {gap:e}: HVP vs the exact Hessian: {err:.2e}", T::DTYPE.name());
        }
    }
}

#[test]
fn funm_hvp_at_a_tie_f64() {
    funm_hvp_at_a_tie::<f64>();
}

#[test]
fn funm_hvp_at_a_tie_c64() {
    funm_hvp_at_a_tie::<Complex<f64>>();
}

/// A caller's f without f″ has first derivatives only: its HVP says so.
#[test]
fn funm_without_second_derivative() {
    #[derive(Clone, Copy, Debug)]
    struct Plain;
    impl Loss for Plain {
        fn name(&self) -> String {
            "⟨W, A³⟩ without f″".into()
        }
        fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
            let w = cube_weight(f, &xs[0])?;
            let plain = lindiff_core::op::MatrixFunction::custom("cube", |x| x * x * x, |x| 3.0 * x * x);
            let c = f.funm_hermitian(&xs[0], plain)?;
            lindiff_tests::losses::pairing(f, &w, &c)
        }
    }
    let cpu = lindiff_tests::Cpu::default();
    let (a, e, ..) = tied::<f64>(1, true);
    let (xs, ds) = ([Input::matrix(&a)], [Input::matrix(&e)]);
    for err in
        [eager_hvp(cpu, &Plain, &xs, &ds).unwrap_err(), traced_hvp(&cpu, &Plain, &xs, &ds).unwrap_err()]
    {
        assert!(
            matches!(err, lindiff_core::Error::Unsupported { op: "funm_hermitian_second", .. })
                && err.to_string().contains("with_second_derivative"),
            "{err}"
        );
    }
}

/// ⟨W, V diag(w) Vᴴ⟩ + ½⟨W_r, |·|²⟩ through eigh: its tangent reads the
/// whole tied block.
#[derive(Clone, Copy, Debug)]
struct Reconstruction;

impl Loss for Reconstruction {
    fn name(&self) -> String {
        "V diag(w) Vᴴ".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let e = f.eigh(&xs[0])?;
        let scaled = f.scale_cols(&e.v, &e.w)?;
        let a = f.matmul_with(&scaled, MatOp::Identity, &e.v, MatOp::Adjoint)?;
        weigh(f, &a)
    }
}

/// First order, forward mode at the same tie: the values' tangent is the
/// trace of the tied block (right for every symmetric function of the
/// values), so a loss of the values alone needs no check and goes through;
/// the vectors' tangent along a splitting direction is the reported
/// error, and along a direction that moves the pair together it is exact
/// (against finite differences, through the reconstruction).
fn forward_at_a_tie<T: Scalar + Element>() {
    use lindiff_tests::ad::{finite_difference, forward, traced_jvp};
    let cpu = lindiff_tests::Cpu::default();
    let (a, e, ..) = tied::<T>(3, true);
    let (xs, ds) = ([Input::matrix(&a)], [Input::matrix(&e)]);
    let values = forward(cpu, &Case::EighVals, &xs, &ds).unwrap();
    let fd = finite_difference(&cpu, &Case::EighVals, &xs, &ds, 1e-6);
    assert!((values - fd).abs() <= 1e-8 * fd.abs().max(1.0), "values at a split tie: {values} vs {fd}");
    for err in [
        forward(cpu, &Reconstruction, &xs, &ds).unwrap_err(),
        traced_jvp(&cpu, &Reconstruction, &xs, &ds).unwrap_err(),
    ] {
        assert!(err.to_string().contains("forward mode at a tie"), "{err}");
    }
    let (a, e, ..) = tied::<T>(3, false);
    let (xs, ds) = ([Input::matrix(&a)], [Input::matrix(&e)]);
    let got = forward(cpu, &Reconstruction, &xs, &ds).unwrap();
    let fd = finite_difference(&cpu, &Reconstruction, &xs, &ds, 1e-6);
    assert!((got - fd).abs() <= 1e-8 * fd.abs().max(1.0), "reconstruction at a tie: {got} vs {fd}");
}

#[test]
fn forward_at_a_tie_f64() {
    forward_at_a_tie::<f64>();
}

#[test]
fn forward_at_a_tie_c64() {
    forward_at_a_tie::<Complex<f64>>();
}

/// ⟨W, U diag(s) Vᴴ⟩ + ½⟨W_r, |·|²⟩ through the thin SVD.
#[derive(Clone, Copy, Debug)]
struct SvdReconstruction;

impl Loss for SvdReconstruction {
    fn name(&self) -> String {
        "U diag(s) Vᴴ".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let svd = f.svd(&xs[0])?;
        let scaled = f.scale_cols(&svd.u, &svd.s)?;
        let a = f.matmul(&scaled, &svd.vh)?;
        weigh(f, &a)
    }
}

/// Forward mode's tie check fires on the coupling, not on its rounding: at
/// A = U diag(2, 0, 0) Vᴴ (two zero values, tied) along dA = A, the parts of
/// UᴴdAV at the cut pairs are zero but for rounding. The check measures them
/// against UᴴdAV itself, so the tangent goes through, and it is exact
/// (dA = A scales A; against finite differences), on both faces.
fn forward_at_rounding_only<T: Scalar + Element>() {
    use lindiff_tests::ad::{finite_difference, forward, traced_jvp};
    let cpu = lindiff_tests::Cpu::default();
    for seed in [5, 6] {
        let a = Rng::new(seed).with_spectrum::<T>(3, 3, &[2.0, 0.0, 0.0]);
        let (xs, ds) = ([Input::matrix(&a)], [Input::matrix(&a)]);
        let eager = forward(cpu, &SvdReconstruction, &xs, &ds).unwrap_or_else(|e| panic!("eager: {e}"));
        let traced = traced_jvp(&cpu, &SvdReconstruction, &xs, &ds).unwrap_or_else(|e| panic!("traced: {e}"));
        let fd = finite_difference(&cpu, &SvdReconstruction, &xs, &ds, 1e-6);
        for got in [eager, traced] {
            assert!((got - fd).abs() <= 1e-8 * fd.abs().max(1.0), "{}: {got} vs {fd}", T::DTYPE.name());
        }
    }
}

#[test]
fn forward_at_rounding_only_f64() {
    forward_at_rounding_only::<f64>();
}

#[test]
fn forward_at_rounding_only_c64() {
    forward_at_rounding_only::<Complex<f64>>();
}

/// The same in f32 at k = 12 (ten zero values), where rounding is larger
/// against the threshold: the check measures the part against ‖UᴴdAV‖_F,
/// so it still goes through, and agrees with f64 at the same rounded input.
#[test]
fn forward_at_rounding_only_f32() {
    use lindiff_tests::ad::forward;
    let cpu = lindiff_tests::Cpu::default();
    let mut spectrum = [0.0; 12];
    spectrum[..2].copy_from_slice(&[2.0, 1.0]);
    let a = Rng::new(7).with_spectrum::<f64>(12, 12, &spectrum);
    let a32 = Dense::from_fn(12, 12, |i, j| a[(i, j)] as f32);
    let a64 = Dense::from_fn(12, 12, |i, j| f64::from(a32[(i, j)]));
    let got = forward(cpu, &SvdReconstruction, &[Input::matrix(&a32)], &[Input::matrix(&a32)])
        .unwrap_or_else(|e| panic!("f32: {e}"));
    let want = forward(cpu, &SvdReconstruction, &[Input::matrix(&a64)], &[Input::matrix(&a64)]).unwrap();
    assert!((got - want).abs() <= 1e-3 * want.abs(), "f32 {got} vs f64 {want}");
}

/// Σ adj(A), whose rule runs on an SVD of A.
struct AdjugateSum;

impl Loss for AdjugateSum {
    fn name(&self) -> String {
        "Σ adj(A)".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let adj = f.adjugate(&xs[0])?;
        total(f, &adj)
    }
}

/// The caveats `ad_support_second_order` gives adjugate and det, shown:
/// the HVP of Σ adj(A) at A = 2I (three tied singular values) is a typed
/// error on both faces, naming the SVD its rule runs on, while det's HVP
/// there is finite and matches differences of the gradient; away from the
/// tie adjugate's HVP matches them too.
#[test]
fn adjugate_second_order_stops_at_tied_singular_values() {
    let cpu = lindiff_tests::Cpu::default();
    let d = Rng::new(3).matrix::<f64>(3, 3);
    let ds = [Input::matrix(&d)];
    let tied = [Input::matrix(&Dense::from_fn(3, 3, |i, j| if i == j { 2.0 } else { 0.0 }))];
    for err in [
        eager_hvp(cpu, &AdjugateSum, &tied, &ds).unwrap_err(),
        traced_hvp(&cpu, &AdjugateSum, &tied, &ds).unwrap_err(),
    ] {
        assert!(matches!(err, lindiff_core::Error::NotDifferentiable { op: "svd", .. }), "{err}");
    }
    let det = eager_hvp(cpu, &Case::Det, &tied, &ds).unwrap();
    let err = relative_error(&det, &fd_hvp(&cpu, &Case::Det, &tied, &ds, 1e-3));
    assert!(err <= 1e-6, "det at a tie: {err:.2e}");
    let apart = [Input::matrix(&Rng::new(4).with_spectrum::<f64>(3, 3, &[3.0, 1.9, 0.7]))];
    let adj = eager_hvp(cpu, &AdjugateSum, &apart, &ds).unwrap();
    let err = relative_error(&adj, &fd_hvp(&cpu, &AdjugateSum, &apart, &ds, 1e-3));
    assert!(err <= 1e-6, "adjugate apart: {err:.2e}");
}
