//! Diagonals, triangles and diagonal scaling.

use super::PrimSpec;
use crate::error::{Dim, Result};
use crate::op::check::{dim, dtype, finite, float_matrix, float_tensor, out, outputs, same_batch, vector};
use crate::op::{Outputs, Triangle};
use crate::tensor::TensorMeta;

/// `[m, n, batch…]` → `[min(m, n), batch…]`: the main diagonals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DiagPart;

/// `[k, batch…]` → `[k, k, batch…]`: square matrices with these diagonals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DiagEmbed;

/// Keeps one triangle of each matrix (zeros elsewhere) and multiplies its
/// diagonal by `diagonal` (1 keeps it, 0 makes the mask strict, ½ halves it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriMask {
    /// Which triangle to keep.
    pub triangle: Triangle,
    /// Factor applied to the diagonal.
    pub diagonal: f64,
}

/// `a · diag(v)`: column j of `a` times `v[j]`. `v` has `a`'s dtype or its
/// real dtype.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScaleCols;

/// `diag(v) · a`: row i of `a` times `v[i]`. `v` has `a`'s dtype or its real
/// dtype.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScaleRows;

impl PrimSpec for DiagPart {
    const NAME: &'static str = "diag_part";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["d"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let x = float_matrix(Self::NAME, "x", inputs[0])?;
        Ok(outputs([Some(out(Self::NAME, "d", x.dtype, &[x.k()], x.batch)?)]))
    }
}

impl PrimSpec for DiagEmbed {
    const NAME: &'static str = "diag_embed";
    const INPUTS: &'static [&'static str] = &["d"];
    const OUTPUTS: &'static [&'static str] = &["x"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        let d = inputs[0];
        let (k, batch) = vector(Self::NAME, "d", d, d.dtype)?;
        float_tensor(Self::NAME, "d", d)?;
        Ok(outputs([Some(out(Self::NAME, "x", d.dtype, &[k, k], batch)?)]))
    }
}

impl PrimSpec for TriMask {
    const NAME: &'static str = "tri_mask";
    const INPUTS: &'static [&'static str] = &["x"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        float_matrix(Self::NAME, "x", inputs[0])?;
        finite(Self::NAME, "diagonal", self.diagonal)?;
        Ok(outputs([Some(inputs[0].clone())]))
    }
}

fn scale_by(op: &'static str, inputs: &[&TensorMeta], along: Dim) -> Result<Outputs> {
    let a = float_matrix(op, "a", inputs[0])?;
    let v = inputs[1];
    let expected = if v.dtype == a.dtype.real() { a.dtype.real() } else { a.dtype };
    let (len, batch) = vector(op, "v", v, expected)?;
    dtype(op, "v", v, expected)?;
    let (n, which) = match along {
        Dim::Cols => (a.cols, Dim::Len),
        _ => (a.rows, Dim::Len),
    };
    dim(op, "v", &v.shape, which, len, n, "a")?;
    same_batch(op, ("v", &v.shape, batch), ("a", a.shape, a.batch))?;
    Ok(outputs([Some(inputs[0].clone())]))
}

impl PrimSpec for ScaleCols {
    const NAME: &'static str = "scale_cols";
    const INPUTS: &'static [&'static str] = &["a", "v"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        scale_by(Self::NAME, inputs, Dim::Cols)
    }
}

impl PrimSpec for ScaleRows {
    const NAME: &'static str = "scale_rows";
    const INPUTS: &'static [&'static str] = &["a", "v"];
    const OUTPUTS: &'static [&'static str] = &["y"];

    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        scale_by(Self::NAME, inputs, Dim::Rows)
    }
}
