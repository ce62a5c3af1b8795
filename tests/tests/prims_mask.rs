//! The rank mask primitive on hand-written counts: a batch with counts
//! below 0, 0, inside and beyond k, every float dtype, a scalar count, a
//! row-major (non-contiguous) count tensor, and the errors.

use lindiff_core::face::direct::Direct;
use lindiff_core::{DType, Host, Ops, Provider};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// 1 at i < r, for each count r of `ranks`, k entries per count.
fn expected(ranks: &[i64], k: usize) -> Vec<f64> {
    ranks.iter().flat_map(|&r| (0..k).map(move |i| if (i as i64) < r { 1.0 } else { 0.0 })).collect()
}

fn suite<P: Provider<Memory = Host>>(p: P) {
    let mut f = Direct::new(p);
    // A [2, 3] batch of counts (column-major).
    let ranks = [-1i64, 0, 1, 3, 4, 9];
    let r = f.tensor(&[2, 3], &ranks).unwrap();
    let want = expected(&ranks, 4);
    let y = f.rank_mask(&r, 4, DType::F64).unwrap();
    assert_eq!(y.dims(), &[4, 2, 3]);
    assert_eq!(y.to_vec::<f64>().unwrap(), want);
    let y = f.rank_mask(&r, 4, DType::F32).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(y, want.iter().map(|&x| x as f32).collect::<Vec<_>>());
    let y = f.rank_mask(&r, 4, DType::C64).unwrap().to_vec::<Complex<f64>>().unwrap();
    assert_eq!(y, want.iter().map(|&x| Complex::new(x, 0.0)).collect::<Vec<_>>());
    // One count (rank-0 tensor); k = 0 gives an empty mask.
    let one = f.tensor(&[], &[2i64]).unwrap();
    assert_eq!(f.rank_mask(&one, 3, DType::F64).unwrap().to_vec::<f64>().unwrap(), vec![1.0, 1.0, 0.0]);
    assert_eq!(f.rank_mask(&one, 0, DType::F64).unwrap().dims(), &[0]);
    // A row-major view of the counts is read through its strides: the
    // matrix [[r0, r1, r2], [r3, r4, r5]] in column-major order.
    let rm = f.tensor_row_major(2, 3, &ranks).unwrap();
    let order = [ranks[0], ranks[3], ranks[1], ranks[4], ranks[2], ranks[5]];
    let y = f.rank_mask(&rm, 4, DType::F64).unwrap().to_vec::<f64>().unwrap();
    assert_eq!(y, expected(&order, 4));
    // Errors name the op and the argument.
    let x = f.tensor(&[2], &[1.0f64, 2.0]).unwrap();
    let err = f.rank_mask(&x, 2, DType::F64).unwrap_err().to_string();
    assert!(err.starts_with("rank_mask: argument `rank`"), "{err}");
    let err = f.rank_mask(&r, 2, DType::I64).unwrap_err().to_string();
    assert!(err.starts_with("rank_mask: argument `y`"), "{err}");
}

fn rank_mask<P: TestProvider>(provider: &P) {
    suite(*provider);
}

lindiff_tests::providers!(rank_mask);
