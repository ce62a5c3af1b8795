//! Central finite differences of a [`Loss`], for comparison with the
//! reverse-mode gradient.

use crate::error::ApiError;
use crate::grad::Gradient;
use crate::loss::Loss;
use crate::matrix::Matrix;
use crate::options::GradientOptions;
use crate::provider;

/// The loss at `a` and the central differences (L(A + hE_ij) −
/// L(A − hE_ij)) / 2h for every entry, h = `options.fd_step()`·‖A‖_F (or the
/// step itself for A = 0). Forward evaluations only: where the loss has no
/// derivative these numbers depend on h and mean nothing.
///
/// ```
/// use lindiff_wasm::{finite_difference, GradientOptions, Layout, Loss, Matrix};
/// let a = Matrix::new(vec![3.0, 0.0, 0.0, 2.0], 2, 2, Layout::RowMajor)?;
/// let fd = finite_difference(&a, &Loss::nuclear(), &GradientOptions::new())?;
/// assert!((fd.grad_ref().get(0, 0) - 1.0).abs() < 1e-8);
/// # Ok::<(), lindiff_wasm::ApiError>(())
/// ```
///
/// # Errors
/// A bad loss parameter; the library's forward errors.
pub fn finite_difference(a: &Matrix, loss: &Loss, options: &GradientOptions) -> Result<Gradient, ApiError> {
    let (m, n) = (a.rows(), a.cols());
    let constants = loss.constants(m, n, 0)?;
    let mut la = provider::serial();
    let mut consts = Vec::with_capacity(constants.len());
    for (d, values) in &constants {
        consts.push(la.tensor(d, values)?);
    }
    let svd = options.svd();
    let mut value_at = |data: &[f64]| -> Result<f64, ApiError> {
        let t = la.tensor(&[m, n], data)?;
        let l = loss.eval(&mut la, &t, &consts, svd)?;
        Ok(l.to_vec::<f64>()?[0])
    };
    let norm = a.norm();
    let h = options.fd_step() * if norm > 0.0 { norm } else { 1.0 };
    let mut x = a.col_major().to_vec();
    let value = value_at(&x)?;
    let mut g = vec![0.0; x.len()];
    for i in 0..x.len() {
        let xi = x[i];
        x[i] = xi + h;
        let up = value_at(&x)?;
        x[i] = xi - h;
        let down = value_at(&x)?;
        x[i] = xi;
        g[i] = (up - down) / (2.0 * h);
    }
    Ok(Gradient { value, grad: Matrix::from_col_major(m, n, g) })
}
