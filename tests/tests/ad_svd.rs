//! SVD derivatives (docs/ad-rules.md#svd), checked through gauge-invariant
//! losses only: functions of s, projectors U_p U_pᴴ and V_p V_pᴴ with a gap
//! after p, and reconstructions ⟨G, U diag(s²) Vᴴ⟩ at well-separated
//! spectra. Covers the thin `svd` (tall, wide, square, batched, f64 and
//! c64), exact ties and zero singular values, `derivative_eps`, the
//! `vectors` option, `svd_vals` and `svd_full`.

use lindiff_core::face::direct::Direct;
use lindiff_core::face::Face;
use lindiff_core::op::{Svd, SvdOptions, SvdVectors};
use lindiff_core::prim::BinaryOp;
use lindiff_core::Host;
use lindiff_core::{Element, Error, LinalgOp, MatOp, Op, Ops, Provider, Result, Scalar};
use lindiff_tests::ad::{
    check, check_with, finite_difference, forward, is_forward_tie, step, tolerance, value, CheckOptions,
    Input, Loss, Report,
};
use lindiff_tests::dense::{Re, Rng};
use lindiff_tests::losses::{pairing, total};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// Which SVD op the loss goes through.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// `svd` (thin, default rule).
    Thin,
    /// `svd_with_options` with the Lorentzian broadening ε.
    Eps(f64),
    /// `Svd` with only U computed.
    Left,
    /// `Svd` with only Vᴴ computed.
    Right,
    /// `svd_vals`.
    Vals,
    /// `svd_full`, cut to its thin part.
    Full,
}

/// What the loss reads from the factors (`W`/`G` is the second input).
#[derive(Clone, Copy, Debug)]
enum Obs {
    /// Σ s_i².
    SumSquares,
    /// ⟨diag(W), s⟩ = Re Σ conj(W_ii) s_i (W k×k).
    WeightedS,
    /// ⟨W, U_p U_pᴴ⟩ (W m×m).
    ProjU(usize),
    /// ⟨W, V_p V_pᴴ⟩ (W n×n).
    ProjV(usize),
    /// ⟨G, U diag(s²) Vᴴ⟩ (G m×n).
    Recon,
}

/// A gauge-invariant SVD loss.
#[derive(Clone, Copy, Debug)]
struct SvdLoss {
    /// The op.
    via: Via,
    /// What is read from its outputs.
    obs: Obs,
}

impl SvdLoss {
    /// Thin (u, s, vh) through the chosen op (u/vh absent for `Vals`).
    #[allow(clippy::type_complexity)]
    fn factors<F: Face + ?Sized>(
        &self,
        f: &mut F,
        a: &F::Tensor,
    ) -> Result<(Option<F::Tensor>, F::Tensor, Option<F::Tensor>)> {
        let dims = f.meta(a).shape.dims().to_vec();
        let (m, n) = (dims[0], dims[1]);
        let k = m.min(n);
        let one_side = |f: &mut F, vectors| -> Result<_> {
            let op = Op::Linalg(LinalgOp::Svd(Svd(SvdOptions::default().vectors(vectors))));
            let mut outs = f.apply(op, &[a])?;
            Ok((outs[0].take(), outs[1].take().expect("s"), outs[2].take()))
        };
        Ok(match self.via {
            Via::Thin | Via::Eps(_) => {
                let opts = match self.via {
                    Via::Eps(eps) => SvdOptions::default().derivative_eps(eps),
                    _ => SvdOptions::default(),
                };
                let svd = f.svd_with_options(a, opts)?;
                (Some(svd.u), svd.s, Some(svd.vh))
            }
            Via::Left => one_side(f, SvdVectors::Left)?,
            Via::Right => one_side(f, SvdVectors::Right)?,
            Via::Vals => (None, f.svd_vals(a)?, None),
            Via::Full => {
                let svd = f.svd_full(a)?;
                let u = f.slice(&svd.u, [0, 0], [m, k])?;
                let vh = f.slice(&svd.vh, [0, 0], [k, n])?;
                (Some(u), svd.s, Some(vh))
            }
        })
    }
}

impl Loss for SvdLoss {
    fn name(&self) -> String {
        format!("{:?} through {:?}", self.obs, self.via)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let (u, s, vh) = self.factors(f, &xs[0])?;
        let dims = f.meta(&xs[0]).shape.dims().to_vec();
        let (m, n) = (dims[0], dims[1]);
        match self.obs {
            Obs::SumSquares => {
                let s2 = f.binary(BinaryOp::Mul, &s, &s)?;
                total(f, &s2)
            }
            Obs::WeightedS => {
                let w = f.diag_part(&xs[1])?;
                pairing(f, &w, &s)
            }
            Obs::ProjU(p) => {
                let up = f.slice(&u.expect("u"), [0, 0], [m, p])?;
                let proj = f.matmul_with(&up, MatOp::Identity, &up, MatOp::Adjoint)?;
                pairing(f, &xs[1], &proj)
            }
            Obs::ProjV(p) => {
                let vp = f.slice(&vh.expect("vh"), [0, 0], [p, n])?;
                let proj = f.matmul_with(&vp, MatOp::Adjoint, &vp, MatOp::Identity)?;
                pairing(f, &xs[1], &proj)
            }
            Obs::Recon => {
                let s2 = f.binary(BinaryOp::Mul, &s, &s)?;
                let us2 = f.scale_cols(&u.expect("u"), &s2)?;
                let x = f.matmul(&us2, &vh.expect("vh"))?;
                pairing(f, &xs[1], &x)
            }
        }
    }
}

/// The second input `obs` needs for an m×n A (batch `b`, 0 for none).
fn weight<T: Scalar>(obs: Obs, m: usize, n: usize, b: usize, rng: &mut Rng) -> Option<Input<T>> {
    let (r, c) = match obs {
        Obs::SumSquares => return None,
        Obs::WeightedS => (m.min(n), m.min(n)),
        Obs::ProjU(_) => (m, m),
        Obs::ProjV(_) => (n, n),
        Obs::Recon => (m, n),
    };
    Some(if b == 0 {
        Input::matrix(&rng.matrix::<T>(r, c))
    } else {
        Input::batch(&(0..b).map(|_| rng.matrix::<T>(r, c)).collect::<Vec<_>>())
    })
}

/// The inputs of `obs` at A = Q diag(s) Rᴴ (m×n).
fn inputs<T: Scalar>(obs: Obs, m: usize, n: usize, s: &[f64], rng: &mut Rng) -> Vec<Input<T>> {
    let a = Input::matrix(&rng.with_spectrum::<T>(m, n, s));
    core::iter::once(a).chain(weight(obs, m, n, 0, rng)).collect()
}

/// Every observable at an m×n matrix with a gap after every index.
fn observables(m: usize, n: usize) -> Vec<Obs> {
    let k = m.min(n);
    let mut all = vec![Obs::SumSquares, Obs::WeightedS, Obs::Recon];
    for p in 1..=k {
        all.push(Obs::ProjU(p));
        all.push(Obs::ProjV(p));
    }
    all
}

/// A well-separated spectrum of length k: 3, 1.94, 1.40, 1.08, …
fn separated(k: usize) -> Vec<f64> {
    (0..k).map(|i| 3.0 / (1.0 + 0.4 * i as f64).powf(1.3)).collect()
}

/// Checks `loss` and returns the report (worst forward-vs-FD error).
fn run<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    loss: SvdLoss,
    xs: &[Input<T>],
) -> Report
where
    Re<T>: Element,
{
    check(p, &loss, xs)
}

/// [`run`] at an exact tie or zero value, where forward mode may report a
/// direction that couples the tied vectors.
fn run_tied<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    loss: SvdLoss,
    xs: &[Input<T>],
) -> Report
where
    Re<T>: Element,
{
    check_with(p, &loss, xs, CheckOptions::default().at_ties())
}

/// Every observable on tall, wide, square (and k = 1) inputs; the worst error.
fn thin_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut worst = 0.0_f64;
    for (m, n) in [(5, 3), (3, 5), (4, 4), (1, 3), (3, 1)] {
        let s = separated(m.min(n));
        for obs in observables(m, n) {
            let xs = inputs::<T>(obs, m, n, &s, &mut rng);
            worst = worst.max(run(p, SvdLoss { via: Via::Thin, obs }, &xs).forward_vs_fd);
        }
    }
    worst
}

/// The default rule on thin SVDs.
fn thin_tall_wide_square<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = thin_suite::<f64, _>(&p, 1);
    let complex = thin_suite::<Complex<f64>, _>(&p, 2);
    eprintln!("thin svd: worst forward-vs-FD error f64 {real:e}, c64 {complex:e}");
}

/// A batch of three 4×3 (3×4) matrices with different spectra; the worst error.
fn batched_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut worst = 0.0_f64;
    for (m, n) in [(4, 3), (3, 4)] {
        let spectra = [vec![3.0, 2.0, 1.0], vec![5.0, 3.0, 1.5], vec![2.0, 1.2, 0.5]];
        for obs in [Obs::WeightedS, Obs::ProjU(2), Obs::ProjV(1), Obs::ProjV(3), Obs::Recon] {
            let mats: Vec<_> = spectra.iter().map(|s| rng.with_spectrum::<T>(m, n, s)).collect();
            let xs: Vec<Input<T>> =
                core::iter::once(Input::batch(&mats)).chain(weight(obs, m, n, 3, &mut rng)).collect();
            worst = worst.max(run(p, SvdLoss { via: Via::Thin, obs }, &xs).forward_vs_fd);
        }
    }
    worst
}

/// The rule batched over a trailing dim.
fn batched<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = batched_suite::<f64, _>(&p, 3);
    let complex = batched_suite::<Complex<f64>, _>(&p, 4);
    eprintln!("batched svd: worst error f64 {real:e}, c64 {complex:e}");
}

/// An exact tie s = (2, 2, 1) and a zero value s = (2, 1, 0); the worst error.
fn tie_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut worst = 0.0_f64;
    for (m, n) in [(4, 3), (3, 4), (3, 3)] {
        let mut rng = Rng::new(seed * 100 + (10 * m + n) as u64);
        // Exact tie: losses differentiable there (symmetric in the tied
        // values, projectors onto the whole tied group or past it).
        let tie = [2.0, 2.0, 1.0];
        for obs in [Obs::SumSquares, Obs::ProjU(2), Obs::ProjV(2), Obs::ProjU(3), Obs::ProjV(3)] {
            let xs = inputs::<T>(obs, m, n, &tie, &mut rng);
            worst = worst.max(run_tied(p, SvdLoss { via: Via::Thin, obs }, &xs).forward_vs_fd);
        }
        // A projector splitting the tie is not differentiable: forward mode
        // reports the direction that couples the tied vectors.
        let obs = Obs::ProjU(1);
        let xs = inputs::<T>(obs, m, n, &tie, &mut rng);
        let ds: Vec<_> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        let e = forward(p.clone(), &SvdLoss { via: Via::Thin, obs }, &xs, &ds).unwrap_err();
        assert!(is_forward_tie(&e), "split tie: {e}");
        // A zero singular value: Σ s² is smooth there, and so is the
        // projector onto the nonzero part (the broadened rule's defect: P₂ at
        // s = (2, 1, 0)).
        let zero = [2.0, 1.0, 0.0];
        for obs in [Obs::SumSquares, Obs::ProjU(2), Obs::ProjV(2), Obs::ProjU(1)] {
            let xs = inputs::<T>(obs, m, n, &zero[..m.min(n)], &mut rng);
            worst = worst.max(run_tied(p, SvdLoss { via: Via::Thin, obs }, &xs).forward_vs_fd);
        }
    }
    worst
}

/// No NaN and exact derivatives at ties and zeros where the loss is smooth.
fn exact_tie_and_zero_singular_value<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = tie_suite::<f64, _>(&p, 5);
    let complex = tie_suite::<Complex<f64>, _>(&p, 6);
    eprintln!("ties and zeros: worst error f64 {real:e}, c64 {complex:e}");
}

/// The Lorentzian-broadened rule's defect at a zero value: A = diag(2, 1, 0)
/// (4×3), P₂ = ⟨W, U₂U₂ᴴ⟩ with W + Wᵀ holding the seed's entries. That rule
/// gives NaN (it divides by the raw s); the
/// gradient (column-major, one forward pass per entry) must be the finite
/// differences [0, 0, −0.6, 0.7, 0, 0, 1.4, −0.4, 0, 0, 0, 0].
fn diagonal_input_with_a_zero_value<P: TestProvider>(provider: &P) {
    let p = *provider;
    let mut a = lindiff_tests::dense::Dense::<f64>::zeros(4, 3);
    a[(0, 0)] = 2.0;
    a[(1, 1)] = 1.0;
    let mut w = lindiff_tests::dense::Dense::<f64>::zeros(4, 4);
    (w[(2, 0)], w[(3, 0)], w[(2, 1)], w[(3, 1)]) = (-1.2, 1.4, 1.4, -0.4);
    let xs = [Input::matrix(&a), Input::matrix(&w)];
    let loss = SvdLoss { via: Via::Thin, obs: Obs::ProjU(2) };
    let expected = [0.0, 0.0, -0.6, 0.7, 0.0, 0.0, 1.4, -0.4, 0.0, 0.0, 0.0, 0.0];
    let zero_w = Input { dims: vec![4, 4], data: vec![0.0; 16] };
    for (e, want) in expected.iter().enumerate() {
        let mut da = Input { dims: vec![4, 3], data: vec![0.0; 12] };
        da.data[e] = 1.0;
        let g = forward(p, &loss, &xs, &[da, zero_w.clone()]).unwrap();
        assert!((g - want).abs() <= 1e-12, "gradient entry {e}: {g} vs {want}");
    }
    let mut rng = Rng::new(7);
    let w = rng.matrix::<f64>(4, 4);
    let r = run(&p, loss, &[Input::matrix(&a), Input::matrix(&w)]);
    eprintln!("diag(2, 1, 0): error {:e}", r.forward_vs_fd);
}

/// `svd_vals` through functions of s; the worst error.
fn values_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut worst = 0.0_f64;
    for (m, n) in [(5, 3), (3, 5), (4, 4)] {
        let s = separated(m.min(n));
        for obs in [Obs::SumSquares, Obs::WeightedS] {
            let xs = inputs::<T>(obs, m, n, &s, &mut rng);
            worst = worst.max(run(p, SvdLoss { via: Via::Vals, obs }, &xs).forward_vs_fd);
        }
    }
    worst
}

/// `svd_vals`.
fn values_only<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = values_suite::<f64, _>(&p, 8);
    let complex = values_suite::<Complex<f64>, _>(&p, 9);
    eprintln!("svd_vals: worst error f64 {real:e}, c64 {complex:e}");
}

/// `Svd` with only U (only Vᴴ) computed: checked, and equal to the
/// derivative with both computed; the worst error.
fn one_side_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut worst = 0.0_f64;
    for (m, n) in [(5, 3), (3, 5)] {
        let k = m.min(n);
        let s = separated(k);
        for (via, obs) in
            [(Via::Left, Obs::ProjU(k)), (Via::Left, Obs::ProjU(1)), (Via::Right, Obs::ProjV(k))]
        {
            let xs = inputs::<T>(obs, m, n, &s, &mut rng);
            worst = worst.max(run(p, SvdLoss { via, obs }, &xs).forward_vs_fd);
            // Same derivative as with both factors computed.
            let ds: Vec<_> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
            let one = forward(p.clone(), &SvdLoss { via, obs }, &xs, &ds).unwrap();
            let both = forward(p.clone(), &SvdLoss { via: Via::Thin, obs }, &xs, &ds).unwrap();
            assert!((one - both).abs() <= 1e-12 * both.abs().max(1.0), "{via:?} {obs:?}: {one} vs {both}");
        }
    }
    worst
}

/// The rule recomputes the factor the forward did not produce.
fn one_factor_computed<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = one_side_suite::<f64, _>(&p, 10);
    let complex = one_side_suite::<Complex<f64>, _>(&p, 11);
    eprintln!("svd with one factor: worst error f64 {real:e}, c64 {complex:e}");
}

/// `derivative_eps`: close to FD when separated, different from the exact
/// rule at a near-tie; the worst error.
fn eps_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut worst = 0.0_f64;
    let eps = 1e-6;
    // Well separated: the broadening moves F by O(ε²/gap²), below FD noise.
    for (m, n) in [(5, 3), (3, 5), (4, 4)] {
        let s = separated(m.min(n));
        for obs in [Obs::ProjU(1), Obs::ProjV(2), Obs::Recon, Obs::WeightedS] {
            let xs = inputs::<T>(obs, m, n, &s, &mut rng);
            worst = worst.max(run(p, SvdLoss { via: Via::Eps(eps), obs }, &xs).forward_vs_fd);
        }
    }
    // A near-tie (gap 1e-9 ≪ ε): the broadened coupling is ≈ gap/ε² instead
    // of 1/gap, so a loss resolving the pair (P₁) differs from the exact rule,
    // while functions of s alone do not.
    for (m, n) in [(4, 3), (3, 4)] {
        let near = [2.0, 2.0 - 1e-9, 1.0];
        for (obs, same) in [(Obs::ProjU(1), false), (Obs::ProjV(1), false), (Obs::SumSquares, true)] {
            let xs = inputs::<T>(obs, m, n, &near, &mut rng);
            let ds: Vec<_> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
            let broad = forward(p.clone(), &SvdLoss { via: Via::Eps(eps), obs }, &xs, &ds).unwrap();
            let exact = forward(p.clone(), &SvdLoss { via: Via::Thin, obs }, &xs, &ds).unwrap();
            assert!(broad.is_finite() && exact.is_finite(), "{obs:?}: {broad} vs {exact}");
            let diff = (broad - exact).abs() / exact.abs();
            if same {
                assert!(diff <= 1e-12, "{obs:?}: {broad} vs {exact}");
            } else {
                assert!(diff >= 0.5, "{obs:?}: broadened {broad} vs exact {exact}");
            }
        }
    }
    worst
}

/// The opt-in Lorentzian broadening.
fn derivative_eps_is_the_reference_broadening<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = eps_suite::<f64, _>(&p, 12);
    let complex = eps_suite::<Complex<f64>, _>(&p, 13);
    eprintln!("derivative_eps = 1e-6: worst error f64 {real:e}, c64 {complex:e}");
}

/// `svd_full`: square against the thin svd; tall/wide report the factor
/// with completion columns; the worst error.
fn full_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut worst = 0.0_f64;
    // Square: every output is differentiable and agrees with the thin svd.
    let s = separated(4);
    for obs in [Obs::ProjU(2), Obs::ProjV(1), Obs::Recon, Obs::WeightedS] {
        let xs = inputs::<T>(obs, 4, 4, &s, &mut rng);
        worst = worst.max(run(p, SvdLoss { via: Via::Full, obs }, &xs).forward_vs_fd);
        let ds: Vec<_> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        let full = forward(p.clone(), &SvdLoss { via: Via::Full, obs }, &xs, &ds).unwrap();
        let thin = forward(p.clone(), &SvdLoss { via: Via::Thin, obs }, &xs, &ds).unwrap();
        assert!((full - thin).abs() <= 1e-10 * thin.abs().max(1.0), "{obs:?}: {full} vs {thin}");
    }
    // Tall (wide): u (vh) has completion columns and reports it; s and the
    // other factor still work.
    let s = separated(3);
    for (m, n) in [(5, 3), (3, 5)] {
        let (bad, good) = if m > n { (Obs::ProjU(2), Obs::ProjV(2)) } else { (Obs::ProjV(2), Obs::ProjU(2)) };
        let xs = inputs::<T>(bad, m, n, &s, &mut rng);
        let ds: Vec<_> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        match forward(p.clone(), &SvdLoss { via: Via::Full, obs: bad }, &xs, &ds) {
            Err(Error::NotDifferentiable { op: "svd_full", output, .. }) => {
                assert_eq!(output, if m > n { "u" } else { "vh" });
            }
            other => panic!("{m}×{n} svd_full {bad:?}: expected NotDifferentiable, got {other:?}"),
        }
        for obs in [good, Obs::SumSquares, Obs::WeightedS] {
            let xs = inputs::<T>(obs, m, n, &s, &mut rng);
            worst = worst.max(run(p, SvdLoss { via: Via::Full, obs }, &xs).forward_vs_fd);
        }
    }
    worst
}

/// `svd_full`.
fn full_svd<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = full_suite::<f64, _>(&p, 14);
    let complex = full_suite::<Complex<f64>, _>(&p, 15);
    eprintln!("svd_full: worst error f64 {real:e}, c64 {complex:e}");
}

/// ⟨G, u⟩ + ⟨H, vh⟩: gauge-dependent, but the forward's canonical phase
/// makes it a well-defined function away from ties.
struct Canonical(Via);

impl Loss for Canonical {
    fn name(&self) -> String {
        format!("⟨G, u⟩ + ⟨H, vh⟩ through {:?}", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let (u, _, vh) = SvdLoss { via: self.0, obs: Obs::SumSquares }.factors(f, &xs[0])?;
        let a = pairing(f, &xs[1], &u.expect("u"))?;
        let b = pairing(f, &xs[2], &vh.expect("vh"))?;
        f.binary(BinaryOp::Add, &a, &b)
    }
}

/// Forward mode of [`Canonical`] against FD; the worst error.
fn canonical_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut worst = 0.0_f64;
    for via in [Via::Thin, Via::Eps(1e-6), Via::Full] {
        for (m, n) in [(5, 3), (3, 5), (4, 4)] {
            if matches!(via, Via::Full) && m != n {
                continue;
            }
            let k = m.min(n);
            let a = Input::matrix(&rng.with_spectrum::<T>(m, n, &separated(k)));
            let g = Input::matrix(&rng.matrix::<T>(m, k));
            let h = Input::matrix(&rng.matrix::<T>(k, n));
            let xs = vec![a, g, h];
            let loss = Canonical(via);
            let l = value(&mut Direct::new(p.clone()), &loss, &xs);
            for _ in 0..3 {
                let ds: Vec<_> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
                let jvp = forward(p.clone(), &loss, &xs, &ds).unwrap();
                let fd = finite_difference(p, &loss, &xs, &ds, step::<T>());
                let err = (jvp - fd).abs() / jvp.abs().max(l.abs());
                assert!(err <= tolerance::<T>(), "{} {m}×{n}: {jvp:e} vs FD {fd:e}", loss.name());
                worst = worst.max(err);
            }
        }
    }
    worst
}

/// Step 5 (the phase gauge): the u and vh tangents are those of the
/// forward's canonical outputs. ⟨G, u⟩ + ⟨H, vh⟩ is gauge-dependent, so it is
/// not a `check` loss (reverse mode of a gauge-dependent cotangent is not
/// meaningful at ties), but away from ties the forward's canonical phase
/// makes it a smooth function, and finite differences see that phase.
fn tangents_match_the_canonical_phase<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = canonical_suite::<f64, _>(&p, 16);
    let complex = canonical_suite::<Complex<f64>, _>(&p, 17);
    eprintln!("canonical phase: worst error f64 {real:e}, c64 {complex:e}");
}

lindiff_tests::providers!(
    thin_tall_wide_square,
    batched,
    exact_tie_and_zero_singular_value,
    diagonal_input_with_a_zero_value,
    values_only,
    one_factor_computed,
    derivative_eps_is_the_reference_broadening,
    full_svd,
    tangents_match_the_canonical_phase
);
