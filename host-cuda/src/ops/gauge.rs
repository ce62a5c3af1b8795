//! The reverse-mode gauge checks `svd_gauge_check` / `eigh_gauge_check`
//! (core's `op/gauge_check.rs`) as NVRTC kernels: the inputs are gathered
//! contiguously into the workspace, `svd_gauge`/`eigh_gauge` walk each
//! batch item in one thread exactly as host-cpu's kernel does (tie groups
//! from the spectrum, one entry of ah(Uᴴ gU) per tied pair, projections
//! for zero singular values) and write a per-item code; the lowest failing
//! item becomes `Error::NotDifferentiable` with host-cpu's message, and a
//! passing call copies the cotangents to the outputs.
//!
//! Cost per item as on the host (O((m + n)·k) plus O(m + n) per tied pair);
//! the checks run once per reverse pass over SVD/eigh and are not a
//! bottleneck, so one thread per item is enough.

use super::common::{first_failure, gather, map_view, matrix_dims, output_ptr, read_i32, workspace_base};
use crate::carve::Layout;
use crate::context::Gpu;
use crate::memory::Device;
use crate::nvrtc::{launch, View, Walk};
use crate::scalar::CudaScalar;
use crate::DeviceBuffer;
use lindiff_core::op::gauge_why::{
    EIGH_PHASE, EIGH_TIE, EIGH_VALUES, SVD_KINK, SVD_NULL, SVD_PHASE, SVD_TIE, SVD_VALUES,
};
use lindiff_core::op::GaugeOf;
use lindiff_core::{DType, Error, Input, LinalgOp, Output, Result, TensorDesc, WorkspaceReq};

/// The error of a failing SVD check from the kernel's code
/// (`1 + 4·why + output`, see `svd_gauge_impl`).
pub(crate) fn svd_error(of: GaugeOf, code: i32) -> Error {
    let code = code.max(1) - 1;
    let factor = ["u", "s", "vh"].get((code % 4) as usize).copied().unwrap_or("u");
    let why = [SVD_TIE, SVD_PHASE, SVD_NULL, SVD_KINK, SVD_VALUES].get((code / 4) as usize).copied();
    Error::NotDifferentiable { op: of.op(), output: of.output(factor), why: why.unwrap_or(SVD_TIE) }
}

/// The error of a failing eigh check from the kernel's code.
pub(crate) fn eigh_error(code: i32) -> Error {
    let code = code.max(1) - 1;
    let output = if code % 4 == 1 { "w" } else { "v" };
    let why = [EIGH_TIE, EIGH_PHASE, EIGH_VALUES].get((code / 4) as usize).copied();
    Error::NotDifferentiable { op: "eigh", output, why: why.unwrap_or(EIGH_TIE) }
}

/// Contiguous copies of the inputs (in input order), the projection
/// coefficients, the codes and the failure index.
struct Plan {
    at: [usize; 6],
    c: usize,
    code: usize,
    fail: usize,
}

fn plan<T: CudaScalar>(op: &LinalgOp, inputs: &[&TensorDesc]) -> (Layout, Plan) {
    let mut l = Layout::new();
    let mut at = [0usize; 6];
    for (slot, d) in at.iter_mut().zip(inputs) {
        *slot = l.region(d.meta.shape.numel().unwrap_or(0) * d.meta.dtype.size());
    }
    let (k, batch) = match op {
        LinalgOp::SvdGaugeCheck(_) => {
            let (_, k, batch) = matrix_dims(inputs[0]);
            (k, batch)
        }
        _ => (0, matrix_dims(inputs[0]).2),
    };
    let c = l.array::<T>(k * batch);
    let code = l.array::<i32>(batch.max(1));
    let fail = l.array::<i64>(1);
    (l, Plan { at, c, code, fail })
}

pub(crate) fn workspace<T: CudaScalar>(op: &LinalgOp, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
    plan::<T>(op, inputs).0.req()
}

/// Copies `count` contiguous elements of `dtype` from `src` to output `i`.
fn copy_out(
    gpu: &Gpu,
    outputs: &mut [Option<Output<'_, '_, Device>>],
    i: usize,
    src: u64,
    dtype: DType,
    count: usize,
) -> Result<()> {
    match output_ptr(outputs, i) {
        Some(dst) => {
            let (walk, view) = (Walk::new(&[count]), View::contiguous(&[count]));
            map_view(gpu, 0, dst, src, dtype, dtype, walk, view, 0.0, [0; 4])
        }
        None => Ok(()),
    }
}

pub(crate) fn run<T: CudaScalar>(
    gpu: &Gpu,
    op: &LinalgOp,
    inputs: &[Input<'_, Device>],
    outputs: &mut [Option<Output<'_, '_, Device>>],
    ws: &mut DeviceBuffer<'_>,
) -> Result<()> {
    let descs: heapless::Vec<&TensorDesc, 6> = inputs.iter().map(|i| i.desc).collect();
    let (_, p) = plan::<T>(op, &descs);
    let base = workspace_base(ws);
    let at = |o: usize| base + o as u64;
    for (input, &offset) in inputs.iter().zip(&p.at) {
        gather(gpu, at(offset), input, input.desc.meta.dtype)?;
    }
    let numel = |i: usize| descs[i].meta.shape.numel().unwrap_or(0);
    let (code, fail) = (at(p.code), at(p.fail));
    match op {
        LinalgOp::SvdGaugeCheck(of) => {
            let (m, k, batch) = matrix_dims(descs[0]);
            let n = matrix_dims(descs[2]).1;
            let kernel = format!("svd_gauge_{}", T::SUFFIX);
            let a = |i: usize| at(p.at[i]);
            launch!(
                gpu,
                kernel,
                batch,
                [
                    code,
                    a(0),
                    a(1),
                    a(2),
                    a(3),
                    a(4),
                    a(5),
                    at(p.c),
                    m as i64,
                    n as i64,
                    k as i64,
                    batch as i64
                ]
            )?;
            if let Some(b) = first_failure(gpu, code, batch, fail)? {
                return Err(svd_error(of.0, read_i32(gpu, code + 4 * b as u64)?));
            }
            copy_out(gpu, outputs, 0, a(3), T::DTYPE, numel(3))?;
            copy_out(gpu, outputs, 1, a(4), T::DTYPE.real(), numel(4))?;
            copy_out(gpu, outputs, 2, a(5), T::DTYPE, numel(5))
        }
        _ => {
            let (n, _, batch) = matrix_dims(descs[0]);
            let kernel = format!("eigh_gauge_{}", T::SUFFIX);
            let a = |i: usize| at(p.at[i]);
            launch!(gpu, kernel, batch, [code, a(0), a(1), a(2), a(3), n as i64, batch as i64])?;
            if let Some(b) = first_failure(gpu, code, batch, fail)? {
                return Err(eigh_error(read_i32(gpu, code + 4 * b as u64)?));
            }
            copy_out(gpu, outputs, 0, a(2), T::DTYPE.real(), numel(2))?;
            copy_out(gpu, outputs, 1, a(3), T::DTYPE, numel(3))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes `svd_gauge`/`eigh_gauge` write (`1 + 4·why + output`,
    /// the encoding documented in lindiff.cu) decode to the op, output and
    /// reason host-cpu reports.
    #[test]
    fn kernel_codes_decode_to_host_cpus_errors() {
        let e = svd_error(GaugeOf::Svd, 1 + 4 * 2);
        assert_eq!(e, Error::NotDifferentiable { op: "svd", output: "u", why: SVD_NULL });
        let e = svd_error(GaugeOf::SvdTruncated, 1 + 4 * 3 + 1);
        assert_eq!(e, Error::NotDifferentiable { op: "svd_truncated", output: "s", why: SVD_KINK });
        let e = svd_error(GaugeOf::LowRankApprox, 1 + 4 + 2);
        assert_eq!(e, Error::NotDifferentiable { op: "low_rank_approx", output: "a_p", why: SVD_PHASE });
        assert_eq!(
            eigh_error(1 + 8 + 1),
            Error::NotDifferentiable { op: "eigh", output: "w", why: EIGH_VALUES }
        );
        assert_eq!(eigh_error(1), Error::NotDifferentiable { op: "eigh", output: "v", why: EIGH_TIE });
        assert_eq!(eigh_error(5), Error::NotDifferentiable { op: "eigh", output: "v", why: EIGH_PHASE });
    }
}
