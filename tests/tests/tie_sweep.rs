//! Spectral gradients at near ties: right or an error, never silently
//! wrong. Four losses written through the decompositions — each with a
//! pair of singular values or eigenvalues a gap `g` apart — are
//! differentiated by lindiff-cpu and compared with closed forms evaluated
//! test-side from the exact construction `A = U diag(s) Vᴴ` (or
//! `Q diag(λ) Qᴴ`), none of which divides by `g`:
//!
//! - **reconstruction** `Re⟨W, U_k diag(s_k) V_kᴴ⟩` through `svd` (the tie
//!   inside the kept block, a gap of 1 to the rest): `A_k = P A` with `P`
//!   the projector onto the top-k left singular vectors, so
//!   `∇ = P W + ∇_P(Herm(W Aᴴ))`;
//! - **projector** `Re⟨W, U_k U_kᴴ⟩` (W Hermitian): the derivative of the
//!   spectral projector of `A Aᴴ` (Daleckii–Krein over the kept/discarded
//!   pairs only), `∇_P(W) = (C + Cᴴ) A` with
//!   `C = 2 Σ_{i∈K, j∉K} u_j (u_jᴴ W u_i) u_iᴴ / (s_i² − s_j²)`;
//! - **polar** `Re⟨W, U Vᴴ⟩` through `svd`: `∇ = U (K − Kᴴ) Vᴴ` with
//!   `K_ij = (Uᴴ W V)_ij / (s_i + s_j)` (Higham's polar derivative);
//! - **f(A) = exp** `Re⟨W, Q exp(Λ) Qᴴ⟩` through `eigh` (W Hermitian):
//!   Daleckii–Krein, `∇ = Q (F ∘ QᴴWQ) Qᴴ` with the divided differences
//!   `F_ij = e^{λ_j} expm1(λ_i − λ_j)/(λ_i − λ_j)` (`e^{λ_i}` on ties),
//!   folded onto the lower triangle eigh reads.
//!
//! Gaps 0 and 1e-16 … 1e-4 (a point per half decade), f64 and c64. Each
//! point must be within 1e-7 relative (Frobenius) of the closed form, or a
//! typed `NearTie`/`NotDifferentiable` error. The projector and the polar
//! factor do not depend on the tied values; the reconstruction and f(A)
//! do, and below some gap their rules cannot be evaluated to 1e-7 from the
//! cotangents (an absolute rounding of ε·‖g‖ divided by the gap), so there
//! they must be errors that suggest the gauge-invariant op. `cargo xtask
//! sweep-ties` prints the table.

use lindiff_core::{Element, Scalar};
use lindiff_cpu::prelude::*;
use lindiff_tests::dense::{Dense, Re, Rng};

const N: usize = 4;
/// Kept block of the reconstruction and projector losses.
const K: usize = 3;
const TOLERANCE: f64 = 1e-7;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Loss {
    Reconstruction,
    Projector,
    Polar,
    ExpEigh,
}

const LOSSES: [Loss; 4] = [Loss::Reconstruction, Loss::Projector, Loss::Polar, Loss::ExpEigh];

/// The spectrum for `gap`: singular values with the tied pair (1, 2) inside
/// the kept block, or eigenvalues of both signs with the tied pair (1, 2).
fn spectrum(loss: Loss, gap: f64) -> [f64; N] {
    match loss {
        Loss::ExpEigh => [1.5, 0.3 + gap, 0.3, -0.8],
        _ => [3.0, 2.0 + gap, 2.0, 0.7],
    }
}

fn gaps() -> Vec<f64> {
    let mut all = vec![0.0];
    all.extend((0..=24).map(|i| 10f64.powf(-16.0 + 0.5 * f64::from(i))));
    all
}

fn real<T: Scalar>(x: f64) -> T {
    T::from_f64(x)
}

fn add<T: Scalar>(a: &Dense<T>, b: &Dense<T>) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |i, j| a[(i, j)] + b[(i, j)])
}

fn hermitian_part<T: Scalar>(a: &Dense<T>) -> Dense<T> {
    let h = add(a, &a.adjoint());
    Dense::from_fn(a.rows, a.cols, |i, j| h[(i, j)] * real::<T>(0.5))
}

fn column<T: Scalar>(a: &Dense<T>, j: usize) -> Dense<T> {
    a.cols_range(j, 1)
}

/// A gradient `g` with respect to a Hermitian matrix as eigh takes it:
/// from its lower triangle, the imaginary part of the diagonal ignored —
/// `g_ij + conj(g_ji)` below the diagonal, `Re g_ii` on it, 0 above.
fn lower_triangle<T: Scalar>(g: &Dense<T>) -> Dense<T> {
    Dense::from_fn(N, N, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => g[(i, j)] + g[(j, i)].conj(),
        std::cmp::Ordering::Equal => T::from_real(g[(i, i)].re()),
        std::cmp::Ordering::Less => T::zero(),
    })
}

/// `∇_A Re tr(W P)` for the projector `P` onto the first `K` columns of
/// `u` (the left singular vectors of `a`, values `s`), `W` Hermitian.
fn projector_grad<T: Scalar>(u: &Dense<T>, s: &[f64], a: &Dense<T>, w: &Dense<T>) -> Dense<T> {
    let mut c = Dense::<T>::zeros(N, N);
    for i in 0..K {
        for j in K..N {
            let (ui, uj) = (column(u, i), column(u, j));
            let coupling = uj.adjoint().matmul(w).matmul(&ui)[(0, 0)];
            let factor = real::<T>(2.0 / (s[i] * s[i] - s[j] * s[j]));
            c = add(&c, &Dense::from_fn(N, N, |r, q| uj[(r, 0)] * coupling * factor * ui[(q, 0)].conj()));
        }
    }
    add(&c, &c.adjoint()).matmul(a)
}

/// The closed-form gradient of `loss` at the construction (`u`, `s`, `v`)
/// with weights `w`.
fn reference<T: Scalar>(loss: Loss, u: &Dense<T>, s: &[f64], v: &Dense<T>, w: &Dense<T>) -> Dense<T> {
    let sr: Vec<Re<T>> = s.iter().map(|&x| <Re<T> as Scalar>::from_f64(x)).collect();
    let a = u.scale_cols(&sr).matmul(&v.adjoint());
    match loss {
        Loss::Projector => projector_grad(u, s, &a, w),
        Loss::Reconstruction => {
            let uk = u.cols_range(0, K);
            let p = uk.matmul(&uk.adjoint());
            let t = hermitian_part(&w.matmul(&a.adjoint()));
            add(&p.matmul(w), &projector_grad(u, s, &a, &t))
        }
        Loss::Polar => {
            let z = u.adjoint().matmul(w).matmul(v);
            let k = Dense::from_fn(N, N, |i, j| z[(i, j)] * real::<T>(1.0 / (s[i] + s[j])));
            u.matmul(&k.sub(&k.adjoint())).matmul(&v.adjoint())
        }
        Loss::ExpEigh => {
            let b = u.adjoint().matmul(w).matmul(u);
            let f = |i: usize, j: usize| {
                let d = s[i] - s[j];
                if d == 0.0 {
                    s[i].exp()
                } else {
                    s[j].exp() * d.exp_m1() / d
                }
            };
            let fb = Dense::from_fn(N, N, |i, j| b[(i, j)] * real::<T>(f(i, j)));
            lower_triangle(&u.matmul(&fb).matmul(&u.adjoint()))
        }
    }
}

/// lindiff's gradient of `loss` at `a` with weights `w`.
fn lindiff_grad<T: Scalar + Element>(loss: Loss, a: &Dense<T>, w: &Dense<T>) -> Result<Vec<T>> {
    let mut la = Direct::new(Cpu::new());
    let at = la.tensor(&[N, N], &a.data)?;
    let wt = la.tensor(&[N, N], &w.data)?;
    let out = la.value_and_grad([&at, &wt], |[a, w]| match loss {
        Loss::Reconstruction => {
            let f = a.svd();
            let r = f.u.cols(0..K).scale_cols(&f.s.elems(0..K)).matmul(&f.vh.rows(0..K));
            w.dot(&r).re()
        }
        Loss::Projector => {
            let u = a.svd().u.cols(0..K);
            w.dot(&u.matmul(&u.h())).re()
        }
        Loss::Polar => {
            let f = a.svd();
            w.dot(&f.u.matmul(&f.vh)).re()
        }
        Loss::ExpEigh => {
            let e = a.eigh();
            w.dot(&e.v.scale_cols(&e.w.exp()).matmul(&e.v.h())).re()
        }
    })?;
    out.grads[0].to_vec::<T>()
}

/// One point: the relative error, or the error's kind.
fn point<T: Scalar + Element>(loss: Loss, gap: f64, seed: u64) -> std::result::Result<f64, Error> {
    let mut rng = Rng::new(seed);
    let s = spectrum(loss, gap);
    let u = rng.unitary::<T>(N);
    let (v, w) = match loss {
        Loss::ExpEigh => (u.clone(), hermitian_part(&rng.matrix::<T>(N, N))),
        Loss::Projector => (rng.unitary::<T>(N), hermitian_part(&rng.matrix::<T>(N, N))),
        _ => (rng.unitary::<T>(N), rng.matrix::<T>(N, N)),
    };
    let sr: Vec<Re<T>> = s.iter().map(|&x| <Re<T> as Scalar>::from_f64(x)).collect();
    let mut a = u.scale_cols(&sr).matmul(&v.adjoint());
    if loss == Loss::ExpEigh {
        a = hermitian_part(&a);
    }
    let want = reference(loss, &u, &s, &v, &w);
    let got = Dense::from_col_major(N, N, lindiff_grad(loss, &a, &w)?);
    Ok(got.sub(&want).norm() / want.norm())
}

/// Runs the sweep for dtype `T`, printing one row per gap; returns the
/// points that are neither within [`TOLERANCE`] nor a `NearTie` error
/// below a gap of 1e-6 (every loss here is differentiable, so
/// `NotDifferentiable` is always wrong, and above 1e-6 an answer is due).
fn sweep<T: Scalar + Element>(dtype: &str) -> Vec<String> {
    println!("\n{dtype}: relative error of the gradient (or the error), n = {N}");
    println!(
        "{:>9} | {:>15} | {:>15} | {:>15} | {:>15}",
        "gap", "reconstruction", "projector", "polar", "exp(A), eigh"
    );
    let mut bad = Vec::new();
    for gap in gaps() {
        let mut row = format!("{gap:>9.1e}");
        for (l, loss) in LOSSES.into_iter().enumerate() {
            let cell = match point::<T>(loss, gap, 11 + l as u64) {
                Ok(e) => {
                    if e.is_nan() || e > TOLERANCE {
                        bad.push(format!("{dtype} {loss:?} gap {gap:.1e}: relative error {e:.2e}"));
                    }
                    format!("{e:.1e}")
                }
                Err(e @ Error::NearTie { .. }) if gap < 1e-6 => e.kind().to_string(),
                Err(e) => {
                    bad.push(format!("{dtype} {loss:?} gap {gap:.1e}: unexpected error {e}"));
                    e.kind().to_string()
                }
            };
            row.push_str(&format!(" | {cell:>15}"));
        }
        println!("{row}");
    }
    bad
}

#[test]
fn near_ties_are_right_or_an_error() {
    let mut bad = sweep::<f64>("f64");
    bad.extend(sweep::<Complex64>("c64"));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The losses that do not depend on the tied values (the projector onto
/// the whole kept block, the polar factor) are never `NotDifferentiable`,
/// and at an exact tie (and within the rule's tie cutoff) they are
/// answered, exactly; in between, a `NearTie` error is allowed only where
/// the rounding estimate cannot vouch for 1e-8.
#[test]
fn gauge_invariant_losses_are_never_refused_as_not_differentiable() {
    for gap in gaps() {
        for loss in [Loss::Projector, Loss::Polar] {
            for r in [point::<f64>(loss, gap, 5), point::<Complex64>(loss, gap, 6)] {
                match r {
                    Ok(e) => assert!(e <= TOLERANCE, "{loss:?} gap {gap:.1e}: {e:.2e}"),
                    Err(e @ Error::NearTie { .. }) if gap > 1e-14 => {
                        assert!(e.to_string().contains("estimated relative error"), "{e}")
                    }
                    Err(e) => panic!("{loss:?} gap {gap:.1e}: {e}"),
                }
            }
        }
    }
}
