//! SVD recombinations on every host provider: low-rank approximation against
//! hand-built truncations, the polar factor's defining properties, the four
//! Penrose conditions of pinv, least squares (normal equations, minimum norm,
//! rank), data-dependent ranks per batch item, layouts and errors.

use lindiff_core::op::{LowRankApprox, Lstsq, MatrixRank, Pinv, PinvOptions, Polar, Truncation};
use lindiff_core::{DType, Element, Error, Host, LinalgOp, Provider, RealScalar, Scalar, TensorDesc};
use lindiff_tests::dense::{eps, Dense, FromF64Lossy, Re, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// Relative tolerance for an m×n problem in `T`.
fn tol<T: Scalar>(m: usize, n: usize) -> f64 {
    50.0 * (m.max(n).max(1) as f64) * eps::<T>()
}

fn reals<T: Scalar>(s: &[f64]) -> Vec<Re<T>> {
    s.iter().map(|&x| Re::<T>::from_f64_lossy(x)).collect()
}

/// A = Q_k diag(s) R_kᴴ from `Rng::with_spectrum`, with the factors Q_k (m×k)
/// and R_k (n×k) it used (rebuilt from the same seed).
struct Known<T> {
    a: Dense<T>,
    q: Dense<T>,
    r: Dense<T>,
    s: Vec<f64>,
}

fn known<T: Scalar>(seed: u64, m: usize, n: usize, s: &[f64]) -> Known<T> {
    let a = Rng::new(seed).with_spectrum::<T>(m, n, s);
    let mut rng = Rng::new(seed);
    let q = rng.unitary::<T>(m).cols_range(0, s.len());
    let r = rng.unitary::<T>(n).cols_range(0, s.len());
    Known { a, q, r, s: s.to_vec() }
}

impl<T: Scalar> Known<T> {
    /// Q[:, :p] diag(s_p) R[:, :p]ᴴ.
    fn truncated(&self, p: usize) -> Dense<T> {
        let (m, n) = (self.q.rows, self.r.rows);
        if p == 0 {
            return Dense::zeros(m, n);
        }
        self.q
            .cols_range(0, p)
            .scale_cols(&reals::<T>(&self.s[..p]))
            .matmul(&self.r.cols_range(0, p).adjoint())
    }

    /// R[:, :p] diag(1/s_p) Q[:, :p]ᴴ: the pinv keeping p values.
    fn pinv(&self, p: usize) -> Dense<T> {
        let (m, n) = (self.q.rows, self.r.rows);
        if p == 0 {
            return Dense::zeros(n, m);
        }
        let inv: Vec<f64> = self.s[..p].iter().map(|x| 1.0 / x).collect();
        self.r.cols_range(0, p).scale_cols(&reals::<T>(&inv)).matmul(&self.q.cols_range(0, p).adjoint())
    }
}

fn rank_of(t: &HostTensor, b: usize) -> i64 {
    t.to_vec::<i64>()[b]
}

fn low_rank<P: Provider<Memory = Host>>(p: &P, t: Truncation, a: &HostTensor) -> (HostTensor, HostTensor) {
    let mut outs = run(p, LinalgOp::LowRankApprox(LowRankApprox(t)), &[a]).unwrap();
    let rank = outs[1].take().unwrap();
    (outs[0].take().unwrap(), rank)
}

fn pinv<P: Provider<Memory = Host>>(p: &P, opts: PinvOptions, a: &HostTensor) -> HostTensor {
    run(p, LinalgOp::Pinv(Pinv(opts)), &[a]).unwrap().remove(0).unwrap()
}

fn lstsq<P: Provider<Memory = Host>>(
    p: &P,
    opts: PinvOptions,
    a: &HostTensor,
    b: &HostTensor,
) -> (HostTensor, HostTensor) {
    let mut outs = run(p, LinalgOp::Lstsq(Lstsq(opts)), &[a, b]).unwrap();
    let rank = outs[1].take().unwrap();
    (outs[0].take().unwrap(), rank)
}

/// `true` when the Hermitian part of `h` shifted by `shift`·I has a Cholesky
/// factor (positive semidefinite up to `shift`).
fn is_psd<T: Scalar>(h: &Dense<T>, shift: f64) -> bool {
    let n = h.rows;
    let herm =
        Dense::from_fn(n, n, |i, j| (h[(i, j)] + h[(j, i)].conj()).scale(Re::<T>::from_f64_lossy(0.5)));
    let mut l = Dense::<T>::zeros(n, n);
    for j in 0..n {
        let mut d = herm[(j, j)].re().to_f64() + shift;
        for k in 0..j {
            d -= l[(j, k)].abs2().to_f64();
        }
        if d <= 0.0 {
            return false;
        }
        let d = d.sqrt();
        l[(j, j)] = T::from_f64(d);
        for i in j + 1..n {
            let mut x = herm[(i, j)];
            for k in 0..j {
                x -= l[(i, k)] * l[(j, k)].conj();
            }
            l[(i, j)] = x.scale(Re::<T>::from_f64_lossy(1.0 / d));
        }
    }
    true
}

// ---------------------------------------------------------------- low rank

/// Spectrum k, k−1, …, 1: every gap is 1.
fn staircase(k: usize) -> Vec<f64> {
    (0..k).map(|i| (k - i) as f64).collect()
}

fn check_low_rank<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, seed: u64) {
    let k = m.min(n);
    let kn = known::<T>(seed, m, n, &staircase(k));
    let a = HostTensor::from_dense(&kn.a);
    // The error of a truncation scales with s₀/gap = k.
    let bound = tol::<T>(m, n) * (k.max(1) as f64) * kn.a.norm();
    for keep in 1..=k {
        let (ap, rank) = low_rank(p, Truncation::Count(keep), &a);
        let ap: Dense<T> = ap.matrix(0);
        assert_eq!((ap.rows, ap.cols), (m, n));
        assert_eq!(rank_of(&rank, 0), keep as i64, "{m}×{n} Count({keep}) rank");
        let err = ap.sub(&kn.truncated(keep)).norm();
        assert!(err <= bound, "{m}×{n} Count({keep}): error {err} > {bound}");
    }
    // Count(p) ≥ k (and the default, Count(usize::MAX)) returns a itself.
    for t in [Truncation::Count(k), Truncation::Count(k + 3), Truncation::default()] {
        let (ap, rank) = low_rank(p, t, &a);
        let err = ap.matrix::<T>(0).sub(&kn.a).norm();
        assert_eq!(rank_of(&rank, 0), k as i64);
        assert!(err <= bound, "{m}×{n} {t:?}: error {err}");
    }
    if k >= 3 {
        // atol halfway between s₁ and s₂ keeps 2 (values k, k−1).
        let t = Truncation::Tolerance { atol: k as f64 - 1.5, rtol: 0.0 };
        let (ap, rank) = low_rank(p, t, &a);
        assert_eq!(rank_of(&rank, 0), 2, "{m}×{n} atol");
        assert!(ap.matrix::<T>(0).sub(&kn.truncated(2)).norm() <= bound);
        // rtol·s₀ halfway between s₂ and s₃ keeps 3; the larger threshold wins.
        let t = Truncation::Tolerance { atol: 0.1, rtol: (k as f64 - 2.5) / k as f64 };
        let (ap, rank) = low_rank(p, t, &a);
        assert_eq!(rank_of(&rank, 0), 3, "{m}×{n} rtol");
        assert!(ap.matrix::<T>(0).sub(&kn.truncated(3)).norm() <= bound);
        // Everything below the threshold: rank 0, a zero matrix.
        let t = Truncation::Tolerance { atol: k as f64 + 1.0, rtol: 0.5 };
        let (ap, rank) = low_rank(p, t, &a);
        assert_eq!(rank_of(&rank, 0), 0);
        assert!(ap.matrix::<T>(0).data.iter().all(|&x| x == T::zero()));
    }
}

/// Batched Tolerance truncation: each item gets its own rank from its data.
fn check_low_rank_batch<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let (m, n) = (5, 3);
    let items = [
        known::<T>(seed, m, n, &[3.0, 2.0, 1e-12]),
        known::<T>(seed + 1, m, n, &[3.0, 2.0, 1.0]),
        known::<T>(seed + 2, m, n, &[3.0, 2.0, 1.0]),
    ];
    let mut mats: Vec<Dense<T>> = items.iter().map(|k| k.a.clone()).collect();
    mats[2] = Dense::zeros(m, n); // rank 0
    let a = HostTensor::batch(&mats);
    let (ap, rank) = low_rank(p, Truncation::Tolerance { atol: 0.0, rtol: 1e-3 }, &a);
    assert_eq!(ap.dims(), &[m, n, 3]);
    assert_eq!(rank.to_vec::<i64>(), vec![2, 3, 0]);
    let bound = tol::<T>(m, n) * 3.0 * items[1].a.norm();
    assert!(ap.matrix::<T>(0).sub(&items[0].truncated(2)).norm() <= bound, "item 0");
    assert!(ap.matrix::<T>(1).sub(&items[1].a).norm() <= bound, "item 1");
    assert!(ap.matrix::<T>(2).data.iter().all(|&x| x == T::zero()), "item 2");
}

// ---------------------------------------------------------------- polar

fn check_polar<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, seed: u64) {
    let a: Dense<T> = Rng::new(seed).matrix(m, n);
    let w: Dense<T> = run(p, LinalgOp::Polar(Polar), &[&HostTensor::from_dense(&a)]).unwrap()[0]
        .as_ref()
        .unwrap()
        .matrix(0);
    assert_eq!((w.rows, w.cols), (m, n));
    let t = tol::<T>(m, n);
    if m >= n {
        // Orthonormal columns; h = wᴴ a Hermitian positive semidefinite.
        assert!(w.orthonormality_error() <= t, "{m}×{n} wᴴw − I: {}", w.orthonormality_error());
        let h = w.adjoint().matmul(&a);
        assert!(h.sub(&h.adjoint()).norm() <= t * a.norm(), "{m}×{n} wᴴa Hermitian");
        assert!(is_psd(&h, t * a.norm()), "{m}×{n} wᴴa PSD");
        assert!(w.matmul(&h).sub(&a).norm() <= t * a.norm(), "{m}×{n} a = w h");
    } else {
        // Orthonormal rows; a wᴴ Hermitian positive semidefinite.
        assert!(w.adjoint().orthonormality_error() <= t, "{m}×{n} wwᴴ − I");
        let h = a.matmul(&w.adjoint());
        assert!(h.sub(&h.adjoint()).norm() <= t * a.norm(), "{m}×{n} awᴴ Hermitian");
        assert!(is_psd(&h, t * a.norm()), "{m}×{n} awᴴ PSD");
        assert!(h.matmul(&w).sub(&a).norm() <= t * a.norm(), "{m}×{n} a = h w");
    }
}

/// With known factors the polar factor is Q_k R_kᴴ exactly.
fn check_polar_known<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, seed: u64) {
    let k = m.min(n);
    let s: Vec<f64> = (0..k).map(|i| 3.0 - 2.0 * i as f64 / k as f64).collect();
    let kn = known::<T>(seed, m, n, &s);
    let w: Dense<T> = run(p, LinalgOp::Polar(Polar), &[&HostTensor::from_dense(&kn.a)]).unwrap()[0]
        .as_ref()
        .unwrap()
        .matrix(0);
    let expected = kn.q.matmul(&kn.r.adjoint());
    let err = w.sub(&expected).norm();
    assert!(err <= 3.0 * tol::<T>(m, n) * (k as f64).sqrt(), "{m}×{n} polar vs Q Rᴴ: {err}");
}

// ---------------------------------------------------------------- pinv

/// The four Penrose conditions, relative to κ = s₀ / s_min(kept).
fn check_penrose<T: Scalar>(a: &Dense<T>, x: &Dense<T>, kappa: f64, what: &str) {
    let (m, n) = (a.rows, a.cols);
    assert_eq!((x.rows, x.cols), (n, m), "{what}: shape");
    let t = tol::<T>(m, n) * kappa;
    let ax = a.matmul(x);
    let xa = x.matmul(a);
    let scale = (m.min(n) as f64).sqrt().max(1.0);
    let e1 = ax.matmul(a).sub(a).norm();
    let e2 = xa.matmul(x).sub(x).norm();
    let e3 = ax.sub(&ax.adjoint()).norm();
    let e4 = xa.sub(&xa.adjoint()).norm();
    assert!(e1 <= t * a.norm(), "{what}: AXA − A = {e1}");
    assert!(e2 <= t * x.norm(), "{what}: XAX − X = {e2}");
    assert!(e3 <= t * scale, "{what}: (AX)ᴴ − AX = {e3}");
    assert!(e4 <= t * scale, "{what}: (XA)ᴴ − XA = {e4}");
}

fn check_pinv<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, seed: u64) {
    let k = m.min(n);
    // Full rank, default thresholds.
    let s: Vec<f64> = (0..k).map(|i| 3.0 - 2.0 * i as f64 / k as f64).collect();
    let kn = known::<T>(seed, m, n, &s);
    let x: Dense<T> = pinv(p, PinvOptions::default(), &HostTensor::from_dense(&kn.a)).matrix(0);
    check_penrose(&kn.a, &x, 3.0, &format!("{m}×{n} full rank"));
    let err = x.sub(&kn.pinv(k)).norm();
    assert!(err <= 3.0 * tol::<T>(m, n) * kn.pinv(k).norm(), "{m}×{n} vs R S⁻¹ Qᴴ: {err}");
    // Random full-rank matrix.
    let a: Dense<T> = Rng::new(seed + 7).matrix(m, n);
    let x: Dense<T> = pinv(p, PinvOptions::default(), &HostTensor::from_dense(&a)).matrix(0);
    check_penrose(&a, &x, 100.0, &format!("{m}×{n} random"));
    if k >= 4 {
        // Rank 3 (exact spectrum, the rest rounding noise): a relative threshold
        // well above the noise drops the noise.
        let kn = known::<T>(seed + 1, m, n, &[3.0, 2.0, 1.0]);
        let opts = PinvOptions::default().rtol(eps::<T>().sqrt());
        let x: Dense<T> = pinv(p, opts, &HostTensor::from_dense(&kn.a)).matrix(0);
        check_penrose(&kn.a, &x, 3.0, &format!("{m}×{n} rank 3"));
        assert!(x.sub(&kn.pinv(3)).norm() <= 3.0 * tol::<T>(m, n) * kn.pinv(3).norm());
        // atol between s₁ and s₂ keeps two values.
        let kn = known::<T>(seed + 2, m, n, &[3.0, 2.0, 1.0, 0.5]);
        let x: Dense<T> = pinv(p, PinvOptions::default().atol(1.5), &HostTensor::from_dense(&kn.a)).matrix(0);
        assert!(x.sub(&kn.pinv(2)).norm() <= 3.0 * tol::<T>(m, n) * kn.pinv(2).norm(), "{m}×{n} atol");
    }
}

/// pinv of a diagonal with a zero (exact data, default thresholds), square
/// and rectangular, and of a zero matrix.
fn check_pinv_diagonal<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let d = [2.0, 0.0, 0.5];
    for &(m, n) in &[(3, 3), (3, 5), (4, 3)] {
        let a = Dense::<T>::from_fn(m, n, |i, j| if i == j { T::from_f64(d[i]) } else { T::zero() });
        let x: Dense<T> = pinv(p, PinvOptions::default(), &HostTensor::from_dense(&a)).matrix(0);
        let expected = Dense::<T>::from_fn(n, m, |i, j| {
            if i == j && d[i] != 0.0 {
                T::from_f64(1.0 / d[i])
            } else {
                T::zero()
            }
        });
        assert!(x.sub(&expected).norm() <= 2.0 * tol::<T>(m, n), "diag {m}×{n}: {x:?}");
        check_penrose(&a, &x, 4.0, &format!("diag {m}×{n}"));
        let (_, rank) = lstsq(
            p,
            PinvOptions::default(),
            &HostTensor::from_dense(&a),
            &HostTensor::from_dense(&Dense::<T>::eye(m, 1)),
        );
        assert_eq!(rank_of(&rank, 0), 2, "diag {m}×{n} rank");
    }
    let z = Dense::<T>::zeros(3, 2);
    let x: Dense<T> = pinv(p, PinvOptions::default(), &HostTensor::from_dense(&z)).matrix(0);
    assert_eq!((x.rows, x.cols), (2, 3));
    assert!(x.data.iter().all(|&v| v == T::zero()));
}

/// An exactly rank-deficient matrix with small-integer entries (third column
/// = first + second), default thresholds.
fn check_pinv_integer_rank_deficient<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let c1 = [1.0, 2.0, 0.0, -1.0, 3.0];
    let c2 = [0.0, 1.0, 1.0, 2.0, -1.0];
    let a = Dense::<T>::from_fn(5, 4, |i, j| {
        T::from_f64(match j {
            0 => c1[i],
            1 => c2[i],
            2 => c1[i] + c2[i],
            _ => 2.0 * c1[i] - c2[i],
        })
    });
    let x: Dense<T> = pinv(p, PinvOptions::default(), &HostTensor::from_dense(&a)).matrix(0);
    check_penrose(&a, &x, 10.0, "integer rank 2");
    let b = Dense::<T>::from_fn(5, 1, |i, _| T::from_f64(i as f64 - 1.0));
    let (_, rank) =
        lstsq(p, PinvOptions::default(), &HostTensor::from_dense(&a), &HostTensor::from_dense(&b));
    assert_eq!(rank_of(&rank, 0), 2, "integer rank");
}

// ---------------------------------------------------------------- lstsq

fn check_lstsq_tall<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, r: usize, seed: u64) {
    assert!(m >= n);
    let s: Vec<f64> = (0..n).map(|i| 3.0 - 2.0 * i as f64 / n as f64).collect();
    let kn = known::<T>(seed, m, n, &s);
    let b: Dense<T> = Rng::new(seed + 100).matrix(m, r);
    let (x, rank) =
        lstsq(p, PinvOptions::default(), &HostTensor::from_dense(&kn.a), &HostTensor::from_dense(&b));
    let x: Dense<T> = x.matrix(0);
    assert_eq!((x.rows, x.cols), (n, r));
    assert_eq!(rank_of(&rank, 0), n as i64, "{m}×{n} rank");
    // Normal equations Aᴴ(Ax − b) ≈ 0.
    let resid = kn.a.matmul(&x).sub(&b);
    let ne = kn.a.adjoint().matmul(&resid).norm();
    let bound = tol::<T>(m, n) * 9.0 * kn.a.norm() * (kn.a.norm() * x.norm() + b.norm());
    assert!(ne <= bound, "{m}×{n}×{r} normal equations {ne} > {bound}");
    // And x = A⁺ b with the hand-built A⁺.
    let expected = kn.pinv(n).matmul(&b);
    assert!(x.sub(&expected).norm() <= 3.0 * tol::<T>(m, n) * expected.norm().max(1.0), "{m}×{n} vs A⁺b");
}

fn check_lstsq_wide<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, r: usize, seed: u64) {
    assert!(m < n);
    let s: Vec<f64> = (0..m).map(|i| 3.0 - 2.0 * i as f64 / m as f64).collect();
    let kn = known::<T>(seed, m, n, &s);
    let b: Dense<T> = Rng::new(seed + 200).matrix(m, r);
    let (x, rank) =
        lstsq(p, PinvOptions::default(), &HostTensor::from_dense(&kn.a), &HostTensor::from_dense(&b));
    let x: Dense<T> = x.matrix(0);
    assert_eq!(rank_of(&rank, 0), m as i64);
    let t = tol::<T>(m, n) * 3.0;
    // A x = b.
    let res = kn.a.matmul(&x).sub(&b).norm();
    assert!(res <= t * (kn.a.norm() * x.norm() + b.norm()), "{m}×{n} Ax − b = {res}");
    // Minimum norm: x in the row space span(R_k), i.e. x = R_k R_kᴴ x.
    let proj = kn.r.matmul(&kn.r.adjoint().matmul(&x));
    assert!(x.sub(&proj).norm() <= t * x.norm(), "{m}×{n} x ⟂ null(A)");
}

/// Rank-deficient tall and wide systems: rank, the minimum-norm solution.
fn check_lstsq_rank_deficient<T: Scalar, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize, seed: u64) {
    let kn = known::<T>(seed, m, n, &[3.0, 2.0, 1.0]);
    let b: Dense<T> = Rng::new(seed + 300).matrix(m, 2);
    let opts = PinvOptions::default().rtol(eps::<T>().sqrt());
    let (x, rank) = lstsq(p, opts, &HostTensor::from_dense(&kn.a), &HostTensor::from_dense(&b));
    let x: Dense<T> = x.matrix(0);
    assert_eq!(rank_of(&rank, 0), 3, "{m}×{n} rank-deficient rank");
    let expected = kn.pinv(3).matmul(&b);
    assert!(x.sub(&expected).norm() <= 3.0 * tol::<T>(m, n) * expected.norm(), "{m}×{n} vs A⁺b");
    // Normal equations and minimum norm.
    let ne = kn.a.adjoint().matmul(&kn.a.matmul(&x).sub(&b)).norm();
    assert!(ne <= tol::<T>(m, n) * 9.0 * kn.a.norm() * (kn.a.norm() * x.norm() + b.norm()));
    let proj = kn.r.matmul(&kn.r.adjoint().matmul(&x));
    assert!(x.sub(&proj).norm() <= 3.0 * tol::<T>(m, n) * x.norm(), "{m}×{n} x in row space");
}

/// Batched lstsq with a different rank per item.
fn check_lstsq_batch<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let (m, n) = (6, 3);
    let items = [known::<T>(seed, m, n, &[3.0, 2.0, 1e-12]), known::<T>(seed + 1, m, n, &[3.0, 2.0, 1.0])];
    let bs: Vec<Dense<T>> = (0..2).map(|i| Rng::new(seed + 10 + i).matrix(m, 2)).collect();
    let a = HostTensor::batch(&items.iter().map(|k| k.a.clone()).collect::<Vec<_>>());
    let b = HostTensor::batch(&bs);
    let (x, rank) = lstsq(p, PinvOptions::default().rtol(1e-3), &a, &b);
    assert_eq!(x.dims(), &[n, 2, 2]);
    assert_eq!(rank.to_vec::<i64>(), vec![2, 3]);
    for (i, (kn, bi)) in items.iter().zip(&bs).enumerate() {
        let keep = [2, 3][i];
        let expected = kn.pinv(keep).matmul(bi);
        let err = x.matrix::<T>(i).sub(&expected).norm();
        assert!(err <= 3.0 * tol::<T>(m, n) * expected.norm(), "item {i}: {err}");
    }
}

// ---------------------------------------------------------------- layouts, empty, errors

fn row_major<T: Scalar + Element>(a: &Dense<T>) -> HostTensor {
    let data: Vec<T> = (0..a.rows).flat_map(|i| (0..a.cols).map(move |j| (i, j))).map(|ij| a[ij]).collect();
    HostTensor::with_desc(TensorDesc::row_major_matrix(T::DTYPE, a.rows, a.cols).unwrap(), &data)
}

fn check_row_major<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let (m, n) = (6, 4);
    let kn = known::<T>(seed, m, n, &[4.0, 3.0, 2.0, 1.0]);
    let a = row_major(&kn.a);
    let t = tol::<T>(m, n);
    let (ap, rank) = low_rank(p, Truncation::Count(2), &a);
    assert_eq!(rank_of(&rank, 0), 2);
    assert!(ap.matrix::<T>(0).sub(&kn.truncated(2)).norm() <= 4.0 * t * kn.a.norm(), "row-major low rank");
    let w: Dense<T> = run(p, LinalgOp::Polar(Polar), &[&a]).unwrap()[0].as_ref().unwrap().matrix(0);
    assert!(w.sub(&kn.q.matmul(&kn.r.adjoint())).norm() <= 4.0 * t, "row-major polar");
    let x: Dense<T> = pinv(p, PinvOptions::default(), &a).matrix(0);
    assert!(x.sub(&kn.pinv(4)).norm() <= 4.0 * t * kn.pinv(4).norm(), "row-major pinv");
    let b: Dense<T> = Rng::new(seed + 1).matrix(m, 3);
    let (x, rank) = lstsq(p, PinvOptions::default(), &a, &row_major(&b));
    assert_eq!(rank_of(&rank, 0), 4);
    let expected = kn.pinv(4).matmul(&b);
    assert!(x.matrix::<T>(0).sub(&expected).norm() <= 4.0 * t * expected.norm(), "row-major lstsq");
}

fn check_empty<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    for &(m, n) in &[(0, 3), (3, 0), (0, 0)] {
        let a = HostTensor::new::<T>(&[m, n], &[]);
        let (ap, rank) = low_rank(p, Truncation::Count(2), &a);
        assert_eq!((ap.dims(), rank_of(&rank, 0)), (&[m, n][..], 0));
        let w = run(p, LinalgOp::Polar(Polar), &[&a]).unwrap().remove(0).unwrap();
        assert_eq!(w.dims(), &[m, n]);
        assert_eq!(pinv(p, PinvOptions::default(), &a).dims(), &[n, m]);
        let b = HostTensor::from_dense(&Rng::new(9).matrix::<T>(m, 2));
        let (x, rank) = lstsq(p, PinvOptions::default(), &a, &b);
        assert_eq!(x.dims(), &[n, 2]);
        assert_eq!(rank_of(&rank, 0), 0);
        assert!(x.to_vec::<T>().iter().all(|&v| v == T::zero()), "{m}×{n}: x of an empty system is 0");
    }
}

fn check_non_finite<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut mats: Vec<Dense<T>> = (0..4).map(|_| rng.matrix(4, 3)).collect();
    mats[2][(1, 2)] = T::from_f64(f64::NAN);
    mats[3][(0, 0)] = T::from_f64(f64::INFINITY);
    let a = HostTensor::batch(&mats);
    let ops = [
        LinalgOp::LowRankApprox(LowRankApprox::default()),
        LinalgOp::Polar(Polar),
        LinalgOp::Pinv(Pinv::default()),
    ];
    for op in ops {
        match run(p, op.clone(), &[&a]) {
            Err(Error::NonFinite { arg: "a", batch_index: 2, .. }) => {}
            other => panic!("{op:?}: {:?}", other.map(|_| ())),
        }
    }
    let good = HostTensor::batch(&mats[..2]);
    let mut bs: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(4, 2)).collect();
    bs[1][(3, 1)] = T::from_f64(f64::NEG_INFINITY);
    match run(p, LinalgOp::Lstsq(Lstsq::default()), &[&good, &HostTensor::batch(&bs)]) {
        Err(Error::NonFinite { arg: "b", batch_index: 1, .. }) => {}
        other => panic!("lstsq b: {:?}", other.map(|_| ())),
    }
    match run(p, LinalgOp::Lstsq(Lstsq::default()), &[&a, &HostTensor::batch(&vec![bs[0].clone(); 4])]) {
        Err(Error::NonFinite { arg: "a", batch_index: 2, .. }) => {}
        other => panic!("lstsq a: {:?}", other.map(|_| ())),
    }
}

// ---------------------------------------------------------------- suites

const SHAPES: &[(usize, usize)] = &[(5, 5), (7, 4), (4, 7), (1, 4), (4, 1), (40, 30), (30, 40)];

fn low_rank_dtype<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    for (i, &(m, n)) in SHAPES.iter().enumerate() {
        check_low_rank::<T, P>(p, m, n, seed + 10 * i as u64);
    }
    check_low_rank_batch::<T, P>(p, seed + 500);
}

fn polar_dtype<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    for (i, &(m, n)) in SHAPES.iter().enumerate() {
        check_polar::<T, P>(p, m, n, seed + 10 * i as u64);
        check_polar_known::<T, P>(p, m, n, seed + 10 * i as u64 + 1);
    }
}

fn pinv_dtype<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    for (i, &(m, n)) in SHAPES.iter().enumerate() {
        check_pinv::<T, P>(p, m, n, seed + 10 * i as u64);
    }
    check_pinv_diagonal::<T, P>(p);
    check_pinv_integer_rank_deficient::<T, P>(p);
}

fn lstsq_dtype<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    for &(m, n) in &[(5, 5), (7, 4), (40, 30), (3, 1)] {
        for r in [1, 3] {
            check_lstsq_tall::<T, P>(p, m, n, r, seed + (m * 100 + n * 10 + r) as u64);
        }
    }
    for &(m, n) in &[(4, 7), (1, 5), (30, 40)] {
        for r in [1, 3] {
            check_lstsq_wide::<T, P>(p, m, n, r, seed + (m * 100 + n * 10 + r) as u64);
        }
    }
    for &(m, n) in &[(7, 5), (5, 7), (6, 6)] {
        check_lstsq_rank_deficient::<T, P>(p, m, n, seed + (m * 10 + n) as u64);
    }
    check_lstsq_batch::<T, P>(p, seed + 700);
}

/// `matrix_rank` of matrices with prescribed spectra: the count of values
/// above the default threshold max(m, n)·ε·s₀, above an explicit `rtol`
/// and `atol`, per batch item, and 0 for zero and empty matrices.
fn rank_dtype<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let matrix_rank = |opts: PinvOptions, a: &Dense<T>| {
        let a = HostTensor::from_dense(a);
        let out = run(p, LinalgOp::MatrixRank(MatrixRank(opts)), &[&a]).unwrap().remove(0).unwrap();
        assert_eq!(out.desc.meta.dtype, DType::I64);
        rank_of(&out, 0)
    };
    // Exactly rank 3 (the dropped values are zero), in three shapes.
    for (i, &(m, n)) in [(6, 4), (4, 6), (5, 5)].iter().enumerate() {
        let s = [3.0, 2.0, 1.0, 0.0];
        let a = known::<T>(seed + i as u64, m, n, &s[..m.min(n).min(4)]).a;
        assert_eq!(matrix_rank(PinvOptions::default(), &a), 3, "{m}×{n}");
        // A relative threshold between 1/3 and 2/3 keeps the two largest.
        assert_eq!(matrix_rank(PinvOptions::default().rtol(0.5), &a), 2, "{m}×{n}");
        // An absolute threshold above s₀ keeps none.
        assert_eq!(matrix_rank(PinvOptions::default().atol(3.5), &a), 0, "{m}×{n}");
    }
    // A value 1e-3·s₀ counts; one far below the default threshold does not.
    let small = 1e3 * eps::<T>();
    let a = known::<T>(seed + 10, 5, 5, &[1.0, 1e-3, small * 1e-6, 0.0, 0.0]).a;
    assert_eq!(matrix_rank(PinvOptions::default(), &a), 2);
    assert_eq!(matrix_rank(PinvOptions::default(), &Dense::<T>::zeros(3, 2)), 0);
    assert_eq!(matrix_rank(PinvOptions::default(), &Dense::<T>::zeros(0, 3)), 0);
    // One rank per batch item.
    let items: Vec<Dense<T>> =
        (1..=3).map(|r| known::<T>(seed + 20 + r as u64, 4, 4, &[4.0, 3.0, 2.0, 1.0][..r]).a).collect();
    let batch = HostTensor::batch(&items);
    let out = run(p, LinalgOp::MatrixRank(MatrixRank::default()), &[&batch]).unwrap().remove(0).unwrap();
    assert_eq!(out.to_vec::<i64>(), vec![1, 2, 3]);
}

fn misc_dtype<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    check_row_major::<T, P>(p, seed);
    check_empty::<T, P>(p);
    check_non_finite::<T, P>(p, seed + 1);
}

/// Every dtype through `f`.
macro_rules! all_dtypes {
    ($f:ident, $p:expr) => {
        $f::<f64, _>($p, 1);
        $f::<f32, _>($p, 2);
        $f::<Complex<f64>, _>($p, 3);
        $f::<Complex<f32>, _>($p, 4);
    };
}

/// The low-rank suite on provider `p`.
pub fn low_rank_suite<P: Provider<Memory = Host>>(p: &P) {
    all_dtypes!(low_rank_dtype, p);
}

/// The polar suite on provider `p`.
pub fn polar_suite<P: Provider<Memory = Host>>(p: &P) {
    all_dtypes!(polar_dtype, p);
}

/// The pinv suite on provider `p`.
pub fn pinv_suite<P: Provider<Memory = Host>>(p: &P) {
    all_dtypes!(pinv_dtype, p);
}

/// The lstsq suite on provider `p`.
pub fn lstsq_suite<P: Provider<Memory = Host>>(p: &P) {
    all_dtypes!(lstsq_dtype, p);
}

/// The numerical-rank suite on provider `p`.
pub fn rank_suite<P: Provider<Memory = Host>>(p: &P) {
    all_dtypes!(rank_dtype, p);
}

/// Layouts, empty matrices and errors on provider `p`.
pub fn misc_suite<P: Provider<Memory = Host>>(p: &P) {
    all_dtypes!(misc_dtype, p);
}

fn dtype_of_rank_is_i64<P: TestProvider>(provider: &P) {
    let a = HostTensor::from_dense(&Dense::<f64>::eye(3, 2));
    let (_, rank) = low_rank(provider, Truncation::Count(1), &a);
    assert_eq!(rank.desc.meta.dtype, DType::I64);
    assert!(rank.dims().is_empty());
}

lindiff_tests::providers!(
    low_rank_suite,
    polar_suite,
    pinv_suite,
    lstsq_suite,
    rank_suite,
    misc_suite,
    dtype_of_rank_is_i64
);
