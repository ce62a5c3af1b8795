//! Cholesky reads only the lower triangle of its input (and, for complex
//! input, only the real part of the diagonal): a test that perturbs a
//! single entry agrees with the rule (`docs/ad-rules.md#conventions`:
//! eigh and Cholesky read the lower triangle). On an input whose strict
//! upper triangle is garbage (and whose
//! diagonal has a random imaginary part for c64):
//! * along each strictly-upper E_ij (and i·E_ij, and i·E_ii) the
//!   forward-mode tangent and the central finite difference are both
//!   exactly 0;
//! * along each lower E_ij (and i·E_ij below the diagonal) they agree to
//!   1e-8 relative;
//! * the reverse-mode gradient has exact zeros on the strict upper triangle
//!   and, for c64, a real diagonal; eager and traced gradients are
//!   bit-identical and match finite differences entry by entry.

use lindiff_core::face::direct::Direct;
use lindiff_core::face::Face;
use lindiff_core::op::MatOp;

use lindiff_core::{Element, Host, Ops, Provider, RealScalar, Result, Scalar};
use lindiff_tests::ad::{
    check, eager_grad, finite_difference, forward, step, tolerance, traced_grad, value, Input, Loss,
};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::probe;
use lindiff_tests::TestProvider;
use num_complex::Complex;

// ------------------------------------------------------------ losses ----

/// What a Cholesky loss computes.
#[derive(Clone, Copy, Debug)]
enum What {
    /// probe(L).
    Factor,
    /// probe(L Lᴴ): the Hermitian matrix the forward actually factored.
    Product,
}

struct CholLoss(What);

impl Loss for CholLoss {
    fn name(&self) -> String {
        format!("cholesky {:?}", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let l = f.cholesky(&xs[0])?;
        match self.0 {
            What::Factor => probe(f, &l),
            What::Product => {
                let llh = f.matmul_with(&l, MatOp::Identity, &l, MatOp::Adjoint)?;
                probe(f, &llh)
            }
        }
    }
}

// ------------------------------------------------------------ inputs ----

/// X Xᴴ + 3I with its strict upper triangle replaced by garbage and (complex
/// `T`) a random imaginary part on its diagonal.
fn input<T: Scalar>(n: usize, rng: &mut Rng) -> Dense<T> {
    let x = rng.matrix::<T>(n, n);
    let mut a = x.matmul(&x.adjoint());
    for i in 0..n {
        a[(i, i)] += T::from_f64(3.0);
    }
    Dense::from_fn(n, n, |i, j| {
        let g: T = rng.scalar();
        match i.cmp(&j) {
            core::cmp::Ordering::Less => g.scale(<Re<T> as Scalar>::from_f64(5.0)),
            core::cmp::Ordering::Equal => T::from_parts(a[(i, i)].re(), g.im()),
            core::cmp::Ordering::Greater => a[(i, j)],
        }
    })
}

/// A direction with one nonzero entry `x` at (i, j).
fn single<T: Scalar>(n: usize, i: usize, j: usize, x: T) -> Input<T> {
    let mut d = Dense::<T>::zeros(n, n);
    d[(i, j)] = x;
    Input::matrix(&d)
}

// ------------------------------------------------------------- checks ----

/// Forward mode and finite differences (step `step()·‖A‖`) along single
/// entries: zero above the diagonal (and on the imaginary part of the
/// diagonal), matching below. Returns the worst relative mismatch.
fn single_entries<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    loss: &CholLoss,
    a: &Input<T>,
) -> f64
where
    Re<T>: Element,
{
    let n = a.dims[0];
    let xs = std::slice::from_ref(a);
    let l = value(&mut Direct::new(p.clone()), loss, xs).abs();
    let h = step::<T>() * a.norm();
    let i_unit = T::from_parts(Re::<T>::from_f64(0.0), Re::<T>::from_f64(1.0));
    let units: &[T] = if T::IS_COMPLEX { &[T::one(), i_unit] } else { &[T::one()] };
    let mut worst = 0.0f64;
    let mut nonzero = 0;
    for i in 0..n {
        for j in 0..n {
            for (part, &unit) in units.iter().enumerate() {
                let dir = single(n, i, j, unit);
                let ds = std::slice::from_ref(&dir);
                let jvp = forward(p.clone(), loss, xs, ds).unwrap_or_else(|e| panic!("{}: {e}", loss.name()));
                let fd = finite_difference(p, loss, xs, ds, h);
                let what = if part == 0 { "E" } else { "i·E" };
                // Ignored: the strict upper triangle, and the imaginary part
                // of the diagonal.
                if i < j || (i == j && part == 1) {
                    assert_eq!((jvp, fd), (0.0, 0.0), "{}: along {what}({i}, {j})", loss.name());
                } else {
                    let err = (jvp - fd).abs() / jvp.abs().max(l);
                    assert!(
                        err <= tolerance::<T>(),
                        "{}: along {what}({i}, {j}): forward {jvp:e} vs fd {fd:e} ({err:e})",
                        loss.name()
                    );
                    worst = worst.max(err);
                    nonzero += usize::from(jvp != 0.0);
                }
            }
        }
    }
    // The lower entries do move the loss (the comparison above is not
    // between zeros).
    let lower_count = n * (n + 1) / 2 + if T::IS_COMPLEX { n * (n - 1) / 2 } else { 0 };
    assert_eq!(nonzero, lower_count, "{}: a lower direction with a zero tangent", loss.name());
    worst
}

/// The reverse-mode gradient: zero strict upper triangle, real diagonal
/// (c64), eager = traced bit for bit, entrywise finite differences. Returns
/// ‖g − g_fd‖∞ / max(‖g‖∞, |L|/‖A‖).
fn reverse<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    loss: &CholLoss,
    a: &Input<T>,
) -> f64
where
    Re<T>: Element,
{
    let n = a.dims[0];
    let xs = std::slice::from_ref(a);
    let eager = eager_grad(p.clone(), loss, xs).unwrap_or_else(|e| panic!("{}: eager: {e}", loss.name()));
    let traced = traced_grad(p, loss, xs).unwrap_or_else(|e| panic!("{}: traced: {e}", loss.name()));
    let g = Dense::from_col_major(n, n, eager[0].clone());
    // `run_program` returns a result's whole pool block: compare the
    // tensor's elements.
    let bits = |x: &T| (x.re().to_f64().to_bits(), x.im().to_f64().to_bits());
    let eb: Vec<_> = eager[0].iter().map(bits).collect();
    let tb: Vec<_> = traced[0][..n * n].iter().map(bits).collect();
    assert_eq!(eb, tb, "{}: eager and traced gradients differ", loss.name());
    for i in 0..n {
        for j in 0..n {
            if i < j {
                assert!(
                    g[(i, j)] == T::zero(),
                    "{}: gradient at upper ({i}, {j}) = {:?}",
                    loss.name(),
                    g[(i, j)]
                );
            } else {
                assert!(g[(i, j)] != T::zero(), "{}: gradient at lower ({i}, {j}) is zero", loss.name());
            }
        }
        assert!(
            g[(i, i)].im() == Re::<T>::from_f64(0.0),
            "{}: complex diagonal gradient at {i}",
            loss.name()
        );
    }
    // Entrywise finite differences: every real (and imaginary) direction.
    let l = value(&mut Direct::new(p.clone()), loss, xs);
    let h = step::<T>() * a.norm();
    let (mut err, mut g_inf) = (0.0f64, 0.0f64);
    for j in 0..n {
        for i in 0..n {
            let gij = g[(i, j)];
            g_inf = g_inf.max(gij.abs().to_f64());
            let re = finite_difference(p, loss, xs, &[single(n, i, j, T::one())], h);
            err = err.max((gij.re().to_f64() - re).abs());
            if T::IS_COMPLEX {
                let unit = T::from_parts(Re::<T>::from_f64(0.0), Re::<T>::from_f64(1.0));
                let im = finite_difference(p, loss, xs, &[single(n, i, j, unit)], h);
                err = err.max((gij.im().to_f64() - im).abs());
            }
        }
    }
    let scale = g_inf.max(l.abs() / a.norm());
    assert!(err <= tolerance::<T>() * scale, "{}: ‖g − g_fd‖∞ = {err:e} (scale {scale:e})", loss.name());
    err / scale
}

fn suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for n in [1, 3, 4] {
        let a = Input::matrix(&input::<T>(n, &mut rng));
        for what in [What::Factor, What::Product] {
            let loss = CholLoss(what);
            let report = check(p, &loss, std::slice::from_ref(&a));
            let single = single_entries(p, &loss, &a);
            let rev = reverse(p, &loss, &a);
            println!(
                "{} {n}×{n} {}: forward vs fd {:.1e}, single entries {single:.1e}, gradient vs fd {rev:.1e}",
                loss.name(),
                T::DTYPE.name(),
                report.forward_vs_fd
            );
        }
    }
}

fn cholesky_upper_triangle_is_ignored_f64<P: TestProvider>(provider: &P) {
    suite::<f64, _>(provider, 61);
}

fn cholesky_upper_triangle_is_ignored_c64<P: TestProvider>(provider: &P) {
    suite::<Complex<f64>, _>(provider, 62);
}

lindiff_tests::providers!(cholesky_upper_triangle_is_ignored_f64, cholesky_upper_triangle_is_ignored_c64);
