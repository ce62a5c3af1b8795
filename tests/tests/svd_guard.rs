//! The SVD accuracy guard: it rejects factorizations with an error of
//! 1e-8·‖A‖ in U, S or V, accepts faer's accurate ones, and the QR-algorithm
//! fallback is accurate; a rank-deficient matrix with clustered singular
//! values (n = 240) comes out accurate through lindiff.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::svd::{svd, svd_scratch, ComputeSvdVectors};
use faer::{Col, Mat, Par};
use lindiff_core::op::{SvdDriver, SvdOptions};
use lindiff_core::Ops;
use lindiff_cpu::{svd_guard, Cpu, Direct};
use lindiff_tests::dense::{Dense, Rng};

fn faer_svd(a: &Mat<f64>) -> (Mat<f64>, Col<f64>, Mat<f64>) {
    let (m, n) = a.shape();
    let k = m.min(n);
    let (mut u, mut v, mut s) = (Mat::zeros(m, k), Mat::zeros(n, k), Col::zeros(k));
    let req = svd_scratch::<f64>(
        m,
        n,
        ComputeSvdVectors::Thin,
        ComputeSvdVectors::Thin,
        Par::Seq,
        Default::default(),
    );
    let mut mem = MemBuffer::new(req);
    svd(
        a.as_ref(),
        s.as_mut().as_diagonal_mut(),
        Some(u.as_mut()),
        Some(v.as_mut()),
        Par::Seq,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .unwrap();
    (u, s, v)
}

fn accepts(a: &Mat<f64>, u: &Mat<f64>, s: &Col<f64>, v: &Mat<f64>) -> bool {
    let (m, n) = a.shape();
    let mut mem = MemBuffer::new(svd_guard::scratch::<f64>(m, n, m.min(n)));
    svd_guard::accepts(a.as_ref(), s.as_ref(), u.as_ref(), v.as_ref(), MemStack::new(&mut mem))
}

fn to_faer(d: &Dense<f64>) -> Mat<f64> {
    Mat::from_fn(d.rows, d.cols, |i, j| d[(i, j)])
}

fn reconstruction_error(a: &Dense<f64>, u: &Dense<f64>, s: &[f64], vh: &Dense<f64>) -> f64 {
    u.scale_cols(s).matmul(vh).sub(a).norm() / a.norm()
}

#[test]
fn guard_rejects_small_injected_errors() {
    let mut rng = Rng::new(17);
    let n = 200;
    let a = to_faer(&rng.matrix::<f64>(n, n));
    let (u, s, v) = faer_svd(&a);
    assert!(accepts(&a, &u, &s, &v), "an accurate SVD must pass");
    let norm = s[0];
    for (what, damage) in [("U", 0), ("S", 1), ("V", 2)] {
        let (mut u2, mut s2, mut v2) = (u.clone(), s.clone(), v.clone());
        match damage {
            0 => u2[(7, 3)] += 1e-8,
            1 => s2[5] += 1e-8 * norm,
            _ => v2[(11, 9)] += 1e-8,
        }
        assert!(!accepts(&a, &u2, &s2, &v2), "an error of 1e-8·‖A‖ in {what} must be rejected");
    }
}

#[test]
fn fallback_and_guarded_results_are_accurate() {
    let mut rng = Rng::new(5);
    let n = 200;
    let a = rng.matrix::<f64>(n, n);
    let mut la = Direct::new(Cpu::new());
    let t = la.tensor(&[n, n], &a.data).unwrap();
    for driver in [SvdDriver::Auto, SvdDriver::QrIteration] {
        let f = la.svd_with_options(&t, SvdOptions::default().driver(driver)).unwrap();
        let u = Dense::from_col_major(n, n, f.u.to_vec::<f64>().unwrap());
        let vh = Dense::from_col_major(n, n, f.vh.to_vec::<f64>().unwrap());
        let s = f.s.to_vec::<f64>().unwrap();
        let err = reconstruction_error(&a, &u, &s, &vh);
        assert!(err < 1e-13, "{driver:?}: relative reconstruction error {err:e}");
        assert!(u.orthonormality_error() < 1e-12 && vh.orthonormality_error() < 1e-12);
    }
}

#[test]
fn clustered_rank_deficient_matrix_is_accurate() {
    // 240×240, rank 120, singular values in three tight clusters.
    let mut rng = Rng::new(13);
    let n = 240;
    let spectrum: Vec<f64> = (0..120).map(|i| [1.0, 1e-3, 1e-6][i % 3] * (1.0 + 1e-12 * i as f64)).collect();
    let a = rng.with_spectrum::<f64>(n, n, &spectrum);
    let (u, s, v) = faer_svd(&to_faer(&a));
    let faer_ok = accepts(&to_faer(&a), &u, &s, &v);
    println!(
        "faer's divide-and-conquer on the clustered rank-120 matrix: {}",
        if faer_ok { "accurate" } else { "INACCURATE (guard falls back)" }
    );
    let mut la = Direct::new(Cpu::new());
    let t = la.tensor(&[n, n], &a.data).unwrap();
    let f = la.svd(&t).unwrap();
    let ud = Dense::from_col_major(n, n, f.u.to_vec::<f64>().unwrap());
    let vh = Dense::from_col_major(n, n, f.vh.to_vec::<f64>().unwrap());
    let sv = f.s.to_vec::<f64>().unwrap();
    let err = reconstruction_error(&a, &ud, &sv, &vh);
    assert!(err < 1e-13, "relative reconstruction error {err:e}");
    assert!(ud.orthonormality_error() < 1e-11 && vh.orthonormality_error() < 1e-11);
    let mut sorted = spectrum.clone();
    sorted.sort_by(|x, y| y.total_cmp(x));
    for (i, &x) in sorted.iter().enumerate() {
        assert!((sv[i] - x).abs() < 1e-13, "s[{i}] = {} vs {x}", sv[i]);
    }
    assert!(sv[120..].iter().all(|&x| x < 1e-13));
}
