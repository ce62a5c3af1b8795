//! The norms' range, empty inputs and NaN/∞ policy, and `matmul`'s, on
//! every host provider and float dtype:
//! * `norm(Fro)` and the vector 2-norm never overflow or underflow while
//!   the norm is representable: checked against the norm computed in the
//!   test with an explicit power-of-two scaling (in f64 for every dtype);
//! * every norm of an empty matrix or vector is 0 (batched too);
//! * the norms built on the singular values reject NaN/∞ (`NonFinite`),
//!   the entrywise ones propagate them as IEEE arithmetic does;
//! * `matmul` propagates NaN/∞ as IEEE arithmetic does (∞·0 = NaN; for
//!   complex entries, on the parts: a complex ∞ may come out with a NaN
//!   part), and an empty inner dimension gives zeros.

use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::face::Norm;
use lindiff_core::{Element, Error, Host, Linalg, Ops, Provider, RealScalar, Scalar};
use lindiff_tests::dense::{eps, Re};
use lindiff_tests::TestProvider;

/// ‖x‖₂ of f64 values computed with a power-of-two scaling (the largest
/// entry brought to [1, 2)): the independent reference.
fn scaled_norm(xs: &[f64]) -> f64 {
    let max = xs.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if max == 0.0 {
        return 0.0;
    }
    let e = max.log2().floor() as i32;
    // 2^−e in two steps (e may exceed the exponent range of one factor).
    let (h1, h2) = (2f64.powi(-e / 2), 2f64.powi(-e + e / 2));
    let sum: f64 = xs.iter().map(|x| (x * h1 * h2).powi(2)).sum();
    sum.sqrt() / h1 / h2
}

fn values<R: RealScalar + Element>(t: &Tensor) -> Vec<f64> {
    t.to_vec::<R>().unwrap().iter().map(|x| x.to_f64()).collect()
}

/// Matrices and vectors whose sum of squares overflows or underflows (or
/// whose entries are subnormal) while their norm is representable.
fn range<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let mut la = Direct::new(p);
    let single = eps::<T>() > 1e-10;
    let (huge, tiny, sub) = if single { (-1.07e37, -5.4e-37, 3e-44) } else { (-1.07e289, -5.4e-306, 3e-320) };
    let cases: Vec<(Vec<usize>, Vec<f64>)> = vec![
        // A 5×2 matrix of ones with one huge entry; [0, tiny]; subnormals.
        (vec![5, 2], (0..10).map(|i| if i == 3 { huge } else { 1.0 }).collect()),
        (vec![2, 1], vec![0.0, tiny]),
        (vec![3, 2], vec![sub, -sub, 2.0 * sub, 0.0, sub, sub]),
        (vec![2, 2], vec![huge, huge, -huge, huge]),
        (vec![40, 3], (0..120).map(|i| tiny * (1.0 + (i % 7) as f64)).collect()),
    ];
    for (dims, data) in cases {
        let data: Vec<T> = data.iter().map(|&x| T::from_f64(x)).collect();
        let exact: Vec<f64> = data.iter().flat_map(|x| [x.re().to_f64(), x.im().to_f64()]).collect();
        let want = scaled_norm(&exact);
        let a = la.tensor(&dims, &data).unwrap();
        let got = values::<Re<T>>(&la.norm(&a, Norm::Fro).unwrap())[0];
        // ε-relative, or a few of the dtype's smallest subnormal steps for a
        // norm that is itself subnormal (representable only to that).
        let step = Re::<T>::MIN_POSITIVE.to_f64() * eps::<T>();
        let tol = 8.0 * (data.len() as f64).sqrt() * eps::<T>() * want + 2.0 * step;
        assert!(got.is_finite() && (got - want).abs() <= tol, "Fro of {dims:?}: {got:e} vs {want:e}");
        let v = la.tensor(&[data.len()], &data).unwrap();
        let got = values::<Re<T>>(&la.norm(&v, Norm::Vector(2.0)).unwrap())[0];
        assert!(got.is_finite() && (got - want).abs() <= tol, "vector 2-norm: {got:e} vs {want:e}");
    }
    // A batch: each item its own norm.
    let items: Vec<f64> = vec![1.0, huge, 3.0, 4.0];
    let data: Vec<T> = items.iter().map(|&x| T::from_f64(x)).collect();
    let b = la.tensor(&[2, 1, 2], &data).unwrap();
    let got = values::<Re<T>>(&la.norm(&b, Norm::Fro).unwrap());
    let want = [scaled_norm(&[1.0, T::from_f64(huge).re().to_f64()]), 5.0];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 8.0 * eps::<T>() * w, "batched Fro: {got:?} vs {want:?}");
    }
}

/// Every norm of an empty matrix (m×0, 0×n, 0×0, batched) or vector is 0.
fn empty<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let mut la = Direct::new(p);
    let kinds =
        [Norm::Fro, Norm::Nuc, Norm::One, Norm::NegOne, Norm::Inf, Norm::NegInf, Norm::Two, Norm::NegTwo];
    for dims in [vec![3, 0], vec![0, 4], vec![0, 0], vec![3, 0, 2], vec![0, 2, 3]] {
        let a = la.tensor::<T>(&dims, &[]).unwrap();
        let batch: usize = dims[2..].iter().product();
        for kind in kinds {
            let n = la.norm(&a, kind).unwrap();
            assert_eq!(n.dims(), &dims[2..], "{kind:?} of {dims:?}");
            assert_eq!(values::<Re<T>>(&n), vec![0.0; batch], "{kind:?} of {dims:?}");
        }
    }
    for dims in [vec![0], vec![0, 3]] {
        let x = la.tensor::<T>(&dims, &[]).unwrap();
        for p in [1.0, 2.0, 3.0, 0.5, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
            let n = la.norm(&x, Norm::Vector(p)).unwrap();
            assert_eq!(values::<Re<T>>(&n), vec![0.0; dims[1..].iter().product()], "p = {p} of {dims:?}");
        }
    }
}

/// NaN/∞: the norms built on the singular values reject them; the
/// entrywise ones propagate them (NaN over ∞); `matmul` propagates them.
fn non_finite<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let mut la = Direct::new(p);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let data: Vec<T> = [1.0, bad, -2.0, 0.5].iter().map(|&x| T::from_f64(x)).collect();
        let a = la.tensor(&[2, 2], &data).unwrap();
        for kind in [Norm::Fro, Norm::Nuc, Norm::Two, Norm::NegTwo] {
            let err = la.norm(&a, kind).unwrap_err();
            assert!(matches!(err, Error::NonFinite { arg: "a", .. }), "{kind:?} with {bad}: {err}");
        }
        let x = la.tensor(&[4], &data).unwrap();
        assert!(matches!(la.norm(&x, Norm::Vector(2.0)).unwrap_err(), Error::NonFinite { .. }));
        let want = |x: f64| if bad.is_nan() { x.is_nan() } else { x == f64::INFINITY };
        for kind in [Norm::One, Norm::NegOne, Norm::Inf, Norm::NegInf] {
            let got = values::<Re<T>>(&la.norm(&a, kind).unwrap())[0];
            // The row/column without the bad entry decides the "Neg" norms.
            let neg = matches!(kind, Norm::NegOne | Norm::NegInf);
            assert!(if neg { got.is_finite() || want(got) } else { want(got) }, "{kind:?} with {bad}: {got}");
        }
        for pn in [1.0, 3.0, f64::INFINITY] {
            let got = values::<Re<T>>(&la.norm(&x, Norm::Vector(pn)).unwrap())[0];
            assert!(want(got), "Vector({pn}) with {bad}: {got}");
        }
        // matmul: a NaN/∞ entry reaches its row of the product; ∞·0 = NaN.
        let ones: Vec<T> = vec![T::one(); 4];
        let b = la.tensor(&[2, 2], &ones).unwrap();
        let c = la.matmul(&a, &b).unwrap().to_vec::<T>().unwrap();
        // a[1, 0] = bad: row 1 of a·ones is bad + 0.5 in both columns.
        // Real: exactly `bad`; complex: not finite (the parts' IEEE
        // products make a complex ∞ times 1 ∞ + NaN·i).
        let same = |x: T| match (T::IS_COMPLEX, bad.is_nan()) {
            (true, _) => !x.is_finite(),
            (false, true) => x.re().to_f64().is_nan(),
            (false, false) => x.re().to_f64() == bad,
        };
        for j in 0..2 {
            assert!(same(c[1 + 2 * j]), "matmul row with {bad}: {c:?}");
            assert_eq!(c[2 * j].re().to_f64(), -1.0, "matmul row without {bad}: {c:?}");
        }
        let zero = la.tensor(&[2, 1], &[T::zero(), T::zero()]).unwrap();
        let c = la.matmul(&a, &zero).unwrap().to_vec::<T>().unwrap();
        assert!(c[1].re().to_f64().is_nan(), "{bad}·0 in matmul: {c:?}");
    }
    // An empty inner dimension: zeros.
    let a = la.tensor::<T>(&[3, 0], &[]).unwrap();
    let b = la.tensor::<T>(&[0, 2], &[]).unwrap();
    assert_eq!(la.matmul(&a, &b).unwrap().to_vec::<T>().unwrap(), vec![T::zero(); 6]);
}

fn norms<P: TestProvider>(p: &P) {
    range::<f64, P>(*p);
    range::<f32, P>(*p);
    range::<num_complex::Complex<f64>, P>(*p);
    range::<num_complex::Complex<f32>, P>(*p);
    empty::<f64, P>(*p);
    empty::<num_complex::Complex<f32>, P>(*p);
    non_finite::<f64, P>(*p);
    non_finite::<f32, P>(*p);
    non_finite::<num_complex::Complex<f64>, P>(*p);
    non_finite::<num_complex::Complex<f32>, P>(*p);
}

// The host providers only (not `providers!`, whose `cuda` arm would run
// this on host-cuda, whose kernels neither scale nor test singularity:
// out of scope without a GPU to run them).
mod norms {
    #[test]
    fn cpu() {
        super::norms(&lindiff_tests::Cpu::default())
    }
    #[cfg(feature = "blas")]
    #[test]
    fn blas() {
        super::norms(&lindiff_tests::Blas::default())
    }
}
