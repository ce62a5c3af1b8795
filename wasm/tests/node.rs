//! The JS face under node (wasm-bindgen-test): results and thrown errors
//! as JS sees them — a `LindiffError` with `kind`, `op`, `output`, `why`.
#![cfg(target_arch = "wasm32")]

use lindiff_wasm::js::{
    js_det, js_eigh, js_finite_difference, js_gradient, js_gradient_batch, js_qr, js_solve, js_svd,
    simd_build,
};
use lindiff_wasm::{GradientOptions, Layout, Loss, Matrix};
use wasm_bindgen::{JsCast, JsValue};
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
    // With ε the library runs the Lorentzian-broadened rule: no
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

#[wasm_bindgen_test]
fn eigh_of_a_known_symmetric_matrix() {
    // [[2, 1], [1, 2]]: eigenvalues 1 and 3, eigenvectors (1, −1)/√2 and
    // (1, 1)/√2, known in closed form (signs are a convention: compared up
    // to sign, through |v|).
    let a = Matrix::js_new(vec![2.0, 1.0, 1.0, 2.0], 2, 2, None).unwrap();
    let f = js_eigh(&a).unwrap();
    let w = f.w();
    assert!((w[0] - 1.0).abs() <= 4e-15 && (w[1] - 3.0).abs() <= 4e-15, "w = {w:?}");
    let v = f.v();
    let r = std::f64::consts::FRAC_1_SQRT_2;
    for (i, j, want) in [(0, 0, r), (1, 0, -r), (0, 1, r), (1, 1, r)] {
        // Column j up to its sign (the closed forms have a positive first entry).
        let sign = v.get(0, j).signum();
        assert!((v.get(i, j) * sign - want).abs() <= 1e-14, "v[{i}][{j}] = {}", v.get(i, j));
    }
}

#[wasm_bindgen_test]
fn qr_is_orthonormal_upper_and_reproduces_a() {
    // A 4×3 of small integers: Q has orthonormal columns, R is upper
    // triangular with diag(R) ≥ 0, and Q R = A, all checked by products
    // formed here, not by the library.
    let rows = [[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [4.0, 0.0, 1.0], [2.0, 5.0, 2.0]];
    let a = Matrix::js_new(rows.concat(), 4, 3, None).unwrap();
    let f = js_qr(&a).unwrap();
    let (q, r) = (f.q(), f.r());
    assert_eq!((q.rows(), q.cols(), r.rows(), r.cols()), (4, 3, 3, 3));
    for i in 0..3 {
        for j in 0..3 {
            let qtq: f64 = (0..4).map(|l| q.get(l, i) * q.get(l, j)).sum();
            assert!((qtq - f64::from(u8::from(i == j))).abs() <= 1e-14, "QᵀQ[{i}][{j}] = {qtq}");
            if i > j {
                assert_eq!(r.get(i, j), 0.0, "R[{i}][{j}] below the diagonal");
            }
        }
        assert!(r.get(i, i) >= 0.0, "R[{i}][{i}] = {}", r.get(i, i));
    }
    for (i, row) in rows.iter().enumerate() {
        for (j, want) in row.iter().enumerate() {
            let qr: f64 = (0..3).map(|l| q.get(i, l) * r.get(l, j)).sum();
            assert!((qr - want).abs() <= 1e-14, "(QR)[{i}][{j}] = {qr}, A has {want}");
        }
    }
    // |R[0][0]| is the first column's norm: √(1 + 16 + 4) = √21.
    assert!((r.get(0, 0) - 21f64.sqrt()).abs() <= 1e-14);
}

#[wasm_bindgen_test]
fn solve_gives_the_known_solution() {
    // A x = b with x = (1, −2, 3) chosen first: b = A x by hand.
    // A = [[2, 1, 1], [1, 3, 2], [1, 0, 0]]: b = (2 − 2 + 3, 1 − 6 + 6, 1) = (3, 1, 1).
    let a = Matrix::js_new(vec![2.0, 1.0, 1.0, 1.0, 3.0, 2.0, 1.0, 0.0, 0.0], 3, 3, None).unwrap();
    let b = Matrix::js_new(vec![3.0, 1.0, 1.0], 3, 1, None).unwrap();
    let x = js_solve(&a, &b).unwrap();
    assert_eq!((x.rows(), x.cols()), (3, 1));
    for (i, want) in [1.0, -2.0, 3.0].into_iter().enumerate() {
        assert!((x.get(i, 0) - want).abs() <= 1e-14, "x[{i}] = {}", x.get(i, 0));
    }
    // A mismatched b is the library's shape error, naming it.
    let e = js_solve(&a, &Matrix::js_new(vec![1.0, 2.0], 2, 1, None).unwrap()).unwrap_err();
    assert_eq!(field(&e, "kind"), "DimMismatch");
    assert_eq!(field(&e, "argument"), "b");
    assert!(field(&e, "message").contains("`b`"), "{}", field(&e, "message"));
}

/// `{ data, rows, cols }` with row-major `data`.
fn js_matrix(rows: usize, cols: usize, data: &[f64]) -> JsValue {
    let obj = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&obj, &JsValue::from_str(k), v).unwrap();
    set("data", &js_sys::Float64Array::from(data).into());
    set("rows", &JsValue::from_f64(rows as f64));
    set("cols", &JsValue::from_f64(cols as f64));
    obj.into()
}

#[wasm_bindgen_test]
fn vjp_errors_are_lindiff_errors_with_op_argument_and_shape() {
    let inputs = js_sys::Array::of1(&js_matrix(2, 3, &[1.0; 6]));
    let e = lindiff_wasm::js_vjp::js_vjp("cholesky", &inputs).unwrap_err();
    assert!(e.is_instance_of::<js_sys::Error>());
    assert!(e.is_instance_of::<lindiff_wasm::LindiffError>());
    assert_eq!(field(&e, "name"), "LindiffError");
    assert_eq!(
        (field(&e, "kind").as_str(), field(&e, "op").as_str(), field(&e, "argument").as_str()),
        ("NotSquare", "cholesky", "a")
    );
    let shape = js_sys::Reflect::get(&e, &JsValue::from_str("shape")).unwrap();
    assert_eq!(
        js_sys::Array::from(&shape).iter().map(|d| d.as_f64().unwrap()).collect::<Vec<_>>(),
        vec![2.0, 3.0]
    );
}

#[wasm_bindgen_test]
fn vjp_pulls_a_js_cotangent_back() {
    // det([[2, 1], [1, 3]]) = 5; ∂det/∂A = [[3, −1], [−1, 2]].
    let inputs = js_sys::Array::of1(&js_matrix(2, 2, &[2.0, 1.0, 1.0, 3.0]));
    let mut f = lindiff_wasm::js_vjp::js_vjp("det", &inputs).unwrap();
    let det = js_sys::Reflect::get(&f.outputs(), &JsValue::from_str("det")).unwrap().as_f64().unwrap();
    assert!((det - 5.0).abs() <= 1e-14);
    let ct = js_sys::Object::new();
    js_sys::Reflect::set(&ct, &JsValue::from_str("det"), &JsValue::from_f64(1.0)).unwrap();
    let g = f.pullback(&ct.into()).unwrap();
    let data = js_sys::Reflect::get(&g.get(0), &JsValue::from_str("data")).unwrap();
    let data = js_sys::Float64Array::from(data).to_vec();
    for (x, y) in data.iter().zip([3.0, -1.0, -1.0, 2.0]) {
        assert!((x - y).abs() <= 1e-14, "{data:?}");
    }
}
