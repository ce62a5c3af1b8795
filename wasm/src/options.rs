//! [`GradientOptions`]: the SVD derivative option and the finite-difference
//! step.

use crate::error::ApiError;
use lindiff_core::op::SvdOptions;
use wasm_bindgen::prelude::*;

/// Options of [`gradient`](crate::gradient) and
/// [`finite_difference`](crate::finite_difference). Builder methods return
/// a changed copy.
///
/// ```
/// use lindiff_wasm::GradientOptions;
/// let o = GradientOptions::new().with_derivative_eps(1e-6)?.with_fd_step(1e-5)?;
/// assert_eq!(o.derivative_eps(), Some(1e-6));
/// # Ok::<(), lindiff_wasm::ApiError>(())
/// ```
#[wasm_bindgen]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GradientOptions {
    derivative_eps: Option<f64>,
    fd_step: Option<f64>,
}

impl GradientOptions {
    /// `SvdOptions::derivative_eps(ε)`: the Lorentzian-broadened rule (docs/ad-rules.md#svd)
    /// instead of the exact rule (`None`, the default).
    ///
    /// # Errors
    /// [`ApiError::Argument`] unless ε is finite and > 0.
    pub fn with_derivative_eps(self, eps: f64) -> Result<GradientOptions, ApiError> {
        Ok(GradientOptions { derivative_eps: Some(positive("derivativeEps", eps)?), ..self })
    }

    /// Central-difference step relative to ‖A‖_F (default 1e-6).
    ///
    /// # Errors
    /// [`ApiError::Argument`] unless the step is finite and > 0.
    pub fn with_fd_step(self, step: f64) -> Result<GradientOptions, ApiError> {
        Ok(GradientOptions { fd_step: Some(positive("fdStep", step)?), ..self })
    }

    /// The SVD options the losses use.
    pub(crate) fn svd(&self) -> SvdOptions {
        match self.derivative_eps {
            Some(eps) => SvdOptions::default().derivative_eps(eps),
            None => SvdOptions::default(),
        }
    }
}

#[wasm_bindgen]
impl GradientOptions {
    /// Defaults: the exact derivative rule, FD step 1e-6·‖A‖_F.
    #[wasm_bindgen(constructor)]
    pub fn new() -> GradientOptions {
        GradientOptions::default()
    }

    /// JS: `options.withDerivativeEps(1e-6)`, a changed copy.
    ///
    /// # Errors
    /// Throws unless ε is finite and > 0.
    #[wasm_bindgen(js_name = withDerivativeEps)]
    pub fn js_with_derivative_eps(&self, eps: f64) -> Result<GradientOptions, JsValue> {
        self.with_derivative_eps(eps).map_err(crate::js_error::to_js)
    }

    /// JS: `options.withFdStep(1e-5)`, a changed copy.
    ///
    /// # Errors
    /// Throws unless the step is finite and > 0.
    #[wasm_bindgen(js_name = withFdStep)]
    pub fn js_with_fd_step(&self, step: f64) -> Result<GradientOptions, JsValue> {
        self.with_fd_step(step).map_err(crate::js_error::to_js)
    }

    /// The broadening ε, if set.
    #[wasm_bindgen(getter = derivativeEps)]
    pub fn derivative_eps(&self) -> Option<f64> {
        self.derivative_eps
    }

    /// The relative FD step.
    #[wasm_bindgen(getter = fdStep)]
    pub fn fd_step(&self) -> f64 {
        self.fd_step.unwrap_or(1e-6)
    }
}

/// `value` when it is finite and > 0, else the argument error naming `arg`.
fn positive(arg: &'static str, value: f64) -> Result<f64, ApiError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ApiError::argument("GradientOptions", arg, format!("must be finite and > 0, got {value}")))
    }
}
