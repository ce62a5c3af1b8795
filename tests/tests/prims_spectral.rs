//! The spectral helper primitives on hand-computed spectra: cutoffs at
//! exact ties and below δ, sums, the Lorentzian, complex spectra, batches,
//! and the pivot row each column's phase gauge uses; and reverse mode's
//! values check on batches (a failure in the second item, kinks for the SVD
//! only).

use lindiff_core::face::direct::Direct;
use lindiff_core::op::internal::{why, GaugeOf, ValuesCheck};
use lindiff_core::prim::{Pair, PairInv, Regularize};
use lindiff_core::{
    Error, Face, Host, Ops, PrimOp, Provider, RealScalar, Scalar, Shape, TensorDesc, TensorMeta,
};
use lindiff_tests::dense::Re;
use lindiff_tests::host::{run, HostTensor};
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

/// `ValuesCheck` of `x` and `g` (`[3, 2]`: two batch items) as `of`: the
/// checked `g`, or the error.
fn values_check<P: Provider<Memory = Host>>(
    f: &mut Direct<P>,
    of: GaugeOf,
    x: [f64; 6],
    g: [f64; 6],
) -> Result<Vec<f64>, Error> {
    let (x, g) = (f.tensor(&[3, 2], &x)?, f.tensor(&[3, 2], &g)?);
    let outs = f.apply(ValuesCheck(of).into(), &[&x, &g])?;
    outs.into_iter().next().flatten().expect("the checked g").to_vec::<f64>()
}

fn values<P: Provider<Memory = Host>>(p: P) {
    let mut f = Direct::new(p);
    let svd = GaugeOf::Svd;
    // Distinct values, then a tie [2, 2] with equal cotangents: passed through.
    let (x, g) = ([3.0, 2.0, 1.0, 2.0, 2.0, 1.0], [1.0, 2.0, 3.0, 1.0, 1.0, 5.0]);
    assert_eq!(values_check(&mut f, svd, x, g).unwrap(), g);
    // The tie in the second item with unequal cotangents.
    let unequal = [1.0, 2.0, 3.0, 1.0, 2.0, 5.0];
    match values_check(&mut f, svd, x, unequal) {
        Err(Error::NotDifferentiable { op: "svd", output: "s", why }) => assert_eq!(why, why::SVD_VALUES),
        other => panic!("a tie with unequal cotangents: {other:?}"),
    }
    match values_check(&mut f, GaugeOf::Eigh, x, unequal) {
        Err(Error::NotDifferentiable { op: "eigh", output: "w", why }) => assert_eq!(why, why::EIGH_VALUES),
        other => panic!("eigh, tied values with unequal cotangents: {other:?}"),
    }
    // A zero value with a nonzero cotangent: a kink for the SVD, nothing
    // for eigh (an eigenvalue may be 0).
    let zero = [3.0, 2.0, 1.0, 2.0, 1.0, 0.0];
    match values_check(&mut f, svd, zero, g) {
        Err(Error::NotDifferentiable { op: "svd", output: "s", why }) => assert_eq!(why, why::SVD_KINK),
        other => panic!("a kink: {other:?}"),
    }
    assert_eq!(values_check(&mut f, GaugeOf::Eigh, zero, g).unwrap(), g);
    // Differences at rounding level are not violations.
    let close = [1.0, 2.0, 3.0, 1.0, 1.0 + 1e-15, 5.0];
    assert_eq!(values_check(&mut f, svd, x, close).unwrap(), close);
}

/// `PairInv` over `[21, 2]` spectra laid out contiguously and with a row
/// stride of 3 (NaN between the entries): the same bits from both layouts,
/// and the formula y[i, j] = g(x_j ∓ x_i) computed here, for both pairs,
/// both regularizations, real and complex.
fn pair_inv_layouts<T: Scalar, P: Provider<Memory = Host>>(p: P) {
    let k = 21;
    // Entries with exact ties (i % 7) and a zero, both batch items.
    let xs: Vec<T> = (0..2 * k)
        .map(|i| {
            T::from_parts(Re::<T>::from_f64((i % 7) as f64 - 2.0), Re::<T>::from_f64((i % 3) as f64 * 0.5))
        })
        .collect();
    let mut padded = vec![T::from_parts(Re::<T>::from_f64(f64::NAN), Re::<T>::zero()); 3 * 2 * k];
    for (i, &v) in xs.iter().enumerate() {
        padded[3 * i] = v;
    }
    let meta = TensorMeta::new(T::DTYPE, Shape::new(&[k, 2]).unwrap());
    let contiguous = HostTensor::new(&[k, 2], &xs);
    let strided = HostTensor::with_desc(
        TensorDesc { meta, strides: [3, 3 * k].into_iter().collect(), offset: 0 },
        &padded,
    );
    let ops = [
        PairInv { pair: Pair::Diff, regularize: Regularize::Cutoff { relative: 1e-12 } },
        PairInv { pair: Pair::Sum, regularize: Regularize::Cutoff { relative: 1e-12 } },
        PairInv { pair: Pair::Diff, regularize: Regularize::Lorentzian { eps: 0.25 } },
        PairInv { pair: Pair::Sum, regularize: Regularize::Lorentzian { eps: 0.25 } },
    ];
    for op in ops {
        let y = run(&p, PrimOp::PairInv(op), &[&contiguous]).unwrap().remove(0).unwrap().to_vec::<T>();
        let ys = run(&p, PrimOp::PairInv(op), &[&strided]).unwrap().remove(0).unwrap().to_vec::<T>();
        assert!(y.iter().zip(&ys).all(|(a, b)| a == b), "{op:?}: layouts differ");
        for b in 0..2 {
            let x = &xs[b * k..(b + 1) * k];
            let delta = x.iter().map(|v| v.abs().to_f64()).fold(0.0, f64::max) * 1e-12;
            for j in 0..k {
                for i in 0..k {
                    let z = if op.pair == Pair::Diff { x[j] - x[i] } else { x[i] + x[j] };
                    let want = match op.regularize {
                        _ if op.pair == Pair::Diff && i == j => T::zero(),
                        Regularize::Cutoff { .. } if z.abs().to_f64() > delta => T::one() / z,
                        Regularize::Cutoff { .. } => T::zero(),
                        Regularize::Lorentzian { eps } => {
                            z.conj() * T::from_real(Re::<T>::from_f64(1.0 / (z.abs2().to_f64() + eps * eps)))
                        }
                    };
                    let got = y[b * k * k + i + k * j];
                    let tol = 1e-5 * (1.0 + want.abs().to_f64());
                    assert!(
                        (got - want).abs().to_f64() <= tol,
                        "{op:?} b={b} ({i},{j}): {got:?} vs {want:?}"
                    );
                }
            }
        }
    }
}

fn spectral_primitives<P: TestProvider>(provider: &P) {
    suite(*provider);
    values(*provider);
    pair_inv_layouts::<f64, P>(*provider);
    pair_inv_layouts::<Complex<f64>, P>(*provider);
    pair_inv_layouts::<f32, P>(*provider);
}

lindiff_tests::providers!(spectral_primitives);
