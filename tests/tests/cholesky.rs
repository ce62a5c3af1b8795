//! Cholesky on every host provider: L Lᴴ = A for Hermitian positive definite
//! input (X Xᴴ + n I), zeros above the diagonal, a real positive diagonal,
//! the strict upper triangle and the imaginary part of the diagonal ignored,
//! batches (with the lowest failing item reported), a row-major input,
//! NaN/∞ errors.

use lindiff_core::op::Cholesky;
use lindiff_core::{Host, LinalgOp, Provider, Scalar, TensorDesc};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

fn real<T: Scalar>(x: f64) -> Re<T> {
    <Re<T> as Scalar>::from_f64(x)
}

/// X Xᴴ + n I for a random n×n X: Hermitian positive definite.
fn hpd<T: Scalar>(rng: &mut Rng, n: usize) -> Dense<T> {
    let x: Dense<T> = rng.matrix(n, n);
    let mut a = x.matmul(&x.adjoint());
    for i in 0..n {
        // Exactly Hermitian: a real diagonal and mirrored off-diagonal entries.
        a[(i, i)] = T::from_real(a[(i, i)].re() + real::<T>(n as f64));
        for j in 0..i {
            a[(j, i)] = a[(i, j)].conj();
        }
    }
    a
}

/// `a` with huge finite garbage strictly above the diagonal and (complex `T`)
/// a nonzero imaginary part on the diagonal.
fn with_garbage<T: Scalar>(a: &Dense<T>, rng: &mut Rng) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |i, j| {
        let g: T = rng.scalar();
        if i < j {
            g.scale(real::<T>(1e30))
        } else if i == j {
            T::from_parts(a[(i, i)].re(), real::<T>(3.0) + g.re())
        } else {
            a[(i, j)]
        }
    })
}

/// Checks that `l` is a Cholesky factor of the Hermitian `a`.
fn check_factor<T: Scalar>(a: &Dense<T>, l: &Dense<T>, what: &str) {
    let n = a.rows;
    assert_eq!((l.rows, l.cols), (n, n), "{what}: shape");
    for j in 0..n {
        for i in 0..j {
            assert!(l[(i, j)] == T::zero(), "{what}: l[{i},{j}] = {:?} above the diagonal", l[(i, j)]);
        }
        let d = l[(j, j)];
        assert!(d.re() > real::<T>(0.0) && d.im() == real::<T>(0.0), "{what}: diagonal l[{j},{j}] = {d:?}");
    }
    let tol = 50.0 * (n.max(1) as f64) * eps::<T>();
    let err = l.matmul(&l.adjoint()).sub(a).norm();
    assert!(err <= tol * a.norm().max(1.0), "{what}: ‖L Lᴴ − A‖ = {err}");
}

fn factor<T: Scalar, P: Provider<Memory = Host>>(p: &P, input: &HostTensor) -> Dense<T> {
    let outs = run(p, LinalgOp::Cholesky(Cholesky), &[input]).unwrap();
    outs[0].as_ref().unwrap().matrix(0)
}

/// Random HPD input with garbage in the ignored parts, n = `n`.
fn random<T: Scalar, P: Provider<Memory = Host>>(p: &P, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let a: Dense<T> = hpd(&mut rng, n);
    let what = format!("cholesky {:?} n={n}", T::DTYPE);
    let l = factor::<T, P>(p, &HostTensor::from_dense(&with_garbage(&a, &mut rng)));
    check_factor(&a, &l, &what);
    // NaN strictly above the diagonal is ignored too.
    let mut upper_nan = a.clone();
    if n > 1 {
        upper_nan[(0, n - 1)] = T::from_f64(f64::NAN);
    }
    check_factor(&a, &factor::<T, P>(p, &HostTensor::from_dense(&upper_nan)), &what);
}

/// A hand-computed factor: [[4, 2], [2, 5]] = L Lᴴ with L = [[2, 0], [1, 2]]
/// (complex: [[4, 2i], [−2i, 5]] with L = [[2, 0], [−i, 2]]).
fn known<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let off = if T::IS_COMPLEX { T::from_parts(real::<T>(0.0), real::<T>(-2.0)) } else { T::from_f64(2.0) };
    let a = Dense::from_col_major(2, 2, vec![T::from_f64(4.0), off, off.conj(), T::from_f64(5.0)]);
    let l = factor::<T, P>(p, &HostTensor::from_dense(&a));
    let l10 = if T::IS_COMPLEX { T::from_parts(real::<T>(0.0), real::<T>(-1.0)) } else { T::from_f64(1.0) };
    let expected = Dense::from_col_major(2, 2, vec![T::from_f64(2.0), l10, T::zero(), T::from_f64(2.0)]);
    assert!(l.sub(&expected).norm() <= 10.0 * eps::<T>(), "cholesky known: {:?}", l.data);
}

/// A batch of 4 whose items 2 and 3 are not positive definite: the error
/// names item 2. Then the valid prefix as a batch, each item checked.
fn batch<T: Scalar, P: Provider<Memory = Host>>(p: &P, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut items: Vec<Dense<T>> = (0..4).map(|_| hpd(&mut rng, n)).collect();
    // Item 2: indefinite (a negative eigenvalue); item 3: zero pivot.
    items[2] = {
        let x: Dense<T> = rng.matrix(n, n);
        let mut m = x.matmul(&x.adjoint());
        for i in 0..n {
            m[(i, i)] = T::from_real(m[(i, i)].re() - real::<T>(100.0 * n as f64));
        }
        m
    };
    items[3] = Dense::zeros(n, n);
    let err = run(p, LinalgOp::Cholesky(Cholesky), &[&HostTensor::batch(&items)])
        .err()
        .expect("non-positive-definite input accepted");
    assert_eq!(err.to_string(), "cholesky: argument `a` is not positive definite (batch item 2)");
    let good: Vec<Dense<T>> = items[..2].iter().map(|a| with_garbage(a, &mut rng)).collect();
    let outs = run(p, LinalgOp::Cholesky(Cholesky), &[&HostTensor::batch(&good)]).unwrap();
    let lt = outs[0].as_ref().unwrap();
    assert_eq!(lt.dims(), &[n, n, 2]);
    for (b, a) in items[..2].iter().enumerate() {
        check_factor(a, &lt.matrix(b), &format!("cholesky batch item {b}"));
    }
}

/// Row-major storage: the logical lower triangle is read.
fn row_major<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let n = 6;
    let a: Dense<T> = hpd(&mut rng, n);
    let dirty = with_garbage(&a, &mut rng);
    let data: Vec<T> = (0..n).flat_map(|i| (0..n).map(|j| dirty[(i, j)]).collect::<Vec<_>>()).collect();
    let desc = TensorDesc::row_major_matrix(T::DTYPE, n, n).unwrap();
    check_factor(&a, &factor::<T, P>(p, &HostTensor::with_desc(desc, &data)), "cholesky row-major");
}

/// NaN/∞ in the lower triangle of an n×n input is an error naming the
/// batch item.
fn non_finite<T: Scalar, P: Provider<Memory = Host>>(p: &P, n: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let good: Dense<T> = hpd(&mut rng, n);
    let mut bad = good.clone();
    bad[(n - 1, n / 2)] = T::from_f64(f64::NAN);
    let err = run(p, LinalgOp::Cholesky(Cholesky), &[&HostTensor::batch(&[good.clone(), bad])])
        .err()
        .expect("NaN accepted");
    assert_eq!(err.to_string(), "cholesky: argument `a` contains NaN or infinity (batch item 1)");
    let mut diag_inf = good;
    diag_inf[(n / 2, n / 2)] = T::from_f64(f64::INFINITY);
    let err = run(p, LinalgOp::Cholesky(Cholesky), &[&HostTensor::from_dense(&diag_inf)])
        .err()
        .expect("∞ accepted");
    assert_eq!(err.to_string(), "cholesky: argument `a` contains NaN or infinity (batch item 0)");
}

fn dtype_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    // Across the provider's thresholds: host-cpu runs its own kernel for
    // real n ≤ 132 (at 128 on a padded copy), copies the triangle alone
    // from 64 on and re-zeroes only faer's 64-aligned diagonal blocks.
    for n in [0, 1, 2, 5, 30, 63, 64, 65, 70, 96, 97, 128, 130, 132, 133, 200] {
        random::<T, P>(p, n, seed + n as u64);
    }
    known::<T, P>(p);
    for n in [5, 128] {
        batch::<T, P>(p, n, seed + 100 + n as u64);
        non_finite::<T, P>(p, n, seed + 300 + n as u64);
    }
    row_major::<T, P>(p, seed + 200);
}

/// The whole suite on one provider.
pub fn suite<P: Provider<Memory = Host>>(p: &P) {
    dtype_suite::<f64, P>(p, 1_000);
    dtype_suite::<f32, P>(p, 2_000);
    dtype_suite::<Complex<f64>, P>(p, 3_000);
    dtype_suite::<Complex<f32>, P>(p, 4_000);
}

fn cholesky<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(cholesky);
