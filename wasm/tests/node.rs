//! The JS face under node (wasm-bindgen-test): results and thrown errors
//! as JS sees them — a `LindiffError` with `kind`, `op`, `output`, `why`.
#![cfg(target_arch = "wasm32")]

use lindiff_wasm::js::{js_det, js_finite_difference, js_gradient, js_gradient_batch, js_svd, simd_build};
use lindiff_wasm::{GradientOptions, Layout, Loss, Matrix};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

fn field(e: &JsValue, key: &str) -> String {
    js_sys::Reflect::get(e, &JsValue::from_str(key)).ok().and_then(|v| v.as_string()).unwrap_or_default()
}

/// diag(2, 2, 1) rotated: a 3×3 with a tie at the top.
fn tie() -> Matrix {
    let c = 0.6;
    let s = 0.8;
    // A = R diag(2, 2, 1) Rᵀ with R a rotation in the (0, 2) plane.
    let d = [2.0, 2.0, 1.0];
    let r = [[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]];
    let a: Vec<f64> = (0..9).map(|k| (0..3).map(|l| r[k / 3][l] * d[l] * r[k % 3][l]).sum()).collect();
    Matrix::new(a, 3, 3, Layout::RowMajor).unwrap()
}

fn w3() -> Matrix {
    Matrix::new(vec![0.3, -0.2, 0.5, 0.1, 0.7, -0.4, 0.6, 0.2, -0.1], 3, 3, Layout::RowMajor).unwrap()
}

#[wasm_bindgen_test]
fn svd_and_det_cross_the_boundary() {
    let a = Matrix::js_new(vec![0.0, 2.0, 3.0, 0.0], 2, 2, None).unwrap();
    let f = js_svd(&a).unwrap();
    assert_eq!(f.s(), vec![3.0, 2.0]);
    assert_eq!(js_det(&a).unwrap(), -6.0);
    assert!(simd_build(), "the test build must enable +simd128");
}

#[wasm_bindgen_test]
fn a_bad_matrix_throws_an_invalid_argument() {
    let e = Matrix::js_new(vec![1.0; 3], 2, 2, None).unwrap_err();
    assert_eq!(field(&e, "kind"), "InvalidArgument");
    assert_eq!(field(&e, "name"), "LindiffError");
    assert_eq!(field(&e, "argument"), "data");
}

#[wasm_bindgen_test]
fn p1_at_a_tie_throws_not_differentiable() {
    let e = js_gradient(&tie(), &Loss::projector(1, &w3()), &GradientOptions::new()).unwrap_err();
    assert_eq!(field(&e, "kind"), "NotDifferentiable");
    assert_eq!((field(&e, "op").as_str(), field(&e, "output").as_str()), ("svd", "u"));
    assert!(field(&e, "why").contains("tied"), "{}", field(&e, "why"));
    assert!(field(&e, "message").starts_with("svd: output `u` is not differentiable here"));
}

#[wasm_bindgen_test]
fn p2_at_the_tie_matches_finite_differences() {
    let loss = Loss::projector(2, &w3());
    let options = GradientOptions::new();
    let g = js_gradient(&tie(), &loss, &options).unwrap();
    let fd = js_finite_difference(&tie(), &loss, &options).unwrap();
    let diff = g.grad_ref().max_abs_diff(fd.grad_ref());
    let scale = g.grad_ref().col_major().iter().fold(1.0_f64, |s, x| s.max(x.abs()));
    assert!(diff <= 1e-8 * scale, "max |g − fd| = {diff:e}");
}

#[wasm_bindgen_test]
fn the_eps_option_switches_to_the_broadened_rule() {
    // With ε the library reproduces the reference's Lorentzian rule: no
    // gauge check, so P₁ at the tie gets a (biased) finite number.
    let options = GradientOptions::new().js_with_derivative_eps(1e-6).unwrap();
    assert_eq!(options.derivative_eps(), Some(1e-6));
    let p1 = Loss::projector(1, &w3());
    // Borrowed, not consumed: the same options object keeps its ε call after call.
    for _ in 0..2 {
        let g = js_gradient(&tie(), &p1, &options).unwrap();
        assert!(g.grad_ref().col_major().iter().all(|x| x.is_finite()));
    }
    assert_eq!(options.derivative_eps(), Some(1e-6));
    let e = GradientOptions::new().js_with_derivative_eps(0.0).unwrap_err();
    assert_eq!(field(&e, "argument"), "derivativeEps");
}

#[wasm_bindgen_test]
fn a_batch_reports_per_matrix() {
    let data: Vec<f64> = [tie(), w3()].iter().flat_map(|x| x.to_layout(Layout::ColMajor)).collect();
    let options = GradientOptions::new();
    let loss = Loss::projector(1, &w3());
    let items = js_gradient_batch(data.clone(), 3, 3, Layout::ColMajor, &loss, &options).unwrap();
    assert_eq!(field(&items[0].error(), "kind"), "NotDifferentiable");
    assert!(items[0].gradient().is_none());
    assert!(items[1].gradient().is_some());
    assert!(items[1].error().is_undefined());
    let e = js_gradient_batch(data[..10].to_vec(), 3, 3, Layout::ColMajor, &loss, &options).unwrap_err();
    assert_eq!((field(&e, "kind").as_str(), field(&e, "argument").as_str()), ("InvalidArgument", "data"));
}
