//! Reporting instead of guessing (`docs/ad-rules.md#gauge-check`): reverse
//! mode passes SVD and eigh cotangents through a gauge check, so a loss
//! that is not differentiable at the point is an error
//! naming op and output on both faces, while differentiable losses at ties
//! and zeros get exact gradients.
//!
//! Differentiable cases go through the harness (`check`: forward mode vs
//! finite differences) and through reverse mode here: eager and traced
//! gradients bit-identical and equal, entry by entry, to central finite
//! differences (`docs/ad-rules.md#how-the-rules-are-tested`:
//! ‖g − g_fd‖∞ ≤ 1e-8·max(‖g‖∞, |L|/‖x‖)).
//! * A = Q[:, :3] diag(s) Rᵀ (4×3, fixed Householder Q, R): P₂ = ⟨W, U₂U₂ᵀ⟩
//!   at s = (3,2,1), (2,2,1), (2,1,0) and the near-tie (2, 2 − 7e-16,
//!   1 + 7e-16); P₁ at (3,2,1) and (2,1,0); c64 and a batch too.
//! * 4×3 diag(2, 1, 0), P₂ with the seed's W: the gradient is the
//!   exact (I − P₂)(W + Wᵀ)U₂S₂⁻¹V₂ᵀ = [0, 0, −0.6, 0.7, 0, 0, 1.4, −0.4,
//!   0, 0, 0, 0].
//! * eigh with eigenvalues (1, 1, 2, 3, 4): the projector onto the lowest
//!   two agrees with FD (f64, c64).
//! * No false positives: Σ s² and s₁ + s₂ at a tie, Σ s² at a zero value,
//!   the projector onto a whole group (U and V sides, tall and wide), Σ w²
//!   and w₁ + w₂ at an eigenvalue tie, and Re U[r, 0] of a complex matrix
//!   at the pivot row r (made real by the canonical phase, so it is
//!   |U[r, 0]|: gauge-invariant).
//!
//! Reported (`Error::NotDifferentiable`, on the eager and the traced face):
//! * P₁ at the tie (2, 2, 1) and at the near-tie (its gap is inside the tie
//!   tolerance): svd/u, tied basis; its V-side twin on a wide matrix: svd/vh;
//! * U[0, 0] at a tie (real): svd/u;
//! * Re U[0, 0] of a complex matrix with distinct values (row 0 not the
//!   pivot): svd/u, complex phase;
//! * the nuclear norm Σ s at a zero singular value, through `svd_vals`,
//!   `svd` and `norm(Nuc)`: svd/s, a kink;
//! * the projector onto the singular vector of a zero value (4×3): svd/u,
//!   null space;
//! * s₁ alone at a tie (not a symmetric function of the tied values): svd/s;
//! * eigh: the projector onto the first eigenvector of the tied pair:
//!   eigh/v; w₁ alone at the tie: eigh/w;
//! * a batch whose second matrix splits a tie;
//! * all of it scale-free: P₂ exact and P₁, the nuclear norm reported at
//!   ‖A‖ ~ 1e−150 and 1e150.

use lindiff_core::face::direct::Direct;
use lindiff_core::{Element, Host, Ops, Provider, Scalar};
use lindiff_tests::ad::{check_with, eager_grad, CheckOptions, Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::spectral::{assert_reported, EighLoss, SvdLoss, Via};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;

/// The seed's near-tie: a gap of 7e-16, inside the tie tolerance.
const NEAR_TIE: [f64; 3] = [2.0, 1.9999999999999993, 1.0000000000000007];

/// The seed's 4×3 A = Q[:, :3] diag(s) Rᵀ, Q and R fixed products of
/// Householder reflectors (the same for every s).
fn seed_matrix<T: Scalar>(s: &[f64]) -> Dense<T> {
    Rng::new(0x5eed).with_spectrum(4, 3, s)
}

/// A fixed weight matrix (r×r).
fn weight<T: Scalar>(r: usize, seed: u64) -> Input<T> {
    Input::matrix(&Rng::new(seed).matrix::<T>(r, r))
}

/// Reverse mode of a differentiable loss through the harness's `check`
/// (forward mode vs FD, eager and traced bit-identical, entrywise FD, the
/// dot-product test): the eager gradient and its entrywise error vs FD.
fn agrees<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    p: &P,
    loss: &L,
    xs: &[Input<T>],
) -> (Vec<Vec<T>>, f64)
where
    Re<T>: Element,
{
    let report = check_with(p, loss, xs, CheckOptions::default().at_ties());
    let g = eager_grad(p.clone(), loss, xs).unwrap_or_else(|e| panic!("{}: eager: {e}", loss.name()));
    (g, report.grad_vs_fd)
}

const TIE: (&str, &str, &str) = ("svd", "u", "tied singular values");

/// The seed's spectra with P₂ and P₁ (a tie, a near-tie and a zero).
fn seed_spectra<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P) -> f64
where
    Re<T>: Element,
{
    let mut worst = 0.0_f64;
    let w = weight::<T>(4, 11);
    let smooth: [&[f64]; 4] = [&[3.0, 2.0, 1.0], &[2.0, 2.0, 1.0], &[2.0, 1.0, 0.0], &NEAR_TIE];
    for s in smooth {
        let xs = vec![Input::matrix(&seed_matrix::<T>(s)), w.clone()];
        worst = worst.max(agrees(p, &SvdLoss::ProjU(2), &xs).1);
    }
    for s in [[3.0, 2.0, 1.0], [2.0, 1.0, 0.0]] {
        let xs = vec![Input::matrix(&seed_matrix::<T>(&s)), w.clone()];
        worst = worst.max(agrees(p, &SvdLoss::ProjU(1), &xs).1);
    }
    for s in [[2.0, 2.0, 1.0], NEAR_TIE] {
        let xs = vec![Input::matrix(&seed_matrix::<T>(&s)), w.clone()];
        assert_reported(p, &SvdLoss::ProjU(1), &xs, TIE);
    }
    worst
}

/// P₂ and P₁ on the seed's 4×3 matrices: FD agreement where smooth,
/// reported where P₁ splits the (near-)tie; f64 and c64.
fn seed_projectors<P: TestProvider>(provider: &P) {
    let p = *provider;
    let worst = seed_spectra::<f64, _>(&p).max(seed_spectra::<C64, _>(&p));
    println!("seed projectors: worst reverse-mode error vs FD {worst:.1e}");
}

/// 4×3 diag(2, 1, 0), P₂ with a W whose symmetric part M has
/// M[2,0] = −1.2, M[3,0] = 1.4, M[2,1] = 1.4, M[3,1] = −0.4: the gradient is
/// exactly (I − P₂) M U₂ S₂⁻¹ V₂ᵀ = the seed's numbers.
fn diagonal_with_a_zero_value_matches_the_exact_gradient<P: TestProvider>(provider: &P) {
    let p = *provider;
    let a = Dense::<f64>::from_fn(4, 3, |i, j| if i == j { [2.0, 1.0, 0.0][i] } else { 0.0 });
    let mut w = Dense::<f64>::zeros(4, 4);
    for (i, j, x) in
        [(2, 0, -1.2), (3, 0, 1.4), (2, 1, 1.4), (3, 1, -0.4), (0, 0, 0.3), (1, 0, 0.5), (3, 3, 0.9)]
    {
        w[(i, j)] = x;
    }
    let xs = vec![Input::matrix(&a), Input::matrix(&w)];
    let (g, worst) = agrees(&p, &SvdLoss::ProjU(2), &xs);
    let expected = [0.0, 0.0, -0.6, 0.7, 0.0, 0.0, 1.4, -0.4, 0.0, 0.0, 0.0, 0.0];
    for (got, want) in g[0].iter().zip(expected) {
        assert!((got - want).abs() <= 1e-14, "gradient {:?} vs {expected:?}", g[0]);
    }
    println!("diag(2, 1, 0) P₂: {:?} (FD error {worst:.1e})", g[0]);
}

/// U[0, 0] at a tie (real) and a projector that splits the tie on the V
/// side (wide): reported; the projector onto the whole group on either
/// side of a tall and a wide matrix: exact.
fn ties<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P) -> f64
where
    Re<T>: Element,
{
    let mut worst = 0.0_f64;
    let tie = [2.0, 2.0, 1.0];
    let tall = Input::matrix(&Rng::new(3).with_spectrum::<T>(5, 3, &tie));
    let wide = Input::matrix(&Rng::new(4).with_spectrum::<T>(3, 5, &tie));
    for (a, m, n) in [(&tall, 5, 3), (&wide, 3, 5)] {
        let xs = |r| vec![a.clone(), weight::<T>(r, 12)];
        worst = worst.max(agrees(p, &SvdLoss::ProjU(2), &xs(m)).1);
        worst = worst.max(agrees(p, &SvdLoss::ProjV(2), &xs(n)).1);
        assert_reported(p, &SvdLoss::ProjU(1), &xs(m), TIE);
        assert_reported(p, &SvdLoss::ProjV(1), &xs(n), ("svd", "vh", "tied singular values"));
    }
    if !T::DTYPE.is_complex() {
        assert_reported(p, &SvdLoss::Entry(0), std::slice::from_ref(&tall), TIE);
    }
    worst
}

fn ties_tall_and_wide<P: TestProvider>(provider: &P) {
    let p = *provider;
    let worst = ties::<f64, _>(&p).max(ties::<C64, _>(&p));
    println!("ties: worst reverse-mode error vs FD {worst:.1e}");
}

/// Functions of the values: symmetric on a tied group (Σ s², s₁ + s₂) and
/// Σ s² at a zero value are exact; the nuclear norm at a zero
/// value (a kink) and s₁ alone at a tie are reported.
fn values<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P) -> f64
where
    Re<T>: Element,
{
    let mut worst = 0.0_f64;
    let tied = Input::matrix(&seed_matrix::<T>(&[2.0, 2.0, 1.0]));
    let zero = Input::matrix(&seed_matrix::<T>(&[2.0, 1.0, 0.0]));
    worst = worst.max(agrees(p, &SvdLoss::SumSquares, std::slice::from_ref(&tied)).1);
    worst = worst.max(agrees(p, &SvdLoss::SumSquares, std::slice::from_ref(&zero)).1);
    worst = worst.max(agrees(p, &SvdLoss::Top(2), std::slice::from_ref(&tied)).1);
    for via in [Via::Vals, Via::Thin, Via::NormNuc] {
        assert_reported(p, &SvdLoss::Nuclear(via), std::slice::from_ref(&zero), ("svd", "s", "kink"));
        // Away from the zero the nuclear norm is smooth.
        worst = worst.max(agrees(p, &SvdLoss::Nuclear(via), std::slice::from_ref(&tied)).1);
    }
    assert_reported(p, &SvdLoss::Top(1), std::slice::from_ref(&tied), ("svd", "s", "tied singular values"));
    worst
}

fn values_symmetric_exact_kinks_reported<P: TestProvider>(provider: &P) {
    let p = *provider;
    let worst = values::<f64, _>(&p).max(values::<C64, _>(&p));
    println!("values: worst reverse-mode error vs FD {worst:.1e}");
}

/// The projector onto the singular vector of a zero value (4×3, whose
/// left null space is two-dimensional): reported.
fn null_space_vector_is_reported<P: TestProvider>(provider: &P) {
    let p = *provider;
    let xs = vec![Input::matrix(&seed_matrix::<f64>(&[2.0, 1.0, 0.0])), weight::<f64>(4, 13)];
    assert_reported(&p, &SvdLoss::ColU(2), &xs, ("svd", "u", "null space"));
    let xs = vec![Input::matrix(&seed_matrix::<C64>(&[2.0, 1.0, 0.0])), weight::<C64>(4, 13)];
    assert_reported(&p, &SvdLoss::ColU(2), &xs, ("svd", "u", "null space"));
}

/// A complex 4×3 matrix with distinct singular values whose first left
/// singular vector has its largest entry (the pivot the canonical phase
/// makes real) not in row 0, and that pivot row.
fn phase_case<P: TestProvider>(p: &P) -> (Dense<C64>, usize) {
    let mut a = seed_matrix::<C64>(&[3.0, 2.0, 1.0]);
    let pivot = |a: &Dense<C64>| {
        let mut face = Direct::new(*p);
        let t = face.tensor(&[4, 3], &a.data).unwrap();
        let u = face.svd(&t).unwrap().u.to_vec::<C64>().unwrap();
        (0..4).fold(0, |best, r| if u[r].norm() > u[best].norm() { r } else { best })
    };
    if pivot(&a) == 0 {
        // Swap rows 0 and 1: U's rows swap with them.
        for j in 0..3 {
            let (x, y) = (a[(0, j)], a[(1, j)]);
            a[(0, j)] = y;
            a[(1, j)] = x;
        }
    }
    let r = pivot(&a);
    assert_ne!(r, 0, "row 0 must not be the pivot");
    (a, r)
}

/// Re U[0, 0] of a complex matrix depends on the phase of u₁: reported.
/// Re U[r, 0] at the pivot row r is |U[r, 0]| (the canonical phase makes
/// it real and positive): gauge-invariant, exact.
fn complex_phase<P: TestProvider>(provider: &P) {
    let p = *provider;
    let (a, r) = phase_case(&p);
    let xs = vec![Input::matrix(&a)];
    assert_reported(&p, &SvdLoss::Entry(0), &xs, ("svd", "u", "complex phase"));
    let (_, worst) = agrees(&p, &SvdLoss::Entry(r), &xs);
    println!("Re U[{r}, 0] at the pivot row: reverse-mode error vs FD {worst:.1e}");
}

/// A = Q diag(1, 1, 2, 3, 4) Qᴴ: the projector onto the lowest two, Σ w²
/// and w₁ + w₂ are exact; the projector onto the first eigenvector alone and w₁
/// alone split the tie: reported.
fn eigh_tie<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P) -> f64
where
    Re<T>: Element,
{
    let q = Rng::new(21).unitary::<T>(5);
    let w: Vec<Re<T>> = [1.0, 1.0, 2.0, 3.0, 4.0].iter().map(|&x| Re::<T>::from_f64(x)).collect();
    let a = Input::matrix(&q.scale_cols(&w).matmul(&q.adjoint()));
    let xs = vec![a.clone(), weight::<T>(5, 14)];
    let mut worst = agrees(p, &EighLoss::Proj(0, 2), &xs).1;
    worst = worst.max(agrees(p, &EighLoss::SumSquares, std::slice::from_ref(&a)).1);
    assert_reported(p, &EighLoss::Proj(0, 1), &xs, ("eigh", "v", "tied eigenvalues"));
    worst = worst.max(agrees(p, &EighLoss::Bottom(2), std::slice::from_ref(&a)).1);
    assert_reported(p, &EighLoss::Bottom(1), &[a], ("eigh", "w", "tied eigenvalues"));
    worst
}

fn eigh_lowest_two_exact_first_alone_reported<P: TestProvider>(provider: &P) {
    let p = *provider;
    let worst = eigh_tie::<f64, _>(&p).max(eigh_tie::<C64, _>(&p));
    println!("eigh (1, 1, 2, 3, 4): worst reverse-mode error vs FD {worst:.1e}");
}

/// A batch of two 4×3 matrices, s = (3, 2, 1) and (2, 2, 1): P₂ is exact
/// on both; P₁ splits the second one's tie: reported for the whole batch.
fn batched<P: TestProvider>(provider: &P) {
    let p = *provider;
    let mats = [seed_matrix::<f64>(&[3.0, 2.0, 1.0]), seed_matrix::<f64>(&[2.0, 2.0, 1.0])];
    let w = Rng::new(15).matrix::<f64>(4, 4);
    let xs = vec![Input::batch(&mats), Input::batch(&[w.clone(), w])];
    let (_, worst) = agrees(&p, &SvdLoss::ProjU(2), &xs);
    assert_reported(&p, &SvdLoss::ProjU(1), &xs, TIE);
    println!("batched P₂: reverse-mode error vs FD {worst:.1e}");
}

/// The check is scale-free: at ‖A‖ ~ 1e±150, P₂ at the tie agrees with FD
/// and P₁ there, the nuclear norm at a zero value, are reported.
fn extreme_scales<P: TestProvider>(provider: &P) {
    let p = *provider;
    for scale in [1e-150, 1e150] {
        let tie: Vec<f64> = [2.0, 2.0, 1.0].iter().map(|x| x * scale).collect();
        let zero: Vec<f64> = [2.0, 1.0, 0.0].iter().map(|x| x * scale).collect();
        let xs = vec![Input::matrix(&seed_matrix::<f64>(&tie)), weight::<f64>(4, 16)];
        let (_, worst) = agrees(&p, &SvdLoss::ProjU(2), &xs);
        assert_reported(&p, &SvdLoss::ProjU(1), &xs, TIE);
        let a = Input::matrix(&seed_matrix::<f64>(&zero));
        assert_reported(&p, &SvdLoss::Nuclear(Via::Vals), std::slice::from_ref(&a), ("svd", "s", "kink"));
        println!("scale {scale:e}: P₂ reverse-mode error vs FD {worst:.1e}");
    }
}

lindiff_tests::providers!(
    seed_projectors,
    diagonal_with_a_zero_value_matches_the_exact_gradient,
    ties_tall_and_wide,
    values_symmetric_exact_kinks_reported,
    null_space_vector_is_reported,
    complex_phase,
    eigh_lowest_two_exact_first_alone_reported,
    batched,
    extreme_scales,
);
