//! The decompositions and solves of the JS API: [`svd`], [`eigh`], [`qr`],
//! [`solve`], [`det`], on one matrix each (serial provider).

use crate::error::ApiError;
use crate::matrix::Matrix;
use crate::provider;
use lindiff_core::Ops;
use lindiff_cpu::Tensor;
use wasm_bindgen::prelude::*;

/// The thin SVD A = U diag(s) Vᵀ: s descending, canonical signs (the
/// largest-magnitude entry of each U column positive).
#[wasm_bindgen]
#[derive(Clone, Debug)]
pub struct Svd {
    u: Matrix,
    s: Vec<f64>,
    vh: Matrix,
}

#[wasm_bindgen]
impl Svd {
    /// U (m×k).
    #[wasm_bindgen(getter)]
    pub fn u(&self) -> Matrix {
        self.u.clone()
    }

    /// The singular values (k, descending).
    #[wasm_bindgen(getter)]
    pub fn s(&self) -> Vec<f64> {
        self.s.clone()
    }

    /// Vᵀ (k×n).
    #[wasm_bindgen(getter)]
    pub fn vh(&self) -> Matrix {
        self.vh.clone()
    }
}

/// The symmetric eigendecomposition A = V diag(w) Vᵀ (lower triangle read).
#[wasm_bindgen]
#[derive(Clone, Debug)]
pub struct Eigh {
    w: Vec<f64>,
    v: Matrix,
}

#[wasm_bindgen]
impl Eigh {
    /// Eigenvalues, ascending.
    #[wasm_bindgen(getter)]
    pub fn w(&self) -> Vec<f64> {
        self.w.clone()
    }

    /// Eigenvectors (columns).
    #[wasm_bindgen(getter)]
    pub fn v(&self) -> Matrix {
        self.v.clone()
    }
}

/// The thin QR A = Q R with diag(R) ≥ 0.
#[wasm_bindgen]
#[derive(Clone, Debug)]
pub struct Qr {
    q: Matrix,
    r: Matrix,
}

#[wasm_bindgen]
impl Qr {
    /// Q (m×k), orthonormal columns.
    #[wasm_bindgen(getter)]
    pub fn q(&self) -> Matrix {
        self.q.clone()
    }

    /// R (k×n), upper triangular.
    #[wasm_bindgen(getter)]
    pub fn r(&self) -> Matrix {
        self.r.clone()
    }
}

fn input(la: &mut lindiff_cpu::Direct<lindiff_cpu::Cpu>, a: &Matrix) -> Result<Tensor, ApiError> {
    Ok(la.tensor(&[a.rows(), a.cols()], a.col_major())?)
}

fn output(t: &Tensor) -> Result<Matrix, ApiError> {
    let d = t.dims();
    Ok(Matrix::from_col_major(d[0], d[1], t.to_vec::<f64>()?))
}

/// The thin SVD of `a`.
///
/// ```
/// use lindiff_wasm::{svd, Layout, Matrix};
/// let a = Matrix::new(vec![0.0, 2.0, 3.0, 0.0], 2, 2, Layout::RowMajor)?;
/// assert_eq!(svd(&a)?.s(), vec![3.0, 2.0]);
/// # Ok::<(), lindiff_wasm::ApiError>(())
/// ```
///
/// # Errors
/// The library's (e.g. a non-finite entry).
pub fn svd(a: &Matrix) -> Result<Svd, ApiError> {
    let mut la = provider::serial();
    let t = input(&mut la, a)?;
    let f = la.svd(&t)?;
    Ok(Svd { u: output(&f.u)?, s: f.s.to_vec()?, vh: output(&f.vh)? })
}

/// The eigendecomposition of the symmetric `a` (its lower triangle).
///
/// # Errors
/// The library's (a non-square `a`: ``eigh: argument `a` must be square``).
pub fn eigh(a: &Matrix) -> Result<Eigh, ApiError> {
    let mut la = provider::serial();
    let t = input(&mut la, a)?;
    let f = la.eigh(&t)?;
    Ok(Eigh { w: f.w.to_vec()?, v: output(&f.v)? })
}

/// The thin QR of `a`.
///
/// # Errors
/// The library's.
pub fn qr(a: &Matrix) -> Result<Qr, ApiError> {
    let mut la = provider::serial();
    let t = input(&mut la, a)?;
    let f = la.qr(&t)?;
    Ok(Qr { q: output(&f.q)?, r: output(&f.r)? })
}

/// X with A X = B (A square, B with as many rows).
///
/// # Errors
/// The library's shape errors naming `a` or `b`.
pub fn solve(a: &Matrix, b: &Matrix) -> Result<Matrix, ApiError> {
    let mut la = provider::serial();
    let ta = input(&mut la, a)?;
    let tb = input(&mut la, b)?;
    output(&la.solve(&ta, &tb)?)
}

/// det(A) (A square).
///
/// # Errors
/// The library's (a non-square `a`).
pub fn det(a: &Matrix) -> Result<f64, ApiError> {
    let mut la = provider::serial();
    let t = input(&mut la, a)?;
    Ok(la.det(&t)?.to_vec::<f64>()?[0])
}
