//! The wasm API, natively: every loss's reverse-mode gradient agrees with
//! central finite differences away from ties; at a tie and a zero value the
//! gauge-invariant losses stay exact and the others are reported with op,
//! output and why; batches agree with single calls; decompositions
//! reconstruct their input.
#![cfg(not(target_arch = "wasm32"))]

use lindiff_wasm::{
    det, eigh, finite_difference, gradient, gradient_batch, qr, solve, svd, ApiError, BatchItem,
    GradientOptions, Layout, Loss, Matrix,
};

/// Householder reflector I − 2vvᵀ/vᵀv (r×r, row-major) of a fixed vector.
fn reflector(r: usize, seed: f64) -> Vec<f64> {
    let v: Vec<f64> = (0..r).map(|i| (seed + i as f64 * 0.7).sin() + 0.1).collect();
    let vv: f64 = v.iter().map(|x| x * x).sum();
    (0..r * r).map(|k| f64::from(u8::from(k / r == k % r)) - 2.0 * v[k / r] * v[k % r] / vv).collect()
}

/// A = U diag(s) Vᵀ with U, V fixed orthogonal (Householder reflectors of
/// fixed vectors), so singular vectors are not unit vectors.
fn with_spectrum(m: usize, n: usize, s: &[f64]) -> Matrix {
    let (u, v) = (reflector(m, 0.3), reflector(n, 1.9));
    let mut a = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            a[i * n + j] = (0..s.len()).map(|l| u[i * m + l] * s[l] * v[j * n + l]).sum();
        }
    }
    Matrix::new(a, m, n, Layout::RowMajor).unwrap()
}

fn weight(r: usize, seed: u64) -> Matrix {
    let mut x = seed;
    let data = (0..r * r)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as f64 / 1000.0 - 0.5
        })
        .collect();
    Matrix::new(data, r, r, Layout::RowMajor).unwrap()
}

fn losses(m: usize, n: usize) -> Vec<Loss> {
    vec![
        Loss::nuclear(),
        Loss::weighted_values(vec![1.5, -0.5, 0.25][..m.min(n)].to_vec()),
        Loss::projector(2, &weight(m, 7)),
        Loss::truncation_error(1),
        Loss::projector_sum(2, &weight(m, 8), &weight(n, 9)),
    ]
}

/// ‖g − g_fd‖∞ relative to max(‖g‖∞, 1).
fn fd_error(a: &Matrix, loss: &Loss, options: &GradientOptions) -> f64 {
    let g = gradient(a, loss, options).unwrap_or_else(|e| panic!("{}: {e}", loss.name()));
    let fd = finite_difference(a, loss, options).unwrap();
    let scale = g.grad_ref().col_major().iter().fold(1.0_f64, |s, x| s.max(x.abs()));
    g.grad_ref().max_abs_diff(fd.grad_ref()) / scale
}

/// Σ_{l<k} x_lᵀ W x_l for the first k columns x_l of the r×r orthogonal
/// `q` (row-major): ⟨W, Q_k Q_kᵀ⟩.
fn projector_value(w: &Matrix, q: &[f64], r: usize, k: usize) -> f64 {
    (0..k)
        .map(|l| {
            (0..r * r).map(|e| q[(e / r) * r + l] * w.get(e / r, e % r) * q[(e % r) * r + l]).sum::<f64>()
        })
        .sum()
}

#[test]
fn every_loss_agrees_with_finite_differences() {
    // docs/ad-rules.md#how-the-rules-are-tested: ‖g − g_fd‖∞ ≤ 1e-8·max(1, ‖g‖∞) at step 1e-6·‖A‖
    // (measured ≤ ~5e-10).
    for (m, n) in [(4, 3), (3, 4), (3, 3)] {
        let a = with_spectrum(m, n, &[3.0, 2.0, 1.0]);
        for loss in losses(m, n) {
            let e = fd_error(&a, &loss, &GradientOptions::new());
            assert!(e <= 1e-8, "{m}×{n} {}: FD error {e:.1e}", loss.name());
        }
    }
}

#[test]
fn loss_values_are_their_closed_forms() {
    // s = (3, 2, 1) and the constructing U, V: values without the SVD.
    for (m, n) in [(4, 3), (3, 4), (3, 3)] {
        let a = with_spectrum(m, n, &[3.0, 2.0, 1.0]);
        let (u, v) = (reflector(m, 0.3), reflector(n, 1.9));
        let k = m.min(n);
        let want = [
            6.0,                                                                          // Σ s
            [1.5, -0.5, 0.25][..k].iter().zip([3.0, 2.0, 1.0]).map(|(c, s)| c * s).sum(), // Σ cᵢsᵢ
            projector_value(&weight(m, 7), &u, m, 2),                                     // ⟨W, U₂U₂ᵀ⟩
            4.0 + 1.0, // ‖A − A₁‖² = s₂² + s₃²
            projector_value(&weight(m, 8), &u, m, 2) + projector_value(&weight(n, 9), &v, n, 2),
        ];
        for (loss, want) in losses(m, n).iter().zip(want) {
            let g = gradient(&a, loss, &GradientOptions::new()).unwrap();
            assert!(
                (g.value - want).abs() <= 1e-13 * want.abs().max(1.0),
                "{m}×{n} {}: {} vs {want}",
                loss.name(),
                g.value
            );
        }
    }
}

#[test]
fn the_eps_option_changes_only_vector_rules() {
    let a = with_spectrum(4, 3, &[3.0, 2.0, 1.0]);
    let options = GradientOptions::new().with_derivative_eps(1e-6).unwrap();
    let loss = Loss::projector(2, &weight(4, 7));
    assert!(fd_error(&a, &loss, &options) <= 1e-8);
    assert!(GradientOptions::new().with_derivative_eps(-1.0).is_err());
}

#[test]
fn projector_over_a_whole_tie_and_a_zero_is_exact() {
    let loss = Loss::projector(2, &weight(4, 7));
    for s in [[2.0, 2.0, 1.0], [2.0, 1.0, 0.0], [2.0, 1.9999999999999993, 1.0000000000000007]] {
        let a = with_spectrum(4, 3, &s);
        let e = fd_error(&a, &loss, &GradientOptions::new());
        assert!(e <= 1e-8, "s = {s:?}: FD error {e:.1e}");
        assert!(gradient(&a, &loss, &GradientOptions::new())
            .unwrap()
            .grad_ref()
            .col_major()
            .iter()
            .all(|x| x.is_finite()));
    }
}

fn reported(result: Result<lindiff_wasm::Gradient, ApiError>) -> (&'static str, &'static str, &'static str) {
    let e = result.expect_err("expected a not-differentiable report");
    assert_eq!(e.kind(), "NotDifferentiable", "{e}");
    e.not_differentiable().unwrap()
}

#[test]
fn splitting_a_tie_or_a_kink_is_reported() {
    let tie = with_spectrum(4, 3, &[2.0, 2.0, 1.0]);
    let (op, output, why) =
        reported(gradient(&tie, &Loss::projector(1, &weight(4, 7)), &GradientOptions::new()));
    assert_eq!((op, output), ("svd", "u"));
    assert!(why.contains("tied"), "{why}");
    let zero = with_spectrum(4, 3, &[2.0, 1.0, 0.0]);
    let (op, output, _) = reported(gradient(&zero, &Loss::nuclear(), &GradientOptions::new()));
    assert_eq!((op, output), ("svd", "s"));
    let (op, _, _) = reported(gradient(&tie, &Loss::truncation_error(1), &GradientOptions::new()));
    assert_eq!(op, "low_rank_approx");
}

#[test]
fn bad_parameters_name_the_argument() {
    let a = with_spectrum(4, 3, &[3.0, 2.0, 1.0]);
    let e = gradient(&a, &Loss::projector(4, &weight(4, 7)), &GradientOptions::new()).unwrap_err();
    assert_eq!(e.to_string(), "Loss: argument `k`: must be in 1..=3 for a 4×3 matrix, got 4");
    let e = gradient(&a, &Loss::projector(1, &weight(3, 7)), &GradientOptions::new()).unwrap_err();
    assert_eq!(e.to_string(), "Loss: argument `w`: must be 4×4 for a 4×3 matrix, got 3×3");
    let e = gradient(&a, &Loss::weighted_values(vec![1.0]), &GradientOptions::new()).unwrap_err();
    assert_eq!(e.kind(), "InvalidArgument");
}

#[test]
fn a_batch_agrees_with_single_calls_and_reports_per_matrix() {
    let loss = Loss::projector(1, &weight(4, 7));
    let spectra = [[3.0, 2.0, 1.0], [2.0, 2.0, 1.0], [5.0, 1.0, 0.5]];
    let ms: Vec<Matrix> = spectra.iter().map(|s| with_spectrum(4, 3, s)).collect();
    let items = gradient_batch(&ms, &loss, &GradientOptions::new()).unwrap();
    assert_eq!(items.len(), 3);
    assert!(items[1].result().as_ref().is_err_and(|e| e.not_differentiable().is_some()));
    assert!(items.iter().all(BatchItem::fell_back), "a reported batch is redone one by one");
    for i in [0, 2] {
        let single = gradient(&ms[i], &loss, &GradientOptions::new()).unwrap();
        let item = items[i].result().as_ref().unwrap();
        assert!(item.grad_ref().max_abs_diff(single.grad_ref()) <= 1e-13);
    }
    let smooth = Loss::projector(2, &weight(4, 7));
    let items = gradient_batch(&ms, &smooth, &GradientOptions::new()).unwrap();
    assert!(!items.iter().any(BatchItem::fell_back), "a differentiable batch is one batched call");
    for (x, item) in ms.iter().zip(&items) {
        let single = gradient(x, &smooth, &GradientOptions::new()).unwrap();
        let g = item.result().as_ref().unwrap();
        assert!(
            (g.value - single.value).abs() <= 1e-13 && g.grad_ref().max_abs_diff(single.grad_ref()) <= 1e-13
        );
    }
    assert!(gradient_batch(&[], &smooth, &GradientOptions::new()).is_err());
}

/// max |(X·Y)_ij − Z_ij| with X, Y, Z row-major.
fn residual(x: &Matrix, y: &Matrix, z: &Matrix) -> f64 {
    let mut worst = 0.0_f64;
    for i in 0..z.rows() {
        for j in 0..z.cols() {
            let p: f64 = (0..x.cols()).map(|l| x.get(i, l) * y.get(l, j)).sum();
            worst = worst.max((p - z.get(i, j)).abs());
        }
    }
    worst
}

#[test]
fn decompositions_reconstruct_their_input() {
    let a = with_spectrum(4, 3, &[3.0, 2.0, 1.0]);
    let f = svd(&a).unwrap();
    assert!(f.s().iter().zip([3.0, 2.0, 1.0]).all(|(x, y)| (x - y).abs() < 1e-14));
    let k = f.s().len();
    let mut us = f.u();
    let ucols = us.to_layout(Layout::ColMajor);
    let scaled: Vec<f64> = ucols.iter().enumerate().map(|(i, x)| x * f.s()[i / 4]).collect();
    us = Matrix::new(scaled, 4, k, Layout::ColMajor).unwrap();
    assert!(residual(&us, &f.vh(), &a) < 1e-14);
    let q = qr(&a).unwrap();
    assert!(residual(&q.q(), &q.r(), &a) < 1e-14);
    let sym = Matrix::new(vec![2.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 4.0], 3, 3, Layout::RowMajor).unwrap();
    let e = eigh(&sym).unwrap();
    assert!(e.w().windows(2).all(|w| w[0] <= w[1]));
    // V diag(w) Vᵀ = A and VᵀV = I.
    let (v, w) = (e.v(), e.w());
    let vw = Matrix::new(
        v.to_layout(Layout::ColMajor).iter().enumerate().map(|(i, x)| x * w[i / 3]).collect(),
        3,
        3,
        Layout::ColMajor,
    )
    .unwrap();
    let vt = Matrix::new(v.to_layout(Layout::ColMajor), 3, 3, Layout::RowMajor).unwrap();
    assert!(residual(&vw, &vt, &sym) < 1e-14, "V diag(w) Vᵀ ≠ A");
    let eye = Matrix::new(vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], 3, 3, Layout::RowMajor).unwrap();
    assert!(residual(&vt, &v, &eye) < 1e-14, "VᵀV ≠ I");
    // The eigenvalues of [[2,1,0],[1,3,1],[0,1,4]]: 3 and 3 ± √3.
    let want = [3.0 - 3f64.sqrt(), 3.0, 3.0 + 3f64.sqrt()];
    assert!(w.iter().zip(want).all(|(x, y)| (x - y).abs() < 1e-14), "{w:?}");
    let b = Matrix::new(vec![1.0, 2.0, 3.0], 3, 1, Layout::RowMajor).unwrap();
    let x = solve(&sym, &b).unwrap();
    assert!(residual(&sym, &x, &b) < 1e-14);
    // det by cofactors: 2(12 − 1) − 1(4 − 0) = 18.
    assert!((det(&sym).unwrap() - 18.0).abs() < 1e-13);
    let e = det(&a).unwrap_err();
    assert!(e.to_string().starts_with("det: "), "{e}");
}
