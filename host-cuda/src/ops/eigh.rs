//! `eigh` / `eigh_vals` on cuSOLVER: `?syevjBatched`/`?heevjBatched` for a
//! batch of matrices up to 32×32, `cusolverDnXsyevd` (divide and conquer)
//! per matrix otherwise. Both read the lower triangle and return ascending
//! eigenvalues; the eigenvectors get the canonical phase on the device.

use super::common::Call;
use super::common::{
    check_info, first_nonfinite_tri, gather, host_scratch, int, jobz, map_view, matrix_dims, non_convergence,
    output_ptr, workspace_base, Part,
};
use crate::carve::Layout;
use crate::context::Gpu;
use crate::error::solver_status;
use crate::launch::launch;
use crate::nvrtc::{View, Walk};
use crate::scalar::CudaScalar;
use cudarc::cusolver::sys as solver;
use lindiff_core::{Error, LinalgOp, Result, TensorDesc, WorkspaceReq};

/// The largest n `?syevjBatched` takes.
pub const BATCHED_MAX: usize = 32;

struct Plan {
    n: usize,
    batch: usize,
    vectors: bool,
    batched: bool,
    a: usize,
    w: usize,
    info: usize,
    fail: usize,
    buffer: usize,
    buffer_bytes: usize,
    host_bytes: usize,
}

const LOWER: solver::cublasFillMode_t = solver::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;

fn plan<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, desc: &TensorDesc) -> Result<(Layout, Plan)> {
    let name = op.name();
    let (n, _, batch) = matrix_dims(desc);
    let vectors = matches!(op, LinalgOp::Eigh(_));
    let batched = n <= BATCHED_MAX;
    let mut l = Layout::new();
    let a = l.array::<T>(n * n * batch);
    let w = l.array::<T>(n * batch);
    let info = l.array::<i32>(batch.max(1));
    let fail = l.array::<i64>(1);
    let null = core::ptr::null();
    let (mut dev, mut host) = (0usize, 0usize);
    // SAFETY: size queries; matrices not read.
    unsafe {
        if batched {
            let mut lwork = 0i32;
            solver_status(T::syevj_batched_size(
                gpu.solver(),
                jobz(vectors),
                LOWER,
                int(name, n)?,
                null,
                null,
                &mut lwork,
                gpu.syevj_info(),
                int(name, batch.max(1))?,
            ))?;
            dev = lwork.max(0) as usize * size_of::<T>();
        } else {
            solver_status(solver::cusolverDnXsyevd_bufferSize(
                gpu.solver(),
                gpu.params(),
                jobz(vectors),
                LOWER,
                n as i64,
                T::SOLVER_TYPE,
                null,
                n.max(1) as i64,
                T::SOLVER_REAL_TYPE,
                null,
                T::SOLVER_TYPE,
                &mut dev,
                &mut host,
            ))?;
        }
    }
    let buffer = l.region(dev);
    Ok((
        l,
        Plan { n, batch, vectors, batched, a, w, info, fail, buffer, buffer_bytes: dev, host_bytes: host },
    ))
}

pub(crate) fn workspace<T: CudaScalar>(
    gpu: &Gpu,
    op: &LinalgOp,
    inputs: &[&TensorDesc],
) -> Result<WorkspaceReq> {
    plan::<T>(gpu, op, inputs[0])?.0.req()
}

pub(crate) fn run<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, call: Call<'_, '_, '_, '_, '_>) -> Result<()> {
    let Call { inputs, outputs, ws } = call;
    let name = op.name();
    let (_, p) = plan::<T>(gpu, op, inputs[0].desc)?;
    let base = workspace_base(ws);
    let at = |o: usize| base + o as u64;
    let (n, batch) = (p.n, p.batch);
    let ty = T::DTYPE;
    let real = ty.real();
    let ts = size_of::<T>();
    let (a, w, info) = (at(p.a), at(p.w), at(p.info));
    gather(gpu, a, &inputs[0], ty)?;
    // The routines read the lower triangle: check it, its diagonal made real.
    let lower = (Part::Lower, false, true);
    if let Some(b) = first_nonfinite_tri(gpu, T::SUFFIX, a, n, batch, lower, info, at(p.fail))? {
        return Err(Error::NonFinite { op: name, arg: "a", batch_index: b });
    }
    if n > 0 && batch > 0 {
        if p.batched {
            // SAFETY: a (n×n) and w (n) per item, contiguous; work as queried.
            unsafe {
                solver_status(T::syevj_batched(
                    gpu.solver(),
                    jobz(p.vectors),
                    LOWER,
                    int(name, n)?,
                    a as _,
                    w as _,
                    at(p.buffer) as _,
                    int(name, p.buffer_bytes / ts)?,
                    info as _,
                    gpu.syevj_info(),
                    int(name, batch)?,
                ))?;
            }
        } else {
            let mut host = host_scratch(gpu, p.host_bytes);
            for b in 0..batch {
                // SAFETY: item b of a and w; buffers as queried.
                unsafe {
                    solver_status(solver::cusolverDnXsyevd(
                        gpu.solver(),
                        gpu.params(),
                        jobz(p.vectors),
                        LOWER,
                        n as i64,
                        T::SOLVER_TYPE,
                        (a + (b * n * n * ts) as u64) as _,
                        n as i64,
                        T::SOLVER_REAL_TYPE,
                        (w + (b * n * real.size()) as u64) as _,
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
        }
        check_info(gpu, name, info, batch, at(p.fail), |b| non_convergence(name, b))?;
    }
    if let Some(dst) = output_ptr(outputs, 0) {
        let (walk, view) = (Walk::new(&[n, batch]), View::contiguous(&[n, batch]));
        map_view(gpu, 0, dst, w, real, real, walk, view, 0.0, [0; 4])?;
    }
    if p.vectors {
        if let Some(dst) = output_ptr(outputs, 1) {
            let kernel = format!("canonical_pairs_{}", T::SUFFIX);
            launch!(
                gpu,
                kernel,
                batch * n,
                [a, n as i64, n as i64, (n * n) as i64, 0u64, 0i64, 0i64, 0i64, 0i64, batch as i64]
            )?;
            let (walk, view) = (Walk::new(&[n, n, batch]), View::contiguous(&[n, n, batch]));
            map_view(gpu, 0, dst, a, ty, ty, walk, view, 0.0, [0; 4])?;
        }
    }
    Ok(())
}
