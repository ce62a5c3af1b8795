//! The SVD at sizes where divide and conquer is the default (min(m, n) ≥
//! 128: host-cpu's own for real input, faer's for complex), with the
//! default driver, `SvdDriver::QrIteration` and `SvdDriver::Jacobi`: known
//! spectra (also ones that stress deflation), reconstruction,
//! orthonormality, canonical phases. Run also with lindiff-cpu's
//! `svd-jacobi` feature (`cargo test -p lindiff-tests --features
//! lindiff-cpu/svd-jacobi --test svd --test svd_large`, part of `cargo
//! xtask embedded`), where every driver is the one-sided Jacobi SVD.

use lindiff_core::op::{Svd, SvdDriver, SvdOptions, SvdTruncated, SvdVectors, Truncation};
use lindiff_core::{Host, LinalgOp, Provider, RealScalar, Scalar};
use lindiff_cpu::svd_guard;
use lindiff_tests::dense::Rng;
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::svd_check;
use lindiff_tests::TestProvider;
use num_complex::Complex;
use std::sync::atomic::Ordering;

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

/// Spectra that stress the divide and conquer's deflation and secular
/// equation (host-cpu's own from min(m, n) = 128 for real input) and the
/// one-sided Jacobi SVD's sweep count (`driver`; every driver of a
/// `svd-jacobi` build, which also runs this file): half the values zero,
/// clusters of eight 1e−10 apart, repeated values, values graded over 15
/// decades (those under ε·‖A‖ are rounding noise), one value of 1e−300
/// among O(1) ones.
fn hard_spectra<T: Scalar, P: Provider<Memory = Host>>(
    p: &P,
    driver: SvdDriver,
    m: usize,
    n: usize,
    seed: u64,
) {
    let k = m.min(n);
    let spectra: [(&str, Vec<f64>); 5] = [
        ("half zero", (0..k).map(|i| if i < k / 2 { (k / 2 - i) as f64 } else { 0.0 }).collect()),
        ("clusters", (0..k).map(|i| (k / 8 - i / 8) as f64 + 1e-10 * (7 - i % 8) as f64).collect()),
        ("repeated", (0..k).map(|i| [3.0, 1.0, 0.5][3 * i / k]).collect()),
        ("graded", (0..k).map(|i| 10f64.powf(-15.0 * i as f64 / k as f64)).collect()),
        ("one tiny", (0..k).map(|i| if i + 1 == k { 1e-300 } else { 2.0 - i as f64 / k as f64 }).collect()),
    ];
    for (i, (name, s_true)) in spectra.iter().enumerate() {
        eprintln!("svd_large: {name}, {m}×{n}, {driver:?}");
        let op = LinalgOp::Svd(Svd(SvdOptions::default().driver(driver)));
        svd_check::check_spectrum::<T, P>(p, op, m, n, seed + i as u64, s_true);
    }
    // The guard accepted every factorization (no test here forces a
    // rejection): the checks above are the solver's, not the fallback's.
    assert_eq!(svd_guard::FALLBACKS.load(Ordering::Relaxed), 0, "the SVD guard's fallback ran");
}

fn svd_large<P: TestProvider>(provider: &P) {
    hard_spectra::<f64, P>(provider, SvdDriver::Auto, 128, 128, 21);
    hard_spectra::<f64, P>(provider, SvdDriver::Auto, 200, 130, 22);
    hard_spectra::<f64, P>(provider, SvdDriver::Auto, 130, 200, 23);
    hard_spectra::<f32, P>(provider, SvdDriver::Auto, 160, 160, 24);
    // host-cpu's one-sided Jacobi SVD on the same spectra (lindiff-blas,
    // which has no Jacobi SVD, runs its ?gesdd).
    hard_spectra::<f64, P>(provider, SvdDriver::Jacobi, 128, 128, 25);

    // `Jacobi`: host-cpu's one-sided Jacobi SVD at a size where `Auto` is
    // divide and conquer (host-cpu's own for f64, faer's for c64; providers
    // without a Jacobi SVD run `Auto`).
    for driver in [SvdDriver::Auto, SvdDriver::QrIteration, SvdDriver::Jacobi] {
        check::<f64, P>(provider, driver, 140, 130, 11);
        check::<Complex<f64>, P>(provider, driver, 130, 135, 12);
    }
    same_bits::<f64, P>(provider, 140, 130, 13);
    same_bits::<f64, P>(provider, 130, 140, 17);
    same_bits::<Complex<f64>, P>(provider, 130, 140, 14);
    // And where host-cpu's `Auto` runs its Jacobi SVD (up to 8×8).
    same_bits::<f64, P>(provider, 8, 6, 15);
    same_bits::<Complex<f64>, P>(provider, 5, 7, 16);
}

lindiff_tests::providers!(svd_large);
