//! SVD family on every host provider: reconstruction, orthogonality, the
//! conventions (descending real values, canonical phases, Vᴴ), shapes.

use lindiff_core::op::{Svd, SvdFull, SvdVals};
use lindiff_core::{Error, Host, LinalgOp, Provider, RealScalar, Scalar};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::svd_check::{self, ThinSvd};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// The thin SVD's conventions ([`svd_check::check_thin`]), and `svd_vals`
/// agreeing with its values.
fn check_thin<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, seed: u64) {
    let thin: ThinSvd<T> = svd_check::check_thin(p, LinalgOp::Svd(Svd::default()), m, n, seed);
    let vals = run(p, LinalgOp::SvdVals(SvdVals::default()), &[&HostTensor::from_dense(&thin.a)]).unwrap();
    let sv: Vec<Re<T>> = vals[0].as_ref().unwrap().to_vec();
    for (i, (v, s)) in sv.iter().zip(&thin.s).enumerate() {
        assert!((v.to_f64() - s.to_f64()).abs() <= thin.tol * 3.0, "{m}×{n} svd_vals[{i}]");
    }
    assert_eq!(sv.len(), thin.s.len());
}

fn check_full<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let a: Dense<T> = rng.matrix(m, n);
    let outs = run(p, LinalgOp::SvdFull(SvdFull::default()), &[&HostTensor::from_dense(&a)]).unwrap();
    let u: Dense<T> = outs[0].as_ref().unwrap().matrix(0);
    let s: Vec<Re<T>> = outs[1].as_ref().unwrap().to_vec();
    let vh: Dense<T> = outs[2].as_ref().unwrap().matrix(0);
    let tol = 50.0 * (m.max(n) as f64) * eps::<T>();
    assert!(u.orthonormality_error() <= tol && vh.orthonormality_error() <= tol);
    let k = m.min(n);
    let recon = u.cols_range(0, k).scale_cols(&s).matmul(&vh.rows_range(0, k));
    assert!(recon.sub(&a).norm() <= tol * a.norm());
}

fn all_dtypes<P: Provider<Memory = Host>>(p: &P) {
    for &(m, n) in &[(5, 5), (7, 4), (4, 7), (1, 3), (0, 3), (30, 30)] {
        check_thin::<f64, P>(p, m, n, 1);
        check_thin::<f32, P>(p, m, n, 2);
        check_thin::<Complex<f64>, P>(p, m, n, 3);
        check_thin::<Complex<f32>, P>(p, m, n, 4);
    }
    for &(m, n) in &[(5, 5), (30, 4), (4, 30), (3, 1)] {
        check_full::<f64, P>(p, m, n, 5);
        check_full::<Complex<f64>, P>(p, m, n, 6);
    }
}

/// NaN or ∞ in a batch item → `NonFinite` naming `a` and the lowest such
/// item, for every SVD op, at sizes past the small-matrix kernels (20×17,
/// 17×20) and with the guard (130×128).
fn non_finite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    for (m, n) in [(20, 17), (17, 20), (130, 128)] {
        let mut mats: Vec<Dense<T>> = (0..3).map(|_| rng.matrix(m, n)).collect();
        mats[1][(m - 1, n / 2)] = T::from_f64(f64::NAN);
        mats[2][(0, 0)] = T::from_f64(f64::INFINITY);
        let a = HostTensor::batch(&mats);
        for op in [
            LinalgOp::Svd(Svd::default()),
            LinalgOp::SvdVals(SvdVals::default()),
            LinalgOp::SvdFull(SvdFull::default()),
        ] {
            match run(p, op.clone(), &[&a]) {
                Err(Error::NonFinite { arg: "a", batch_index: 1, .. }) => {}
                other => panic!("{op:?} {:?} {m}×{n}: {:?}", T::DTYPE, other.map(|_| ())),
            }
        }
    }
}

fn svd<P: TestProvider>(provider: &P) {
    all_dtypes(provider);
    non_finite::<f64, P>(provider, 7);
    non_finite::<f32, P>(provider, 8);
    non_finite::<Complex<f64>, P>(provider, 9);
    non_finite::<Complex<f32>, P>(provider, 10);
}

fn one_sided<P: Provider<Memory = Host>>(p: &P) {
    use lindiff_core::op::{SvdOptions, SvdVectors};
    let mut rng = Rng::new(8);
    for &(m, n) in &[(6, 4), (4, 6), (140, 130)] {
        let a: Dense<f64> = rng.matrix(m, n);
        let t = HostTensor::from_dense(&a);
        let both = run(p, LinalgOp::Svd(Svd::default()), &[&t]).unwrap();
        let left =
            run(p, LinalgOp::Svd(Svd(SvdOptions::default().vectors(SvdVectors::Left))), &[&t]).unwrap();
        let right =
            run(p, LinalgOp::Svd(Svd(SvdOptions::default().vectors(SvdVectors::Right))), &[&t]).unwrap();
        assert!(left[2].is_none() && right[0].is_none(), "switched-off outputs are absent");
        let diff = |x: &HostTensor, y: &HostTensor| -> f64 {
            x.to_vec::<f64>().iter().zip(y.to_vec::<f64>()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
        };
        // Same gauge (U's canonical phase) whichever side is asked for.
        assert!(diff(left[0].as_ref().unwrap(), both[0].as_ref().unwrap()) < 1e-12, "{m}×{n} U");
        assert!(diff(right[2].as_ref().unwrap(), both[2].as_ref().unwrap()) < 1e-12, "{m}×{n} Vh");
    }
}

fn svd_one_sided<P: TestProvider>(provider: &P) {
    one_sided(provider);
}

lindiff_tests::providers!(svd, svd_one_sided);
