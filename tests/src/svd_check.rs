//! The thin SVD's conventions on a matrix of known spectrum, shared by the
//! SVD suites (`tests/svd.rs` at every driver's default, `tests/svd_large.rs`
//! at the sizes where the drivers differ).

use crate::dense::{eps, Dense, Re, Rng};
use crate::host::{run, HostTensor};
use lindiff_core::{Host, LinalgOp, Provider, RealScalar, Scalar};

/// What [`check_thin`] computed, for a suite's further checks.
pub struct ThinSvd<T: Scalar> {
    /// The input, A = Q diag(s_true) Rᴴ (s_true = 3/(1+i) for [`check_thin`]).
    pub a: Dense<T>,
    /// The singular values the op returned.
    pub s: Vec<Re<T>>,
    /// The tolerance the checks used: 50·max(m, n)·ε of `T`.
    pub tol: f64,
}

/// Runs the thin SVD `op` (a `LinalgOp::Svd`) on an m×n matrix with the
/// closed-form spectrum s_i = 3/(1+i) (the expectation is not computed by
/// lindiff) and checks the shapes, the values, the reconstruction
/// U diag(s) Vᴴ = A, the orthonormality of U and V, and the canonical
/// phase: the largest-magnitude entry of each column of U is real and
/// positive (Vᴴ follows: the reconstruction checks it).
///
/// # Panics
/// On any failed check, naming the size.
pub fn check_thin<T: Scalar, P: Provider<Memory = Host>>(
    p: &P,
    op: LinalgOp,
    m: usize,
    n: usize,
    seed: u64,
) -> ThinSvd<T> {
    let s_true: Vec<f64> = (0..m.min(n)).map(|i| 3.0 / (1.0 + i as f64)).collect();
    check_spectrum(p, op, m, n, seed, &s_true)
}

/// [`check_thin`] for an m×n input with singular values `s_true`
/// (descending, min(m, n) of them): the values to within the tolerance
/// times `s_true[0]`.
pub fn check_spectrum<T: Scalar, P: Provider<Memory = Host>>(
    p: &P,
    op: LinalgOp,
    m: usize,
    n: usize,
    seed: u64,
    s_true: &[f64],
) -> ThinSvd<T> {
    let mut rng = Rng::new(seed);
    let k = m.min(n);
    let a: Dense<T> = rng.with_spectrum(m, n, s_true);
    let outs = run(p, op, &[&HostTensor::from_dense(&a)]).unwrap();
    let u: Dense<T> = outs[0].as_ref().unwrap().matrix(0);
    let s: Vec<Re<T>> = outs[1].as_ref().unwrap().to_vec();
    let vh: Dense<T> = outs[2].as_ref().unwrap().matrix(0);
    assert_eq!((u.rows, u.cols, vh.rows, vh.cols, s.len()), (m, k, k, n, k));
    let tol = 50.0 * (m.max(n) as f64) * eps::<T>();
    for i in 0..k {
        assert!(
            (s[i].to_f64() - s_true[i]).abs() <= tol * s_true[0],
            "{m}×{n} s[{i}] = {:?} vs {}",
            s[i],
            s_true[i]
        );
    }
    let recon = u.scale_cols(&s).matmul(&vh);
    assert!(recon.sub(&a).norm() <= tol * a.norm(), "{m}×{n} reconstruction {}", recon.sub(&a).norm());
    assert!(u.orthonormality_error() <= tol, "{m}×{n} U");
    assert!(vh.adjoint().orthonormality_error() <= tol, "{m}×{n} V");
    assert_eq!(u.first_non_canonical_column(tol), None, "{m}×{n} phase of U's columns");
    ThinSvd { a, s, tol }
}
