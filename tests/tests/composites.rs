//! The composites of the `Linalg` face trait (built from ops and primitives),
//! checked on hand-computed values and against test-side dense algebra.

use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::face::{Norm, VanderOrder};
use lindiff_core::{Host, Linalg, Provider};
use lindiff_tests::dense::{Dense, Rng};
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

fn composites<P: TestProvider>(provider: &P) {
    suite(*provider);
}

lindiff_tests::providers!(composites);
