//! Dispatch: which device code runs each op ([`runs`], the table of the
//! crate docs), generic over the scalar through [`CudaScalar`].

mod common;
mod eig;
mod eigh;
mod gauge;
mod lu;
mod matmul;
mod prims;
mod qr;
mod recombine;
pub mod svd;
mod triangular;

use crate::context::Gpu;
use crate::error::unsupported;
use crate::memory::Device;
use crate::scalar::CudaScalar;
use crate::DeviceBuffer;
use lindiff_core::prim::PrimOp;
use lindiff_core::{DType, Input, LinalgOp, Op, Output, Result, TensorDesc, WorkspaceReq};
use num_complex::{Complex32, Complex64};

/// How the CUDA provider runs an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runs {
    /// A cuSOLVER or cuBLAS routine (plus NVRTC post-processing).
    Library(&'static str),
    /// An NVRTC kernel of `kernels/lindiff.cu`.
    Kernel(&'static str),
    /// `Error::Unsupported` naming op and provider.
    Unsupported(&'static str),
}

/// What runs `op` here (the table in the crate docs is this function).
pub fn runs(op: &Op) -> Runs {
    match op {
        Op::Prim(PrimOp::Matmul(_)) => Runs::Library("cublasGemmStridedBatchedEx"),
        Op::Prim(_) => Runs::Kernel("map/zip/reduce/fill/eye/pair_inv/pivot_phase/rank_mask"),
        Op::Linalg(l) => match l {
            LinalgOp::Svd(_) | LinalgOp::SvdVals(_) | LinalgOp::SvdFull(_) => Runs::Library(
                "gesvdjBatched (≤32×32) / Xgesvd (Auto above 32) / gesvdj (Jacobi) / Xgesvdp (Polar)",
            ),
            LinalgOp::Qr(_) => Runs::Library("Xgeqrf + orgqr/ungqr"),
            LinalgOp::Eigh(_) | LinalgOp::EighVals(_) => {
                Runs::Library("syevjBatched/heevjBatched (n ≤ 32) / Xsyevd")
            }
            LinalgOp::Cholesky(_) => Runs::Library("Xpotrf"),
            LinalgOp::Lu(_) | LinalgOp::LuFactor(_) => Runs::Library("Xgetrf"),
            LinalgOp::LuFactorSolve(_) => Runs::Library("Xgetrf + Xgetrs"),
            LinalgOp::LuSolvePrepared(_) => Runs::Library("cublas trsm ×2 + permute_rows kernel"),
            LinalgOp::TriangularSolve(_) => Runs::Library("cublas trsm"),
            LinalgOp::Det(_) | LinalgOp::Slogdet(_) => Runs::Library("Xgetrf + lu_det kernel"),
            LinalgOp::RankRevealingQr(_) => Runs::Unsupported("cuSOLVER has no column-pivoted QR (geqp3)"),
            LinalgOp::FullPivLu(_)
            | LinalgOp::FullPivLuFactor(_)
            | LinalgOp::FullPivLuSolve(_)
            | LinalgOp::FullPivLuSolvePrepared(_) => Runs::Unsupported("cuSOLVER has no full-pivot LU"),
            LinalgOp::Eig(_) | LinalgOp::EigVals(_) => Runs::Library("Xgeev + eig_finish kernel"),
            LinalgOp::HouseholderQrFactor(_)
            | LinalgOp::HouseholderQrAppend(_)
            | LinalgOp::HouseholderQrQ(_)
            | LinalgOp::HouseholderQrR(_)
            | LinalgOp::HouseholderQrApply(_) => Runs::Unsupported(
                "compact Householder ops are in faer's reflector gauge; not ported to the device",
            ),
            LinalgOp::SvdTruncated(_)
            | LinalgOp::LowRankApprox(_)
            | LinalgOp::Polar(_)
            | LinalgOp::Pinv(_)
            | LinalgOp::Lstsq(_) => {
                Runs::Library("thin SVD + kept_rank/spectral_scale kernels + cublas gemm")
            }
            LinalgOp::Adjugate(_) => Runs::Unsupported("the adjugate is not written for the device yet"),
            LinalgOp::SvdGaugeCheck(_) | LinalgOp::EighGaugeCheck(_) => {
                Runs::Kernel("svd_gauge / eigh_gauge (one thread per batch item)")
            }
            _ => Runs::Unsupported("op not known to the CUDA provider"),
        },
        _ => Runs::Unsupported("op not known to the CUDA provider"),
    }
}

/// The dtype an op computes in (its first input's, or the constant's).
fn dtype_of(op: &Op, inputs: &[&TensorDesc]) -> DType {
    match op {
        Op::Prim(PrimOp::Fill(f)) => f.meta.dtype,
        Op::Prim(PrimOp::Eye(e)) => e.dtype,
        Op::Prim(PrimOp::RankMask(r)) => r.dtype,
        _ => inputs.first().map_or(DType::F64, |d| d.meta.dtype),
    }
}

macro_rules! by_dtype {
    ($op:expr, $dtype:expr, $f:ident::<T>($($arg:expr),*)) => {
        match $dtype {
            DType::F32 => $f::<f32>($($arg),*),
            DType::F64 => $f::<f64>($($arg),*),
            DType::C32 => $f::<Complex32>($($arg),*),
            DType::C64 => $f::<Complex64>($($arg),*),
            _ => Err(unsupported($op.name(), "the CUDA provider computes in f32, f64, c32 and c64")),
        }
    };
}

fn workspace_typed<T: CudaScalar>(gpu: &Gpu, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    match op {
        Op::Prim(PrimOp::Matmul(_)) => matmul::workspace::<T>(inputs),
        Op::Prim(_) => Ok(WorkspaceReq::EMPTY),
        Op::Linalg(l) => match l {
            LinalgOp::Svd(_) | LinalgOp::SvdVals(_) | LinalgOp::SvdFull(_) => {
                svd::workspace::<T>(gpu, l, inputs)
            }
            LinalgOp::Qr(q) => qr::workspace::<T>(gpu, q, inputs),
            LinalgOp::Eigh(_) | LinalgOp::EighVals(_) => eigh::workspace::<T>(gpu, l, inputs),
            LinalgOp::Eig(_) | LinalgOp::EigVals(_) => eig::workspace::<T>(gpu, l, inputs),
            LinalgOp::SvdGaugeCheck(_) | LinalgOp::EighGaugeCheck(_) => gauge::workspace::<T>(l, inputs),
            LinalgOp::SvdTruncated(_)
            | LinalgOp::LowRankApprox(_)
            | LinalgOp::Polar(_)
            | LinalgOp::Pinv(_)
            | LinalgOp::Lstsq(_) => recombine::workspace::<T>(gpu, l, inputs),
            LinalgOp::TriangularSolve(_) => triangular::workspace::<T>(inputs),
            _ => lu::workspace::<T>(gpu, l, inputs),
        },
        _ => Err(unsupported(op.name(), "op not known to the CUDA provider")),
    }
}

/// Workspace bytes of `op` (after [`runs`] said it is supported).
pub(crate) fn workspace(gpu: &Gpu, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    if let Runs::Unsupported(why) = runs(op) {
        return Err(unsupported(op.name(), why));
    }
    let dtype = dtype_of(op, inputs);
    if matches!(op, Op::Prim(p) if !matches!(p, PrimOp::Matmul(_))) {
        return Ok(WorkspaceReq::EMPTY);
    }
    by_dtype!(op, dtype, workspace_typed::<T>(gpu, op, inputs))
}

fn run_typed<T: CudaScalar>(
    gpu: &Gpu,
    op: &Op,
    inputs: &[Input<'_, Device>],
    outputs: &mut [Option<Output<'_, '_, Device>>],
    ws: &mut DeviceBuffer<'_>,
) -> Result<()> {
    match op {
        Op::Prim(PrimOp::Matmul(m)) => matmul::run::<T>(gpu, m, inputs, outputs, ws),
        Op::Linalg(l) => match l {
            LinalgOp::Svd(_) | LinalgOp::SvdVals(_) | LinalgOp::SvdFull(_) => {
                svd::run::<T>(gpu, l, inputs, outputs, ws)
            }
            LinalgOp::Qr(q) => qr::run::<T>(gpu, q, inputs, outputs, ws),
            LinalgOp::Eigh(_) | LinalgOp::EighVals(_) => eigh::run::<T>(gpu, l, inputs, outputs, ws),
            LinalgOp::Eig(_) | LinalgOp::EigVals(_) => eig::run::<T>(gpu, l, inputs, outputs, ws),
            LinalgOp::SvdGaugeCheck(_) | LinalgOp::EighGaugeCheck(_) => {
                gauge::run::<T>(gpu, l, inputs, outputs, ws)
            }
            LinalgOp::SvdTruncated(_)
            | LinalgOp::LowRankApprox(_)
            | LinalgOp::Polar(_)
            | LinalgOp::Pinv(_)
            | LinalgOp::Lstsq(_) => recombine::run::<T>(gpu, l, inputs, outputs, ws),
            LinalgOp::TriangularSolve(t) => triangular::run::<T>(gpu, t, inputs, outputs, ws),
            _ => lu::run::<T>(gpu, l, inputs, outputs, ws),
        },
        _ => Err(unsupported(op.name(), "op not known to the CUDA provider")),
    }
}

/// Runs `op` (after the core's checks).
pub(crate) fn run(
    gpu: &Gpu,
    op: &Op,
    inputs: &[Input<'_, Device>],
    outputs: &mut [Option<Output<'_, '_, Device>>],
    ws: &mut DeviceBuffer<'_>,
) -> Result<()> {
    if let Runs::Unsupported(why) = runs(op) {
        return Err(unsupported(op.name(), why));
    }
    if let Op::Prim(p) = op {
        if !matches!(p, PrimOp::Matmul(_)) {
            return prims::run(gpu, p, inputs, outputs);
        }
    }
    let descs: heapless::Vec<&TensorDesc, { lindiff_core::op::MAX_INPUTS }> =
        inputs.iter().map(|i| i.desc).collect();
    by_dtype!(op, dtype_of(op, &descs), run_typed::<T>(gpu, op, inputs, outputs, ws))
}
