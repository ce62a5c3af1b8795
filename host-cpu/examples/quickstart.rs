//! lindiff in a few calls: an SVD, a solve, a determinant, an inverse and a
//! condition number of a matrix typed row by row, then the gradient of a
//! loss of its SVD, on the CPU provider.
//!
//! Run: `cargo run --release -p lindiff-cpu --example quickstart`

use lindiff_cpu::prelude::*;

fn main() -> Result<()> {
    let mut la = Direct::new(Cpu::new());

    // A = [[4, 1, 2], [1, 3, 0], [2, 0, 5]], typed row by row.
    let a = la.tensor_row_major(3, 3, &[4.0, 1.0, 2.0, 1.0, 3.0, 0.0, 2.0, 0.0, 5.0])?;
    let b = la.tensor(&[3, 1], &[1.0, 2.0, 3.0])?;

    let svd = la.svd(&a)?;
    println!("singular values   {:?}", svd.s.to_vec::<f64>()?);
    println!("solve A x = b     x = {:?}", la.solve(&a, &b)?.to_vec::<f64>()?);
    println!("det A             {:?}", la.det(&a)?.to_vec::<f64>()?);
    println!("A⁻¹ (col-major)   {:?}", la.inv(&a)?.to_vec::<f64>()?);
    println!("cond₂ A           {:?}", la.cond(&a, Norm::Two)?.to_vec::<f64>()?);

    // The gradient of the largest singular value's square, s₀² (= ‖A‖₂²).
    let out = la.value_and_grad([&a], |[a]| a.svd_vals().get(0).square())?;
    println!("s₀² = {:.6}, ∂s₀²/∂A (col-major) = {:.4?}", out.value, out.grads[0].to_vec::<f64>()?);

    // Bad input is an error that names the op, the argument and the shape.
    let wide = la.tensor(&[2, 3], &[1.0; 6])?;
    println!("det of a 2×3      {}", la.det(&wide).unwrap_err());
    Ok(())
}
