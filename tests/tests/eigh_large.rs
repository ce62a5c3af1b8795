//! eigh at the sizes where host-cpu runs its own tridiagonal divide and
//! conquer (real matrices from n = 128; faer's kernel below and for complex
//! ones): known spectra — distinct, repeated, clustered to 1e-10, rank one,
//! graded over 24 decades, zero — and the second-difference matrix, whose
//! eigenvalues 2 − 2cos(kπ/(n + 1)) are known in closed form; residual
//! ‖A V − V diag(w)‖, orthonormality, canonical phases, ascending order,
//! and agreement with eigh_vals (values alone, another algorithm).

use lindiff_core::op::{Eigh, EighVals};
use lindiff_core::{Host, LinalgOp, Provider, RealScalar, Scalar};
use lindiff_tests::dense::{eps, Dense, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type Re<T> = <T as Scalar>::Real;

/// Runs eigh on `a` and checks it: eigenvalues ascending and within
/// `c·n·ε·‖A‖₂` of `want` (sorted ascending) when given, residual and
/// orthonormality within `c·n·ε`, canonical phases, and eigh_vals' values
/// within the same bound of eigh's.
fn check<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &Dense<T>, want: Option<&[f64]>, what: &str) {
    let n = a.rows;
    let tensor = HostTensor::from_dense(a);
    let out = run(p, LinalgOp::Eigh(Eigh::default()), &[&tensor]).unwrap_or_else(|e| panic!("{what}: {e}"));
    let w: Vec<f64> = out[0].as_ref().unwrap().to_vec::<Re<T>>().iter().map(|x| x.to_f64()).collect();
    let v = Dense::from_col_major(n, n, out[1].as_ref().unwrap().to_vec::<T>());
    let scale = w.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(f64::MIN_POSITIVE);
    let bound = 4.0 * n as f64 * eps::<T>();
    assert!(w.windows(2).all(|p| p[0] <= p[1]), "{what}: eigenvalues not ascending");
    if let Some(want) = want {
        let mut want = want.to_vec();
        want.sort_by(f64::total_cmp);
        let dev = w.iter().zip(&want).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(dev <= bound * scale, "{what}: eigenvalues off by {dev:e} (bound {:e})", bound * scale);
    }
    let lambda: Vec<Re<T>> = w.iter().map(|&x| Re::<T>::from_f64(x)).collect();
    let residual = a.matmul(&v).sub(&v.scale_cols(&lambda)).norm() / (a.norm().max(f64::MIN_POSITIVE));
    assert!(residual <= bound, "{what}: residual {residual:e} (bound {bound:e})");
    let orth = v.orthonormality_error();
    assert!(orth <= bound, "{what}: ‖VᴴV − I‖ = {orth:e} (bound {bound:e})");
    assert_eq!(v.first_non_canonical_column(bound), None, "{what}: a column breaks the canonical phase");
    let vals = run(p, LinalgOp::EighVals(EighVals::default()), &[&tensor]).unwrap();
    let vals: Vec<f64> = vals[0].as_ref().unwrap().to_vec::<Re<T>>().iter().map(|x| x.to_f64()).collect();
    let dev = w.iter().zip(&vals).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(dev <= bound * scale, "{what}: eigh_vals differs from eigh by {dev:e}");
}

/// Q diag(λ) Qᴴ for a random unitary Q.
fn with_spectrum<T: Scalar>(rng: &mut Rng, lambda: &[f64]) -> Dense<T> {
    let q = rng.unitary::<T>(lambda.len());
    let l: Vec<Re<T>> = lambda.iter().map(|&x| Re::<T>::from_f64(x)).collect();
    q.scale_cols(&l).matmul(&q.adjoint())
}

fn spectra<T: Scalar, P: Provider<Memory = Host>>(p: &P, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let cases: [(&str, Vec<f64>); 6] = [
        ("distinct", (0..n).map(|i| (i as f64 * 0.37).sin() * 3.0).collect()),
        ("four values", (0..n).map(|i| (i % 4) as f64 - 1.5).collect()),
        ("clusters of 8, 1e-10 apart", (0..n).map(|i| (i / 8) as f64 + (i % 8) as f64 * 1e-10).collect()),
        ("rank one", (0..n).map(|i| if i == 0 { 2.0 } else { 0.0 }).collect()),
        ("graded over 24 decades", (0..n).map(|i| 10f64.powf(-12.0 + 24.0 * i as f64 / n as f64)).collect()),
        ("zero", vec![0.0; n]),
    ];
    for (what, lambda) in cases {
        let a = with_spectrum::<T>(&mut rng, &lambda);
        check::<T, P>(p, &a, Some(&lambda), &format!("{what}, n = {n}"));
    }
    // The second-difference matrix: eigenvalues 2 − 2cos(kπ/(n + 1)).
    let t = Dense::<T>::from_fn(n, n, |i, j| match i.abs_diff(j) {
        0 => T::from_f64(2.0),
        1 => T::from_f64(-1.0),
        _ => T::zero(),
    });
    let exact: Vec<f64> =
        (1..=n).map(|k| 2.0 - 2.0 * (k as f64 * std::f64::consts::PI / (n as f64 + 1.0)).cos()).collect();
    check::<T, P>(p, &t, Some(&exact), &format!("second difference, n = {n}"));
    // Glued blocks: tiny couplings between copies of a tridiagonal block,
    // where most of the rank-one tears deflate.
    let glued = Dense::<T>::from_fn(n, n, |i, j| match i.abs_diff(j) {
        0 => T::from_f64((10.0 - (i % 21) as f64).abs()),
        1 if i.min(j) % 21 == 20 => T::from_f64(1e-14),
        1 => T::one(),
        _ => T::zero(),
    });
    check::<T, P>(p, &glued, None, &format!("glued Wilkinson blocks, n = {n}"));
}

fn eigh_large<P: TestProvider>(provider: &P) {
    for (n, seed) in [(128, 1), (129, 2), (200, 3), (256, 4)] {
        spectra::<f64, P>(provider, n, seed);
    }
    spectra::<f32, P>(provider, 160, 5);
    spectra::<Complex<f64>, P>(provider, 130, 6);
}

lindiff_tests::providers!(eigh_large);
