//! Eigendecompositions on every host provider.
//!
//! eigh / eigh_vals: reconstruction of the Hermitian matrix built from the
//! lower triangle, orthonormality, ascending real values, canonical phases,
//! the strict upper triangle and the imaginary part of the diagonal ignored,
//! repeated eigenvalues, batches, a row-major input, NaN/∞ errors.
//! eig / eig_vals: A V = V diag(w) in complex arithmetic, unit-norm columns,
//! canonical phases, the (real part, imaginary part) ascending order, real
//! input with complex-conjugate pairs, batches, a row-major input, errors.

use lindiff_core::op::{Eig, EigVals, Eigh, EighVals};
use lindiff_core::{Host, LinalgOp, Provider, RealScalar, Scalar, TensorDesc};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// The complex type of `T`'s precision (the dtype of eig's outputs).
type C<T> = Complex<Re<T>>;

fn real<T: Scalar>(x: f64) -> Re<T> {
    <Re<T> as Scalar>::from_f64(x)
}

/// The Hermitian matrix whose lower triangle is that of `a`, with the
/// imaginary part of the diagonal dropped.
fn hermitian_from_lower<T: Scalar>(a: &Dense<T>) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |i, j| {
        if i > j {
            a[(i, j)]
        } else if i < j {
            a[(j, i)].conj()
        } else {
            T::from_real(a[(i, i)].re())
        }
    })
}

/// `a` with huge finite garbage in its strict upper triangle and (complex
/// `T`) a nonzero imaginary part on its diagonal.
fn with_garbage<T: Scalar>(a: &Dense<T>, rng: &mut Rng) -> Dense<T> {
    let big = real::<T>(1e30);
    Dense::from_fn(a.rows, a.cols, |i, j| {
        let g: T = rng.scalar();
        if i < j {
            g.scale(big)
        } else if i == j {
            T::from_parts(a[(i, i)].re(), g.re().scale(real::<T>(7.0)))
        } else {
            a[(i, j)]
        }
    })
}

/// A random n×n Hermitian matrix.
fn random_hermitian<T: Scalar>(rng: &mut Rng, n: usize) -> Dense<T> {
    hermitian_from_lower(&rng.matrix::<T>(n, n))
}

/// Asserts that the largest-magnitude entry of each column (the first one
/// within a rounding tie) is real and positive.
fn assert_canonical_phase<S: Scalar>(v: &Dense<S>, tol: f64, what: &str) {
    for j in 0..v.cols {
        let best = (0..v.rows).map(|i| v[(i, j)].abs().to_f64()).fold(0.0, f64::max);
        if best == 0.0 {
            continue;
        }
        // Any entry within rounding of the maximum may be the pivot.
        let ok = (0..v.rows).any(|i| {
            let x = v[(i, j)];
            x.abs().to_f64() >= best * (1.0 - tol)
                && x.re().to_f64() > 0.0
                && x.im().to_f64().abs() <= tol * best
        });
        assert!(ok, "{what}: column {j} does not have the canonical phase: {:?}", v.cols_range(j, 1).data);
    }
}

/// Checks an eigh result (w, V) against the Hermitian matrix `h`.
fn check_eigh_result<T: Scalar>(h: &Dense<T>, w: &[Re<T>], v: &Dense<T>, what: &str) {
    let n = h.rows;
    let tol = 50.0 * (n.max(1) as f64) * eps::<T>();
    assert_eq!((w.len(), v.rows, v.cols), (n, n, n), "{what}: shapes");
    for i in 1..n {
        assert!(w[i - 1] <= w[i], "{what}: eigenvalues not ascending: {w:?}");
    }
    let recon = v.scale_cols(w).matmul(&v.adjoint());
    let scale = h.norm().max(1.0);
    assert!(recon.sub(h).norm() <= tol * scale, "{what}: reconstruction error {}", recon.sub(h).norm());
    assert!(v.orthonormality_error() <= tol, "{what}: orthonormality {}", v.orthonormality_error());
    assert_canonical_phase(v, tol, what);
}

fn eigh_outputs<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &HostTensor) -> (Vec<Re<T>>, Dense<T>) {
    let outs = run(p, LinalgOp::Eigh(Eigh::default()), &[a]).unwrap();
    (outs[0].as_ref().unwrap().to_vec(), outs[1].as_ref().unwrap().matrix(0))
}

fn eigh_values<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &HostTensor) -> Vec<Re<T>> {
    let outs = run(p, LinalgOp::EighVals(EighVals::default()), &[a]).unwrap();
    outs[0].as_ref().unwrap().to_vec()
}

/// Random Hermitian input with garbage above the diagonal: the result is
/// that of the clean Hermitian matrix, and `eigh_vals` agrees with `eigh`.
fn eigh_random<T: Scalar, P: Provider<Memory = Host>>(p: &P, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let h: Dense<T> = random_hermitian(&mut rng, n);
    let dirty = with_garbage(&h, &mut rng);
    let what = format!("eigh {:?} n={n}", T::DTYPE);
    let (w, v) = eigh_outputs::<T, P>(p, &HostTensor::from_dense(&dirty));
    check_eigh_result(&h, &w, &v, &what);
    let tol = 50.0 * (n.max(1) as f64) * eps::<T>();
    let scale = h.norm().max(1.0);
    // Garbage in the strict upper triangle and on the imaginary diagonal is ignored.
    let (wc, vc) = eigh_outputs::<T, P>(p, &HostTensor::from_dense(&h));
    for i in 0..n {
        assert!((w[i].to_f64() - wc[i].to_f64()).abs() <= tol * scale, "{what}: garbage changed w");
    }
    assert!(v.sub(&vc).norm() <= tol * 1e3, "{what}: garbage changed v by {}", v.sub(&vc).norm());
    // Values only agree with the full op.
    let wv = eigh_values::<T, P>(p, &HostTensor::from_dense(&dirty));
    assert_eq!(wv.len(), n);
    for i in 0..n {
        assert!((wv[i].to_f64() - w[i].to_f64()).abs() <= tol * scale, "{what}: eigh_vals differs");
    }
}

/// Eigenvalues (1, 1, 2, 3, 4): a repeated value still reconstructs.
fn eigh_repeated<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let spectrum = [1.0, 1.0, 2.0, 3.0, 4.0];
    let q = rng.unitary::<T>(5);
    let d: Vec<Re<T>> = spectrum.iter().map(|&x| real::<T>(x)).collect();
    let h = hermitian_from_lower(&q.scale_cols(&d).matmul(&q.adjoint()));
    let what = format!("eigh repeated {:?}", T::DTYPE);
    let (w, v) = eigh_outputs::<T, P>(p, &HostTensor::from_dense(&h));
    check_eigh_result(&h, &w, &v, &what);
    let tol = 50.0 * 5.0 * eps::<T>();
    for (x, &e) in w.iter().zip(&spectrum) {
        assert!((x.to_f64() - e).abs() <= tol * 4.0, "{what}: w = {w:?}");
    }
}

/// A batch of 3, each item checked; then a row-major input.
fn eigh_batch_and_row_major<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let n = 6;
    let hs: Vec<Dense<T>> = (0..3).map(|_| random_hermitian(&mut rng, n)).collect();
    let dirty: Vec<Dense<T>> = hs.iter().map(|h| with_garbage(h, &mut rng)).collect();
    let outs = run(p, LinalgOp::Eigh(Eigh::default()), &[&HostTensor::batch(&dirty)]).unwrap();
    let (wt, vt) = (outs[0].as_ref().unwrap(), outs[1].as_ref().unwrap());
    assert_eq!(wt.dims(), &[n, 3]);
    assert_eq!(vt.dims(), &[n, n, 3]);
    for (b, h) in hs.iter().enumerate() {
        check_eigh_result(h, &wt.item::<Re<T>>(1, b), &vt.matrix(b), &format!("eigh batch item {b}"));
    }
    let vals = run(p, LinalgOp::EighVals(EighVals::default()), &[&HostTensor::batch(&dirty)]).unwrap();
    let wv = vals[0].as_ref().unwrap();
    let tol = 50.0 * n as f64 * eps::<T>();
    for (b, h) in hs.iter().enumerate() {
        for (x, y) in wv.item::<Re<T>>(1, b).iter().zip(wt.item::<Re<T>>(1, b)) {
            assert!((x.to_f64() - y.to_f64()).abs() <= tol * h.norm(), "eigh_vals batch item {b}");
        }
    }
    // Row-major storage of the same (dirty) matrix: its logical lower triangle is read.
    let a = &dirty[0];
    let row_major: Vec<T> = (0..n).flat_map(|i| (0..n).map(move |j| a[(i, j)])).collect();
    let desc = TensorDesc::row_major_matrix(T::DTYPE, n, n).unwrap();
    let (w, v) = eigh_outputs::<T, P>(p, &HostTensor::with_desc(desc, &row_major));
    check_eigh_result(&hs[0], &w, &v, "eigh row-major");
}

/// NaN/∞ in the lower triangle is an error naming the batch item; in the
/// ignored parts (strict upper triangle, imaginary diagonal) it is not.
fn eigh_non_finite<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let mut rng = Rng::new(77);
    let n = 4;
    let good: Dense<T> = random_hermitian(&mut rng, n);
    let mut bad = good.clone();
    bad[(2, 1)] = T::from_f64(f64::NAN);
    for op in [LinalgOp::Eigh(Eigh::default()), LinalgOp::EighVals(EighVals::default())] {
        let name = op.name();
        let err =
            run(p, op, &[&HostTensor::batch(&[good.clone(), bad.clone()])]).err().expect("NaN accepted");
        assert_eq!(err.to_string(), format!("{name}: argument `a` contains NaN or infinity (batch item 1)"));
    }
    let mut diag_inf = good.clone();
    diag_inf[(3, 3)] = T::from_f64(f64::INFINITY);
    assert!(run(p, LinalgOp::Eigh(Eigh::default()), &[&HostTensor::from_dense(&diag_inf)]).is_err());
    let mut upper_nan = good.clone();
    upper_nan[(0, 3)] = T::from_f64(f64::NAN);
    if T::IS_COMPLEX {
        upper_nan[(1, 1)] = T::from_parts(good[(1, 1)].re(), real::<T>(f64::INFINITY));
    }
    let (w, v) = eigh_outputs::<T, P>(p, &HostTensor::from_dense(&upper_nan));
    check_eigh_result(&good, &w, &v, "eigh with NaN above the diagonal");
}

fn eigh_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    for n in [0, 1, 2, 5, 9, 30] {
        eigh_random::<T, P>(p, n, seed + n as u64);
    }
    eigh_repeated::<T, P>(p, seed + 100);
    eigh_batch_and_row_major::<T, P>(p, seed + 200);
    eigh_non_finite::<T, P>(p);
}

// ---- eig ----

fn to_complex<T: Scalar>(a: &Dense<T>) -> Dense<C<T>>
where
    C<T>: Scalar<Real = Re<T>>,
{
    Dense::from_fn(a.rows, a.cols, |i, j| Complex::new(a[(i, j)].re(), a[(i, j)].im()))
}

/// Checks an eig result (w, V) for the matrix `a`: A V = V diag(w), unit
/// columns, canonical phase, sorted values.
fn check_eig_result<T: Scalar>(a: &Dense<T>, w: &[C<T>], v: &Dense<C<T>>, what: &str)
where
    C<T>: Scalar<Real = Re<T>>,
{
    let n = a.rows;
    let tol = 50.0 * (n.max(1) as f64) * eps::<T>();
    assert_eq!((w.len(), v.rows, v.cols), (n, n, n), "{what}: shapes");
    assert_sorted::<T>(w, what);
    let ac = to_complex(a);
    let wv = Dense::from_fn(n, n, |i, j| v[(i, j)] * w[j]);
    let resid = ac.matmul(v).sub(&wv).norm();
    assert!(resid <= tol * a.norm().max(1.0), "{what}: ‖AV − VΛ‖ = {resid}");
    for j in 0..n {
        let norm = v.cols_range(j, 1).norm();
        assert!((norm - 1.0).abs() <= tol, "{what}: column {j} has norm {norm}");
    }
    assert_canonical_phase(v, tol, what);
}

/// Eigenvalues in (real part, imaginary part) ascending order, exactly.
fn assert_sorted<T: Scalar>(w: &[C<T>], what: &str) {
    for k in 1..w.len() {
        let (x, y) = (w[k - 1], w[k]);
        assert!(x.re < y.re || (x.re == y.re && x.im <= y.im), "{what}: eigenvalues not sorted: {w:?}");
    }
}

fn eig_outputs<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &HostTensor) -> (Vec<C<T>>, Dense<C<T>>)
where
    C<T>: Scalar<Real = Re<T>>,
{
    let outs = run(p, LinalgOp::Eig(Eig), &[a]).unwrap();
    (outs[0].as_ref().unwrap().to_vec(), outs[1].as_ref().unwrap().matrix(0))
}

fn assert_values_close<T: Scalar>(x: &[C<T>], y: &[C<T>], tol: f64, what: &str)
where
    C<T>: Scalar<Real = Re<T>>,
{
    assert_eq!(x.len(), y.len(), "{what}: lengths");
    for (a, b) in x.iter().zip(y) {
        assert!((*a - *b).abs().to_f64() <= tol, "{what}: {x:?} vs {y:?}");
    }
}

/// Random input: the properties, and eig_vals agreeing with eig.
fn eig_random<T: Scalar, P: Provider<Memory = Host>>(p: &P, n: usize, seed: u64)
where
    C<T>: Scalar<Real = Re<T>>,
{
    let mut rng = Rng::new(seed);
    let a: Dense<T> = rng.matrix(n, n);
    let what = format!("eig {:?} n={n}", T::DTYPE);
    let (w, v) = eig_outputs::<T, P>(p, &HostTensor::from_dense(&a));
    check_eig_result(&a, &w, &v, &what);
    let vals = run(p, LinalgOp::EigVals(EigVals), &[&HostTensor::from_dense(&a)]).unwrap();
    let wv: Vec<C<T>> = vals[0].as_ref().unwrap().to_vec();
    assert_sorted::<T>(&wv, &what);
    // Eigenvalues of a random matrix are ~well conditioned; generous bound.
    let tol = 1e3 * (n.max(1) as f64) * eps::<T>() * a.norm().max(1.0);
    assert_values_close::<T>(&wv, &w, tol, &format!("{what}: eig_vals vs eig"));
}

/// `Q B Q⁻¹` for a random unitary `Q` (`Qᴴ` = `Q⁻¹`).
fn similar<T: Scalar>(rng: &mut Rng, b: &Dense<T>) -> Dense<T> {
    let q = rng.unitary::<T>(b.rows);
    q.matmul(b).matmul(&q.adjoint())
}

/// Known spectra, hand-sorted: for real input a rotation block (a conjugate
/// pair), for complex input distinct real parts.
fn eig_known<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64)
where
    C<T>: Scalar<Real = Re<T>>,
{
    let mut rng = Rng::new(seed);
    let c = |re: f64, im: f64| Complex::new(real::<T>(re), real::<T>(im));
    let (b, expected) = if T::IS_COMPLEX {
        // Upper triangular with diagonal (2+i, −1−3i, 0.5i, 4).
        let diag = [(2.0, 1.0), (-1.0, -3.0), (0.0, 0.5), (4.0, 0.0)];
        let b = Dense::from_fn(4, 4, |i, j| {
            if i == j {
                T::from_parts(real::<T>(diag[i].0), real::<T>(diag[i].1))
            } else if i < j {
                T::from_f64(0.5 + (i + 2 * j) as f64 * 0.25)
            } else {
                T::zero()
            }
        });
        (b, vec![c(-1.0, -3.0), c(0.0, 0.5), c(2.0, 1.0), c(4.0, 0.0)])
    } else {
        // [[0.5, −2], [2, 0.5]] ⊕ 3 ⊕ −1: eigenvalues 0.5 ± 2i, 3, −1.
        let mut b = Dense::<T>::zeros(4, 4);
        b[(0, 0)] = T::from_f64(0.5);
        b[(0, 1)] = T::from_f64(-2.0);
        b[(1, 0)] = T::from_f64(2.0);
        b[(1, 1)] = T::from_f64(0.5);
        b[(2, 2)] = T::from_f64(3.0);
        b[(3, 3)] = T::from_f64(-1.0);
        (b, vec![c(-1.0, 0.0), c(0.5, -2.0), c(0.5, 2.0), c(3.0, 0.0)])
    };
    let a = similar(&mut rng, &b);
    let what = format!("eig known {:?}", T::DTYPE);
    let (w, v) = eig_outputs::<T, P>(p, &HostTensor::from_dense(&a));
    check_eig_result(&a, &w, &v, &what);
    let tol = 1e3 * eps::<T>() * a.norm();
    assert_values_close::<T>(&w, &expected, tol, &what);
    if !T::IS_COMPLEX {
        // The conjugate pair of a real input: exactly conjugate values and vectors.
        assert!(w[1].re == w[2].re && w[1].im == -w[2].im, "{what}: pair {:?} {:?}", w[1], w[2]);
        // The real eigenvalues have real eigenvectors.
        for j in [0, 3] {
            for i in 0..4 {
                assert!(v[(i, j)].im == real::<T>(0.0), "{what}: real eigenvector {j} has an imaginary part");
            }
        }
    }
    // A pure rotation: eigenvalues ∓i, in that order.
    let mut rot = Dense::<T>::zeros(2, 2);
    rot[(0, 1)] = T::from_f64(-1.0);
    rot[(1, 0)] = T::from_f64(1.0);
    let (w, v) = eig_outputs::<T, P>(p, &HostTensor::from_dense(&rot));
    check_eig_result(&rot, &w, &v, "eig rotation");
    assert_values_close::<T>(&w, &[c(0.0, -1.0), c(0.0, 1.0)], 50.0 * eps::<T>(), "eig rotation");
}

/// A batch of 3, each item checked; a row-major input; NaN errors.
fn eig_batch_row_major_errors<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64)
where
    C<T>: Scalar<Real = Re<T>>,
{
    let mut rng = Rng::new(seed);
    let n = 5;
    let items: Vec<Dense<T>> = (0..3).map(|_| rng.matrix(n, n)).collect();
    let input = HostTensor::batch(&items);
    let outs = run(p, LinalgOp::Eig(Eig), &[&input]).unwrap();
    let (wt, vt) = (outs[0].as_ref().unwrap(), outs[1].as_ref().unwrap());
    assert_eq!(wt.dims(), &[n, 3]);
    assert_eq!(vt.dims(), &[n, n, 3]);
    let vals = run(p, LinalgOp::EigVals(EigVals), &[&input]).unwrap();
    let wv = vals[0].as_ref().unwrap();
    for (b, a) in items.iter().enumerate() {
        let w = wt.item::<C<T>>(1, b);
        check_eig_result(a, &w, &vt.matrix(b), &format!("eig batch item {b}"));
        let tol = 1e3 * n as f64 * eps::<T>() * a.norm();
        assert_values_close::<T>(&wv.item::<C<T>>(1, b), &w, tol, &format!("eig_vals batch item {b}"));
    }
    // Row-major storage of items[0].
    let a = &items[0];
    let row_major: Vec<T> = (0..n).flat_map(|i| (0..n).map(move |j| a[(i, j)])).collect();
    let desc = TensorDesc::row_major_matrix(T::DTYPE, n, n).unwrap();
    let (w, v) = eig_outputs::<T, P>(p, &HostTensor::with_desc(desc, &row_major));
    check_eig_result(a, &w, &v, "eig row-major");
    // Non-finite entries anywhere are errors naming the batch item.
    let mut bad = items.clone();
    bad[2][(0, 4)] = T::from_f64(f64::INFINITY);
    for op in [LinalgOp::Eig(Eig), LinalgOp::EigVals(EigVals)] {
        let name = op.name();
        let err = run(p, op, &[&HostTensor::batch(&bad)]).err().expect("∞ accepted");
        assert_eq!(err.to_string(), format!("{name}: argument `a` contains NaN or infinity (batch item 2)"));
    }
}

fn eig_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64)
where
    C<T>: Scalar<Real = Re<T>>,
{
    for n in [0, 1, 2, 4, 9, 30] {
        eig_random::<T, P>(p, n, seed + n as u64);
    }
    eig_known::<T, P>(p, seed + 100);
    eig_batch_row_major_errors::<T, P>(p, seed + 200);
}

/// The whole suite on one provider.
pub fn suite<P: Provider<Memory = Host>>(p: &P) {
    eigh_suite::<f64, P>(p, 1_000);
    eigh_suite::<f32, P>(p, 2_000);
    eigh_suite::<Complex<f64>, P>(p, 3_000);
    eigh_suite::<Complex<f32>, P>(p, 4_000);
    // Divide and conquer with vectors (n ≥ 128).
    eigh_random::<f64, P>(p, 130, 5_000);
    eigh_random::<Complex<f64>, P>(p, 130, 5_001);
    eig_suite::<f64, P>(p, 6_000);
    eig_suite::<f32, P>(p, 7_000);
    eig_suite::<Complex<f64>, P>(p, 8_000);
    eig_suite::<Complex<f32>, P>(p, 9_000);
}

fn eig<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(eig);
