//! The LAPACK kernels, their dispatch from an op and dtype, and the helpers
//! they share: carving LAPACK's arrays from the lane's scratch (zeroed, or
//! uninitialised for arrays LAPACK only writes), copying strided inputs into
//! column-major buffers with the non-finite check in the same pass, length
//! checks before every pointer goes to Fortran, and the workspace queries
//! (`lwork = -1`, remembered per thread in `query_cache`).
//!
//! Every kernel implements host-cpu's [`Kernel`] for a small local struct
//! (host-cpu's batching runs it: lanes, scratch regions, typed errors). The
//! structs are built on the stack per call; the `find` of each family maps
//! its ops to them.

mod cholesky;
mod eig;
mod eigh;
mod lu;
mod qr;
mod query_cache;
mod svd;
mod triangular_solve;

use crate::lapack::Lapack;
use core::mem::MaybeUninit;
use faer::dyn_stack::{DynArray, MemStack, StackReq};
use faer::reborrow::ReborrowMut;
use faer::{MatMut, MatRef};
use lindiff_core::{
    DType, Exec, Host, HostBuffer, Input, LinalgOp, Output, RealScalar, Result, Scalar, TensorDesc,
    WorkspaceReq,
};
use lindiff_cpu::kernel_api::{
    copy_finite, lower_finite, outputs_in_range, packed_mut, phase, run_kernel, workspace_kernel, Failure,
    Kernel,
};

/// Runs `$body` with `$T` the Rust type of `$dtype`; `None` for a dtype
/// LAPACK has no routines for (i64).
macro_rules! with_lapack {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            DType::F32 => {
                type $T = f32;
                Some($body)
            }
            DType::F64 => {
                type $T = f64;
                Some($body)
            }
            DType::C32 => {
                type $T = num_complex::Complex<f32>;
                Some($body)
            }
            DType::C64 => {
                type $T = num_complex::Complex<f64>;
                Some($body)
            }
            _ => None,
        }
    };
}

/// The LAPACK kernel of `op`, built on the stack and handed to `f`, or
/// `None` when `op` has none here (the provider then runs host-cpu's). Every
/// op is named (no wildcard): a new op does not compile until it has an arm.
fn with_kernel<T: Lapack, R>(op: &LinalgOp, f: impl FnOnce(&dyn Kernel<T>) -> R) -> Option<R> {
    use eig::EigKernel;
    use eigh::EighKernel;
    use lu::LuKernel;
    use qr::QrKernel;
    use svd::SvdKernel;
    Some(match op {
        LinalgOp::Svd(k) => f(&SvdKernel::thin(&k.0)),
        LinalgOp::SvdVals(k) => f(&SvdKernel::values(&k.0)),
        LinalgOp::SvdFull(k) => f(&SvdKernel::full(&k.0)),
        LinalgOp::SvdTruncated(k) => f(&SvdKernel::truncated(k.0)),
        LinalgOp::Qr(k) => f(&QrKernel::Plain(k.0.mode)),
        LinalgOp::RankRevealingQr(k) => f(&QrKernel::Pivoted(k.0)),
        LinalgOp::Eigh(_) => f(&EighKernel { vectors: true }),
        LinalgOp::EighVals(_) => f(&EighKernel { vectors: false }),
        LinalgOp::Eig(_) => f(&EigKernel { vectors: true }),
        LinalgOp::EigVals(_) => f(&EigKernel { vectors: false }),
        LinalgOp::Cholesky(_) => f(&cholesky::CholeskyKernel),
        LinalgOp::Lu(_) => f(&LuKernel::Unpacked),
        LinalgOp::LuFactor(_) => f(&LuKernel::Factor),
        LinalgOp::LuFactorSolve(k) => f(&LuKernel::FactorSolve(k.0)),
        LinalgOp::LuSolvePrepared(k) => f(&LuKernel::SolvePrepared(k.0, k.1)),
        LinalgOp::TriangularSolve(k) => f(&triangular_solve::TriangularSolveKernel(k.0)),
        // Compact Householder ops are in faer's reflector form; LAPACK has no
        // full-pivot LU driver; the determinant, the adjugate, the SVD
        // recombinations and the Hermitian matrix functions run host-cpu's
        // kernels (over faer).
        LinalgOp::HouseholderQrFactor(_)
        | LinalgOp::HouseholderQrAppend(_)
        | LinalgOp::HouseholderQrQ(_)
        | LinalgOp::HouseholderQrR(_)
        | LinalgOp::HouseholderQrApply(_)
        | LinalgOp::FullPivLu(_)
        | LinalgOp::FullPivLuFactor(_)
        | LinalgOp::FullPivLuSolve(_)
        | LinalgOp::FullPivLuSolvePrepared(_)
        | LinalgOp::Det(_)
        | LinalgOp::Slogdet(_)
        | LinalgOp::FunmHermitian(_)
        | LinalgOp::FunmHermitianFactors(_)
        | LinalgOp::FunmHermitianFrechet(_)
        | LinalgOp::FunmHermitianSecond(_)
        | LinalgOp::Expm(_)
        | LinalgOp::ExpmFrechet(_)
        | LinalgOp::ExpmFactors(_)
        | LinalgOp::ExpmFrechetFactored(_)
        | LinalgOp::Logm(_)
        | LinalgOp::LogmFrechet(_)
        | LinalgOp::Sqrtm(_)
        | LinalgOp::SqrtmFrechet(_)
        | LinalgOp::Adjugate(_)
        | LinalgOp::LowRankApprox(_)
        | LinalgOp::Polar(_)
        | LinalgOp::Pinv(_)
        | LinalgOp::Lstsq(_)
        | LinalgOp::MatrixRank(_) => return None,
    })
}

/// `true` when `op` runs on a LAPACK kernel here (for dtype `dtype`).
pub(crate) fn has_kernel(op: &LinalgOp, dtype: DType) -> bool {
    with_lapack!(dtype, T => with_kernel::<T, ()>(op, |_| ()).is_some()).unwrap_or(false)
}

/// `true` when every dim of every input fits LAPACK's 32-bit integers (as
/// do the products the workspace queries form); otherwise the op runs on
/// host-cpu's kernels (`workspace` and `run` agree, both from the layouts).
fn dims_fit<'d>(mut inputs: impl Iterator<Item = &'d TensorDesc>) -> bool {
    inputs.all(|d| {
        let dims = d.meta.shape.dims();
        let rows = dims.first().copied().unwrap_or(1);
        let cols = dims.get(1).copied().unwrap_or(1);
        rows.checked_mul(cols).is_some_and(|p| p <= (i32::MAX / 8) as usize)
    })
}

/// The workspace of a LAPACK kernel, or `None` when `op` has none here (or
/// a matrix too large for LAPACK's 32-bit sizes, which host-cpu runs).
pub(crate) fn workspace(op: &LinalgOp, inputs: &[&TensorDesc], exec: Exec) -> Option<Result<WorkspaceReq>> {
    let dtype = inputs.first()?.meta.dtype;
    if !dims_fit(inputs.iter().copied()) {
        return None;
    }
    with_lapack!(dtype, T => with_kernel::<T, _>(op, |k| Ok(workspace_kernel::<T>(k, inputs, exec))))
        .flatten()
}

/// Runs a LAPACK kernel over the batch, or `None` when `op` has none here.
///
/// # Safety
/// The arguments must have passed `lindiff_core::call`'s checks (see
/// [`Provider::run_into`](lindiff_core::Provider::run_into)).
pub(crate) unsafe fn run(
    op: &LinalgOp,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Option<Result<()>> {
    let dtype = inputs.first()?.desc.meta.dtype;
    // Again per call, not only in `workspace`: LAPACK's own 32-bit size
    // products (e.g. ?syevd's LWMIN) overflow past these limits; such a
    // matrix runs on host-cpu, as `workspace` sized it.
    if !dims_fit(inputs.iter().map(|i| i.desc)) {
        return None;
    }
    with_lapack!(dtype, T => with_kernel::<T, _>(op, |k| {
        // SAFETY: `call`'s checks are this function's contract; every
        // LAPACK kernel here writes each element of its item's present
        // outputs on `Ok` and reads none before writing it (the `Kernel`
        // contract, read from each kernel; tests/tests/prefill.rs, on this
        // provider too, finds the outputs of the ops it covers independent
        // of the memory's previous contents).
        unsafe { run_kernel::<T>(op.name(), k, inputs, outputs, workspace, exec) }
    }))
    .flatten()
    .map(|ran| ran.and_then(|()| outputs_in_range(op, inputs, outputs)))
}

/// A size or leading dimension as LAPACK's integer. Every size passed is
/// bounded by a matrix's element count, which `dims_fit` keeps ≤ i32::MAX/8.
pub(crate) fn int(n: usize) -> i32 {
    i32::try_from(n).expect("dims checked against i32 before the call")
}

/// LAPACK's leading dimension for `rows` rows: max(1, rows).
pub(crate) fn ld(rows: usize) -> usize {
    rows.max(1)
}

/// Elements a column-major rows×cols array with leading dimension `ld`
/// spans (0 when empty).
pub(crate) fn span(rows: usize, cols: usize, ld: usize) -> usize {
    if rows == 0 || cols == 0 {
        0
    } else {
        (cols - 1) * ld + rows
    }
}

/// Checks that a slice of `len` elements holds `needed`, before its pointer
/// goes to Fortran. A failure is a sizing bug here, never bad input (core
/// checked the input), so it panics rather than let LAPACK run past the end.
#[track_caller]
pub(crate) fn fits(len: usize, needed: usize) {
    assert!(len >= needed, "LAPACK array of {len} elements, {needed} needed");
}

/// An `lwork`-style size LAPACK returned in a work array (as a float),
/// rounded up; at least `min`.
pub(crate) fn queried<R: RealScalar>(x: R, min: usize) -> usize {
    let v = x.to_f64();
    // f32 queries round large sizes down: add a relative margin.
    let v = if v.is_finite() && v > 0.0 { (v * (1.0 + 1e-6)).ceil() as usize } else { 0 };
    v.max(min).max(1)
}

/// The `lwork` of a query answered in `work[0]` (a `T`).
pub(crate) fn queried_work<T: Lapack>(w: T, min: usize) -> usize {
    queried(Scalar::re(w), min)
}

/// `n` elements of `T` (scratch size of [`carve`]).
pub(crate) fn req<T>(n: usize) -> StackReq {
    StackReq::new_aligned::<T>(n, ALIGN)
}

/// Alignment of every array carved for LAPACK: a cache line, wherever the
/// caller's workspace starts and whatever the shapes (OpenBLAS at n = 32–128
/// ran several % slower on 16-byte-aligned arrays).
const ALIGN: usize = 64;

/// Carves `n` zeroed elements of `T` from `stack` (zeroed so that LAPACK
/// only ever sees initialised memory).
pub(crate) fn carve<T: Scalar>(stack: &mut MemStack, n: usize) -> (DynArray<'_, T>, &mut MemStack) {
    stack.make_aligned_with(n, ALIGN, |_| T::zero())
}

/// Carves `n` zeroed `i32`s from `stack`.
pub(crate) fn carve_int(stack: &mut MemStack, n: usize) -> (DynArray<'_, i32>, &mut MemStack) {
    stack.make_aligned_with(n, ALIGN, |_| 0i32)
}

/// Carves `n` uninitialised elements of `T` from `stack`, for an array
/// LAPACK only writes (work arrays, outputs it fills): passed as a pointer
/// ([`uninit_ptr`]), read only where LAPACK wrote it ([`written`]).
pub(crate) fn carve_uninit<T>(stack: &mut MemStack, n: usize) -> (&mut [MaybeUninit<T>], &mut MemStack) {
    stack.make_aligned_uninit(n, ALIGN)
}

/// The pointer of an uninitialised array, for LAPACK to write.
pub(crate) fn uninit_ptr<T>(buf: &mut [MaybeUninit<T>]) -> *mut T {
    buf.as_mut_ptr().cast()
}

/// The first `len` elements of `buf` as initialised values.
///
/// # Safety
/// Every one of them must have been written (by LAPACK, for a routine that
/// returned `info = 0` and fills them).
pub(crate) unsafe fn written<T>(buf: &[MaybeUninit<T>], len: usize) -> &[T] {
    let buf = &buf[..len];
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the caller guarantees
    // the elements are initialised.
    unsafe { core::slice::from_raw_parts(buf.as_ptr().cast(), len) }
}

/// A column-major rows×cols view (leading dimension `ld`) of uninitialised
/// scratch, to be written in full before it is read (as an output's
/// memory is, see `Item::out_mat`).
pub(crate) fn uninit_view<T: Lapack>(
    buf: &mut [MaybeUninit<T>],
    rows: usize,
    cols: usize,
    ld: usize,
) -> MatMut<'_, T> {
    fits(buf.len(), span(rows, cols, ld));
    // SAFETY: the view's elements (i + j·ld, i < rows, j < cols) lie inside
    // `buf` (checked above), which is uniquely borrowed; `MaybeUninit<T>`
    // has `T`'s layout. The caller writes before reading.
    unsafe { MatMut::from_raw_parts_mut(uninit_ptr(buf), rows, cols, 1, ld.max(1) as isize) }
}

/// A column-major view of `buf` (rows×cols, leading dimension `ld`).
pub(crate) fn view_mut<T: Lapack>(buf: &mut [T], rows: usize, cols: usize, ld: usize) -> MatMut<'_, T> {
    fits(buf.len(), span(rows, cols, ld));
    if rows == 0 || cols == 0 {
        return MatMut::from_column_major_slice_with_stride_mut(&mut buf[..0], rows, cols, ld);
    }
    MatMut::from_column_major_slice_with_stride_mut(buf, rows, cols, ld)
}

/// The pointer of `m` for LAPACK as an array with leading dimension `ld`,
/// after checking that `m` is laid out so (unit row stride, column stride
/// `ld`, ld ≥ rows): LAPACK then accesses exactly `m`'s elements.
pub(crate) fn mat_ptr<T: Lapack>(m: &mut MatMut<'_, T>, ld: usize) -> *mut T {
    let (rows, cols) = (m.nrows(), m.ncols());
    assert!(ld >= rows.max(1), "leading dimension {ld} below {rows} rows");
    if rows > 0 && cols > 0 {
        assert!(m.row_stride() == 1, "LAPACK array has unit row stride");
        assert!(cols == 1 || m.col_stride() == ld as isize, "LAPACK array has column stride {ld}");
    }
    m.as_ptr_mut()
}

/// Copies the strided `a` into `buf` (column-major, leading dimension `ld`).
pub(crate) fn copy_in<T: Lapack>(a: MatRef<'_, T>, buf: &mut [T], ld: usize) {
    view_mut(buf, a.nrows(), a.ncols(), ld).copy_from(a);
}

/// The contiguous column-major storage of an output matrix (as `Item`
/// hands it out: unit row stride, column stride = rows) as a slice.
///
/// # Safety
/// Every element of `m` must be initialised.
pub(crate) unsafe fn init_out_slice<'a, T: Lapack>(m: &'a mut MatMut<'_, T>) -> &'a mut [T] {
    if m.nrows() == 0 || m.ncols() == 0 {
        return &mut [];
    }
    packed_mut(m.rb_mut()).expect("output is contiguous column-major")
}

/// An input matrix already in LAPACK's layout (unit row stride, column
/// stride ≥ max(1, rows)) as a slice and its leading dimension; `None` when
/// it must be copied first.
pub(crate) fn in_place<'a, T: Lapack>(a: MatRef<'a, T>) -> Option<(&'a [T], usize)> {
    let (rows, cols) = (a.nrows(), a.ncols());
    if rows == 0 || cols == 0 {
        return Some((&[], ld(rows)));
    }
    let cs = a.col_stride();
    if a.row_stride() != 1 || cs < rows as isize || (cols > 1 && cs <= 0) {
        return None;
    }
    let ld = if cols == 1 { ld(rows) } else { cs as usize };
    // SAFETY: the view's elements are (i + j·ld) for i < rows, j < cols, all
    // inside the caller's initialised input (checked by `lindiff_core::call`
    // for the whole view), so the span from the first element to the last
    // lies inside it; elements in between (padding of a strided column) are
    // input elements too, initialised.
    Some((unsafe { core::slice::from_raw_parts(a.as_ptr(), span(rows, cols, ld)) }, ld))
}

/// `true` when every entry of `m` is finite.
pub(crate) fn all_finite<T: Lapack>(m: MatRef<'_, T>) -> bool {
    lindiff_cpu::kernel_api::all_finite(m)
}

/// `Err(NonFinite(arg))` when `m` has a NaN or infinite entry.
pub(crate) fn check_finite<T: Lapack>(
    m: MatRef<'_, T>,
    arg: &'static str,
) -> core::result::Result<(), Failure> {
    if all_finite(m) {
        Ok(())
    } else {
        Err(Failure::NonFinite(arg))
    }
}

/// Copies `a` into `dst` (same shape) with a real diagonal; `true` when the
/// lower triangle is finite (on the diagonal only the real part counts: the
/// Hermitian kernels ignore the imaginary part). Entries above the diagonal
/// are `a`'s, checked or not: the kernels pass UPLO = 'L', and LAPACK does
/// not reference them. The check is one pass over the whole matrix while it
/// is copied, and only when that finds a NaN/∞ the precise one over the
/// lower triangle ([`lower_finite`], whose own first pass over the whole
/// matrix then fails too: a rare input's cost, not worth a second entry).
pub(crate) fn copy_lower_finite<T: Lapack>(a: MatRef<'_, T>, mut dst: MatMut<'_, T>) -> bool {
    let ok = copy_finite(a, dst.rb_mut(), "a").is_ok() || lower_finite(a);
    if <T as Scalar>::IS_COMPLEX {
        for j in 0..a.ncols() {
            dst[(j, j)] = T::from_real(Scalar::re(a[(j, j)]));
        }
    }
    ok
}

/// Panics on a negative `info` (an argument LAPACK rejected: a bug here,
/// since every size was checked); returns a positive one.
#[track_caller]
pub(crate) fn info_ok(routine: &str, info: i32) -> i32 {
    assert!(info >= 0, "LAPACK {routine} rejected argument {}", -info);
    info
}
