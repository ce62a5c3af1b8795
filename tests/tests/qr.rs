//! QR family on every host provider: unpivoted QR (thin and complete),
//! rank-revealing QR (rank, permutation, thresholds, all-zero input) and the
//! compact Householder state (factor, append, Q, R, apply), checked through
//! mathematical properties: reconstruction, orthonormality, diag(R) real and
//! ≥ 0, and the documented meaning of the compact state (Q_h = H_0⋯H_{k−1},
//! H_j = I − τ_j v_j v_jᴴ) rebuilt naively on the test side.

use lindiff_core::op::{
    HouseholderQrAppend, HouseholderQrApply, HouseholderQrFactor, HouseholderQrQ, HouseholderQrR, Qr, QrMode,
    QrOptions, RankRevealingQr, RankRevealingQrOptions,
};
use lindiff_core::{
    DType, Element, Error, Exec, Host, LinalgOp, MatOp, Provider, RealScalar, Scalar, TensorDesc,
};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

fn tol<T: Scalar>(m: usize, n: usize) -> f64 {
    50.0 * (m.max(n).max(1) as f64) * eps::<T>()
}

/// ‖x − y‖ ≤ tol · max(1, ‖y‖).
fn assert_close<T: Scalar>(x: &Dense<T>, y: &Dense<T>, tol: f64, what: &str) {
    assert_eq!((x.rows, x.cols), (y.rows, y.cols), "{what}: shape");
    let err = x.sub(y).norm();
    assert!(err <= tol * y.norm().max(1.0), "{what}: error {err:e} (tol {tol:e})");
}

/// R is upper triangular (exact zeros below) with a real, non-negative diagonal.
fn assert_upper_nonnegative_diag<T: Scalar>(r: &Dense<T>, what: &str) {
    for j in 0..r.cols {
        for i in j + 1..r.rows {
            assert!(r[(i, j)] == T::zero(), "{what}: R[{i},{j}] = {:?} below the diagonal", r[(i, j)]);
        }
    }
    for i in 0..r.rows.min(r.cols) {
        let d = r[(i, i)];
        assert!(d.im() == Re::<T>::zero() && d.re() >= Re::<T>::zero(), "{what}: R[{i},{i}] = {d:?}");
    }
}

fn dtype_of<T: Element>() -> DType {
    T::DTYPE
}

/// The row-major view of `a` (strides swapped, same matrix).
fn row_major<T: Scalar>(a: &Dense<T>) -> HostTensor {
    let data: Vec<T> = a.transpose().data;
    HostTensor::with_desc(TensorDesc::row_major_matrix(dtype_of::<T>(), a.rows, a.cols).unwrap(), &data)
}

fn outputs<P: Provider<Memory = Host>>(p: &P, op: LinalgOp, inputs: &[&HostTensor]) -> Vec<HostTensor> {
    run(p, op, inputs).unwrap().into_iter().map(|o| o.unwrap()).collect()
}

// ---------------------------------------------------------------- qr ----

/// Runs `qr` on `input` (matrix `a`, item `b` of it) and checks Q, R.
fn check_qr_outputs<T: Scalar>(outs: &[HostTensor], a: &Dense<T>, b: usize, mode: QrMode) {
    let (m, n) = (a.rows, a.cols);
    let k = m.min(n);
    let qcols = if mode == QrMode::Complete { m } else { k };
    let q: Dense<T> = outs[0].matrix(b);
    let r: Dense<T> = outs[1].matrix(b);
    assert_eq!((q.rows, q.cols, r.rows, r.cols), (m, qcols, qcols, n));
    let tol = tol::<T>(m, n);
    assert!(q.orthonormality_error() <= tol, "Q orthonormality {}", q.orthonormality_error());
    assert_upper_nonnegative_diag(&r, "qr");
    assert_close(&q.matmul(&r), a, tol, "qr: Q R = A");
}

fn check_qr<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &Dense<T>, mode: QrMode) {
    let op = LinalgOp::Qr(Qr(QrOptions::default().mode(mode)));
    let outs = outputs(p, op, &[&HostTensor::from_dense(a)]);
    check_qr_outputs(&outs, a, 0, mode);
}

fn qr_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    for &(m, n) in &[(5, 5), (7, 4), (4, 7), (1, 3), (3, 1), (1, 1), (0, 3), (3, 0), (60, 50), (40, 70)] {
        let a: Dense<T> = rng.matrix(m, n);
        check_qr(p, &a, QrMode::Reduced);
        check_qr(p, &a, QrMode::Complete);
    }
    // Complete Q of an empty-column matrix is the identity.
    let outs = outputs(
        p,
        LinalgOp::Qr(Qr(QrOptions::default().mode(QrMode::Complete))),
        &[&HostTensor::new::<T>(&[3, 0], &[])],
    );
    assert_eq!(outs[0].matrix::<T>(0), Dense::eye(3, 3));
    // Batched: every item checked.
    let items: Vec<Dense<T>> = (0..3).map(|_| rng.matrix(6, 4)).collect();
    for mode in [QrMode::Reduced, QrMode::Complete] {
        let outs =
            outputs(p, LinalgOp::Qr(Qr(QrOptions::default().mode(mode))), &[&HostTensor::batch(&items)]);
        for (b, a) in items.iter().enumerate() {
            check_qr_outputs(&outs, a, b, mode);
        }
    }
    // Row-major view, tall and wide.
    for &(m, n) in &[(6, 4), (3, 5)] {
        let a: Dense<T> = rng.matrix(m, n);
        let outs = outputs(p, LinalgOp::Qr(Qr::default()), &[&row_major(&a)]);
        check_qr_outputs(&outs, &a, 0, QrMode::Reduced);
    }
    // Rank-deficient (6×5 of rank 3): echelon R is allowed, but Q R = A,
    // Q orthonormal and diag(R) real ≥ 0 still hold.
    let a: Dense<T> = rng.with_spectrum(6, 5, &[3.0, 2.0, 1.0]);
    check_qr(p, &a, QrMode::Reduced);
    check_qr(p, &a, QrMode::Complete);
    // Zero matrix.
    check_qr(p, &Dense::<T>::zeros(4, 3), QrMode::Reduced);
    check_qr(p, &Dense::<T>::zeros(3, 4), QrMode::Complete);
    // Hand-computed: [[3], [4]] = [[0.6], [0.8]] · [5]; and −A flips Q only.
    for sign in [1.0, -1.0] {
        let a = Dense::from_col_major(2, 1, vec![T::from_f64(3.0 * sign), T::from_f64(4.0 * sign)]);
        let outs = outputs(p, LinalgOp::Qr(Qr::default()), &[&HostTensor::from_dense(&a)]);
        let (q, r): (Dense<T>, Dense<T>) = (outs[0].matrix(0), outs[1].matrix(0));
        assert!((r[(0, 0)].re().to_f64() - 5.0).abs() <= 10.0 * eps::<T>());
        assert!((q[(0, 0)].re().to_f64() - 0.6 * sign).abs() <= 10.0 * eps::<T>());
        assert!((q[(1, 0)].re().to_f64() - 0.8 * sign).abs() <= 10.0 * eps::<T>());
    }
}

// --------------------------------------------------- rank-revealing qr ----

/// Checks one item of a rank-revealing QR's outputs; returns the rank.
fn check_rrqr_outputs<T: Scalar>(outs: &[HostTensor], a: &Dense<T>, b: usize) -> usize {
    let (m, n) = (a.rows, a.cols);
    let k = m.min(n);
    let q: Dense<T> = outs[0].matrix(b);
    let r: Dense<T> = outs[1].matrix(b);
    let perm: Vec<i64> = outs[2].item(1, b);
    let rank: Vec<i64> = outs[3].item(0, b);
    assert_eq!((q.rows, q.cols, r.rows, r.cols, perm.len(), rank.len()), (m, k, k, n, n, 1));
    let tol = tol::<T>(m, n);
    assert!(q.orthonormality_error() <= tol, "Q orthonormality {}", q.orthonormality_error());
    assert_upper_nonnegative_diag(&r, "rank_revealing_qr");
    for i in 1..k {
        assert!(
            r[(i, i)].re().to_f64() <= r[(i - 1, i - 1)].re().to_f64() * (1.0 + tol),
            "|R[i,i]| not non-increasing at {i}"
        );
    }
    let mut seen = vec![false; n];
    for &j in &perm {
        assert!((0..n as i64).contains(&j) && !seen[j as usize], "perm {perm:?} is not a permutation");
        seen[j as usize] = true;
    }
    // a[:, perm] = q r
    let ap = Dense::from_fn(m, n, |i, j| a[(i, perm[j] as usize)]);
    assert_close(&q.matmul(&r), &ap, tol, "a[:, perm] = q r");
    assert!((0..=k as i64).contains(&rank[0]));
    rank[0] as usize
}

fn rrqr<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &Dense<T>, opts: RankRevealingQrOptions) -> usize {
    let outs = outputs(p, LinalgOp::RankRevealingQr(RankRevealingQr(opts)), &[&HostTensor::from_dense(a)]);
    check_rrqr_outputs(&outs, a, 0)
}

fn rrqr_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let d = RankRevealingQrOptions::default();
    for &(m, n) in &[(5, 5), (7, 4), (4, 7), (1, 3), (3, 1), (60, 50), (0, 3), (3, 0)] {
        let a: Dense<T> = rng.matrix(m, n);
        assert_eq!(rrqr(p, &a, d), m.min(n), "full rank {m}×{n}");
    }
    // 6×5 of rank 3 (and its adjoint, 5×6).
    let a: Dense<T> = rng.with_spectrum(6, 5, &[3.0, 2.0, 1.0]);
    assert_eq!(rrqr(p, &a, d), 3);
    assert_eq!(rrqr(p, &a.adjoint(), d), 3);
    // Hand-computed diagonal: columns 4·e0, 2·e1, 1e-5·e2, 0 (in shuffled
    // order), so |diag(R)| = 4, 2, 1e-5, 0 whatever the pivoting.
    let mut a = Dense::<T>::zeros(5, 4);
    a[(0, 2)] = T::from_f64(-4.0);
    a[(1, 0)] = T::from_f64(2.0);
    a[(2, 3)] = T::from_f64(1e-5);
    assert_eq!(rrqr(p, &a, d), 3);
    assert_eq!(rrqr(p, &a, d.rtol(1e-3)), 2);
    assert_eq!(rrqr(p, &a, d.atol(3.0)), 1);
    assert_eq!(rrqr(p, &a, d.atol(5.0)), 0);
    let outs = outputs(p, LinalgOp::RankRevealingQr(RankRevealingQr(d)), &[&HostTensor::from_dense(&a)]);
    assert_eq!(outs[2].to_vec::<i64>(), vec![2, 0, 3, 1]);
    // All-zero input: Q = I[:, :k], R = 0, identity permutation, rank 0.
    for &(m, n) in &[(4, 3), (3, 4)] {
        let z = Dense::<T>::zeros(m, n);
        let outs = outputs(p, LinalgOp::RankRevealingQr(RankRevealingQr(d)), &[&HostTensor::from_dense(&z)]);
        assert_eq!(outs[0].matrix::<T>(0), Dense::eye(m, m.min(n)));
        assert_eq!(outs[1].matrix::<T>(0), Dense::zeros(m.min(n), n));
        assert_eq!(outs[2].to_vec::<i64>(), (0..n as i64).collect::<Vec<_>>());
        assert_eq!(outs[3].to_vec::<i64>(), vec![0]);
    }
    // Batched, with one zero and one rank-deficient item.
    let items: Vec<Dense<T>> =
        vec![rng.matrix(6, 5), Dense::zeros(6, 5), rng.with_spectrum(6, 5, &[1.0, 0.5]), rng.matrix(6, 5)];
    let outs = outputs(p, LinalgOp::RankRevealingQr(RankRevealingQr(d)), &[&HostTensor::batch(&items)]);
    let ranks: Vec<usize> = items.iter().enumerate().map(|(b, a)| check_rrqr_outputs(&outs, a, b)).collect();
    assert_eq!(ranks, vec![5, 0, 2, 5]);
    // Row-major view.
    let a: Dense<T> = rng.with_spectrum(5, 7, &[2.0, 1.0, 0.5, 0.25]);
    let outs = outputs(p, LinalgOp::RankRevealingQr(RankRevealingQr(d)), &[&row_major(&a)]);
    assert_eq!(check_rrqr_outputs(&outs, &a, 0), 4);
}

// ------------------------------------------------- householder family ----

/// Q_h = H_0 ⋯ H_{k−1}, H_j = I − τ_j v_j v_jᴴ, built naively from the
/// documented meaning of the compact state.
fn explicit_q<T: Scalar>(h: &Dense<T>, tau: &[T]) -> Dense<T> {
    let m = h.rows;
    let mut q = Dense::<T>::eye(m, m);
    for (j, &t) in tau.iter().enumerate() {
        let v: Vec<T> = (0..m)
            .map(|i| match i.cmp(&j) {
                core::cmp::Ordering::Less => T::zero(),
                core::cmp::Ordering::Equal => T::one(),
                core::cmp::Ordering::Greater => h[(i, j)],
            })
            .collect();
        // q ← q H_j = q − τ (q v) vᴴ
        let qv = q.matmul(&Dense::from_col_major(m, 1, v.clone()));
        for b in 0..m {
            for a in 0..m {
                q[(a, b)] -= t * qv[(a, 0)] * v[b].conj();
            }
        }
    }
    q
}

/// triu(h): the state's raw R (m×n).
fn triu<T: Scalar>(h: &Dense<T>) -> Dense<T> {
    Dense::from_fn(h.rows, h.cols, |i, j| if i <= j { h[(i, j)] } else { T::zero() })
}

fn factor<P: Provider<Memory = Host>>(p: &P, a: &HostTensor) -> (HostTensor, HostTensor) {
    let mut outs = outputs(p, LinalgOp::HouseholderQrFactor(HouseholderQrFactor), &[a]).into_iter();
    (outs.next().unwrap(), outs.next().unwrap())
}

fn q_and_r<P: Provider<Memory = Host>>(p: &P, h: &HostTensor, tau: &HostTensor) -> (HostTensor, HostTensor) {
    let q = outputs(p, LinalgOp::HouseholderQrQ(HouseholderQrQ), &[h, tau]).remove(0);
    let r = outputs(p, LinalgOp::HouseholderQrR(HouseholderQrR), &[h]).remove(0);
    (q, r)
}

fn apply<P: Provider<Memory = Host>>(
    p: &P,
    op: MatOp,
    h: &HostTensor,
    tau: &HostTensor,
    b: &HostTensor,
) -> HostTensor {
    outputs(p, LinalgOp::HouseholderQrApply(HouseholderQrApply(op)), &[h, tau, b]).remove(0)
}

/// Checks a state (item `b`) against the matrix it factors: the naive
/// Q_h triu(h) = A, and the normalised Q, R of the Q/R kernels.
fn check_state<T: Scalar, P: Provider<Memory = Host>>(
    p: &P,
    (h, tau): (&HostTensor, &HostTensor),
    a: &Dense<T>,
    b: usize,
) -> (Dense<T>, Dense<T>) {
    let (m, n) = (a.rows, a.cols);
    let k = m.min(n);
    let tol = tol::<T>(m, n);
    let hb: Dense<T> = h.matrix(b);
    let taub: Vec<T> = tau.item(1, b);
    assert_eq!((hb.rows, hb.cols, taub.len()), (m, n, k));
    let qh = explicit_q(&hb, &taub);
    assert!(qh.orthonormality_error() <= tol, "Q_h unitary");
    assert_close(&qh.matmul(&triu(&hb)), a, tol, "Q_h triu(h) = A");
    let (q, r) = q_and_r(p, h, tau);
    let (q, r): (Dense<T>, Dense<T>) = (q.matrix(b), r.matrix(b));
    assert_eq!((q.rows, q.cols, r.rows, r.cols), (m, k, k, n));
    assert!(q.orthonormality_error() <= tol, "Q orthonormal");
    assert_upper_nonnegative_diag(&r, "householder_qr_r");
    assert_close(&q.matmul(&r), a, tol, "Q R = A");
    (q, r)
}

fn factor_and_check<T: Scalar, P: Provider<Memory = Host>>(p: &P, a: &Dense<T>) -> (Dense<T>, Dense<T>) {
    let (h, tau) = factor(p, &HostTensor::from_dense(a));
    check_state(p, (&h, &tau), a, 0)
}

/// Append `bm` to the state of `am`; compare with factoring [am bm] directly.
fn check_append<T: Scalar, P: Provider<Memory = Host>>(p: &P, am: &Dense<T>, bm: &Dense<T>) {
    let (m, n1, n2) = (am.rows, am.cols, bm.cols);
    let ab = Dense::from_fn(m, n1 + n2, |i, j| if j < n1 { am[(i, j)] } else { bm[(i, j - n1)] });
    let (h1, tau1) = factor(p, &HostTensor::from_dense(am));
    let outs = outputs(
        p,
        LinalgOp::HouseholderQrAppend(HouseholderQrAppend),
        &[&h1, &tau1, &HostTensor::from_dense(bm)],
    );
    let (h, tau) = (&outs[0], &outs[1]);
    // A's part of the state is untouched (never re-factored).
    let (h1d, hd): (Dense<T>, Dense<T>) = (h1.matrix(0), h.matrix(0));
    assert_eq!(hd.cols_range(0, n1), h1d, "append changed A's columns");
    let (tau1v, tauv) = (tau1.to_vec::<T>(), tau.to_vec::<T>());
    assert_eq!(tauv.len(), m.min(n1 + n2));
    assert_eq!(&tauv[..tau1v.len()], &tau1v[..], "append changed A's tau");
    let (q, r) = check_state(p, (h, tau), &ab, 0);
    let (q0, r0) = factor_and_check::<T, P>(p, &ab);
    let tol = tol::<T>(m, n1 + n2) * 10.0;
    assert_close(&q, &q0, tol, "append Q vs direct");
    assert_close(&r, &r0, tol, "append R vs direct");
}

/// A unitary state with arbitrary reflectors: real τ = 2/‖v‖² for real `T`,
/// complex τ = (1 − e^{iθ})/‖v‖² for complex `T`; reflector `zero` has τ = 0
/// (with garbage below its diagonal).
fn random_state<T: Scalar>(rng: &mut Rng, m: usize, n: usize, zero: usize) -> (Dense<T>, Vec<T>) {
    let h: Dense<T> = rng.matrix(m, n);
    let tau = (0..m.min(n))
        .map(|j| {
            let vv = 1.0 + (j + 1..m).map(|i| h[(i, j)].abs2().to_f64()).sum::<f64>();
            if j == zero {
                T::zero()
            } else if T::IS_COMPLEX {
                let th = 0.3 + j as f64;
                T::from_parts(Re::<T>::from_f64((1.0 - th.cos()) / vv), Re::<T>::from_f64(-th.sin() / vv))
            } else {
                T::from_f64(2.0 / vv)
            }
        })
        .collect();
    (h, tau)
}

fn householder_suite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    // Factor → Q, R, for tall / wide / square / blocked sizes / empty.
    for &(m, n) in &[(5, 5), (8, 3), (3, 8), (1, 1), (4, 1), (1, 4), (60, 50), (50, 70), (0, 3), (3, 0)] {
        factor_and_check::<T, P>(p, &rng.matrix(m, n));
    }
    // Rank-deficient: the state still reconstructs A.
    factor_and_check::<T, P>(p, &rng.with_spectrum(6, 5, &[3.0, 2.0, 1.0]));
    // Row-major input.
    let a: Dense<T> = rng.matrix(7, 4);
    let (h, tau) = factor(p, &row_major(&a));
    check_state(p, (&h, &tau), &a, 0);
    // Row-major state and operands for Q, R, Apply and Append.
    let hd: Dense<T> = h.matrix(0);
    let (q, r) = q_and_r(p, &h, &tau);
    let (q_rm, r_rm) = q_and_r(p, &row_major(&hd), &tau);
    assert_close(&q_rm.matrix::<T>(0), &q.matrix(0), tol::<T>(7, 4), "Q from a row-major h");
    assert_eq!(r_rm.matrix::<T>(0), r.matrix(0), "R from a row-major h");
    let raw: Dense<T> = apply(p, MatOp::Adjoint, &row_major(&hd), &tau, &row_major(&a)).matrix(0);
    assert_close(&raw, &triu(&hd), tol::<T>(7, 4), "row-major Q_hᴴ A = triu(h)");
    let bm: Dense<T> = rng.matrix(7, 2);
    let s = outputs(
        p,
        LinalgOp::HouseholderQrAppend(HouseholderQrAppend),
        &[&row_major(&hd), &tau, &row_major(&bm)],
    );
    let ab = Dense::from_fn(7, 6, |i, j| if j < 4 { a[(i, j)] } else { bm[(i, j - 4)] });
    check_state(p, (&s[0], &s[1]), &ab, 0);
    // Append: tall, wide outcome, square outcome, A already wide/square,
    // empty B, and a blocked size.
    let sizes = [
        (8, 3, 2),
        (4, 3, 3),
        (5, 3, 2),
        (4, 5, 2),
        (4, 4, 3),
        (6, 2, 0),
        (3, 0, 2),
        (0, 2, 3),
        (60, 30, 20),
    ];
    for &(m, n1, n2) in &sizes {
        check_append::<T, P>(p, &rng.matrix(m, n1), &rng.matrix(m, n2));
    }
    // Appending twice equals factoring all at once.
    {
        let (a, b, c): (Dense<T>, Dense<T>, Dense<T>) =
            (rng.matrix(9, 2), rng.matrix(9, 3), rng.matrix(9, 2));
        let (h, tau) = factor(p, &HostTensor::from_dense(&a));
        let append = LinalgOp::HouseholderQrAppend(HouseholderQrAppend);
        let s1 = outputs(p, append.clone(), &[&h, &tau, &HostTensor::from_dense(&b)]);
        let s2 = outputs(p, append, &[&s1[0], &s1[1], &HostTensor::from_dense(&c)]);
        let abc = Dense::from_fn(9, 7, |i, j| match j {
            0..=1 => a[(i, j)],
            2..=4 => b[(i, j - 2)],
            _ => c[(i, j - 5)],
        });
        let (q, r) = check_state(p, (&s2[0], &s2[1]), &abc, 0);
        let (q0, r0) = factor_and_check::<T, P>(p, &abc);
        assert_close(&q, &q0, tol::<T>(9, 7) * 10.0, "double append Q");
        assert_close(&r, &r0, tol::<T>(9, 7) * 10.0, "double append R");
    }
    // Apply: Qᴴ then Q returns b; Qᴴ A = triu(h) (the raw R, zeros below row k).
    for &(m, n, r) in &[(8, 3, 4), (3, 8, 2), (5, 5, 5), (60, 50, 7)] {
        let a: Dense<T> = rng.matrix(m, n);
        let (h, tau) = factor(p, &HostTensor::from_dense(&a));
        let b: Dense<T> = rng.matrix(m, r);
        let tol = tol::<T>(m, n);
        let y = apply(p, MatOp::Adjoint, &h, &tau, &HostTensor::from_dense(&b));
        let back: Dense<T> = apply(p, MatOp::Identity, &h, &tau, &y).matrix(0);
        assert_close(&back, &b, tol, "Q (Qᴴ b) = b");
        let y: Dense<T> = y.matrix(0);
        assert!((y.norm() - b.norm()).abs() <= tol * b.norm(), "Qᴴ preserves norms");
        let raw: Dense<T> = apply(p, MatOp::Adjoint, &h, &tau, &HostTensor::from_dense(&a)).matrix(0);
        assert_close(&raw, &triu(&h.matrix(0)), tol, "Q_hᴴ A = triu(h)");
        let back: Dense<T> = apply(p, MatOp::Transpose, &h, &tau, &HostTensor::from_dense(&b)).matrix(0);
        let qh = explicit_q(&h.matrix(0), &tau.to_vec());
        assert_close(&back, &qh.transpose().matmul(&b), tol, "Q_hᵀ b");
    }
    // Apply on arbitrary (complex-τ for complex T) states, against the naive
    // product, for every MatOp; then Q_h (Q_hᴴ b) = b.
    for &(m, n, r, zero) in &[(6, 4, 3, 1), (4, 6, 2, 9), (5, 5, 3, 4), (40, 30, 5, 7)] {
        let (hd, taud) = random_state::<T>(&mut rng, m, n, zero);
        let (h, tau) = (HostTensor::from_dense(&hd), HostTensor::new(&[taud.len()], &taud));
        let qh = explicit_q(&hd, &taud);
        let b: Dense<T> = rng.matrix(m, r);
        let bt = HostTensor::from_dense(&b);
        let tol = tol::<T>(m, n);
        for (op, want) in [
            (MatOp::Identity, qh.matmul(&b)),
            (MatOp::Adjoint, qh.adjoint().matmul(&b)),
            (MatOp::Transpose, qh.transpose().matmul(&b)),
        ] {
            assert_close(
                &apply(p, op, &h, &tau, &bt).matrix::<T>(0),
                &want,
                tol,
                &format!("apply vs naive {op:?} {m}x{n} zero {zero}"),
            );
        }
        let y = apply(p, MatOp::Adjoint, &h, &tau, &bt);
        assert_close(&apply(p, MatOp::Identity, &h, &tau, &y).matrix::<T>(0), &b, tol, "round trip");
        // Q and R of such a state follow the same phase convention.
        let (q, rr) = q_and_r(p, &h, &tau);
        let (q, rr): (Dense<T>, Dense<T>) = (q.matrix(0), rr.matrix(0));
        assert_upper_nonnegative_diag(&rr, "R of a random state");
        let k = m.min(n);
        assert_close(&q.matmul(&rr), &qh.cols_range(0, k).matmul(&triu(&hd).rows_range(0, k)), tol, "Q R");
    }
    // Batched: factor, Q/R, append, apply over 3 items.
    let (m, n1, n2) = (7, 3, 2);
    let items: Vec<Dense<T>> = (0..3).map(|_| rng.matrix(m, n1)).collect();
    let news: Vec<Dense<T>> = (0..3).map(|_| rng.matrix(m, n2)).collect();
    let (h, tau) = factor(p, &HostTensor::batch(&items));
    for (b, a) in items.iter().enumerate() {
        check_state(p, (&h, &tau), a, b);
    }
    let s = outputs(
        p,
        LinalgOp::HouseholderQrAppend(HouseholderQrAppend),
        &[&h, &tau, &HostTensor::batch(&news)],
    );
    for b in 0..3 {
        let ab =
            Dense::from_fn(m, n1 + n2, |i, j| if j < n1 { items[b][(i, j)] } else { news[b][(i, j - n1)] });
        check_state(p, (&s[0], &s[1]), &ab, b);
    }
    let y = apply(p, MatOp::Adjoint, &h, &tau, &HostTensor::batch(&items));
    for b in 0..items.len() {
        assert_close(&y.matrix::<T>(b), &triu(&h.matrix(b)), tol::<T>(m, n1), "batched Qᴴ A");
    }
}

// ------------------------------------------------------------- errors ----

fn error_suite<P: Provider<Memory = Host>>(p: &P) {
    let mut rng = Rng::new(99);
    let good: Dense<f64> = rng.matrix(4, 3);
    let mut bad = good.clone();
    bad[(2, 1)] = f64::NAN;
    let batch = HostTensor::batch(&[good.clone(), bad.clone(), bad.clone()]);
    for op in [
        LinalgOp::Qr(Qr::default()),
        LinalgOp::RankRevealingQr(RankRevealingQr::default()),
        LinalgOp::HouseholderQrFactor(HouseholderQrFactor),
    ] {
        let err = run(p, op, &[&batch]).err().expect("NaN input must fail");
        assert!(matches!(err, Error::NonFinite { arg: "a", batch_index: 1, .. }), "{err:?}");
    }
    let (h, tau) = factor(p, &HostTensor::from_dense(&good));
    let mut b: Dense<f64> = rng.matrix(4, 2);
    b[(0, 0)] = f64::INFINITY;
    let err =
        run(p, LinalgOp::HouseholderQrAppend(HouseholderQrAppend), &[&h, &tau, &HostTensor::from_dense(&b)])
            .err()
            .expect("inf in b must fail");
    assert!(matches!(err, Error::NonFinite { arg: "b", batch_index: 0, .. }), "{err:?}");
}

fn suite<P: Provider<Memory = Host>>(p: &P) {
    qr_suite::<f64, P>(p, 1);
    qr_suite::<f32, P>(p, 2);
    qr_suite::<Complex<f64>, P>(p, 3);
    qr_suite::<Complex<f32>, P>(p, 4);
    rrqr_suite::<f64, P>(p, 5);
    rrqr_suite::<f32, P>(p, 6);
    rrqr_suite::<Complex<f64>, P>(p, 7);
    rrqr_suite::<Complex<f32>, P>(p, 8);
    householder_suite::<f64, P>(p, 9);
    householder_suite::<f32, P>(p, 10);
    householder_suite::<Complex<f64>, P>(p, 11);
    householder_suite::<Complex<f32>, P>(p, 12);
    error_suite(p);
}

fn qr<P: TestProvider>(provider: &P) {
    suite(provider);
}

/// The same results with a 4-wide team (batch lanes, or faer's own threads
/// inside one matrix when built with `faer-rayon`).
fn qr_threaded<P: TestProvider>(_provider: &P) {
    suite(&P::with_exec(Exec::with_threads(4)));
}

lindiff_tests::providers!(qr, qr_threaded);
