//! The exponential of a general matrix (`expm`) and its Fréchet derivative
//! (`expm_frechet`; docs/ad-rules.md#matrix-exponential):
//! * the forward against references that share no code with the kernel:
//!   closed forms (a rotation generator, a nilpotent matrix, a diagonal
//!   similarity) and a Taylor series by scaling and squaring
//!   (`lindiff_tests::taylor`), at 1-norms from 1e-3 to 40, so that every
//!   Padé degree (3, 5, 7, 9, 13) and scalings up to s = 4 run; f32 and c32
//!   against f64;
//! * the Fréchet derivative against the block identity
//!   exp([[A, E], [0, A]]) = [[e^A, L(A, E)], [0, e^A]] by the Taylor
//!   reference, and its transposed and adjoint forms against the plain one
//!   on a transposed input;
//! * gradients of ⟨W, e^A⟩ and of ⟨W, L(A, E)⟩ by the `check` harness
//!   (forward mode, entrywise finite differences, both faces' bits), also
//!   at repeated, nearly repeated and defective eigenvalues;
//! * errors (NaN, overflow, shapes), an underflow to zero, a batch, 0×0.

use lindiff_core::face::direct::Direct;
use lindiff_core::face::Face;
use lindiff_core::op::{ExpmFactors, ExpmFrechet, ExpmFrechetFactored, LinalgOp};
use lindiff_core::{Element, Error, MatOp, Op, Ops, RealScalar, Result, Scalar};
use lindiff_tests::ad::{check, Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::pairing;
use lindiff_tests::taylor::{
    expm_frechet_taylor, expm_taylor, jordan_block, relative, scaled, similarity, with_eigenvalues,
};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// 1-norms that reach each Padé degree and scaling. The kernels choose
/// from the norms of powers (d_k = ‖A^k‖^{1/k} ≤ ‖A‖₁), so these random
/// matrices take the degree ‖A‖₁ would select or a lower one:
/// * expm (θ_m = 1.5e-2, 0.254, 0.950, 2.10, θ₁₃ = 4.25): by ‖A‖₁, m = 3 at
///   1e-3, 5 at 0.1 and 0.2, 7 at 0.5 and 0.9, 9 at 1 and 2, 13 with s = 1
///   at 5 and 8, 4 at 40.
/// * expm_frechet (ℓ_m = 1.08e-2, 0.200, 0.783, 1.78, 4.74): by ‖A‖₁, m = 3
///   at 1e-3, 5 at 0.1 (0.2 sits on ℓ₅), 7 at 0.5, 9 at 0.9 and 1, 13 with
///   s = 0 at 2, 1 at 5 and 8, 4 at 40.
const NORMS: [f64; 10] = [1e-3, 0.1, 0.2, 0.5, 0.9, 1.0, 2.0, 5.0, 8.0, 40.0];

/// ‖a‖₁.
fn norm1<T: Scalar>(a: &Dense<T>) -> f64 {
    (0..a.cols).map(|j| (0..a.rows).map(|i| a[(i, j)].abs().to_f64()).sum::<f64>()).fold(0.0, f64::max)
}

/// A random n×n matrix with 1-norm `norm`.
fn general<T: Scalar>(n: usize, norm: f64, seed: u64) -> Dense<T> {
    let a = Rng::new(seed).matrix::<T>(n, n);
    scaled(&a, norm / norm1(&a))
}

fn expm<T: Scalar + Element, P: TestProvider>(p: &P, a: &Dense<T>) -> Result<Dense<T>> {
    let mut la = Direct::new(*p);
    let t = la.tensor(&[a.rows, a.cols], &a.data)?;
    let y = la.expm(&t)?;
    Ok(Dense::from_col_major(a.rows, a.cols, y.to_vec::<T>()?))
}

fn frechet<T: Scalar + Element, P: TestProvider>(p: &P, a: &Dense<T>, e: &Dense<T>, how: MatOp) -> Dense<T> {
    let mut la = Direct::new(*p);
    let ta = la.tensor(&[a.rows, a.cols], &a.data).unwrap();
    let te = la.tensor(&[e.rows, e.cols], &e.data).unwrap();
    let op = Op::Linalg(LinalgOp::ExpmFrechet(ExpmFrechet(how)));
    let l = la.single(op, &[&ta, &te]).unwrap();
    Dense::from_col_major(a.rows, a.cols, l.to_vec::<T>().unwrap())
}

/// L(op(A), E) from `expm_factors`' terms (what a gradient runs).
fn factored<T: Scalar + Element, P: TestProvider>(p: &P, a: &Dense<T>, e: &Dense<T>, how: MatOp) -> Dense<T> {
    let mut la = Direct::new(*p);
    let ta = la.tensor(&[a.rows, a.cols], &a.data).unwrap();
    let te = la.tensor(&[e.rows, e.cols], &e.data).unwrap();
    let f = la.apply(Op::Linalg(LinalgOp::ExpmFactors(ExpmFactors)), &[&ta]).unwrap();
    let (terms, piv) = (f[1].clone().unwrap(), f[2].clone().unwrap());
    let op = Op::Linalg(LinalgOp::ExpmFrechetFactored(ExpmFrechetFactored(how)));
    let l = la.single(op, &[&ta, &terms, &piv, &te]).unwrap();
    Dense::from_col_major(a.rows, a.cols, l.to_vec::<T>().unwrap())
}

/// Closed forms, then the Taylor reference at every degree and scaling:
/// within 1e-13 relative (Frobenius) up to ‖A‖₁ = 8, and 40·1e-14 at 40,
/// where e^A's own condition number grows with ‖A‖.
fn forward_accuracy<T: Scalar + Element, P: TestProvider>(p: &P) {
    let name = T::DTYPE.name();
    let re = |x: f64| T::from_real(Re::<T>::from_f64(x));
    // [[0, θ], [−θ, 0]] → [[cos θ, sin θ], [−sin θ, cos θ]].
    for theta in [0.3, 3.0, 30.0] {
        let a = Dense::from_fn(2, 2, |i, j| re([[0.0, theta], [-theta, 0.0]][i][j]));
        let want =
            Dense::from_fn(2, 2, |i, j| re([[theta.cos(), theta.sin()], [-theta.sin(), theta.cos()]][i][j]));
        let err = relative(&expm(p, &a).unwrap(), &want);
        assert!(err <= 1e-15 * theta.max(1.0) * 4.0, "{name} rotation θ = {theta}: {err:.2e}");
    }
    // A strictly upper triangular N: e^N = I + N + N²/2 + N³/6.
    let r = Rng::new(3).matrix::<T>(4, 4);
    let nil =
        Dense::from_fn(4, 4, |i, j| if j > i { r[(i, j)].scale(Re::<T>::from_f64(3.0)) } else { T::zero() });
    let n2 = nil.matmul(&nil);
    let n3 = n2.matmul(&nil);
    let want = Dense::from_fn(4, 4, |i, j| {
        let eye = if i == j { re(1.0) } else { T::zero() };
        eye + nil[(i, j)]
            + n2[(i, j)].scale(Re::<T>::from_f64(0.5))
            + n3[(i, j)].scale(Re::<T>::from_f64(1.0 / 6.0))
    });
    let err = relative(&expm(p, &nil).unwrap(), &want);
    assert!(err <= 1e-14, "{name} nilpotent: {err:.2e}");
    // A non-normal similarity: e^{S diag(d) S⁻¹} = S diag(e^d) S⁻¹.
    let (s_mat, s_inv) = similarity::<T>(5, 4);
    let d = [-2.0, -0.5, 0.1, 1.0, 2.5];
    let dr: Vec<Re<T>> = d.iter().map(|&x| Re::<T>::from_f64(x)).collect();
    let ed: Vec<Re<T>> = d.iter().map(|&x| Re::<T>::from_f64(x.exp())).collect();
    let a = s_mat.scale_cols(&dr).matmul(&s_inv);
    let want = s_mat.scale_cols(&ed).matmul(&s_inv);
    let err = relative(&expm(p, &a).unwrap(), &want);
    assert!(err <= 1e-13, "{name} non-normal similarity: {err:.2e}");
    for (k, &norm) in NORMS.iter().enumerate() {
        for n in [3, 6] {
            let a = general::<T>(n, norm, 10 + k as u64);
            let err = relative(&expm(p, &a).unwrap(), &expm_taylor(&a));
            let tol = if norm > 10.0 { 40.0 * 1e-14 } else { 1e-13 };
            assert!(err <= tol, "{name} n = {n} ‖A‖₁ = {norm}: vs Taylor {err:.2e}");
        }
    }
}

/// A = [[1, b], [0, −1]]: ‖A‖₁ = b + 1 but A² = I, so the powers do not
/// grow. e^A = [[e, b·sinh 1], [0, 1/e]] to full precision (entrywise
/// 1e-15 relative) up to b = 1e10, value and gradient: scaling by ‖A‖₁
/// would take log₂ b squarings and lose up to seven digits. The
/// gradient of Σ e^A (= L(Aᵀ, 1)) against mpmath at 40 digits through the
/// block identity exp([[Aᵀ, 1], [0, Aᵀ]]) (values pasted from that run).
fn non_normal<P: TestProvider>(p: &P) {
    let (e, sinh) = (1f64.exp(), 1f64.sinh());
    for b in [1e2, 1e4, 1e6, 1e8, 1e10] {
        let a = Dense::from_col_major(2, 2, vec![1.0, 0.0, b, -1.0]);
        let want = [e, 0.0, b * sinh, 1.0 / e];
        let c64 = |m: &Dense<f64>| Dense::from_fn(2, 2, |i, j| Complex::new(m[(i, j)], 0.0));
        let got = expm(p, &a).unwrap();
        let got_c = expm(p, &c64(&a)).unwrap();
        for (k, &w) in want.iter().enumerate() {
            let err = |x: f64| (x - w).abs() / w.abs().max(f64::MIN_POSITIVE);
            assert!(err(got.data[k]) <= 1e-15 || got.data[k] == w, "b = {b:e}, entry {k}: {}", got.data[k]);
            let c = got_c.data[k];
            assert!(c.im == 0.0 && (err(c.re) <= 1e-15 || c.re == w), "c64 b = {b:e}, entry {k}: {c}");
        }
    }
    // (b, ∇ of Σ e^A column-major) by mpmath, to f64's 17 digits.
    #[allow(clippy::excessive_precision)]
    let mpmath: [(f64, [f64; 4]); 3] = [
        (1e2, [79.872313569221234, 1958.0925264152356, 1.1752011936438015, 40.733967064789399]),
        (1e6, [771543.03568945035, 183940895788.09001, 1.1752011936438015, 403661.24411562074]),
        (1e10, [7715403176.7945007, 1.8393972070324128e19, 1.1752011936438015, 4036608762.7296751]),
    ];
    for (b, want) in mpmath {
        let mut la = Direct::new(*p);
        let a = la.tensor(&[2, 2], &[1.0, 0.0, b, -1.0]).unwrap();
        let g = la.value_and_grad([&a], |[x]| x.expm().sum()).unwrap().grads[0].to_vec::<f64>().unwrap();
        for (k, (&got, &w)) in g.iter().zip(&want).enumerate() {
            let err = (got - w).abs() / w.abs();
            assert!(err <= 1e-14, "b = {b:e}: gradient entry {k} {got} vs {w} ({err:.1e})");
        }
    }
}

/// The same A in f32 and c32 at b = 1e4, 1e10: X₀ = A/2^{s₀} has
/// X₀² = 4^{−s₀}·I, and its fourth and sixth powers fall below f32's
/// normal range; read as d₄ = d₆ = 0 they would let a low degree run with
/// X⁶ = 0. Against the closed form at 1e-6 relative (about 10 ulp).
fn non_normal_single<P: TestProvider>(p: &P) {
    let (e, sinh) = (1f64.exp(), 1f64.sinh());
    for b in [1e4f32, 1e10] {
        let want = [e, 0.0, f64::from(b) * sinh, 1.0 / e];
        let a = Dense::from_col_major(2, 2, vec![1.0f32, 0.0, b, -1.0]);
        let got = expm(p, &a).unwrap();
        let got_c = expm(p, &Dense::from_fn(2, 2, |i, j| Complex::new(a[(i, j)], 0.0f32))).unwrap();
        for (k, &w) in want.iter().enumerate() {
            let err = |x: f32| (f64::from(x) - w).abs() / w.abs().max(f64::MIN_POSITIVE);
            assert!(err(got.data[k]) <= 1e-6, "f32 b = {b:e}, entry {k}: {}", got.data[k]);
            assert!(err(got_c.data[k].re) <= 1e-6, "c32 b = {b:e}, entry {k}: {}", got_c.data[k]);
        }
    }
}

/// The same A at extreme scales. In f64 up to b = 1e150 (s₀ ≈ 500
/// squarings of headroom undone) the value is exact (1e-15 entrywise);
/// value_and_grad's value, from the derivative's own choice (β grows as
/// b^{1/13}: 8 squarings at 1e40, 22 at 1e100), within 1e-14 at b = 1e40.
/// Beyond what the dtype's exponent range lets the scaling undo (f32 from
/// b = 1e25, f64 at 1e200) the norm-based scaling would lose every digit
/// (it gives diag(1, 1) in f32 and 0 in f64): `OutOfRange` naming `a`,
/// from the value and from the derivative's factors, on a batch item. A
/// nilpotent A at the same scales has no entries whose products underflow
/// and no power to form again: e^A = I + A exactly, and its gradient
/// against the closed form while that is finite (`OutOfRange` beyond).
fn extreme_non_normality<P: TestProvider>(p: &P) {
    let (e, sinh) = (1f64.exp(), 1f64.sinh());
    for b in [1e40, 1e100, 1e150] {
        let want = [e, 0.0, b * sinh, 1.0 / e];
        let a = Dense::from_col_major(2, 2, vec![1.0, 0.0, b, -1.0]);
        let got = expm(p, &a).unwrap();
        for (k, &w) in want.iter().enumerate() {
            assert!((got.data[k] - w).abs() <= 1e-15 * w.abs(), "b = {b:e}, entry {k}: {}", got.data[k]);
        }
        let mut la = Direct::new(*p);
        let x = la.tensor(&[2, 2], &a.data).unwrap();
        let out = la.value_and_grad([&x], |[m]| m.expm().sum()).unwrap();
        let sum: f64 = want.iter().sum();
        if b == 1e40 {
            assert!((out.value - sum).abs() <= 1e-14 * sum, "value_and_grad at b = {b:e}: {}", out.value);
        }
    }
    let out_of_range = |err: Error| matches!(err, Error::OutOfRange { arg: "a", batch_index: 1, .. });
    for b in [1e25f32, 1e30] {
        let mut la = Direct::new(*p);
        let x = la.tensor(&[2, 2, 2], &[1.0f32, 0.0, 1.0, -1.0, 1.0, 0.0, b, -1.0]).unwrap();
        let err = la.expm(&x).unwrap_err();
        assert!(out_of_range(err.clone()) && err.op() == Some("expm"), "f32 b = {b:e}: {err}");
        let err = la.value_and_grad([&x], |[m]| m.expm().sum()).unwrap_err();
        assert!(out_of_range(err.clone()), "f32 b = {b:e}, gradient: {err}");
    }
    let mut la = Direct::new(*p);
    let x = la.tensor(&[2, 2, 2], &[1.0, 0.0, 1.0, -1.0, 1.0, 0.0, 1e200, -1.0]).unwrap();
    let err = la.expm(&x).unwrap_err();
    assert!(out_of_range(err.clone()), "f64 b = 1e200: {err}");
    // A = [[0, b], [0, 0]]: ∇ Σ e^A = L(N, 1) = 1 + (N1 + 1N)/2 + N1N/6 with
    // N = Aᵀ, N² = 0; its entry b²/6 overflows from b ≈ 1e154.
    for b in [1e150, 1e200, 1e300] {
        let x = la.tensor(&[2, 2], &[0.0, 0.0, b, 0.0]).unwrap();
        assert_eq!(la.expm(&x).unwrap().to_vec::<f64>().unwrap(), [1.0, 0.0, b, 1.0], "nilpotent b = {b:e}");
        let out = la.value_and_grad([&x], |[m]| m.expm().sum());
        if b > 1e154 {
            let err = out.unwrap_err();
            assert!(matches!(err, Error::OutOfRange { arg: "a", .. }), "nilpotent b = {b:e}: {err}");
            continue;
        }
        let out = out.unwrap();
        assert_eq!(out.value, 2.0 + b, "nilpotent b = {b:e}, value_and_grad");
        let g = out.grads[0].to_vec::<f64>().unwrap();
        for (k, w) in [1.0 + b / 2.0, 1.0 + b + b * b / 6.0, 1.0, 1.0 + b / 2.0].into_iter().enumerate() {
            assert!(
                (g[k] - w).abs() <= 1e-15 * w,
                "nilpotent b = {b:e}, gradient entry {k}: {} vs {w}",
                g[k]
            );
        }
    }
    let x = la.tensor(&[2, 2], &[0.0f32, 0.0, 1e30, 0.0]).unwrap();
    assert_eq!(la.expm(&x).unwrap().to_vec::<f32>().unwrap(), [1.0, 0.0, 1e30, 1.0], "f32 nilpotent");
}

/// ‖A‖₁ a few ulps above ℓ₁₃·2⁹ (A = diag(−a, 1/2), a = 4.74⁺·2⁹): rounding
/// puts ‖A/2⁹‖₁ just above the threshold, and one squaring more than s₀
/// would square A/2⁹ itself and give e^{2A}. Value (of value_and_grad, the
/// derivative's own choice, and of expm) and gradient against exp of the
/// diagonal and its divided difference.
fn scaling_at_the_threshold<P: TestProvider>(p: &P) {
    let a = f64::from_bits(4.74f64.to_bits() + 1) * 512.0;
    let (ea, ed) = ((-a).exp(), 0.5f64.exp());
    let mut la = Direct::new(*p);
    let x = la.tensor(&[2, 2], &[-a, 0.0, 0.0, 0.5]).unwrap();
    let out = la.value_and_grad([&x], |[m]| m.expm().sum()).unwrap();
    let err = |got: f64, want: f64| (got - want).abs() / want.abs().max(f64::MIN_POSITIVE);
    assert!(err(out.value, ea + ed) <= 1e-12, "value {} vs {}", out.value, ea + ed);
    let divided = (ea - ed) / (-a - 0.5);
    let g = out.grads[0].to_vec::<f64>().unwrap();
    for (k, w) in [ea, divided, divided, ed].into_iter().enumerate() {
        assert!((g[k] - w).abs() <= 1e-12 * w.abs().max(1e-300), "gradient entry {k}: {} vs {w}", g[k]);
    }
    let e = la.expm(&x).unwrap().to_vec::<f64>().unwrap();
    assert!(err(e[3], ed) <= 1e-12 && e[0] <= 1e-300 && e[1] == 0.0 && e[2] == 0.0, "expm {e:?}");
}

fn forward_f64<P: TestProvider>(p: &P) {
    forward_accuracy::<f64, P>(p);
}

fn forward_c64<P: TestProvider>(p: &P) {
    forward_accuracy::<Complex<f64>, P>(p);
}

/// Single precision against double precision at the same rounded input.
fn forward_single<P: TestProvider>(p: &P) {
    for (k, norm) in [0.2, 2.0, 8.0].into_iter().enumerate() {
        let a = general::<f64>(4, norm, 20 + k as u64);
        let a32 = Dense::from_fn(4, 4, |i, j| a[(i, j)] as f32);
        let a64 = Dense::from_fn(4, 4, |i, j| f64::from(a32[(i, j)]));
        let want = expm(p, &a64).unwrap();
        let got = expm(p, &a32).unwrap();
        let err = relative(&Dense::from_fn(4, 4, |i, j| f64::from(got[(i, j)])), &want);
        assert!(err <= 1e-5, "f32 ‖A‖₁ = {norm}: {err:.2e}");
        let c32 = Dense::from_fn(4, 4, |i, j| Complex::new(a32[(i, j)], 0.0f32));
        let got = expm(p, &c32).unwrap();
        let err = relative(&Dense::from_fn(4, 4, |i, j| f64::from(got[(i, j)].re)), &want);
        assert!(err <= 1e-5, "c32 ‖A‖₁ = {norm}: {err:.2e}");
    }
}

/// L(A, E) against the block identity by Taylor (1e-12 relative up to
/// ‖A‖₁ = 8, 1e-11 at 40); L(Aᵀ, E) and L(Aᴴ, E) by the flag equal L on an
/// explicitly transposed input, bit for bit.
fn frechet_accuracy<T: Scalar + Element, P: TestProvider>(p: &P) {
    let name = T::DTYPE.name();
    for (k, &norm) in NORMS.iter().enumerate() {
        let a = general::<T>(4, norm, 30 + k as u64);
        let e = Rng::new(40 + k as u64).matrix::<T>(4, 4);
        let got = frechet(p, &a, &e, MatOp::Identity);
        let err = relative(&got, &expm_frechet_taylor(&a, &e));
        let tol = if norm > 10.0 { 1e-11 } else { 1e-12 };
        assert!(err <= tol, "{name} ‖A‖₁ = {norm}: L(A, E) vs the block identity {err:.2e}");
        let at = Dense::from_fn(4, 4, |i, j| a[(j, i)]);
        assert_eq!(frechet(p, &a, &e, MatOp::Transpose).data, frechet(p, &at, &e, MatOp::Identity).data);
        assert_eq!(
            frechet(p, &a, &e, MatOp::Adjoint).data,
            frechet(p, &a.adjoint(), &e, MatOp::Identity).data
        );
        // From the forward's terms: the same steps for the identity flag, and
        // L(A, op(E)) under op for the others.
        assert_eq!(factored(p, &a, &e, MatOp::Identity).data, got.data, "{name} ‖A‖₁ = {norm}");
        for how in [MatOp::Transpose, MatOp::Adjoint] {
            let err = relative(&factored(p, &a, &e, how), &frechet(p, &a, &e, how));
            assert!(err <= tol, "{name} ‖A‖₁ = {norm}: factored {how:?} vs expm_frechet {err:.2e}");
        }
    }
}

fn frechet_f64<P: TestProvider>(p: &P) {
    frechet_accuracy::<f64, P>(p);
}

fn frechet_c64<P: TestProvider>(p: &P) {
    frechet_accuracy::<Complex<f64>, P>(p);
}

/// ⟨W, e^A⟩.
#[derive(Clone, Copy, Debug)]
struct ExpPairing;

impl Loss for ExpPairing {
    fn name(&self) -> String {
        "<W, expm(A)>".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let ea = f.expm(&xs[0])?;
        pairing(f, &xs[1], &ea)
    }
}

/// ⟨W, L(op(A), E)⟩, differentiated in A and E.
#[derive(Clone, Copy, Debug)]
struct FrechetPairing(MatOp);

impl Loss for FrechetPairing {
    fn name(&self) -> String {
        format!("<W, expm_frechet({:?}(A), E)>", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let op = Op::Linalg(LinalgOp::ExpmFrechet(ExpmFrechet(self.0)));
        let l = f.single(op, &[&xs[0], &xs[1]])?;
        pairing(f, &xs[2], &l)
    }
}

/// The harness (forward mode against reverse mode, entrywise finite
/// differences, eager and traced bits) at low degrees and at degree 13
/// without and with scaling; the Fréchet derivative with each flag (its
/// transpose under the transpose flag is conj(L(A, conj Ē)) for complex
/// input).
fn gradients<T: Scalar + Element, P: TestProvider>(p: &P) {
    // Repeated, nearly repeated (gap 1e-9) and defective eigenvalues: the
    // Fréchet derivative exists there and the algorithm divides by no gap.
    let w = Rng::new(57).matrix::<T>(4, 4);
    let e = Rng::new(58).matrix::<T>(4, 4);
    let repeated = with_eigenvalues::<T>(&[1.0, 1.0, -0.5, -0.5], 55);
    let near = with_eigenvalues::<T>(&[1.0, 1.0 + 1e-9, -0.5, 2.0], 55);
    for a in [repeated, near, jordan_block::<T>(4, 1.5, 56)] {
        check(p, &ExpPairing, &[Input::matrix(&a), Input::matrix(&w)]);
        check(
            p,
            &FrechetPairing(MatOp::Identity),
            &[Input::matrix(&a), Input::matrix(&e), Input::matrix(&w)],
        );
    }
    for (k, norm) in [0.1, 0.5, 4.0, 12.0].into_iter().enumerate() {
        let a = general::<T>(4, norm, 50 + k as u64);
        let w = Rng::new(60 + k as u64).matrix::<T>(4, 4);
        check(p, &ExpPairing, &[Input::matrix(&a), Input::matrix(&w)]);
        let e = Rng::new(70 + k as u64).matrix::<T>(4, 4);
        for how in [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint] {
            check(p, &FrechetPairing(how), &[Input::matrix(&a), Input::matrix(&e), Input::matrix(&w)]);
        }
    }
}

fn gradients_f64<P: TestProvider>(p: &P) {
    gradients::<f64, P>(p);
}

fn gradients_c64<P: TestProvider>(p: &P) {
    gradients::<Complex<f64>, P>(p);
}

/// Typed errors naming the op and the argument; e^{−1000 I} underflows to
/// an exact 0, not an error; a batch of 3 is 3 matrices; 0×0 is empty.
fn errors_and_shapes<P: TestProvider>(p: &P) {
    let mut nan = general::<f64>(3, 1.0, 80);
    nan[(1, 2)] = f64::NAN;
    assert!(matches!(expm(p, &nan), Err(Error::NonFinite { op: "expm", arg: "a", .. })));
    let big = Dense::from_fn(3, 3, |i, j| if i == j { 1000.0 } else { 0.0 });
    assert!(matches!(expm(p, &big), Err(Error::OutOfRange { op: "expm", arg: "a", .. })));
    let zero = frechet(p, &big, &Dense::from_fn(3, 3, |_, _| 0.0), MatOp::Identity);
    assert!(zero.data.iter().all(|&x| x == 0.0), "L(A, 0) = 0 even where e^A overflows");
    let small = expm(p, &scaled(&big, -1.0)).unwrap();
    assert!(small.data.iter().all(|&x| x == 0.0), "e^(−1000 I) = 0");
    let mut la = Direct::new(*p);
    let wide = la.tensor(&[2, 3], &[1.0f64; 6]).unwrap();
    assert!(matches!(la.expm(&wide), Err(Error::NotSquare { op: "expm", arg: "a", .. })));
    let a = la.tensor(&[3, 3], &general::<f64>(3, 1.0, 81).data).unwrap();
    let e4 = la.tensor(&[4, 4], &[0.0f64; 16]).unwrap();
    assert!(matches!(la.expm_frechet(&a, &e4), Err(Error::DimMismatch { op: "expm_frechet", arg: "e", .. })));
    let e32 = la.tensor(&[3, 3], &[0.0f32; 9]).unwrap();
    assert!(matches!(la.expm_frechet(&a, &e32), Err(Error::DType { op: "expm_frechet", arg: "e", .. })));
    let mut e_nan = vec![0.0f64; 9];
    e_nan[4] = f64::INFINITY;
    let e_nan = la.tensor(&[3, 3], &e_nan).unwrap();
    assert!(matches!(
        la.expm_frechet(&a, &e_nan),
        Err(Error::NonFinite { op: "expm_frechet", arg: "e", .. })
    ));
    let ms: Vec<Dense<f64>> = (0..3).map(|k| general::<f64>(3, [0.1, 3.0, 20.0][k], 82 + k as u64)).collect();
    let data: Vec<f64> = ms.iter().flat_map(|m| m.data.clone()).collect();
    let batch = la.tensor(&[3, 3, 3], &data).unwrap();
    let out = la.expm(&batch).unwrap().to_vec::<f64>().unwrap();
    for (k, m) in ms.iter().enumerate() {
        assert_eq!(out[9 * k..9 * k + 9], expm(p, m).unwrap().data[..], "batch item {k}");
    }
    let empty = la.tensor(&[0, 0], &[0.0f64; 0]).unwrap();
    assert!(la.expm(&empty).unwrap().to_vec::<f64>().unwrap().is_empty());
}

lindiff_tests::providers!(
    non_normal,
    non_normal_single,
    extreme_non_normality,
    scaling_at_the_threshold,
    forward_f64,
    forward_c64,
    forward_single,
    frechet_f64,
    frechet_c64,
    gradients_f64,
    gradients_c64,
    errors_and_shapes
);
