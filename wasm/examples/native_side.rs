//! The native side of the browser test (`cargo xtask browser`):
//!
//! * `native_side fixture PATH` writes the values the page must reproduce
//!   in Chromium — a fixed 4×3 matrix and weight, its singular values,
//!   projectors and the gradients of P₂ and Σ s — computed here by the same
//!   library, natively, during the same test run.
//! * `native_side --bench-svd N --reps R` prints the native single-thread
//!   time in ms of one N×N SVD (the best of R runs after one warm-up run).
//!   The browser test runs the built binary itself, alternating with the
//!   page's bench, so both sides see the same machine load.

use lindiff_wasm::{gradient, svd, GradientOptions, Layout, Loss, Matrix};
use std::fmt::Write as _;
use std::time::Instant;

/// Uniform [−0.5, 0.5) entries from xorshift (the seed's timing matrices).
/// The page's `xorshiftMatrix` must produce the same numbers.
fn xorshift(rows: usize, cols: usize, seed: u64) -> Matrix {
    let mut x = seed | 1;
    let data = (0..rows * cols)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    Matrix::new(data, rows, cols, Layout::RowMajor).expect("rows·cols entries")
}

/// `name: [x, …]` with every f64 in its shortest round-trip form.
fn array(out: &mut String, name: &str, xs: &[f64]) {
    let items: Vec<String> = xs.iter().map(|x| format!("{x:?}")).collect();
    let _ = write!(out, "  \"{name}\": [{}]", items.join(", "));
}

/// X Xᵀ of the first `k` columns of `x`, row-major.
fn projector(x: &Matrix, k: usize) -> Vec<f64> {
    let r = x.rows();
    (0..r * r).map(|e| (0..k).map(|l| x.get(e / r, l) * x.get(e % r, l)).sum()).collect()
}

fn transpose(x: &Matrix) -> Matrix {
    Matrix::new(x.to_layout(Layout::ColMajor), x.cols(), x.rows(), Layout::RowMajor).expect("same count")
}

fn fixture(path: &str) -> Result<(), String> {
    let a = xorshift(4, 3, 0x5eed);
    let w = xorshift(4, 4, 0xbee);
    let f = svd(&a).map_err(|e| e.to_string())?;
    let p2 = gradient(&a, &Loss::projector(2, &w), &GradientOptions::new()).map_err(|e| e.to_string())?;
    let nuc = gradient(&a, &Loss::nuclear(), &GradientOptions::new()).map_err(|e| e.to_string())?;
    let mut out = String::from("{\n");
    let _ = writeln!(out, "  \"rows\": {}, \"cols\": {},", a.rows(), a.cols());
    let fields: [(&str, Vec<f64>); 9] = [
        ("a", a.to_row_major()),
        ("w", w.to_row_major()),
        ("s", f.s()),
        ("pu2", projector(&f.u(), 2)),
        ("pv2", projector(&transpose(&f.vh()), 2)),
        ("p2_value", vec![p2.value]),
        ("p2_grad", p2.grad().to_row_major()),
        ("nuclear_value", vec![nuc.value]),
        ("nuclear_grad", nuc.grad().to_row_major()),
    ];
    for (i, (name, xs)) in fields.iter().enumerate() {
        array(&mut out, name, xs);
        out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
    }
    out.push_str("}\n");
    std::fs::write(path, out).map_err(|e| format!("cannot write {path}: {e}"))
}

fn bench(n: usize, reps: usize) -> Result<(), String> {
    if n == 0 || reps == 0 {
        return Err(format!("--bench-svd {n} --reps {reps}: both must be at least 1"));
    }
    let a = xorshift(n, n, 42);
    std::hint::black_box(svd(&a).map_err(|e| e.to_string())?);
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        let f = svd(&a).map_err(|e| e.to_string())?;
        best = best.min(t.elapsed().as_secs_f64());
        std::hint::black_box(f);
    }
    println!("{:.3}", best * 1e3);
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let count = |name: &str, x: &str| x.parse::<usize>().map_err(|e| format!("{name} {x:?}: {e}"));
    let result = match args[..] {
        ["fixture", path] => fixture(path),
        ["--bench-svd", n, "--reps", reps] => {
            count("--bench-svd", n).and_then(|n| count("--reps", reps).and_then(|r| bench(n, r)))
        }
        _ => Err("usage: native_side fixture PATH | native_side --bench-svd N --reps R".into()),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("native_side: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
