//! The composites of the `Linalg` face trait (built from ops and primitives),
//! checked on hand-computed values (f64) and against test-side dense algebra
//! in every dtype.

use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::face::{Norm, VanderOrder};
use lindiff_core::{Host, Linalg, Ops, Provider, RealScalar, Scalar};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::TestProvider;
use num_complex::Complex;

fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{what}: {got} vs {want}");
}

fn scalar(t: &Tensor) -> f64 {
    t.to_vec::<f64>().unwrap()[0]
}

fn dense(t: &Tensor) -> Dense<f64> {
    let d = t.dims();
    Dense::from_col_major(d[0], d[1], t.to_vec::<f64>().unwrap())
}

fn suite<P: Provider<Memory = Host>>(p: P) {
    let mut la = Direct::new(p);
    // A = [[1, -2], [3, 4]] (column-major data).
    let a = la.tensor(&[2, 2], &[1.0f64, 3.0, -2.0, 4.0]).unwrap();
    let (s1, s2) = (((30.0f64 + 500f64.sqrt()) / 2.0).sqrt(), ((30.0f64 - 500f64.sqrt()) / 2.0).sqrt());
    for (kind, want) in [
        (Norm::Fro, 30f64.sqrt()),
        (Norm::Nuc, 50f64.sqrt()),
        (Norm::One, 6.0),
        (Norm::NegOne, 4.0),
        (Norm::Inf, 7.0),
        (Norm::NegInf, 3.0),
        (Norm::Two, s1),
        (Norm::NegTwo, s2),
    ] {
        close(scalar(&la.norm(&a, kind).unwrap()), want, &format!("{kind:?}"));
    }
    let x = la.tensor(&[2], &[3.0f64, -4.0]).unwrap();
    for (p, want) in
        [(2.0, 5.0), (1.0, 7.0), (f64::INFINITY, 4.0), (f64::NEG_INFINITY, 3.0), (3.0, 91f64.cbrt())]
    {
        close(scalar(&la.norm(&x, Norm::Vector(p)).unwrap()), want, &format!("vector {p}"));
    }
    assert_eq!(
        la.norm(&x, Norm::Vector(0.0)).unwrap_err().to_string(),
        "norm: option `p` must be a nonzero number or ±∞"
    );
    close(scalar(&la.cond(&a, Norm::Two).unwrap()), s1 / s2, "cond 2");
    close(scalar(&la.cond(&a, Norm::Fro).unwrap()), 3.0, "cond fro");

    // inv and its error.
    let inv = dense(&la.inv(&a).unwrap());
    let ad = dense(&a);
    assert!(ad.matmul(&inv).sub(&Dense::eye(2, 2)).norm() < 1e-14);
    let wide = la.tensor(&[2, 3], &[0.0f64; 6]).unwrap();
    assert_eq!(la.inv(&wide).unwrap_err().to_string(), "inv: argument `a` must be square, got 2×3");

    // matrix_power: 3, 0, −2.
    let mut rng = Rng::new(3);
    let m: Dense<f64> = rng.matrix(4, 4);
    let mt = la.tensor(&[4, 4], &m.data).unwrap();
    let cube = dense(&la.matrix_power(&mt, 3).unwrap());
    assert!(cube.sub(&m.matmul(&m).matmul(&m)).norm() < 1e-13 * m.norm().powi(3));
    assert_eq!(dense(&la.matrix_power(&mt, 0).unwrap()), Dense::eye(4, 4));
    let minus_two = dense(&la.matrix_power(&mt, -2).unwrap());
    assert!(m.matmul(&m).matmul(&minus_two).sub(&Dense::eye(4, 4)).norm() < 1e-10);

    // multi_dot of a chain with very different sizes.
    let dims = [(10, 2), (2, 30), (30, 3), (3, 7)];
    let ms: Vec<Dense<f64>> = dims.iter().map(|&(r, c)| rng.matrix(r, c)).collect();
    let ts: Vec<Tensor> = ms.iter().map(|d| la.tensor(&[d.rows, d.cols], &d.data).unwrap()).collect();
    let refs: Vec<&Tensor> = ts.iter().collect();
    let got = dense(&la.multi_dot(&refs).unwrap());
    let want = ms[0].matmul(&ms[1]).matmul(&ms[2]).matmul(&ms[3]);
    assert!(got.sub(&want).norm() < 1e-13 * want.norm());

    // vecdot conjugates its first argument.
    let xc = la.tensor(&[2], &[Complex::new(1.0f64, 2.0), Complex::new(0.0, -1.0)]).unwrap();
    let yc = la.tensor(&[2], &[Complex::new(3.0f64, 0.0), Complex::new(2.0, 2.0)]).unwrap();
    let dot = la.vecdot(&xc, &yc).unwrap().to_vec::<Complex<f64>>().unwrap()[0];
    // conj(1+2i)·3 + conj(−i)·(2+2i) = (3 − 6i) + (i)(2 + 2i) = 1 − 4i
    assert_eq!(dot, Complex::new(1.0, -4.0));

    // vander([1, 2, 3], 3)
    let xs = la.tensor(&[3], &[1.0f64, 2.0, 3.0]).unwrap();
    let v = dense(&la.vander(&xs, 3, VanderOrder::Decreasing).unwrap());
    assert_eq!(v, Dense::from_fn(3, 3, |i, j| ((i + 1) as f64).powi(2 - j as i32)));
    let vi = dense(&la.vander(&xs, 3, VanderOrder::Increasing).unwrap());
    assert_eq!(vi, Dense::from_fn(3, 3, |i, j| ((i + 1) as f64).powi(j as i32)));

    // tensorinv / tensorsolve on a [2, 3, 6] tensor (a 6×6 matrix).
    let big: Dense<f64> = rng.matrix(6, 6);
    let t = la.tensor(&[2, 3, 6], &big.data).unwrap();
    let ti = la.tensorinv(&t, 2).unwrap();
    assert_eq!(ti.dims(), &[6, 2, 3]);
    let ti_m = Dense::from_col_major(6, 6, ti.to_vec::<f64>().unwrap());
    assert!(ti_m.matmul(&big).sub(&Dense::eye(6, 6)).norm() < 1e-11);
    let rhs: Dense<f64> = rng.matrix(6, 1);
    let b = la.tensor(&[2, 3], &rhs.data).unwrap();
    let xs = la.tensorsolve(&t, &b).unwrap();
    assert_eq!(xs.dims(), &[6]);
    let xd = Dense::from_col_major(6, 1, xs.to_vec::<f64>().unwrap());
    assert!(big.matmul(&xd).sub(&rhs).norm() < 1e-11);

    // lstsq on a tall full-rank system: normal equations hold.
    let (am, bm): (Dense<f64>, Dense<f64>) = (rng.matrix(9, 4), rng.matrix(9, 2));
    let (at, bt) = (la.tensor(&[9, 4], &am.data).unwrap(), la.tensor(&[9, 2], &bm.data).unwrap());
    let xl = dense(&la.lstsq(&at, &bt).unwrap());
    let normal = am.adjoint().matmul(&am.matmul(&xl).sub(&bm));
    assert!(normal.norm() < 1e-12);
}

/// `t` as a dense matrix of `T` (a vector as one column).
fn dense_t<T: Scalar>(t: &Tensor) -> Dense<T> {
    let d = t.dims();
    let (r, c) = (d.first().copied().unwrap_or(1), d.get(1).copied().unwrap_or(1));
    Dense::from_col_major(r, c, t.to_vec::<T>().unwrap())
}

/// The singular values of `t`, descending, as f64.
fn singular_values<T: Scalar, P: Provider<Memory = Host>>(la: &mut Direct<P>, t: &Tensor) -> Vec<f64> {
    la.svd_vals(t).unwrap().to_vec::<Re<T>>().unwrap().iter().map(|x| x.to_f64()).collect()
}

/// inv, norm, cond and the composites in dtype `T` against test-side dense
/// algebra, to `tol`·ε relative error.
fn dtype_suite<T: Scalar, P: Provider<Memory = Host>>(p: P, seed: u64) {
    let mut la = Direct::new(p);
    let mut rng = Rng::new(seed);
    let near = |got: f64, want: f64, what: &str| {
        let tol = 1e3 * eps::<T>() * want.abs().max(1.0);
        assert!((got - want).abs() <= tol, "{:?} {what}: {got} vs {want}", T::DTYPE);
    };
    let real = |t: &Tensor| t.to_vec::<Re<T>>().unwrap()[0].to_f64();
    let (m, n) = (5, 4);
    let a: Dense<T> = rng.matrix(m, n);
    let ta = la.tensor(&[m, n], &a.data).unwrap();
    let col_sums: Vec<f64> = (0..n).map(|j| (0..m).map(|i| a[(i, j)].abs().to_f64()).sum()).collect();
    let row_sums: Vec<f64> = (0..m).map(|i| (0..n).map(|j| a[(i, j)].abs().to_f64()).sum()).collect();
    let s = singular_values::<T, P>(&mut la, &ta);
    let (max, min) = (
        |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max),
        |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min),
    );
    for (kind, want) in [
        (Norm::Fro, a.norm()),
        (Norm::Nuc, s.iter().sum()),
        (Norm::One, max(&col_sums)),
        (Norm::NegOne, min(&col_sums)),
        (Norm::Inf, max(&row_sums)),
        (Norm::NegInf, min(&row_sums)),
        (Norm::Two, s[0]),
        (Norm::NegTwo, s[n - 1]),
    ] {
        near(real(&la.norm(&ta, kind).unwrap()), want, &format!("norm {kind:?}"));
    }
    let x: Dense<T> = rng.matrix(6, 1);
    let tx = la.tensor(&[6], &x.data).unwrap();
    let mags: Vec<f64> = x.data.iter().map(|v| v.abs().to_f64()).collect();
    for (p, want) in [
        (2.0, x.norm()),
        (1.0, mags.iter().sum()),
        (f64::INFINITY, max(&mags)),
        (f64::NEG_INFINITY, min(&mags)),
        (3.0, mags.iter().map(|v| v.powi(3)).sum::<f64>().cbrt()),
    ] {
        near(real(&la.norm(&tx, Norm::Vector(p)).unwrap()), want, &format!("vector norm {p}"));
    }

    let sq: Dense<T> = rng.matrix(n, n);
    let tsq = la.tensor(&[n, n], &sq.data).unwrap();
    let ss = singular_values::<T, P>(&mut la, &tsq);
    let cond = ss[0] / ss[n - 1];
    let tol = 1e3 * eps::<T>() * cond;
    let got = real(&la.cond(&tsq, Norm::Two).unwrap());
    assert!((got - cond).abs() <= tol * cond, "{:?} cond: {got} vs {cond}", T::DTYPE);
    let eye = Dense::<T>::eye(n, n);
    let inv = dense_t::<T>(&la.inv(&tsq).unwrap());
    assert!(sq.matmul(&inv).sub(&eye).norm() <= tol * 10.0, "{:?} inv", T::DTYPE);
    let cube = dense_t::<T>(&la.matrix_power(&tsq, 3).unwrap());
    let want = sq.matmul(&sq).matmul(&sq);
    assert!(cube.sub(&want).norm() <= 1e3 * eps::<T>() * sq.norm().powi(3), "{:?} A³", T::DTYPE);
    let minus_two = dense_t::<T>(&la.matrix_power(&tsq, -2).unwrap());
    assert!(sq.matmul(&sq).matmul(&minus_two).sub(&eye).norm() <= tol * cond * 10.0, "{:?} A⁻²", T::DTYPE);

    let dims = [(7, 2), (2, 9), (9, 3)];
    let ms: Vec<Dense<T>> = dims.iter().map(|&(r, c)| rng.matrix(r, c)).collect();
    let ts: Vec<Tensor> = ms.iter().map(|d| la.tensor(&[d.rows, d.cols], &d.data).unwrap()).collect();
    let refs: Vec<&Tensor> = ts.iter().collect();
    let got = dense_t::<T>(&la.multi_dot(&refs).unwrap());
    let want = ms[0].matmul(&ms[1]).matmul(&ms[2]);
    assert!(got.sub(&want).norm() <= 1e3 * eps::<T>() * want.norm(), "{:?} multi_dot", T::DTYPE);

    let y: Dense<T> = rng.matrix(6, 1);
    let ty = la.tensor(&[6], &y.data).unwrap();
    let dot = la.vecdot(&tx, &ty).unwrap().to_vec::<T>().unwrap()[0];
    let want = x.adjoint().matmul(&y)[(0, 0)];
    assert!((dot - want).abs().to_f64() <= 1e3 * eps::<T>() * x.norm() * y.norm(), "{:?} vecdot", T::DTYPE);

    let xs: Dense<T> = rng.matrix(3, 1);
    let txs = la.tensor(&[3], &xs.data).unwrap();
    let v = dense_t::<T>(&la.vander(&txs, 4, VanderOrder::Increasing).unwrap());
    let want = Dense::from_fn(3, 4, |i, j| (0..j).fold(T::one(), |acc, _| acc * xs[(i, 0)]));
    assert!(v.sub(&want).norm() <= 1e2 * eps::<T>(), "{:?} vander", T::DTYPE);

    let big: Dense<T> = rng.matrix(6, 6);
    let t = la.tensor(&[2, 3, 6], &big.data).unwrap();
    let ti = la.tensorinv(&t, 2).unwrap();
    assert_eq!(ti.dims(), &[6, 2, 3]);
    let ti_m = Dense::from_col_major(6, 6, ti.to_vec::<T>().unwrap());
    let tbig = la.tensor(&[6, 6], &big.data).unwrap();
    let sb = singular_values::<T, P>(&mut la, &tbig);
    let big_cond = sb[0] / sb[5];
    assert!(
        ti_m.matmul(&big).sub(&Dense::eye(6, 6)).norm() <= 1e3 * eps::<T>() * big_cond,
        "{:?} tensorinv",
        T::DTYPE
    );
    let rhs: Dense<T> = rng.matrix(6, 1);
    let b = la.tensor(&[2, 3], &rhs.data).unwrap();
    let xsol = la.tensorsolve(&t, &b).unwrap();
    assert_eq!(xsol.dims(), &[6]);
    let xd = Dense::from_col_major(6, 1, xsol.to_vec::<T>().unwrap());
    assert!(
        big.matmul(&xd).sub(&rhs).norm() <= 1e3 * eps::<T>() * big_cond * rhs.norm(),
        "{:?} tensorsolve",
        T::DTYPE
    );
}

fn composites<P: TestProvider>(provider: &P) {
    suite(*provider);
    dtype_suite::<f64, _>(*provider, 31);
    dtype_suite::<f32, _>(*provider, 32);
    dtype_suite::<Complex<f64>, _>(*provider, 33);
    dtype_suite::<Complex<f32>, _>(*provider, 34);
}

lindiff_tests::providers!(composites);
