//! The contract of a failed call (`call::run_into`'s docs): after an `Err`
//! the output buffers hold unspecified values (possibly partial results,
//! as LAPACK's), and the inputs are never modified. Each case is a batch of
//! two matrices whose first is fine and whose second fails — so a provider
//! that works item by item has written item 0's results, and any scratch
//! copy of item 1, before it meets the failure — run through
//! `call::run_into` with every output and the workspace filled with a
//! sentinel byte first. The test asserts the typed error (its kind, the
//! argument and batch item it names) and that every input comes back bit
//! for bit; the outputs are not read.
//!
//! The failures: Cholesky of a matrix that is not positive definite, a
//! solve of an exactly singular matrix, and NaN in the input of a solve, a
//! QR, a Hermitian eigendecomposition and a full SVD (each `NonFinite`:
//! the providers reject NaN before their iterations, so a NaN input does
//! not reach `NonConvergence`, and no finite input is known to make
//! faer's or LAPACK's eigen and SVD iterations fail cheaply).

use lindiff_core::op::{Cholesky, Eigh, LuFactorSolve, Qr, SvdFull};
use lindiff_core::{Element, Error, LinalgOp, Provider, Scalar};
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::host::{run_filled, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// The byte every output and the workspace hold before the call.
const SENTINEL: u8 = 0xA5;

/// Which error a case must give: its name, the argument it names, the
/// batch item.
type Expected = (&'static str, &'static str, usize);

fn kind(err: &Error) -> Option<Expected> {
    match *err {
        Error::NotPositiveDefinite { arg, batch_index, .. } => {
            Some(("NotPositiveDefinite", arg, batch_index))
        }
        Error::NonFinite { arg, batch_index, .. } => Some(("NonFinite", arg, batch_index)),
        Error::Singular { arg, batch_index, .. } => Some(("Singular", arg, batch_index)),
        Error::NonConvergence { batch_index, .. } => Some(("NonConvergence", "a", batch_index)),
        _ => None,
    }
}

/// The failing cases at order `n`: (op, inputs, the error expected).
fn cases<T: Scalar + Element>(n: usize, seed: u64) -> Vec<(LinalgOp, Vec<HostTensor>, Expected)> {
    let mut rng = Rng::new(seed);
    let a: Dense<T> = rng.matrix(n, n);
    let b: Dense<T> = rng.matrix(n, 3);
    // Hermitian positive definite: a·aᴴ + n·I.
    let shift = vec![T::Real::from_f64(-(n as f64)); n];
    let spd = a.matmul(&a.adjoint()).sub(&Dense::eye(n, n).scale_cols(&shift));
    // Hermitian, not positive definite: the same with its last diagonal
    // entry made negative.
    let mut indefinite = spd.clone();
    indefinite.data[n * n - 1] = T::from_f64(-1.0);
    let mut nan = a.clone();
    nan.data[n / 2 + n * (n / 3)] = T::from_f64(f64::NAN);
    // Hermitian with NaN (mirrored, so only finiteness is wrong).
    let mut spd_nan = spd.clone();
    spd_nan.data[1] = T::from_f64(f64::NAN);
    spd_nan.data[n] = T::from_f64(f64::NAN);
    // Exactly singular: two equal columns.
    let mut singular = a.clone();
    for i in 0..n {
        singular.data[i + n] = singular.data[i];
    }
    let two = |first: &Dense<T>, second: &Dense<T>| HostTensor::batch(&[first.clone(), second.clone()]);
    let bb = two(&b, &b);
    vec![
        (LinalgOp::Cholesky(Cholesky), vec![two(&spd, &indefinite)], ("NotPositiveDefinite", "a", 1)),
        (
            LinalgOp::LuFactorSolve(LuFactorSolve::default()),
            vec![two(&a, &nan), two(&b, &b)],
            ("NonFinite", "a", 1),
        ),
        (
            LinalgOp::LuFactorSolve(LuFactorSolve::default()),
            vec![two(&a, &singular), bb],
            ("Singular", "a", 1),
        ),
        (LinalgOp::Qr(Qr::default()), vec![two(&a, &nan)], ("NonFinite", "a", 1)),
        (LinalgOp::Eigh(Eigh::default()), vec![two(&spd, &spd_nan)], ("NonFinite", "a", 1)),
        (LinalgOp::SvdFull(SvdFull::default()), vec![two(&a, &nan)], ("NonFinite", "a", 1)),
    ]
}

fn check<T: Scalar + Element, P: Provider<Memory = lindiff_core::Host>>(p: &P, n: usize) {
    for (op, inputs, expected) in cases::<T>(n, 31 + n as u64) {
        let before: Vec<Vec<u8>> = inputs.iter().map(|t| t.raw_bytes().to_vec()).collect();
        let refs: Vec<&HostTensor> = inputs.iter().collect();
        let what = format!("{} {:?} n = {n}", op.name(), T::DTYPE);
        let err = match run_filled(p, op.clone(), &refs, Some(SENTINEL)) {
            Ok(_) => panic!("{what}: Ok, expected {expected:?}"),
            Err(e) => e,
        };
        assert_eq!(kind(&err), Some(expected), "{what}: {err}");
        for (k, (t, b)) in inputs.iter().zip(&before).enumerate() {
            assert!(t.raw_bytes() == &b[..], "{what}: input {k} was modified by the failed call");
        }
    }
}

fn failed_calls_leave_inputs_alone<P: TestProvider>(provider: &P) {
    // 70: past 64, where host-cpu's Cholesky changes how it copies the
    // triangle (prefill.rs), and past the providers' unblocked sizes.
    for n in [5, 70] {
        check::<f64, P>(provider, n);
        check::<Complex<f64>, P>(provider, n);
    }
}

lindiff_tests::providers!(failed_calls_leave_inputs_alone);
