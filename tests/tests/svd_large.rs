//! The SVD at sizes where faer's default is divide and conquer (min(m, n) ≥
//! 128), with the default driver, `SvdDriver::QrIteration` and
//! `SvdDriver::Jacobi`: known
//! spectrum, reconstruction, orthonormality, canonical phases. Run also with lindiff-cpu's
//! `svd-jacobi` feature (`cargo test -p lindiff-tests --features
//! lindiff-cpu/svd-jacobi --test svd --test svd_large`, part of `cargo
//! xtask embedded`), where every driver is the one-sided Jacobi SVD.

use lindiff_core::op::{Svd, SvdDriver, SvdOptions, SvdTruncated, SvdVectors, Truncation};
use lindiff_core::{Host, LinalgOp, Provider, RealScalar, Scalar};
use lindiff_tests::dense::Rng;
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::svd_check;
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// The thin SVD's conventions ([`svd_check::check_thin`]) with `driver`.
fn check<T: Scalar, P: Provider<Memory = Host>>(p: &P, driver: SvdDriver, m: usize, n: usize, seed: u64) {
    let op = LinalgOp::Svd(Svd(SvdOptions::default().driver(driver)));
    svd_check::check_thin::<T, P>(p, op, m, n, seed);
}

/// Every SVD op that computes Vᴴ gives the same bits for the same input —
/// `svd` with both factors, with Vᴴ only, and the truncated SVD keeping all
/// values: the derivative rules of `svd_truncated` and of a one-sided `svd`
/// recompute the factors and rely on it (host-cpu writes V through two
/// different memory paths).
fn same_bits<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let k = m.min(n);
    let s_true: Vec<f64> = (0..k).map(|i| 3.0 / (1.0 + i as f64)).collect();
    let a = HostTensor::from_dense(&rng.with_spectrum::<T>(m, n, &s_true));
    let vh_of =
        |op: LinalgOp, i: usize| -> Vec<T> { run(p, op, &[&a]).unwrap()[i].as_ref().unwrap().to_vec() };
    let both = vh_of(LinalgOp::Svd(Svd(SvdOptions::default())), 2);
    let right = vh_of(LinalgOp::Svd(Svd(SvdOptions::default().vectors(SvdVectors::Right))), 2);
    let truncated = vh_of(LinalgOp::SvdTruncated(SvdTruncated(Truncation::Count(k))), 2);
    let bits = |v: &[T]| {
        v.iter().map(|x| (x.re().to_f64().to_bits(), x.im().to_f64().to_bits())).collect::<Vec<_>>()
    };
    assert_eq!(bits(&both), bits(&right), "{m}×{n}: svd Vᴴ vs Vᴴ-only");
    assert_eq!(bits(&both), bits(&truncated), "{m}×{n}: svd Vᴴ vs svd_truncated");
}

fn svd_large<P: TestProvider>(provider: &P) {
    // `Jacobi`: host-cpu's one-sided Jacobi SVD at a size where `Auto` is
    // faer's divide and conquer (providers without one run `Auto`).
    for driver in [SvdDriver::Auto, SvdDriver::QrIteration, SvdDriver::Jacobi] {
        check::<f64, P>(provider, driver, 140, 130, 11);
        check::<Complex<f64>, P>(provider, driver, 130, 135, 12);
    }
    same_bits::<f64, P>(provider, 140, 130, 13);
    same_bits::<Complex<f64>, P>(provider, 130, 140, 14);
    // And where host-cpu's `Auto` runs its Jacobi SVD (up to 8×8).
    same_bits::<f64, P>(provider, 8, 6, 15);
    same_bits::<Complex<f64>, P>(provider, 5, 7, 16);
}

lindiff_tests::providers!(svd_large);
