//! LU family on every host provider: `P A = L U` (partial pivoting) and
//! `P A Q = L U` (full pivoting) for tall, wide, square, empty, batched and
//! row-major input in every dtype; the factor shapes and structure (unit
//! lower L with explicit ones, upper U, permutations of 0..m); singular and
//! zero matrices factor without NaN; inputs outside the safe range factor
//! exactly scaled.

use lindiff_core::op::{FullPivLu, FullPivLuFactor, Lu, LuFactor};
use lindiff_core::{Host, LinalgOp, Provider, RealScalar, Scalar, TensorDesc};
use lindiff_tests::dense::{eps, Dense, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// `x` as a scalar of type `T`.
fn s<T: Scalar>(x: f64) -> T {
    T::from_f64(x)
}

/// A matrix from rows of small numbers.
fn from_rows<T: Scalar>(rows: &[&[f64]]) -> Dense<T> {
    Dense::from_fn(rows.len(), rows[0].len(), |i, j| s(rows[i][j]))
}

/// Asserts `perm` holds every index of 0..n once.
fn assert_permutation(perm: &[i64], n: usize, what: &str) {
    assert_eq!(perm.len(), n, "{what}: length");
    let mut seen = vec![false; n];
    for &p in perm {
        assert!(p >= 0 && (p as usize) < n && !seen[p as usize], "{what}: {perm:?} is not a permutation");
        seen[p as usize] = true;
    }
}

/// `(P a Q)[i, j] = a[rows[i], cols[j]]`.
fn permute<T: Scalar>(a: &Dense<T>, rows: &[i64], cols: &[i64]) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |i, j| a[(rows[i] as usize, cols[j] as usize)])
}

fn identity_perm(n: usize) -> Vec<i64> {
    (0..n as i64).collect()
}

/// Asserts `l` is m×k unit lower (ones on the diagonal, zeros above) with
/// entries of modulus ≤ √2 (pivots are chosen by |re| + |im|), `u` is k×n
/// upper, and nothing is NaN.
fn assert_structure<T: Scalar>(l: &Dense<T>, u: &Dense<T>, m: usize, n: usize) {
    let k = m.min(n);
    assert_eq!((l.rows, l.cols, u.rows, u.cols), (m, k, k, n), "factor shapes");
    for j in 0..k {
        for i in 0..m {
            let x = l[(i, j)];
            assert!(x.is_finite(), "L[{i},{j}] = {x:?}");
            if i == j {
                assert_eq!(x, T::one(), "L diagonal");
            } else if i < j {
                assert_eq!(x, T::zero(), "L above the diagonal");
            } else {
                assert!(x.abs().to_f64() <= 2f64.sqrt() * (1.0 + 1e-6), "|L[{i},{j}]| = {x:?} > √2");
            }
        }
    }
    for j in 0..n {
        for i in 0..k {
            assert!(u[(i, j)].is_finite(), "U[{i},{j}]");
            if i > j {
                assert_eq!(u[(i, j)], T::zero(), "U below the diagonal");
            }
        }
    }
}

/// The strictly lower (unit) and upper factors of a packed m×n LU.
fn unpack<T: Scalar>(lu: &Dense<T>) -> (Dense<T>, Dense<T>) {
    let (m, n) = (lu.rows, lu.cols);
    let k = m.min(n);
    let l = Dense::from_fn(m, k, |i, j| match i.cmp(&j) {
        core::cmp::Ordering::Greater => lu[(i, j)],
        core::cmp::Ordering::Equal => T::one(),
        core::cmp::Ordering::Less => T::zero(),
    });
    let u = Dense::from_fn(k, n, |i, j| if i <= j { lu[(i, j)] } else { T::zero() });
    (l, u)
}

fn tol<T: Scalar>(m: usize, n: usize) -> f64 {
    50.0 * (m.max(n).max(1) as f64) * eps::<T>()
}

/// Runs `Lu` and `LuFactor` on `a` (given as `input`) and checks both.
fn check_partial<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &Dense<T>, input: &HostTensor) {
    let (m, n) = (a.rows, a.cols);
    let outs = run(p, LinalgOp::Lu(Lu), &[input]).unwrap();
    let perm: Vec<i64> = outs[0].as_ref().unwrap().to_vec();
    let l: Dense<T> = outs[1].as_ref().unwrap().matrix(0);
    let u: Dense<T> = outs[2].as_ref().unwrap().matrix(0);
    assert_permutation(&perm, m, "perm");
    assert_structure(&l, &u, m, n);
    let pa = permute(a, &perm, &identity_perm(n));
    let err = l.matmul(&u).sub(&pa).norm();
    assert!(err <= tol::<T>(m, n) * a.norm(), "lu {m}×{n}: ‖PA − LU‖ = {err}");

    let outs = run(p, LinalgOp::LuFactor(LuFactor), &[input]).unwrap();
    let lu: Dense<T> = outs[0].as_ref().unwrap().matrix(0);
    let perm: Vec<i64> = outs[1].as_ref().unwrap().to_vec();
    assert_permutation(&perm, m, "lu_factor perm");
    let (l, u) = unpack(&lu);
    assert_structure(&l, &u, m, n);
    let pa = permute(a, &perm, &identity_perm(n));
    let err = l.matmul(&u).sub(&pa).norm();
    assert!(err <= tol::<T>(m, n) * a.norm(), "lu_factor {m}×{n}: ‖PA − LU‖ = {err}");
}

/// Runs `FullPivLu` and `FullPivLuFactor` on `a` and checks both.
fn check_full<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &Dense<T>, input: &HostTensor) {
    let (m, n) = (a.rows, a.cols);
    let outs = run(p, LinalgOp::FullPivLu(FullPivLu), &[input]).unwrap();
    let rows: Vec<i64> = outs[0].as_ref().unwrap().to_vec();
    let cols: Vec<i64> = outs[1].as_ref().unwrap().to_vec();
    let l: Dense<T> = outs[2].as_ref().unwrap().matrix(0);
    let u: Dense<T> = outs[3].as_ref().unwrap().matrix(0);
    assert_permutation(&rows, m, "row_perm");
    assert_permutation(&cols, n, "col_perm");
    assert_structure(&l, &u, m, n);
    let err = l.matmul(&u).sub(&permute(a, &rows, &cols)).norm();
    assert!(err <= tol::<T>(m, n) * a.norm(), "full_piv_lu {m}×{n}: ‖PAQ − LU‖ = {err}");
    // Full pivoting puts the largest entry first (by |re| + |im| or by
    // max(|re|, |im|), either way within √2 of the largest modulus).
    if m.min(n) > 0 {
        let largest = a.max_abs();
        let first = u[(0, 0)].abs().to_f64();
        assert!(
            first >= largest / 2f64.sqrt() * (1.0 - 4.0 * eps::<T>()),
            "first full pivot {m}×{n}: {first} vs {largest}"
        );
    }

    let outs = run(p, LinalgOp::FullPivLuFactor(FullPivLuFactor), &[input]).unwrap();
    let lu: Dense<T> = outs[0].as_ref().unwrap().matrix(0);
    let rows: Vec<i64> = outs[1].as_ref().unwrap().to_vec();
    let cols: Vec<i64> = outs[2].as_ref().unwrap().to_vec();
    assert_permutation(&rows, m, "row_perm");
    assert_permutation(&cols, n, "col_perm");
    let (l, u) = unpack(&lu);
    assert_structure(&l, &u, m, n);
    let err = l.matmul(&u).sub(&permute(a, &rows, &cols)).norm();
    assert!(err <= tol::<T>(m, n) * a.norm(), "full_piv_lu_factor {m}×{n}: ‖PAQ − LU‖ = {err}");
}

fn random_shapes<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    // 40×40 and 70×50 go through faer's blocked recursion (threshold 16).
    for &(m, n) in &[
        (5, 5),
        (7, 4),
        (4, 7),
        (1, 3),
        (3, 1),
        (1, 1),
        (0, 3),
        (3, 0),
        (0, 0),
        (40, 40),
        (70, 50),
        (20, 33),
    ] {
        let a: Dense<T> = rng.matrix(m, n);
        let input = HostTensor::from_dense(&a);
        check_partial(p, &a, &input);
        check_full(p, &a, &input);
    }
}

/// Matrices whose largest entry lies outside the elimination's safe range
/// (2^±970 in f64, 2^±103 in f32), tall, wide and square: `a = a₁ · 2^e`
/// with e = ±990 (f64) or ±110 (f32), a power of two, so that the scaling
/// and the comparison are exact (but for entries of a₁ below 2^−32 or 2^−16
/// turning subnormal, far below the tolerance). L is scale-free and U is
/// `a`'s scale, so `P a₁ = L (U · 2^−e)` to the usual tolerance. Tall
/// inputs factor in L's buffer and wide ones in U's, so both of `lu`'s
/// paths and `lu_factor` are checked.
fn extreme_scales<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let mut rng = Rng::new(91);
    let exponent = if eps::<T>() < 1e-10 { 990 } else { 110 };
    let times =
        |x: &Dense<T>, e: i32| x.scale_cols(&vec![<T::Real as Scalar>::from_f64(2f64.powi(e)); x.cols]);
    for &(m, n) in &[(5, 5), (7, 4), (4, 7), (40, 40), (50, 30), (30, 50)] {
        let a1: Dense<T> = rng.matrix(m, n);
        for e in [exponent, -exponent] {
            let input = HostTensor::from_dense(&times(&a1, e));
            let check = |l: Dense<T>, u: Dense<T>, perm: Vec<i64>, what: &str| {
                assert_permutation(&perm, m, what);
                assert_structure(&l, &u, m, n);
                let err = l.matmul(&times(&u, -e)).sub(&permute(&a1, &perm, &identity_perm(n))).norm();
                assert!(err <= tol::<T>(m, n) * a1.norm(), "{what} {m}×{n} · 2^{e}: ‖PA − LU‖ = {err}");
            };
            let outs = run(p, LinalgOp::Lu(Lu), &[&input]).unwrap();
            let (perm, l, u) =
                (outs[0].as_ref().unwrap().to_vec(), outs[1].as_ref().unwrap(), outs[2].as_ref());
            check(l.matrix(0), u.unwrap().matrix(0), perm, "lu");
            let outs = run(p, LinalgOp::LuFactor(LuFactor), &[&input]).unwrap();
            let (l, u) = unpack(&outs[0].as_ref().unwrap().matrix::<T>(0));
            check(l, u, outs[1].as_ref().unwrap().to_vec(), "lu_factor");
        }
    }
}

/// Exactly singular inputs: zero pivots must leave zeros, not NaN.
fn singular<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let mut rng = Rng::new(77);
    let mut cases: Vec<Dense<T>> = vec![
        Dense::zeros(4, 4),
        Dense::zeros(3, 5),
        Dense::zeros(5, 2),
        from_rows(&[&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], &[1.0, 0.0, 1.0]]),
        // Rank one (exact small integers): every pivot after the first is 0.
        Dense::from_fn(5, 4, |i, j| s(((i + 1) * (j + 2)) as f64)),
    ];
    // A zero first column under random data, small and blocked sizes, and a
    // zero column in the middle of a tall and a wide matrix.
    for &(m, n, zero_col) in &[(6, 6, 0), (40, 40, 0), (40, 40, 17), (9, 5, 2), (5, 9, 3)] {
        let mut a: Dense<T> = rng.matrix(m, n);
        for i in 0..m {
            a[(i, zero_col)] = T::zero();
        }
        cases.push(a);
    }
    for a in &cases {
        let input = HostTensor::from_dense(a);
        check_partial(p, a, &input);
        check_full(p, a, &input);
    }
    // The zero matrix: L = I, U = 0 exactly.
    let zero: Dense<T> = Dense::zeros(4, 4);
    let outs = run(p, LinalgOp::Lu(Lu), &[&HostTensor::from_dense(&zero)]).unwrap();
    assert_eq!(outs[1].as_ref().unwrap().matrix::<T>(0), Dense::eye(4, 4));
    assert_eq!(outs[2].as_ref().unwrap().matrix::<T>(0), Dense::zeros(4, 4));
    let outs = run(p, LinalgOp::FullPivLu(FullPivLu), &[&HostTensor::from_dense(&zero)]).unwrap();
    assert_eq!(outs[2].as_ref().unwrap().matrix::<T>(0), Dense::eye(4, 4));
    assert_eq!(outs[3].as_ref().unwrap().matrix::<T>(0), Dense::zeros(4, 4));
}

/// Full pivoting of an exactly rank-2 matrix: U's trailing diagonal is ~0,
/// the leading pivots are not.
fn full_pivot_rank<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let mut rng = Rng::new(5);
    let x: Dense<T> = rng.matrix(6, 2);
    let y: Dense<T> = rng.matrix(2, 5);
    let a = x.matmul(&y);
    check_full(p, &a, &HostTensor::from_dense(&a));
    let outs = run(p, LinalgOp::FullPivLu(FullPivLu), &[&HostTensor::from_dense(&a)]).unwrap();
    let u: Dense<T> = outs[3].as_ref().unwrap().matrix(0);
    let scale = a.max_abs();
    for k in 0..2 {
        assert!(u[(k, k)].abs().to_f64() > 1e-3 * scale, "pivot {k}");
    }
    for k in 2..5 {
        assert!(u[(k, k)].abs().to_f64() <= tol::<T>(6, 5) * scale, "trailing pivot {k}: {:?}", u[(k, k)]);
    }
}

/// Hand-computed partial- and full-pivot factors of a 3×3 matrix.
fn known_factors<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    // a = [[1, 2], [4, 3]]: partial pivoting swaps rows: P a = [[4, 3], [1, 2]],
    // L = [[1, 0], [1/4, 1]], U = [[4, 3], [0, 5/4]].
    let a: Dense<T> = from_rows(&[&[1.0, 2.0], &[4.0, 3.0]]);
    let outs = run(p, LinalgOp::Lu(Lu), &[&HostTensor::from_dense(&a)]).unwrap();
    assert_eq!(outs[0].as_ref().unwrap().to_vec::<i64>(), vec![1, 0]);
    assert_eq!(outs[1].as_ref().unwrap().matrix::<T>(0), from_rows(&[&[1.0, 0.0], &[0.25, 1.0]]));
    assert_eq!(outs[2].as_ref().unwrap().matrix::<T>(0), from_rows(&[&[4.0, 3.0], &[0.0, 1.25]]));
    // Full pivoting: a = [[1, 2], [3, 8]]: pivot 8 at (1, 1):
    // P a Q = [[8, 3], [2, 1]], L = [[1, 0], [1/4, 1]], U = [[8, 3], [0, 1/4]].
    let a: Dense<T> = from_rows(&[&[1.0, 2.0], &[3.0, 8.0]]);
    let outs = run(p, LinalgOp::FullPivLu(FullPivLu), &[&HostTensor::from_dense(&a)]).unwrap();
    assert_eq!(outs[0].as_ref().unwrap().to_vec::<i64>(), vec![1, 0]);
    assert_eq!(outs[1].as_ref().unwrap().to_vec::<i64>(), vec![1, 0]);
    assert_eq!(outs[2].as_ref().unwrap().matrix::<T>(0), from_rows(&[&[1.0, 0.0], &[0.25, 1.0]]));
    assert_eq!(outs[3].as_ref().unwrap().matrix::<T>(0), from_rows(&[&[8.0, 3.0], &[0.0, 0.25]]));
}

fn batched<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize) {
    let mut rng = Rng::new(9);
    let mut items: Vec<Dense<T>> = (0..3).map(|_| rng.matrix(m, n)).collect();
    items[1] = Dense::zeros(m, n); // a singular item in the middle
    let input = HostTensor::batch(&items);
    let k = m.min(n);
    let outs = run(p, LinalgOp::Lu(Lu), &[&input]).unwrap();
    assert_eq!(outs[0].as_ref().unwrap().dims(), &[m, 3]);
    assert_eq!(outs[1].as_ref().unwrap().dims(), &[m, k, 3]);
    assert_eq!(outs[2].as_ref().unwrap().dims(), &[k, n, 3]);
    for (b, a) in items.iter().enumerate() {
        let perm: Vec<i64> = outs[0].as_ref().unwrap().item(1, b);
        let l: Dense<T> = outs[1].as_ref().unwrap().matrix(b);
        let u: Dense<T> = outs[2].as_ref().unwrap().matrix(b);
        assert_permutation(&perm, m, "batched perm");
        assert_structure(&l, &u, m, n);
        let err = l.matmul(&u).sub(&permute(a, &perm, &identity_perm(n))).norm();
        assert!(err <= tol::<T>(m, n) * a.norm(), "batch item {b}: {err}");
    }
    let outs = run(p, LinalgOp::FullPivLuFactor(FullPivLuFactor), &[&input]).unwrap();
    for (b, a) in items.iter().enumerate() {
        let (l, u) = unpack(&outs[0].as_ref().unwrap().matrix::<T>(b));
        let rows: Vec<i64> = outs[1].as_ref().unwrap().item(1, b);
        let cols: Vec<i64> = outs[2].as_ref().unwrap().item(1, b);
        assert_permutation(&rows, m, "batched row_perm");
        assert_permutation(&cols, n, "batched col_perm");
        let err = l.matmul(&u).sub(&permute(a, &rows, &cols)).norm();
        assert!(err <= tol::<T>(m, n) * a.norm(), "full batch item {b}: {err}");
    }
}

fn row_major<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize) {
    let mut rng = Rng::new(31);
    let a: Dense<T> = rng.matrix(m, n);
    let data: Vec<T> = (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| a[(i, j)]).collect();
    let input = HostTensor::with_desc(TensorDesc::row_major_matrix(T::DTYPE, m, n).unwrap(), &data);
    check_partial(p, &a, &input);
    check_full(p, &a, &input);
}

fn non_finite<P: Provider<Memory = Host>>(p: &P) {
    let mut a = Dense::<f64>::eye(3, 3);
    a[(1, 2)] = f64::NAN;
    let items = [Dense::eye(3, 3), a];
    let input = HostTensor::batch(&items);
    let ops = [
        (LinalgOp::Lu(Lu), "lu"),
        (LinalgOp::LuFactor(LuFactor), "lu_factor"),
        (LinalgOp::FullPivLu(FullPivLu), "full_piv_lu"),
        (LinalgOp::FullPivLuFactor(FullPivLuFactor), "full_piv_lu_factor"),
    ];
    rejects_non_finite(p, &ops, &input, 1, "NaN");
    for n in [3, 64] {
        hidden_nan::<f64, P>(p, n, (2, 1));
        hidden_nan::<f64, P>(p, n, (0, 2));
    }
    hidden_nan::<Complex<f64>, P>(p, 3, (2, 1));
}

/// A NaN where the elimination step of a zero pivot column would have
/// carried it on, but a skipped step does not: below the diagonal of a
/// column that is otherwise zero from the diagonal down (`at` = (2, 1)),
/// or in the pivot's row of U (`at` = (0, 2) with column 0 zero). It must
/// be reported, not left in L or U with a finite diagonal (n = 3: lindiff's
/// own small kernel for real input; n = 64 and complex input: faer's, then
/// the unblocked redo).
fn hidden_nan<T: Scalar, P: Provider<Memory = Host>>(p: &P, n: usize, at: (usize, usize)) {
    let mut a = Dense::<T>::eye(n, n);
    if at == (2, 1) {
        a[(1, 1)] = T::zero();
        a[(1, 2)] = s(2.0);
    } else {
        a[(0, 0)] = T::zero();
        a[(0, 1)] = s(1.0);
    }
    a[at] = s(f64::NAN);
    let input = HostTensor::batch(&[a]);
    let ops = [
        (LinalgOp::Lu(Lu), "lu"),
        (LinalgOp::LuFactor(LuFactor), "lu_factor"),
        (LinalgOp::FullPivLu(FullPivLu), "full_piv_lu"),
    ];
    rejects_non_finite(p, &ops, &input, 0, &format!("a NaN at {at:?} ({n}×{n})"));
}

/// Each op on `input` fails with the non-finite error for `a` at batch item
/// `item`; `what` names the bad entry when one is accepted.
fn rejects_non_finite<P: Provider<Memory = Host>>(
    p: &P,
    ops: &[(LinalgOp, &str)],
    input: &HostTensor,
    item: usize,
    what: &str,
) {
    for (op, name) in ops {
        let err = match run(p, op.clone(), &[input]) {
            Ok(_) => panic!("{name} accepted {what}"),
            Err(e) => e,
        };
        assert_eq!(
            err.to_string(),
            format!("{name}: argument `a` contains NaN or infinity (batch item {item})")
        );
    }
}

fn dtype_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    random_shapes::<T, P>(p, seed);
    extreme_scales::<T, P>(p);
    singular::<T, P>(p);
    full_pivot_rank::<T, P>(p);
    known_factors::<T, P>(p);
    batched::<T, P>(p, 5, 5);
    batched::<T, P>(p, 6, 3);
    batched::<T, P>(p, 3, 6);
    row_major::<T, P>(p, 6, 4);
    row_major::<T, P>(p, 30, 30);
}

/// Every check, for any host provider.
pub fn suite<P: Provider<Memory = Host>>(p: &P) {
    dtype_suite::<f64, P>(p, 1);
    dtype_suite::<f32, P>(p, 2);
    dtype_suite::<Complex<f64>, P>(p, 3);
    dtype_suite::<Complex<f32>, P>(p, 4);
    non_finite(p);
}

fn lu<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(lu);
