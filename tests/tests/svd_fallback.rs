//! The SVD guard's fallback: with the guard forced to reject (test hook), every
//! guarded SVD is recomputed — by faer's QR algorithm after faer's divide and
//! conquer (complex input, and faer's QR-first path for tall shapes), by the
//! one-sided Jacobi SVD after lindiff-cpu's own (real input) — thin, full and
//! tall shapes, f32 and c64, and the results are accurate and allocation-free.
//! One test in its own binary: the hook is global.

use lindiff_core::face::direct::Direct;
use lindiff_core::{Ops, Scalar};
use lindiff_cpu::{svd_guard, Cpu};
use lindiff_tests::counting::{count, Counting};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use num_complex::Complex;
use std::sync::atomic::Ordering;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn check<T: Scalar>(la: &mut Direct<Cpu>, m: usize, n: usize, full: bool) {
    let mut rng = Rng::new((m * 1000 + n) as u64);
    let a: Dense<T> = rng.matrix(m, n);
    let t = la.tensor(&[m, n], &a.data).unwrap();
    let run = |la: &mut Direct<Cpu>| if full { la.svd_full(&t) } else { la.svd(&t) };
    drop(run(la).unwrap()); // warm the pool
    let (allocations, f) = count(|| run(la));
    let f = f.unwrap();
    assert_eq!(allocations, 0, "{m}×{n} full={full}: the fallback allocated");
    let (ud, vd) = (f.u.dims().to_vec(), f.vh.dims().to_vec());
    let u = Dense::from_col_major(ud[0], ud[1], f.u.to_vec::<T>().unwrap());
    let vh = Dense::from_col_major(vd[0], vd[1], f.vh.to_vec::<T>().unwrap());
    let s: Vec<Re<T>> = f.s.to_vec().unwrap();
    let k = m.min(n);
    let recon = u.cols_range(0, k).scale_cols(&s).matmul(&vh.rows_range(0, k));
    let tol = 30.0 * (m.max(n) as f64) * eps::<T>();
    let err = recon.sub(&a).norm() / a.norm();
    assert!(err < tol, "{m}×{n} full={full}: reconstruction {err:e}");
    assert!(u.orthonormality_error() < tol && vh.adjoint().orthonormality_error() < tol);
}

#[test]
fn forced_rejection_recomputes_accurately() {
    svd_guard::FORCE_REJECTION.store(true, Ordering::Relaxed);
    let mut la = Direct::new(Cpu::new());
    for &(m, n, full) in
        &[(130, 130, false), (130, 130, true), (300, 130, false), (300, 130, true), (130, 300, true)]
    {
        check::<f64>(&mut la, m, n, full);
        check::<Complex<f64>>(&mut la, m, n, full);
    }
    check::<f32>(&mut la, 140, 128, false);
    check::<Complex<f32>>(&mut la, 128, 140, false);
    svd_guard::FORCE_REJECTION.store(false, Ordering::Relaxed);
    // Two runs (warm-up and measured) per case above.
    assert_eq!(
        svd_guard::FALLBACKS.load(Ordering::Relaxed),
        2 * (2 * 5 + 2),
        "the fallback ran for every call"
    );
}
