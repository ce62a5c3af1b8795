//! `matmul` on cuBLAS: one `cublasGemmStridedBatchedEx` over the whole
//! batch (data type and compute type from [`CudaScalar`]), with cuBLAS's
//! N/T/C flags for the transpose/adjoint options. A non-contiguous operand
//! is first gathered into the workspace.

use super::common::Call;
use super::common::{gather, input_ptr, int, matrix_dims, output_ptr, workspace_base, zero};
use crate::carve::Layout;
use crate::context::Gpu;
use crate::error::blas_status;
use crate::scalar::CudaScalar;
use cudarc::cublas::sys as blas;
use lindiff_core::prim::Matmul;
use lindiff_core::{MatOp, Result, TensorDesc};

const NAME: &str = "matmul";

/// Scratch: a contiguous copy of each non-contiguous operand.
fn layout<T: CudaScalar>(inputs: &[&TensorDesc]) -> (Layout, [Option<usize>; 2]) {
    let mut l = Layout::new();
    let mut at = [None, None];
    for (slot, d) in at.iter_mut().zip(inputs) {
        if !d.is_contiguous() {
            *slot = Some(l.array::<T>(d.meta.shape.numel().unwrap_or(0)));
        }
    }
    (l, at)
}

pub(crate) fn workspace<T: CudaScalar>(inputs: &[&TensorDesc]) -> Result<lindiff_core::WorkspaceReq> {
    layout::<T>(inputs).0.req()
}

fn flag(op: MatOp) -> blas::cublasOperation_t {
    match op {
        MatOp::Identity => blas::cublasOperation_t::CUBLAS_OP_N,
        MatOp::Transpose => blas::cublasOperation_t::CUBLAS_OP_T,
        MatOp::Adjoint => blas::cublasOperation_t::CUBLAS_OP_C,
    }
}

pub(crate) fn run<T: CudaScalar>(gpu: &Gpu, op: &Matmul, call: Call<'_, '_, '_, '_, '_>) -> Result<()> {
    let Call { inputs, outputs, ws } = call;
    let descs = [inputs[0].desc, inputs[1].desc];
    let (_, at) = layout::<T>(&descs);
    let base = workspace_base(ws);
    let mut ptrs = [0u64; 2];
    for i in 0..2 {
        ptrs[i] = match at[i] {
            Some(offset) => {
                gather(gpu, base + offset as u64, &inputs[i], T::DTYPE)?;
                base + offset as u64
            }
            None => input_ptr(&inputs[i]),
        };
    }
    let (ra, ca, batch) = matrix_dims(descs[0]);
    let (rb, cb, _) = matrix_dims(descs[1]);
    let (m, k) = if op.a == MatOp::Identity { (ra, ca) } else { (ca, ra) };
    let n = if op.b == MatOp::Identity { cb } else { rb };
    let Some(c) = output_ptr(outputs, 0) else { return Ok(()) };
    if m == 0 || n == 0 || batch == 0 {
        return Ok(());
    }
    if k == 0 {
        return zero(gpu, c, m * n * batch * core::mem::size_of::<T>());
    }
    let (one, zero_v) = (T::ONE, T::ZERO);
    // SAFETY: operands are contiguous column-major batches of the shapes
    // core checked (lda = rows, item stride = rows·cols); `c` holds m·n·batch
    // elements; alpha/beta are host values of T (default pointer mode).
    unsafe {
        blas_status(blas::cublasGemmStridedBatchedEx(
            gpu.blas(),
            flag(op.a),
            flag(op.b),
            int(NAME, m)?,
            int(NAME, n)?,
            int(NAME, k)?,
            (&one as *const T).cast(),
            ptrs[0] as *const _,
            T::BLAS_TYPE,
            int(NAME, ra.max(1))?,
            (ra * ca) as i64,
            ptrs[1] as *const _,
            T::BLAS_TYPE,
            int(NAME, rb.max(1))?,
            (rb * cb) as i64,
            (&zero_v as *const T).cast(),
            c as *mut _,
            T::BLAS_TYPE,
            int(NAME, m)?,
            (m * n) as i64,
            int(NAME, batch)?,
            T::BLAS_COMPUTE,
            blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        ))
    }
}

/// One strided-batched product `c = op(a) · op(b)` over contiguous
/// column-major items (`c` is m×n with leading dim m), as the composite
/// ops use it. `k == 0` writes zeros.
pub(crate) struct Gemm {
    /// How `a` enters.
    pub ta: MatOp,
    /// How `b` enters.
    pub tb: MatOp,
    /// Rows of `c`.
    pub m: usize,
    /// Columns of `c`.
    pub n: usize,
    /// The inner dimension.
    pub k: usize,
    /// `a`'s address, leading dim and item stride (elements).
    pub a: (u64, usize, usize),
    /// `b`'s address, leading dim and item stride (elements).
    pub b: (u64, usize, usize),
    /// `c`'s address.
    pub c: u64,
    /// Batch items.
    pub batch: usize,
}

/// Runs a [`Gemm`] on cuBLAS.
pub(crate) fn gemm<T: CudaScalar>(gpu: &Gpu, op: &'static str, g: &Gemm) -> Result<()> {
    let (m, n, k) = (g.m, g.n, g.k);
    if m == 0 || n == 0 || g.batch == 0 {
        return Ok(());
    }
    if k == 0 {
        return zero(gpu, g.c, m * n * g.batch * core::mem::size_of::<T>());
    }
    let (one, zero_v) = (T::ONE, T::ZERO);
    // SAFETY: the caller's regions hold `batch` items of the stated shapes,
    // leading dims and strides; alpha/beta are host values of T.
    unsafe {
        blas_status(blas::cublasGemmStridedBatchedEx(
            gpu.blas(),
            flag(g.ta),
            flag(g.tb),
            int(op, m)?,
            int(op, n)?,
            int(op, k)?,
            (&one as *const T).cast(),
            g.a.0 as *const _,
            T::BLAS_TYPE,
            int(op, g.a.1.max(1))?,
            g.a.2 as i64,
            g.b.0 as *const _,
            T::BLAS_TYPE,
            int(op, g.b.1.max(1))?,
            g.b.2 as i64,
            (&zero_v as *const T).cast(),
            g.c as *mut _,
            T::BLAS_TYPE,
            int(op, m)?,
            (m * n) as i64,
            int(op, g.batch)?,
            T::BLAS_COMPUTE,
            blas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        ))
    }
}
