//! [`Matrix`]: the JS-facing dense f64 matrix (stored column-major, read
//! and written in either layout).

use crate::error::ApiError;
use wasm_bindgen::prelude::*;

/// How a flat array lists a matrix's entries.
#[wasm_bindgen]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row after row (JS nested arrays, NumPy's default).
    RowMajor = 0,
    /// Column after column (lindiff's, LAPACK's, faer's).
    ColMajor = 1,
}

/// A dense real matrix with explicit shape. Stored column-major.
///
/// ```
/// use lindiff_wasm::{Layout, Matrix};
/// let a = Matrix::new(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3, Layout::RowMajor)?;
/// assert_eq!(a.get(1, 0), 4.0);
/// assert_eq!(a.to_layout(Layout::ColMajor), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// # Ok::<(), lindiff_wasm::ApiError>(())
/// ```
#[wasm_bindgen]
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    col_major: Vec<f64>,
}

impl Matrix {
    /// A `rows×cols` matrix from `data` listed in `layout`.
    ///
    /// # Errors
    /// [`ApiError::Argument`] when `data.len() != rows·cols`.
    pub fn new(data: Vec<f64>, rows: usize, cols: usize, layout: Layout) -> Result<Matrix, ApiError> {
        let count = rows.checked_mul(cols).ok_or_else(|| {
            ApiError::argument("Matrix", "shape", format!("{rows}×{cols} overflows the element count"))
        })?;
        if data.len() != count {
            return Err(ApiError::argument(
                "Matrix",
                "data",
                format!("a {rows}×{cols} matrix needs {count} entries, got {}", data.len()),
            ));
        }
        let col_major = match layout {
            Layout::ColMajor => data,
            Layout::RowMajor => (0..count).map(|k| data[(k % rows) * cols + k / rows]).collect(),
        };
        Ok(Matrix { rows, cols, col_major })
    }

    /// The `count = data.len() / (rows·cols)` matrices listed one after
    /// another in `data`, each in `layout` (the JS batch format).
    ///
    /// ```
    /// use lindiff_wasm::{Layout, Matrix};
    /// let two = Matrix::stacked(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], 2, 2, Layout::RowMajor)?;
    /// assert_eq!((two.len(), two[1].get(1, 0)), (2, 7.0));
    /// # Ok::<(), lindiff_wasm::ApiError>(())
    /// ```
    ///
    /// # Errors
    /// [`ApiError::Argument`] for an empty `data`, a zero-sized shape or a
    /// length that is not a multiple of `rows·cols`.
    pub fn stacked(data: &[f64], rows: usize, cols: usize, layout: Layout) -> Result<Vec<Matrix>, ApiError> {
        let size = rows.checked_mul(cols).filter(|&s| s > 0).ok_or_else(|| {
            ApiError::argument("gradientBatch", "shape", format!("{rows}×{cols} is not a batchable shape"))
        })?;
        if data.is_empty() || !data.len().is_multiple_of(size) {
            return Err(ApiError::argument(
                "gradientBatch",
                "data",
                format!(
                    "must hold a positive whole number of {rows}×{cols} matrices ({size} entries each), got {} \
                     entries",
                    data.len()
                ),
            ));
        }
        data.chunks_exact(size).map(|x| Matrix::new(x.to_vec(), rows, cols, layout)).collect()
    }

    /// A matrix over column-major `data` (its length must be `rows·cols`).
    pub(crate) fn from_col_major(rows: usize, cols: usize, data: Vec<f64>) -> Matrix {
        debug_assert_eq!(data.len(), rows * cols);
        Matrix { rows, cols, col_major: data }
    }

    /// The entries column after column.
    pub fn col_major(&self) -> &[f64] {
        &self.col_major
    }

    /// Frobenius norm.
    pub fn norm(&self) -> f64 {
        self.col_major.iter().map(|x| x * x).sum::<f64>().sqrt()
    }

    /// Largest |entry| of `self − other` (∞ when shapes differ).
    pub fn max_abs_diff(&self, other: &Matrix) -> f64 {
        if (self.rows, self.cols) != (other.rows, other.cols) {
            return f64::INFINITY;
        }
        self.col_major.iter().zip(&other.col_major).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
    }
}

#[wasm_bindgen]
impl Matrix {
    /// JS constructor: `new Matrix(data, rows, cols, layout = Layout.RowMajor)`.
    ///
    /// # Errors
    /// Throws (`kind = "InvalidArgument"`) when `data.length != rows·cols`.
    #[wasm_bindgen(constructor)]
    pub fn js_new(
        data: Vec<f64>,
        rows: usize,
        cols: usize,
        layout: Option<Layout>,
    ) -> Result<Matrix, JsValue> {
        Matrix::new(data, rows, cols, layout.unwrap_or(Layout::RowMajor)).map_err(crate::js_error::to_js)
    }

    /// Row count.
    #[wasm_bindgen(getter)]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Column count.
    #[wasm_bindgen(getter)]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Entry (i, j) (NaN outside the matrix).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        if i < self.rows && j < self.cols {
            self.col_major[j * self.rows + i]
        } else {
            f64::NAN
        }
    }

    /// A copy of the entries in `layout` (JS: `toLayout(Layout.RowMajor)`).
    #[wasm_bindgen(js_name = toLayout)]
    pub fn to_layout(&self, layout: Layout) -> Vec<f64> {
        match layout {
            Layout::ColMajor => self.col_major.clone(),
            Layout::RowMajor => (0..self.rows * self.cols)
                .map(|k| self.col_major[(k % self.cols) * self.rows + k / self.cols])
                .collect(),
        }
    }

    /// The entries row after row (JS order).
    #[wasm_bindgen(js_name = toRowMajor)]
    pub fn to_row_major(&self) -> Vec<f64> {
        self.to_layout(Layout::RowMajor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_round_trip() {
        let data: Vec<f64> = (0..6).map(f64::from).collect();
        let a = Matrix::new(data.clone(), 2, 3, Layout::RowMajor).unwrap();
        assert_eq!(a.col_major(), &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        assert_eq!(a.to_row_major(), data);
        let b = Matrix::new(a.to_layout(Layout::ColMajor), 2, 3, Layout::ColMajor).unwrap();
        assert_eq!(a, b);
        assert!(a.get(2, 0).is_nan());
    }

    #[test]
    fn wrong_length_names_the_argument() {
        let e = Matrix::new(vec![1.0; 5], 2, 3, Layout::RowMajor).unwrap_err();
        assert_eq!(e.to_string(), "Matrix: argument `data`: a 2×3 matrix needs 6 entries, got 5");
    }
}
