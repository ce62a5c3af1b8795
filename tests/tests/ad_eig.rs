//! General eigendecomposition derivatives (`eig`, `eigvals`), real (f64)
//! and complex (c64) input, through the harness (`check`). Inputs are
//! A = Q T Qᴴ with a random unitary Q and an upper (quasi-)triangular T whose
//! diagonal (2×2 blocks [[a, 2b], [−b/2, a]] for conjugate pairs of a real
//! input, made non-normal) fixes the spectrum: real parts at least 0.5 apart (except within a
//! conjugate pair, whose real parts are bit-identical, so the forward's
//! (real part, imaginary part) order does not change under the step).
//! Losses:
//! * Re Σ c_i λ_i (complex weights), also through `eigvals`;
//! * Σ c_i |λ_i| and Σ |λ_i|² (through `eigvals`);
//! * Re Σ W∘(V diag(λ_i / u_iᵀv_i) Uᵀ), U the eigenvectors of Aᵀ: the
//!   eigendecomposition put back together (= Re Σ W∘A), which depends on V
//!   only through its gauge-free part;
//! * Σ W∘|V|² (needs the unit-norm fix) and Re Σ W∘V (needs the unit-norm
//!   and the pivot-phase fix: a function of the canonical V itself);
//! * a batch of three matrices.

use lindiff_core::face::Face;
use lindiff_core::op::MatOp;
use lindiff_core::prim::{BinaryOp, ReduceOp, UnaryOp};
use lindiff_core::{Element, Host, Ops, Provider, Result, Scalar};
use lindiff_tests::ad::{check, Input, Loss, Report};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::{ramp, ramp_weights, total};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// What an eig loss computes.
#[derive(Clone, Copy, Debug)]
enum What {
    /// Re Σ c_i λ_i with complex c_i = r_i + i·r_i²/n (r = the ramp).
    Values,
    /// The same through `eigvals`.
    ValsOnly,
    /// Σ r_i |λ_i|.
    Moduli,
    /// Σ |λ_i|² through `eigvals`.
    ValsOnlySquares,
    /// Re Σ W∘(V diag(λ_i / u_iᵀv_i) Uᵀ) with U from eig(Aᵀ).
    Reconstruct,
    /// Σ W∘|V|² (real W).
    Moduli2,
    /// Re Σ W∘V (complex W).
    Vectors,
}

/// An eig loss.
struct EigLoss(What);

/// Re Σ c_i λ_i (complex c), or Σ |λ_i|² when `squares`.
fn weighted_values<F: Face + ?Sized>(
    f: &mut F,
    a: &F::Tensor,
    w: &F::Tensor,
    squares: bool,
) -> Result<F::Tensor> {
    if squares {
        let m = f.unary(UnaryOp::Abs2, w)?;
        return total(f, &m);
    }
    let dtype = f.meta(w).dtype;
    let r = ramp(f, a, dtype)?;
    let r2 = f.binary(BinaryOp::Mul, &r, &r)?;
    let n = f.meta(w).shape.dims()[0] as f64;
    let r2 = f.scale(&r2, 1.0 / n)?;
    let im = f.unary(UnaryOp::MulI, &r2)?;
    let c = f.binary(BinaryOp::Add, &r, &im)?;
    let cw = f.binary(BinaryOp::Mul, &c, w)?;
    total(f, &cw)
}

impl Loss for EigLoss {
    fn name(&self) -> String {
        format!("eig {:?}", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let a = &xs[0];
        match self.0 {
            What::ValsOnly | What::ValsOnlySquares => {
                let w = f.eigvals(a)?;
                weighted_values(f, a, &w, matches!(self.0, What::ValsOnlySquares))
            }
            What::Values => {
                let e = f.eig(a)?;
                weighted_values(f, a, &e.w, false)
            }
            What::Moduli => {
                let e = f.eig(a)?;
                let m = f.unary(UnaryOp::Abs, &e.w)?;
                let real = f.meta(&m).dtype;
                let r = ramp(f, a, real)?;
                let rm = f.binary(BinaryOp::Mul, &r, &m)?;
                total(f, &rm)
            }
            What::Reconstruct => {
                let e = f.eig(a)?;
                let at = f.adjoint(a, MatOp::Transpose)?;
                let u = f.eig(&at)?.v;
                // u_iᵀ v_i per column.
                let uv = f.binary(BinaryOp::Mul, &u, &e.v)?;
                let uv = f.reduce(ReduceOp::Sum, &uv, 1)?;
                let inv = f.unary(UnaryOp::Recip, &uv)?;
                let d = f.binary(BinaryOp::Mul, &e.w, &inv)?;
                let vd = f.scale_cols(&e.v, &d)?;
                let rec = f.matmul_with(&vd, MatOp::Identity, &u, MatOp::Transpose)?;
                let dtype = f.meta(&rec).dtype;
                let w = ramp_weights(f, &rec, dtype)?;
                let wr = f.binary(BinaryOp::Mul, &w, &rec)?;
                total(f, &wr)
            }
            What::Moduli2 => {
                let v = f.eig(a)?.v;
                let m = f.unary(UnaryOp::Abs2, &v)?;
                let real = f.meta(&m).dtype;
                let w = ramp_weights(f, &m, real)?;
                let wm = f.binary(BinaryOp::Mul, &w, &m)?;
                total(f, &wm)
            }
            What::Vectors => {
                let v = f.eig(a)?.v;
                let dtype = f.meta(&v).dtype;
                let w = ramp_weights(f, &v, dtype)?;
                let wv = f.binary(BinaryOp::Mul, &w, &v)?;
                total(f, &wv)
            }
        }
    }
}

/// Q T Qᴴ with T upper (quasi-)triangular with the spectrum `spectrum`
/// ((re, im) pairs) and small random entries above it. For real `T` a
/// conjugate pair must be listed as consecutive (a, b), (a, −b) and becomes
/// the block [[a, 2b], [−b/2, a]].
fn with_eigenvalues<T: Scalar>(rng: &mut Rng, spectrum: &[(f64, f64)]) -> Dense<T> {
    let n = spectrum.len();
    let re = |x: f64| <Re<T> as Scalar>::from_f64(x);
    let mut t =
        Dense::<T>::from_fn(n, n, |i, j| if i < j { rng.scalar::<T>().scale(re(0.3)) } else { T::zero() });
    let mut k = 0;
    while k < n {
        let (a, b) = spectrum[k];
        if !T::IS_COMPLEX && b != 0.0 && k + 1 < n {
            t[(k, k)] = T::from_f64(a);
            t[(k + 1, k + 1)] = T::from_f64(a);
            // Non-normal, so that no eigenvector has two entries of equal
            // magnitude (a tie the canonical phase would flip on).
            t[(k, k + 1)] = T::from_f64(2.0 * b);
            t[(k + 1, k)] = T::from_f64(-0.5 * b);
            k += 2;
        } else {
            t[(k, k)] = T::from_parts(re(a), re(b));
            k += 1;
        }
    }
    let q = rng.unitary::<T>(n);
    q.matmul(&t).matmul(&q.adjoint())
}

/// A real spectrum with a conjugate pair: sorted −2, −0.5 ∓ 1.2i, 1, 2.5.
const REAL_INPUT: [(f64, f64); 5] = [(1.0, 0.0), (-0.5, 1.2), (-0.5, -1.2), (2.5, 0.0), (-2.0, 0.0)];
/// Real eigenvalues only.
const REAL_ONLY: [(f64, f64); 4] = [(0.7, 0.0), (-1.4, 0.0), (2.1, 0.0), (-0.2, 0.0)];
/// A complex spectrum with real parts apart.
const COMPLEX_INPUT: [(f64, f64); 5] = [(-2.0, 0.5), (0.4, 0.8), (-0.7, -1.0), (2.6, 1.1), (1.5, -0.3)];

/// Runs `check` and prints what it measured.
fn run<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, what: What, xs: &[Input<T>]) -> Report
where
    Re<T>: Element,
{
    let loss = EigLoss(what);
    let report = check(p, &loss, xs);
    println!(
        "{} [{} {:?}]: forward vs FD {:.2e}",
        loss.name(),
        T::DTYPE.name(),
        xs[0].dims,
        report.forward_vs_fd
    );
    report
}

/// Every loss.
const ALL: [What; 7] = [
    What::Values,
    What::ValsOnly,
    What::Moduli,
    What::ValsOnlySquares,
    What::Reconstruct,
    What::Moduli2,
    What::Vectors,
];

/// Every loss on one matrix per spectrum in `spectra`.
fn single<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    seed: u64,
    spectra: &[&[(f64, f64)]],
) where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for spectrum in spectra {
        let a = Input::matrix(&with_eigenvalues::<T>(&mut rng, spectrum));
        for what in ALL {
            run(p, what, std::slice::from_ref(&a));
        }
    }
}

/// Every loss on a batch of three matrices with `spectrum`.
fn batched<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64, spectrum: &[(f64, f64)])
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let ms: Vec<Dense<T>> = (0..3).map(|_| with_eigenvalues::<T>(&mut rng, spectrum)).collect();
    let a = Input::batch(&ms);
    for what in ALL {
        run(p, what, std::slice::from_ref(&a));
    }
}

/// Every check, real and complex input, on provider `p`.
fn suite<P: Provider<Memory = Host> + Clone>(p: &P) {
    single::<f64, P>(p, 61, &[&REAL_INPUT, &REAL_ONLY, &REAL_INPUT[3..], &REAL_INPUT[1..3]]);
    single::<Complex<f64>, P>(p, 62, &[&COMPLEX_INPUT, &COMPLEX_INPUT[..1], &REAL_ONLY]);
    batched::<f64, P>(p, 71, &REAL_INPUT);
    batched::<Complex<f64>, P>(p, 72, &COMPLEX_INPUT[..4]);
}

/// The suite on the CPU provider.
fn eig_derivatives<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(eig_derivatives);
