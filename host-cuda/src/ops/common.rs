//! What every device op shares: the call's pieces (inputs, outputs, the
//! workspace start), strided gathers into contiguous scratch, the info
//! check that turns cuSOLVER's per-matrix `info` into the lowest failing
//! batch index, and dtype names of the NVRTC entry points.

use crate::context::Gpu;
use crate::error::{driver, unsupported};
use crate::launch::launch;
use crate::memory::{pad_to, Device, DeviceBuffer};
use crate::nvrtc::{View, Walk};
use lindiff_core::{DType, Error, Input, Output, Result, TensorDesc, TensorMeta};

/// One device call's arguments as each op family's `run` takes them: the
/// inputs, the outputs (the present ones are written) and the workspace.
pub(crate) struct Call<'c, 'i, 'o, 'm: 'o, 'w> {
    /// The op's inputs (device views, any strides).
    pub(crate) inputs: &'c [Input<'i, Device>],
    /// The op's outputs; `None` where the caller does not want one.
    pub(crate) outputs: &'c mut [Option<Output<'o, 'm, Device>>],
    /// The workspace the family's `workspace` asked for.
    pub(crate) ws: &'c mut DeviceBuffer<'w>,
}

/// The kernel-name suffix of a float dtype.
pub(crate) fn suffix(op: &'static str, dtype: DType) -> Result<&'static str> {
    Ok(match dtype {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::C32 => "c32",
        DType::C64 => "c64",
        _ => return Err(unsupported(op, "the CUDA provider computes in f32, f64, c32 and c64")),
    })
}

/// The device address of an input's data (its view offset is applied by
/// the kernels' [`View`]).
pub(crate) fn input_ptr(input: &Input<'_, Device>) -> u64 {
    input.data.device_ptr()
}

/// The device address of a present output, marking it written.
pub(crate) fn output_ptr(outputs: &mut [Option<Output<'_, '_, Device>>], i: usize) -> Option<u64> {
    outputs.get_mut(i).and_then(|o| o.as_mut()).map(|o| {
        o.buffer.mark_written();
        o.buffer.device_ptr()
    })
}

/// The meta of output `i` if present.
pub(crate) fn output_meta<'a>(
    outputs: &'a [Option<Output<'_, '_, Device>>],
    i: usize,
) -> Option<&'a TensorMeta> {
    outputs.get(i).and_then(|o| o.as_ref()).map(|o| o.meta)
}

/// The aligned start of the workspace buffer (regions of a
/// [`Layout`](crate::carve::Layout) are offsets from it).
pub(crate) fn workspace_base(ws: &DeviceBuffer<'_>) -> u64 {
    ws.device_ptr() + pad_to(ws.device_ptr(), crate::carve::REGION_ALIGN) as u64
}

/// Rows, cols and batch count of a matrix argument `[rows, cols, batch…]`.
pub(crate) fn matrix_dims(desc: &TensorDesc) -> (usize, usize, usize) {
    let dims = desc.meta.shape.dims();
    let batch = dims[2..].iter().product();
    (dims[0], dims[1], batch)
}

/// Copies `input` (any strides) into contiguous column-major order at `dst`,
/// converting to `to` (same dtype or its real/complex relative).
pub(crate) fn gather(gpu: &Gpu, dst: u64, input: &Input<'_, Device>, to: DType) -> Result<()> {
    map(gpu, 0, dst, input, to, 0.0, [0; 4])
}

/// Launches `map_<in>_<out>` with `code` over `input`'s own dims.
pub(crate) fn map(
    gpu: &Gpu,
    code: i32,
    dst: u64,
    input: &Input<'_, Device>,
    to: DType,
    p0: f64,
    pad: [usize; 4],
) -> Result<()> {
    let desc = input.desc;
    map_view(
        gpu,
        code,
        dst,
        input_ptr(input),
        desc.meta.dtype,
        to,
        Walk::new(desc.meta.shape.dims()),
        View::of(desc),
        p0,
        pad,
    )
}

/// Launches `map_<from>_<to>` with an explicit walk and view.
#[allow(clippy::too_many_arguments)]
pub(crate) fn map_view(
    gpu: &Gpu,
    code: i32,
    dst: u64,
    src: u64,
    from: DType,
    to: DType,
    walk: Walk,
    view: View,
    p0: f64,
    pad: [usize; 4],
) -> Result<()> {
    let name = format!("map_{}_{}", suffix("map", from)?, suffix("map", to)?);
    let [r0, c0, rows, cols] = pad.map(|v| v as i64);
    launch!(gpu, name, walk.count, [code, dst, src, walk, view, p0, r0, c0, rows, cols])
}

/// Walk and view of a contiguous `rows×cols` block of a column-major
/// matrix batch (leading dim `ld`, item stride `item`), `conj_transpose`
/// reading it as its adjoint (the walk is then `cols×rows`).
pub(crate) fn block(
    rows: usize,
    cols: usize,
    batch: usize,
    ld: usize,
    item: usize,
    transpose: bool,
) -> (Walk, View) {
    if transpose {
        (Walk::new(&[cols, rows, batch]), View::new(0, &[ld, 1, item]))
    } else {
        (Walk::new(&[rows, cols, batch]), View::new(0, &[1, ld, item]))
    }
}

/// Checks cuSOLVER's `info` words (`batch` of them at `info`): returns the
/// lowest batch index with `info ≠ 0`, using one i64 of scratch at
/// `scratch`. Synchronises the stream.
pub(crate) fn first_failure(gpu: &Gpu, info: u64, batch: usize, scratch: u64) -> Result<Option<usize>> {
    if batch == 0 {
        return Ok(None);
    }
    launch!(gpu, "first_failure", 1, [scratch, info, batch as i64])?;
    let mut index = [0i64; 1];
    // SAFETY: `scratch` is an i64 region of the workspace the kernel just
    // wrote; the copy completes before `sync` returns.
    unsafe {
        cudarc::driver::result::memcpy_dtoh_async(&mut index[..], scratch, gpu.stream.cu_stream())
            .map_err(driver)?;
    }
    gpu.sync()?;
    Ok(usize::try_from(index[0]).ok())
}

/// Zeroes `bytes` device bytes at `dst`.
pub(crate) fn zero(gpu: &Gpu, dst: u64, bytes: usize) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: `dst..dst + bytes` is inside a buffer the caller owns.
    unsafe { cudarc::driver::result::memset_d8_async(dst, 0, bytes, gpu.stream.cu_stream()) }.map_err(driver)
}

/// Host scratch some 64-bit cuSOLVER routines ask for (usually none).
/// Queued routines may still use it after they return, so it is never
/// freed before the stream has finished: [`HostScratch::release`] waits
/// (and reports a failed wait), and dropping it — an early `?` return
/// between the launch and the release — waits too.
pub(crate) struct HostScratch<'g> {
    gpu: &'g Gpu,
    bytes: Vec<u8>,
}

/// `bytes` of host scratch for routines queued on `gpu`'s stream.
pub(crate) fn host_scratch(gpu: &Gpu, bytes: usize) -> HostScratch<'_> {
    HostScratch { gpu, bytes: vec![0u8; bytes] }
}

impl HostScratch<'_> {
    /// The scratch's address for a cuSOLVER call.
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr()
    }

    /// Waits for the stream (when there is any scratch), then frees it.
    /// When the wait fails the bytes are leaked, not freed: the device
    /// may not have finished with them.
    pub(crate) fn release(mut self) -> Result<()> {
        if self.bytes.is_empty() {
            return Ok(());
        }
        let bytes = core::mem::take(&mut self.bytes);
        match self.gpu.sync() {
            Ok(()) => {
                drop(bytes);
                Ok(())
            }
            Err(e) => {
                core::mem::forget(bytes);
                Err(e)
            }
        }
    }
}

impl Drop for HostScratch<'_> {
    fn drop(&mut self) {
        if !self.bytes.is_empty() && self.gpu.sync().is_err() {
            core::mem::forget(core::mem::take(&mut self.bytes));
        }
    }
}

/// Marks every present output written, for an early return on an empty
/// shape (a zero batch or zero-sized matrices), where every output holds
/// no elements and nothing is left to write.
pub(crate) fn empty_outputs_written(outputs: &mut [Option<Output<'_, '_, Device>>]) {
    for i in 0..outputs.len() {
        output_ptr(outputs, i);
    }
}

/// An `i32` size for a 32-bit cuSOLVER/cuBLAS API, or `Unsupported`.
pub(crate) fn int(op: &'static str, v: usize) -> Result<i32> {
    i32::try_from(v)
        .map_err(|_| unsupported(op, "a size exceeds the 32-bit range of the cuSOLVER/cuBLAS routine"))
}

/// `Error::NonConvergence` etc. helpers keep op names in one place.
pub(crate) fn non_convergence(op: &'static str, batch_index: usize) -> Error {
    Error::NonConvergence { op, batch_index }
}

/// Flags (in `flags`, one i32 per item) the items of the contiguous batch
/// at `x` (`per_item` elements of dtype suffix `suffix` each) holding NaN
/// or ∞, and returns the lowest flagged index (`scratch`: one i64).
pub(crate) fn first_nonfinite(
    gpu: &Gpu,
    suffix: &str,
    x: u64,
    per_item: usize,
    batch: usize,
    flags: u64,
    scratch: u64,
) -> Result<Option<usize>> {
    if batch == 0 || per_item == 0 {
        return Ok(None);
    }
    let kernel = format!("nonfinite_flags_{suffix}");
    launch!(gpu, kernel, batch, [flags, x, per_item as i64, batch as i64])?;
    first_failure(gpu, flags, batch, scratch)
}

/// Which part of an n×n matrix [`first_nonfinite_tri`] checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// `i ≥ j`.
    Lower = 1,
    /// `i ≤ j`.
    Upper = 2,
}

/// As [`first_nonfinite`] for the contiguous batch of n×n matrices at `x`,
/// reading only the triangle `part` (without the diagonal when `unit`).
/// `hermitian` first zeroes the imaginary part of each diagonal entry in
/// place (a Hermitian input's diagonal is read as real, as on the host), so `x`
/// must then be workspace or output memory, never an input.
#[allow(clippy::too_many_arguments)]
pub(crate) fn first_nonfinite_tri(
    gpu: &Gpu,
    suffix: &str,
    x: u64,
    n: usize,
    batch: usize,
    (part, unit, hermitian): (Part, bool, bool),
    flags: u64,
    scratch: u64,
) -> Result<Option<usize>> {
    if batch == 0 || n == 0 {
        return Ok(None);
    }
    let kernel = format!("nonfinite_tri_{suffix}");
    let (part, unit, herm) = (part as i32, i32::from(unit), i32::from(hermitian));
    launch!(gpu, kernel, batch, [flags, x, n as i64, part, unit, herm, batch as i64])?;
    first_failure(gpu, flags, batch, scratch)
}

/// `cusolver rejected argument N (info = -N)` for N in 1..=24.
const REJECTED: [&str; 24] = [
    "rejected argument 1 (info = -1)",
    "rejected argument 2 (info = -2)",
    "rejected argument 3 (info = -3)",
    "rejected argument 4 (info = -4)",
    "rejected argument 5 (info = -5)",
    "rejected argument 6 (info = -6)",
    "rejected argument 7 (info = -7)",
    "rejected argument 8 (info = -8)",
    "rejected argument 9 (info = -9)",
    "rejected argument 10 (info = -10)",
    "rejected argument 11 (info = -11)",
    "rejected argument 12 (info = -12)",
    "rejected argument 13 (info = -13)",
    "rejected argument 14 (info = -14)",
    "rejected argument 15 (info = -15)",
    "rejected argument 16 (info = -16)",
    "rejected argument 17 (info = -17)",
    "rejected argument 18 (info = -18)",
    "rejected argument 19 (info = -19)",
    "rejected argument 20 (info = -20)",
    "rejected argument 21 (info = -21)",
    "rejected argument 22 (info = -22)",
    "rejected argument 23 (info = -23)",
    "rejected argument 24 (info = -24)",
];

/// The error for a negative cuSOLVER `info`: the routine rejected argument
/// `-info` (a lindiff bug or a size it does not take, never a property of
/// the matrix), as `InvalidOption { option: "cusolver", … }`.
pub(crate) fn rejected(op: &'static str, info: i32) -> Error {
    let why = usize::try_from(-(info as i64))
        .ok()
        .and_then(|i| REJECTED.get(i.wrapping_sub(1)))
        .copied()
        .unwrap_or("rejected an argument (info < -24)");
    Error::InvalidOption { op, option: "cusolver", why }
}

/// Checks cuSOLVER's `info` words (`batch` i32 at `info`, `scratch` one
/// i64): `Ok` when all are 0; for the lowest failing item `b`, a negative
/// word is [`rejected`], a positive one `positive(b)` (the op's typed
/// error). Synchronises the stream.
pub(crate) fn check_info(
    gpu: &Gpu,
    op: &'static str,
    info: u64,
    batch: usize,
    scratch: u64,
    positive: impl FnOnce(usize) -> Error,
) -> Result<()> {
    let Some(b) = first_failure(gpu, info, batch, scratch)? else { return Ok(()) };
    let word = read_i32(gpu, info + (b * 4) as u64)?;
    Err(if word < 0 { rejected(op, word) } else { positive(b) })
}

/// Fails with [`rejected`] when cuSOLVER answered a negative `info` (for a
/// routine whose positive `info` is no error: getrf's singular U, getrs).
/// Argument errors depend on sizes and options, shared by every item, so
/// the lowest nonzero item tells.
pub(crate) fn reject_negative(
    gpu: &Gpu,
    op: &'static str,
    info: u64,
    batch: usize,
    scratch: u64,
) -> Result<()> {
    let Some(b) = first_failure(gpu, info, batch, scratch)? else { return Ok(()) };
    let word = read_i32(gpu, info + (b * 4) as u64)?;
    if word < 0 {
        Err(rejected(op, word))
    } else {
        Ok(())
    }
}

/// Reads one `i32` of device memory at `at` (synchronises the stream).
pub(crate) fn read_i32(gpu: &Gpu, at: u64) -> Result<i32> {
    let mut v = [0i32; 1];
    // SAFETY: `at` is an i32 of a workspace region written by an earlier
    // launch on this stream; the copy completes before `sync` returns.
    unsafe {
        cudarc::driver::result::memcpy_dtoh_async(&mut v[..], at, gpu.stream.cu_stream()).map_err(driver)?;
    }
    gpu.sync()?;
    Ok(v[0])
}

/// cuSOLVER's `jobz`: with or without vectors (SVD, eigh, eig).
pub(crate) fn jobz(vectors: bool) -> cudarc::cusolver::sys::cusolverEigMode_t {
    use cudarc::cusolver::sys::cusolverEigMode_t as Mode;
    if vectors {
        Mode::CUSOLVER_EIG_MODE_VECTOR
    } else {
        Mode::CUSOLVER_EIG_MODE_NOVECTOR
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_info_names_the_rejected_argument() {
        let e = rejected("cholesky", -4);
        assert_eq!(e.to_string(), "cholesky: option `cusolver` rejected argument 4 (info = -4)");
        assert!(matches!(
            rejected("qr", -24),
            Error::InvalidOption { why: "rejected argument 24 (info = -24)", .. }
        ));
        assert!(matches!(
            rejected("qr", -25),
            Error::InvalidOption { why: "rejected an argument (info < -24)", .. }
        ));
        assert!(matches!(rejected("qr", i32::MIN), Error::InvalidOption { .. }));
    }
}
