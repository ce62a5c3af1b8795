//! Reverse-mode gradients of a [`Loss`] through lindiff's eager face: one
//! matrix ([`gradient`]) or a batch on the provider's lanes
//! ([`gradient_batch`]).

use crate::error::ApiError;
use crate::loss::Loss;
use crate::matrix::Matrix;
use crate::options::GradientOptions;
use crate::provider;
use lindiff_core::ad::Eager;
use lindiff_cpu::{Cpu, Direct};
use wasm_bindgen::prelude::*;

/// A loss value and its gradient with respect to A (same shape as A).
#[wasm_bindgen]
#[derive(Clone, Debug)]
pub struct Gradient {
    /// The loss at A.
    pub value: f64,
    pub(crate) grad: Matrix,
}

#[wasm_bindgen]
impl Gradient {
    /// ∂loss/∂A.
    #[wasm_bindgen(getter)]
    pub fn grad(&self) -> Matrix {
        self.grad.clone()
    }
}

impl Gradient {
    /// ∂loss/∂A, borrowed.
    pub fn grad_ref(&self) -> &Matrix {
        &self.grad
    }
}

/// The loss and ∂loss/∂A for every matrix of `data` (`[m, n]` or
/// `[m, n, count]`, column-major) on the eager face over `direct`.
fn eager(
    direct: Direct<Cpu>,
    data: &[f64],
    dims: &[usize],
    loss: &Loss,
    options: &GradientOptions,
) -> Result<(Vec<f64>, Vec<f64>), ApiError> {
    let (m, n) = (dims[0], dims[1]);
    let count = dims.get(2).copied().unwrap_or(0);
    let constants = loss.constants(m, n, count)?;
    let mut face: Eager<Direct<Cpu>> = Eager::new(direct);
    let t = face.inner().tensor(dims, data)?;
    let a = face.watch(t)?;
    let mut consts = Vec::with_capacity(constants.len());
    for (d, values) in &constants {
        consts.push(Eager::<Direct<Cpu>>::constant(face.inner().tensor(d, values)?));
    }
    let l = loss.eval(&mut face, &a, &consts, options.svd())?;
    let values = l.value().to_vec::<f64>()?;
    let g = face.backward(&l, &[&a])?;
    Ok((values, g[0].to_vec::<f64>()?))
}

/// The loss at `a` and its gradient by lindiff's reverse mode.
///
/// ```
/// use lindiff_wasm::{gradient, GradientOptions, Layout, Loss, Matrix};
/// // A tie s₁ = s₂ = 2: P₁ splits it (reported), P₂ does not (exact).
/// let a = Matrix::new(vec![2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0], 3, 3, Layout::RowMajor)?;
/// let w = Matrix::new((0..9).map(f64::from).collect(), 3, 3, Layout::RowMajor)?;
/// let e = gradient(&a, &Loss::projector(1, &w), &GradientOptions::new()).unwrap_err();
/// assert_eq!(e.not_differentiable().map(|(op, out, _)| (op, out)), Some(("svd", "u")));
/// assert!(gradient(&a, &Loss::projector(2, &w), &GradientOptions::new()).is_ok());
/// # Ok::<(), lindiff_wasm::ApiError>(())
/// ```
///
/// # Errors
/// [`ApiError::Lindiff`] with [`lindiff_core::Error::NotDifferentiable`]
/// (op, output, why) where the loss has no derivative at `a`; a bad loss
/// parameter as [`ApiError::Argument`].
pub fn gradient(a: &Matrix, loss: &Loss, options: &GradientOptions) -> Result<Gradient, ApiError> {
    let (values, g) = eager(provider::serial(), a.col_major(), &[a.rows(), a.cols()], loss, options)?;
    Ok(Gradient { value: values[0], grad: Matrix::from_col_major(a.rows(), a.cols(), g) })
}

/// One matrix's result in a batch: a gradient or why there is none.
#[wasm_bindgen]
#[derive(Clone, Debug)]
pub struct BatchItem {
    result: Result<Gradient, ApiError>,
    fell_back: bool,
}

impl BatchItem {
    /// The result.
    pub fn result(&self) -> &Result<Gradient, ApiError> {
        &self.result
    }
}

#[wasm_bindgen]
impl BatchItem {
    /// The gradient, or `undefined` where there is none.
    #[wasm_bindgen(getter)]
    pub fn gradient(&self) -> Option<Gradient> {
        self.result.as_ref().ok().cloned()
    }

    /// Whether this item came from a single call because the batch as a
    /// whole was reported (not differentiable, or a near tie; JS
    /// `fellBack`): then every item of the batch did, and none ran on the
    /// batch lanes.
    #[wasm_bindgen(getter = fellBack)]
    pub fn fell_back(&self) -> bool {
        self.fell_back
    }

    /// The error (as thrown by `gradient`), or `undefined`.
    #[wasm_bindgen(getter, unchecked_return_type = "LindiffError | undefined")]
    pub fn error(&self) -> JsValue {
        match &self.result {
            Ok(_) => JsValue::UNDEFINED,
            Err(e) => crate::js_error::to_js(e.clone()),
        }
    }
}

/// Gradients of `loss` at each of `matrices` (all the same shape) as one
/// batched call — batch lanes run on the rayon pool with the `threads`
/// feature ([`set_threads`](crate::set_threads)). Where the batch as a whole
/// is reported (not differentiable, or too near a tie for the factors'
/// gradient), the matrices are redone one by one so each gets its own
/// result, and every item says so ([`BatchItem::fell_back`]).
///
/// # Errors
/// [`ApiError::Argument`] for an empty batch or mixed shapes; a bad loss
/// parameter. Per-matrix reports are in the items.
pub fn gradient_batch(
    matrices: &[Matrix],
    loss: &Loss,
    options: &GradientOptions,
) -> Result<Vec<BatchItem>, ApiError> {
    let first =
        matrices.first().ok_or_else(|| ApiError::argument("gradientBatch", "matrices", "is empty".into()))?;
    let (m, n) = (first.rows(), first.cols());
    if let Some(bad) = matrices.iter().position(|x| (x.rows(), x.cols()) != (m, n)) {
        let x = &matrices[bad];
        return Err(ApiError::argument(
            "gradientBatch",
            "matrices",
            format!("all must be {m}×{n}, matrix {bad} is {}×{}", x.rows(), x.cols()),
        ));
    }
    let data: Vec<f64> = matrices.iter().flat_map(|x| x.col_major().iter().copied()).collect();
    let count = matrices.len();
    match eager(provider::batched(), &data, &[m, n, count], loss, options) {
        Ok((values, g)) => Ok(values
            .iter()
            .zip(g.chunks_exact(m * n))
            .map(|(&value, gi)| BatchItem {
                result: Ok(Gradient { value, grad: Matrix::from_col_major(m, n, gi.to_vec()) }),
                fell_back: false,
            })
            .collect()),
        Err(e) if e.is_report() => Ok(matrices
            .iter()
            .map(|x| BatchItem { result: gradient(x, loss, options), fell_back: true })
            .collect()),
        Err(e) => Err(e),
    }
}
