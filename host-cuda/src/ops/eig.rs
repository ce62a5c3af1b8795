//! `eig` / `eig_vals` on cuSOLVER's `cusolverDnXgeev` (CUDA 12.6+), one call
//! per matrix (cuSOLVER has no batched geev), then `eig_finish` on the
//! device puts the result in host-cpu's conventions (`kernels/eig.rs`
//! there): complex outputs for every input, eigenvalues sorted by real part
//! then imaginary part, each eigenvector scaled to unit 2-norm with its
//! first largest-magnitude entry real and positive.
//!
//! A real input runs Xgeev with real data types throughout: `W` holds the
//! n real parts then the n imaginary parts, and `VR` the LAPACK-packed real
//! eigenvectors, which `eig_finish` unpacks (a conjugate pair j, j+1 with
//! `im_j > 0`: `v_j = VR_j + i·VR_{j+1}`). Left eigenvectors are never
//! asked for (`jobvl = NOVECTOR`).
//!
//! Errors as host-cpu's: NaN/∞ in `a` → `NonFinite("a")` (checked on the
//! device before the call); `info ≠ 0` or a non-finite result →
//! `NonConvergence`, lowest batch index.

use super::common::Call;
use super::common::{
    check_info, empty_outputs_written, first_nonfinite, gather, host_scratch, jobz, matrix_dims,
    non_convergence, output_ptr, workspace_base,
};
use crate::carve::Layout;
use crate::context::Gpu;
use crate::error::solver_status;
use crate::launch::launch;
use crate::scalar::CudaScalar;
use cudarc::cusolver::sys as solver;
use lindiff_core::{Error, LinalgOp, Result, TensorDesc, WorkspaceReq};

/// Regions of one call (offsets from the workspace start).
struct Plan {
    n: usize,
    batch: usize,
    vectors: bool,
    a: usize,
    w: usize,
    vr: usize,
    info: usize,
    fail: usize,
    buffer: usize,
    buffer_bytes: usize,
    host_bytes: usize,
}

/// `W`'s data type: `T`'s own, so real for a real input (then W holds 2n
/// reals: the real parts, then the imaginary parts).
fn w_type<T: CudaScalar>() -> solver::cudaDataType {
    T::SOLVER_TYPE
}

fn plan<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, desc: &TensorDesc, vectors: bool) -> Result<(Layout, Plan)> {
    let (n, _, batch) = matrix_dims(desc);
    let vectors = vectors && matches!(op, LinalgOp::Eig(_));
    let mut l = Layout::new();
    let a = l.array::<T>(n * n * batch);
    // 2n real slots per item either way (n complex values, or n real
    // parts then n imaginary parts).
    let w = l.region(2 * n * batch * T::DTYPE.real().size());
    let vr = l.array::<T>(if vectors { n * n * batch } else { 0 });
    let info = l.array::<i32>(batch.max(1));
    let fail = l.array::<i64>(1);
    let (mut dev, mut host) = (0usize, 0usize);
    let null = core::ptr::null();
    if n > 0 {
        // SAFETY: a size query: valid handle and params, matrices not read.
        unsafe {
            solver_status(solver::cusolverDnXgeev_bufferSize(
                gpu.solver(),
                gpu.params(),
                jobz(false),
                jobz(vectors),
                n as i64,
                T::SOLVER_TYPE,
                null,
                n as i64,
                w_type::<T>(),
                null,
                T::SOLVER_TYPE,
                null,
                1,
                T::SOLVER_TYPE,
                null,
                n as i64,
                T::SOLVER_TYPE,
                &mut dev,
                &mut host,
            ))?;
        }
    }
    let buffer = l.region(dev);
    Ok((l, Plan { n, batch, vectors, a, w, vr, info, fail, buffer, buffer_bytes: dev, host_bytes: host }))
}

pub(crate) fn workspace<T: CudaScalar>(
    gpu: &Gpu,
    op: &LinalgOp,
    inputs: &[&TensorDesc],
) -> Result<WorkspaceReq> {
    plan::<T>(gpu, op, inputs[0], true)?.0.req()
}

pub(crate) fn run<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, call: Call<'_, '_, '_, '_, '_>) -> Result<()> {
    let Call { inputs, outputs, ws } = call;
    let name = op.name();
    let wants_v = outputs.get(1).is_some_and(|o| o.is_some());
    let (_, p) = plan::<T>(gpu, op, inputs[0].desc, wants_v)?;
    let (n, batch) = (p.n, p.batch);
    if n == 0 || batch == 0 {
        // Every output is empty ([0, batch] values, [0, 0, batch] vectors).
        empty_outputs_written(outputs);
        return Ok(());
    }
    let base = workspace_base(ws);
    let at = |o: usize| base + o as u64;
    let (a, w, vr, info) = (at(p.a), at(p.w), at(p.vr), at(p.info));
    let ts = size_of::<T>();
    gather(gpu, a, &inputs[0], T::DTYPE)?;
    if let Some(b) = first_nonfinite(gpu, T::SUFFIX, a, n * n, batch, info, at(p.fail))? {
        return Err(Error::NonFinite { op: name, arg: "a", batch_index: b });
    }
    let mut host = host_scratch(gpu, p.host_bytes);
    for b in 0..batch {
        // SAFETY: item b of a (n×n, lda n), w (2n real slots), vr (n×n,
        // ldvr n) when vectors are computed; VL not referenced (NOVECTOR,
        // ldvl 1); buffers as queried; info one i32 per item.
        unsafe {
            solver_status(solver::cusolverDnXgeev(
                gpu.solver(),
                gpu.params(),
                jobz(false),
                jobz(p.vectors),
                n as i64,
                T::SOLVER_TYPE,
                (a + (b * n * n * ts) as u64) as _,
                n as i64,
                w_type::<T>(),
                (w + (b * 2 * n * T::DTYPE.real().size()) as u64) as _,
                T::SOLVER_TYPE,
                core::ptr::null_mut(),
                1,
                T::SOLVER_TYPE,
                if p.vectors { (vr + (b * n * n * ts) as u64) as _ } else { core::ptr::null_mut() },
                n as i64,
                T::SOLVER_TYPE,
                at(p.buffer) as _,
                p.buffer_bytes,
                host.as_mut_ptr().cast(),
                p.host_bytes,
                (info + (b * 4) as u64) as _,
            ))?;
        }
    }
    host.release()?;
    check_info(gpu, name, info, batch, at(p.fail), |b| non_convergence(name, b))?;
    // A non-finite result is a failed iteration (host-cpu's rule).
    let real = T::REAL_SUFFIX;
    if let Some(b) = first_nonfinite(gpu, real, w, 2 * n, batch, info, at(p.fail))? {
        return Err(non_convergence(name, b));
    }
    if p.vectors {
        if let Some(b) = first_nonfinite(gpu, T::SUFFIX, vr, n * n, batch, info, at(p.fail))? {
            return Err(non_convergence(name, b));
        }
    }
    let wo = output_ptr(outputs, 0);
    let vo = if p.vectors { output_ptr(outputs, 1) } else { None };
    if wo.is_none() && vo.is_none() {
        return Ok(());
    }
    let kernel = format!("eig_finish_{}", T::SUFFIX);
    launch!(
        gpu,
        kernel,
        batch * n,
        [wo.unwrap_or(0), vo.unwrap_or(0), w, if p.vectors { vr } else { 0 }, n as i64, batch as i64]
    )
}
