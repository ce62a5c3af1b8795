//! Dispatch: which device code runs each op ([`runs`], the table of the
//! crate docs), generic over the scalar through [`CudaScalar`].

mod common;
mod eig;
mod eigh;
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
use common::Call;
use lindiff_core::op::{Qr, TriangularSolve};
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
        Op::Prim(PrimOp::ExtremeMask(_)) => {
            Runs::Unsupported("the extreme mask (the max/min derivative) is not written for the device")
        }
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
                "compact Householder ops are in faer's reflector convention; not ported to the device",
            ),
            LinalgOp::SvdTruncated(_)
            | LinalgOp::LowRankApprox(_)
            | LinalgOp::Polar(_)
            | LinalgOp::Pinv(_)
            | LinalgOp::Lstsq(_) => {
                Runs::Library("thin SVD + kept_rank/spectral_scale kernels + cublas gemm")
            }
            LinalgOp::Adjugate(_) => Runs::Unsupported("the adjugate is not written for the device yet"),
            LinalgOp::MatrixRank(_) => Runs::Unsupported("matrix_rank is not written for the device yet"),
            LinalgOp::FunmHermitian(_)
            | LinalgOp::FunmHermitianFactors(_)
            | LinalgOp::FunmHermitianFrechet(_)
            | LinalgOp::FunmHermitianSecond(_) => {
                Runs::Unsupported("the Hermitian matrix functions are not written for the device yet")
            }
            LinalgOp::Expm(_)
            | LinalgOp::ExpmFrechet(_)
            | LinalgOp::ExpmFactors(_)
            | LinalgOp::ExpmFrechetFactored(_) => Runs::Unsupported(
                "expm and its Fréchet derivative (cuBLAS products and a getrf solve) are not written for the \
                 device yet",
            ),
            LinalgOp::Logm(_) | LinalgOp::LogmFrechet(_) | LinalgOp::Sqrtm(_) | LinalgOp::SqrtmFrechet(_) => {
                Runs::Unsupported("logm and sqrtm need a complex Schur decomposition, which cuSOLVER does not have")
            }
        },
        Op::Internal(_) => Runs::Unsupported(
            "reverse mode's checks (gauge, values, tie bound, completion) are not written for the device: \
             gradients through svd, eigh and eig are refused here",
        ),
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

/// The module that runs a linear-algebra op here (`None`: [`runs`] says it
/// is unsupported), shared by the workspace query and the run.
enum Family<'a> {
    Svd,
    Qr(&'a Qr),
    Eigh,
    Eig,
    Recombine,
    Triangular(&'a TriangularSolve),
    Lu,
}

fn family(l: &LinalgOp) -> Option<Family<'_>> {
    Some(match l {
        LinalgOp::Svd(_) | LinalgOp::SvdVals(_) | LinalgOp::SvdFull(_) => Family::Svd,
        LinalgOp::Qr(q) => Family::Qr(q),
        LinalgOp::Eigh(_) | LinalgOp::EighVals(_) => Family::Eigh,
        LinalgOp::Eig(_) | LinalgOp::EigVals(_) => Family::Eig,
        LinalgOp::SvdTruncated(_)
        | LinalgOp::LowRankApprox(_)
        | LinalgOp::Polar(_)
        | LinalgOp::Pinv(_)
        | LinalgOp::Lstsq(_) => Family::Recombine,
        LinalgOp::TriangularSolve(t) => Family::Triangular(t),
        LinalgOp::Cholesky(_)
        | LinalgOp::Lu(_)
        | LinalgOp::LuFactor(_)
        | LinalgOp::LuFactorSolve(_)
        | LinalgOp::LuSolvePrepared(_)
        | LinalgOp::Det(_)
        | LinalgOp::Slogdet(_) => Family::Lu,
        LinalgOp::RankRevealingQr(_)
        | LinalgOp::HouseholderQrFactor(_)
        | LinalgOp::HouseholderQrAppend(_)
        | LinalgOp::HouseholderQrQ(_)
        | LinalgOp::HouseholderQrR(_)
        | LinalgOp::HouseholderQrApply(_)
        | LinalgOp::FullPivLu(_)
        | LinalgOp::FullPivLuFactor(_)
        | LinalgOp::FullPivLuSolve(_)
        | LinalgOp::FullPivLuSolvePrepared(_)
        | LinalgOp::Adjugate(_)
        | LinalgOp::FunmHermitian(_)
        | LinalgOp::FunmHermitianFactors(_)
        | LinalgOp::FunmHermitianFrechet(_)
        | LinalgOp::FunmHermitianSecond(_)
        | LinalgOp::Expm(_)
        | LinalgOp::ExpmFrechet(_)
        | LinalgOp::ExpmFactors(_)
        | LinalgOp::ExpmFrechetFactored(_)
        | LinalgOp::Logm(_)
        | LinalgOp::LogmFrechet(_)
        | LinalgOp::Sqrtm(_)
        | LinalgOp::SqrtmFrechet(_)
        | LinalgOp::MatrixRank(_) => return None,
    })
}

fn workspace_typed<T: CudaScalar>(gpu: &Gpu, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    match op {
        Op::Prim(PrimOp::Matmul(_)) => matmul::workspace::<T>(inputs),
        Op::Prim(_) => Ok(WorkspaceReq::EMPTY),
        Op::Internal(_) => Err(unsupported(op.name(), not_here(op))),
        Op::Linalg(l) => match family(l) {
            Some(Family::Svd) => svd::workspace::<T>(gpu, l, inputs),
            Some(Family::Qr(q)) => qr::workspace::<T>(gpu, q, inputs),
            Some(Family::Eigh) => eigh::workspace::<T>(gpu, l, inputs),
            Some(Family::Eig) => eig::workspace::<T>(gpu, l, inputs),
            Some(Family::Recombine) => recombine::workspace::<T>(gpu, l, inputs),
            Some(Family::Triangular(_)) => triangular::workspace::<T>(inputs),
            Some(Family::Lu) => lu::workspace::<T>(gpu, l, inputs),
            None => Err(unsupported(op.name(), not_here(op))),
        },
    }
}

/// The reason [`runs`] gives for an op that does not run here.
fn not_here(op: &Op) -> &'static str {
    match runs(op) {
        Runs::Unsupported(why) => why,
        Runs::Library(_) | Runs::Kernel(_) => "op not known to the CUDA provider",
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

fn run_typed<T: CudaScalar>(gpu: &Gpu, op: &Op, call: Call<'_, '_, '_, '_, '_>) -> Result<()> {
    match op {
        Op::Prim(PrimOp::Matmul(m)) => matmul::run::<T>(gpu, m, call),
        Op::Prim(p) => prims::run(gpu, p, call.inputs, call.outputs),
        Op::Internal(_) => Err(unsupported(op.name(), not_here(op))),
        Op::Linalg(l) => match family(l) {
            Some(Family::Svd) => svd::run::<T>(gpu, l, call),
            Some(Family::Qr(q)) => qr::run::<T>(gpu, q, call),
            Some(Family::Eigh) => eigh::run::<T>(gpu, l, call),
            Some(Family::Eig) => eig::run::<T>(gpu, l, call),
            Some(Family::Recombine) => recombine::run::<T>(gpu, l, call),
            Some(Family::Triangular(t)) => triangular::run::<T>(gpu, t, call),
            Some(Family::Lu) => lu::run::<T>(gpu, l, call),
            None => Err(unsupported(op.name(), not_here(op))),
        },
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
    by_dtype!(op, dtype_of(op, &descs), run_typed::<T>(gpu, op, Call { inputs, outputs, ws }))
}
