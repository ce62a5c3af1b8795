//! Batch lanes: results do not depend on how a batch is split across
//! threads, and a failing batch reports its lowest-indexed failing matrix
//! whichever lane meets it first.

use lindiff_core::face::direct::Direct;
use lindiff_core::{BatchPolicy, Exec, Linalg, Ops};
use lindiff_cpu::Cpu;
use lindiff_tests::dense::{Dense, Rng};

fn batch_data(count: usize, n: usize) -> Vec<f64> {
    let mut rng = Rng::new(99);
    (0..count).flat_map(|_| rng.matrix::<f64>(n, n).data).collect()
}

#[test]
fn split_does_not_change_bits() {
    let (count, n) = (37, 6);
    let data = batch_data(count, n);
    let mut results = Vec::new();
    for exec in [
        Exec::serial(),
        Exec::with_threads(2),
        Exec::with_threads(3).policy(BatchPolicy::Lanes),
        Exec::with_threads(2).policy(BatchPolicy::WholeTeam),
    ] {
        let mut la = Direct::new(Cpu::with_exec(exec));
        let a = la.tensor(&[n, n, count], &data).unwrap();
        let svd = la.svd(&a).unwrap();
        let x = la.inv(&a).unwrap();
        results.push((
            svd.u.to_vec::<f64>().unwrap(),
            svd.s.to_vec::<f64>().unwrap(),
            x.to_vec::<f64>().unwrap(),
        ));
    }
    for r in &results[1..] {
        assert!(r == &results[0], "batch split changed the results");
    }
}

#[test]
fn lowest_failing_item_is_reported() {
    let (count, n) = (40, 3);
    let mut rng = Rng::new(4);
    let mut data = Vec::new();
    for b in 0..count {
        // Items 13, 27 and 39 are not positive definite.
        let x: Dense<f64> = rng.matrix(n, n);
        let mut spd = x.matmul(&x.adjoint());
        for i in 0..n {
            spd[(i, i)] += if [13, 27, 39].contains(&b) { -100.0 } else { 1.0 };
        }
        data.extend(spd.data);
    }
    cholesky_fails_at(&data, n, count, &[1, 2, 4], 13);
}

/// Cholesky of the `count` n×n matrices in `data`, on lanes of each thread
/// count, names batch item `item` as not positive definite.
fn cholesky_fails_at(data: &[f64], n: usize, count: usize, threads: &[usize], item: usize) {
    for &threads in threads {
        let mut la = Direct::new(Cpu::with_exec(Exec::with_threads(threads).policy(BatchPolicy::Lanes)));
        let a = la.tensor(&[n, n, count], data).unwrap();
        let err = la.cholesky(&a).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("cholesky: argument `a` is not positive definite (batch item {item})"),
            "{threads} threads"
        );
    }
}

/// The same at n = 128, where host-cpu factors real matrices on a padded
/// copy in each lane's workspace: the split changes no bit, and the lowest
/// failing item is named.
#[test]
fn padded_cholesky_lanes() {
    let (count, n) = (6, 128);
    let mut rng = Rng::new(12);
    let spd: Vec<f64> = (0..count)
        .flat_map(|_| {
            let x: Dense<f64> = rng.matrix(n, n);
            let mut a = x.matmul(&x.adjoint());
            for i in 0..n {
                a[(i, i)] += n as f64;
            }
            a.data
        })
        .collect();
    let mut results = Vec::new();
    for exec in [Exec::serial(), Exec::with_threads(2), Exec::with_threads(3).policy(BatchPolicy::Lanes)] {
        let mut la = Direct::new(Cpu::with_exec(exec));
        let a = la.tensor(&[n, n, count], &spd).unwrap();
        results.push(la.cholesky(&a).unwrap().to_vec::<f64>().unwrap());
    }
    for r in &results[1..] {
        assert!(r == &results[0], "batch split changed the factors");
    }
    let mut bad = spd;
    for b in [3, 5] {
        bad[b * n * n + (n / 2) * (n + 1)] = -1e9;
    }
    cholesky_fails_at(&bad, n, count, &[1, 2, 3], 3);
}
