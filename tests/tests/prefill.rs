//! Providers write every output element and read nothing they have not
//! written: each op runs twice, with its output and workspace memory filled
//! first with 0x00 and then with 0xFF bytes (NaN in every float dtype), and
//! the two results must agree bit for bit. Sizes cross the kernels'
//! thresholds (64: Cholesky's triangle copy, 128: faer's divide-and-conquer
//! SVD and its guard), shapes are square, tall and wide, f64 and c64. The
//! matrix functions and the derivative ops their rules record run up to
//! n = 70 (the Schur-based ones are unblocked, slow in debug builds).

use lindiff_core::op::*;
use lindiff_core::{Element, Host, LinalgOp, Provider, Scalar};
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::host::{run_filled, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// The ops on an m×n `a` (and, when square, its SPD relative and a
/// right-hand side).
fn cases<T: Scalar + Element>(m: usize, n: usize, seed: u64) -> Vec<(LinalgOp, Vec<HostTensor>)> {
    let mut rng = Rng::new(seed);
    let a: Dense<T> = rng.matrix(m, n);
    let ta = HostTensor::from_dense(&a);
    let one = |op: LinalgOp| (op, vec![HostTensor::from_dense(&a)]);
    let mut cases = vec![
        one(LinalgOp::Svd(Svd::default())),
        one(LinalgOp::Svd(Svd(SvdOptions::default().vectors(SvdVectors::Right)))),
        one(LinalgOp::Svd(Svd(SvdOptions::default().vectors(SvdVectors::Left)))),
        one(LinalgOp::Svd(Svd(SvdOptions::default().driver(SvdDriver::QrIteration)))),
        one(LinalgOp::SvdVals(SvdVals::default())),
        one(LinalgOp::SvdFull(SvdFull::default())),
        one(LinalgOp::SvdTruncated(SvdTruncated(Truncation::Count(m.min(n) / 2 + 1)))),
        one(LinalgOp::Qr(Qr::default())),
        one(LinalgOp::Qr(Qr(QrOptions::default().mode(QrMode::Complete)))),
        one(LinalgOp::RankRevealingQr(RankRevealingQr::default())),
        one(LinalgOp::Pinv(Pinv::default())),
        one(LinalgOp::LowRankApprox(LowRankApprox(Truncation::Count(m.min(n) / 2 + 1)))),
    ];
    if m == n {
        let shift = vec![T::Real::from_f64(-(n as f64)); n];
        let spd = a.matmul(&a.adjoint()).sub(&Dense::eye(n, n).scale_cols(&shift));
        let b: Dense<T> = rng.matrix(n, 3);
        let tb = HostTensor::from_dense(&b);
        let spd_op = |op: LinalgOp| (op, vec![HostTensor::from_dense(&spd)]);
        cases.extend([
            spd_op(LinalgOp::Eigh(Eigh::default())),
            spd_op(LinalgOp::EighVals(EighVals::default())),
            spd_op(LinalgOp::Cholesky(Cholesky)),
            one(LinalgOp::Eig(Eig)),
            one(LinalgOp::Lu(Lu)),
            one(LinalgOp::LuFactor(LuFactor)),
            one(LinalgOp::FullPivLu(FullPivLu)),
            one(LinalgOp::Det(Det)),
            one(LinalgOp::Slogdet(Slogdet)),
            one(LinalgOp::Polar(Polar)),
            (
                LinalgOp::LuFactorSolve(LuFactorSolve::default()),
                vec![HostTensor::from_dense(&a), HostTensor::from_dense(&b)],
            ),
            (LinalgOp::Lstsq(Lstsq::default()), vec![ta, tb]),
        ]);
        if n <= 70 {
            cases.extend(matrix_functions(&a, &spd));
        }
    }
    cases
}

/// The matrix functions and the ops their rules record, on a general `a`
/// and a positive definite `spd`; the factor inputs of the derivative ops
/// come from their forward ops, run the same way.
fn matrix_functions<T: Scalar + Element>(a: &Dense<T>, spd: &Dense<T>) -> Vec<(LinalgOp, Vec<HostTensor>)> {
    let (ta, tspd) = (|| HostTensor::from_dense(a), || HostTensor::from_dense(spd));
    let cpu = lindiff_tests::Cpu::default();
    let outputs = |op: LinalgOp, input: &HostTensor| -> Vec<HostTensor> {
        let outs = run_filled(&cpu, op, &[input], None).unwrap();
        outs.into_iter().map(|o| o.unwrap()).collect()
    };
    let (terms, piv) = {
        let mut o = outputs(LinalgOp::ExpmFactors(ExpmFactors), &ta());
        let piv = o.remove(2);
        (o.remove(1), piv)
    };
    let log = MatrixFunction::Log;
    // FunmHermitianFactors gives (fa, w, v, gamma); the derivative ops take v, w, gamma.
    let factors = || {
        let mut o = outputs(LinalgOp::FunmHermitianFactors(FunmHermitianFactors(log)), &tspd());
        let gamma = o.remove(3);
        let v = o.remove(2);
        [v, o.remove(1), gamma]
    };
    let [v, w, gamma] = factors();
    let [v2, w2, gamma2] = factors();
    vec![
        (LinalgOp::Expm(Expm), vec![ta()]),
        (LinalgOp::ExpmFrechet(ExpmFrechet(MatOp::Adjoint)), vec![ta(), tspd()]),
        (LinalgOp::ExpmFactors(ExpmFactors), vec![ta()]),
        (
            LinalgOp::ExpmFrechetFactored(ExpmFrechetFactored(MatOp::Transpose)),
            vec![ta(), terms, piv, tspd()],
        ),
        (LinalgOp::Logm(Logm), vec![tspd()]),
        (LinalgOp::Sqrtm(Sqrtm), vec![tspd()]),
        (LinalgOp::LogmFrechet(LogmFrechet(MatOp::Identity)), vec![tspd(), ta()]),
        (LinalgOp::SqrtmFrechet(SqrtmFrechet(MatOp::Transpose)), vec![tspd(), ta()]),
        (LinalgOp::FunmHermitian(FunmHermitian(MatrixFunction::Exp)), vec![tspd()]),
        (LinalgOp::FunmHermitianFactors(FunmHermitianFactors(MatrixFunction::Sqrt)), vec![tspd()]),
        (LinalgOp::FunmHermitianFrechet(FunmHermitianFrechet(log)), vec![tspd(), v, w, gamma, ta()]),
        (LinalgOp::FunmHermitianSecond(FunmHermitianSecond(log)), vec![v2, w2, gamma2, ta(), tspd()]),
    ]
}

fn check<T: Scalar + Element, P: Provider<Memory = Host>>(p: &P, m: usize, n: usize) {
    for (op, inputs) in cases::<T>(m, n, (m * 1000 + n) as u64) {
        let refs: Vec<&HostTensor> = inputs.iter().collect();
        let zeros = run_filled(p, op.clone(), &refs, Some(0x00)).unwrap();
        let ones = run_filled(p, op.clone(), &refs, Some(0xFF)).unwrap();
        for (i, (z, o)) in zeros.iter().zip(&ones).enumerate() {
            if let (Some(z), Some(o)) = (z, o) {
                assert!(
                    z.raw_bytes() == o.raw_bytes(),
                    "{} {:?} {m}×{n}: output {i} depends on the memory's previous contents",
                    op.name(),
                    T::DTYPE
                );
            }
        }
    }
}

fn outputs_do_not_depend_on_prior_memory<P: TestProvider>(provider: &P) {
    for (m, n) in [(8, 8), (9, 6), (6, 9), (70, 70), (128, 128), (140, 140), (150, 130), (130, 150)] {
        check::<f64, P>(provider, m, n);
        check::<Complex<f64>, P>(provider, m, n);
    }
}

lindiff_tests::providers!(outputs_do_not_depend_on_prior_memory);
