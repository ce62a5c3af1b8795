//! Batched `c = op_a(a) · op_b(b)` through faer's GEMM, reading the strided
//! inputs in place (transposes and conjugations are view flags) and writing
//! each product straight into its slot of the output. One exception: a
//! large right-hand side read row by row with its rows 4 KiB or more apart
//! (`a · bᴴ` of n×n column-major matrices, n ≥ 512 in f64) is first copied
//! column-major into the workspace. faer's GEMM packs such a factor at a
//! fraction of its usual speed (the rows share cache sets): at n = 512 the
//! product took 7.0 ms against 3.5 ms for `a · b`, and 4.2 ms with the copy;
//! at n = 1024, 58 ms, and 34 ms with the copy.
//!
//! Products go through [`crate::gemm`], which keeps no-std builds off the
//! heap.

use super::strided::{self, View, Walk};
use crate::batch::par_for;
use crate::field::Field;
use crate::gemm::matmul_with_conj;
use faer::reborrow::IntoConst;
use faer::{Accum, Conj, MatMut, MatRef};
use lindiff_core::prim::Matmul;
use lindiff_core::{
    Error, Exec, Host, HostBuffer, Input, MatOp, Output, Result, Scalar, TensorDesc, WorkspaceReq,
};

/// Stride for faer: strides of dims longer than 1 are bounded by the view's
/// span, which fits the buffer (so `isize`); a size-1 dim's stride is never
/// applied and may be anything, so an unrepresentable one becomes 0.
fn stride(s: usize) -> isize {
    isize::try_from(s).unwrap_or(0)
}

/// `op(x)` as a faer view plus its conjugation flag.
fn apply<T: Field>(x: MatRef<'_, T>, op: MatOp) -> (MatRef<'_, T>, Conj) {
    match op {
        MatOp::Identity => (x, Conj::No),
        MatOp::Transpose => (x.transpose(), Conj::No),
        MatOp::Adjoint => (x.transpose(), if <T as Scalar>::IS_COMPLEX { Conj::Yes } else { Conj::No }),
    }
}

/// The rows and columns of `op(b)` and its (row, column) strides in
/// elements.
fn rhs_layout(b: &TensorDesc, op: MatOp) -> ((usize, usize), (usize, usize)) {
    let (dims, strides) = (b.meta.shape.dims(), &b.strides);
    match op {
        MatOp::Identity => ((dims[0], dims[1]), (strides[0], strides[1])),
        MatOp::Transpose | MatOp::Adjoint => ((dims[1], dims[0]), (strides[1], strides[0])),
    }
}

/// Smallest row distance, in bytes, at which a row-major right-hand side is
/// copied (see the module docs).
const ALIASING_ROW_BYTES: usize = 4096;

/// Fewest rows and columns of a right-hand side worth the copy (below, the
/// product is too short for the packing to matter: n = 256 gained nothing).
const COPY_MIN_DIM: usize = 256;

/// Whether `op(b)` is copied column-major before the product: it is read
/// row-major (unit column stride), with rows at least
/// [`ALIASING_ROW_BYTES`] apart, and both its dimensions are at least
/// [`COPY_MIN_DIM`].
fn copies_rhs<T>(op: &Matmul, b: &TensorDesc) -> bool {
    let ((k, n), (row_stride, col_stride)) = rhs_layout(b, op.b);
    col_stride == 1
        && row_stride.saturating_mul(size_of::<T>()) >= ALIASING_ROW_BYTES
        && k >= COPY_MIN_DIM
        && n >= COPY_MIN_DIM
}

/// The workspace of [`matmul`]: room for one column-major copy of `op(b)`
/// where [`copies_rhs`] says so, else none.
pub(super) fn workspace<T: Field>(op: &Matmul, inputs: &[&TensorDesc]) -> WorkspaceReq {
    match inputs.get(1) {
        Some(&b) if copies_rhs::<T>(op, b) => {
            let ((k, n), _) = rhs_layout(b, op.b);
            WorkspaceReq::of::<T>(k * n)
        }
        _ => WorkspaceReq::EMPTY,
    }
}

/// Runs the batched product, one matrix after another, each with faer's
/// parallelism for the team width the exec gives one matrix.
pub(super) fn matmul<T: Field>(
    op: &Matmul,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Result<()> {
    const NAME: &str = "matmul";
    let (ad, bd) = (inputs[0].desc, inputs[1].desc);
    let a = strided::input::<T>(NAME, "a", &inputs[0])?;
    let b = strided::input::<T>(NAME, "b", &inputs[1])?;
    let dims = strided::dims(out);
    let (m, n, batch) = (dims[0], dims[1], &dims[2..]);
    let (a_dims, b_dims) = (ad.meta.shape.dims(), bd.meta.shape.dims());
    let (a_str, b_str) = (&ad.strides, &bd.strides);
    let par = par_for(exec.plan(batch.iter().product()).threads_per_matrix);
    let c = strided::output::<T>(NAME, "c", out)?;
    // Column-major room for op(b), where it is copied.
    let mut rhs_copy = if copies_rhs::<T>(op, bd) {
        let ((k, cols), _) = rhs_layout(bd, op.b);
        let room = workspace.typed_mut::<T>().and_then(|w| w.get_mut(..k * cols));
        let too_small =
            || Error::Buffer { op: NAME, arg: "workspace", why: "is too small", needed: k * cols, got: 0 };
        Some(room.ok_or_else(too_small)?)
    } else {
        None
    };
    let per = m * n;
    if per > 0 {
        // Item base offsets of a and b, in batch order (all share batch dims).
        let items =
            Walk::new(batch, [View::new(&[&a_str[2..]], ad.offset), View::new(&[&b_str[2..]], bd.offset)]);
        for (c_item, p) in c.chunks_exact_mut(per).zip(items) {
            // SAFETY: `lindiff_core::call` checked that every element of a's
            // view (offset + Σ index·stride) lies inside its buffer `a`, and
            // this item's elements are those with its batch indices; the
            // pointer is aligned (`a` is a typed slice), and faer only reads
            // through it while `a` is borrowed. Same for `b` below.
            let a_mat = unsafe {
                MatRef::from_raw_parts(
                    a.as_ptr().wrapping_add(p.offsets[0]),
                    a_dims[0],
                    a_dims[1],
                    stride(a_str[0]),
                    stride(a_str[1]),
                )
            };
            // SAFETY: as for `a` above.
            let b_mat = unsafe {
                MatRef::from_raw_parts(
                    b.as_ptr().wrapping_add(p.offsets[1]),
                    b_dims[0],
                    b_dims[1],
                    stride(b_str[0]),
                    stride(b_str[1]),
                )
            };
            // SAFETY: `c_item` is this item's m·n elements, uniquely
            // borrowed and aligned; column-major m×n with column stride m
            // covers exactly them. faer's `Accum::Replace` writes every
            // element without reading the old (uninitialised) values, and
            // zero-fills when the inner dimension is 0.
            let c_mat =
                unsafe { MatMut::from_raw_parts_mut(c_item.as_mut_ptr().cast::<T>(), m, n, 1, m as isize) };
            let (lhs, conj_lhs) = apply(a_mat, op.a);
            let (rhs, conj_rhs) = apply(b_mat, op.b);
            let rhs = match rhs_copy.as_deref_mut() {
                Some(room) => {
                    let mut copy = MatMut::from_column_major_slice_mut(room, rhs.nrows(), rhs.ncols());
                    copy.copy_from(rhs);
                    copy.into_const()
                }
                None => rhs,
            };
            matmul_with_conj(c_mat, Accum::Replace, lhs, conj_lhs, rhs, conj_rhs, <T as Scalar>::one(), par);
        }
    }
    // SAFETY: the loop above ran one `Replace` product per batch item over
    // the disjoint `per`-element chunks that tile the output (`Walk` yields
    // one position per item, the chunk count); with `per == 0` there is
    // nothing to write.
    unsafe { strided::finish::<T>(out) };
    Ok(())
}
