//! Solves on every host provider: the fused LU solve (`lu_factor_solve`),
//! solves with saved factors (`lu_solve_prepared` for A, Aᵀ, Aᴴ), their
//! full-pivot counterparts, and all 24 forms of `triangular_solve` — checked
//! by residuals against naive dense products, with singular input reported
//! as an error naming the argument and the batch item.

use lindiff_core::op::{
    Diagonal, FullPivLuFactor, FullPivLuSolve, FullPivLuSolvePrepared, LuFactor, LuFactorSolve,
    LuSolvePrepared, MatOp, Side, Triangle, TriangularSolve, TriangularSolveOptions,
};
use lindiff_core::{Host, LinalgOp, Provider, RealScalar, Scalar, TensorDesc};
use lindiff_tests::dense::{eps, Dense, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

fn s<T: Scalar>(x: f64) -> T {
    T::from_f64(x)
}

fn tol<T: Scalar>(n: usize) -> f64 {
    50.0 * (n.max(1) as f64) * eps::<T>()
}

/// The error message of a call that must fail.
fn error_of<P: Provider<Memory = Host>>(p: &P, op: LinalgOp, inputs: &[&HostTensor]) -> String {
    match run(p, op, inputs) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// A well-conditioned n×n matrix (singular values in [1, 3]).
fn well_conditioned<T: Scalar>(rng: &mut Rng, n: usize) -> Dense<T> {
    let spectrum: Vec<f64> = (0..n).map(|i| 1.0 + 2.0 * i as f64 / n.max(1) as f64).collect();
    rng.with_spectrum(n, n, &spectrum)
}

/// The seed's exactly singular matrix.
fn seed_singular<T: Scalar>() -> Dense<T> {
    let rows = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]];
    Dense::from_fn(3, 3, |i, j| s(rows[i][j]))
}

/// `op(a)` as a dense matrix.
fn apply_op<T: Scalar>(a: &Dense<T>, op: MatOp) -> Dense<T> {
    match op {
        MatOp::Identity => a.clone(),
        MatOp::Transpose => a.transpose(),
        MatOp::Adjoint => a.adjoint(),
    }
}

/// Asserts ‖m x − b‖ ≤ tol (‖m‖ ‖x‖ + ‖b‖).
fn assert_residual<T: Scalar>(m: &Dense<T>, x: &Dense<T>, b: &Dense<T>, what: &str) {
    let r = m.matmul(x).sub(b).norm();
    let scale = m.norm() * x.norm() + b.norm();
    assert!(r <= tol::<T>(m.rows) * scale, "{what}: residual {r} vs scale {scale}");
}

/// `(P a Q)[i, j] = a[rows[i], cols[j]]`.
fn permute<T: Scalar>(a: &Dense<T>, rows: &[i64], cols: &[i64]) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |i, j| a[(rows[i] as usize, cols[j] as usize)])
}

fn unpack_lu<T: Scalar>(lu: &Dense<T>) -> Dense<T> {
    let n = lu.rows;
    let l = Dense::from_fn(n, n, |i, j| match i.cmp(&j) {
        core::cmp::Ordering::Greater => lu[(i, j)],
        core::cmp::Ordering::Equal => T::one(),
        core::cmp::Ordering::Less => T::zero(),
    });
    let u = Dense::from_fn(n, n, |i, j| if i <= j { lu[(i, j)] } else { T::zero() });
    l.matmul(&u)
}

fn fused<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    for &(n, r) in &[(1, 1), (4, 1), (4, 3), (30, 5), (45, 2), (0, 2)] {
        let a: Dense<T> = well_conditioned(&mut rng, n);
        let b: Dense<T> = rng.matrix(n, r);
        let ins = [&HostTensor::from_dense(&a), &HostTensor::from_dense(&b)];
        let outs = run(p, LinalgOp::LuFactorSolve(LuFactorSolve::default()), &ins).unwrap();
        let x: Dense<T> = outs[0].as_ref().unwrap().matrix(0);
        assert_eq!((x.rows, x.cols), (n, r));
        assert_residual(&a, &x, &b, &format!("lu_factor_solve {n}×{r}"));
        // The saved factors reconstruct P a.
        let lu: Dense<T> = outs[1].as_ref().unwrap().matrix(0);
        let perm: Vec<i64> = outs[2].as_ref().unwrap().to_vec();
        let ident: Vec<i64> = (0..n as i64).collect();
        let err = unpack_lu(&lu).sub(&permute(&a, &perm, &ident)).norm();
        assert!(err <= tol::<T>(n) * a.norm(), "saved factors: {err}");

        let outs = run(p, LinalgOp::FullPivLuSolve(FullPivLuSolve::default()), &ins).unwrap();
        let x: Dense<T> = outs[0].as_ref().unwrap().matrix(0);
        assert_residual(&a, &x, &b, &format!("full_piv_lu_solve {n}×{r}"));
        let lu: Dense<T> = outs[1].as_ref().unwrap().matrix(0);
        let rows: Vec<i64> = outs[2].as_ref().unwrap().to_vec();
        let cols: Vec<i64> = outs[3].as_ref().unwrap().to_vec();
        let err = unpack_lu(&lu).sub(&permute(&a, &rows, &cols)).norm();
        assert!(err <= tol::<T>(n) * a.norm(), "saved full-pivot factors: {err}");
    }
    // A hand-checked system: [[2, 1], [1, 3]] x = [3, 5] → x = [0.8, 1.4].
    let a: Dense<T> = Dense::from_fn(2, 2, |i, j| s([[2.0, 1.0], [1.0, 3.0]][i][j]));
    let b: Dense<T> = Dense::from_col_major(2, 1, vec![s(3.0), s(5.0)]);
    for op in [
        LinalgOp::LuFactorSolve(LuFactorSolve::default()),
        LinalgOp::FullPivLuSolve(FullPivLuSolve::default()),
    ] {
        let outs = run(p, op, &[&HostTensor::from_dense(&a), &HostTensor::from_dense(&b)]).unwrap();
        let x: Vec<T> = outs[0].as_ref().unwrap().to_vec();
        for (got, want) in x.iter().zip([0.8, 1.4]) {
            assert!(
                (got.re().to_f64() - want).abs() <= 8.0 * eps::<T>() && got.im().to_f64() == 0.0,
                "{x:?}"
            );
        }
    }
}

fn batched_fused<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let mut rng = Rng::new(11);
    let a: Vec<Dense<T>> = (0..4).map(|_| well_conditioned(&mut rng, 3)).collect();
    let b: Vec<Dense<T>> = (0..4).map(|_| rng.matrix(3, 2)).collect();
    let ins = [&HostTensor::batch(&a), &HostTensor::batch(&b)];
    for op in [
        LinalgOp::LuFactorSolve(LuFactorSolve::default()),
        LinalgOp::FullPivLuSolve(FullPivLuSolve::default()),
    ] {
        let outs = run(p, op.clone(), &ins).unwrap();
        assert_eq!(outs[0].as_ref().unwrap().dims(), &[3, 2, 4]);
        for k in 0..4 {
            let x: Dense<T> = outs[0].as_ref().unwrap().matrix(k);
            assert_residual(&a[k], &x, &b[k], &format!("{} batch item {k}", op.name()));
        }
    }
    // Items 1 and 3 singular: the lowest failing index is reported.
    let mut singular = a.clone();
    singular[1] = seed_singular();
    singular[3] = Dense::zeros(3, 3);
    let ins = [&HostTensor::batch(&singular), &HostTensor::batch(&b)];
    assert_eq!(
        error_of(p, LinalgOp::LuFactorSolve(LuFactorSolve::default()), &ins),
        "lu_factor_solve: argument `a` is singular (batch item 1)"
    );
    assert_eq!(
        error_of(p, LinalgOp::FullPivLuSolve(FullPivLuSolve::default()), &ins),
        "full_piv_lu_solve: argument `a` is singular (batch item 1)"
    );
    // A singular matrix with a zero pivot in the blocked part of the LU.
    let mut big: Dense<T> = rng.matrix(40, 40);
    for i in 0..40 {
        big[(i, 20)] = T::zero();
    }
    let b40: Dense<T> = rng.matrix(40, 1);
    let ins = [&HostTensor::from_dense(&big), &HostTensor::from_dense(&b40)];
    assert_eq!(
        error_of(p, LinalgOp::LuFactorSolve(LuFactorSolve::default()), &ins),
        "lu_factor_solve: argument `a` is singular (batch item 0)"
    );
    assert_eq!(
        error_of(p, LinalgOp::FullPivLuSolve(FullPivLuSolve::default()), &ins),
        "full_piv_lu_solve: argument `a` is singular (batch item 0)"
    );
}

/// Row-major `a` (a strided view) in the fused solves.
fn row_major<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let mut rng = Rng::new(21);
    let n = 7;
    let a: Dense<T> = well_conditioned(&mut rng, n);
    let data: Vec<T> = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| a[(i, j)]).collect();
    let a_rm = HostTensor::with_desc(TensorDesc::row_major_matrix(T::DTYPE, n, n).unwrap(), &data);
    let b: Dense<T> = rng.matrix(n, 2);
    let bt = HostTensor::from_dense(&b);
    for op in [
        LinalgOp::LuFactorSolve(LuFactorSolve::default()),
        LinalgOp::FullPivLuSolve(FullPivLuSolve::default()),
    ] {
        let outs = run(p, op, &[&a_rm, &bt]).unwrap();
        assert_residual(&a, &outs[0].as_ref().unwrap().matrix(0), &b, "row-major a");
    }
    // Row-major b in a triangular solve.
    let mut l: Dense<T> =
        Dense::from_fn(n, n, |i, j| if i >= j { rng.scalar::<T>().scale(s(0.2)) } else { T::zero() });
    for i in 0..n {
        l[(i, i)] = s(2.0);
    }
    let b_rm_data: Vec<T> =
        (0..n).flat_map(|i| (0..2).map(move |j| (i, j))).map(|(i, j)| b[(i, j)]).collect();
    let b_rm = HostTensor::with_desc(TensorDesc::row_major_matrix(T::DTYPE, n, 2).unwrap(), &b_rm_data);
    let outs =
        run(p, LinalgOp::TriangularSolve(TriangularSolve::default()), &[&HostTensor::from_dense(&l), &b_rm])
            .unwrap();
    assert_residual(&l, &outs[0].as_ref().unwrap().matrix(0), &b, "row-major b");
}

fn prepared<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    for &(n, r) in &[(1, 1), (5, 3), (33, 2), (0, 1)] {
        let a: Vec<Dense<T>> = (0..2).map(|_| well_conditioned(&mut rng, n)).collect();
        let b: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(n, r)).collect();
        let (at, bt) = (HostTensor::batch(&a), HostTensor::batch(&b));
        let partial = run(p, LinalgOp::LuFactor(LuFactor), &[&at]).unwrap();
        let full = run(p, LinalgOp::FullPivLuFactor(FullPivLuFactor), &[&at]).unwrap();
        let (lu, perm) = (partial[0].as_ref().unwrap(), partial[1].as_ref().unwrap());
        let (flu, rows, cols) =
            (full[0].as_ref().unwrap(), full[1].as_ref().unwrap(), full[2].as_ref().unwrap());
        for op in [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint] {
            let outs = run(p, LinalgOp::LuSolvePrepared(LuSolvePrepared::new(op)), &[lu, perm, &bt]).unwrap();
            let fouts = run(
                p,
                LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(op)),
                &[flu, rows, cols, &bt],
            )
            .unwrap();
            for k in 0..2 {
                let m = apply_op(&a[k], op);
                let x: Dense<T> = outs[0].as_ref().unwrap().matrix(k);
                assert_residual(&m, &x, &b[k], &format!("lu_solve_prepared {op:?} n={n} item {k}"));
                let x: Dense<T> = fouts[0].as_ref().unwrap().matrix(k);
                assert_residual(&m, &x, &b[k], &format!("full_piv_lu_solve_prepared {op:?} n={n} item {k}"));
            }
        }
    }
}

/// Transpose and adjoint differ for complex input: each solve must pick the
/// right one (a hand-checked 1×1 case: a = i, b = 1).
fn prepared_conjugation<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    if !T::IS_COMPLEX {
        return;
    }
    let i = T::from_parts(s::<T>(0.0).re(), s::<T>(1.0).re());
    let lu = HostTensor::new(&[1, 1], &[i]);
    let perm = HostTensor::new(&[1], &[0i64]);
    let b = HostTensor::new(&[1, 1], &[T::one()]);
    // a x = 1 and aᵀ x = 1 → x = −i;  aᴴ x = 1 → x = i.
    for (op, want) in [(MatOp::Identity, -i), (MatOp::Transpose, -i), (MatOp::Adjoint, i)] {
        let x = run(p, LinalgOp::LuSolvePrepared(LuSolvePrepared::new(op)), &[&lu, &perm, &b]).unwrap();
        assert_eq!(x[0].as_ref().unwrap().to_vec::<T>(), vec![want], "{op:?}");
        let x = run(
            p,
            LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(op)),
            &[&lu, &perm, &perm, &b],
        )
        .unwrap();
        assert_eq!(x[0].as_ref().unwrap().to_vec::<T>(), vec![want], "full {op:?}");
        let tri = run(
            p,
            LinalgOp::TriangularSolve(TriangularSolve(TriangularSolveOptions::default().op(op))),
            &[&lu, &b],
        )
        .unwrap();
        assert_eq!(tri[0].as_ref().unwrap().to_vec::<T>(), vec![want], "triangular {op:?}");
    }
}

fn prepared_errors<P: Provider<Memory = Host>>(p: &P) {
    let lu = HostTensor::new(&[2, 2, 2], &[2.0, 0.5, 1.0, 3.0, 2.0, 0.5, 1.0, 0.0]);
    let good = HostTensor::new(&[2, 2], &[0i64, 1, 1, 0]);
    let b = HostTensor::new(&[2, 1, 2], &[1.0, 1.0, 1.0, 1.0]);
    // Item 1 of `lu` has U[1, 1] = 0.
    assert_eq!(
        error_of(p, LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Identity)), &[&lu, &good, &b]),
        "lu_solve_prepared: argument `lu` is singular (batch item 1)"
    );
    assert_eq!(
        error_of(
            p,
            LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(MatOp::Transpose)),
            &[&lu, &good, &good, &b]
        ),
        "full_piv_lu_solve_prepared: argument `lu` is singular (batch item 1)"
    );
    // Not permutations of 0..2: a repeat (item 0) and an out-of-range entry.
    let lu_ok = HostTensor::new(&[2, 2], &[2.0, 0.5, 1.0, 3.0]);
    let b1 = HostTensor::new(&[2, 1], &[1.0, 1.0]);
    for bad in [[1i64, 1], [0, 2], [-1, 0]] {
        let perm = HostTensor::new(&[2], &bad);
        let ok = HostTensor::new(&[2], &[0i64, 1]);
        assert_eq!(
            error_of(
                p,
                LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Identity)),
                &[&lu_ok, &perm, &b1]
            ),
            "lu_solve_prepared: argument `perm` is singular (batch item 0)"
        );
        assert_eq!(
            error_of(
                p,
                LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(MatOp::Identity)),
                &[&lu_ok, &ok, &perm, &b1]
            ),
            "full_piv_lu_solve_prepared: argument `col_perm` is singular (batch item 0)"
        );
    }
    // Non-finite input to the fused solves.
    let nan = HostTensor::new(&[2, 2], &[1.0, f64::NAN, 0.0, 1.0]);
    assert_eq!(
        error_of(p, LinalgOp::LuFactorSolve(LuFactorSolve::default()), &[&nan, &b1]),
        "lu_factor_solve: argument `a` contains NaN or infinity (batch item 0)"
    );
    assert_eq!(
        error_of(p, LinalgOp::FullPivLuSolve(FullPivLuSolve::default()), &[&nan, &b1]),
        "full_piv_lu_solve: argument `a` contains NaN or infinity (batch item 0)"
    );
}

/// The n×n triangular matrix the options describe (zeros outside the
/// triangle, ones on a unit diagonal), and a stored `a` holding it with NaN
/// everywhere the kernel must not read.
fn triangular_pair<T: Scalar>(
    rng: &mut Rng,
    n: usize,
    opts: &TriangularSolveOptions,
) -> (Dense<T>, Dense<T>) {
    let mut dense = Dense::<T>::zeros(n, n);
    let mut stored = Dense::<T>::from_fn(n, n, |_, _| s(f64::NAN));
    for j in 0..n {
        for i in 0..n {
            let inside = match opts.triangle {
                Triangle::Lower => i > j,
                Triangle::Upper => i < j,
            };
            if inside {
                let x = rng.scalar::<T>().scale(s::<T>(1.0 / n as f64).re());
                dense[(i, j)] = x;
                stored[(i, j)] = x;
            }
        }
        let d = T::from_parts(s::<T>(1.0 + rng.uniform()).re(), s::<T>(rng.centered()).re());
        match opts.diagonal {
            Diagonal::NonUnit => {
                dense[(j, j)] = d;
                stored[(j, j)] = d;
            }
            Diagonal::Unit => dense[(j, j)] = T::one(),
        }
    }
    (dense, stored)
}

fn triangular<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut combos = 0;
    for triangle in [Triangle::Lower, Triangle::Upper] {
        for diagonal in [Diagonal::NonUnit, Diagonal::Unit] {
            for side in [Side::Left, Side::Right] {
                for op in [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint] {
                    combos += 1;
                    let opts = TriangularSolveOptions {
                        triangle,
                        diagonal,
                        side,
                        op,
                        ..TriangularSolveOptions::default()
                    };
                    for &(n, r) in &[(1, 1), (6, 3), (50, 4), (0, 2), (4, 0)] {
                        let (dense, stored) = triangular_pair::<T>(&mut rng, n, &opts);
                        let b: Dense<T> = match side {
                            Side::Left => rng.matrix(n, r),
                            Side::Right => rng.matrix(r, n),
                        };
                        let ins = [&HostTensor::from_dense(&stored), &HostTensor::from_dense(&b)];
                        let outs = run(p, LinalgOp::TriangularSolve(TriangularSolve(opts)), &ins).unwrap();
                        let x: Dense<T> = outs[0].as_ref().unwrap().matrix(0);
                        assert_eq!((x.rows, x.cols), (b.rows, b.cols));
                        let m = apply_op(&dense, op);
                        let what = format!("{opts:?} n={n} r={r}");
                        assert!(x.data.iter().all(|v| v.is_finite()), "{what}: non-finite x");
                        match side {
                            Side::Left => assert_residual(&m, &x, &b, &what),
                            // x m = b ⇔ mᵀ xᵀ = bᵀ.
                            Side::Right => {
                                assert_residual(&m.transpose(), &x.transpose(), &b.transpose(), &what)
                            }
                        }
                    }
                }
            }
        }
    }
    assert_eq!(combos, 24);
    // Batched: three systems at once.
    let opts =
        TriangularSolveOptions::default().triangle(Triangle::Upper).side(Side::Right).op(MatOp::Adjoint);
    let pairs: Vec<(Dense<T>, Dense<T>)> = (0..3).map(|_| triangular_pair::<T>(&mut rng, 5, &opts)).collect();
    let stored: Vec<Dense<T>> = pairs.iter().map(|p| p.1.clone()).collect();
    let b: Vec<Dense<T>> = (0..3).map(|_| rng.matrix(2, 5)).collect();
    let outs = run(
        p,
        LinalgOp::TriangularSolve(TriangularSolve(opts)),
        &[&HostTensor::batch(&stored), &HostTensor::batch(&b)],
    )
    .unwrap();
    for k in 0..3 {
        let x: Dense<T> = outs[0].as_ref().unwrap().matrix(k);
        // x aᴴ = b ⇔ a xᴴ = bᴴ.
        assert_residual(&pairs[k].0, &x.adjoint(), &b[k].adjoint(), &format!("batched triangular item {k}"));
    }
}

fn dtype_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    fused::<T, P>(p, seed);
    batched_fused::<T, P>(p);
    row_major::<T, P>(p);
    prepared::<T, P>(p, seed + 10);
    prepared_conjugation::<T, P>(p);
    triangular::<T, P>(p, seed + 20);
}

/// Every check, for any host provider.
pub fn suite<P: Provider<Memory = Host>>(p: &P) {
    dtype_suite::<f64, P>(p, 1);
    dtype_suite::<f32, P>(p, 2);
    dtype_suite::<Complex<f64>, P>(p, 3);
    dtype_suite::<Complex<f32>, P>(p, 4);
    prepared_errors(p);
}

fn solve<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(solve);
