//! The error table: every op × bad input → an `Err` whose message names the
//! op, the argument and the shape. Each row goes through the checked entry
//! point `call::run_into` on a provider whose memory is opaque handles, so the
//! checks are proven to run in core, before any provider code.

use lindiff_core::op::internal::{Chain, EighGaugeCheck, Link, LinkOp, Operand, SvdGaugeCheck, ValuesCheck};
use lindiff_core::op::{
    Adjugate, Cholesky, Det, Eig, EigVals, Eigh, EighOptions, EighVals, Expm, ExpmFactors, ExpmFrechet,
    ExpmFrechetFactored, FullPivLu, FullPivLuFactor, FullPivLuSolve, FullPivLuSolvePrepared, FunmHermitian,
    FunmHermitianFactors, FunmHermitianFrechet, FunmHermitianSecond, HouseholderQrAppend, HouseholderQrApply,
    HouseholderQrFactor, HouseholderQrQ, HouseholderQrR, Logm, LogmFrechet, LowRankApprox, Lstsq, Lu,
    LuFactor, LuFactorSolve, LuSolvePrepared, MatrixFunction, MatrixRank, Pinv, PinvOptions, Polar, Qr,
    RankRevealingQr, RankRevealingQrOptions, Side, Slogdet, Sqrtm, SqrtmFrechet, Svd, SvdFull, SvdOptions,
    SvdTruncated, SvdVals, TriangularSolve, TriangularSolveOptions, Truncation,
};
use lindiff_core::{call, DType, Input, LinalgOp, MatOp, Op, Shape, TensorDesc, TensorMeta};
use lindiff_core::{Allocator, Memory, WorkspaceReq};
use lindiff_tests::handle_provider::{Handle, HandleMemory, HandleProvider, HandleStore};

fn meta(dtype: DType, dims: &[usize]) -> TensorMeta {
    TensorMeta::new(dtype, Shape::new(dims).unwrap())
}
fn f64s(dims: &[usize]) -> TensorMeta {
    meta(DType::F64, dims)
}
fn i64s(dims: &[usize]) -> TensorMeta {
    meta(DType::I64, dims)
}

/// Every op with inputs it accepts (a 3×3 system, batch-free), the
/// internal gauge checks last.
fn every_op() -> Vec<(Op, Vec<TensorMeta>)> {
    let a = || f64s(&[3, 3]);
    let b = || f64s(&[3, 2]);
    let p = || i64s(&[3]);
    let tau = || f64s(&[3]);
    let linalg = vec![
        (LinalgOp::Svd(Svd::default()), vec![a()]),
        (LinalgOp::SvdVals(SvdVals::default()), vec![a()]),
        (LinalgOp::SvdFull(SvdFull::default()), vec![a()]),
        (LinalgOp::SvdTruncated(SvdTruncated(Truncation::Count(2))), vec![a()]),
        (LinalgOp::Qr(Qr::default()), vec![a()]),
        (LinalgOp::RankRevealingQr(RankRevealingQr::default()), vec![a()]),
        (LinalgOp::HouseholderQrFactor(HouseholderQrFactor), vec![a()]),
        (LinalgOp::HouseholderQrAppend(HouseholderQrAppend), vec![a(), tau(), b()]),
        (LinalgOp::HouseholderQrQ(HouseholderQrQ), vec![a(), tau()]),
        (LinalgOp::HouseholderQrR(HouseholderQrR), vec![a()]),
        (LinalgOp::HouseholderQrApply(HouseholderQrApply(MatOp::Adjoint)), vec![a(), tau(), b()]),
        (LinalgOp::Eigh(Eigh::default()), vec![a()]),
        (LinalgOp::EighVals(EighVals::default()), vec![a()]),
        (LinalgOp::Eig(Eig), vec![a()]),
        (LinalgOp::EigVals(EigVals), vec![a()]),
        (LinalgOp::Cholesky(Cholesky), vec![a()]),
        (LinalgOp::Lu(Lu), vec![a()]),
        (LinalgOp::LuFactor(LuFactor), vec![a()]),
        (LinalgOp::LuFactorSolve(LuFactorSolve::default()), vec![a(), b()]),
        (LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Identity)), vec![a(), p(), b()]),
        (LinalgOp::FullPivLu(FullPivLu), vec![a()]),
        (LinalgOp::FullPivLuFactor(FullPivLuFactor), vec![a()]),
        (LinalgOp::FullPivLuSolve(FullPivLuSolve::default()), vec![a(), b()]),
        (
            LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(MatOp::Adjoint)),
            vec![a(), p(), p(), b()],
        ),
        (LinalgOp::TriangularSolve(TriangularSolve::default()), vec![a(), b()]),
        (LinalgOp::Det(Det), vec![a()]),
        (LinalgOp::Slogdet(Slogdet), vec![a()]),
        (LinalgOp::Adjugate(Adjugate), vec![a()]),
        (LinalgOp::FunmHermitian(FunmHermitian(MatrixFunction::Log)), vec![a()]),
        (LinalgOp::FunmHermitianFactors(FunmHermitianFactors(MatrixFunction::Sqrt)), vec![a()]),
        (
            LinalgOp::FunmHermitianFrechet(FunmHermitianFrechet(MatrixFunction::Exp)),
            vec![a(), a(), tau(), a(), a()],
        ),
        (
            LinalgOp::FunmHermitianSecond(FunmHermitianSecond(MatrixFunction::Log)),
            vec![a(), tau(), a(), a(), a()],
        ),
        (LinalgOp::Expm(Expm), vec![a()]),
        (LinalgOp::ExpmFrechet(ExpmFrechet(MatOp::Transpose)), vec![a(), a()]),
        (LinalgOp::ExpmFactors(ExpmFactors), vec![a()]),
        (
            LinalgOp::ExpmFrechetFactored(ExpmFrechetFactored(MatOp::Adjoint)),
            vec![a(), f64s(&[3, 24]), i64s(&[5]), a()],
        ),
        (LinalgOp::Logm(Logm), vec![a()]),
        (LinalgOp::LogmFrechet(LogmFrechet(MatOp::Adjoint)), vec![a(), a()]),
        (LinalgOp::Sqrtm(Sqrtm), vec![a()]),
        (LinalgOp::SqrtmFrechet(SqrtmFrechet(MatOp::Identity)), vec![a(), a()]),
        (LinalgOp::LowRankApprox(LowRankApprox(Truncation::Count(2))), vec![a()]),
        (LinalgOp::Polar(Polar), vec![a()]),
        (LinalgOp::Pinv(Pinv::default()), vec![a()]),
        (LinalgOp::Lstsq(Lstsq::default()), vec![a(), b()]),
        (LinalgOp::MatrixRank(MatrixRank::default()), vec![a()]),
    ];
    let internal = [
        (SvdGaugeCheck::default().into(), vec![a(), tau(), a(), a(), tau(), a()]),
        (EighGaugeCheck::default().into(), vec![a(), tau(), tau(), a()]),
    ];
    linalg.into_iter().map(|(op, inputs)| (Op::Linalg(op), inputs)).chain(internal).collect()
}

/// Runs `op` on `inputs` through `call::run_into` on the handle provider and
/// returns the error message (or "ok").
fn run(op: &Op, inputs: &[TensorMeta]) -> String {
    let mut store = HandleStore::new();
    let provider = HandleProvider::new(store.clone());
    let descs: Vec<TensorDesc> = inputs.iter().map(|m| TensorDesc::contiguous(m.clone()).unwrap()).collect();
    // Inputs of sane size get real (zero) storage; the overflow rows get
    // phantom handles, which core must reject before anything reads them.
    let handles: Vec<Handle> = descs
        .iter()
        .map(|d| match d.span() {
            Some(span) if span <= 4096 => store.upload(&vec![0.0; span]),
            span => store.phantom(span.unwrap_or(usize::MAX).saturating_mul(8)),
        })
        .collect();
    let ins: Vec<Input<'_, HandleMemory>> = descs
        .iter()
        .zip(&handles)
        .map(|(desc, h)| Input { desc, data: HandleMemory::data(h).unwrap() })
        .collect();
    let op = op.clone();
    let slot = WorkspaceReq::of::<f64>(512);
    let mut outs: Vec<Option<Handle>> = (0..op_output_count(&op))
        .map(|_| Some(Allocator::<HandleMemory>::allocate(&mut store, slot).unwrap()))
        .collect();
    let mut out_refs: Vec<Option<&mut Handle>> = outs.iter_mut().map(|o| o.as_mut()).collect();
    let mut ws = Allocator::<HandleMemory>::allocate(&mut store, slot).unwrap();
    match call::run_into(&provider, &op, &ins, &mut out_refs, &mut ws) {
        Ok(()) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

fn op_output_count(op: &Op) -> usize {
    op.output_names().len()
}

#[test]
fn every_op_accepts_its_template_inputs() {
    for (op, inputs) in every_op() {
        let descs: Vec<TensorDesc> =
            inputs.iter().map(|m| TensorDesc::contiguous(m.clone()).unwrap()).collect();
        let refs: Vec<&TensorDesc> = descs.iter().collect();
        let outs = call::infer(&op, &refs);
        assert!(outs.is_ok(), "{}: {:?}", op.name(), outs);
        assert_eq!(outs.unwrap().len(), op.output_names().len());
    }
    let linalg = every_op().iter().filter(|(op, _)| matches!(op, Op::Linalg(_))).count();
    assert_eq!(linalg, LinalgOp::all().count(), "a new op must join this table");
}

#[test]
fn every_op_rejects_a_vector_where_a_matrix_goes() {
    for (op, mut inputs) in every_op() {
        inputs[0] = f64s(&[3]);
        let arg = op.input_names()[0];
        let expected = format!(
            "{}: argument `{arg}` must be a matrix with dims [rows, cols, batch…], got shape [3]",
            op.name()
        );
        assert_eq!(run(&op, &inputs), expected);
    }
}

#[test]
fn every_op_rejects_integer_matrices() {
    for (op, mut inputs) in every_op() {
        inputs[0] = i64s(&[3, 3]);
        let arg = op.input_names()[0];
        let expected = format!(
            "{}: argument `{arg}` must have a float dtype (f32, f64, c32 or c64), got i64",
            op.name()
        );
        assert_eq!(run(&op, &inputs), expected);
    }
}

#[test]
fn every_op_rejects_the_wrong_input_count() {
    for (op, mut inputs) in every_op() {
        let n = inputs.len();
        inputs.push(f64s(&[3, 3]));
        let noun = if n == 1 { "input" } else { "inputs" };
        assert_eq!(run(&op, &inputs), format!("{}: takes {n} {noun}, got {}", op.name(), n + 1));
    }
}

/// (op, inputs, exact message).
fn table() -> Vec<(LinalgOp, Vec<TensorMeta>, &'static str)> {
    let sq = |n| f64s(&[n, n]);
    vec![
        // Square required.
        (LinalgOp::Det(Det), vec![f64s(&[2, 3])], "det: argument `a` must be square, got 2×3"),
        (LinalgOp::Slogdet(Slogdet), vec![f64s(&[2, 3])], "slogdet: argument `a` must be square, got 2×3"),
        (LinalgOp::Adjugate(Adjugate), vec![f64s(&[3, 2, 4])], "adjugate: argument `a` must be square, got 3×2×4"),
        (LinalgOp::Cholesky(Cholesky), vec![f64s(&[4, 3, 2])], "cholesky: argument `a` must be square, got 4×3×2"),
        (LinalgOp::Eigh(Eigh::default()), vec![f64s(&[3, 2])], "eigh: argument `a` must be square, got 3×2"),
        (LinalgOp::EighVals(EighVals::default()), vec![f64s(&[1, 2])], "eigh_vals: argument `a` must be square, got 1×2"),
        (LinalgOp::Eig(Eig), vec![f64s(&[5, 4])], "eig: argument `a` must be square, got 5×4"),
        (LinalgOp::EigVals(EigVals), vec![f64s(&[5, 4])], "eig_vals: argument `a` must be square, got 5×4"),
        (LinalgOp::LuFactorSolve(LuFactorSolve::default()), vec![f64s(&[3, 2]), f64s(&[3, 1])], "lu_factor_solve: argument `a` must be square, got 3×2"),
        (LinalgOp::FullPivLuSolve(FullPivLuSolve::default()), vec![f64s(&[2, 3]), f64s(&[2, 1])], "full_piv_lu_solve: argument `a` must be square, got 2×3"),
        (LinalgOp::TriangularSolve(TriangularSolve::default()), vec![f64s(&[2, 3]), f64s(&[2, 1])], "triangular_solve: argument `a` must be square, got 2×3"),
        // Empty: a 0×2 system is rejected; det of 0×0 is valid.
        (LinalgOp::LuFactorSolve(LuFactorSolve::default()), vec![f64s(&[0, 2]), f64s(&[0, 1])], "lu_factor_solve: argument `a` must be square, got 0×2"),
        (LinalgOp::Det(Det), vec![sq(0)], "ok"),
        // Rows of b must match a.
        (LinalgOp::LuFactorSolve(LuFactorSolve::default()), vec![sq(3), f64s(&[4, 2])], "lu_factor_solve: argument `b` must have 3 rows to match `a`, got 4×2"),
        (LinalgOp::FullPivLuSolve(FullPivLuSolve::default()), vec![sq(3), f64s(&[2, 2])], "full_piv_lu_solve: argument `b` must have 3 rows to match `a`, got 2×2"),
        (LinalgOp::Lstsq(Lstsq::default()), vec![f64s(&[5, 3]), f64s(&[3, 1])], "lstsq: argument `b` must have 5 rows to match `a`, got 3×1"),
        (LinalgOp::TriangularSolve(TriangularSolve::default()), vec![sq(3), f64s(&[2, 2])], "triangular_solve: argument `b` must have 3 rows to match `a`, got 2×2"),
        (LinalgOp::TriangularSolve(TriangularSolve(TriangularSolveOptions::default().side(Side::Right))), vec![sq(3), f64s(&[3, 2])], "triangular_solve: argument `b` must have 3 columns to match `a`, got 3×2"),
        (LinalgOp::HouseholderQrAppend(HouseholderQrAppend), vec![f64s(&[4, 2]), f64s(&[2]), f64s(&[3, 1])], "householder_qr_append: argument `b` must have 4 rows to match `h`, got 3×1"),
        (LinalgOp::HouseholderQrQ(HouseholderQrQ), vec![f64s(&[4, 2]), f64s(&[3])], "householder_qr_q: argument `tau` must have 2 elements to match `h`, got [3]"),
        (LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Identity)), vec![sq(3), i64s(&[2]), f64s(&[3, 1])], "lu_solve_prepared: argument `perm` must have 3 elements to match `lu`, got [2]"),
        (LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Identity)), vec![sq(3), f64s(&[3]), f64s(&[3, 1])], "lu_solve_prepared: argument `perm` must have dtype i64, got f64"),
        // Batch dims must match exactly.
        (LinalgOp::LuFactorSolve(LuFactorSolve::default()), vec![f64s(&[3, 3, 2]), f64s(&[3, 1, 4])], "lu_factor_solve: argument `b` (3×1×4) and `a` (3×3×2) have different batch dims (no broadcasting)"),
        (LinalgOp::Lstsq(Lstsq::default()), vec![f64s(&[3, 3, 2]), f64s(&[3, 1])], "lstsq: argument `b` (3×1) and `a` (3×3×2) have different batch dims (no broadcasting)"),
        (LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(MatOp::Identity)), vec![f64s(&[3, 3, 2]), i64s(&[3, 2]), i64s(&[3, 5]), f64s(&[3, 1, 2])], "full_piv_lu_solve_prepared: argument `col_perm` (3×5) and `lu` (3×3×2) have different batch dims (no broadcasting)"),
        // Dtypes must agree.
        (LinalgOp::LuFactorSolve(LuFactorSolve::default()), vec![sq(3), meta(DType::F32, &[3, 1])], "lu_factor_solve: argument `b` must have dtype f64, got f32"),
        // Sizes that overflow usize.
        (LinalgOp::Svd(Svd::default()), vec![f64s(&[usize::MAX / 2, 4])], "svd: argument `a` of shape 9223372036854775807×4 has more elements or bytes than fit in usize"),
        (LinalgOp::Qr(Qr::default()), vec![f64s(&[1 << 31, 1 << 31, 1 << 3])], "qr: argument `a` of shape 2147483648×2147483648×8 has more elements or bytes than fit in usize"),
        // Wrong kinds in later arguments.
        (LinalgOp::LuFactorSolve(LuFactorSolve::default()), vec![sq(3), f64s(&[3])], "lu_factor_solve: argument `b` must be a matrix with dims [rows, cols, batch…], got shape [3]"),
        (LinalgOp::HouseholderQrQ(HouseholderQrQ), vec![sq(3), f64s(&[3, 3])], "householder_qr_q: argument `tau` (3×3) and `h` (3×3) have different batch dims (no broadcasting)"),
        (LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Identity)), vec![sq(3), i64s(&[]), f64s(&[3, 1])], "lu_solve_prepared: argument `perm` must be a vector with dims [len, batch…], got shape scalar"),
        (LinalgOp::Det(Det), vec![f64s(&[])], "det: argument `a` must be a matrix with dims [rows, cols, batch…], got shape scalar"),
        // More row mismatches.
        (LinalgOp::LuSolvePrepared(LuSolvePrepared::new(MatOp::Adjoint)), vec![sq(3), i64s(&[3]), f64s(&[2, 1])], "lu_solve_prepared: argument `b` must have 3 rows to match `lu`, got 2×1"),
        (LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(MatOp::Identity)), vec![sq(3), i64s(&[3]), i64s(&[3]), f64s(&[4, 1])], "full_piv_lu_solve_prepared: argument `b` must have 3 rows to match `lu`, got 4×1"),
        (LinalgOp::HouseholderQrApply(HouseholderQrApply(MatOp::Identity)), vec![f64s(&[5, 3]), f64s(&[3]), f64s(&[4, 2])], "householder_qr_apply: argument `b` must have 5 rows to match `h`, got 4×2"),
        // An output whose size overflows though the input's does not.
        (LinalgOp::SvdFull(SvdFull::default()), vec![f64s(&[1 << 33, 1])], "svd_full: argument `u` of shape 8589934592×8589934592 has more elements or bytes than fit in usize"),
        // Options.
        (LinalgOp::Svd(Svd(SvdOptions::default().derivative_eps(-1.0))), vec![sq(3)], "svd: option `derivative_eps` must be a finite number > 0 (use None for the exact rule)"),
        (LinalgOp::Eigh(Eigh(EighOptions::default().derivative_eps(f64::NAN))), vec![sq(3)], "eigh: option `derivative_eps` must be a finite number > 0 (use None for the exact rule)"),
        (LinalgOp::RankRevealingQr(RankRevealingQr(RankRevealingQrOptions::default().rtol(-1e-3))), vec![sq(3)], "rank_revealing_qr: option `rtol` must be a finite number ≥ 0"),
        (LinalgOp::Pinv(Pinv(PinvOptions::default().atol(f64::INFINITY))), vec![sq(3)], "pinv: option `atol` must be a finite number ≥ 0"),
        (LinalgOp::LowRankApprox(LowRankApprox(Truncation::Count(0))), vec![sq(3)], "low_rank_approx: option `rank` must keep at least one triplet"),
        (LinalgOp::SvdTruncated(SvdTruncated(Truncation::Count(0))), vec![sq(3)], "svd_truncated: option `rank` must keep at least one triplet"),
        (LinalgOp::SvdTruncated(SvdTruncated(Truncation::Tolerance { atol: 0.0, rtol: f64::NAN })), vec![sq(3)], "svd_truncated: option `rtol` must be a finite number ≥ 0"),
    ]
}

/// The internal gauge checks: cotangents shaped like their primals, real
/// values.
fn internal_table() -> Vec<(Op, Vec<TensorMeta>, &'static str)> {
    vec![
        (
            Op::from(SvdGaugeCheck::default()),
            vec![f64s(&[4, 3]), f64s(&[3]), f64s(&[3, 5]), f64s(&[4, 2]), f64s(&[3]), f64s(&[3, 5])],
            "svd_gauge_check: argument `gu` must have 3 columns to match `u`, got 4×2",
        ),
        (
            Op::from(SvdGaugeCheck::default()),
            vec![f64s(&[4, 3]), f64s(&[3]), f64s(&[2, 5]), f64s(&[4, 3]), f64s(&[3]), f64s(&[2, 5])],
            "svd_gauge_check: argument `vh` must have 3 rows to match `s`, got 2×5",
        ),
        (
            Op::from(EighGaugeCheck::default()),
            vec![meta(DType::C64, &[3, 3]), meta(DType::C64, &[3]), f64s(&[3]), meta(DType::C64, &[3, 3])],
            "eigh_gauge_check: argument `w` must have dtype f64, got c64",
        ),
        (
            Op::from(SvdGaugeCheck::default()),
            vec![f64s(&[4, 3]), f64s(&[3]), f64s(&[3, 5]), f64s(&[4, 3]), f64s(&[2]), f64s(&[3, 5])],
            "svd_gauge_check: argument `gs` must have 3 elements to match `s`, got [2]",
        ),
        (
            Op::from(EighGaugeCheck::default()),
            vec![f64s(&[3, 3]), f64s(&[3]), f64s(&[3]), f64s(&[3, 2])],
            "eigh_gauge_check: argument `gv` must have 3 columns to match `v`, got 3×2",
        ),
        (
            Op::from(ValuesCheck::default()),
            vec![meta(DType::C64, &[3]), meta(DType::C64, &[3])],
            "values_check: argument `x` must have dtype f64, got c64",
        ),
        (
            Op::from(ValuesCheck::default()),
            vec![f64s(&[3]), f64s(&[2])],
            "values_check: argument `g` must have 3 elements to match `x`, got [2]",
        ),
        (
            Op::from(chain(2, Operand::Input(1))),
            vec![f64s(&[3, 2]), f64s(&[2, 3])],
            "elementwise_chain: argument `x1` must have the shape of `x0` (3×2), got 2×3",
        ),
        (
            Op::from(chain(2, Operand::Input(1))),
            vec![f64s(&[3, 2]), meta(DType::C64, &[3, 2])],
            "elementwise_chain: argument `x1` must have dtype f64, got c64",
        ),
        (
            Op::from(chain(2, Operand::Input(2))),
            vec![f64s(&[3, 2]), f64s(&[3, 2])],
            "elementwise_chain: option `links` must read only the chain's inputs and earlier links",
        ),
        (Op::from(Chain::new(1)), vec![f64s(&[3, 2])], "elementwise_chain: option `links` must not be empty"),
    ]
}

/// A compiled plan's chain over `inputs` inputs: x0 + `b`.
fn chain(inputs: usize, b: Operand) -> Chain {
    let mut chain = Chain::new(inputs);
    chain.push(Link { op: LinkOp::Add, a: Operand::Input(0), b }).unwrap();
    chain
}

#[test]
fn shape_dtype_and_option_errors_name_op_argument_and_shape() {
    let linalg = table().into_iter().map(|(op, inputs, expected)| (Op::Linalg(op), inputs, expected));
    for (op, inputs, expected) in linalg.chain(internal_table()) {
        assert_eq!(run(&op, &inputs), expected, "{}", op.name());
    }
}

#[test]
fn primitives_name_op_argument_and_shape() {
    use lindiff_core::prim::{Binary, BinaryOp, Matmul, PrimOp, Slice, Spread};
    let rows: Vec<(PrimOp, Vec<TensorMeta>, &str)> = vec![
        (
            PrimOp::Matmul(Matmul::PLAIN),
            vec![f64s(&[2, 3]), f64s(&[4, 2])],
            "matmul: argument `b` must have 3 rows to match `a`, got 4×2",
        ),
        (
            PrimOp::Binary(Binary(BinaryOp::Add)),
            vec![f64s(&[2, 3]), f64s(&[3, 2])],
            "add: argument `y` must have the shape of `x` (2×3), got 3×2",
        ),
        (
            PrimOp::Slice(Slice { start: [1, 0], size: [2, 2] }),
            vec![f64s(&[2, 3])],
            "slice: a 2×2 block at (1, 0) does not fit in argument `x` of shape 2×3",
        ),
        (
            PrimOp::Spread(Spread { core: heapless::Vec::from_slice(&[2, 2, 2, 2]).unwrap() }),
            vec![f64s(&[2, 2, 2, 2, 2])],
            "spread: argument `y` would need 9 dims; lindiff supports at most 8",
        ),
    ];
    let store = HandleStore::new();
    let provider = HandleProvider::new(store);
    for (op, inputs, expected) in rows {
        let descs: Vec<TensorDesc> =
            inputs.iter().map(|m| TensorDesc::contiguous(m.clone()).unwrap()).collect();
        let refs: Vec<&TensorDesc> = descs.iter().collect();
        let err = call::workspace(&provider, &Op::Prim(op), &refs).unwrap_err();
        assert_eq!(err.to_string(), expected);
    }
}

#[test]
fn views_with_a_wrong_stride_count_are_rejected() {
    let mut desc = TensorDesc::contiguous(f64s(&[3, 3])).unwrap();
    desc.strides.pop();
    let err = call::infer(&Op::Linalg(LinalgOp::Det(Det)), &[&desc]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "det: buffer for `a` has a stride count different from its rank: needs 2, got 1"
    );
}

#[test]
fn pruning_keeps_only_what_is_used() {
    use lindiff_core::op::SvdVectors;
    use lindiff_core::Live;
    let svd = LinalgOp::Svd(Svd::default());
    assert_eq!(svd.prune(Live::of(&[1])), Some(LinalgOp::SvdVals(SvdVals::default())));
    assert_eq!(
        svd.prune(Live::of(&[0, 1])),
        Some(LinalgOp::Svd(Svd(SvdOptions::default().vectors(SvdVectors::Left))))
    );
    assert_eq!(
        svd.prune(Live::of(&[2])),
        Some(LinalgOp::Svd(Svd(SvdOptions::default().vectors(SvdVectors::Right))))
    );
    assert_eq!(svd.prune(Live::of(&[0, 1, 2])), None);
    assert_eq!(
        LinalgOp::SvdFull(SvdFull::default()).prune(Live::of(&[1])),
        Some(LinalgOp::SvdVals(SvdVals::default()))
    );
    assert_eq!(
        LinalgOp::Eigh(Eigh::default()).prune(Live::of(&[0])),
        Some(LinalgOp::EighVals(EighVals::default()))
    );
    assert_eq!(LinalgOp::Eig(Eig).prune(Live::of(&[0])), Some(LinalgOp::EigVals(EigVals)));
    assert_eq!(LinalgOp::Eig(Eig).prune(Live::of(&[0, 1])), None);
    // The fused solves are never pruned to a plain solve.
    assert_eq!(LinalgOp::LuFactorSolve(LuFactorSolve::default()).prune(Live::of(&[0])), None);
    assert_eq!(LinalgOp::FullPivLuSolve(FullPivLuSolve::default()).prune(Live::of(&[0])), None);
    assert_eq!(Live::all(12), Live::all(8));
    assert!(!Live::NONE.with(9).contains(9));
}

#[test]
fn composites_name_themselves_on_a_handle_face() {
    use lindiff_core::face::Norm;
    use lindiff_core::{Linalg, Ops};
    use lindiff_tests::handle_provider::HandleFace;
    let mut face = HandleFace::new();
    let wide = face.tensor(&[2, 3], &[0.0; 6]);
    assert_eq!(face.inv(&wide).unwrap_err().to_string(), "inv: argument `a` must be square, got 2×3");
    assert_eq!(
        face.matrix_power(&wide, 2).unwrap_err().to_string(),
        "matrix_power: argument `a` must be square, got 2×3"
    );
    assert_eq!(
        face.cond(&wide, Norm::One).unwrap_err().to_string(),
        "cond: argument `a` must be square, got 2×3"
    );
    let v = face.tensor(&[3], &[0.0; 3]);
    assert_eq!(
        face.norm(&v, Norm::Fro).unwrap_err().to_string(),
        "norm: argument `a` must be a matrix with dims [rows, cols, batch…], got shape [3]"
    );
    let s = face.tensor(&[], &[1.0]);
    assert_eq!(
        face.vecdot(&s, &s).unwrap_err().to_string(),
        "vecdot: argument `x` must be a vector with dims [len, batch…], got shape scalar"
    );
    // A valid composite runs end to end on opaque handles: inv through the
    // fused solve against the identity... which needs the `eye` primitive the
    // handle provider does not have, and says so.
    let sq = face.tensor(&[2, 2], &[3.0, 1.0, 2.0, 4.0]);
    assert_eq!(
        face.inv(&sq).unwrap_err().to_string(),
        "eye: not supported by provider handles: the handle test provider runs det and lu_factor_solve in f64 only"
    );
    let det = face.det(&sq).unwrap();
    assert_eq!(face.store.download(&det.handle).unwrap()[0], 10.0);
}

#[test]
fn views_whose_byte_span_overflows_are_rejected_before_any_buffer() {
    // The span in elements fits in usize, in bytes it does not.
    let mut desc = TensorDesc::contiguous(f64s(&[3, 3])).unwrap();
    desc.offset = usize::MAX / 8;
    assert!(desc.span().is_some());
    let op = Op::Linalg(LinalgOp::Det(Det));
    let expected = "det: argument `a` of shape 3×3 has more elements or bytes than fit in usize";
    assert_eq!(call::infer(&op, &[&desc]).unwrap_err().to_string(), expected);
    let provider = HandleProvider::new(HandleStore::new());
    assert_eq!(call::prepare(&provider, &op, &[&desc]).unwrap_err().to_string(), expected);
    let store = HandleStore::new();
    let (a, mut out, mut ws) = (store.phantom(9 * 8), store.phantom(8), store.phantom(9 * 8));
    let ins = [Input::<HandleMemory> { desc: &desc, data: HandleMemory::data(&a).unwrap() }];
    let err = call::run_into(&provider, &op, &ins, &mut [Some(&mut out)], &mut ws).unwrap_err();
    assert_eq!(err.to_string(), expected);
}

#[test]
fn buffer_errors_are_reported_not_dereferenced() {
    let store = HandleStore::new();
    let provider = HandleProvider::new(store.clone());
    let op = Op::Linalg(LinalgOp::Det(Det));
    let desc = TensorDesc::contiguous(f64s(&[3, 3])).unwrap();
    let a = store.phantom(8 * 8); // one element short
    let mut out = store.phantom(8);
    let mut ws = store.phantom(9 * 8);
    let ins = [Input::<HandleMemory> { desc: &desc, data: HandleMemory::data(&a).unwrap() }];
    let err = call::run_into(&provider, &op, &ins, &mut [Some(&mut out)], &mut ws).unwrap_err();
    assert_eq!(err.to_string(), "det: buffer for `a` is smaller than its view: needs 72, got 64");

    let a = store.phantom(9 * 8);
    let ins = [Input::<HandleMemory> { desc: &desc, data: HandleMemory::data(&a).unwrap() }];
    let mut small_ws = store.phantom(8);
    let err = call::run_into(&provider, &op, &ins, &mut [Some(&mut out)], &mut small_ws).unwrap_err();
    assert_eq!(err.to_string(), "det: buffer for `workspace` is too small: needs 72, got 8");

    let err = call::run_into(&provider, &op, &ins, &mut [None], &mut ws).unwrap_err();
    assert_eq!(err.to_string(), "det: buffer for `det` is missing: needs 8, got 0");

    let mut tiny = store.phantom(4);
    let err = call::run_into(&provider, &op, &ins, &mut [Some(&mut tiny)], &mut ws).unwrap_err();
    assert_eq!(err.to_string(), "det: buffer for `det` is too small: needs 8, got 4");

    let err = call::run_into(&provider, &op, &ins, &mut [], &mut ws).unwrap_err();
    assert_eq!(err.to_string(), "det: buffer for `outputs` has the wrong number of slots: needs 1, got 0");

    // A row-major view whose strides reach past the buffer.
    let mut rm = TensorDesc::row_major_matrix(DType::F64, 3, 3).unwrap();
    rm.offset = 1;
    let ins = [Input::<HandleMemory> { desc: &rm, data: HandleMemory::data(&a).unwrap() }];
    let err = call::run_into(&provider, &op, &ins, &mut [Some(&mut out)], &mut ws).unwrap_err();
    assert_eq!(err.to_string(), "det: buffer for `a` is smaller than its view: needs 80, got 72");
    assert_eq!(store.slot_count(), 0, "no storage was touched by failing calls");
}

#[test]
fn pruned_outputs_must_not_get_buffers() {
    let op = Op::Linalg(LinalgOp::Svd(Svd::default()).prune(lindiff_core::Live::of(&[0, 1])).unwrap());
    let store = HandleStore::new();
    let provider = HandleProvider::new(store.clone());
    let desc = TensorDesc::contiguous(f64s(&[3, 3])).unwrap();
    let a = store.phantom(72);
    let ins = [Input::<HandleMemory> { desc: &desc, data: HandleMemory::data(&a).unwrap() }];
    let (mut u, mut s, mut vh, mut ws) =
        (store.phantom(72), store.phantom(24), store.phantom(72), store.phantom(0));
    let err = call::run_into(&provider, &op, &ins, &mut [Some(&mut u), Some(&mut s), Some(&mut vh)], &mut ws)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "svd: buffer for `vh` must be absent (the op's options switch this output off): needs 0, got 1"
    );
}

/// Valid calls run end to end on opaque handles: det of 0×0 is 1, a singular
/// det is a rounding-level number (no error), and a solve returns x with
/// A x = b, read back through the store.
#[test]
fn valid_calls_run_through_handles() {
    let mut store = HandleStore::new();
    let provider = HandleProvider::new(store.clone());
    let det = Op::Linalg(LinalgOp::Det(Det));
    let run_det = |store: &mut HandleStore, n: usize, values: &[f64]| -> f64 {
        let desc = TensorDesc::contiguous(f64s(&[n, n])).unwrap();
        let a = store.upload(values);
        let ins = [Input::<HandleMemory> { desc: &desc, data: HandleMemory::data(&a).unwrap() }];
        let req = call::workspace(&provider, &det, &[&desc]).unwrap();
        let mut ws = Allocator::<HandleMemory>::allocate(store, req).unwrap();
        let mut out = Allocator::<HandleMemory>::allocate(store, WorkspaceReq::of::<f64>(1)).unwrap();
        call::run_into(&provider, &det, &ins, &mut [Some(&mut out)], &mut ws).unwrap();
        store.download(&out).unwrap()[0]
    };
    assert_eq!(run_det(&mut store, 0, &[]), 1.0);
    // Column-major [[1,2,3],[2,4,6],[1,0,1]]: rank 2.
    let singular = run_det(&mut store, 3, &[1.0, 2.0, 1.0, 2.0, 4.0, 0.0, 3.0, 6.0, 1.0]);
    assert!(singular.abs() < 1e-14, "{singular}");
    assert_eq!(run_det(&mut store, 2, &[3.0, 1.0, 2.0, 4.0]), 10.0);

    let solve = Op::Linalg(LinalgOp::LuFactorSolve(LuFactorSolve::default()));
    let a_desc = TensorDesc::contiguous(f64s(&[2, 2])).unwrap();
    let b_desc = TensorDesc::contiguous(f64s(&[2, 1])).unwrap();
    let a = store.upload(&[3.0, 1.0, 2.0, 4.0]); // [[3, 2], [1, 4]]
    let b = store.upload(&[7.0, 9.0]);
    let ins = [
        Input::<HandleMemory> { desc: &a_desc, data: HandleMemory::data(&a).unwrap() },
        Input::<HandleMemory> { desc: &b_desc, data: HandleMemory::data(&b).unwrap() },
    ];
    let req = call::workspace(&provider, &solve, &[&a_desc, &b_desc]).unwrap();
    let mut ws = Allocator::<HandleMemory>::allocate(&mut store, req).unwrap();
    let mut x = Allocator::<HandleMemory>::allocate(&mut store, WorkspaceReq::of::<f64>(2)).unwrap();
    let mut lu = Allocator::<HandleMemory>::allocate(&mut store, WorkspaceReq::of::<f64>(4)).unwrap();
    let mut perm = Allocator::<HandleMemory>::allocate(&mut store, WorkspaceReq::of::<i64>(2)).unwrap();
    call::run_into(&provider, &solve, &ins, &mut [Some(&mut x), Some(&mut lu), Some(&mut perm)], &mut ws)
        .unwrap();
    let x = store.download(&x).unwrap();
    assert!((x[0] - 1.0).abs() < 1e-15 && (x[1] - 2.0).abs() < 1e-15, "{x:?}");
}

#[test]
fn unsupported_ops_say_which_provider() {
    let store = HandleStore::new();
    let provider = HandleProvider::new(store);
    let err = call::workspace(
        &provider,
        &Op::Linalg(LinalgOp::Svd(Svd::default())),
        &[&TensorDesc::contiguous(f64s(&[2, 2])).unwrap()],
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "svd: not supported by provider handles: the handle test provider runs det and lu_factor_solve in f64 only");
}

#[test]
fn a_prepared_call_only_runs_the_inputs_it_was_prepared_for() {
    let mut store = HandleStore::new();
    let provider = HandleProvider::new(store.clone());
    let det = Op::Linalg(LinalgOp::Det(Det));
    let planned = TensorDesc::contiguous(f64s(&[2, 2])).unwrap();
    let prepared = call::prepare(&provider, &det, &[&planned]).unwrap();
    assert_eq!(prepared.workspace().bytes(), 32);
    let other = TensorDesc::contiguous(f64s(&[3, 3])).unwrap();
    let a = store.upload(&[0.0; 9]);
    let ins = [Input::<HandleMemory> { desc: &other, data: HandleMemory::data(&a).unwrap() }];
    let mut out = Allocator::<HandleMemory>::allocate(&mut store, WorkspaceReq::of::<f64>(1)).unwrap();
    let mut ws = Allocator::<HandleMemory>::allocate(&mut store, WorkspaceReq::of::<f64>(9)).unwrap();
    let err = call::run_prepared(&provider, &prepared, &ins, &mut [Some(&mut out)], &mut ws).unwrap_err();
    assert_eq!(
        err.to_string(),
        "det: buffer for `inputs` differ from the ones the call was prepared for: needs 1, got 1"
    );
}

/// Runs `prepared` (det of a 2×2) on `provider`: the determinant or the error.
fn det_on<P: lindiff_core::Provider<Memory = lindiff_core::Host>>(
    provider: &P,
    prepared: &call::Prepared,
    desc: &TensorDesc,
) -> lindiff_core::Result<f64> {
    use lindiff_core::{HostBuffer, HostData};
    let a = [2.0, 1.0, 1.0, 3.0];
    let ins = [Input { desc, data: HostData::from_slice(&a) }];
    let mut out = [0.0f64; 1];
    let mut store = vec![std::mem::MaybeUninit::<u8>::uninit(); prepared.workspace().bytes() + 64];
    let mut ws = HostBuffer::from_uninit(&mut store);
    let mut buffer = HostBuffer::from_slice_mut(&mut out);
    call::run_prepared(provider, prepared, &ins, &mut [Some(&mut buffer)], &mut ws)?;
    Ok(out[0])
}

#[test]
fn a_plan_runs_only_on_the_provider_and_exec_it_was_prepared_on() {
    use lindiff_core::Exec;
    use lindiff_cpu::Cpu;
    let det = Op::Linalg(LinalgOp::Det(Det));
    let desc = TensorDesc::contiguous(f64s(&[2, 2])).unwrap();
    let prepared = call::prepare(&Cpu::new(), &det, &[&desc]).unwrap();
    assert_eq!(det_on(&Cpu::new(), &prepared, &desc).unwrap(), 5.0);
    // Another exec sizes the workspace for other lanes: refused.
    let err = det_on(&Cpu::with_exec(Exec::with_threads(2)), &prepared, &desc).unwrap_err();
    assert_eq!(
        err.to_string(),
        "det: not supported by provider cpu: the plan was prepared on another provider or exec (prepare it on this one)"
    );
    #[cfg(feature = "blas")]
    {
        let err = det_on(&lindiff_blas::Blas::new(), &prepared, &desc).unwrap_err();
        assert_eq!(
            err.to_string(),
            "det: not supported by provider blas: the plan was prepared on another provider or exec (prepare it on this one)"
        );
    }
}

/// LAPACK's sizes are 32-bit: a matrix past them runs on host-cpu's
/// kernels instead (a stride-0 view: the shape alone matters), for every op
/// lindiff-blas runs on LAPACK: lindiff-blas plans it as host-cpu does.
#[cfg(feature = "blas")]
#[test]
fn a_matrix_too_large_for_lapack_runs_on_host_cpu() {
    use lindiff_core::Provider;
    let huge =
        TensorDesc { meta: f64s(&[1 << 15, 1 << 15]), strides: [0, 0].into_iter().collect(), offset: 0 };
    let mut delegated = 0;
    for (op, metas) in every_op() {
        let Op::Linalg(op) = op else { continue };
        if !lindiff_blas::uses_lapack(&op, DType::F64) {
            continue;
        }
        // Input 0 huge, the others as listed: the provider is asked directly
        // (no `call` shape checks).
        let descs: Vec<TensorDesc> = metas
            .iter()
            .enumerate()
            .map(|(i, m)| if i == 0 { huge.clone() } else { TensorDesc::contiguous(m.clone()).unwrap() })
            .collect();
        let refs: Vec<&TensorDesc> = descs.iter().collect();
        let op = Op::Linalg(op);
        let blas = lindiff_blas::Blas::new().workspace(&op, &refs);
        assert_eq!(blas, lindiff_cpu::Cpu::new().workspace(&op, &refs), "{}", op.name());
        delegated += 1;
    }
    assert!(delegated >= 10, "only {delegated} LAPACK ops checked");
}
