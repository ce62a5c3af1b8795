//! The SVD family (`svd`, `svd_vals`, `svd_full`) on cuSOLVER, driver by
//! size and [`SvdDriver`] ([`routine`]):
//!
//! * both dims ≤ 32 ([`BATCHED_MAX`]), every driver but `QrIteration` and
//!   `Polar`: one `?gesvdjBatched` call for the whole batch;
//! * larger, `Auto` and `DivideAndConquer` (cuSOLVER has no
//!   divide-and-conquer SVD): `cusolverDnXgesvd` per matrix — a
//!   gesvdj-whenever-≤ 1024 rule measured 2.9–5× slower than gesvd,
//!   so `Auto` uses Jacobi only where it is batched;
//! * `Jacobi`: `?gesvdj` per matrix; `QrIteration`: `cusolverDnXgesvd`;
//!   `Polar`: `cusolverDnXgesvdp` (the explicit overrides).
//!
//! The routines want m ≥ n (Xgesvd, Xgesvdp), so a wide matrix is solved as
//! its adjoint and the factors swapped. U and V are made canonical on the
//! device (`canonical_pairs`: host-cpu's phase rule) and Vᴴ written from V.
//! Singular values come out descending from every routine.

use super::common::Call;
use super::common::{
    check_info, first_nonfinite, host_scratch, int, jobz, map, map_view, matrix_dims, non_convergence,
    output_ptr, workspace_base,
};
use crate::carve::Layout;
use crate::context::Gpu;
use crate::error::solver_status;
use crate::launch::launch;
use crate::memory::Device;
use crate::nvrtc::{View, Walk};
use crate::scalar::CudaScalar;
use core::ffi::c_void;
use cudarc::cusolver::sys as solver;
use lindiff_core::op::{SvdDriver, SvdOptions, SvdVectors};
use lindiff_core::{Input, LinalgOp, Result, TensorDesc, WorkspaceReq};

/// The largest dims `?gesvdjBatched` takes.
pub const BATCHED_MAX: usize = 32;

/// Which routine runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routine {
    /// `?gesvdjBatched` (full U and V, m, n ≤ 32).
    JacobiBatched,
    /// `?gesvdj` per matrix.
    Jacobi,
    /// `cusolverDnXgesvd` per matrix.
    QrIteration,
    /// `cusolverDnXgesvdp` per matrix.
    Polar,
}

/// The routine for an m×n batch (shared by `workspace` and `run_into`):
/// `?gesvdjBatched` when m, n ≤ [`BATCHED_MAX`] (all drivers but the
/// `QrIteration`/`Polar` overrides), else `Xgesvd` for `Auto` and
/// `DivideAndConquer`, `?gesvdj` for `Jacobi`. The size rule is to be tuned
/// from the device check's timing rows (`cuda_timing`: Auto and each
/// driver at 4096²).
pub fn routine(driver: SvdDriver, m: usize, n: usize) -> Routine {
    match driver {
        SvdDriver::QrIteration => Routine::QrIteration,
        SvdDriver::Polar => Routine::Polar,
        _ if m <= BATCHED_MAX && n <= BATCHED_MAX => Routine::JacobiBatched,
        SvdDriver::Jacobi => Routine::Jacobi,
        _ => Routine::QrIteration,
    }
}

/// What one call computes: the work matrix is `mw×nw` with `mw ≥ nw`
/// (`transposed` when the input is wide).
#[derive(Clone, Copy, Debug)]
struct Shape {
    m: usize,
    n: usize,
    batch: usize,
    mw: usize,
    nw: usize,
    k: usize,
    transposed: bool,
    /// Columns of the work U and V the routine writes.
    ucols: usize,
    vcols: usize,
    full: bool,
    vectors: bool,
    routine: Routine,
}

fn shape(op: &LinalgOp, desc: &TensorDesc) -> (Shape, SvdOptions) {
    let (m, n, batch) = matrix_dims(desc);
    let (opts, full, vectors) = match op {
        LinalgOp::SvdFull(s) => (s.0, true, true),
        LinalgOp::SvdVals(s) => (s.0, false, false),
        LinalgOp::Svd(s) => (s.0, false, true),
        _ => (SvdOptions::default(), false, true),
    };
    let transposed = m < n;
    let (mw, nw) = if transposed { (n, m) } else { (m, n) };
    let k = nw;
    let routine = routine(opts.driver, mw, nw);
    // gesvdjBatched always returns full U and V; the others thin unless full.
    let (ucols, vcols) = if routine == Routine::JacobiBatched || full { (mw, nw) } else { (k, k) };
    (Shape { m, n, batch, mw, nw, k, transposed, ucols, vcols, full, vectors, routine }, opts)
}

#[derive(Default)]
struct Regions {
    a: usize,
    s: usize,
    u: usize,
    v: usize,
    vt: usize,
    info: usize,
    fail: usize,
    buffer: usize,
    buffer_bytes: usize,
    host_bytes: usize,
}

/// The `jobu`/`jobvt` letter of Xgesvd.
fn job(sh: &Shape) -> i8 {
    (if !sh.vectors {
        b'N'
    } else if sh.full {
        b'A'
    } else {
        b'S'
    }) as i8
}

/// Buffer sizes of the routine (device elements or bytes, host bytes).
fn buffer_size<T: CudaScalar>(gpu: &Gpu, sh: &Shape) -> Result<(usize, usize)> {
    const NAME: &str = "svd";
    let null = core::ptr::null::<c_void>();
    let (mw, nw) = (sh.mw, sh.nw);
    let mut lwork: i32 = 0;
    let (mut dev, mut host) = (0usize, 0usize);
    // SAFETY: size queries: valid handles and params; the matrices are not
    // read (null), only their dims.
    unsafe {
        match sh.routine {
            Routine::JacobiBatched => {
                solver_status(T::gesvdj_batched_size(
                    gpu.solver(),
                    jobz(sh.vectors),
                    int(NAME, mw)?,
                    int(NAME, nw)?,
                    null,
                    null,
                    null,
                    null,
                    &mut lwork,
                    gpu.gesvdj_info(),
                    int(NAME, sh.batch.max(1))?,
                ))?;
                dev = lwork.max(0) as usize * size_of::<T>();
            }
            Routine::Jacobi => {
                solver_status(T::gesvdj_size(
                    gpu.solver(),
                    jobz(sh.vectors),
                    i32::from(!sh.full),
                    int(NAME, mw)?,
                    int(NAME, nw)?,
                    null,
                    null,
                    null,
                    null,
                    &mut lwork,
                    gpu.gesvdj_info(),
                ))?;
                dev = lwork.max(0) as usize * size_of::<T>();
            }
            Routine::QrIteration => {
                let j = job(sh);
                solver_status(solver::cusolverDnXgesvd_bufferSize(
                    gpu.solver(),
                    gpu.params(),
                    j,
                    j,
                    mw as i64,
                    nw as i64,
                    T::SOLVER_TYPE,
                    null,
                    mw as i64,
                    T::SOLVER_REAL_TYPE,
                    null,
                    T::SOLVER_TYPE,
                    null,
                    mw as i64,
                    T::SOLVER_TYPE,
                    null,
                    sh.vcols.max(1) as i64,
                    T::SOLVER_TYPE,
                    &mut dev,
                    &mut host,
                ))?;
            }
            Routine::Polar => {
                solver_status(solver::cusolverDnXgesvdp_bufferSize(
                    gpu.solver(),
                    gpu.params(),
                    jobz(sh.vectors),
                    i32::from(!sh.full),
                    mw as i64,
                    nw as i64,
                    T::SOLVER_TYPE,
                    null,
                    mw as i64,
                    T::SOLVER_REAL_TYPE,
                    null,
                    T::SOLVER_TYPE,
                    null,
                    mw as i64,
                    T::SOLVER_TYPE,
                    null,
                    nw as i64,
                    T::SOLVER_TYPE,
                    &mut dev,
                    &mut host,
                ))?;
            }
        }
    }
    Ok((dev, host))
}

fn plan<T: CudaScalar>(gpu: &Gpu, sh: &Shape) -> Result<(Layout, Regions)> {
    let mut l = Layout::new();
    let mut r = Regions::default();
    let b = sh.batch;
    r.a = l.array::<T>(sh.mw * sh.nw * b);
    r.s = l.array::<T>(sh.k * b); // real values; T-sized slots are enough
                                  // gesvdjBatched references U and V even without vectors.
    let need_uv = sh.vectors || sh.routine == Routine::JacobiBatched;
    if need_uv {
        r.u = l.array::<T>(sh.mw * sh.ucols * b);
        r.v = l.array::<T>(sh.nw * sh.vcols * b);
        if sh.routine == Routine::QrIteration {
            r.vt = l.array::<T>(sh.vcols * sh.nw * b);
        }
    }
    r.info = l.array::<i32>(b.max(1));
    r.fail = l.array::<i64>(1);
    (r.buffer_bytes, r.host_bytes) = buffer_size::<T>(gpu, sh)?;
    r.buffer = l.region(r.buffer_bytes);
    Ok((l, r))
}

pub(crate) fn workspace<T: CudaScalar>(
    gpu: &Gpu,
    op: &LinalgOp,
    inputs: &[&TensorDesc],
) -> Result<WorkspaceReq> {
    let (sh, _) = shape(op, inputs[0]);
    plan::<T>(gpu, &sh)?.0.req()
}

pub(crate) fn run<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, call: Call<'_, '_, '_, '_, '_>) -> Result<()> {
    let Call { inputs, outputs, ws } = call;
    let dst = match op {
        LinalgOp::SvdVals(_) => [None, output_ptr(outputs, 0), None],
        _ => [output_ptr(outputs, 0), output_ptr(outputs, 1), output_ptr(outputs, 2)],
    };
    run_at::<T>(gpu, op, &inputs[0], workspace_base(ws), dst)
}

/// The op the composites (`ops/recombine.rs`) factor with: the thin
/// SVD with default options, as host-cpu's recombine kernels use it.
pub(crate) fn thin() -> LinalgOp {
    LinalgOp::Svd(lindiff_core::op::Svd(SvdOptions::default()))
}

/// Workspace bytes of [`thin`] on `a` (the composites put it first).
pub(crate) fn thin_bytes<T: CudaScalar>(gpu: &Gpu, a: &TensorDesc) -> Result<usize> {
    let (sh, _) = shape(&thin(), a);
    Ok(plan::<T>(gpu, &sh)?.0.req()?.bytes())
}

/// Runs `op` of the family on `input` with its workspace layout starting
/// at `base`, writing U, s and Vᴴ (contiguous, the outputs' shapes) at the
/// addresses of `dst` that are present.
pub(crate) fn run_at<T: CudaScalar>(
    gpu: &Gpu,
    op: &LinalgOp,
    input: &Input<'_, Device>,
    base: u64,
    dst: [Option<u64>; 3],
) -> Result<()> {
    let name = op.name();
    let (sh, _) = shape(op, input.desc);
    let (_, r) = plan::<T>(gpu, &sh)?;
    let at = |offset: usize| base + offset as u64;
    let ty = T::DTYPE;
    let real = ty.real();
    let tsize = size_of::<T>();
    let rsize = real.size();
    if sh.batch == 0 {
        return Ok(());
    }
    // k = 0 (m or n is 0): no singular values, nothing for cuSOLVER; the
    // full SVD's U (m×m) and Vᴴ (n×n) complete an empty basis: identities.
    if sh.k == 0 {
        if matches!(op, LinalgOp::SvdFull(_)) {
            let kernel = format!("eye_{}", T::SUFFIX);
            for (out, side) in [(dst[0], sh.m), (dst[2], sh.n)] {
                if let Some(out) = out {
                    let count = side * side * sh.batch;
                    launch!(gpu, kernel, count, [out, count as i64, side as i64])?;
                }
            }
        }
        return Ok(());
    }
    // The work matrix: `a`, or `aᴴ` when wide.
    let a = at(r.a);
    if sh.transposed {
        adjoint_of(gpu, a, input, ty)?;
    } else {
        map(gpu, 0, a, input, ty, 0.0, [0; 4])?;
    }
    let (mw, nw, k) = (sh.mw, sh.nw, sh.k);
    let (u, v, s) = (at(r.u), at(r.v), at(r.s));
    let info = at(r.info);
    if let Some(b) = first_nonfinite(gpu, T::SUFFIX, a, mw * nw, sh.batch, info, at(r.fail))? {
        return Err(lindiff_core::Error::NonFinite { op: name, arg: "a", batch_index: b });
    }
    let buffer = at(r.buffer);
    // Xgesvdp's host output h_err_sigma (shared by the items, unread),
    // declared before `host` so that it outlives host's synchronising drop.
    let mut err_sigma = [0f64; 1];
    let mut host = host_scratch(gpu, r.host_bytes);
    if k > 0 {
        match sh.routine {
            Routine::JacobiBatched => {
                let lwork = int(name, r.buffer_bytes / tsize)?;
                // SAFETY: a (mw×nw), s (k), u (mw×mw), v (nw×nw) per item,
                // contiguous; work as queried; info one i32 per item.
                unsafe {
                    solver_status(T::gesvdj_batched(
                        gpu.solver(),
                        jobz(sh.vectors),
                        int(name, mw)?,
                        int(name, nw)?,
                        a as _,
                        s as _,
                        u as _,
                        v as _,
                        buffer as _,
                        lwork,
                        info as _,
                        gpu.gesvdj_info(),
                        int(name, sh.batch)?,
                    ))?;
                }
            }
            Routine::Jacobi => {
                let lwork = int(name, r.buffer_bytes / tsize)?;
                for b in 0..sh.batch {
                    // SAFETY: item b of each region, sizes as planned.
                    unsafe {
                        solver_status(T::gesvdj(
                            gpu.solver(),
                            jobz(sh.vectors),
                            i32::from(!sh.full),
                            int(name, mw)?,
                            int(name, nw)?,
                            (a + (b * mw * nw * tsize) as u64) as _,
                            (s + (b * k * rsize) as u64) as _,
                            (u + (b * mw * sh.ucols * tsize) as u64) as _,
                            (v + (b * nw * sh.vcols * tsize) as u64) as _,
                            buffer as _,
                            lwork,
                            (info + (b * 4) as u64) as _,
                            gpu.gesvdj_info(),
                        ))?;
                    }
                }
            }
            Routine::QrIteration => {
                let j = job(&sh);
                let vt = at(r.vt);
                let ldvt = sh.vcols.max(1);
                for b in 0..sh.batch {
                    // SAFETY: as above; VT is vcols×nw per item.
                    unsafe {
                        solver_status(solver::cusolverDnXgesvd(
                            gpu.solver(),
                            gpu.params(),
                            j,
                            j,
                            mw as i64,
                            nw as i64,
                            T::SOLVER_TYPE,
                            (a + (b * mw * nw * tsize) as u64) as _,
                            mw as i64,
                            T::SOLVER_REAL_TYPE,
                            (s + (b * k * rsize) as u64) as _,
                            T::SOLVER_TYPE,
                            (u + (b * mw * sh.ucols * tsize) as u64) as _,
                            mw as i64,
                            T::SOLVER_TYPE,
                            (vt + (b * sh.vcols * nw * tsize) as u64) as _,
                            ldvt as i64,
                            T::SOLVER_TYPE,
                            buffer as _,
                            r.buffer_bytes,
                            host.as_mut_ptr().cast(),
                            r.host_bytes,
                            (info + (b * 4) as u64) as _,
                        ))?;
                    }
                }
                if sh.vectors {
                    // V = (Vᵀ)ᴴ: nw×vcols from vcols×nw.
                    let (walk, view) =
                        super::common::block(sh.vcols, nw, sh.batch, ldvt, sh.vcols * nw, true);
                    map_view(gpu, 2, v, vt, ty, ty, walk, view, 0.0, [0; 4])?;
                }
            }
            Routine::Polar => {
                for b in 0..sh.batch {
                    // SAFETY: as above; U mw×ucols, V nw×vcols per item.
                    unsafe {
                        solver_status(solver::cusolverDnXgesvdp(
                            gpu.solver(),
                            gpu.params(),
                            jobz(sh.vectors),
                            i32::from(!sh.full),
                            mw as i64,
                            nw as i64,
                            T::SOLVER_TYPE,
                            (a + (b * mw * nw * tsize) as u64) as _,
                            mw as i64,
                            T::SOLVER_REAL_TYPE,
                            (s + (b * k * rsize) as u64) as _,
                            T::SOLVER_TYPE,
                            (u + (b * mw * sh.ucols * tsize) as u64) as _,
                            mw as i64,
                            T::SOLVER_TYPE,
                            (v + (b * nw * sh.vcols * tsize) as u64) as _,
                            nw as i64,
                            T::SOLVER_TYPE,
                            buffer as _,
                            r.buffer_bytes,
                            host.as_mut_ptr().cast(),
                            r.host_bytes,
                            (info + (b * 4) as u64) as _,
                            err_sigma.as_mut_ptr(),
                        ))?;
                    }
                }
            }
        }
        host.release()?;
        check_info(gpu, name, info, sh.batch, at(r.fail), |b| non_convergence(name, b))?;
    }
    // Singular values (real, descending from every routine).
    if let Some(dst) = dst[1] {
        let (walk, view) = (Walk::new(&[k, sh.batch]), View::contiguous(&[k, sh.batch]));
        map_view(gpu, 0, dst, s, real, real, walk, view, 0.0, [0; 4])?;
    }
    if !sh.vectors {
        return Ok(());
    }
    // The input's U and V: swapped when the work matrix was the adjoint.
    let (uo, uo_rows, uo_cols, vo, vo_rows, vo_cols) =
        if sh.transposed { (v, nw, sh.vcols, u, mw, sh.ucols) } else { (u, mw, sh.ucols, v, nw, sh.vcols) };
    let (want_u, want_v) = match op {
        LinalgOp::SvdFull(_) => (sh.m, sh.n),
        _ => (k, k),
    };
    let kernel = format!("canonical_pairs_{}", T::SUFFIX);
    let width = want_u.max(want_v);
    launch!(
        gpu,
        kernel,
        sh.batch * width,
        [
            uo,
            uo_rows as i64,
            want_u as i64,
            (uo_rows * uo_cols) as i64,
            vo,
            vo_rows as i64,
            want_v as i64,
            (vo_rows * vo_cols) as i64,
            k as i64,
            sh.batch as i64
        ]
    )?;
    let vectors = match op {
        LinalgOp::Svd(s) => s.0.vectors,
        _ => SvdVectors::Both,
    };
    if vectors != SvdVectors::Right {
        if let Some(dst) = dst[0] {
            let (walk, view) =
                super::common::block(sh.m, want_u, sh.batch, uo_rows, uo_rows * uo_cols, false);
            map_view(gpu, 0, dst, uo, ty, ty, walk, view, 0.0, [0; 4])?;
        }
    }
    if vectors != SvdVectors::Left {
        if let Some(dst) = dst[2] {
            // Vᴴ (want_v×n) from V's first want_v columns (n rows).
            let (walk, view) = super::common::block(sh.n, want_v, sh.batch, vo_rows, vo_rows * vo_cols, true);
            map_view(gpu, 2, dst, vo, ty, ty, walk, view, 0.0, [0; 4])?;
        }
    }
    Ok(())
}

/// Writes `aᴴ` of `input` (any strides, any batch dims) contiguously at `dst`.
fn adjoint_of(gpu: &Gpu, dst: u64, input: &Input<'_, Device>, ty: lindiff_core::DType) -> Result<()> {
    let d = input.desc;
    let dims = d.meta.shape.dims();
    let s = &d.strides;
    let mut wdims: heapless::Vec<usize, { lindiff_core::MAX_RANK }> = heapless::Vec::new();
    let mut wstrides: heapless::Vec<usize, { lindiff_core::MAX_RANK }> = heapless::Vec::new();
    for (i, (&dim, &stride)) in
        [dims[1], dims[0]].iter().chain(&dims[2..]).zip([s[1], s[0]].iter().chain(&s[2..])).enumerate()
    {
        // Capacity: the same rank as the input (≤ MAX_RANK).
        let _ = (i, wdims.push(dim), wstrides.push(stride));
    }
    let walk = Walk::new(&wdims);
    let view = View::new(d.offset, &wstrides);
    map_view(gpu, 2, dst, super::common::input_ptr(input), d.meta.dtype, ty, walk, view, 0.0, [0; 4])
}
