//! The JS face of the API: exported functions (thin wrappers that turn
//! [`ApiError`](crate::ApiError) into a thrown `Error` with structured
//! fields, `js_error.rs`), start-up (simd128 for faer's GEMM) and the
//! thread pool. Nothing in the crate imports this module: it is the edge.

use crate::js_error::to_js;
use crate::{
    decomp, finite_difference, grad, BatchItem, Eigh, Gradient, GradientOptions, Layout, Loss, Matrix, Qr,
    Svd,
};
use wasm_bindgen::prelude::*;

/// Runs once when the module is instantiated: faer's GEMM may use simd128
/// (the build enables `+simd128`; gemm only uses it when told to).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen(start)]
pub fn start() {
    gemm_common::set_wasm_simd128(true);
}

#[cfg(all(target_arch = "wasm32", feature = "threads"))]
pub use wasm_bindgen_rayon::init_thread_pool;

/// The thin SVD of `a` (JS `svd(a)`).
///
/// # Errors
/// Throws a `LindiffError`.
#[wasm_bindgen(js_name = svd)]
pub fn js_svd(a: &Matrix) -> Result<Svd, JsValue> {
    decomp::svd(a).map_err(to_js)
}

/// The symmetric eigendecomposition of `a` (JS `eigh(a)`).
///
/// # Errors
/// Throws a `LindiffError`.
#[wasm_bindgen(js_name = eigh)]
pub fn js_eigh(a: &Matrix) -> Result<Eigh, JsValue> {
    decomp::eigh(a).map_err(to_js)
}

/// The thin QR of `a` (JS `qr(a)`).
///
/// # Errors
/// Throws a `LindiffError`.
#[wasm_bindgen(js_name = qr)]
pub fn js_qr(a: &Matrix) -> Result<Qr, JsValue> {
    decomp::qr(a).map_err(to_js)
}

/// X with A X = B (JS `solve(a, b)`).
///
/// # Errors
/// Throws a `LindiffError`.
#[wasm_bindgen(js_name = solve)]
pub fn js_solve(a: &Matrix, b: &Matrix) -> Result<Matrix, JsValue> {
    decomp::solve(a, b).map_err(to_js)
}

/// det(A) (JS `det(a)`).
///
/// # Errors
/// Throws a `LindiffError`.
#[wasm_bindgen(js_name = det)]
pub fn js_det(a: &Matrix) -> Result<f64, JsValue> {
    decomp::det(a).map_err(to_js)
}

// Ownership: every exported function borrows its `Matrix`, `Loss` and
// `GradientOptions` arguments (`&T`), so JS objects stay usable after a
// call. wasm-bindgen *moves* a by-value struct argument (`T`,
// `Option<T>`) out of its JS object, which silently empties it; and it has
// no `Option<&T>`, so the options are a required argument.

/// The loss and its reverse-mode gradient (JS `gradient(a, loss, options)`;
/// `new GradientOptions()` for the defaults). Borrows all three.
///
/// # Errors
/// Throws a `LindiffError`; `kind = "NotDifferentiable"` (with `op`,
/// `output`, `why`) where the loss has no derivative at `a`.
#[wasm_bindgen(js_name = gradient)]
pub fn js_gradient(a: &Matrix, loss: &Loss, options: &GradientOptions) -> Result<Gradient, JsValue> {
    grad::gradient(a, loss, options).map_err(to_js)
}

/// Central finite differences of the loss (JS `finiteDifference(a, loss,
/// options)`). Borrows all three.
///
/// # Errors
/// Throws a `LindiffError` (bad loss parameters).
#[wasm_bindgen(js_name = finiteDifference)]
pub fn js_finite_difference(a: &Matrix, loss: &Loss, options: &GradientOptions) -> Result<Gradient, JsValue> {
    finite_difference::finite_difference(a, loss, options).map_err(to_js)
}

/// Gradients for a batch of equally-sized matrices, one item each (JS
/// `gradientBatch(data, rows, cols, layout, loss, options)`): `data` holds
/// `count = data.length / (rows·cols)` matrices one after another, each
/// listed in `layout`. The array is copied in, so nothing of the caller's
/// is consumed.
///
/// # Errors
/// Throws a `LindiffError` (`InvalidArgument`) for an empty batch or a
/// length that is not a multiple of rows·cols.
#[wasm_bindgen(js_name = gradientBatch)]
pub fn js_gradient_batch(
    data: Vec<f64>,
    rows: usize,
    cols: usize,
    layout: Layout,
    loss: &Loss,
    options: &GradientOptions,
) -> Result<Vec<BatchItem>, JsValue> {
    let matrices = Matrix::stacked(&data, rows, cols, layout).map_err(to_js)?;
    grad::gradient_batch(&matrices, loss, options).map_err(to_js)
}

/// Sets the team width of batch calls (JS `setThreads(n)`; after
/// `initThreadPool(n)` in a threaded build).
#[wasm_bindgen(js_name = setThreads)]
pub fn js_set_threads(threads: usize) {
    crate::set_threads(threads);
}

/// Whether this build runs batch lanes on threads (the `threads` feature).
#[wasm_bindgen(js_name = threadedBuild)]
pub fn threaded_build() -> bool {
    cfg!(feature = "threads")
}

/// Whether this build was compiled with `+simd128`.
#[wasm_bindgen(js_name = simdBuild)]
pub fn simd_build() -> bool {
    cfg!(target_feature = "simd128")
}

/// The crate version.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}
