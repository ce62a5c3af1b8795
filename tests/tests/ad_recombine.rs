//! Derivatives of the SVD recombinations with their own rules
//! (`docs/ad-rules.md#recombinations`): the low-rank approximation and the
//! polar factor,
//! through the gauge-invariant losses ⟨W, A_p⟩ and ⟨W, polar(A)⟩
//! (Re Σ conj(W)∘X), W a second (differentiated) input.
//!
//! Every case goes through `check` (forward mode against finite
//! differences) and, here, through reverse mode as well: the eager and the
//! traced gradients must be bit-identical, agree with forward mode on
//! random directions (the dot-product test, ≤ 1e-12 relative), and, for
//! inputs of at most 64 entries, with entrywise central differences.
//!
//! Covered: ties and near-ties inside the kept block at gaps 0, 1e-14,
//! 1e-12, 1e-10, 1e-9 (the evidence), real and complex, tall, wide
//! and square, `Truncation::Count` and `Tolerance` (absolute and relative),
//! a tie inside the discarded block, zero discarded values, nothing
//! discarded, a batch whose items keep different ranks; the polar factor
//! with a tie, tall, square and wide, batched. The plain route through
//! `svd` and slicing is compared at a near-tie (it loses precision where
//! `low_rank_approx` does not) and a tie across the cut, where no
//! derivative exists, is reported by reverse mode.

use lindiff_core::face::Face;
use lindiff_core::op::Truncation;
use lindiff_core::{Element, Host, Ops, Provider, RealScalar, Result, Scalar};
use lindiff_tests::ad::{
    assert_same_gradients, check, eager_grad, finite_difference, forward, traced_grad, traced_jvp,
    unit_direction, value, Input, Loss, ENTRYWISE_LIMIT,
};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::pairing;
use lindiff_tests::spectral::assert_reported;
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;

/// How A is recombined.
#[derive(Clone, Copy, Debug)]
enum Route {
    /// `low_rank_approx(A, truncation).a_p`.
    LowRank(Truncation),
    /// `polar(A)`.
    Polar,
    /// The plain route: `svd(A)`, then U_p diag(s_p) V_pᴴ by slicing.
    SvdSlices(usize),
}

/// ⟨W, X(A)⟩ = Re Σ conj(W)∘X with X from the route; inputs [A, W].
#[derive(Clone, Copy, Debug)]
struct Recon(Route);

impl Loss for Recon {
    fn name(&self) -> String {
        format!("⟨W, {:?}(A)⟩", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let a = &xs[0];
        let x = match self.0 {
            Route::LowRank(keep) => f.low_rank_approx(a, keep)?.0,
            Route::Polar => f.polar(a)?,
            Route::SvdSlices(p) => {
                let dims = f.meta(a).shape.dims().to_vec();
                let svd = f.svd(a)?;
                let us = f.scale_cols(&svd.u, &svd.s)?;
                let us = f.slice(&us, [0, 0], [dims[0], p])?;
                let vh = f.slice(&svd.vh, [0, 0], [p, dims[1]])?;
                f.matmul(&us, &vh)?
            }
        };
        pairing(f, &xs[1], &x)
    }
}

/// What one case measured (relative errors).
#[derive(Clone, Copy, Debug, Default)]
struct Errors {
    /// Forward mode against finite differences (`check`).
    forward: f64,
    /// The gradient against entrywise finite differences (0 when skipped).
    entrywise: f64,
    /// ⟨g, d⟩ against the forward and traced JVPs.
    dot: f64,
}

impl Errors {
    fn max(self, o: Errors) -> Errors {
        Errors {
            forward: self.forward.max(o.forward),
            entrywise: self.entrywise.max(o.entrywise),
            dot: self.dot.max(o.dot),
        }
    }
}

/// `check`, then reverse mode: eager = traced bit for bit, the dot-product
/// test against forward mode and the traced jvp, entrywise finite
/// differences for small inputs.
fn verify<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    p: &P,
    loss: &L,
    xs: &[Input<T>],
) -> Errors
where
    Re<T>: Element,
{
    let name = loss.name();
    let forward_err = check(p, loss, xs).forward_vs_fd;
    let eager = eager_grad(p.clone(), loss, xs).unwrap_or_else(|e| panic!("{name}: eager gradient: {e}"));
    let traced = traced_grad(p, loss, xs).unwrap_or_else(|e| panic!("{name}: traced gradient: {e}"));
    assert_same_gradients(&name, xs, &eager, &traced);
    assert!(eager.iter().flatten().all(|g| g.is_finite()), "{name}: non-finite gradient");
    // Dot-product test: ⟨g, d⟩ = dL(d) by forward mode and the traced jvp.
    let mut rng = Rng::new(0xd07 ^ xs[0].data.len() as u64);
    let mut dot = 0.0_f64;
    for _ in 0..2 {
        let ds: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        let g_d: f64 = eager.iter().zip(&ds).map(|(g, d)| lindiff_tests::ad::inner(g, &d.data)).sum();
        let g_norm = eager.iter().flatten().map(|x| x.abs2().to_f64()).sum::<f64>().sqrt();
        let d_norm = ds.iter().map(Input::norm).sum::<f64>();
        let scale = g_d.abs().max(g_norm * d_norm * 1e-3).max(f64::MIN_POSITIVE);
        let fwd = forward(p.clone(), loss, xs, &ds).unwrap_or_else(|e| panic!("{name}: jvp: {e}"));
        let tr = traced_jvp(p, loss, xs, &ds).unwrap_or_else(|e| panic!("{name}: traced jvp: {e}"));
        for (label, j) in [("forward", fwd), ("traced", tr)] {
            let err = (g_d - j).abs() / scale;
            assert!(err <= 1e-12, "{name}: dot-product test ({label}): ⟨g, d⟩ = {g_d:e}, jvp = {j:e}");
            dot = dot.max(err);
        }
    }
    // Entrywise central differences (real and imaginary parts).
    let total: usize = xs.iter().map(|x| x.data.len()).sum();
    let mut entrywise = 0.0_f64;
    if total <= ENTRYWISE_LIMIT {
        let mut face = lindiff_core::face::direct::Direct::new(p.clone());
        let l = value(&mut face, loss, xs);
        let a_norm = xs[0].norm();
        let g_inf = eager.iter().flatten().map(|x| x.abs().to_f64()).fold(0.0, f64::max);
        let scale = g_inf.max(l.abs() / a_norm).max(f64::MIN_POSITIVE);
        let i = T::from_parts(Re::<T>::zero(), Re::<T>::one());
        let units: &[T] = if T::DTYPE.is_complex() { &[T::one(), i] } else { &[T::one()] };
        for (which, (x, grad)) in xs.iter().zip(&eager).enumerate() {
            for (e, &g_e) in grad.iter().enumerate() {
                for &unit in units {
                    let ds = unit_direction(xs, which, e, unit);
                    let fd = finite_difference(p, loss, xs, &ds, 1e-6 * x.norm().max(1.0));
                    // The component of G along `unit`: Re(conj(G)·unit).
                    let g = (g_e.conj() * unit).re().to_f64();
                    let err = (g - fd).abs() / scale;
                    assert!(err <= 1e-8, "{name}: gradient entry {which}/{e}: {g:e} vs FD {fd:e}");
                    entrywise = entrywise.max(err);
                }
            }
        }
    }
    Errors { forward: forward_err, entrywise, dot }
}

/// ‖A − A_p‖²_F with A_p = `low_rank_approx(A, truncation).a_p`; inputs [A].
/// Its gradient is 2 (A − A_p) (= ∇ Σ_{i>p} s_i²), so the cotangent of
/// A_p is orthogonal to the kept singular vectors: the SVD cotangents the
/// gauge check sees are rounding noise, which must not be read as a
/// violation.
#[derive(Clone, Copy, Debug)]
struct Residual(Truncation);

impl Loss for Residual {
    fn name(&self) -> String {
        format!("‖A − low_rank_approx(A, {:?})‖²", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let a = &xs[0];
        let a_p = f.low_rank_approx(a, self.0)?.0;
        let r = f.binary(lindiff_core::prim::BinaryOp::Sub, a, &a_p)?;
        pairing(f, &r, &r)
    }
}

/// The residual loss with a tie at the top of the kept block, the cut at a
/// group boundary (differentiable), in rotated bases: reverse mode gives a
/// gradient (no report) that agrees with finite differences, entrywise
/// (`verify`).
fn low_rank_residual_at_a_tie<P: TestProvider>(provider: &P) {
    let p = *provider;
    for (m, n) in SHAPES {
        let mut rng = Rng::new(31 + (10 * m + n) as u64);
        let s = [2.0, 2.0, 1.0, 0.5, 0.25];
        let a_real = vec![Input::matrix(&rng.with_spectrum::<f64>(m, n, &s[..m.min(n)]))];
        let a_complex = vec![Input::matrix(&rng.with_spectrum::<C64>(m, n, &s[..m.min(n)]))];
        let real = verify(&p, &Residual(Truncation::Count(2)), &a_real);
        let complex = verify(&p, &Residual(Truncation::Count(2)), &a_complex);
        eprintln!("residual at a tie, {m}×{n}: f64 {real:?}; c64 {complex:?}");
    }
}

/// Inputs [A, W] with A = Q diag(s) Rᴴ (m×n) and a random W.
fn inputs<T: Scalar>(rng: &mut Rng, m: usize, n: usize, s: &[f64]) -> Vec<Input<T>> {
    vec![Input::matrix(&rng.with_spectrum::<T>(m, n, s)), Input::matrix(&rng.matrix::<T>(m, n))]
}

/// Batched inputs: one A per spectrum, and a W per item.
fn batch<T: Scalar>(rng: &mut Rng, m: usize, n: usize, spectra: &[Vec<f64>]) -> Vec<Input<T>> {
    let a: Vec<Dense<T>> = spectra.iter().map(|s| rng.with_spectrum::<T>(m, n, s)).collect();
    let w: Vec<Dense<T>> = spectra.iter().map(|_| rng.matrix::<T>(m, n)).collect();
    vec![Input::batch(&a), Input::batch(&w)]
}

/// Tall, wide and square shapes.
const SHAPES: [(usize, usize); 3] = [(6, 4), (4, 6), (5, 5)];

/// The gaps inside the kept block.
const GAPS: [f64; 5] = [0.0, 1e-14, 1e-12, 1e-10, 1e-9];

/// A tie (or near-tie at `gap`) inside the kept block of 3: s = (2, 2 − gap,
/// 1.5 | 1, 0.5), cut to min(m, n) values. Returns the worst errors.
fn near_tie_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    gap: f64,
    seed: u64,
) -> Errors
where
    Re<T>: Element,
{
    let mut worst = Errors::default();
    for (m, n) in SHAPES {
        let mut rng = Rng::new(seed * 1000 + (10 * m + n) as u64);
        let s = [2.0, 2.0 - gap, 1.5, 1.0, 0.5];
        let xs = inputs::<T>(&mut rng, m, n, &s[..m.min(n)]);
        worst = worst.max(verify(p, &Recon(Route::LowRank(Truncation::Count(3))), &xs));
        // The tie at the top of a kept block of 2: (2, 2 − gap | 1.5, …).
        worst = worst.max(verify(p, &Recon(Route::LowRank(Truncation::Count(2))), &xs));
    }
    worst
}

/// The evidence: ⟨W, A_p⟩ with a tie or near-tie inside the kept
/// block agrees with finite differences at every gap.
fn low_rank_ties_inside_the_kept_block<P: TestProvider>(provider: &P) {
    let p = *provider;
    for (i, gap) in GAPS.into_iter().enumerate() {
        let real = near_tie_suite::<f64, _>(&p, gap, 1 + i as u64);
        let complex = near_tie_suite::<C64, _>(&p, gap, 11 + i as u64);
        eprintln!("low rank, gap {gap:e}: f64 {real:?}; c64 {complex:?}");
    }
}

/// Truncation by tolerance (absolute, relative), a tie inside the
/// discarded block, zero discarded values, nothing discarded.
fn truncation_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Errors
where
    Re<T>: Element,
{
    let mut worst = Errors::default();
    let absolute = Truncation::Tolerance { atol: 1.0, rtol: 0.0 };
    let relative = Truncation::Tolerance { atol: 0.0, rtol: 0.2 };
    let cases: [(&[f64], Truncation); 5] = [
        // s > 1 keeps 3 (a tie among them); 0.6 = 0.2·3 keeps 3 as well.
        (&[3.0, 2.0, 2.0, 0.4, 0.1], absolute),
        (&[3.0, 2.0, 2.0, 0.4, 0.1], relative),
        // A tie inside the discarded block.
        (&[3.0, 3.0, 1.0, 1.0, 0.5], Truncation::Count(2)),
        // Rank-deficient A: the discarded values are 0.
        (&[2.0, 2.0, 1.0, 0.0, 0.0], Truncation::Count(3)),
        // Nothing discarded: a_p = A.
        (&[3.0, 2.0, 2.0, 1.0, 0.5], Truncation::default()),
    ];
    for (m, n) in SHAPES {
        let mut rng = Rng::new(seed * 100 + (10 * m + n) as u64);
        for (s, keep) in cases {
            let xs = inputs::<T>(&mut rng, m, n, &s[..m.min(n)]);
            worst = worst.max(verify(p, &Recon(Route::LowRank(keep)), &xs));
        }
    }
    worst
}

/// `Truncation::Tolerance` and the edge cases of the kept set.
fn low_rank_truncations<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = truncation_suite::<f64, _>(&p, 21);
    let complex = truncation_suite::<C64, _>(&p, 22);
    eprintln!("low rank truncations: f64 {real:?}; c64 {complex:?}");
}

/// A batch of three whose items keep 3, 4 and 1 values (atol = 1): the
/// mask is per item.
fn batched_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Errors
where
    Re<T>: Element,
{
    let mut worst = Errors::default();
    let spectra = [vec![3.0, 2.0, 2.0, 0.5], vec![3.0, 3.0, 1.5, 1.2], vec![2.0, 0.9, 0.8, 0.1]];
    let keep = Truncation::Tolerance { atol: 1.0, rtol: 0.0 };
    for (m, n) in [(5, 4), (4, 5)] {
        let mut rng = Rng::new(seed * 100 + (10 * m + n) as u64);
        let xs = batch::<T>(&mut rng, m, n, &spectra);
        worst = worst.max(verify(p, &Recon(Route::LowRank(keep)), &xs));
        let xs = batch::<T>(&mut rng, m, n, &spectra);
        worst = worst.max(verify(p, &Recon(Route::Polar), &xs));
    }
    worst
}

/// Batched low-rank approximation (different ranks per item) and polar.
fn batched<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = batched_suite::<f64, _>(&p, 31);
    let complex = batched_suite::<C64, _>(&p, 32);
    eprintln!("batched: f64 {real:?}; c64 {complex:?}");
}

/// The polar factor with a tie s₁ = s₂ and with distinct values: tall,
/// square and wide.
fn polar_suite<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64) -> Errors
where
    Re<T>: Element,
{
    let mut worst = Errors::default();
    for (m, n) in [(5, 3), (3, 3), (3, 5), (1, 3), (4, 1)] {
        let mut rng = Rng::new(seed * 100 + (10 * m + n) as u64);
        for s in [[2.0, 2.0, 1.0], [3.0, 1.5, 0.7], [1.0, 1.0, 1.0]] {
            let xs = inputs::<T>(&mut rng, m, n, &s[..m.min(n)]);
            worst = worst.max(verify(p, &Recon(Route::Polar), &xs));
        }
    }
    worst
}

/// Polar factor: exact at ties (only sums of singular values appear).
fn polar_with_ties<P: TestProvider>(provider: &P) {
    let p = *provider;
    let real = polar_suite::<f64, _>(&p, 41);
    let complex = polar_suite::<C64, _>(&p, 42);
    eprintln!("polar: f64 {real:?}; c64 {complex:?}");
}

/// |dL − dL_fd| / max(|dL|, |L|) along one direction for `route` (the
/// error text when the rule reports one).
fn directional_error<T: Scalar + Element, P: TestProvider>(
    route: Route,
    xs: &[Input<T>],
    seed: u64,
) -> core::result::Result<f64, String>
where
    Re<T>: Element,
{
    let p = P::default();
    let loss = Recon(route);
    let mut rng = Rng::new(seed);
    let ds: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
    let mut face = lindiff_core::face::direct::Direct::new(p);
    let l = value(&mut face, &loss, xs);
    let fd = finite_difference(&p, &loss, xs, &ds, 1e-6);
    let d = forward(p, &loss, xs, &ds).map_err(|e| e.to_string())?;
    Ok((d - fd).abs() / d.abs().max(l.abs()))
}

/// The plain route (svd, then slices) against `low_rank_approx` on
/// ⟨W, U_p diag(s_p) V_pᴴ⟩ with a near-tie inside the kept block:
/// the plain route divides by the gap inside the group and loses
/// precision (1.8e-3 at a gap of 1e-13), the op does not.
fn plain_route_suite<T: Scalar + Element, P: TestProvider>(seed: u64) -> Vec<(f64, String, f64)>
where
    Re<T>: Element,
{
    let mut rows = Vec::new();
    for gap in [0.0, 1e-15, 1e-13, 1e-12, 1e-10, 1e-8] {
        let mut rng = Rng::new(seed);
        let xs = inputs::<T>(&mut rng, 5, 4, &[2.0, 2.0 - gap, 1.0, 0.5]);
        let plain = match directional_error::<T, P>(Route::SvdSlices(2), &xs, seed) {
            Ok(e) => format!("{e:.1e}"),
            Err(e) => format!("error: {e}"),
        };
        let op = directional_error::<T, P>(Route::LowRank(Truncation::Count(2)), &xs, seed).unwrap();
        assert!(op <= 1e-8, "low_rank_approx at gap {gap:e}: error {op:e}");
        rows.push((gap, plain, op));
    }
    rows
}

/// The comparison the issue cites, printed for both dtypes.
fn plain_svd_route_loses_precision_at_near_ties<P: TestProvider>(_provider: &P) {
    for (label, rows) in [("f64", plain_route_suite::<f64, P>(51)), ("c64", plain_route_suite::<C64, P>(52))]
    {
        for (gap, plain, op) in rows {
            eprintln!("{label} gap {gap:e}: svd + slices {plain}, low_rank_approx {op:.1e}");
        }
    }
}

/// A tie across the cut (s_p = s_{p+1}) has no derivative: forward mode
/// gives a finite tangent (the coupling across the tie is cut off; no
/// cotangent to check), reverse mode reports it on both faces. A small gap
/// across the cut is differentiable and exact.
fn tie_across_the_cut_is_reported<P: TestProvider>(provider: &P) {
    let p = *provider;
    for (m, n) in SHAPES {
        let mut rng = Rng::new((10 * m + n) as u64);
        let s = [2.0, 1.0, 1.0, 0.5, 0.25];
        let loss = Recon(Route::LowRank(Truncation::Count(2)));
        let xs = inputs::<C64>(&mut rng, m, n, &s[..m.min(n)]);
        let ds: Vec<Input<C64>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        let d = forward(p, &loss, &xs, &ds).unwrap();
        assert!(d.is_finite(), "tie across the cut: {d}");
        assert_reported(&p, &loss, &xs, ("low_rank_approx", "a_p", "tied singular values"));
        // A gap of 0.05 across the cut: differentiable, coupling O(1/gap).
        let s = [2.0, 1.05, 1.0, 0.5, 0.25];
        let xs = inputs::<f64>(&mut rng, m, n, &s[..m.min(n)]);
        verify(&p, &loss, &xs);
    }
}

lindiff_tests::providers!(
    low_rank_residual_at_a_tie,
    low_rank_ties_inside_the_kept_block,
    low_rank_truncations,
    batched,
    polar_with_ties,
    tie_across_the_cut_is_reported,
    plain_svd_route_loses_precision_at_near_ties
);
