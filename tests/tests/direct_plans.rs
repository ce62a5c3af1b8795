//! The direct face keeps call plans per (op, input layouts) and keeps each
//! tensor's layout in its pool block. Results must be those of a fresh face
//! whatever ran before: other shapes, another layout of the same dims, more
//! distinct calls than plans kept, failed calls; and a reused block must
//! carry its new tensor's layout.

use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::face::QrFactors;
use lindiff_core::{Error, Ops};
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::TestProvider;

/// Every output of qr, svd and solve on `a` (given as `make` builds it on
/// a face), as (dims, strides, values).
type Outputs = Vec<(Vec<usize>, Vec<usize>, Vec<f64>)>;

fn record(ts: &[&Tensor]) -> Outputs {
    ts.iter().map(|t| (t.dims().to_vec(), t.desc().strides.to_vec(), t.to_vec::<f64>().unwrap())).collect()
}

fn run<P: TestProvider>(la: &mut Direct<P>, a: &Tensor, b: &Tensor) -> Outputs {
    let qr = la.qr(a).unwrap();
    let svd = la.svd(a).unwrap();
    let mut out = record(&[&qr.q, &qr.r, &svd.u, &svd.s, &svd.vh]);
    if a.dims()[0] == a.dims()[1] {
        out.extend(record(&[&la.solve(a, b).unwrap()]));
    }
    out
}

/// `a`'s entries in row-major order (the same matrix, the other layout).
fn row_major(a: &Dense<f64>) -> Vec<f64> {
    (0..a.rows).flat_map(|i| (0..a.cols).map(move |j| (i, j))).map(|(i, j)| a.data[i + j * a.rows]).collect()
}

fn plans_match_fresh_faces<P: TestProvider>(provider: &P) {
    let mut la = Direct::new(*provider);
    let mut rng = Rng::new(5);
    // 20 distinct shapes, square ones among them: more (op, layout) pairs
    // than the face keeps plans for, visited twice.
    let shapes: Vec<(usize, usize)> = (0..20).map(|k| (2 + k % 5, 2 + k / 5)).collect();
    let mats: Vec<Dense<f64>> = shapes.iter().map(|&(m, n)| rng.matrix(m, n)).collect();
    for round in 0..2 {
        for a in &mats {
            let (m, n) = (a.rows, a.cols);
            let b = rng.matrix::<f64>(m, 1);
            for row_view in [false, true] {
                let make = |f: &mut Direct<P>| {
                    let t = if row_view {
                        f.tensor_row_major(m, n, &row_major(a)).unwrap()
                    } else {
                        f.tensor(&[m, n], &a.data).unwrap()
                    };
                    (t, f.tensor(&[m, 1], &b.data).unwrap())
                };
                let (ta, tb) = make(&mut la);
                let got = run(&mut la, &ta, &tb);
                let mut fresh = Direct::new(*provider);
                let (fa, fb) = make(&mut fresh);
                let want = run(&mut fresh, &fa, &fb);
                assert_eq!(got, want, "{m}×{n}, row-major view {row_view}, round {round}");
            }
        }
        // A failed call (shape error, before any plan) and a failing one
        // (singular, after planning) leave the face working.
        let wide = la.tensor(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert!(matches!(la.det(&wide), Err(Error::NotSquare { .. })), "det of 2×3");
        let zero = la.tensor(&[2, 2], &[0.0; 4]).unwrap();
        let rhs = la.tensor(&[2, 1], &[1.0, 1.0]).unwrap();
        assert!(matches!(la.solve(&zero, &rhs), Err(Error::Singular { .. })));
    }
}

fn blocks_carry_their_tensors_layout<P: TestProvider>(provider: &P) {
    let mut la = Direct::new(*provider);
    let data: Vec<f64> = (0..6).map(f64::from).collect();
    let a = la.tensor(&[2, 3], &data).unwrap();
    let blocks = la.pool().block_count();
    drop(a);
    // Same bytes: the freed block is reused, relabelled.
    let b = la.tensor(&[3, 2], &data).unwrap();
    assert_eq!(la.pool().block_count(), blocks);
    assert_eq!((b.dims(), b.desc().strides.as_slice()), (&[3, 2][..], &[1, 3][..]));
    let shared = b.clone();
    drop(b);
    let c = la.tensor_row_major(2, 3, &data).unwrap();
    assert_eq!((c.dims(), c.desc().strides.as_slice()), (&[2, 3][..], &[3, 1][..]));
    assert_eq!((shared.dims(), shared.to_vec::<f64>().unwrap()), (&[3, 2][..], data.clone()));
    // Outputs of one call, then of another shape in the same blocks.
    let q = la.qr(&shared).unwrap().q;
    assert_eq!(q.dims(), &[3, 2]);
    drop(q);
    let r = la.qr(&c).unwrap().r;
    assert_eq!(r.dims(), &[2, 3]);
    drop(r);
    // Back to the first plan, in the same blocks: the second plan's
    // outputs relabelled them in between, and they must carry the first
    // plan's layouts again (a block keeps a plan output's layout only while
    // no other tensor took it since); then the same plan twice in a row,
    // whose blocks keep their layouts.
    let blocks = la.pool().block_count();
    let first = |t: &QrFactors<Tensor>| {
        assert_eq!((t.q.dims(), t.q.desc().strides.as_slice()), (&[3, 2][..], &[1, 3][..]));
        assert_eq!((t.r.dims(), t.r.desc().strides.as_slice()), (&[2, 2][..], &[1, 2][..]));
    };
    for _ in 0..2 {
        first(&la.qr(&shared).unwrap());
        let qr = la.qr(&c).unwrap();
        assert_eq!((qr.q.dims(), qr.q.desc().strides.as_slice()), (&[2, 2][..], &[1, 2][..]));
        assert_eq!((qr.r.dims(), qr.r.desc().strides.as_slice()), (&[2, 3][..], &[1, 2][..]));
    }
    for _ in 0..2 {
        first(&la.qr(&shared).unwrap());
    }
    assert_eq!(la.pool().block_count(), blocks, "the calls reused the pool's blocks");
}

lindiff_tests::providers!(plans_match_fresh_faces, blocks_carry_their_tensors_layout);
