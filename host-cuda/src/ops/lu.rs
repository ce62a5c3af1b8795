//! Cholesky, the partial-pivot LU family and det/slogdet on cuSOLVER's
//! 64-bit API (`cusolverDnXpotrf`, `Xgetrf`, `Xgetrs`) plus cuBLAS trsm for
//! the prepared solve. LAPACK's ipiv swaps become lindiff's `perm` on the
//! device (`ipiv_to_perm`); `info` becomes the op's typed error for the
//! lowest failing batch item.

use super::common::Call;
use super::common::{
    check_info, first_nonfinite, first_nonfinite_tri, gather, host_scratch, input_ptr, matrix_dims,
    output_ptr, reject_negative, workspace_base, Part,
};
use crate::carve::Layout;
use crate::context::Gpu;
use crate::error::{blas_status, solver_status};
use crate::launch::launch;
use crate::nvrtc::{View, Walk};
use crate::scalar::CudaScalar;
use core::ffi::c_void;
use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as solver;
use lindiff_core::op::LuSolvePrepared;
use lindiff_core::{Error, LinalgOp, MatOp, Result, TensorDesc, WorkspaceReq};

/// Device and host bytes of `Xgetrf` for an m×n matrix.
fn getrf_size<T: CudaScalar>(gpu: &Gpu, m: usize, n: usize) -> Result<(usize, usize)> {
    let (mut dev, mut host) = (0usize, 0usize);
    // SAFETY: a size query: valid handle/params, null matrix (not read).
    unsafe {
        solver_status(solver::cusolverDnXgetrf_bufferSize(
            gpu.solver(),
            gpu.params(),
            m as i64,
            n as i64,
            T::SOLVER_TYPE,
            core::ptr::null(),
            m.max(1) as i64,
            T::SOLVER_TYPE,
            &mut dev,
            &mut host,
        ))?;
    }
    Ok((dev, host))
}

/// Device and host bytes of `Xpotrf` (lower) for an n×n matrix.
fn potrf_size<T: CudaScalar>(gpu: &Gpu, n: usize) -> Result<(usize, usize)> {
    let (mut dev, mut host) = (0usize, 0usize);
    // SAFETY: a size query as above.
    unsafe {
        solver_status(solver::cusolverDnXpotrf_bufferSize(
            gpu.solver(),
            gpu.params(),
            solver::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
            n as i64,
            T::SOLVER_TYPE,
            core::ptr::null(),
            n.max(1) as i64,
            T::SOLVER_TYPE,
            &mut dev,
            &mut host,
        ))?;
    }
    Ok((dev, host))
}

/// The regions of one call.
#[derive(Default)]
struct Regions {
    work: usize,
    rhs: usize,
    ipiv: usize,
    perm: usize,
    info: usize,
    fail: usize,
    buffer: usize,
    buffer_bytes: usize,
    host_bytes: usize,
}

fn plan<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, inputs: &[&TensorDesc]) -> Result<(Layout, Regions)> {
    let (m, n, batch) = matrix_dims(inputs[0]);
    let k = m.min(n);
    let mut l = Layout::new();
    let mut r = Regions::default();
    let elems = m * n * batch;
    match op {
        LinalgOp::Cholesky(_) => {
            (r.buffer_bytes, r.host_bytes) = potrf_size::<T>(gpu, n)?;
        }
        LinalgOp::LuSolvePrepared(_) => {
            r.work = l.array::<T>(elems);
            r.perm = l.array::<i64>(n * batch);
            r.rhs = l.array::<T>(inputs[2].meta.shape.numel().unwrap_or(0));
        }
        _ => {
            if matches!(op, LinalgOp::Lu(_) | LinalgOp::Det(_) | LinalgOp::Slogdet(_)) {
                r.work = l.array::<T>(elems);
            }
            r.ipiv = l.array::<i64>(k * batch);
            (r.buffer_bytes, r.host_bytes) = getrf_size::<T>(gpu, m, n)?;
        }
    }
    r.info = l.array::<i32>(batch);
    r.fail = l.array::<i64>(1);
    r.buffer = l.region(r.buffer_bytes);
    Ok((l, r))
}

pub(crate) fn workspace<T: CudaScalar>(
    gpu: &Gpu,
    op: &LinalgOp,
    inputs: &[&TensorDesc],
) -> Result<WorkspaceReq> {
    plan::<T>(gpu, op, inputs)?.0.req()
}

/// `Xgetrf` on each of `batch` contiguous m×n items at `a`.
#[allow(clippy::too_many_arguments)]
fn getrf<T: CudaScalar>(
    gpu: &Gpu,
    a: u64,
    m: usize,
    n: usize,
    batch: usize,
    ipiv: u64,
    info: u64,
    r: &Regions,
    base: u64,
) -> Result<()> {
    let mut host = host_scratch(gpu, r.host_bytes);
    let k = m.min(n);
    for b in 0..batch {
        // SAFETY: item b of `a` is m×n contiguous (lda = m); ipiv holds k
        // i64 per item, info one i32 per item; the buffers have the sizes
        // the query returned.
        unsafe {
            solver_status(solver::cusolverDnXgetrf(
                gpu.solver(),
                gpu.params(),
                m as i64,
                n as i64,
                T::SOLVER_TYPE,
                (a + (b * m * n * size_of::<T>()) as u64) as *mut c_void,
                m.max(1) as i64,
                (ipiv + (b * k * 8) as u64) as *mut i64,
                T::SOLVER_TYPE,
                (base + r.buffer as u64) as *mut c_void,
                r.buffer_bytes,
                host.as_mut_ptr().cast(),
                r.host_bytes,
                (info + (b * 4) as u64) as *mut i32,
            ))?;
        }
    }
    host.release()
}

/// `Error::NonFinite` on `a` when an item of the gathered copy at `x`
/// (`per_item` elements each) holds NaN or ∞ (flags in the info words).
#[allow(clippy::too_many_arguments)]
fn nonfinite_a(
    gpu: &Gpu,
    sfx: &str,
    x: u64,
    per_item: usize,
    batch: usize,
    r: &Regions,
    base: u64,
    op: &'static str,
) -> Result<()> {
    let (flags, fail) = (base + r.info as u64, base + r.fail as u64);
    match first_nonfinite(gpu, sfx, x, per_item, batch, flags, fail)? {
        Some(b) => Err(Error::NonFinite { op, arg: "a", batch_index: b }),
        None => Ok(()),
    }
}

/// `perm` (m per item) from ipiv (k per item).
fn perm_from_ipiv(gpu: &Gpu, perm: u64, ipiv: u64, m: usize, k: usize, batch: usize) -> Result<()> {
    launch!(gpu, "ipiv_to_perm", batch, [perm, ipiv, m as i64, k as i64, batch as i64])
}

pub(crate) fn run<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, call: Call<'_, '_, '_, '_, '_>) -> Result<()> {
    let Call { inputs, outputs, ws } = call;
    let descs: heapless::Vec<&TensorDesc, 6> = inputs.iter().map(|i| i.desc).collect();
    let (_, r) = plan::<T>(gpu, op, &descs)?;
    let base = workspace_base(ws);
    let at = |offset: usize| base + offset as u64;
    let (m, n, batch) = matrix_dims(inputs[0].desc);
    let k = m.min(n);
    let name = op.name();
    let ty = T::DTYPE;
    let sfx = T::SUFFIX;
    super::common::zero(gpu, at(r.info), 4 * batch)?;
    match op {
        LinalgOp::Cholesky(_) => {
            let Some(l) = output_ptr(outputs, 0) else { return Ok(()) };
            gather(gpu, l, &inputs[0], ty)?;
            // potrf reads the lower triangle: check it, its diagonal made real.
            let lower = (Part::Lower, false, true);
            if let Some(b) = first_nonfinite_tri(gpu, sfx, l, n, batch, lower, at(r.info), at(r.fail))? {
                return Err(Error::NonFinite { op: name, arg: "a", batch_index: b });
            }
            let mut host = host_scratch(gpu, r.host_bytes);
            for b in 0..batch {
                // SAFETY: item b of `l` is n×n contiguous; buffers as queried.
                unsafe {
                    solver_status(solver::cusolverDnXpotrf(
                        gpu.solver(),
                        gpu.params(),
                        solver::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER,
                        n as i64,
                        T::SOLVER_TYPE,
                        (l + (b * n * n * size_of::<T>()) as u64) as *mut c_void,
                        n.max(1) as i64,
                        T::SOLVER_TYPE,
                        at(r.buffer) as *mut c_void,
                        r.buffer_bytes,
                        host.as_mut_ptr().cast(),
                        r.host_bytes,
                        (at(r.info) + (b * 4) as u64) as *mut i32,
                    ))?;
                }
            }
            host.release()?;
            check_info(gpu, name, at(r.info), batch, at(r.fail), |b| Error::NotPositiveDefinite {
                op: name,
                arg: "a",
                batch_index: b,
            })?;
            // Keep the lower triangle (the diagonal as is), zero the rest.
            let (walk, view) = (Walk::new(&[n, n, batch]), View::contiguous(&[n, n, batch]));
            super::common::map_view(gpu, 15, l, l, ty, ty, walk, view, 1.0, [0; 4])
        }
        LinalgOp::Lu(_) => {
            let work = at(r.work);
            gather(gpu, work, &inputs[0], ty)?;
            nonfinite_a(gpu, sfx, work, m * n, batch, &r, base, name)?;
            getrf::<T>(gpu, work, m, n, batch, at(r.ipiv), at(r.info), &r, base)?;
            reject_negative(gpu, name, at(r.info), batch, at(r.fail))?;
            if let Some(perm) = output_ptr(outputs, 0) {
                perm_from_ipiv(gpu, perm, at(r.ipiv), m, k, batch)?;
            }
            if let Some(l) = output_ptr(outputs, 1) {
                let (walk, view) = super::common::block(m, k, batch, m, m * n, false);
                super::common::map_view(gpu, 19, l, work, ty, ty, walk, view, 0.0, [0; 4])?;
            }
            if let Some(u) = output_ptr(outputs, 2) {
                let (walk, view) = super::common::block(k, n, batch, m, m * n, false);
                super::common::map_view(gpu, 16, u, work, ty, ty, walk, view, 1.0, [0; 4])?;
            }
            Ok(())
        }
        LinalgOp::LuFactor(_) | LinalgOp::LuFactorSolve(_) => {
            let solve = matches!(op, LinalgOp::LuFactorSolve(_));
            let (lu_at, perm_at) = if solve { (1, 2) } else { (0, 1) };
            let lu = match output_ptr(outputs, lu_at) {
                Some(p) => p,
                None => {
                    return Err(crate::error::unsupported(name, "the CUDA provider needs the `lu` output"))
                }
            };
            gather(gpu, lu, &inputs[0], ty)?;
            nonfinite_a(gpu, sfx, lu, m * n, batch, &r, base, name)?;
            getrf::<T>(gpu, lu, m, n, batch, at(r.ipiv), at(r.info), &r, base)?;
            if let Some(perm) = output_ptr(outputs, perm_at) {
                perm_from_ipiv(gpu, perm, at(r.ipiv), m, k, batch)?;
            }
            if !solve {
                return reject_negative(gpu, name, at(r.info), batch, at(r.fail));
            }
            check_info(gpu, name, at(r.info), batch, at(r.fail), |b| Error::Singular {
                op: name,
                arg: "a",
                batch_index: b,
                rcond: 0.0,
            })?;
            let Some(x) = output_ptr(outputs, 0) else { return Ok(()) };
            gather(gpu, x, &inputs[1], ty)?;
            let nrhs = inputs[1].desc.meta.shape.dims()[1];
            for b in 0..batch {
                // SAFETY: item b of lu (n×n), ipiv (n), x (n×nrhs), all
                // contiguous; info one i32 per item.
                unsafe {
                    solver_status(solver::cusolverDnXgetrs(
                        gpu.solver(),
                        gpu.params(),
                        solver::cublasOperation_t::CUBLAS_OP_N,
                        n as i64,
                        nrhs as i64,
                        T::SOLVER_TYPE,
                        (lu + (b * n * n * size_of::<T>()) as u64) as *const c_void,
                        n.max(1) as i64,
                        (at(r.ipiv) + (b * n * 8) as u64) as *const i64,
                        T::SOLVER_TYPE,
                        (x + (b * n * nrhs * size_of::<T>()) as u64) as *mut c_void,
                        n.max(1) as i64,
                        (at(r.info) + (b * 4) as u64) as *mut i32,
                    ))?;
                }
            }
            reject_negative(gpu, name, at(r.info), batch, at(r.fail))
        }
        LinalgOp::LuSolvePrepared(LuSolvePrepared(mat_op, _)) => {
            let Some(x) = output_ptr(outputs, 0) else { return Ok(()) };
            let (lu, perm, rhs) = (at(r.work), at(r.perm), at(r.rhs));
            gather(gpu, lu, &inputs[0], ty)?;
            let pd = inputs[1].desc;
            let pwalk = Walk::new(pd.meta.shape.dims());
            launch!(gpu, "copy_i64", pwalk.count, [perm, input_ptr(&inputs[1]), pwalk, View::of(pd)])?;
            gather(gpu, rhs, &inputs[2], ty)?;
            let nrhs = inputs[2].desc.meta.shape.dims()[1];
            let permute = format!("permute_rows_{sfx}");
            let count = n * nrhs * batch;
            let trans = match mat_op {
                MatOp::Identity => blas::cublasOperation_t::CUBLAS_OP_N,
                MatOp::Transpose => blas::cublasOperation_t::CUBLAS_OP_T,
                MatOp::Adjoint => blas::cublasOperation_t::CUBLAS_OP_C,
            };
            use blas::cublasDiagType_t::{CUBLAS_DIAG_NON_UNIT as NON_UNIT, CUBLAS_DIAG_UNIT as UNIT};
            use blas::cublasFillMode_t::{CUBLAS_FILL_MODE_LOWER as LOWER, CUBLAS_FILL_MODE_UPPER as UPPER};
            // P A = L U. op = N: x = U⁻¹ L⁻¹ (P b). op = T/C: x = Pᵀ L⁻ᴴ U⁻ᴴ b.
            let (target, steps) = if *mat_op == MatOp::Identity {
                launch!(gpu, permute, count, [0i32, x, rhs, perm, n as i64, nrhs as i64, batch as i64])?;
                (x, [(LOWER, UNIT), (UPPER, NON_UNIT)])
            } else {
                (rhs, [(UPPER, NON_UNIT), (LOWER, UNIT)])
            };
            for b in 0..batch {
                for (uplo, diag) in steps {
                    // SAFETY: item b of lu (n×n, lda n) and of the right-hand
                    // side (n×nrhs, ldb n), contiguous in the workspace/output.
                    unsafe {
                        blas_status(T::trsm(
                            gpu.blas(),
                            blas::cublasSideMode_t::CUBLAS_SIDE_LEFT,
                            uplo,
                            trans,
                            diag,
                            super::common::int(name, n)?,
                            super::common::int(name, nrhs)?,
                            (lu + (b * n * n * size_of::<T>()) as u64) as *const c_void,
                            super::common::int(name, n.max(1))?,
                            (target + (b * n * nrhs * size_of::<T>()) as u64) as *mut c_void,
                            super::common::int(name, n.max(1))?,
                        ))?;
                    }
                }
            }
            if *mat_op != MatOp::Identity {
                launch!(gpu, permute, count, [1i32, x, rhs, perm, n as i64, nrhs as i64, batch as i64])?;
            }
            Ok(())
        }
        LinalgOp::Det(_) | LinalgOp::Slogdet(_) => {
            let work = at(r.work);
            gather(gpu, work, &inputs[0], ty)?;
            nonfinite_a(gpu, sfx, work, n * n, batch, &r, base, name)?;
            if n > 0 {
                getrf::<T>(gpu, work, n, n, batch, at(r.ipiv), at(r.info), &r, base)?;
                reject_negative(gpu, name, at(r.info), batch, at(r.fail))?;
            }
            let mode: i32 = if matches!(op, LinalgOp::Det(_)) { 0 } else { 1 };
            // Either of slogdet's outputs may be absent (0: the kernel skips it).
            let first = output_ptr(outputs, 0).unwrap_or(0);
            let logabs = output_ptr(outputs, 1).unwrap_or(0);
            if first == 0 && logabs == 0 {
                return Ok(());
            }
            let kernel = format!("lu_det_{sfx}");
            launch!(gpu, kernel, batch, [mode, first, logabs, work, at(r.ipiv), n as i64, batch as i64])
        }
        _ => Err(crate::error::unsupported(name, "not an LU-family op")),
    }
}
