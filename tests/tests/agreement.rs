//! host-cpu and host-blas agree: gauge-invariant quantities (singular and
//! eigenvalues, projectors U Uᴴ, reconstructions, solutions) and the
//! canonical outputs themselves (U and Vᴴ with the canonical phase, Q and R
//! with diag(R) ≥ 0, eigenvectors, L and U of LU, Cholesky factors), to
//! ≤ 1e-12 relative (Frobenius) in f64 and c64, on well-conditioned inputs
//! with separated spectra (where the canonical factors are unique and well
//! conditioned).

use lindiff_core::op::*;
use lindiff_core::{Element, LinalgOp, MatOp, RealScalar, Scalar};
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::{Blas, Cpu};
use num_complex::Complex;

const TOL: f64 = 1e-12;

/// ‖x − y‖ / ‖x‖ over two equally long element lists (0 when both are 0).
fn rel<T: Scalar>(x: &[T], y: &[T]) -> f64 {
    assert_eq!(x.len(), y.len());
    let (mut d, mut n) = (0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        d += (*a - *b).abs().to_f64().powi(2);
        n += a.abs().to_f64().powi(2);
    }
    if n == 0.0 {
        d.sqrt()
    } else {
        (d / n).sqrt()
    }
}

/// Runs `op` on both providers and returns (cpu outputs, blas outputs).
fn both(op: LinalgOp, inputs: &[&HostTensor]) -> (Vec<Option<HostTensor>>, Vec<Option<HostTensor>>) {
    (run(&Cpu::new(), op.clone(), inputs).unwrap(), run(&Blas::new(), op, inputs).unwrap())
}

/// Asserts output `i` (element type `E`) agrees.
fn same<E: Scalar + Element>(what: &str, i: usize, c: &[Option<HostTensor>], b: &[Option<HostTensor>]) {
    let (x, y) = (c[i].as_ref().unwrap().to_vec::<E>(), b[i].as_ref().unwrap().to_vec::<E>());
    let e = rel(&x, &y);
    assert!(e <= TOL, "{what}: output {i} differs by {e:e} (relative)");
}

/// Asserts the i64 output `i` is identical.
fn same_int(what: &str, i: usize, c: &[Option<HostTensor>], b: &[Option<HostTensor>]) {
    let (x, y) = (c[i].as_ref().unwrap().to_vec::<i64>(), b[i].as_ref().unwrap().to_vec::<i64>());
    assert_eq!(x, y, "{what}: output {i}");
}

fn projector<T: Scalar>(u: &Dense<T>) -> Vec<T> {
    u.matmul(&u.adjoint()).data
}

fn svd_family<T: Scalar + Element>(seed: u64)
where
    T::Real: Element,
{
    let mut rng = Rng::new(seed);
    // 140×130 and 130×140: faer's divide and conquer (min(m, n) ≥ 128), the
    // guard, and host-cpu's V written through the transposed Vᴴ, against ?gesdd.
    for (m, n) in [(7, 5), (5, 7), (6, 6), (40, 30), (140, 130), (130, 140)] {
        let k = m.min(n);
        let spectrum: Vec<f64> = (0..k).map(|i| 4.0 - 3.0 * i as f64 / k as f64).collect();
        let a: Dense<T> = rng.with_spectrum(m, n, &spectrum);
        let t = HostTensor::from_dense(&a);
        let what = format!("svd {m}×{n}");
        for driver in [SvdDriver::Auto, SvdDriver::QrIteration, SvdDriver::Jacobi] {
            let (c, b) = both(LinalgOp::Svd(Svd(SvdOptions::default().driver(driver))), &[&t]);
            same::<T::Real>(&what, 1, &c, &b);
            same::<T>(&what, 0, &c, &b); // canonical U
            same::<T>(&what, 2, &c, &b); // canonical Vᴴ
            let (uc, ub) = (c[0].as_ref().unwrap().matrix::<T>(0), b[0].as_ref().unwrap().matrix::<T>(0));
            assert!(rel(&projector(&uc), &projector(&ub)) <= TOL, "{what}: U Uᴴ");
            let recon = |o: &[Option<HostTensor>]| {
                let (u, s, vh) = (
                    o[0].as_ref().unwrap().matrix::<T>(0),
                    o[1].as_ref().unwrap().to_vec::<T::Real>(),
                    o[2].as_ref().unwrap().matrix::<T>(0),
                );
                u.scale_cols(&s).matmul(&vh).data
            };
            assert!(rel(&recon(&c), &recon(&b)) <= TOL, "{what}: reconstruction");
        }
        let (c, b) = both(LinalgOp::SvdVals(SvdVals::default()), &[&t]);
        same::<T::Real>(&format!("svd_vals {m}×{n}"), 0, &c, &b);
        let (c, b) = both(LinalgOp::SvdFull(SvdFull::default()), &[&t]);
        same::<T::Real>(&format!("svd_full {m}×{n}"), 1, &c, &b);
        let thin = |o: &[Option<HostTensor>]| o[0].as_ref().unwrap().matrix::<T>(0).cols_range(0, k);
        assert!(rel(&projector(&thin(&c)), &projector(&thin(&b))) <= TOL, "svd_full {m}×{n}: U_k U_kᴴ");
        let (c, b) = both(LinalgOp::SvdTruncated(SvdTruncated(Truncation::Count(k / 2 + 1))), &[&t]);
        for i in 0..3 {
            if i == 1 {
                same::<T::Real>("svd_truncated", i, &c, &b);
            } else {
                same::<T>("svd_truncated", i, &c, &b);
            }
        }
        same_int("svd_truncated", 3, &c, &b);
    }
}

fn qr_family<T: Scalar + Element>(seed: u64) {
    let mut rng = Rng::new(seed);
    for (m, n) in [(7, 5), (5, 7), (6, 6), (40, 30)] {
        let a: Dense<T> = rng.matrix(m, n);
        let t = HostTensor::from_dense(&a);
        for mode in [QrMode::Reduced, QrMode::Complete] {
            let (c, b) = both(LinalgOp::Qr(Qr(QrOptions::default().mode(mode))), &[&t]);
            let what = format!("qr {m}×{n} {mode:?}");
            same::<T>(&what, 1, &c, &b);
            let k = m.min(n);
            let qk = |o: &[Option<HostTensor>]| o[0].as_ref().unwrap().matrix::<T>(0).cols_range(0, k).data;
            assert!(rel(&qk(&c), &qk(&b)) <= TOL, "{what}: Q[:, :k]");
        }
        let (c, b) = both(LinalgOp::RankRevealingQr(RankRevealingQr::default()), &[&t]);
        same_int("rank_revealing_qr perm", 2, &c, &b);
        same_int("rank_revealing_qr rank", 3, &c, &b);
        same::<T>("rank_revealing_qr q", 0, &c, &b);
        same::<T>("rank_revealing_qr r", 1, &c, &b);
    }
}

fn spectral<T: Scalar + Element>(seed: u64)
where
    T::Real: Element,
    Complex<T::Real>: Scalar + Element,
{
    let mut rng = Rng::new(seed);
    for n in [1, 5, 30] {
        // Hermitian with separated eigenvalues: Q diag(w) Qᴴ.
        let q: Dense<T> = rng.unitary(n);
        let w: Vec<T::Real> = (0..n).map(|i| <T::Real as Scalar>::from_f64(1.0 + i as f64)).collect();
        let h = q.scale_cols(&w).matmul(&q.adjoint());
        let t = HostTensor::from_dense(&h);
        let (c, b) = both(LinalgOp::Eigh(Eigh::default()), &[&t]);
        same::<T::Real>("eigh w", 0, &c, &b);
        same::<T>("eigh v", 1, &c, &b);
        let (c, b) = both(LinalgOp::EighVals(EighVals::default()), &[&t]);
        same::<T::Real>("eigh_vals", 0, &c, &b);
        // General with separated real eigenvalues: X diag(w) X⁻¹ via a
        // triangular similarity (X unit upper with small entries).
        let mut x: Dense<T> = Dense::eye(n, n);
        for j in 0..n {
            for i in 0..j {
                x[(i, j)] = rng.scalar::<T>().scale(<T::Real as Scalar>::from_f64(0.2));
            }
        }
        let ut = Dense::from_fn(n, n, |i, j| {
            if i == j {
                T::from_real(w[i])
            } else if i < j {
                x[(i, j)]
            } else {
                T::zero()
            }
        });
        let a = q.matmul(&ut).matmul(&q.adjoint());
        let t = HostTensor::from_dense(&a);
        let (c, b) = both(LinalgOp::Eig(Eig), &[&t]);
        same::<Complex<T::Real>>("eig w", 0, &c, &b);
        same::<Complex<T::Real>>("eig v", 1, &c, &b);
        // Cholesky of the Hermitian positive definite `h`.
        let (c, b) = both(LinalgOp::Cholesky(Cholesky), &[&HostTensor::from_dense(&h)]);
        same::<T>("cholesky", 0, &c, &b);
    }
}

fn lu_family<T: Scalar + Element>(seed: u64) {
    let mut rng = Rng::new(seed);
    for (m, n) in [(6, 6), (7, 4), (4, 7), (30, 30)] {
        let a: Dense<T> = rng.matrix(m, n);
        let t = HostTensor::from_dense(&a);
        let (c, b) = both(LinalgOp::Lu(Lu), &[&t]);
        same_int("lu perm", 0, &c, &b);
        same::<T>("lu l", 1, &c, &b);
        same::<T>("lu u", 2, &c, &b);
        if m == n {
            let rhs = HostTensor::from_dense(&rng.matrix::<T>(n, 3));
            let (c, b) = both(LinalgOp::LuFactorSolve(LuFactorSolve::default()), &[&t, &rhs]);
            same::<T>("solve x", 0, &c, &b);
            same::<T>("solve lu", 1, &c, &b);
            let (lu, perm) = (c[1].as_ref().unwrap(), c[2].as_ref().unwrap());
            for op in [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint] {
                let (c, b) = both(LinalgOp::LuSolvePrepared(LuSolvePrepared::new(op)), &[lu, perm, &rhs]);
                same::<T>("lu_solve_prepared", 0, &c, &b);
            }
            let (c, b) = both(LinalgOp::Det(Det), &[&t]);
            same::<T>("det", 0, &c, &b);
            // Triangular solves on the well-conditioned U factor.
            let upper = HostTensor::from_dense(&c_upper(&a));
            for side in [Side::Left, Side::Right] {
                for op in [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint] {
                    for triangle in [Triangle::Lower, Triangle::Upper] {
                        let opts = TriangularSolveOptions::default().side(side).op(op).triangle(triangle);
                        let rhs =
                            if side == Side::Left { rng.matrix::<T>(n, 2) } else { rng.matrix::<T>(2, n) };
                        let rhs = HostTensor::from_dense(&rhs);
                        let (c, b) = both(LinalgOp::TriangularSolve(TriangularSolve(opts)), &[&upper, &rhs]);
                        same::<T>("triangular_solve", 0, &c, &b);
                    }
                }
            }
        }
    }
}

/// A matrix whose both triangles are well conditioned: `a` plus a large
/// diagonal.
fn c_upper<T: Scalar>(a: &Dense<T>) -> Dense<T> {
    let mut d = a.clone();
    for i in 0..a.rows {
        d[(i, i)] += T::from_real(<T::Real as Scalar>::from_f64(4.0));
    }
    d
}

#[test]
fn svd_agrees() {
    svd_family::<f64>(1);
    svd_family::<Complex<f64>>(2);
}

#[test]
fn qr_agrees() {
    qr_family::<f64>(3);
    qr_family::<Complex<f64>>(4);
}

#[test]
fn eigh_eig_cholesky_agree() {
    spectral::<f64>(5);
    spectral::<Complex<f64>>(6);
}

#[test]
fn lu_solves_det_triangular_agree() {
    lu_family::<f64>(7);
    lu_family::<Complex<f64>>(8);
}
