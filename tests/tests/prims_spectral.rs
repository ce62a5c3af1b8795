//! The spectral helper primitives on hand-computed spectra: cutoffs at
//! exact ties and below δ, sums, the Lorentzian, complex spectra, batches,
//! and the pivot row each column's phase gauge uses.

use lindiff_core::face::direct::Direct;
use lindiff_core::prim::{Pair, PairInv, Regularize};
use lindiff_core::{Host, Ops, Provider};
use lindiff_tests::TestProvider;
use num_complex::Complex;

fn suite<P: Provider<Memory = Host>>(p: P) {
    let mut f = Direct::new(p);
    // x = [3, 1, 1, 0] and a second batch item [2, 2, -1, 4].
    let x = f.tensor(&[4, 2], &[3.0f64, 1.0, 1.0, 0.0, 2.0, 2.0, -1.0, 4.0]).unwrap();
    let diff = PairInv { pair: Pair::Diff, regularize: Regularize::Cutoff { relative: 1e-12 } };
    let y = f.pair_inv(&x, diff).unwrap().to_vec::<f64>().unwrap();
    // y[i, j] = 1/(x_j − x_i), 0 at ties and on the diagonal.
    let want = |x: [f64; 4], i: usize, j: usize| {
        let z: f64 = x[j] - x[i];
        if z.abs() > 1e-12 * 4.0 {
            1.0 / z
        } else {
            0.0
        }
    };
    for b in 0..2 {
        let xb = if b == 0 { [3.0, 1.0, 1.0, 0.0] } else { [2.0, 2.0, -1.0, 4.0] };
        for j in 0..4 {
            for i in 0..4 {
                assert_eq!(y[b * 16 + i + 4 * j], want(xb, i, j), "diff b={b} ({i},{j})");
            }
        }
    }
    // A wide cutoff removes the gap of 1 between 1 and 0 (δ = 0.4·3).
    let wide = PairInv { pair: Pair::Diff, regularize: Regularize::Cutoff { relative: 0.4 } };
    let y = f.pair_inv(&x, wide).unwrap().to_vec::<f64>().unwrap();
    let at = |b: usize, i: usize, j: usize| b * 16 + i + 4 * j;
    assert_eq!(y[at(0, 1, 3)], 0.0);
    assert_eq!(y[at(0, 3, 1)], 0.0);
    assert_eq!(y[at(0, 1, 0)], 1.0 / (3.0 - 1.0));
    // Sums: inv_δ(x_i + x_j), the zero x_3 + x_3 cut.
    let sum = PairInv { pair: Pair::Sum, regularize: Regularize::Cutoff { relative: 1e-12 } };
    let y = f.pair_inv(&x, sum).unwrap().to_vec::<f64>().unwrap();
    assert_eq!((y[0], y[1], y[15]), (1.0 / 6.0, 1.0 / 4.0, 0.0));
    assert_eq!(y[at(1, 1, 2)], 1.0); // 1/(2 + (−1))
                                     // Lorentzian: z/(z² + ε²), no cutoff.
    let lor = PairInv { pair: Pair::Diff, regularize: Regularize::Lorentzian { eps: 0.5 } };
    let y = f.pair_inv(&x, lor).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(y[1 + 4 * 2], 0.0);
    assert_eq!(y[4], (1.0 - 3.0) / (4.0 + 0.25));
    // Complex spectrum: 1/(x_j − x_i) in complex arithmetic.
    let xc = [Complex::new(1.0f64, 1.0), Complex::new(0.0, -1.0)];
    let z = f.tensor(&[2], &xc).unwrap();
    let y = f.pair_inv(&z, diff).unwrap().to_vec::<Complex<f64>>().unwrap();
    assert!((y[2] - Complex::new(1.0, 0.0) / (xc[1] - xc[0])).norm() < 1e-15);
    // Pivot phase: the first largest-magnitude entry of each column.
    let u = f.tensor(&[3, 2], &[0.5f64, -2.0, 2.0, 0.0, 0.0, 0.0]).unwrap();
    let y = f.pivot_phase(&u).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(y, vec![0.0, -0.5, 0.0, 0.0, 0.0, 0.0]);
    // Errors name the op and argument.
    let m = f.tensor(&[2, 2], &[1.0f64; 4]).unwrap();
    let bad = PairInv { pair: Pair::Sum, regularize: Regularize::Lorentzian { eps: 0.0 } };
    let err = f.pair_inv(&m, bad).unwrap_err().to_string();
    assert!(err.starts_with("pair_inv: option `regularize`"), "{err}");
    let s = f.tensor(&[], &[1.0f64]).unwrap();
    let err = f.pivot_phase(&s).unwrap_err().to_string();
    assert!(err.starts_with("pivot_phase: argument `u`"), "{err}");
}

fn spectral_primitives<P: TestProvider>(provider: &P) {
    suite(*provider);
}

lindiff_tests::providers!(spectral_primitives);
