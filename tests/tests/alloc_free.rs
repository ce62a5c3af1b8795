//! Zero global heap allocations per call in steady state: every op, n = 8,
//! 32, 48, 64, 128 (host-cpu's padded Cholesky), 256 (the Schur-based
//! logm and sqrtm up to 64), f64 and c64, serial
//! exec, through the direct face (whose
//! pool reuses blocks), on every host provider (host-blas with
//! `OPENBLAS_NUM_THREADS=1`, set by `.cargo/config.toml`; OpenBLAS's own C
//! buffers are not Rust allocations). A counting global allocator counts
//! only on the thread that turned counting on, so tests running in parallel
//! cannot pollute it.
//!
//! `cargo test -p lindiff-tests --release --test alloc_free -- --nocapture`
//! prints the table.

use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::op::internal::{Chain, EighGaugeCheck, Link, LinkOp, Operand, SvdGaugeCheck, ValuesCheck};
use lindiff_core::op::*;
use lindiff_core::{Face, LinalgOp, MatOp, Op, Ops, Scalar};
use lindiff_cpu::Cpu;
use lindiff_tests::counting::{count, holds_to_zero, Counting};
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::TestProvider;
use num_complex::Complex;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn tensor<T: Scalar, P: TestProvider>(face: &mut Direct<P>, m: &Dense<T>) -> Tensor {
    face.tensor(&[m.rows, m.cols], &m.data).unwrap()
}

/// Every op with valid inputs of size n.
fn cases<T: Scalar, P: TestProvider>(face: &mut Direct<P>, n: usize) -> Vec<(Op, Vec<Tensor>)> {
    let mut rng = Rng::new(n as u64);
    let a: Dense<T> = rng.matrix(n, n);
    let spd =
        a.matmul(&a.adjoint()).sub(&Dense::eye(n, n).scale_cols(&vec![T::Real::from_f64(-(n as f64)); n]));
    let b: Dense<T> = rng.matrix(n, 3);
    let (ta, tspd, tb) = (tensor(face, &a), tensor(face, &spd), tensor(face, &b));
    let lu = face.apply(Op::Linalg(LinalgOp::LuFactor(LuFactor)), &[&ta]).unwrap();
    let (lu_f, perm) = (lu[0].clone().unwrap(), lu[1].clone().unwrap());
    let fp = face.apply(Op::Linalg(LinalgOp::FullPivLuFactor(FullPivLuFactor)), &[&ta]).unwrap();
    let (fp_lu, rp, cp) = (fp[0].clone().unwrap(), fp[1].clone().unwrap(), fp[2].clone().unwrap());
    let hq = face.householder_qr(&ta).unwrap();
    let upper = face.qr(&ta).unwrap().r;
    // Distinct, nonzero values: the gauge checks pass and copy.
    let values: Vec<f64> = (0..n).map(|i| (n - i) as f64).collect();
    let tv = face.tensor(&[n], &values).unwrap();
    let ef = face.apply(Op::Linalg(LinalgOp::ExpmFactors(ExpmFactors)), &[&ta]).unwrap();
    let (expm_terms, expm_piv) = (ef[1].clone().unwrap(), ef[2].clone().unwrap());
    let linalg = vec![
        (LinalgOp::Svd(Svd::default()), vec![ta.clone()]),
        (LinalgOp::SvdVals(SvdVals::default()), vec![ta.clone()]),
        (LinalgOp::SvdFull(SvdFull::default()), vec![ta.clone()]),
        (LinalgOp::SvdTruncated(SvdTruncated(Truncation::Count(n / 2 + 1))), vec![ta.clone()]),
        (LinalgOp::Qr(Qr::default()), vec![ta.clone()]),
        (LinalgOp::RankRevealingQr(RankRevealingQr::default()), vec![ta.clone()]),
        (LinalgOp::HouseholderQrFactor(HouseholderQrFactor), vec![ta.clone()]),
        (LinalgOp::HouseholderQrAppend(HouseholderQrAppend), vec![hq.h.clone(), hq.tau.clone(), tb.clone()]),
        (LinalgOp::HouseholderQrQ(HouseholderQrQ), vec![hq.h.clone(), hq.tau.clone()]),
        (LinalgOp::HouseholderQrR(HouseholderQrR), vec![hq.h.clone()]),
        (
            LinalgOp::HouseholderQrApply(HouseholderQrApply(MatOp::Adjoint)),
            vec![hq.h.clone(), hq.tau.clone(), tb.clone()],
        ),
        (LinalgOp::Eigh(Eigh::default()), vec![tspd.clone()]),
        (LinalgOp::EighVals(EighVals::default()), vec![tspd.clone()]),
        (LinalgOp::Eig(Eig), vec![ta.clone()]),
        (LinalgOp::EigVals(EigVals), vec![ta.clone()]),
        (LinalgOp::Cholesky(Cholesky), vec![tspd.clone()]),
        (LinalgOp::Lu(Lu), vec![ta.clone()]),
        (LinalgOp::LuFactor(LuFactor), vec![ta.clone()]),
        (LinalgOp::LuFactorSolve(LuFactorSolve::default()), vec![ta.clone(), tb.clone()]),
        (LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Adjoint)), vec![lu_f, perm, tb.clone()]),
        (LinalgOp::FullPivLu(FullPivLu), vec![ta.clone()]),
        (LinalgOp::FullPivLuFactor(FullPivLuFactor), vec![ta.clone()]),
        (LinalgOp::FullPivLuSolve(FullPivLuSolve::default()), vec![ta.clone(), tb.clone()]),
        (
            LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(MatOp::Identity)),
            vec![fp_lu, rp, cp, tb.clone()],
        ),
        (LinalgOp::TriangularSolve(TriangularSolve::default()), vec![upper.clone(), tb.clone()]),
        (LinalgOp::Det(Det), vec![ta.clone()]),
        (LinalgOp::Slogdet(Slogdet), vec![ta.clone()]),
        (LinalgOp::Adjugate(Adjugate), vec![ta.clone()]),
        (LinalgOp::LowRankApprox(LowRankApprox(Truncation::Count(n / 2 + 1))), vec![ta.clone()]),
        (LinalgOp::Polar(Polar), vec![ta.clone()]),
        (LinalgOp::Pinv(Pinv::default()), vec![ta.clone()]),
        (LinalgOp::Lstsq(Lstsq::default()), vec![ta.clone(), tb.clone()]),
        (LinalgOp::MatrixRank(MatrixRank::default()), vec![ta.clone()]),
        (LinalgOp::FunmHermitian(FunmHermitian(MatrixFunction::Log)), vec![tspd.clone()]),
        (LinalgOp::FunmHermitianFactors(FunmHermitianFactors(MatrixFunction::Sqrt)), vec![tspd.clone()]),
        (LinalgOp::Expm(Expm), vec![ta.clone()]),
        (LinalgOp::ExpmFrechet(ExpmFrechet(MatOp::Adjoint)), vec![ta.clone(), ta.clone()]),
        (LinalgOp::ExpmFactors(ExpmFactors), vec![ta.clone()]),
        (
            LinalgOp::ExpmFrechetFactored(ExpmFrechetFactored(MatOp::Transpose)),
            vec![ta.clone(), expm_terms.clone(), expm_piv.clone(), ta.clone()],
        ),
    ];
    // The Schur-based functions (unblocked, O(n³) with a large constant; their
    // Fréchet derivatives at twice the size) up to n = 64: their scratch does
    // not depend on n beyond its size.
    let schur = [
        (LinalgOp::Logm(Logm), vec![tspd.clone()]),
        (LinalgOp::Sqrtm(Sqrtm), vec![tspd.clone()]),
        (LinalgOp::LogmFrechet(LogmFrechet(MatOp::Identity)), vec![tspd.clone(), ta.clone()]),
        (LinalgOp::SqrtmFrechet(SqrtmFrechet(MatOp::Transpose)), vec![tspd.clone(), ta.clone()]),
    ];
    let linalg = linalg.into_iter().chain(schur.into_iter().filter(|_| n <= 64));
    // The derivatives of a Hermitian matrix function from its factors (the
    // second one's triple sum is O(n³) scalar work: to n = 64 as well).
    let factors = LinalgOp::FunmHermitianFactors(FunmHermitianFactors(MatrixFunction::Log));
    let f = face.apply(Op::Linalg(factors), &[&tspd]).unwrap();
    let [v, w, gamma] = [2, 1, 3].map(|i| f[i].clone().unwrap());
    let frechet = LinalgOp::FunmHermitianFrechet(FunmHermitianFrechet(MatrixFunction::Log));
    let second = LinalgOp::FunmHermitianSecond(FunmHermitianSecond(MatrixFunction::Log));
    let derivatives = [
        (frechet, vec![tspd.clone(), v.clone(), w.clone(), gamma.clone(), ta.clone()]),
        (second, vec![v, w, gamma, ta.clone(), ta.clone()]),
    ];
    let linalg = linalg.chain(
        derivatives.into_iter().filter(|(op, _)| n <= 64 || matches!(op, LinalgOp::FunmHermitianFrechet(_))),
    );
    let internal = [
        (chain().into(), vec![ta.clone(), ta.clone(), ta.clone()]),
        (
            SvdGaugeCheck::default().into(),
            vec![ta.clone(), tv.clone(), ta.clone(), ta.clone(), tv.clone(), ta.clone()],
        ),
        (EighGaugeCheck::default().into(), vec![ta.clone(), tv.clone(), tv.clone(), ta]),
        (ValuesCheck::default().into(), vec![tv.clone(), tv.clone()]),
    ];
    linalg.into_iter().map(|(op, inputs)| (Op::Linalg(op), inputs)).chain(internal).collect()
}

/// A compiled plan's chain, (x0 + x1) · ½ − x2, over three inputs.
fn chain() -> Chain {
    let mut chain = Chain::new(3);
    let sum = chain.push(Link { op: LinkOp::Add, a: Operand::Input(0), b: Operand::Input(1) }).unwrap();
    let half = chain.push(Link { op: LinkOp::Scale(0.5), a: sum, b: sum }).unwrap();
    chain.push(Link { op: LinkOp::Sub, a: half, b: Operand::Input(2) }).unwrap();
    chain
}

fn table<T: Scalar, P: TestProvider>(provider: P, label: &str) -> Vec<String> {
    let mut failures = Vec::new();
    let label = format!("{} {label}", provider.name());
    let zero = holds_to_zero(provider.name());
    let mut face = Direct::new(provider);
    for n in [8, 32, 48, 64, 128, 256] {
        let mut line = format!("{label} n={n:>3}:");
        for (op, inputs) in cases::<T, P>(&mut face, n) {
            let ins: heapless::Vec<&Tensor, MAX_INPUTS> = inputs.iter().collect();
            // Warm up: the pool grows to its working set, faer's GEMM sets
            // up its thread-local buffer.
            for _ in 0..3 {
                drop(face.apply(op.clone(), &ins).unwrap());
            }
            let (allocs, out) = count(|| face.apply(op.clone(), &ins).map(drop));
            out.unwrap();
            line.push_str(&format!(" {} {allocs}", op.name()));
            // Zero on the host providers; measured (the table) for cuda.
            if allocs != 0 && zero {
                failures.push(format!("{label} n={n} {}: {allocs} allocations", op.name()));
            }
        }
        println!("{line}");
    }
    failures
}

fn every_op_is_allocation_free_in_steady_state<P: TestProvider>(provider: &P) {
    let mut failures = table::<f64, P>(*provider, "f64");
    failures.extend(table::<Complex<f64>, P>(*provider, "c64"));
    assert!(failures.is_empty(), "{failures:#?}");
}

lindiff_tests::providers!(every_op_is_allocation_free_in_steady_state);

/// Threaded runs report their count (rayon lanes and faer's own threads may
/// allocate inside the thread pool; only the calling thread is counted here,
/// so this prints rather than asserts).
#[test]
fn threaded_runs_report_their_count() {
    use lindiff_core::Exec;
    let mut la = Direct::new(Cpu::with_exec(Exec::with_threads(2)));
    let mut rng = Rng::new(1);
    let data: Vec<f64> = (0..64).flat_map(|_| rng.matrix::<f64>(8, 8).data).collect();
    let a = la.tensor(&[8, 8, 64], &data).unwrap();
    for _ in 0..3 {
        drop(la.svd(&a).unwrap());
    }
    let (allocations, out) = count(|| la.svd(&a).map(drop));
    out.unwrap();
    println!("batch of 64 8×8 SVDs on 2 lanes: {allocations} allocations on the calling thread");
}
