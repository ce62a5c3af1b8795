//! What the spectral rules answer at ties, through the user API: the joint
//! gauge check (a gauge-invariant loss through svd or eigh is
//! differentiable at an exact tie; one that splits a tied group is not),
//! eig at a semisimple repeated eigenvalue and at a defective one, the thin
//! part of a full SVD, and the error texts a user reads.

use lindiff_core::Element;
use lindiff_cpu::prelude::*;
use lindiff_tests::dense::{Dense, Rng};

/// A handle of the eager face the tests differentiate with.
type V<'a> = Var<Eager<&'a mut Direct<Cpu>>>;
/// A real loss of one input.
type Loss<'l> = &'l dyn for<'a> Fn(V<'a>) -> V<'a>;

/// `a` as a tensor.
fn tensor<T: Element + lindiff_core::Scalar>(la: &mut Direct<Cpu>, a: &Dense<T>) -> Tensor {
    la.tensor(&[a.rows, a.cols], &a.data).unwrap()
}

/// The loss (forward only, no gradient) at `a`.
fn value(la: &mut Direct<Cpu>, a: &Dense<f64>, loss: Loss<'_>) -> f64 {
    let t = tensor(la, a);
    la.value_and_grad([&t], |[x]| loss(x.constant(&t))).unwrap().value
}

/// Five-point central differences of a real loss of one real input (step
/// 1e-3, truncation error O(h⁴), so the perturbation keeps a tie split by
/// about 1e-3 — away from the near-tie band), against `grad` within 1e-8
/// of its largest entry.
fn matches_finite_differences(la: &mut Direct<Cpu>, a: &Dense<f64>, grad: &[f64], loss: Loss<'_>) {
    let h = 1e-3;
    let scale = grad.iter().fold(1e-3f64, |m, g| m.max(g.abs()));
    for (i, want) in grad.iter().enumerate() {
        let mut at = |step: f64| {
            let mut moved = a.clone();
            moved.data[i] += step;
            value(la, &moved, loss)
        };
        let fd = (8.0 * (at(h) - at(-h)) - (at(2.0 * h) - at(-2.0 * h))) / (12.0 * h);
        assert!((fd - want).abs() <= 1e-8 * scale, "entry {i}: {want} vs {fd}");
    }
}

/// A 5×4 matrix with singular values 3, 2, 2, 0.5 (an exact tie).
fn tied_svd_input() -> Dense<f64> {
    Rng::new(1).with_spectrum::<f64>(5, 4, &[3.0, 2.0, 2.0, 0.5])
}

/// The projector onto the top three left singular vectors (a whole tied
/// group) is differentiable at the tie, and so is the polar factor.
#[test]
fn svd_gauge_invariant_losses_at_an_exact_tie() {
    let mut la = Direct::new(Cpu::new());
    let a = tied_svd_input();
    let w = Rng::new(2).matrix::<f64>(5, 5);
    let w = tensor(&mut la, &w.matmul(&w.adjoint())); // Hermitian weights
    let loss: Loss = &|x| {
        let u = x.svd().u.cols(0..3);
        x.constant(&w).dot(&u.matmul(&u.h()))
    };
    let t = tensor(&mut la, &a);
    let out = la.value_and_grad([&t], |[x]| loss(x)).unwrap();
    matches_finite_differences(&mut la, &a, &out.grads[0].to_vec::<f64>().unwrap(), loss);
    let polar: Loss = &|x| {
        let f = x.svd();
        x.constant(&w).cols(0..4).dot(&f.u.matmul(&f.vh))
    };
    let out = la.value_and_grad([&t], |[x]| polar(x)).unwrap();
    matches_finite_differences(&mut la, &a, &out.grads[0].to_vec::<f64>().unwrap(), polar);
}

/// A projector that splits the tied group (the top two of the three) has
/// no derivative there: the error says so and names the structure.
#[test]
fn a_projector_splitting_a_tied_group_is_not_differentiable() {
    let mut la = Direct::new(Cpu::new());
    let t = tensor(&mut la, &tied_svd_input());
    let err = la
        .value_and_grad([&t], |[x]| {
            let u = x.svd().u.cols(0..2);
            u.matmul(&u.h()).at(0, 0)
        })
        .unwrap_err();
    assert!(matches!(err, Error::NotDifferentiable { op: "svd", .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("tied singular values") && text.contains("projector that splits the group"),
        "{text}"
    );
}

/// The truncated reconstruction U_k diag(s_k) V_kᴴ through `svd` with a tie
/// inside the kept block: the rule's 0/0 term has no first-order answer, so
/// a NearTie error names the pair and the op to use; through that op
/// (`low_rank_approx`) the gradient matches finite differences.
#[test]
fn a_reconstruction_at_a_tie_points_to_low_rank_approx() {
    let mut la = Direct::new(Cpu::new());
    let a = tied_svd_input();
    let t = tensor(&mut la, &a);
    let err = la
        .value_and_grad([&t], |[x]| {
            let f = x.svd();
            f.u.cols(0..3).scale_cols(&f.s.elems(0..3)).matmul(&f.vh.rows(0..3)).at(1, 2)
        })
        .unwrap_err();
    match &err {
        Error::NearTie { op: "svd", pair, gap, estimate, .. } => {
            assert_eq!(*pair, (1, 2));
            assert!(*gap < 1e-14 && estimate.is_infinite(), "{err}");
        }
        other => panic!("expected NearTie, got {other}"),
    }
    let text = err.to_string();
    assert!(text.contains("low_rank_approx for U diag(s) Vᴴ"), "{text}");

    let through_op: Loss = &|x| x.low_rank_approx(Truncation::Count(3)).0.at(1, 2);
    let out = la.value_and_grad([&t], |[x]| through_op(x)).unwrap();
    matches_finite_differences(&mut la, &a, &out.grads[0].to_vec::<f64>().unwrap(), through_op);
}

/// eigh at an exact tie: a symmetric function of the tied eigenvalues
/// (their sum) and a projector onto the whole group are differentiable;
/// one eigenvector of the pair is a gauge choice.
#[test]
fn eigh_at_an_exact_tie() {
    let mut la = Direct::new(Cpu::new());
    let q = Rng::new(4).unitary::<f64>(3);
    let a = q.scale_cols(&[1.0, 1.0, 4.0]).matmul(&q.adjoint());
    let a = Dense::from_fn(3, 3, |i, j| 0.5 * (a[(i, j)] + a[(j, i)]));
    let t = tensor(&mut la, &a);
    let sum_tied: Loss = &|x| {
        let w = x.eigvalsh();
        w.get(0) + w.get(1)
    };
    let out = la.value_and_grad([&t], |[x]| sum_tied(x)).unwrap();
    matches_finite_differences(&mut la, &a, &out.grads[0].to_vec::<f64>().unwrap(), sum_tied);
    let group: Loss = &|x| {
        let v = x.eigh().v.cols(0..2);
        v.matmul(&v.h()).at(2, 0)
    };
    let out = la.value_and_grad([&t], |[x]| group(x)).unwrap();
    matches_finite_differences(&mut la, &a, &out.grads[0].to_vec::<f64>().unwrap(), group);
    let err = la.value_and_grad([&t], |[x]| x.eigh().v.at(0, 0)).unwrap_err();
    assert!(matches!(err, Error::NotDifferentiable { op: "eigh", .. }), "{err}");
}

/// eig at a semisimple double eigenvalue (P diag(2, 2, 5) P⁻¹): the sum of
/// the eigenvalues (the trace, whose gradient is I) is differentiable; one
/// eigenvector of the pair is not (any invertible mix of the pair is as
/// valid). At a defective eigenvalue (a Jordan block) not even the values
/// are: the error says so.
#[test]
fn eig_at_semisimple_and_defective_eigenvalues() {
    let mut la = Direct::new(Cpu::new());
    let p = Dense::from_col_major(3, 3, vec![1.0, 0.2, -0.3, 0.4, 1.1, 0.1, -0.2, 0.3, 0.9]);
    // P diag(2, 2, 5) P⁻¹ = 2I + 3 p_3 r_3ᵀ with r_3 the third row of P⁻¹,
    // built exactly: P⁻¹ by the adjugate (test-side), rows scaled.
    let inv = inverse3(&p);
    let a = Dense::from_fn(3, 3, |i, j| {
        let id = if i == j { 2.0 } else { 0.0 };
        id + 3.0 * p[(i, 2)] * inv[(2, j)]
    });
    let t = tensor(&mut la, &a);
    let trace: Loss = &|x| x.eigvals().re().sum();
    let out = la.value_and_grad([&t], |[x]| trace(x)).unwrap();
    let g = out.grads[0].to_vec::<f64>().unwrap();
    let identity = Dense::<f64>::eye(3, 3).data;
    for (x, y) in g.iter().zip(&identity) {
        assert!((x - y).abs() < 1e-10, "∂ tr/∂A = {g:?}");
    }
    let err = la.value_and_grad([&t], |[x]| x.eig().v.re().at(0, 0)).unwrap_err();
    assert!(matches!(err, Error::NotDifferentiable { op: "eig", .. }), "{err}");
    assert!(err.to_string().contains("eigenspace"), "{err}");

    let jordan = Dense::from_col_major(3, 3, vec![2.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 5.0]);
    let t = tensor(&mut la, &jordan);
    // Even the trace is refused: the rule's dλ_i = (V⁻¹ dA V)_ii needs the
    // inverse of the (singular) eigenvector matrix.
    for loss in [trace, &|x: V<'_>| x.eigvals().re().get(0), &|x: V<'_>| x.eig().v.re().at(1, 1)] {
        let err = la.value_and_grad([&t], |[x]| loss(x)).unwrap_err();
        assert!(matches!(err, Error::NotDifferentiable { op: "eig", .. }), "{err}");
        assert!(err.to_string().contains("defective"), "{err}");
    }
}

/// V diag(λ) V⁻¹ read back through eig is A itself, so ∂Re A₀₁/∂A = E₀₁.
/// At a repeated eigenvalue its cotangents cancel exactly through V⁻¹
/// (∂L/∂V = 0 and ∂L/∂λ = 0 when V = I): no measurement of them tells the
/// rule's 0/0 limit, so a loss that reads values and vectors is an error
/// at a tie and at a near tie below ε/tolerance of the spectrum, and right
/// beyond it.
#[test]
fn a_function_of_eig_at_a_tie_is_an_error_not_a_wrong_gradient() {
    let mut la = Direct::new(Cpu::new());
    let p = Dense::from_col_major(3, 3, vec![1.0, 0.2, -0.3, 0.4, 1.1, 0.1, -0.2, 0.3, 0.9]);
    let inv = inverse3(&p);
    let with_gap = |gap: f64| {
        let d = [2.0 + gap, 2.0, 5.0];
        Dense::from_fn(3, 3, |i, j| (0..3).map(|k| p[(i, k)] * d[k] * inv[(k, j)]).sum::<f64>())
    };
    let rebuilt: Loss = &|x| {
        let e = x.eig();
        e.v.scale_cols(&e.w).matmul(&e.v.inv()).re().at(0, 1)
    };
    for gap in [0.0, 1e-14, 1e-12, 1e-10] {
        let t = tensor(&mut la, &with_gap(gap));
        let err = la.value_and_grad([&t], |[x]| rebuilt(x)).unwrap_err();
        assert!(matches!(err, Error::NearTie { op: "eig", .. }), "gap {gap}: {err}");
    }
    for gap in [1e-6, 1e-3] {
        let t = tensor(&mut la, &with_gap(gap));
        let g = la.value_and_grad([&t], |[x]| rebuilt(x)).unwrap().grads[0].to_vec::<f64>().unwrap();
        let e01 = Dense::from_fn(3, 3, |i, j| if (i, j) == (0, 1) { 1.0 } else { 0.0 }).data;
        for (x, y) in g.iter().zip(&e01) {
            assert!((x - y).abs() < 1e-6, "gap {gap}: ∂A₀₁/∂A = {g:?}");
        }
    }
}

/// The inverse of a 3×3 matrix by cofactors.
fn inverse3(p: &Dense<f64>) -> Dense<f64> {
    let c = |i: usize, j: usize| {
        let (r0, r1) = ((i + 1) % 3, (i + 2) % 3);
        let (c0, c1) = ((j + 1) % 3, (j + 2) % 3);
        p[(r0, c0)] * p[(r1, c1)] - p[(r0, c1)] * p[(r1, c0)]
    };
    let det: f64 = (0..3).map(|j| p[(0, j)] * c(0, j)).sum();
    Dense::from_fn(3, 3, |i, j| c(j, i) / det)
}

/// A full SVD of a tall and of a wide matrix: a loss on the thin part is
/// differentiated like the thin SVD; a nonzero cotangent on the completion
/// columns is an error that names the extra block.
#[test]
fn svd_full_thin_part_and_completion() {
    let mut la = Direct::new(Cpu::new());
    for (m, n) in [(5, 3), (3, 5)] {
        let a = Rng::new(7).with_spectrum::<f64>(m, n, &[3.0, 1.5, 0.4]);
        let t = tensor(&mut la, &a);
        let thin: Loss = &move |x| {
            let f = x.svd_full();
            let (u, vh) = (f.u.cols(0..3), f.vh.rows(0..3));
            u.matmul(&u.h()).at(0, m - 1) + vh.h().matmul(&vh).at(n - 1, 1) + f.s.get(0)
        };
        let out = la.value_and_grad([&t], |[x]| thin(x)).unwrap();
        matches_finite_differences(&mut la, &a, &out.grads[0].to_vec::<f64>().unwrap(), thin);

        let err = la
            .value_and_grad([&t], |[x]| {
                let f = x.svd_full();
                if m > n {
                    f.u.at(0, m - 1)
                } else {
                    f.vh.at(n - 1, 0)
                }
            })
            .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::NotDifferentiable { op: "svd_full", .. }), "{m}×{n}: {text}");
        assert!(text.contains("completion"), "{m}×{n}: {text}");
    }
}

/// Diagonal inputs with an exact tie, where the forward's basis is the
/// canonical one: a reconstruction of one off-diagonal entry (a linear
/// function of A, gradient E₀₁) through svd, and the same through eigh.
#[test]
fn reconstructions_of_diagonal_ties_are_right_or_an_error() {
    let mut la = Direct::new(Cpu::new());
    let a = Dense::from_col_major(3, 3, vec![2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0]);
    let t = tensor(&mut la, &a);
    let svd_entry: Loss = &|x| {
        let f = x.svd();
        f.u.scale_cols(&f.s).matmul(&f.vh).at(0, 1)
    };
    let eigh_entry: Loss = &|x| {
        let e = x.eigh();
        e.v.scale_cols(&e.w).matmul(&e.v.h()).at(1, 0)
    };
    for (name, loss, want) in [("svd", svd_entry, (0usize, 1usize)), ("eigh", eigh_entry, (1, 0))] {
        match la.value_and_grad([&t], |[x]| loss(x)) {
            Ok(out) => {
                let g = out.grads[0].to_vec::<f64>().unwrap();
                let mut exact = vec![0.0; 9];
                exact[want.0 + 3 * want.1] = 1.0;
                assert!(g.iter().zip(&exact).all(|(x, y)| (x - y).abs() < 1e-12), "{name}: {g:?}");
            }
            Err(e) => {
                assert!(matches!(e, Error::NearTie { .. } | Error::NotDifferentiable { .. }), "{name}: {e}")
            }
        }
    }
}
