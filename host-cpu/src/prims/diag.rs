//! Diagonals, triangles and diagonal scaling: walks over the output where
//! the diagonal is a view with stride `s₀ + s₁` and scaling vectors are
//! broadcast over the other matrix dim with stride 0.

use super::strided::{self, View};
use lindiff_core::op::Triangle;
use lindiff_core::prim::TriMask;
use lindiff_core::{Element, Host, Input, Output, Result, Scalar};

/// `d[i, b…] = x[i, i, b…]`.
pub(super) fn diag_part<T: Scalar>(inputs: &[Input<'_, Host>], out: &mut Output<'_, '_, Host>) -> Result<()> {
    const NAME: &str = "diag_part";
    let desc = inputs[0].desc;
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let s = &desc.strides;
    // Wrapping: when min(m, n) ≤ 1 one of the strides is never applied.
    let view = View::new(&[&[s[0].wrapping_add(s[1])], &s[2..]], desc.offset);
    strided::write_walk(NAME, "d", out, [view], |p| x[p.offsets[0]])
}

/// `x[i, j, b…] = d[i, b…]` on the diagonal, 0 elsewhere.
pub(super) fn diag_embed<T: Scalar>(
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "diag_embed";
    let desc = inputs[0].desc;
    let d = strided::input::<T>(NAME, "d", &inputs[0])?;
    let s = &desc.strides;
    let view = View::new(&[&[s[0], 0], &s[1..]], desc.offset);
    strided::write_walk(NAME, "x", out, [view], |p| if p.row == p.col { d[p.offsets[0]] } else { T::zero() })
}

/// One triangle of each matrix, its diagonal times `diagonal`, zeros
/// elsewhere. Entries outside the triangle are never read; with
/// `diagonal == 0` (a strict mask) neither is the diagonal, so it is an
/// exact 0 even where `x` is not finite.
pub(super) fn tri_mask<T: Scalar>(
    op: &TriMask,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "tri_mask";
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let factor = T::Real::from_f64(op.diagonal);
    let strict = op.diagonal == 0.0;
    let lower = matches!(op.triangle, Triangle::Lower);
    strided::write_walk(NAME, "y", out, [View::of(inputs[0].desc)], |p| {
        let inside = if lower { p.row > p.col } else { p.row < p.col };
        if inside {
            x[p.offsets[0]]
        } else if p.row == p.col && !strict {
            x[p.offsets[0]].scale(factor)
        } else {
            T::zero()
        }
    })
}

/// Which matrix dim a scaling vector runs along.
#[derive(Clone, Copy)]
pub(super) enum Along {
    /// `a · diag(v)`: `v[j]` scales column j.
    Cols,
    /// `diag(v) · a`: `v[i]` scales row i.
    Rows,
}

/// `y = a · diag(v)` or `diag(v) · a`, where `v` has `a`'s dtype or its real
/// dtype.
pub(super) fn scale_by<T: Scalar>(
    along: Along,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    if inputs[1].desc.meta.dtype == T::DTYPE {
        scale_with::<T, T>(along, inputs, out, |a, v| a * v)
    } else {
        scale_with::<T, T::Real>(along, inputs, out, |a, v| a.scale(v))
    }
}

fn scale_with<T: Scalar, V: Element>(
    along: Along,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
    f: impl Fn(T, V) -> T,
) -> Result<()> {
    let name = match along {
        Along::Cols => "scale_cols",
        Along::Rows => "scale_rows",
    };
    let a = strided::input::<T>(name, "a", &inputs[0])?;
    let v = strided::input::<V>(name, "v", &inputs[1])?;
    let vd = inputs[1].desc;
    let s = &vd.strides;
    // v is [len, batch…]; over a's [m, n, batch…] it gets stride 0 on the
    // other matrix dim.
    let v_view = match along {
        Along::Cols => View::new(&[&[0], s], vd.offset),
        Along::Rows => View::new(&[&[s[0], 0], &s[1..]], vd.offset),
    };
    let views = [View::of(inputs[0].desc), v_view];
    strided::write_walk(name, "y", out, views, |p| f(a[p.offsets[0]], v[p.offsets[1]]))
}
