//! `triangular_solve` on cuBLAS `?trsm` (one call per batch item): `x`
//! starts as a contiguous copy of `b` and is solved in place; `a` is
//! gathered into the workspace when not contiguous.

use super::common::Call;
use super::common::{
    first_nonfinite_tri, gather, input_ptr, int, matrix_dims, output_ptr, workspace_base, Part,
};
use crate::carve::Layout;
use crate::context::Gpu;
use crate::error::blas_status;
use crate::scalar::CudaScalar;
use cudarc::cublas::sys as blas;
use lindiff_core::op::{Diagonal, Side, Triangle, TriangularSolve};
use lindiff_core::{Error, MatOp, Result, TensorDesc, WorkspaceReq};

const NAME: &str = "triangular_solve";

/// The workspace: `a`'s contiguous copy when it is strided, then the
/// non-finite flags (one i32 per item) and one i64 of scratch.
fn layout<T: CudaScalar>(a: &TensorDesc) -> (Layout, Option<usize>, usize, usize) {
    let mut l = Layout::new();
    let at = (!a.is_contiguous()).then(|| l.array::<T>(a.meta.shape.numel().unwrap_or(0)));
    let flags = l.array::<i32>(matrix_dims(a).2.max(1));
    let fail = l.array::<i64>(1);
    (l, at, flags, fail)
}

pub(crate) fn workspace<T: CudaScalar>(inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    layout::<T>(inputs[0]).0.req()
}

pub(crate) fn run<T: CudaScalar>(
    gpu: &Gpu,
    op: &TriangularSolve,
    call: Call<'_, '_, '_, '_, '_>,
) -> Result<()> {
    let Call { inputs, outputs, ws } = call;
    let o = op.0;
    let (_, a_at, flags, fail) = layout::<T>(inputs[0].desc);
    let base = workspace_base(ws);
    let a = match a_at {
        Some(off) => {
            let dst = base + off as u64;
            gather(gpu, dst, &inputs[0], T::DTYPE)?;
            dst
        }
        None => input_ptr(&inputs[0]),
    };
    let Some(x) = output_ptr(outputs, 0) else { return Ok(()) };
    gather(gpu, x, &inputs[1], T::DTYPE)?;
    let (n, _, batch) = matrix_dims(inputs[0].desc);
    let (rows, cols, _) = matrix_dims(inputs[1].desc);
    if rows == 0 || cols == 0 || batch == 0 {
        return Ok(());
    }
    // The triangle trsm reads (without the diagonal when unit); read only,
    // `a` may be the caller's input.
    let part = match o.triangle {
        Triangle::Lower => Part::Lower,
        Triangle::Upper => Part::Upper,
    };
    let check = (part, o.diagonal == Diagonal::Unit, false);
    let (flags, fail) = (base + flags as u64, base + fail as u64);
    if let Some(b) = first_nonfinite_tri(gpu, T::SUFFIX, a, n, batch, check, flags, fail)? {
        return Err(Error::NonFinite { op: NAME, arg: "a", batch_index: b });
    }
    let side = match o.side {
        Side::Left => blas::cublasSideMode_t::CUBLAS_SIDE_LEFT,
        Side::Right => blas::cublasSideMode_t::CUBLAS_SIDE_RIGHT,
    };
    let uplo = match o.triangle {
        Triangle::Lower => blas::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
        Triangle::Upper => blas::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER,
    };
    let trans = match o.op {
        MatOp::Identity => blas::cublasOperation_t::CUBLAS_OP_N,
        MatOp::Transpose => blas::cublasOperation_t::CUBLAS_OP_T,
        MatOp::Adjoint => blas::cublasOperation_t::CUBLAS_OP_C,
    };
    let diag = match o.diagonal {
        Diagonal::Unit => blas::cublasDiagType_t::CUBLAS_DIAG_UNIT,
        Diagonal::NonUnit => blas::cublasDiagType_t::CUBLAS_DIAG_NON_UNIT,
    };
    let ts = size_of::<T>();
    for b in 0..batch {
        // SAFETY: item b of a (n×n, lda n) and x (rows×cols, ldb rows),
        // contiguous; alpha is a host 1 (see CudaScalar::trsm).
        unsafe {
            blas_status(T::trsm(
                gpu.blas(),
                side,
                uplo,
                trans,
                diag,
                int(NAME, rows)?,
                int(NAME, cols)?,
                (a + (b * n * n * ts) as u64) as _,
                int(NAME, n.max(1))?,
                (x + (b * rows * cols * ts) as u64) as _,
                int(NAME, rows.max(1))?,
            ))?;
        }
    }
    Ok(())
}
