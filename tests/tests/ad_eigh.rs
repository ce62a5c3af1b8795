//! Hermitian eigendecomposition derivatives (`eigh`, `eigvalsh`), f64 and
//! c64, through the harness (`check`) on gauge-invariant losses:
//! * Σ c_i w_i and Σ w_i² (values; also through `eigvalsh`, whose rule
//!   recomputes V);
//! * Re Σ W∘(V_g V_gᴴ), the projector onto an eigenvector group with a gap
//!   around it (also with the Lorentzian `derivative_eps` option);
//! * the seed's check: A = X + Xᴴ differentiated in X, loss of
//!   the eigenvalues plus the projector v₃v₃ᴴ;
//! * exact ties: Σ w_i² and the projector onto a whole tied group;
//! * Re Σ W∘V, a function of the canonical-phase V itself (checks that the
//!   tangent matches the forward's phase gauge);
//! * lower-triangle semantics: an input with garbage in the strict upper
//!   triangle and an imaginary diagonal; forward-mode tangents along a
//!   single strictly-upper entry (and the imaginary part of a diagonal
//!   entry) are exactly 0, as are the finite differences, while single
//!   lower entries match finite differences;
//! * a batch of three matrices.

use lindiff_core::face::Face;
use lindiff_core::op::{EighOptions, MatOp};
use lindiff_core::prim::{BinaryOp, UnaryOp};
use lindiff_core::{Element, Error, Host, Ops, Provider, Result, Scalar};
use lindiff_tests::ad::{
    check_forward, check_with, eager_grad, finite_difference, forward, step, tolerance, traced_grad, value,
    CheckOptions, Input, Loss, Report,
};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::{ramp, ramp_weights, total};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// Re Σ W∘(V_g V_gᴴ) for the columns `start..start + count` of `v`.
fn projector<F: Face + ?Sized>(f: &mut F, v: &F::Tensor, start: usize, count: usize) -> Result<F::Tensor> {
    let n = f.meta(v).shape.dims()[0];
    let vg = f.slice(v, [0, start], [n, count])?;
    let proj = f.matmul_with(&vg, MatOp::Identity, &vg, MatOp::Adjoint)?;
    let dtype = f.meta(v).dtype;
    let w = ramp_weights(f, v, dtype)?;
    let wp = f.binary(BinaryOp::Mul, &w, &proj)?;
    total(f, &wp)
}

/// What an eigh loss computes.
#[derive(Clone, Copy, Debug)]
enum What {
    /// Σ c_i w_i.
    Values,
    /// Σ w_i².
    Squares,
    /// Σ c_i w_i through `eigvalsh`.
    ValsOnly,
    /// Σ w_i² through `eigvalsh`.
    ValsOnlySquares,
    /// Re Σ W∘(V_g V_gᴴ), columns `start..start + count`.
    Projector(usize, usize),
    /// Re Σ W∘V for real input (the canonical sign is locally constant);
    /// Σ |W|²∘|V|² for complex input, which does not read the column phases.
    Vectors,
    /// Re Σ W∘V: reads the canonical phase of complex eigenvectors. Forward
    /// mode follows the forward's gauge; reverse mode reports the cotangent.
    Phases,
    /// The seed's: A = X + Xᴴ, Σ c_i w_i + Re Σ W∘(v₃v₃ᴴ).
    Seed,
}

/// An eigh loss with the options of its `eigh` call.
struct EighLoss {
    what: What,
    options: EighOptions,
}

impl EighLoss {
    /// `what` with default options.
    fn new(what: What) -> Self {
        EighLoss { what, options: EighOptions::default() }
    }
}

impl Loss for EighLoss {
    fn name(&self) -> String {
        format!("eigh {:?} {:?}", self.what, self.options)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let a = &xs[0];
        let real = f.meta(a).dtype.real();
        match self.what {
            What::ValsOnly | What::ValsOnlySquares => {
                let w = f.eigvalsh(a)?;
                let c = if matches!(self.what, What::ValsOnly) { ramp(f, a, real)? } else { w.clone() };
                let cw = f.binary(BinaryOp::Mul, &c, &w)?;
                total(f, &cw)
            }
            What::Seed => {
                let at = f.adjoint(a, MatOp::Adjoint)?;
                let sym = f.binary(BinaryOp::Add, a, &at)?;
                let e = f.eigh_with_options(&sym, self.options)?;
                let c = ramp(f, a, real)?;
                let cw = f.binary(BinaryOp::Mul, &c, &e.w)?;
                let values = total(f, &cw)?;
                let proj = projector(f, &e.v, 2, 1)?;
                f.binary(BinaryOp::Add, &values, &proj)
            }
            _ => {
                let e = f.eigh_with_options(a, self.options)?;
                match self.what {
                    What::Values | What::Squares => {
                        let c =
                            if matches!(self.what, What::Values) { ramp(f, a, real)? } else { e.w.clone() };
                        let cw = f.binary(BinaryOp::Mul, &c, &e.w)?;
                        total(f, &cw)
                    }
                    What::Projector(start, count) => projector(f, &e.v, start, count),
                    _ => {
                        let dtype = f.meta(&e.v).dtype;
                        let w = ramp_weights(f, &e.v, dtype)?;
                        let wv = if dtype.is_complex() && matches!(self.what, What::Vectors) {
                            let w2 = f.unary(UnaryOp::Abs2, &w)?;
                            let v2 = f.unary(UnaryOp::Abs2, &e.v)?;
                            f.binary(BinaryOp::Mul, &w2, &v2)?
                        } else {
                            f.binary(BinaryOp::Mul, &w, &e.v)?
                        };
                        total(f, &wv)
                    }
                }
            }
        }
    }
}

/// Q diag(w) Qᴴ with a random unitary Q.
fn hermitian<T: Scalar>(rng: &mut Rng, w: &[f64]) -> Dense<T> {
    let q = rng.unitary::<T>(w.len());
    let w: Vec<Re<T>> = w.iter().map(|&x| <Re<T> as Scalar>::from_f64(x)).collect();
    q.scale_cols(&w).matmul(&q.adjoint())
}

/// `a` with random garbage in its strict upper triangle and (complex `T`)
/// a random imaginary part on its diagonal: the forward must ignore both.
fn garbage<T: Scalar>(a: &Dense<T>, rng: &mut Rng) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |i, j| {
        let g: T = rng.scalar();
        match i.cmp(&j) {
            core::cmp::Ordering::Less => g.scale(<Re<T> as Scalar>::from_f64(5.0)),
            core::cmp::Ordering::Equal => T::from_parts(a[(i, i)].re(), g.im()),
            core::cmp::Ordering::Greater => a[(i, j)],
        }
    })
}

/// Runs `check` and prints what it measured.
fn run<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    loss: &EighLoss,
    xs: &[Input<T>],
) -> Report
where
    Re<T>: Element,
{
    // The opt-in Lorentzian broadening at an exact tie has coefficients
    // z/(z² + ε²) with z at rounding level: an ill-conditioned linear map
    // whose forward and reverse evaluations differ by ~1e4·eps.
    // Some inputs have exact ties, where forward mode may report the
    // direction (the reverse gradient is checked all the same).
    let options = if loss.options.derivative_eps.is_some() {
        CheckOptions::default().dot(1e-10)
    } else {
        CheckOptions::default()
    }
    .at_ties();
    let report = check_with(p, loss, xs, options);
    println!("{} [{:?}]: forward vs FD {:.2e}", loss.name(), xs[0].dims, report.forward_vs_fd);
    report
}

/// Distinct eigenvalues with gaps ≥ 0.4 and mixed signs.
const SPECTRUM: [f64; 5] = [-1.7, -0.6, 0.3, 1.1, 2.4];

/// Distinct eigenvalues, n = 1, 2, 5: values, vectors, projectors.
fn distinct<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for n in [1, 2, 5] {
        let a = Input::matrix(&hermitian::<T>(&mut rng, &SPECTRUM[..n]));
        run(p, &EighLoss::new(What::Values), std::slice::from_ref(&a));
        run(p, &EighLoss::new(What::Squares), std::slice::from_ref(&a));
        run(p, &EighLoss::new(What::ValsOnly), std::slice::from_ref(&a));
        run(p, &EighLoss::new(What::Vectors), std::slice::from_ref(&a));
        phases(p, &a);
        if n == 5 {
            // Groups with a gap after them: the lowest two, a middle one,
            // the top three.
            for (start, count) in [(0, 2), (2, 1), (2, 3)] {
                run(p, &EighLoss::new(What::Projector(start, count)), std::slice::from_ref(&a));
            }
            let broadened = EighLoss {
                what: What::Projector(0, 2),
                options: EighOptions::default().derivative_eps(1e-10),
            };
            run(p, &broadened, std::slice::from_ref(&a));
        }
    }
}

/// A loss that reads the phases of complex eigenvectors: forward mode
/// follows the forward's canonical phase (finite differences agree);
/// reverse mode reports the cotangent on both faces. Real input: an
/// ordinary loss (the sign is locally constant).
fn phases<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, a: &Input<T>)
where
    Re<T>: Element,
{
    let loss = EighLoss::new(What::Phases);
    let xs = std::slice::from_ref(a);
    if !T::DTYPE.is_complex() {
        run(p, &loss, xs);
        return;
    }
    check_forward(p, &loss, xs);
    for (face, r) in [("eager", eager_grad(p.clone(), &loss, xs)), ("traced", traced_grad(p, &loss, xs))] {
        match r {
            Err(Error::NotDifferentiable { op: "eigh", output: "v", why }) if why.contains("phase") => {}
            other => panic!("{} ({face}): expected the phase to be reported, got {other:?}", loss.name()),
        }
    }
}

/// Exact ties: symmetric functions and whole-group projectors.
fn ties<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    // A double and a triple eigenvalue.
    let a = Input::matrix(&hermitian::<T>(&mut rng, &[1.0, 1.0, 2.5, -0.5, -0.5, -0.5]));
    // Sorted: −0.5 ×3 (columns 0..3), 1 ×2 (3..5), 2.5 (5).
    run(p, &EighLoss::new(What::Squares), std::slice::from_ref(&a));
    run(p, &EighLoss::new(What::ValsOnlySquares), std::slice::from_ref(&a));
    run(p, &EighLoss::new(What::Projector(0, 3)), std::slice::from_ref(&a));
    run(p, &EighLoss::new(What::Projector(3, 2)), std::slice::from_ref(&a));
    run(p, &EighLoss::new(What::Projector(0, 5)), std::slice::from_ref(&a));
    let broadened =
        EighLoss { what: What::Projector(3, 2), options: EighOptions::default().derivative_eps(1e-10) };
    run(p, &broadened, &[a]);
}

/// The seed's FD check: A = X + Xᴴ, eigenvalues and v₃v₃ᴴ.
fn seed_check<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let x = Input::matrix(&rng.matrix::<T>(5, 5));
    run(p, &EighLoss::new(What::Seed), &[x]);
}

/// A batch of three 4×4 matrices.
fn batched<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let ms: Vec<Dense<T>> = (0..3).map(|_| hermitian::<T>(&mut rng, &SPECTRUM[..4])).collect();
    let a = Input::batch(&ms);
    for what in [What::Values, What::ValsOnly, What::Projector(1, 2), What::Vectors] {
        run(p, &EighLoss::new(what), std::slice::from_ref(&a));
    }
}

/// A direction with one nonzero entry `x` at (i, j).
fn single<T: Scalar>(n: usize, i: usize, j: usize, x: T) -> Input<T> {
    let mut d = Dense::<T>::zeros(n, n);
    d[(i, j)] = x;
    Input::matrix(&d)
}

/// Forward mode and finite differences along `dir`: (jvp, fd, |L|).
fn along<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    loss: &EighLoss,
    a: &Input<T>,
    dir: &Input<T>,
) -> (f64, f64, f64)
where
    Re<T>: Element,
{
    let xs = [a.clone()];
    let jvp = forward(p.clone(), loss, &xs, std::slice::from_ref(dir))
        .unwrap_or_else(|e| panic!("{}: {e}", loss.name()));
    let fd = finite_difference(p, loss, &xs, std::slice::from_ref(dir), step::<T>() * a.norm());
    let mut face = lindiff_core::face::direct::Direct::new(p.clone());
    (jvp, fd, value(&mut face, loss, &xs).abs())
}

/// Lower-triangle semantics along single entries.
fn lower_triangle<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let n = 4;
    let herm = hermitian::<T>(&mut rng, &SPECTRUM[..n]);
    let a = Input::matrix(&garbage(&herm, &mut rng));
    let losses =
        [EighLoss::new(What::Values), EighLoss::new(What::ValsOnly), EighLoss::new(What::Projector(1, 2))];
    let one = T::one();
    let i_unit = T::from_parts(Re::<T>::from_f64(0.0), Re::<T>::from_f64(1.0));
    let mut worst = 0.0f64;
    for loss in &losses {
        // The whole input with its garbage, along random directions.
        run(p, loss, std::slice::from_ref(&a));
        for i in 0..n {
            for j in 0..n {
                let (jvp, fd, l) = along(p, loss, &a, &single(n, i, j, one));
                if i < j {
                    assert_eq!((jvp, fd), (0.0, 0.0), "{}: upper entry ({i}, {j})", loss.name());
                } else {
                    let err = (jvp - fd).abs() / jvp.abs().max(l);
                    assert!(err <= tolerance::<T>(), "{}: entry ({i}, {j}): {jvp:e} vs {fd:e}", loss.name());
                    worst = worst.max(err);
                }
                if T::IS_COMPLEX {
                    let (jvp, fd, l) = along(p, loss, &a, &single(n, i, j, i_unit));
                    if i <= j {
                        assert_eq!((jvp, fd), (0.0, 0.0), "{}: imaginary part at ({i}, {j})", loss.name());
                    } else {
                        let err = (jvp - fd).abs() / jvp.abs().max(l);
                        assert!(err <= tolerance::<T>(), "{}: i·E({i}, {j}): {jvp:e} vs {fd:e}", loss.name());
                        worst = worst.max(err);
                    }
                }
            }
        }
    }
    println!("lower-triangle single entries [{}]: worst forward vs FD {worst:.2e}", T::DTYPE.name());
}

/// Every check, f64 and c64, on provider `p`.
fn suite<P: Provider<Memory = Host> + Clone>(p: &P) {
    distinct::<f64, P>(p, 11);
    distinct::<Complex<f64>, P>(p, 12);
    ties::<f64, P>(p, 21);
    ties::<Complex<f64>, P>(p, 22);
    seed_check::<f64, P>(p, 31);
    seed_check::<Complex<f64>, P>(p, 32);
    batched::<f64, P>(p, 41);
    batched::<Complex<f64>, P>(p, 42);
    lower_triangle::<f64, P>(p, 51);
    lower_triangle::<Complex<f64>, P>(p, 52);
}

/// The suite on the CPU provider.
fn eigh_derivatives<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(eigh_derivatives);
