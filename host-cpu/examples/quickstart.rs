//! lindiff in five calls: an SVD, a solve, a determinant, an inverse and a
//! norm of a matrix typed in row-major order, on the faer provider.
//!
//! Run: `cargo run --release -p lindiff-cpu --example quickstart`

use lindiff_core::face::Norm;
use lindiff_cpu::{Cpu, Direct, Linalg};

fn main() -> Result<(), lindiff_core::Error> {
    let mut la = Direct::new(Cpu::new());

    // A = [[4, 1, 2], [1, 3, 0], [2, 0, 5]], typed row by row.
    let a = la.tensor_row_major(3, 3, &[4.0f64, 1.0, 2.0, 1.0, 3.0, 0.0, 2.0, 0.0, 5.0])?;
    let b = la.tensor(&[3, 1], &[1.0f64, 2.0, 3.0])?;

    let svd = la.svd(&a)?;
    println!("singular values   {:?}", svd.s.to_vec::<f64>()?);

    let x = la.solve(&a, &b)?;
    println!("solve A x = b     x = {:?}", x.to_vec::<f64>()?);

    let det = la.det(&a)?;
    println!("det A             {:?}", det.to_vec::<f64>()?);

    let inv = la.inv(&a)?;
    println!("A⁻¹ (col-major)   {:?}", inv.to_vec::<f64>()?);

    let cond = la.cond(&a, Norm::Two)?;
    println!("cond₂ A           {:?}", cond.to_vec::<f64>()?);

    // Bad input is an error that names the op, the argument and the shape.
    let wide = la.tensor(&[2, 3], &[1.0f64; 6])?;
    println!("det of a 2×3      {}", la.det(&wide).unwrap_err());
    Ok(())
}
