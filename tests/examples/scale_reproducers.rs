//! Prints the scale and singularity reproducers (qr of a subnormal, svd/eig/eigh at extreme scales, solves of a scaled or numerically singular system, norms) on both providers: `cargo run -p lindiff-tests --example scale_reproducers`.
use lindiff_core::op::{Lstsq, LstsqOptions, LuFactorSolve, LuSolvePrepared};
use lindiff_core::{face::Norm, Face, Linalg, LinalgOp, Op, Ops, Provider};
use lindiff_cpu::{Cpu, Direct};
use lindiff_tests::dense::{Dense, Rng};

fn show(name: &str, r: Result<Vec<f64>, lindiff_core::Error>) {
    match r {
        Ok(v) => println!("{name}: Ok {:?}", v),
        Err(e) => println!("{name}: Err {e}"),
    }
}

fn resid(a: &Dense<f64>, x: &[f64], b: &Dense<f64>) -> f64 {
    let xm = Dense::from_col_major(a.cols, b.cols, x.to_vec());
    a.matmul(&xm).sub(b).norm() / (a.norm() * xm.norm() + b.norm())
}

fn main() {
    println!("== cpu");
    run(Cpu::new());
    println!("== blas");
    run(lindiff_blas::Blas::new());
}

fn run<P: Provider<Memory = lindiff_core::Host> + Copy>(p: P) {
    let mut la = Direct::new(p);
    // 1. qr of [1e-310]
    let a = la.tensor(&[1, 1], &[1e-310f64]).unwrap();
    let r = la.qr(&a).map(|f| [f.q.to_vec::<f64>().unwrap(), f.r.to_vec::<f64>().unwrap()].concat());
    show("1a qr([1e-310]) -> [q, r]", r);
    // svd 2x9 with one nonzero 7.6e-306
    let mut d = vec![0.0f64; 18];
    d[7] = 7.6e-306;
    let a = la.tensor(&[2, 9], &d).unwrap();
    show("1b svd_vals(2x9, one entry 7.6e-306)", la.svd_vals(&a).and_then(|s| s.to_vec::<f64>()));
    let mut rng = Rng::new(7);
    for scale in [1e290, 1e-305] {
        let m: Dense<f64> = rng.matrix(4, 4);
        let ms = Dense::from_col_major(4, 4, m.data.iter().map(|x| x * scale).collect());
        let a = la.tensor(&[4, 4], &ms.data).unwrap();
        match la.eig(&a) {
            Ok(f) => {
                let v = f.v.to_vec::<num_complex::Complex<f64>>().unwrap();
                let zero_cols = (0..4).filter(|&j| (0..4).all(|i| v[i + 4 * j].norm() == 0.0)).count();
                // residual relative to ||A|| in the O(1) problem
                let w = f.w.to_vec::<num_complex::Complex<f64>>().unwrap();
                let mut worst: f64 = 0.0;
                for j in 0..4 {
                    for i in 0..4 {
                        let mut s = num_complex::Complex::new(0.0, 0.0);
                        for k in 0..4 {
                            s += num_complex::Complex::new(m[(i, k)], 0.0) * v[k + 4 * j];
                        }
                        s -= w[j] / scale * v[i + 4 * j];
                        worst = worst.max(s.norm() / m.norm());
                    }
                }
                println!("1c eig(4x4 at {scale:e}): Ok, zero vector columns {zero_cols}, residual/||A|| {worst:.2e}");
            }
            Err(e) => println!("1c eig(4x4 at {scale:e}): Err {e}"),
        }
    }
    let h = Dense::from_col_major(2, 2, vec![2e-310, 1e-310, 1e-310, 3e-310]);
    let a = la.tensor(&[2, 2], &h.data).unwrap();
    match la.eigh(&a) {
        Ok(f) => {
            let w = f.w.to_vec::<f64>().unwrap();
            let v = Dense::from_col_major(2, 2, f.v.to_vec::<f64>().unwrap());
            // Residual of the O(1) problem: A·1e310 with w·1e310.
            let h1 = Dense::from_col_major(2, 2, vec![2.0, 1.0, 1.0, 3.0]);
            let lam = Dense::from_fn(2, 2, |i, j| if i == j { w[i] * 1e300 * 1e10 } else { 0.0 });
            let res = h1.matmul(&v).sub(&v.matmul(&lam)).norm() / h1.norm();
            println!("1d eigh(subnormal 2x2): Ok w {w:?}, residual/||A|| {res:.2e}");
        }
        Err(e) => println!("1d eigh(subnormal 2x2): Err {e}"),
    }
    // solves at 1e-310
    let m = Dense::from_col_major(3, 3, vec![4.0, 1.0, 2.0, 1.0, 3.0, 0.0, 2.0, 0.0, 5.0]);
    let b = Dense::from_col_major(3, 1, vec![1.0, 2.0, 3.0]);
    let ms = Dense::from_col_major(3, 3, m.data.iter().map(|x| x * 1e-310).collect());
    let bs = Dense::from_col_major(3, 1, b.data.iter().map(|x| x * 1e-310).collect());
    let a = la.tensor(&[3, 3], &ms.data).unwrap();
    let bt = la.tensor(&[3, 1], &bs.data).unwrap();
    let x = la.solve(&a, &bt).and_then(|x| x.to_vec::<f64>());
    if let Ok(x) = &x {
        println!("1e solve backward error (O(1) system) {:.2e}", resid(&m, x, &b));
    }
    show("1e solve(1e-310 A, 1e-310 b)", x);
    let outs = la.apply(Op::Linalg(LinalgOp::LuFactorSolve(LuFactorSolve::default())), &[&a, &bt]);
    match outs {
        Ok(mut o) => {
            let x = o[0].take().unwrap().to_vec::<f64>();
            show("1e lu_factor_solve x", x);
            let lu = o[1].take().unwrap();
            let perm = o[2].take().unwrap();
            let x = la
                .apply(Op::Linalg(LinalgOp::LuSolvePrepared(LuSolvePrepared::default())), &[&lu, &perm, &bt])
                .and_then(|mut o| o[0].take().unwrap().to_vec::<f64>());
            show("1e lu_solve_prepared x", x);
        }
        Err(e) => println!("1e lu_factor_solve: Err {e}"),
    }
    let x = la
        .apply(Op::Linalg(LinalgOp::Lstsq(Lstsq(LstsqOptions::default()))), &[&a, &bt])
        .and_then(|mut o| o[0].take().unwrap().to_vec::<f64>());
    show("1e lstsq x", x);
    // 2. singular
    let s = Dense::from_fn(3, 3, |i, j| match j {
        0 => [1.0, 4.0, 7.0][i],
        1 => [2.0, 8.0, 14.0][i],
        _ => [3.0, 5.0, 10.0][i],
    });
    let a = la.tensor(&[3, 3], &s.data).unwrap();
    let bt = la.tensor(&[3, 1], &b.data).unwrap();
    show("2 solve(col1 = 2 col0)", la.solve(&a, &bt).and_then(|x| x.to_vec::<f64>()));
    show("2 inv(col1 = 2 col0)", la.inv(&a).and_then(|x| x.to_vec::<f64>()));
    // 3. norms
    let mut d = vec![1.0f64; 10];
    d[3] = -1.07e289;
    let a = la.tensor(&[5, 2], &d).unwrap();
    show("3 norm(Fro)(5x2 ones, one -1.07e289)", la.norm(&a, Norm::Fro).and_then(|x| x.to_vec::<f64>()));
    let a = la.tensor(&[2, 1], &[0.0f64, -5.4e-306]).unwrap();
    show("3 norm(Fro)([0, -5.4e-306])", la.norm(&a, Norm::Fro).and_then(|x| x.to_vec::<f64>()));
    let a = la.tensor(&[3, 0], &[] as &[f64]).unwrap();
    show("3 norm(Two)(3x0)", la.norm(&a, Norm::Two).and_then(|x| x.to_vec::<f64>()));
    // 4. workspace panics
    let cpu = p;
    for dims in [[1usize << 40, 1 << 40], [1 << 59, 2]] {
        let desc = lindiff_core::TensorDesc::contiguous(lindiff_core::TensorMeta::new(
            lindiff_core::DType::F64,
            lindiff_core::Shape::new(&dims).unwrap(),
        ))
        .unwrap();
        let op = Op::Linalg(LinalgOp::SvdFull(Default::default()));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cpu.workspace(&op, &[&desc])));
        println!(
            "4 Provider::workspace(svd_full, {dims:?}): {}",
            match r {
                Ok(Ok(w)) => format!("Ok {} bytes", w.bytes()),
                Ok(Err(e)) => format!("Err {e}"),
                Err(_) => "PANIC".into(),
            }
        );
    }
    // 5. Arena
    use core::mem::MaybeUninit;
    use lindiff_core::{Arena, WorkspaceReq};
    let mut bytes = [MaybeUninit::<u8>::uninit(); 128];
    let mut arena = Arena::new(&mut bytes);
    let x = arena.allocate_bytes(WorkspaceReq::new(3, 1)).unwrap();
    let y = arena.allocate_bytes(WorkspaceReq::new(16, 16)).unwrap();
    arena.release_bytes(y);
    arena.release_bytes(x);
    println!(
        "5 Arena used after releasing a 3-byte and a 16-aligned region in stack order: {}",
        arena.used()
    );
}
