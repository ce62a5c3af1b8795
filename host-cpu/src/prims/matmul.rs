//! Batched `c = op_a(a) · op_b(b)` through faer's GEMM, reading the strided
//! inputs in place (transposes and conjugations are view flags) and writing
//! each product straight into its slot of the output. One exception: a
//! right-hand side that faer's GEMM reads slowly (row by row with its rows
//! 4 KiB or more apart, in a product whose dimensions are all at least 256,
//! as `a · bᵀ` of column-major 512×512 f64 matrices; `crate::gemm::slow_rhs`)
//! is first copied column-major into the workspace.
//!
//! Products go through [`crate::gemm`], which keeps no-std builds off the
//! heap.

use super::strided::{self, View, Walk};
use crate::batch::par_for;
use crate::field::Field;
use crate::gemm::{matmul_with_conj, slow_rhs};
use faer::{Accum, Conj, MatMut, MatRef};
use lindiff_core::prim::Matmul;
use lindiff_core::{Exec, Host, HostBuffer, Input, MatOp, Output, Result, Scalar, TensorDesc, WorkspaceReq};

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

/// The rows and columns of `op(x)` and its (row, column) strides in
/// elements; `None` for a tensor of rank below 2 (a malformed workspace
/// query: calls are checked before they run).
fn layout(x: &TensorDesc, op: MatOp) -> Option<((usize, usize), (usize, usize))> {
    let (dims, strides) = (x.meta.shape.dims(), &x.strides);
    if dims.len() < 2 || strides.len() < 2 {
        return None;
    }
    Some(match op {
        MatOp::Identity => ((dims[0], dims[1]), (strides[0], strides[1])),
        MatOp::Transpose | MatOp::Adjoint => ((dims[1], dims[0]), (strides[1], strides[0])),
    })
}

/// The shape (k, n) of the column-major copy of `op(b)` that the product
/// makes first (where [`slow_rhs`] says faer's GEMM would read it slowly),
/// or `None` where it reads `op(b)` in place.
fn rhs_copy<T>(op: &Matmul, a: &TensorDesc, b: &TensorDesc) -> Option<(usize, usize)> {
    let ((m, _), _) = layout(a, op.a)?;
    let ((k, n), (row_stride, col_stride)) = layout(b, op.b)?;
    slow_rhs::<T>(m, k, n, stride(row_stride), stride(col_stride)).then_some((k, n))
}

/// The workspace of [`matmul`]: room for the copy of `op(b)` where
/// [`rhs_copy`] makes one (unsatisfiable where its size overflows), else
/// none.
pub(super) fn workspace<T: Field>(op: &Matmul, inputs: &[&TensorDesc]) -> WorkspaceReq {
    match inputs {
        [a, b, ..] => rhs_copy::<T>(op, a, b)
            .map_or(WorkspaceReq::EMPTY, |(k, n)| WorkspaceReq::of::<T>(k.saturating_mul(n))),
        _ => WorkspaceReq::EMPTY,
    }
}

/// The column-major k×n room for the copy of `op(b)` in `workspace`, from
/// its first byte aligned for `T`: `call` has checked that the workspace
/// holds [`workspace`]'s k·n values from there.
fn copy_room<'w, T: Field>(workspace: &'w mut HostBuffer<'_>, k: usize, n: usize) -> MatMut<'w, T> {
    // SAFETY: only initialised `T` values are stored through these bytes
    // (the copy of `op(b)`), so an initialised buffer stays readable.
    let bytes = unsafe { workspace.as_uninit_bytes_mut() };
    let pad = (bytes.as_ptr() as usize).wrapping_neg() & (align_of::<T>() - 1);
    debug_assert!(bytes.len().saturating_sub(pad) >= k * n * size_of::<T>(), "workspace below its request");
    // SAFETY: `pad` bytes in, the pointer is aligned for `T`, and the k·n
    // values from it lie inside `bytes` (the workspace was checked against
    // [`workspace`]'s request, counted from its first aligned byte, before
    // `run_into`), borrowed mutably for 'w; a column-major k×n view with
    // column stride k covers exactly them. Its memory may be uninitialised:
    // the caller writes every entry (`copy_from`) before GEMM reads any.
    unsafe { MatMut::from_raw_parts_mut(bytes.as_mut_ptr().add(pad).cast::<T>(), k, n, 1, k as isize) }
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
    // Column-major room for op(b), where it is copied, and the offset of
    // the b it holds (a b shared by every item is copied once).
    let mut room = rhs_copy::<T>(op, ad, bd).map(|(k, cols)| copy_room::<T>(workspace, k, cols));
    let mut copied: Option<usize> = None;
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
            let rhs = match room.as_mut() {
                Some(room) => {
                    if copied != Some(p.offsets[1]) {
                        room.copy_from(rhs);
                        copied = Some(p.offsets[1]);
                    }
                    room.as_ref()
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
