//! Every method of the `Linalg` face on the direct face over the CPU
//! provider: outputs in the documented order, with the documented meaning.

use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::op::{
    QrMode, QrOptions, RankRevealingQrOptions, SvdOptions, Triangle, TriangularSolveOptions,
};
use lindiff_core::{Host, MatOp, Ops, Provider, RealScalar, Scalar};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::TestProvider;
use num_complex::Complex;

fn dense<T: Scalar>(t: &Tensor) -> Dense<T> {
    let d = t.dims();
    let (r, c) = (d[0], if d.len() > 1 { d[1] } else { 1 });
    Dense::from_col_major(r, c, t.to_vec::<T>().unwrap())
}

fn reals<T: Scalar>(t: &Tensor) -> Vec<Re<T>> {
    t.to_vec::<Re<T>>().unwrap()
}

fn ints(t: &Tensor) -> Vec<i64> {
    t.to_vec::<i64>().unwrap()
}

fn small<T: Scalar>(x: &Dense<T>, scale: f64) -> bool {
    x.norm() <= 200.0 * eps::<T>() * scale.max(1.0)
}

fn suite<T: Scalar, P: Provider<Memory = Host>>(p: P) {
    let mut la = Direct::new(p);
    let mut rng = Rng::new(21);
    let (m, n) = (6, 4);
    let a: Dense<T> = rng.matrix(m, n);
    let ta = la.tensor(&[m, n], &a.data).unwrap();
    let sq: Dense<T> = rng.matrix(n, n);
    let tsq = la.tensor(&[n, n], &sq.data).unwrap();
    let scale = a.norm() + sq.norm();

    // SVD family.
    for f in
        [la.svd(&ta).unwrap(), la.svd_with_options(&ta, SvdOptions::default().derivative_eps(1e-6)).unwrap()]
    {
        let (u, s, vh) = (dense::<T>(&f.u), reals::<T>(&f.s), dense::<T>(&f.vh));
        assert!(small(&u.scale_cols(&s).matmul(&vh).sub(&a), scale));
    }
    let full = la.svd_full(&ta).unwrap();
    assert_eq!((full.u.dims(), full.vh.dims()), (&[m, m][..], &[n, n][..]));
    let vals = reals::<T>(&la.svd_vals(&ta).unwrap());
    assert!(vals.windows(2).all(|w| w[0] >= w[1]));

    // QR family.
    let qr = la.qr(&ta).unwrap();
    assert!(small(&dense::<T>(&qr.q).matmul(&dense::<T>(&qr.r)).sub(&a), scale));
    let complete = la.qr_with_options(&ta, QrOptions::default().mode(QrMode::Complete)).unwrap();
    assert_eq!(complete.q.dims(), &[m, m]);
    let h = la.householder_qr(&ta).unwrap();
    let b: Dense<T> = rng.matrix(m, 2);
    let tb = la.tensor(&[m, 2], &b.data).unwrap();
    let h2 = h.append_columns(&mut la, &tb).unwrap();
    let (q2, r2) = (dense::<T>(&h2.q(&mut la).unwrap()), dense::<T>(&h2.r(&mut la).unwrap()));
    let ab = Dense::from_fn(m, n + 2, |i, j| if j < n { a[(i, j)] } else { b[(i, j - n)] });
    assert!(small(&q2.matmul(&r2).sub(&ab), scale));
    let qhb = h.apply(&mut la, MatOp::Adjoint, &tb).unwrap();
    let back = dense::<T>(&h.apply(&mut la, MatOp::Identity, &qhb).unwrap());
    assert!(small(&back.sub(&b), scale));
    let rr = la.rank_revealing_qr(&ta, RankRevealingQrOptions::default()).unwrap();
    assert_eq!(ints(&rr.rank), vec![n as i64]);
    let perm = ints(&rr.perm);
    let permuted = Dense::from_fn(m, n, |i, j| a[(i, perm[j] as usize)]);
    assert!(small(&dense::<T>(&rr.q).matmul(&dense::<T>(&rr.r)).sub(&permuted), scale));

    // Hermitian and general eigen.
    let herm = sq.matmul(&sq.adjoint());
    let th = la.tensor(&[n, n], &herm.data).unwrap();
    for e in [la.eigh(&th).unwrap(), la.eigh_with_options(&th, Default::default()).unwrap()] {
        let (w, v) = (reals::<T>(&e.w), dense::<T>(&e.v));
        assert!(small(&v.scale_cols(&w).matmul(&v.adjoint()).sub(&herm), scale * scale));
    }
    assert_eq!(la.eigvalsh(&th).unwrap().dims(), &[n]);
    let eig = la.eig(&tsq).unwrap();
    assert_eq!((eig.w.dims(), eig.v.dims()), (&[n][..], &[n, n][..]));
    assert_eq!(la.eigvals(&tsq).unwrap().dims(), &[n]);

    // Cholesky, LU, solves.
    let spd = herm.sub(&Dense::eye(n, n).scale_cols(&vec![Re::<T>::from_f64(-(n as f64)); n]));
    let tspd = la.tensor(&[n, n], &spd.data).unwrap();
    let l = dense::<T>(&la.cholesky(&tspd).unwrap());
    assert!(small(&l.matmul(&l.adjoint()).sub(&spd), scale * scale));
    let lu = la.lu(&ta).unwrap();
    let p = ints(&lu.perm);
    let pa = Dense::from_fn(m, n, |i, j| a[(p[i] as usize, j)]);
    assert!(small(&dense::<T>(&lu.l).matmul(&dense::<T>(&lu.u)).sub(&pa), scale));
    let fp = la.full_piv_lu(&ta).unwrap();
    let (rp, cp) = (ints(&fp.row_perm), ints(&fp.col_perm));
    let paq = Dense::from_fn(m, n, |i, j| a[(rp[i] as usize, cp[j] as usize)]);
    assert!(small(&dense::<T>(&fp.l).matmul(&dense::<T>(&fp.u)).sub(&paq), scale));
    let rhs: Dense<T> = rng.matrix(n, 2);
    let trhs = la.tensor(&[n, 2], &rhs.data).unwrap();
    for x in [la.solve(&tsq, &trhs).unwrap(), la.full_piv_lu_solve(&tsq, &trhs).unwrap()] {
        assert!(small(&sq.matmul(&dense::<T>(&x)).sub(&rhs), scale * 1e3));
    }
    let upper = la.qr(&tsq).unwrap().r;
    let x = la
        .triangular_solve(&upper, &trhs, TriangularSolveOptions::default().triangle(Triangle::Upper))
        .unwrap();
    assert!(small(&dense::<T>(&upper).matmul(&dense::<T>(&x)).sub(&rhs), scale * 1e3));

    // Determinants: det = sign · exp(logabsdet), and the product of U's pivots.
    let det = la.det(&tsq).unwrap().to_vec::<T>().unwrap()[0];
    let (sign, logabs) = la.slogdet(&tsq).unwrap();
    let sign = sign.to_vec::<T>().unwrap()[0];
    let logabs = reals::<T>(&logabs)[0].to_f64();
    assert!(
        (det - sign.scale(Re::<T>::from_f64(logabs.exp()))).abs().to_f64()
            <= 1e3 * eps::<T>() * det.abs().to_f64()
    );

    // Pseudo-inverse: A⁺ A = I for full column rank.
    for pinv in [la.pinv(&ta).unwrap(), la.pinv_with_rtol(&ta, 1e-3).unwrap()] {
        assert!(small(&dense::<T>(&pinv).matmul(&a).sub(&Dense::eye(n, n)), scale * 10.0));
    }
    let y = la.tensor(&[m, 1], &rng.matrix::<T>(m, 1).data).unwrap();
    let x = dense::<T>(&la.lstsq(&ta, &y).unwrap());
    assert_eq!((x.rows, x.cols), (n, 1));
}

fn face_methods_f64<P: TestProvider>(provider: &P) {
    suite::<f64, _>(*provider);
}

fn face_methods_c64<P: TestProvider>(provider: &P) {
    suite::<Complex<f64>, _>(*provider);
}

fn face_methods_f32<P: TestProvider>(provider: &P) {
    suite::<f32, _>(*provider);
}

fn face_methods_c32<P: TestProvider>(provider: &P) {
    suite::<Complex<f32>, _>(*provider);
}

lindiff_tests::providers!(face_methods_f64, face_methods_c64, face_methods_f32, face_methods_c32);
