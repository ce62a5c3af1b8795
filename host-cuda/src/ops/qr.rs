//! `qr` on cuSOLVER: `cusolverDnXgeqrf` per matrix, R copied out of the
//! upper triangle, Q formed by `?orgqr`/`?ungqr` from the reflectors, then
//! `qr_sign` makes diag(R) real and ≥ 0 on the device (Q compensates).

use super::common::Call;
use super::common::{
    check_info, first_nonfinite, gather, host_scratch, int, map_view, matrix_dims, output_ptr, workspace_base,
};
use crate::carve::Layout;
use crate::context::Gpu;
use crate::error::solver_status;
use crate::launch::launch;
use crate::scalar::CudaScalar;
use cudarc::cusolver::sys as solver;
use lindiff_core::op::{Qr, QrMode};
use lindiff_core::{Error, Result, TensorDesc, WorkspaceReq};

const NAME: &str = "qr";

struct Plan {
    m: usize,
    n: usize,
    batch: usize,
    k: usize,
    qcols: usize,
    rrows: usize,
    a: usize,
    tau: usize,
    info: usize,
    fail: usize,
    geqrf: usize,
    geqrf_bytes: usize,
    host_bytes: usize,
    orgqr: usize,
    orgqr_bytes: usize,
}

fn plan<T: CudaScalar>(gpu: &Gpu, op: &Qr, desc: &TensorDesc) -> Result<(Layout, Plan)> {
    let (m, n, batch) = matrix_dims(desc);
    let k = m.min(n);
    let (qcols, rrows) = match op.0.mode {
        QrMode::Reduced => (k, k),
        QrMode::Complete => (m, m),
    };
    let mut l = Layout::new();
    let a = l.array::<T>(m * n * batch);
    let tau = l.array::<T>(k * batch);
    let info = l.array::<i32>(batch.max(1));
    let fail = l.array::<i64>(1);
    let (mut geqrf_bytes, mut host_bytes) = (0usize, 0usize);
    let mut lwork: i32 = 0;
    let null = core::ptr::null();
    // SAFETY: size queries; matrices not read.
    unsafe {
        solver_status(solver::cusolverDnXgeqrf_bufferSize(
            gpu.solver(),
            gpu.params(),
            m as i64,
            n as i64,
            T::SOLVER_TYPE,
            null,
            m.max(1) as i64,
            T::SOLVER_TYPE,
            null,
            T::SOLVER_TYPE,
            &mut geqrf_bytes,
            &mut host_bytes,
        ))?;
        if qcols > 0 {
            solver_status(T::orgqr_size(
                gpu.solver(),
                int(NAME, m)?,
                int(NAME, qcols)?,
                int(NAME, k)?,
                null,
                null,
                &mut lwork,
            ))?;
        }
    }
    let geqrf = l.region(geqrf_bytes);
    let orgqr_bytes = lwork.max(0) as usize * size_of::<T>();
    let orgqr = l.region(orgqr_bytes);
    Ok((
        l,
        Plan {
            m,
            n,
            batch,
            k,
            qcols,
            rrows,
            a,
            tau,
            info,
            fail,
            geqrf,
            geqrf_bytes,
            host_bytes,
            orgqr,
            orgqr_bytes,
        },
    ))
}

pub(crate) fn workspace<T: CudaScalar>(gpu: &Gpu, op: &Qr, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    plan::<T>(gpu, op, inputs[0])?.0.req()
}

pub(crate) fn run<T: CudaScalar>(gpu: &Gpu, op: &Qr, call: Call<'_, '_, '_, '_, '_>) -> Result<()> {
    let Call { inputs, outputs, ws } = call;
    let (_, p) = plan::<T>(gpu, op, inputs[0].desc)?;
    let base = workspace_base(ws);
    let at = |o: usize| base + o as u64;
    let (m, n, k, batch) = (p.m, p.n, p.k, p.batch);
    let ty = T::DTYPE;
    let ts = size_of::<T>();
    let (a, tau) = (at(p.a), at(p.tau));
    gather(gpu, a, &inputs[0], ty)?;
    if let Some(b) = first_nonfinite(gpu, T::SUFFIX, a, m * n, batch, at(p.info), at(p.fail))? {
        return Err(Error::NonFinite { op: "qr", arg: "a", batch_index: b });
    }
    super::common::zero(gpu, at(p.info), 4 * batch)?;
    let mut host = host_scratch(gpu, p.host_bytes);
    if k > 0 {
        for b in 0..batch {
            // SAFETY: item b of a (m×n) and tau (k), contiguous; buffers as queried.
            unsafe {
                solver_status(solver::cusolverDnXgeqrf(
                    gpu.solver(),
                    gpu.params(),
                    m as i64,
                    n as i64,
                    T::SOLVER_TYPE,
                    (a + (b * m * n * ts) as u64) as _,
                    m.max(1) as i64,
                    T::SOLVER_TYPE,
                    (tau + (b * k * ts) as u64) as _,
                    T::SOLVER_TYPE,
                    at(p.geqrf) as _,
                    p.geqrf_bytes,
                    host.as_mut_ptr().cast(),
                    p.host_bytes,
                    (at(p.info) + (b * 4) as u64) as _,
                ))?;
            }
        }
    }
    host.release()?;
    let q = output_ptr(outputs, 0);
    let r = output_ptr(outputs, 1);
    if let Some(r) = r {
        // R: rows 0..rrows of the upper triangle (rows ≥ m are zero).
        let (walk, view) = super::common::block(p.rrows, n, batch, m, m * n, false);
        map_view(gpu, 16, r, a, ty, ty, walk, view, 1.0, [0; 4])?;
    }
    if let Some(q) = q {
        // Q: the reflector columns copied into q, then formed in place.
        let cols = p.qcols.min(n);
        let (walk, view) = super::common::block(m, cols, batch, m, m * n, false);
        if p.qcols > n {
            super::common::zero(gpu, q, m * p.qcols * batch * ts)?;
            // Copy item by item into the wider layout (leading dim m, item m·qcols).
            let (walk, view) = super::common::block(m, cols, 1, m, m * n, false);
            for b in 0..batch {
                map_view(
                    gpu,
                    0,
                    q + (b * m * p.qcols * ts) as u64,
                    a + (b * m * n * ts) as u64,
                    ty,
                    ty,
                    walk,
                    view,
                    0.0,
                    [0; 4],
                )?;
            }
        } else {
            map_view(gpu, 0, q, a, ty, ty, walk, view, 0.0, [0; 4])?;
        }
        let lwork = int(NAME, p.orgqr_bytes / ts)?;
        for b in 0..batch {
            if p.qcols == 0 {
                break;
            }
            // SAFETY: item b of q (m×qcols, lda m) holding the reflectors,
            // tau (k); work as queried.
            unsafe {
                solver_status(T::orgqr(
                    gpu.solver(),
                    int(NAME, m)?,
                    int(NAME, p.qcols)?,
                    int(NAME, k)?,
                    (q + (b * m * p.qcols * ts) as u64) as _,
                    (tau + (b * k * ts) as u64) as _,
                    at(p.orgqr) as _,
                    lwork,
                    (at(p.info) + (b * 4) as u64) as _,
                ))?;
            }
        }
    }
    // geqrf/orgqr report only invalid arguments (info < 0) through info.
    check_info(gpu, "qr", at(p.info), batch, at(p.fail), |_| Error::InvalidOption {
        op: "qr",
        option: "cusolver",
        why: "answered info > 0, which geqrf/orgqr never do",
    })?;
    // diag(R) real ≥ 0; Q's columns compensate. Without R, the sign still
    // follows R's diagonal, read from the factored matrix.
    let kernel = format!("qr_sign_{}", T::SUFFIX);
    let (rptr, ldr, item) = match r {
        Some(r) => (r, p.rrows, p.rrows * n),
        None => (a, m, m * n),
    };
    launch!(
        gpu,
        kernel,
        batch * k,
        [
            q.unwrap_or(0),
            m as i64,
            p.qcols as i64,
            (m * p.qcols) as i64,
            rptr,
            ldr as i64,
            n as i64,
            item as i64,
            k as i64,
            batch as i64
        ]
    )
}
