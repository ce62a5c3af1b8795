//! The SVD recombinations as device composites (host-cpu's
//! `kernels/recombine.rs` and `svd_truncated` in `kernels/svd.rs`): the
//! thin SVD with default options (`svd::run_at`, its workspace first),
//! then `kept_rank` (the kept count per item from the descending values),
//! `spectral_scale` (columns/rows times s or 1/s, zero from the kept count
//! on: a per-item rank masks the full-k product instead of cutting it) and
//! one cuBLAS strided-batched gemm per product:
//!
//! | op | device steps |
//! |---|---|
//! | `svd_truncated` | SVD; mask u's columns, s, vh's rows from p on |
//! | `low_rank_approx` | SVD; U·diag(s_p) → gemm with Vᴴ |
//! | `polar` | SVD; gemm U·Vᴴ |
//! | `pinv` | SVD; diag(1/s_r)·Vᴴ → gemm (·)ᴴ·Uᴴ |
//! | `lstsq` | SVD; gemm Uᴴ·b, diag(1/s_r)·(·), gemm (Vᴴ)ᴴ·(·) |
//!
//! Thresholds as host-cpu's: `Truncation::Count(p)` keeps min(p, k),
//! `Tolerance` the leading s_i > max(atol, rtol·s₀); pinv/lstsq's rtol
//! defaults to max(m, n)·ε of the dtype. NaN/∞ in `a` (or `b`) →
//! `NonFinite`, checked on the device first (not for `svd_truncated`,
//! which host-cpu does not check either).

use super::common::Call;
use super::common::{
    empty_outputs_written, first_nonfinite, gather, matrix_dims, output_ptr, workspace_base,
};
use super::matmul::{gemm, Gemm};
use super::svd;
use crate::carve::Layout;
use crate::context::Gpu;
use crate::launch::launch;
use crate::nvrtc::{View, Walk};
use crate::scalar::CudaScalar;
use lindiff_core::op::{PinvOptions, Truncation};
use lindiff_core::{DType, Error, LinalgOp, MatOp, Result, TensorDesc, WorkspaceReq};

struct Plan {
    m: usize,
    n: usize,
    k: usize,
    r: usize,
    batch: usize,
    a: usize,
    u: usize,
    s: usize,
    vh: usize,
    b: usize,
    t: usize,
    rank: usize,
    flags: usize,
    fail: usize,
}

fn plan<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, inputs: &[&TensorDesc]) -> Result<(Layout, Plan)> {
    let (m, n, batch) = matrix_dims(inputs[0]);
    let k = m.min(n);
    let r = match op {
        LinalgOp::Lstsq(_) => matrix_dims(inputs[1]).1,
        _ => 0,
    };
    let mut l = Layout::new();
    // The SVD's own layout first: `svd::run_at` carves it from the start.
    l.region(svd::thin_bytes::<T>(gpu, inputs[0])?);
    let a = l.array::<T>(m * n * batch);
    let u = l.array::<T>(m * k * batch);
    let s = l.region(k * batch * T::DTYPE.real().size());
    let vh = l.array::<T>(k * n * batch);
    let b = l.array::<T>(m * r * batch);
    let t = l.array::<T>(k * r * batch);
    let rank = l.array::<i64>(batch);
    let flags = l.array::<i32>(batch.max(1));
    let fail = l.array::<i64>(1);
    Ok((l, Plan { m, n, k, r, batch, a, u, s, vh, b, t, rank, flags, fail }))
}

pub(crate) fn workspace<T: CudaScalar>(
    gpu: &Gpu,
    op: &LinalgOp,
    inputs: &[&TensorDesc],
) -> Result<WorkspaceReq> {
    plan::<T>(gpu, op, inputs)?.0.req()
}

/// `kept_rank`'s (mode, count, atol, rtol) for a truncation.
fn truncation(t: &Truncation) -> (i32, i64, f64, f64) {
    match *t {
        Truncation::Count(p) => (0, i64::try_from(p).unwrap_or(i64::MAX), 0.0, 0.0),
        Truncation::Tolerance { atol, rtol } => (1, 0, atol, rtol),
    }
}

/// `kept_rank`'s arguments for pinv/lstsq's thresholds (rtol defaults to
/// max(m, n)·ε of the dtype).
fn pinv_thresholds(o: &PinvOptions, m: usize, n: usize, real: DType) -> (i32, i64, f64, f64) {
    let eps = if real == DType::F32 { f64::from(f32::EPSILON) } else { f64::EPSILON };
    (1, 0, o.atol, o.rtol.unwrap_or(m.max(n) as f64 * eps))
}

/// Copies `count` contiguous elements of `dtype` from `src` to `dst`.
fn copy(gpu: &Gpu, dst: Option<u64>, src: u64, dtype: DType, count: usize) -> Result<()> {
    let Some(dst) = dst else { return Ok(()) };
    if dtype == DType::I64 {
        let (walk, view) = (Walk::new(&[count]), View::contiguous(&[count]));
        return launch!(gpu, "copy_i64", count, [dst, src, walk, view]);
    }
    let (walk, view) = (Walk::new(&[count]), View::contiguous(&[count]));
    super::common::map_view(gpu, 0, dst, src, dtype, dtype, walk, view, 0.0, [0; 4])
}

pub(crate) fn run<T: CudaScalar>(gpu: &Gpu, op: &LinalgOp, call: Call<'_, '_, '_, '_, '_>) -> Result<()> {
    let Call { inputs, outputs, ws } = call;
    let name = op.name();
    let descs: heapless::Vec<&TensorDesc, 2> = inputs.iter().take(2).map(|i| i.desc).collect();
    let (_, p) = plan::<T>(gpu, op, &descs)?;
    let (m, n, k, r, batch) = (p.m, p.n, p.k, p.r, p.batch);
    if batch == 0 {
        // Every output has a zero batch dimension: nothing to write.
        empty_outputs_written(outputs);
        return Ok(());
    }
    let base = workspace_base(ws);
    let at = |o: usize| base + o as u64;
    let (u, s, vh, rank) = (at(p.u), at(p.s), at(p.vh), at(p.rank));
    let real = T::DTYPE.real();
    if !matches!(op, LinalgOp::SvdTruncated(_)) {
        gather(gpu, at(p.a), &inputs[0], T::DTYPE)?;
        if let Some(b) = first_nonfinite(gpu, T::SUFFIX, at(p.a), m * n, batch, at(p.flags), at(p.fail))? {
            return Err(Error::NonFinite { op: name, arg: "a", batch_index: b });
        }
    }
    if let LinalgOp::Lstsq(_) = op {
        gather(gpu, at(p.b), &inputs[1], T::DTYPE)?;
        if let Some(b) = first_nonfinite(gpu, T::SUFFIX, at(p.b), m * r, batch, at(p.flags), at(p.fail))? {
            return Err(Error::NonFinite { op: name, arg: "b", batch_index: b });
        }
    }
    svd::run_at::<T>(gpu, &svd::thin(), &inputs[0], base, [Some(u), Some(s), Some(vh)])?;
    let thresholds = match op {
        LinalgOp::SvdTruncated(t) => Some(truncation(&t.0)),
        LinalgOp::LowRankApprox(t) => Some(truncation(&t.0)),
        LinalgOp::Pinv(o) => Some(pinv_thresholds(&o.0, m, n, real)),
        LinalgOp::Lstsq(o) => Some(pinv_thresholds(&o.0, m, n, real)),
        _ => None,
    };
    if let Some((mode, count, atol, rtol)) = thresholds {
        let kernel = format!("kept_rank_{}", T::SUFFIX);
        launch!(gpu, kernel, batch, [rank, s, k as i64, batch as i64, mode, count, atol, rtol])?;
    }
    // spectral_scale over an item-contiguous rows×cols batch.
    let scale = |suffix: &str, axis: i32, mode: i32, x: u64, rows: usize, cols: usize| {
        let kernel = format!("spectral_scale_{suffix}");
        launch!(
            gpu,
            kernel,
            batch * rows * cols,
            [axis, mode, x, rows as i64, cols as i64, s, k as i64, rank, batch as i64]
        )
    };
    // c = U·Vᴴ over the batch (U m×k, Vᴴ k×n, both item-contiguous).
    let u_times_vh = |c: u64| Gemm {
        ta: MatOp::Identity,
        tb: MatOp::Identity,
        m,
        n,
        k,
        a: (u, m, m * k),
        b: (vh, k, k * n),
        c,
        batch,
    };
    let (col, row) = (0i32, 1i32);
    let (times, over, mask) = (0i32, 1i32, 2i32);
    match op {
        LinalgOp::SvdTruncated(_) => {
            scale(T::SUFFIX, col, mask, u, m, k)?;
            scale(T::REAL_SUFFIX, row, mask, s, k, 1)?;
            scale(T::SUFFIX, row, mask, vh, k, n)?;
            copy(gpu, output_ptr(outputs, 0), u, T::DTYPE, m * k * batch)?;
            copy(gpu, output_ptr(outputs, 1), s, real, k * batch)?;
            copy(gpu, output_ptr(outputs, 2), vh, T::DTYPE, k * n * batch)?;
            copy(gpu, output_ptr(outputs, 3), rank, DType::I64, batch)
        }
        LinalgOp::LowRankApprox(_) => {
            scale(T::SUFFIX, col, times, u, m, k)?;
            if let Some(c) = output_ptr(outputs, 0) {
                gemm::<T>(gpu, name, &u_times_vh(c))?;
            }
            copy(gpu, output_ptr(outputs, 1), rank, DType::I64, batch)
        }
        LinalgOp::Polar(_) => match output_ptr(outputs, 0) {
            Some(c) => gemm::<T>(gpu, name, &u_times_vh(c)),
            None => Ok(()),
        },
        LinalgOp::Pinv(_) => {
            scale(T::SUFFIX, row, over, vh, k, n)?;
            match output_ptr(outputs, 0) {
                // pinv (n×m) = (diag(1/s_r) Vᴴ)ᴴ Uᴴ.
                Some(c) => {
                    let g = Gemm {
                        ta: MatOp::Adjoint,
                        tb: MatOp::Adjoint,
                        m: n,
                        n: m,
                        k,
                        a: (vh, k, k * n),
                        b: (u, m, m * k),
                        c,
                        batch,
                    };
                    gemm::<T>(gpu, name, &g)
                }
                None => Ok(()),
            }
        }
        _ => {
            // lstsq: t = Uᴴ b (k×r), rows over s and cut at the rank; x = V t.
            let t = at(p.t);
            let g = Gemm {
                ta: MatOp::Adjoint,
                tb: MatOp::Identity,
                m: k,
                n: r,
                k: m,
                a: (u, m, m * k),
                b: (at(p.b), m, m * r),
                c: t,
                batch,
            };
            gemm::<T>(gpu, name, &g)?;
            scale(T::SUFFIX, row, over, t, k, r)?;
            if let Some(c) = output_ptr(outputs, 0) {
                let g = Gemm {
                    ta: MatOp::Adjoint,
                    tb: MatOp::Identity,
                    m: n,
                    n: r,
                    k,
                    a: (vh, k, k * n),
                    b: (t, k, k * r),
                    c,
                    batch,
                };
                gemm::<T>(gpu, name, &g)?;
            }
            copy(gpu, output_ptr(outputs, 1), rank, DType::I64, batch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_follow_host_cpu() {
        assert_eq!(truncation(&Truncation::Count(3)), (0, 3, 0.0, 0.0));
        assert_eq!(truncation(&Truncation::Count(usize::MAX)).1, i64::MAX);
        assert_eq!(truncation(&Truncation::Tolerance { atol: 0.5, rtol: 0.1 }), (1, 0, 0.5, 0.1));
        let default = PinvOptions::default();
        assert_eq!(pinv_thresholds(&default, 7, 3, DType::F64), (1, 0, 0.0, 7.0 * f64::EPSILON));
        assert_eq!(pinv_thresholds(&default, 2, 5, DType::F32).3, 5.0 * f64::from(f32::EPSILON));
        assert_eq!(pinv_thresholds(&default.rtol(0.25).atol(1.0), 2, 5, DType::F32), (1, 0, 1.0, 0.25));
    }
}
