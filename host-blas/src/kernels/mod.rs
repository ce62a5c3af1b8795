//! The LAPACK kernels, their dispatch from an op and dtype, and the helpers
//! they share: carving LAPACK's arrays from the lane's scratch, copying
//! strided inputs into column-major buffers, length checks before every
//! pointer goes to Fortran, and the workspace queries (`lwork = -1`).
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
mod svd;
mod triangular_solve;

use crate::lapack::{Lapack, Re};
use faer::dyn_stack::{DynArray, MemStack, StackReq};
use faer::{MatMut, MatRef};
use lindiff_core::{
    DType, Error, Exec, Host, HostBuffer, Input, LinalgOp, Output, RealScalar, Result, Scalar, TensorDesc,
    WorkspaceReq,
};
use lindiff_cpu::kernel_api::{run_kernel, workspace_kernel, Failure, Kernel};

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

/// A kernel of `op` built on the stack and handed to `f`, or `None` when the
/// op has no LAPACK kernel here (the provider then delegates it to host-cpu).
fn with_kernel<T: Lapack, R>(op: &LinalgOp, f: impl FnOnce(&dyn Kernel<T>) -> R) -> Option<R> {
    if let Some(k) = svd::find(op) {
        return Some(f(&k));
    }
    if let Some(k) = qr::find(op) {
        return Some(f(&k));
    }
    if let Some(k) = eigh::find(op) {
        return Some(f(&k));
    }
    if let Some(k) = eig::find(op) {
        return Some(f(&k));
    }
    if let Some(k) = cholesky::find(op) {
        return Some(f(&k));
    }
    if let Some(k) = lu::find(op) {
        return Some(f(&k));
    }
    triangular_solve::find(op).map(|k| f(&k))
}

/// `true` when `op` runs on a LAPACK kernel here (for dtype `dtype`).
pub(crate) fn has_kernel(op: &LinalgOp, dtype: DType) -> bool {
    with_lapack!(dtype, T => with_kernel::<T, ()>(op, |_| ()).is_some()).unwrap_or(false)
}

/// Every dim of every input fits LAPACK's 32-bit integers (as do the
/// products the workspace queries form); otherwise `Unsupported`.
fn check_dims(op: &LinalgOp, inputs: &[&TensorDesc]) -> Result<()> {
    let fits = inputs.iter().all(|d| {
        let dims = d.meta.shape.dims();
        let rows = dims.first().copied().unwrap_or(1);
        let cols = dims.get(1).copied().unwrap_or(1);
        rows.checked_mul(cols).is_some_and(|p| p <= (i32::MAX / 8) as usize)
    });
    if fits {
        Ok(())
    } else {
        Err(Error::Unsupported {
            op: op.name(),
            provider: "blas",
            why: "a matrix is too large for LAPACK's 32-bit sizes",
        })
    }
}

/// The workspace of a LAPACK kernel, or `None` when `op` has none here.
pub(crate) fn workspace(op: &LinalgOp, inputs: &[&TensorDesc], exec: Exec) -> Option<Result<WorkspaceReq>> {
    let dtype = inputs.first()?.meta.dtype;
    with_lapack!(dtype, T => with_kernel::<T, _>(op, |k| {
        check_dims(op, inputs)?;
        Ok(workspace_kernel::<T>(k, inputs, exec))
    }))
    .flatten()
}

/// Runs a LAPACK kernel over the batch, or `None` when `op` has none here.
pub(crate) fn run(
    op: &LinalgOp,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Option<Result<()>> {
    let dtype = inputs.first()?.desc.meta.dtype;
    with_lapack!(dtype, T => with_kernel::<T, _>(op, |k| {
        let descs: heapless::Vec<&TensorDesc, { lindiff_core::op::MAX_INPUTS }> =
            inputs.iter().map(|i| i.desc).collect();
        check_dims(op, &descs)?;
        run_kernel::<T>(op, k, inputs, outputs, workspace, exec)
    }))
    .flatten()
}

/// A size or leading dimension as LAPACK's integer. Every size passed is
/// bounded by a matrix's element count, which `check_dims` keeps ≤ i32::MAX/8.
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
    StackReq::new::<T>(n)
}

/// Carves `n` zeroed elements of `T` from `stack` (zeroed so that LAPACK
/// only ever sees initialised memory).
pub(crate) fn carve<T: Scalar>(stack: &mut MemStack, n: usize) -> (DynArray<'_, T>, &mut MemStack) {
    stack.make_with(n, |_| T::zero())
}

/// Carves `n` zeroed `i32`s from `stack`.
pub(crate) fn carve_int(stack: &mut MemStack, n: usize) -> (DynArray<'_, i32>, &mut MemStack) {
    stack.make_with(n, |_| 0i32)
}

/// A column-major view of `buf` (rows×cols, leading dimension `ld`).
pub(crate) fn view_mut<T: Lapack>(buf: &mut [T], rows: usize, cols: usize, ld: usize) -> MatMut<'_, T> {
    fits(buf.len(), span(rows, cols, ld));
    if rows == 0 || cols == 0 {
        return MatMut::from_column_major_slice_with_stride_mut(&mut buf[..0], rows, cols, ld);
    }
    MatMut::from_column_major_slice_with_stride_mut(buf, rows, cols, ld)
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
pub(crate) unsafe fn out_slice<'a, T: Lapack>(m: &'a mut MatMut<'_, T>) -> &'a mut [T] {
    let (rows, cols) = (m.nrows(), m.ncols());
    if rows == 0 || cols == 0 {
        return &mut [];
    }
    assert!(m.row_stride() == 1 && m.col_stride() == rows as isize, "output is contiguous column-major");
    // SAFETY: a contiguous column-major rows×cols matrix spans exactly
    // rows·cols elements from its first one, all initialised (the caller's
    // contract) and uniquely borrowed through `m` for 'a.
    unsafe { core::slice::from_raw_parts_mut(m.as_ptr_mut(), rows * cols) }
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

/// `Err(NonFinite("a"))` if the lower triangle of `a` has a NaN or infinite
/// entry; on the diagonal only the real part counts (the Hermitian kernels
/// ignore the imaginary part).
pub(crate) fn check_finite_lower<T: Lapack>(a: MatRef<'_, T>) -> core::result::Result<(), Failure> {
    for j in 0..a.ncols() {
        if !Scalar::re(a[(j, j)]).is_finite_real() {
            return Err(Failure::NonFinite("a"));
        }
        for i in j + 1..a.nrows() {
            if !Scalar::is_finite(a[(i, j)]) {
                return Err(Failure::NonFinite("a"));
            }
        }
    }
    Ok(())
}

/// Writes the lower triangle of `a` into `dst` with a real diagonal and
/// zeros strictly above it (every element of `dst` written).
pub(crate) fn copy_lower<T: Lapack>(a: MatRef<'_, T>, mut dst: MatMut<'_, T>) {
    for j in 0..a.ncols() {
        for i in 0..j {
            dst[(i, j)] = T::zero();
        }
        dst[(j, j)] = T::from_real(Scalar::re(a[(j, j)]));
        for i in j + 1..a.nrows() {
            dst[(i, j)] = a[(i, j)];
        }
    }
}

/// phase(x) = x/|x|, and 1 for x = 0.
pub(crate) fn phase<T: Lapack>(x: T) -> T {
    let r = Scalar::abs(x);
    if r == Re::<T>::zero() {
        T::one()
    } else {
        Scalar::scale(x, Re::<T>::one() / r)
    }
}

/// Panics on a negative `info` (an argument LAPACK rejected: a bug here,
/// since every size was checked); returns a positive one.
#[track_caller]
pub(crate) fn info_ok(routine: &str, info: i32) -> i32 {
    assert!(info >= 0, "LAPACK {routine} rejected argument {}", -info);
    info
}
