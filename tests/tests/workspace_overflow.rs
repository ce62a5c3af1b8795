//! No panic from a workspace query, whatever the shape: `Provider::workspace`
//! (called directly, as a provider's user may) and `call::workspace` for
//! every op and primitive ([`ad_support_ops`]) and reverse mode's internal checks, every float dtype, on shapes
//! whose sizes overflow somewhere — n×n for n = 2^40, 2^31, 2^28, 1×2^61
//! and 2^59×2 (and their transposes), with column-major strides (wrapping)
//! and with zero strides (a broadcast view, whose span passes `call`'s
//! checks while the outputs and the kernels' scratch are huge) — gives
//! `Ok` or `Err(Overflow)` (a shape error, where `call`'s checks reject the
//! shape for the op first). Run in debug builds (overflow checks on, faer's
//! included) by `cargo test` and in release builds by
//! `cargo test --release --test workspace_overflow`.

use lindiff_core::ad::ad_support_ops;
use lindiff_core::op::internal::{
    Chain, CompletionCheck, EigGaugeCheck, EighGaugeCheck, InternalOp, Link, LinkOp, Operand, SvdGaugeCheck,
    TangentTieCheck, TieCheck, Values, ValuesCheck, BOUND_LEN,
};
use lindiff_core::op::LinalgOp;
use lindiff_core::prim::{Matmul, Pad, PrimOp, Reshape, Slice, Spread};
use lindiff_core::{call, DType, Error, MatOp, Op, Shape, TensorDesc, TensorMeta};
use lindiff_tests::TestProvider;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The base shapes (rows, cols) of the report, and their transposes.
fn shapes() -> Vec<(usize, usize)> {
    let mut all = Vec::new();
    for (m, n) in [(1 << 40, 1 << 40), (1 << 31, 1 << 31), (1 << 28, 1 << 28), (1, 1 << 61), (1 << 59, 2)] {
        all.push((m, n));
        if m != n {
            all.push((n, m));
        }
    }
    all
}

/// A layout of `dims` (`zero`: every stride 0; otherwise column-major
/// strides, wrapping where they overflow).
fn desc(dtype: DType, dims: &[usize], zero: bool) -> TensorDesc {
    let meta = TensorMeta::new(dtype, Shape::new(dims).unwrap());
    let mut strides = heapless::Vec::new();
    let mut stride = 1usize;
    for &d in dims {
        let _ = strides.push(if zero { 0 } else { stride });
        stride = stride.wrapping_mul(d.max(1));
    }
    TensorDesc { meta, strides, offset: 0 }
}

/// Input dims for `op` built on an m×n matrix (the integer inputs i64), or
/// `None` for an op with no inputs (the constants).
fn inputs(op: &Op, m: usize, n: usize) -> Option<Vec<(Vec<usize>, bool)>> {
    let k = m.min(n);
    let mat = |r: usize, c: usize| (vec![r, c], false);
    let vec_ = |len: usize| (vec![len], false);
    let int = |len: usize| (vec![len], true);
    Some(match op {
        Op::Linalg(l) => match l {
            LinalgOp::HouseholderQrAppend(_) => vec![mat(m, n), vec_(k), mat(m, 1)],
            LinalgOp::HouseholderQrQ(_) => vec![mat(m, n), vec_(k)],
            LinalgOp::HouseholderQrApply(_) => vec![mat(m, n), vec_(k), mat(m, 1)],
            LinalgOp::LuFactorSolve(_) | LinalgOp::FullPivLuSolve(_) | LinalgOp::Lstsq(_) => {
                vec![mat(m, n), mat(m, 1)]
            }
            LinalgOp::TriangularSolve(_) => vec![mat(m, n), mat(m, 1)],
            LinalgOp::ExpmFrechet(_) | LinalgOp::LogmFrechet(_) | LinalgOp::SqrtmFrechet(_) => {
                vec![mat(m, n), mat(m, n)]
            }
            LinalgOp::FunmHermitianFrechet(_) => vec![mat(m, n), mat(m, n), vec_(m), mat(m, n), mat(m, n)],
            LinalgOp::FunmHermitianSecond(_) => vec![mat(m, n), vec_(m), mat(m, n), mat(m, n), mat(m, n)],
            LinalgOp::ExpmFrechetFactored(_) => {
                vec![mat(m, n), mat(m, n.saturating_mul(8)), int(m.saturating_add(2)), mat(m, n)]
            }
            LinalgOp::LuSolvePrepared(_) => vec![mat(m, n), int(m), mat(m, 1)],
            LinalgOp::FullPivLuSolvePrepared(_) => vec![mat(m, n), int(m), int(n), mat(m, 1)],
            _ => vec![mat(m, n)],
        },
        Op::Prim(p) => match p {
            PrimOp::Matmul(mm) if mm.b != MatOp::Identity => vec![mat(m, n), mat(m, n)],
            PrimOp::Matmul(_) => vec![mat(m, n), mat(n, m)],
            PrimOp::Binary(_) => vec![mat(m, n), mat(m, n)],
            PrimOp::DiagEmbed(_) | PrimOp::PairInv(_) => vec![vec_(m)],
            PrimOp::ScaleCols(_) => vec![mat(m, n), vec_(n)],
            PrimOp::ScaleRows(_) => vec![mat(m, n), vec_(m)],
            PrimOp::Spread(_) => vec![vec_(m)],
            PrimOp::RankMask(_) => vec![(vec![], true)],
            PrimOp::Fill(_) | PrimOp::Eye(_) => return None,
            _ => vec![mat(m, n)],
        },
        Op::Internal(i) => match i {
            InternalOp::SvdGaugeCheck(_) => {
                vec![mat(m, k), vec_(k), mat(k, n), mat(m, k), vec_(k), mat(k, n)]
            }
            InternalOp::EighGaugeCheck(_) | InternalOp::EigGaugeCheck(_) => {
                vec![mat(n, n), vec_(n), vec_(n), mat(n, n)]
            }
            InternalOp::TieCheck(_) => vec![mat(m, n), vec_(BOUND_LEN)],
            InternalOp::ValuesCheck(_) => vec![vec_(m), vec_(m)],
            InternalOp::TangentTieCheck(_) => vec![vec_(m), mat(m, m)],
            InternalOp::CompletionCheck(_) => vec![mat(m, n)],
            InternalOp::Chain(_) => vec![mat(m, n), mat(m, n)],
        },
    })
}

/// x0 + x1 as a compiled plan's chain of one link.
fn sum_chain() -> Chain {
    let mut chain = Chain::new(2);
    chain.push(Link { op: LinkOp::Add, a: Operand::Input(0), b: Operand::Input(1) }).unwrap();
    chain
}

/// Reverse mode's internal checks and a compiled plan's chain, which
/// providers also run, and the products whose right-hand side is copied.
fn internal_ops() -> impl Iterator<Item = Op> {
    [
        Op::from(SvdGaugeCheck::default()),
        Op::from(EighGaugeCheck::default()),
        Op::from(EigGaugeCheck(Values::Read)),
        Op::from(TieCheck::default()),
        Op::from(CompletionCheck::default()),
        Op::from(ValuesCheck::default()),
        Op::from(TangentTieCheck::default()),
        Op::from(sum_chain()),
        // A product reading bᵀ row by row copies it into the workspace
        // first (k·n elements, which overflow here).
        Op::Prim(PrimOp::Matmul(Matmul::new(MatOp::Identity, MatOp::Transpose))),
        Op::Prim(PrimOp::Matmul(Matmul::new(MatOp::Adjoint, MatOp::Adjoint))),
    ]
    .into_iter()
}

/// The op itself, with options that make it use the shapes (a reshape to
/// one long vector, a slice and a pad of the whole matrix, a spread to an
/// m×n matrix).
fn shaped(op: Op, m: usize, n: usize) -> Op {
    match op {
        Op::Prim(PrimOp::Reshape(_)) => Op::Prim(PrimOp::Reshape(Reshape {
            dims: heapless::Vec::from_slice(&[m.wrapping_mul(n)]).unwrap(),
        })),
        Op::Prim(PrimOp::Slice(_)) => Op::Prim(PrimOp::Slice(Slice { start: [0, 0], size: [m, n] })),
        Op::Prim(PrimOp::Pad(_)) => Op::Prim(PrimOp::Pad(Pad { start: [0, 0], size: [m, n] })),
        Op::Prim(PrimOp::Spread(_)) => {
            Op::Prim(PrimOp::Spread(Spread { core: heapless::Vec::from_slice(&[n]).unwrap() }))
        }
        other => other,
    }
}

/// Shape errors `call`'s checks give for an op that cannot take the shape.
fn is_shape_error(e: &Error) -> bool {
    matches!(
        e,
        Error::NotSquare { .. }
            | Error::DimMismatch { .. }
            | Error::Rank { .. }
            | Error::DType { .. }
            | Error::Empty { .. }
            | Error::OutOfBounds { .. }
            | Error::ShapeMismatch { .. }
            | Error::InvalidOption { .. }
            | Error::Unsupported { .. }
            | Error::TooManyDims { .. }
    )
}

fn never_panics<P: TestProvider>(provider: &P) {
    let mut checked = 0;
    let mut failures = Vec::new();
    for dtype in [DType::F32, DType::F64, DType::C32, DType::C64] {
        for op in ad_support_ops().chain(internal_ops()) {
            for (m, n) in shapes() {
                let Some(args) = inputs(&op, m, n) else { continue };
                let op = shaped(op.clone(), m, n);
                for zero in [false, true] {
                    let descs: Vec<TensorDesc> = args
                        .iter()
                        .map(|(dims, int)| desc(if *int { DType::I64 } else { dtype }, dims, zero))
                        .collect();
                    let refs: Vec<&TensorDesc> = descs.iter().collect();
                    let what = format!("{} {dtype} {m}×{n} (zero strides: {zero})", op.name());
                    let direct = catch_unwind(AssertUnwindSafe(|| provider.workspace(&op, &refs)));
                    let checked_call =
                        catch_unwind(AssertUnwindSafe(|| call::workspace(provider, &op, &refs)));
                    checked += 1;
                    let (Ok(direct), Ok(via_call)) = (direct, checked_call) else {
                        failures.push(format!("{what}: panicked"));
                        continue;
                    };
                    // Where `call` accepts the shapes, the provider's own
                    // answer must be Ok or Overflow; so must `call`'s.
                    let accepted = call::infer(&op, &refs).is_ok();
                    if accepted && matches!(&direct, Err(e) if !matches!(e, Error::Overflow { .. })) {
                        failures.push(format!("{what}: Provider::workspace gave {:?}", direct.unwrap_err()));
                    }
                    match via_call {
                        Ok(_) | Err(Error::Overflow { .. }) => {}
                        Err(e) if !accepted && is_shape_error(&e) => {}
                        Err(e) => failures.push(format!("{what}: call::workspace gave {e:?}")),
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {checked} queries:\n{}", failures.len(), failures.join("\n"));
    println!("{checked} workspace queries: no panic, Ok or Overflow");
}

// The host providers only (not `providers!`, whose `cuda` arm would run
// this on host-cuda, whose kernels neither scale nor test singularity:
// out of scope without a GPU to run them).
mod never_panics {
    #[test]
    fn cpu() {
        super::never_panics(&lindiff_tests::Cpu::default())
    }
    #[cfg(feature = "blas")]
    #[test]
    fn blas() {
        super::never_panics(&lindiff_tests::Blas::default())
    }
}
