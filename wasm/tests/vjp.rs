//! The vjp API, natively: a pullback is the gradient of the
//! cotangent-weighted loss (the nuclear norm's gradient U Vᵀ for s̄ = 1,
//! the adjugate's transpose for det), f32 follows f64, a missing cotangent
//! is zero, cotangents of the wrong shape name the output and the shape,
//! and a cotangent on U at a tie is the library's gauge report.
#![cfg(not(target_arch = "wasm32"))]

use lindiff_wasm::{gradient, vjp, ApiError, GradientOptions, Layout, Loss, Matrix, Precision, Value, VjpOp};

fn a43() -> Matrix {
    Matrix::new(vec![2.0, -1.0, 0.5, 0.3, 1.5, -0.7, -1.2, 0.4, 1.1, 0.8, 0.9, -0.2], 4, 3, Layout::RowMajor)
        .unwrap()
}

#[test]
fn svd_pullback_of_ones_on_s_is_the_nuclear_gradient() {
    let a = a43();
    let mut f = vjp(VjpOp::Svd, std::slice::from_ref(&a), Precision::F64).unwrap();
    let g = f.pullback(&[None, Some(Value::Vector(vec![1.0; 3])), None]).unwrap();
    let want = gradient(&a, &Loss::nuclear(), &GradientOptions::new()).unwrap();
    assert!(g[0].max_abs_diff(want.grad_ref()) <= 1e-14, "{}", g[0].max_abs_diff(want.grad_ref()));
    // Pulled back again, with explicit zeros: the same numbers.
    let zeros = Value::Matrix(Matrix::new(vec![0.0; 12], 4, 3, Layout::RowMajor).unwrap());
    let again = f.pullback(&[Some(zeros), Some(Value::Vector(vec![1.0; 3]))]).unwrap();
    assert_eq!(again[0], g[0]);
    // No cotangent at all: zero.
    assert!(f.pullback(&[]).unwrap()[0].col_major().iter().all(|&x| x == 0.0));
}

#[test]
fn det_pullback_is_the_transposed_adjugate() {
    // A = [[2, 1], [1, 3]]: det 5, ∂det/∂A = adj(A)ᵀ = [[3, −1], [−1, 2]].
    let a = Matrix::new(vec![2.0, 1.0, 1.0, 3.0], 2, 2, Layout::RowMajor).unwrap();
    for precision in [Precision::F64, Precision::F32] {
        let mut f = vjp(VjpOp::Det, std::slice::from_ref(&a), precision).unwrap();
        let Some(Value::Scalar(det)) = f.output("det").cloned() else { panic!("det is a scalar") };
        assert!((det - 5.0).abs() <= 1e-5);
        let g = f.pullback(&[Some(Value::Scalar(1.0))]).unwrap();
        let tol = if precision == Precision::F32 { 1e-5 } else { 1e-14 };
        assert!(
            g[0].to_row_major().iter().zip([3.0, -1.0, -1.0, 2.0]).all(|(x, y)| (x - y).abs() <= tol),
            "{:?}",
            g[0]
        );
    }
}

#[test]
fn matmul_pullback_gives_both_inputs() {
    // C = A B: Ā = C̄ Bᵀ, B̄ = Aᵀ C̄.
    let a = Matrix::new(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3, Layout::RowMajor).unwrap();
    let b = Matrix::new(vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0], 3, 2, Layout::RowMajor).unwrap();
    let mut f = vjp(VjpOp::Matmul, &[a, b], Precision::F64).unwrap();
    let cbar = Matrix::new(vec![1.0, 0.0, 0.0, 0.0], 2, 2, Layout::RowMajor).unwrap();
    let g = f.pullback(&[Some(Value::Matrix(cbar))]).unwrap();
    assert_eq!(g[0].to_row_major(), vec![1.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    assert_eq!(g[1].to_row_major(), vec![1.0, 0.0, 2.0, 0.0, 3.0, 0.0]);
}

#[test]
fn f32_follows_f64() {
    let a = a43();
    let ct = |f: &lindiff_wasm::Vjp| {
        let Some(Value::Vector(s)) = f.output("s").cloned() else { panic!("s is a vector") };
        let mut e = vec![0.0; 12];
        e[0] = 1.0;
        vec![
            Some(Value::Matrix(Matrix::new(e, 4, 3, Layout::RowMajor).unwrap())),
            Some(Value::Vector(s.iter().map(|x| 2.0 * x).collect())),
        ]
    };
    let mut f64_ = vjp(VjpOp::Svd, std::slice::from_ref(&a), Precision::F64).unwrap();
    let mut f32_ = vjp(VjpOp::Svd, &[a], Precision::F32).unwrap();
    let (c64, c32) = (ct(&f64_), ct(&f32_));
    let g64 = f64_.pullback(&c64).unwrap();
    let g32 = f32_.pullback(&c32).unwrap();
    let scale = g64[0].col_major().iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(g32[0].max_abs_diff(&g64[0]) <= 1e-4 * scale, "{}", g32[0].max_abs_diff(&g64[0]) / scale);
}

#[test]
fn bad_cotangents_and_inputs_name_op_argument_and_shape() {
    let mut f = vjp(VjpOp::Svd, &[a43()], Precision::F64).unwrap();
    let e = f.pullback(&[None, Some(Value::Vector(vec![1.0; 5]))]).unwrap_err();
    assert_eq!(
        (e.kind(), e.op(), e.argument_name(), e.shape()),
        ("InvalidArgument", "svd", Some("s"), Some(vec![5]))
    );
    let wide = Matrix::new(vec![0.0; 6], 2, 3, Layout::RowMajor).unwrap();
    let e = vjp(VjpOp::Cholesky, &[wide], Precision::F64).unwrap_err();
    assert_eq!(
        (e.kind(), e.op(), e.argument_name(), e.shape()),
        ("NotSquare", "cholesky", Some("a"), Some(vec![2, 3]))
    );
    let e = vjp(VjpOp::Solve, &[a43()], Precision::F64).unwrap_err();
    assert_eq!((e.kind(), e.argument_name()), ("InvalidArgument", Some("inputs")));
    assert!(matches!(VjpOp::parse("lu"), Err(ApiError::Argument { arg: "op", .. })));
}

#[test]
fn a_cotangent_on_u_at_a_tie_is_the_gauge_report() {
    // A = R diag(2, 2, 1) Rᵀ: s₁ = s₂.
    let (c, s) = (0.6, 0.8);
    let r = [[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]];
    let d = [2.0, 2.0, 1.0];
    let a: Vec<f64> = (0..9).map(|k| (0..3).map(|l| r[k / 3][l] * d[l] * r[k % 3][l]).sum()).collect();
    let a = Matrix::new(a, 3, 3, Layout::RowMajor).unwrap();
    let mut f = vjp(VjpOp::Svd, std::slice::from_ref(&a), Precision::F64).unwrap();
    // L = ⟨u₁, c⟩ with c the computed u₂: Ū's first column is u₂, so
    // (UᵀŪ − ŪᵀU)₂₁ = u₂ᵀu₂ = 1 couples the tied pair in any basis.
    let Some(Value::Matrix(u)) = f.output("u").cloned() else { panic!("u is a matrix") };
    let ubar: Vec<f64> = (0..9).map(|e| if e % 3 == 0 { u.get(e / 3, 1) } else { 0.0 }).collect();
    let e =
        f.pullback(&[Some(Value::Matrix(Matrix::new(ubar, 3, 3, Layout::RowMajor).unwrap()))]).unwrap_err();
    assert!(matches!(e.kind(), "NearTie" | "NotDifferentiable") && e.op() == "svd", "{e}");
    // On s alone it is exact: ∇Σs² = 2A.
    let Some(Value::Vector(sv)) = f.output("s").cloned() else { panic!("s is a vector") };
    let g = f.pullback(&[None, Some(Value::Vector(sv.iter().map(|x| 2.0 * x).collect()))]).unwrap();
    let two_a =
        Matrix::new(a.to_row_major().iter().map(|x| 2.0 * x).collect(), 3, 3, Layout::RowMajor).unwrap();
    assert!(g[0].max_abs_diff(&two_a) <= 1e-13, "{}", g[0].max_abs_diff(&two_a));
}
