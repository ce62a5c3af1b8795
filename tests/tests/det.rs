//! Determinants on every host provider: `det` and `slogdet` of hand-computed
//! matrices (exact), of `Q diag(d) Qᴴ` with unitary Q (det = Π d), of the
//! seed's singular matrix (a rounding-level value, never NaN or an error),
//! of the 0×0 matrix (1), of matrices whose determinant overflows (det
//! `OutOfRange`, slogdet still finite), batched and row-major, in every
//! dtype.

use lindiff_core::op::{Det, Slogdet};
use lindiff_core::{Host, LinalgOp, Provider, RealScalar, Scalar, TensorDesc};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

fn s<T: Scalar>(x: f64) -> T {
    T::from_f64(x)
}

fn c<T: Scalar>(re: f64, im: f64) -> T {
    T::from_parts(s::<T>(re).re(), s::<T>(im).re())
}

fn from_rows<T: Scalar>(rows: &[&[f64]]) -> Dense<T> {
    Dense::from_fn(rows.len(), rows[0].len(), |i, j| s(rows[i][j]))
}

fn det_of<T: Scalar, P: Provider<Memory = Host>>(p: &P, input: &HostTensor) -> Vec<T> {
    run(p, LinalgOp::Det(Det), &[input]).unwrap()[0].as_ref().unwrap().to_vec()
}

fn slogdet_of<T: Scalar, P: Provider<Memory = Host>>(p: &P, input: &HostTensor) -> (Vec<T>, Vec<Re<T>>) {
    let outs = run(p, LinalgOp::Slogdet(Slogdet), &[input]).unwrap();
    (outs[0].as_ref().unwrap().to_vec(), outs[1].as_ref().unwrap().to_vec())
}

/// |got − want| ≤ rtol · |want| (as complex numbers in f64).
fn assert_close<T: Scalar>(got: T, want: Complex<f64>, rtol: f64, what: &str) {
    let g = Complex::new(got.re().to_f64(), got.im().to_f64());
    assert!((g - want).norm() <= rtol * want.norm(), "{what}: {g} vs {want}");
}

fn empty<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let a = HostTensor::new::<T>(&[0, 0], &[]);
    assert_eq!(det_of::<T, P>(p, &a), vec![T::one()]);
    let (sign, log) = slogdet_of::<T, P>(p, &a);
    assert_eq!((sign, log), (vec![T::one()], vec![<Re<T> as Scalar>::zero()]));
    // A batch of three 0×0 matrices.
    let a = HostTensor::new::<T>(&[0, 0, 3], &[]);
    assert_eq!(det_of::<T, P>(p, &a), vec![T::one(); 3]);
}

/// Matrices whose determinant the LU computes exactly.
fn exact<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let cases: Vec<(Dense<T>, f64)> = vec![
        (from_rows(&[&[3.0, 2.0], &[1.0, 4.0]]), 10.0),
        (from_rows(&[&[7.0]]), 7.0),
        (
            from_rows(&[
                &[2.0, 0.0, 0.0, 0.0],
                &[0.0, -3.0, 0.0, 0.0],
                &[0.0, 0.0, 0.5, 0.0],
                &[0.0, 0.0, 0.0, 4.0],
            ]),
            -12.0,
        ),
        // Upper triangular: the product of the diagonal.
        (from_rows(&[&[2.0, 5.0, -7.0], &[0.0, 3.0, 11.0], &[0.0, 0.0, -1.0]]), -6.0),
        // Entries 3, 1, 4, 2 at columns σ = (2, 0, 3, 1) of rows 0..4: σ is the
        // 4-cycle 0→2→3→1→0, an odd permutation, so det = −24.
        (
            from_rows(&[
                &[0.0, 0.0, 3.0, 0.0],
                &[1.0, 0.0, 0.0, 0.0],
                &[0.0, 0.0, 0.0, 4.0],
                &[0.0, 2.0, 0.0, 0.0],
            ]),
            -24.0,
        ),
        // One swap of two rows of diag(5, 6, 7): −210.
        (from_rows(&[&[0.0, 6.0, 0.0], &[5.0, 0.0, 0.0], &[0.0, 0.0, 7.0]]), -210.0),
        // Lower triangular with power-of-two pivots.
        (from_rows(&[&[4.0, 0.0, 0.0], &[1.0, 2.0, 0.0], &[3.0, -1.0, 8.0]]), 64.0),
    ];
    for (a, want) in &cases {
        let input = HostTensor::from_dense(a);
        let det = det_of::<T, P>(p, &input);
        if *want == 10.0 {
            // [[3, 2], [1, 4]]: the multiplier 1/3 is rounded.
            assert_close(det[0], Complex::new(10.0, 0.0), 8.0 * eps::<T>(), "det [[3,2],[1,4]]");
        } else {
            assert_eq!(det, vec![s::<T>(*want)], "det of {a:?}");
        }
        let (sign, log) = slogdet_of::<T, P>(p, &input);
        assert_eq!(sign, vec![s::<T>(want.signum())], "sign of {a:?}");
        let l = log[0].to_f64();
        assert!(
            (l - want.abs().ln()).abs() <= 8.0 * eps::<T>() * want.abs().ln().abs().max(1.0),
            "logabsdet {l}"
        );
    }
    if T::IS_COMPLEX {
        // det [[1 + i, 2], [0, 3 − i]] = (1 + i)(3 − i) = 4 + 2i.
        let a = Dense::from_fn(2, 2, |i, j| [[c::<T>(1.0, 1.0), s(2.0)], [T::zero(), c(3.0, -1.0)]][i][j]);
        let det = det_of::<T, P>(p, &HostTensor::from_dense(&a));
        assert_eq!(det, vec![c::<T>(4.0, 2.0)]);
    }
}

/// The seed's singular matrix: a rounding-level determinant, no error, no NaN.
fn singular<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let a: Dense<T> = from_rows(&[&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], &[1.0, 0.0, 1.0]]);
    let input = HostTensor::from_dense(&a);
    let det = det_of::<T, P>(p, &input)[0];
    assert!(det.is_finite(), "det {det:?}");
    let bound = if eps::<T>() < 1e-10 { 1e-14 } else { 1e-5 };
    assert!(det.abs().to_f64() < bound, "det {det:?}");
    let (sign, log) = slogdet_of::<T, P>(p, &input);
    let l = log[0].to_f64();
    assert!(!l.is_nan() && !sign[0].re().to_f64().is_nan() && !sign[0].im().to_f64().is_nan());
    assert!(l < -30.0 || l == f64::NEG_INFINITY, "logabsdet {l}");
    if l == f64::NEG_INFINITY {
        assert_eq!(sign[0], T::zero(), "sign of an exactly singular matrix");
    }
    // Exactly zero matrices (faer's partial-pivot LU alone would put NaN here).
    for n in [1, 3, 40] {
        let zero = HostTensor::from_dense(&Dense::<T>::zeros(n, n));
        assert_eq!(det_of::<T, P>(p, &zero), vec![T::zero()]);
        let (sign, log) = slogdet_of::<T, P>(p, &zero);
        assert_eq!(sign, vec![T::zero()]);
        assert_eq!(log[0].to_f64(), f64::NEG_INFINITY);
    }
    // A zero column inside a blocked-size matrix.
    let mut rng = Rng::new(8);
    let mut a: Dense<T> = rng.matrix(40, 40);
    for i in 0..40 {
        a[(i, 13)] = T::zero();
    }
    let det = det_of::<T, P>(p, &HostTensor::from_dense(&a))[0];
    assert_eq!(det, T::zero());
}

/// det(Q diag(d) Qᴴ) = Π d for unitary Q; slogdet gives its phase and log.
fn spectral<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    for n in [1, 2, 5, 12, 40] {
        let d: Vec<T> = (0..n)
            .map(|k| {
                let size = 0.5 + rng.uniform();
                let sign = if k % 3 == 1 { -1.0 } else { 1.0 };
                let angle = if T::IS_COMPLEX { 6.0 * rng.uniform() } else { 0.0 };
                c(sign * size * angle.cos(), sign * size * angle.sin())
            })
            .collect();
        let q: Dense<T> = rng.unitary(n);
        let dq = Dense::from_fn(n, n, |i, j| q[(i, j)] * d[j]);
        let a = dq.matmul(&q.adjoint());
        let want = d
            .iter()
            .fold(Complex::new(1.0, 0.0), |acc, x| acc * Complex::new(x.re().to_f64(), x.im().to_f64()));
        let tol = 50.0 * n as f64 * eps::<T>();
        let input = HostTensor::from_dense(&a);
        assert_close(det_of::<T, P>(p, &input)[0], want, tol, &format!("det n={n}"));
        let (sign, log) = slogdet_of::<T, P>(p, &input);
        assert_close(sign[0], want / want.norm(), tol, &format!("sign n={n}"));
        assert!((sign[0].abs().to_f64() - 1.0).abs() <= 4.0 * eps::<T>(), "|sign| = 1");
        let l = log[0].to_f64();
        assert!(
            (l - want.norm().ln()).abs() <= tol * want.norm().ln().abs().max(1.0),
            "logabsdet n={n}: {l}"
        );
    }
}

/// Determinants out of the floating-point range: slogdet sums logs (finite);
/// det beyond the largest finite value is `OutOfRange` (not ±∞), below the
/// smallest it rounds to 0, and it survives intermediate overflow.
fn range<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let big = if eps::<T>() < 1e-10 { 1e10 } else { 1e4 };
    let n = 60;
    let mut rng = Rng::new(3);
    let q: Dense<T> = rng.unitary(n);
    let a = Dense::from_fn(n, n, |i, j| q[(i, j)].scale(s::<T>(big).re()));
    let input = HostTensor::from_dense(&a);
    let det = run(p, LinalgOp::Det(Det), &[&input]);
    if p.name() == "cuda" {
        // No output range check on device memory yet (docs/cuda.md).
        let det: T = det.unwrap()[0].as_ref().unwrap().to_vec()[0];
        assert!(det.abs().to_f64() == f64::INFINITY, "det overflows: {det:?}");
    } else {
        let det = det.err();
        assert!(
            matches!(det, Some(lindiff_core::Error::OutOfRange { op: "det", arg: "a", .. })),
            "det overflows: {det:?}"
        );
    }
    let (sign, log) = slogdet_of::<T, P>(p, &input);
    let want = n as f64 * big.ln();
    assert!((log[0].to_f64() - want).abs() <= 50.0 * n as f64 * eps::<T>() * want, "logabsdet {:?}", log[0]);
    assert!((sign[0].abs().to_f64() - 1.0).abs() <= 4.0 * eps::<T>());
    let tiny = HostTensor::from_dense(&Dense::from_fn(n, n, |i, j| q[(i, j)].scale(s::<T>(1.0 / big).re())));
    assert_eq!(det_of::<T, P>(p, &tiny)[0], T::zero());
    let (_, log) = slogdet_of::<T, P>(p, &tiny);
    assert!((log[0].to_f64() + want).abs() <= 50.0 * n as f64 * eps::<T>() * want);
    // The product of the pivots passes through overflow on its way to 1e100.
    let (h, l) = if eps::<T>() < 1e-10 { (1e200, 1e-300) } else { (1e30, 1e-35) };
    let a: Dense<T> = from_rows(&[&[h, 0.0, 0.0], &[0.0, h, 0.0], &[0.0, 0.0, l]]);
    assert_close(
        det_of::<T, P>(p, &HostTensor::from_dense(&a))[0],
        Complex::new(h * (h * l), 0.0),
        8.0 * eps::<T>(),
        "scaled det",
    );
}

fn batched<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let items: Vec<Dense<T>> = vec![
        from_rows(&[&[3.0, 2.0], &[1.0, 4.0]]),
        from_rows(&[&[1.0, 2.0], &[2.0, 4.0]]),
        from_rows(&[&[0.0, 2.0], &[-3.0, 0.0]]),
    ];
    let input = HostTensor::batch(&items);
    let det = det_of::<T, P>(p, &input);
    assert_eq!(det.len(), 3);
    assert_close(det[0], Complex::new(10.0, 0.0), 8.0 * eps::<T>(), "item 0");
    assert_eq!(det[1], T::zero());
    assert_eq!(det[2], s::<T>(6.0));
    let (sign, log) = slogdet_of::<T, P>(p, &input);
    assert_eq!(sign, vec![T::one(), T::zero(), T::one()]);
    assert_eq!(log[1].to_f64(), f64::NEG_INFINITY);
    assert!((log[2].to_f64() - 6f64.ln()).abs() <= 4.0 * eps::<T>());
}

fn row_major<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    // Row-major [[0, 2, 0], [1, 0, 0], [0, 0, 3]] (rows 0 and 1 of diag(1, 2, 3) swapped).
    let data: Vec<T> = [0.0, 2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.0].iter().map(|&x| s(x)).collect();
    let input = HostTensor::with_desc(TensorDesc::row_major_matrix(T::DTYPE, 3, 3).unwrap(), &data);
    assert_eq!(det_of::<T, P>(p, &input), vec![s::<T>(-6.0)]);
    // A random one against its column-major copy's known determinant.
    let mut rng = Rng::new(4);
    let n = 20;
    let q: Dense<T> = rng.unitary(n);
    let d: Vec<f64> = (0..n).map(|k| 1.0 + 0.05 * k as f64).collect();
    let a = Dense::from_fn(n, n, |i, j| q[(i, j)].scale(s::<T>(d[j]).re())).matmul(&q.adjoint());
    let data: Vec<T> = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| a[(i, j)]).collect();
    let input = HostTensor::with_desc(TensorDesc::row_major_matrix(T::DTYPE, n, n).unwrap(), &data);
    let want: f64 = d.iter().product();
    assert_close(
        det_of::<T, P>(p, &input)[0],
        Complex::new(want, 0.0),
        50.0 * n as f64 * eps::<T>(),
        "row-major det",
    );
}

fn non_finite<P: Provider<Memory = Host>>(p: &P) {
    let a = HostTensor::new(&[2, 2, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, f64::INFINITY, 0.0, 1.0]);
    for (op, name) in [(LinalgOp::Det(Det), "det"), (LinalgOp::Slogdet(Slogdet), "slogdet")] {
        let err = match run(p, op, &[&a]) {
            Ok(_) => panic!("{name} accepted infinity"),
            Err(e) => e.to_string(),
        };
        assert_eq!(err, format!("{name}: argument `a` contains NaN or infinity (batch item 1)"));
    }
}

fn dtype_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    empty::<T, P>(p);
    exact::<T, P>(p);
    singular::<T, P>(p);
    spectral::<T, P>(p, seed);
    range::<T, P>(p);
    batched::<T, P>(p);
    row_major::<T, P>(p);
}

/// Every check, for any host provider.
pub fn suite<P: Provider<Memory = Host>>(p: &P) {
    dtype_suite::<f64, P>(p, 1);
    dtype_suite::<f32, P>(p, 2);
    dtype_suite::<Complex<f64>, P>(p, 3);
    dtype_suite::<Complex<f32>, P>(p, 4);
    non_finite(p);
}

fn det<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(det);
