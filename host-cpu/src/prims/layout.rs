//! Primitives that move elements: transpose/adjoint (swapped strides),
//! reductions over the leading dims and their broadcast (zero strides),
//! reshapes, and matrix blocks (slice) with their zero-padding.

use super::strided::{self, View, Walk};
use lindiff_core::prim::{Adjoint, Pad, Reduce, ReduceOp, Slice};
use lindiff_core::{Host, Input, MatOp, Output, RealScalar, Result, Scalar, MAX_RANK};

/// `y = op(x)` for each matrix: x read with its matrix strides swapped.
pub(super) fn adjoint<T: Scalar>(
    op: &Adjoint,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "adjoint";
    let desc = inputs[0].desc;
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let s = &desc.strides;
    let swapped = View::new(&[&[s[1], s[0]], &s[2..]], desc.offset);
    if op.0 != MatOp::Identity {
        if let Some(xs) = strided::contiguous(desc, x) {
            let conj = op.0 == MatOp::Adjoint;
            return transpose_contiguous(NAME, xs, desc.meta.shape.dims(), conj, out);
        }
    }
    match op.0 {
        MatOp::Identity => strided::write_walk(NAME, "y", out, [View::of(desc)], |p| x[p.offsets[0]]),
        MatOp::Transpose => strided::write_walk(NAME, "y", out, [swapped], |p| x[p.offsets[0]]),
        MatOp::Adjoint => strided::write_walk(NAME, "y", out, [swapped], |p| Scalar::conj(x[p.offsets[0]])),
    }
}

/// Side of the square tiles of [`transpose_contiguous`]: 16 columns of the
/// source and 16 of the destination (2 KiB each in f64) stay in L1 while a
/// tile is copied, where a column-at-a-time walk over a power-of-two column
/// stride evicts its own lines (4× slower at n = 512).
const TILE: usize = 16;

/// `y = xᵀ` (or `xᴴ` with `conj`) for each matrix of a contiguous
/// column-major `x` with dims `dims` ([m, n, batch…]), tile by tile.
fn transpose_contiguous<T: Scalar>(
    op: &'static str,
    x: &[T],
    dims: &[usize],
    conj: bool,
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    let (m, n) = (dims[0], dims[1]);
    let y = strided::output::<T>(op, "y", out)?;
    if m > 0 && n > 0 {
        for (xm, ym) in x.chunks_exact(m * n).zip(y.chunks_exact_mut(m * n)) {
            // y is n×m: y[j + i·n] = x[i + j·m].
            for i0 in (0..m).step_by(TILE) {
                for j0 in (0..n).step_by(TILE) {
                    for i in i0..(i0 + TILE).min(m) {
                        let ycol = &mut ym[i * n..(i + 1) * n];
                        for j in j0..(j0 + TILE).min(n) {
                            let v = xm[i + j * m];
                            ycol[j].write(if conj { Scalar::conj(v) } else { v });
                        }
                    }
                }
            }
        }
    }
    // SAFETY: the tiles cover every (i, j) of every matrix, so all
    // m·n·batch elements of the output were written.
    unsafe { strided::finish::<T>(out) };
    Ok(())
}

/// `max` keeping NaN: once a NaN is seen it stays.
fn max_nan<R: RealScalar>(acc: R, v: R) -> R {
    // `v != v` is the NaN test; `v > NaN` is false, so a NaN `acc` stays.
    #[allow(clippy::eq_op)]
    let nan = v != v;
    if v > acc || nan {
        v
    } else {
        acc
    }
}

/// `min` keeping NaN.
fn min_nan<R: RealScalar>(acc: R, v: R) -> R {
    #[allow(clippy::eq_op)]
    let nan = v != v;
    if v < acc || nan {
        v
    } else {
        acc
    }
}

/// `y[b…] = ⊕ x[c…, b…]` over the leading `core_rank` dims, in column-major
/// order. Max/min are real-only (checked by core), so `v.re()` is `v`.
pub(super) fn reduce<T: Scalar>(
    op: &Reduce,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    let name = op.name();
    let desc = inputs[0].desc;
    let x = strided::input::<T>(name, "x", &inputs[0])?;
    let r = op.core_rank;
    let (core, core_strides) = (&desc.meta.shape.dims()[..r], &desc.strides[..r]);
    let items = View::new(&[&desc.strides[r..]], desc.offset);
    let elements = |base: usize| Walk::new(core, [View::new(&[core_strides], base)]).map(|p| x[p.offsets[0]]);
    match op.op {
        ReduceOp::Sum => strided::write_walk(name, "y", out, [items], |p| {
            elements(p.offsets[0]).fold(T::zero(), |acc, v| acc + v)
        }),
        ReduceOp::Max => strided::write_walk(name, "y", out, [items], |p| {
            let lowest = T::Real::from_f64(f64::NEG_INFINITY);
            T::from_real(elements(p.offsets[0]).fold(lowest, |acc, v| max_nan(acc, v.re())))
        }),
        ReduceOp::Min => strided::write_walk(name, "y", out, [items], |p| {
            let highest = T::Real::from_f64(f64::INFINITY);
            T::from_real(elements(p.offsets[0]).fold(highest, |acc, v| min_nan(acc, v.re())))
        }),
    }
}

/// The elements of `x` in its column-major order, under the output's shape.
pub(super) fn reshape<T: Scalar>(inputs: &[Input<'_, Host>], out: &mut Output<'_, '_, Host>) -> Result<()> {
    const NAME: &str = "reshape";
    let desc = inputs[0].desc;
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let values = Walk::new(desc.meta.shape.dims(), [View::of(desc)]).map(|p| x[p.offsets[0]]);
    // Core checked equal element counts, so `values` fills the output.
    strided::write_values(NAME, "y", out, values)
}

/// `y[c…, b…] = x[b…]`: x seen over the output with zero strides on the new
/// leading dims.
pub(super) fn spread<T: Scalar>(inputs: &[Input<'_, Host>], out: &mut Output<'_, '_, Host>) -> Result<()> {
    const NAME: &str = "spread";
    let desc = inputs[0].desc;
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let new_dims = strided::dims(out).len() - desc.meta.shape.rank();
    let view = View::new(&[&[0; MAX_RANK][..new_dims], &desc.strides], desc.offset);
    strided::write_walk(NAME, "y", out, [view], |p| x[p.offsets[0]])
}

/// The block of each matrix at `start`: x's view with a moved offset.
pub(super) fn slice<T: Scalar>(
    op: &Slice,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "slice";
    let desc = inputs[0].desc;
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let view = View::of(desc).shifted(&op.start);
    strided::write_walk(NAME, "y", out, [view], |p| x[p.offsets[0]])
}

/// Zero matrices of the output size with each matrix of x placed at `start`.
pub(super) fn pad<T: Scalar>(
    op: &Pad,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "pad";
    let desc = inputs[0].desc;
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let (dims, s) = (desc.meta.shape.dims(), &desc.strides);
    let [r0, c0] = op.start;
    let (rows, cols) = (r0..r0 + dims[0], c0..c0 + dims[1]);
    // Offsets of each matrix's (0, 0) element; the core offset is added
    // only inside the block.
    let items = View::new(&[&[0, 0], &s[2..]], desc.offset);
    strided::write_walk(NAME, "y", out, [items], |p| {
        if rows.contains(&p.row) && cols.contains(&p.col) {
            x[p.offsets[0] + (p.row - r0) * s[0] + (p.col - c0) * s[1]]
        } else {
            T::zero()
        }
    })
}
