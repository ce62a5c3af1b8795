//! The losses the page differentiates, one concept per file. Each is a
//! function of the SVD of A (m×n, k = min(m, n)) written once against the
//! generic [`Face`], so the same code runs on the eager face (reverse mode)
//! and the direct face (finite differences). Batched inputs `[m, n, count]`
//! give one loss value per matrix.

mod blocks;
mod nuclear;
mod projector;
mod projector_sum;
mod truncation_error;
mod weighted_values;

use crate::error::ApiError;
use crate::matrix::Matrix;
use lindiff_core::face::Face;
use lindiff_core::op::SvdOptions;
use lindiff_core::Result;
use wasm_bindgen::prelude::*;

/// A constant input of a loss: dims and column-major data.
pub(crate) type Constant = (Vec<usize>, Vec<f64>);

/// Which loss, with its parameters.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Nuclear,
    WeightedValues(Vec<f64>),
    Projector { k: usize, w: Matrix },
    TruncationError { k: usize },
    ProjectorSum { k: usize, wu: Matrix, wv: Matrix },
}

/// A scalar loss of A's SVD. Construct with the static methods.
///
/// ```
/// use lindiff_wasm::{Layout, Loss, Matrix};
/// let w = Matrix::new(vec![1.0, 0.5, 0.5, 2.0], 2, 2, Layout::RowMajor)?;
/// let p1 = Loss::projector(1, &w);
/// assert_eq!(p1.name(), "projector P_1 = ⟨W, U_1U_1ᵀ⟩");
/// # Ok::<(), lindiff_wasm::ApiError>(())
/// ```
#[wasm_bindgen]
#[derive(Clone, Debug, PartialEq)]
pub struct Loss {
    kind: Kind,
}

#[wasm_bindgen]
impl Loss {
    /// Σ sᵢ, the nuclear norm: not differentiable where a singular value is 0
    /// (a kink), reported as such.
    pub fn nuclear() -> Loss {
        Loss { kind: Kind::Nuclear }
    }

    /// Σ cᵢ sᵢ with user weights c (length k).
    #[wasm_bindgen(js_name = weightedValues)]
    pub fn weighted_values(c: Vec<f64>) -> Loss {
        Loss { kind: Kind::WeightedValues(c) }
    }

    /// P_k = ⟨W, U_k U_kᵀ⟩ (W m×m): the projector onto the top-k left
    /// singular subspace, weighted. Differentiable unless k splits a tie.
    /// Borrows `w` (a copy is kept).
    pub fn projector(k: usize, w: &Matrix) -> Loss {
        Loss { kind: Kind::Projector { k, w: w.clone() } }
    }

    /// ‖A − A_k‖²_F with A_k the rank-k approximation (`low_rank_approx`).
    #[wasm_bindgen(js_name = truncationError)]
    pub fn truncation_error(k: usize) -> Loss {
        Loss { kind: Kind::TruncationError { k } }
    }

    /// ⟨W_U, U_k U_kᵀ⟩ + ⟨W_V, V_k V_kᵀ⟩ (W_U m×m, W_V n×n). Borrows both
    /// weights (copies are kept).
    #[wasm_bindgen(js_name = projectorSum)]
    pub fn projector_sum(k: usize, wu: &Matrix, wv: &Matrix) -> Loss {
        Loss { kind: Kind::ProjectorSum { k, wu: wu.clone(), wv: wv.clone() } }
    }

    /// A readable name (for labels).
    #[wasm_bindgen(getter)]
    pub fn name(&self) -> String {
        match &self.kind {
            Kind::Nuclear => "nuclear norm Σ sᵢ".into(),
            Kind::WeightedValues(_) => "Σ cᵢ sᵢ".into(),
            Kind::Projector { k, .. } => format!("projector P_{k} = ⟨W, U_{k}U_{k}ᵀ⟩"),
            Kind::TruncationError { k } => format!("truncation error ‖A − A_{k}‖²"),
            Kind::ProjectorSum { k, .. } => format!("⟨W_U, U_{k}U_{k}ᵀ⟩ + ⟨W_V, V_{k}V_{k}ᵀ⟩"),
        }
    }
}

impl Loss {
    /// The constant inputs the loss reads, `(dims, column-major data)`, for
    /// A of shape m×n repeated `count` times, after checking them against A.
    ///
    /// # Errors
    /// [`ApiError::Argument`] for a k outside 1..=min(m, n) or a weight of
    /// the wrong size.
    pub(crate) fn constants(
        &self,
        m: usize,
        n: usize,
        count: usize,
    ) -> core::result::Result<Vec<Constant>, ApiError> {
        let kmax = m.min(n);
        let check_k = |k: usize| {
            if k == 0 || k > kmax {
                Err(ApiError::argument(
                    "Loss",
                    "k",
                    format!("must be in 1..={kmax} for a {m}×{n} matrix, got {k}"),
                ))
            } else {
                Ok(())
            }
        };
        let square = |arg: &'static str, w: &Matrix, r: usize| {
            if (w.rows(), w.cols()) != (r, r) {
                Err(ApiError::argument(
                    "Loss",
                    arg,
                    format!("must be {r}×{r} for a {m}×{n} matrix, got {}×{}", w.rows(), w.cols()),
                ))
            } else {
                Ok(tile(&[r, r], w.col_major(), count))
            }
        };
        match &self.kind {
            Kind::Nuclear => Ok(vec![]),
            Kind::WeightedValues(c) => {
                if c.len() != kmax {
                    return Err(ApiError::argument(
                        "Loss",
                        "c",
                        format!("needs min(m, n) = {kmax} weights, got {}", c.len()),
                    ));
                }
                Ok(vec![tile(&[kmax], c, count)])
            }
            Kind::Projector { k, w } => {
                check_k(*k)?;
                Ok(vec![square("w", w, m)?])
            }
            Kind::TruncationError { k } => check_k(*k).map(|()| vec![]),
            Kind::ProjectorSum { k, wu, wv } => {
                check_k(*k)?;
                Ok(vec![square("wu", wu, m)?, square("wv", wv, n)?])
            }
        }
    }

    /// The loss of `a` (`[m, n]` or `[m, n, count]`): one value per matrix.
    /// `constants` are the tensors of [`Loss::constants`], in order.
    pub(crate) fn eval<F: Face + ?Sized>(
        &self,
        f: &mut F,
        a: &F::Tensor,
        constants: &[F::Tensor],
        svd: SvdOptions,
    ) -> Result<F::Tensor> {
        match &self.kind {
            Kind::Nuclear => nuclear::eval(f, a, svd),
            Kind::WeightedValues(_) => weighted_values::eval(f, a, &constants[0], svd),
            Kind::Projector { k, .. } => projector::eval(f, a, *k, &constants[0], svd),
            Kind::TruncationError { k } => truncation_error::eval(f, a, *k),
            Kind::ProjectorSum { k, .. } => projector_sum::eval(f, a, *k, &constants[0], &constants[1], svd),
        }
    }
}

/// `(dims + [count], data repeated count times)`, or the plain dims for a
/// count of 0 (one unbatched matrix).
fn tile(dims: &[usize], data: &[f64], count: usize) -> Constant {
    if count == 0 {
        return (dims.to_vec(), data.to_vec());
    }
    let mut d = dims.to_vec();
    d.push(count);
    (d, data.iter().copied().cycle().take(data.len() * count).collect())
}
