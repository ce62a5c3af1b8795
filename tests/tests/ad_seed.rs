//! The seed's five finite-difference checks in one place:
//! central differences with an absolute step of 1e-6 on a scalar f64 loss,
//! inputs of norm ~1, for
//! * solve: Σ solve(A, b), differentiated in A and b;
//! * Cholesky of X Xᵀ + 3I, differentiated in X;
//! * QR (thin, 4×3): a weighted loss of Q and R;
//! * eigh of X + Xᵀ, differentiated in X: the eigenvalues and the projector
//!   v₃v₃ᵀ;
//! * det.
//!
//! Each gradient is computed by both faces (eager tape and traced program),
//! which must agree bit for bit, and compared entry by entry with the
//! central finite differences. The table (printed, `--nocapture`) puts
//! max|g − g_fd| next to the seed implementation's figures; the assertion is ours:
//! ‖g − g_fd‖∞ ≤ 1e-8·max(‖g‖∞, |L|/‖A‖). Every loss also goes through the
//! harness's `check`.

use lindiff_core::face::direct::Direct;
use lindiff_core::face::Face;
use lindiff_core::op::MatOp;
use lindiff_core::prim::BinaryOp;
use lindiff_core::{Host, Ops, Provider, Result};
use lindiff_tests::ad::{check, eager_grad, finite_difference, traced_grad, value, Input, Loss};
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::losses::{probe, ramp, ramp_weights, total};
use lindiff_tests::TestProvider;

// ------------------------------------------------------------ losses ----

/// The five seed checks.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Seed {
    /// Σ solve(A, b), in A and b.
    Solve,
    /// probe(cholesky(X Xᵀ + 3I)), in X.
    Cholesky,
    /// probe(Q) + probe(R) of the thin QR.
    Qr,
    /// A = X + Xᵀ: Σ c_i w_i + Σ W∘(v₃v₃ᵀ), in X.
    Eigh,
    /// det(A).
    Det,
}

impl Seed {
    /// The seed implementation's max|g − g_fd|.
    fn reference(self) -> f64 {
        match self {
            Seed::Solve => 7.9e-11,
            Seed::Cholesky => 2.8e-10,
            Seed::Qr => 3.2e-10,
            Seed::Eigh => 1.2e-9,
            Seed::Det => 4.5e-10,
        }
    }
}

impl Loss for Seed {
    fn name(&self) -> String {
        format!("seed {self:?}")
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let a = &xs[0];
        match self {
            Seed::Solve => {
                let x = f.solve(a, &xs[1])?;
                total(f, &x)
            }
            Seed::Cholesky => {
                let n = f.meta(a).shape.dims()[0];
                let dtype = f.meta(a).dtype;
                let gram = f.matmul_with(a, MatOp::Identity, a, MatOp::Adjoint)?;
                let eye = f.eye(dtype, n, &[])?;
                let three = f.scale(&eye, 3.0)?;
                let spd = f.binary(BinaryOp::Add, &gram, &three)?;
                let l = f.cholesky(&spd)?;
                probe(f, &l)
            }
            Seed::Qr => {
                let qr = f.qr(a)?;
                let q = probe(f, &qr.q)?;
                let r = probe(f, &qr.r)?;
                f.binary(BinaryOp::Add, &q, &r)
            }
            Seed::Eigh => {
                let at = f.adjoint(a, MatOp::Adjoint)?;
                let sym = f.binary(BinaryOp::Add, a, &at)?;
                let e = f.eigh(&sym)?;
                let real = f.meta(&e.w).dtype;
                let c = ramp(f, a, real)?;
                let cw = f.binary(BinaryOp::Mul, &c, &e.w)?;
                let values = total(f, &cw)?;
                let n = f.meta(&e.v).shape.dims()[0];
                let v3 = f.slice(&e.v, [0, 2], [n, 1])?;
                let proj = f.matmul_with(&v3, MatOp::Identity, &v3, MatOp::Adjoint)?;
                let dtype = f.meta(&proj).dtype;
                let w = ramp_weights(f, &proj, dtype)?;
                let wp = f.binary(BinaryOp::Mul, &w, &proj)?;
                let proj = total(f, &wp)?;
                f.binary(BinaryOp::Add, &values, &proj)
            }
            Seed::Det => {
                let d = f.det(a)?;
                total(f, &d)
            }
        }
    }
}

// ----------------------------------------------------------- inputs ----

/// The seed's inputs (uniform [−0.5, 0.5) entries; the same
/// seeds and sizes as the seed checks in ad_solve.rs, ad_qr.rs, ad_det.rs).
fn inputs(seed: Seed) -> Vec<Input<f64>> {
    match seed {
        Seed::Solve => {
            let mut rng = Rng::new(5);
            let n = 6;
            let a = Dense::<f64>::from_fn(n, n, |i, j| rng.centered() + if i == j { 4.0 } else { 0.0 });
            let b = Dense::<f64>::from_fn(n, 2, |_, _| rng.centered());
            vec![Input::matrix(&a), Input::matrix(&b)]
        }
        Seed::Cholesky => {
            let mut rng = Rng::new(7);
            vec![Input::matrix(&Dense::<f64>::from_fn(4, 4, |_, _| rng.centered()))]
        }
        Seed::Qr => {
            let mut rng = Rng::new(11);
            vec![Input::matrix(&Dense::<f64>::from_fn(4, 3, |_, _| rng.centered()))]
        }
        Seed::Eigh => {
            let mut rng = Rng::new(31);
            vec![Input::matrix(&Dense::<f64>::from_fn(4, 4, |_, _| rng.centered()))]
        }
        Seed::Det => {
            let mut rng = Rng::new(9);
            vec![Input::matrix(&Dense::<f64>::from_fn(5, 5, |_, _| rng.centered()))]
        }
    }
}

// ------------------------------------------------------------ checks ----

/// What one seed check measured.
struct Row {
    seed: Seed,
    loss: f64,
    g_inf: f64,
    err: f64,
    bound: f64,
    forward_vs_fd: f64,
}

/// Both faces' gradients (asserted bit-identical) against central finite
/// differences with absolute step `h`, entry by entry.
fn seed_check<P: Provider<Memory = Host> + Clone>(p: &P, seed: Seed, h: f64) -> Row {
    let xs = inputs(seed);
    let report = check(p, &seed, &xs);
    let eager = eager_grad(p.clone(), &seed, &xs).unwrap_or_else(|e| panic!("{seed:?}: eager gradient: {e}"));
    let traced = traced_grad(p, &seed, &xs).unwrap_or_else(|e| panic!("{seed:?}: traced gradient: {e}"));
    assert_eq!(eager.len(), xs.len());
    for (k, (e, t)) in eager.iter().zip(&traced).enumerate() {
        // `run_program` returns a result's whole pool block, which may be
        // longer than the tensor: compare the tensor's elements.
        assert!(t.len() >= e.len(), "{seed:?}: traced gradient {k} too short");
        let eb: Vec<u64> = e.iter().map(|x| x.to_bits()).collect();
        let tb: Vec<u64> = t[..e.len()].iter().map(|x| x.to_bits()).collect();
        assert_eq!(
            eb,
            tb,
            "{seed:?}: eager and traced gradients of input {k} differ: {e:?} vs {:?}",
            &t[..e.len()]
        );
    }
    let loss = value(&mut Direct::new(p.clone()), &seed, &xs);
    let norm = xs.iter().map(|x| x.norm().powi(2)).sum::<f64>().sqrt();
    let (mut err, mut g_inf) = (0.0f64, 0.0f64);
    for (k, x) in xs.iter().enumerate() {
        assert_eq!(eager[k].len(), x.data.len(), "{seed:?}: gradient {k} has the wrong size");
        for i in 0..x.data.len() {
            let ds: Vec<Input<f64>> = xs
                .iter()
                .enumerate()
                .map(|(j, y)| {
                    let mut data = vec![0.0; y.data.len()];
                    if j == k {
                        data[i] = 1.0;
                    }
                    Input { dims: y.dims.clone(), data }
                })
                .collect();
            let fd = finite_difference(p, &seed, &xs, &ds, h);
            let g = eager[k][i];
            assert!(g.is_finite(), "{seed:?}: gradient entry ({k}, {i}) = {g}");
            err = err.max((g - fd).abs());
            g_inf = g_inf.max(g.abs());
        }
    }
    let bound = 1e-8 * g_inf.max(loss.abs() / norm);
    assert!(
        err <= bound,
        "{seed:?}: ‖g − g_fd‖∞ = {err:e} > 1e-8·max(‖g‖∞, |L|/‖A‖) = {bound:e} (L = {loss:e})"
    );
    Row { seed, loss, g_inf, err, bound, forward_vs_fd: report.forward_vs_fd }
}

/// All five checks on one provider, with the table.
fn suite<P: Provider<Memory = Host> + Clone>(p: &P) -> Vec<Row> {
    let rows: Vec<Row> =
        [Seed::Solve, Seed::Cholesky, Seed::Qr, Seed::Eigh, Seed::Det].map(|s| seed_check(p, s, 1e-6)).into();
    println!("seed FD checks (central, h = 1e-6, f64), provider {}:", p.name());
    println!(
        "{:<9} {:>11} {:>9} {:>14} {:>11} {:>11} {:>12} {:>15}",
        "check", "L", "‖g‖∞", "max|g − g_fd|", "reference", "our bound", "err/‖g‖∞", "fwd vs fd (rel)"
    );
    for r in &rows {
        println!(
            "{:<9} {:>11.4e} {:>9.3e} {:>14.2e} {:>11.1e} {:>11.2e} {:>12.2e} {:>15.2e}",
            format!("{:?}", r.seed),
            r.loss,
            r.g_inf,
            r.err,
            r.seed.reference(),
            r.bound,
            r.err / r.g_inf,
            r.forward_vs_fd
        );
    }
    rows
}

fn seed_finite_difference_checks<P: TestProvider>(provider: &P) {
    let rows = suite(provider);
    assert_eq!(rows.len(), 5);
}

/// The check detects a wrong gradient: the same comparison with a loss whose
/// gradient is scaled by 1 + 1e-6 fails (guards against a check that cannot
/// fail, e.g. a zero step or comparing a gradient with itself).
fn the_comparison_can_fail<P: TestProvider>(provider: &P) {
    let p = *provider;
    let xs = inputs(Seed::Det);
    let g = eager_grad(p, &Seed::Det, &xs).unwrap();
    let mut ds = xs.clone();
    ds[0].data.iter_mut().for_each(|x| *x = 0.0);
    ds[0].data[7] = 1.0;
    let fd = finite_difference(&p, &Seed::Det, &xs, &ds, 1e-6);
    let g_inf = g[0].iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!((g[0][7] - fd).abs() <= 1e-8 * g_inf);
    assert!((g[0][7] * (1.0 + 1e-6) - fd).abs() > 1e-8 * g_inf, "a 1e-6 relative error must be visible");
}

lindiff_tests::providers!(seed_finite_difference_checks, the_comparison_can_fail);
