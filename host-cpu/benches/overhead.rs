//! lindiff-cpu vs faer called directly, measured side by side in one run.
//!
//! `cargo xtask bench` (or `cargo bench -p lindiff-cpu --features threads
//! --bench overhead`). Each figure is the minimum over repeated runs,
//! alternating lindiff and faer so that machine noise hits both alike. The
//! faer side does the same work with the same parameters (thin factors,
//! default params, `Par::Seq`, preallocated outputs and scratch); the lindiff
//! side goes through the direct face (checks, pool, conventions, SVD guard).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::{cholesky, evd, householder, lu, qr, svd};
use faer::{Col, Conj, Mat, MatRef, Par};
use lindiff_core::{BatchPolicy, Exec, Linalg};
use lindiff_cpu::{Cpu, Direct, Tensor};
use std::hint::black_box;
use std::time::Instant;

/// Uniform [-0.5, 0.5) entries from xorshift, as in the seed's timing runs.
fn matrix(n: usize, m: usize, seed: u64) -> Vec<f64> {
    let mut x = seed | 1;
    (0..n * m)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect()
}

fn min_time(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// Alternates the two closures `rounds` times; returns each one's minimum.
fn side_by_side(rounds: usize, reps: usize, mut ours: impl FnMut(), mut theirs: impl FnMut()) -> (f64, f64) {
    let (mut a, mut b) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..rounds {
        a = a.min(min_time(reps, &mut ours));
        b = b.min(min_time(reps, &mut theirs));
    }
    (a, b)
}

fn reps_for(n: usize) -> (usize, usize) {
    match n {
        0..=32 => (5, 200),
        33..=128 => (5, 20),
        _ => (3, 3),
    }
}

fn row(op: &str, n: usize, (ours, theirs): (f64, f64)) {
    println!("{op:<10} {n:>6} {:>12.4} {:>12.4} {:>8.3}", ours * 1e3, theirs * 1e3, ours / theirs);
}

fn svd_faer(a: MatRef<'_, f64>, u: &mut Mat<f64>, v: &mut Mat<f64>, s: &mut Col<f64>, mem: &mut MemBuffer) {
    svd::svd(
        a,
        s.as_mut().as_diagonal_mut(),
        Some(u.as_mut()),
        Some(v.as_mut()),
        Par::Seq,
        MemStack::new(mem),
        Default::default(),
    )
    .unwrap();
}

fn main() {
    println!("lindiff-cpu vs direct faer (f64, serial, ms; ratio = lindiff / faer)");
    println!("{:<10} {:>6} {:>12} {:>12} {:>8}", "op", "n", "lindiff", "faer", "ratio");
    let mut la = Direct::new(Cpu::new());
    for n in [32usize, 128, 512] {
        let (rounds, reps) = reps_for(n);
        let data = matrix(n, n, 7);
        let a_faer = Mat::from_fn(n, n, |i, j| data[i + j * n]);
        let a: Tensor = la.tensor(&[n, n], &data).unwrap();

        // SVD, thin, default params.
        let (mut u, mut v, mut s) = (Mat::zeros(n, n), Mat::zeros(n, n), Col::zeros(n));
        let req = svd::svd_scratch::<f64>(
            n,
            n,
            svd::ComputeSvdVectors::Thin,
            svd::ComputeSvdVectors::Thin,
            Par::Seq,
            Default::default(),
        );
        let mut mem = MemBuffer::new(req);
        row(
            "svd",
            n,
            side_by_side(
                rounds,
                reps,
                || drop(black_box(la.svd(&a).unwrap())),
                || svd_faer(a_faer.as_ref(), &mut u, &mut v, &mut s, &mut mem),
            ),
        );

        // QR: factor a copy, then form the thin Q.
        let bs = qr::no_pivoting::factor::recommended_block_size::<f64>(n, n);
        let (mut qr_m, mut coeff, mut q) = (Mat::zeros(n, n), Mat::zeros(bs, n), Mat::zeros(n, n));
        let req = qr::no_pivoting::factor::qr_in_place_scratch::<f64>(n, n, bs, Par::Seq, Default::default())
            .or(householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(n, bs, n));
        let mut mem = MemBuffer::new(req);
        row(
            "qr",
            n,
            side_by_side(
                rounds,
                reps,
                || drop(black_box(la.qr(&a).unwrap())),
                || {
                    qr_m.copy_from(a_faer.as_ref());
                    qr::no_pivoting::factor::qr_in_place(
                        qr_m.as_mut(),
                        coeff.as_mut(),
                        Par::Seq,
                        MemStack::new(&mut mem),
                        Default::default(),
                    );
                    q.fill(0.0);
                    for i in 0..n {
                        q[(i, i)] = 1.0;
                    }
                    householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
                        qr_m.as_ref(),
                        coeff.as_ref(),
                        Conj::No,
                        q.as_mut(),
                        Par::Seq,
                        MemStack::new(&mut mem),
                    );
                },
            ),
        );

        // eigh with vectors on a symmetric matrix.
        let sym_data: Vec<f64> = (0..n * n).map(|k| data[k] + data[(k % n) * n + k / n]).collect();
        let sym_faer = Mat::from_fn(n, n, |i, j| sym_data[i + j * n]);
        let sym = la.tensor(&[n, n], &sym_data).unwrap();
        let (mut w, mut vecs) = (Col::zeros(n), Mat::zeros(n, n));
        let req = evd::self_adjoint_evd_scratch::<f64>(
            n,
            evd::ComputeEigenvectors::Yes,
            Par::Seq,
            Default::default(),
        );
        let mut mem = MemBuffer::new(req);
        row(
            "eigh",
            n,
            side_by_side(
                rounds,
                reps,
                || drop(black_box(la.eigh(&sym).unwrap())),
                || {
                    evd::self_adjoint_evd(
                        sym_faer.as_ref(),
                        w.as_mut().as_diagonal_mut(),
                        Some(vecs.as_mut()),
                        Par::Seq,
                        MemStack::new(&mut mem),
                        Default::default(),
                    )
                    .unwrap();
                },
            ),
        );

        // Cholesky of A Aᵀ + n I.
        let spd_faer = &a_faer * a_faer.transpose() + Mat::<f64>::identity(n, n) * (n as f64);
        let spd_data: Vec<f64> = (0..n * n).map(|k| spd_faer[(k % n, k / n)]).collect();
        let spd = la.tensor(&[n, n], &spd_data).unwrap();
        let mut l = Mat::zeros(n, n);
        let req = cholesky::llt::factor::cholesky_in_place_scratch::<f64>(n, Par::Seq, Default::default());
        let mut mem = MemBuffer::new(req);
        row(
            "cholesky",
            n,
            side_by_side(
                rounds,
                reps,
                || drop(black_box(la.cholesky(&spd).unwrap())),
                || {
                    l.copy_from(spd_faer.as_ref());
                    cholesky::llt::factor::cholesky_in_place(
                        l.as_mut(),
                        Default::default(),
                        Par::Seq,
                        MemStack::new(&mut mem),
                        Default::default(),
                    )
                    .unwrap();
                },
            ),
        );

        // Solve A x = b with one right-hand side (partial-pivot LU).
        let b_data = matrix(n, 1, 11);
        let b_faer = Mat::from_fn(n, 1, |i, _| b_data[i]);
        let b = la.tensor(&[n, 1], &b_data).unwrap();
        let (mut lu_m, mut x) = (Mat::zeros(n, n), Mat::zeros(n, 1));
        let (mut perm, mut perm_inv) = (vec![0usize; n], vec![0usize; n]);
        let req = lu::partial_pivoting::factor::lu_in_place_scratch::<usize, f64>(
            n,
            n,
            Par::Seq,
            Default::default(),
        )
        .or(lu::partial_pivoting::solve::solve_in_place_scratch::<usize, f64>(n, 1, Par::Seq));
        let mut mem = MemBuffer::new(req);
        row(
            "solve",
            n,
            side_by_side(
                rounds,
                reps,
                || drop(black_box(la.solve(&a, &b).unwrap())),
                || {
                    lu_m.copy_from(a_faer.as_ref());
                    let (_, p) = lu::partial_pivoting::factor::lu_in_place(
                        lu_m.as_mut(),
                        &mut perm,
                        &mut perm_inv,
                        Par::Seq,
                        MemStack::new(&mut mem),
                        Default::default(),
                    );
                    x.copy_from(b_faer.as_ref());
                    lu::partial_pivoting::solve::solve_in_place_with_conj(
                        lu_m.as_ref(),
                        lu_m.as_ref(),
                        p,
                        Conj::No,
                        x.as_mut(),
                        Par::Seq,
                        MemStack::new(&mut mem),
                    );
                },
            ),
        );
    }

    // A batch of 10 000 8×8 SVDs vs a plain loop of faer calls.
    let (count, n) = (10_000usize, 8usize);
    let data = matrix(n * n, count, 3);
    let mats: Vec<Mat<f64>> =
        (0..count).map(|b| Mat::from_fn(n, n, |i, j| data[b * n * n + i + j * n])).collect();
    let (mut u, mut v, mut s) = (Mat::zeros(n, n), Mat::zeros(n, n), Col::zeros(n));
    let req = svd::svd_scratch::<f64>(
        n,
        n,
        svd::ComputeSvdVectors::Thin,
        svd::ComputeSvdVectors::Thin,
        Par::Seq,
        Default::default(),
    );
    let mut mem = MemBuffer::new(req);
    let mut faer_loop = || {
        for m in &mats {
            svd_faer(m.as_ref(), &mut u, &mut v, &mut s, &mut mem);
        }
    };
    println!("\nbatch of {count} {n}×{n} SVDs (ms; ratio = lindiff / faer loop)");
    for threads in [1usize, 2] {
        let mut batch = Direct::new(Cpu::with_exec(Exec::with_threads(threads).policy(BatchPolicy::Auto)));
        let t = batch.tensor(&[n, n, count], &data).unwrap();
        let (ours, theirs) = side_by_side(3, 3, || drop(black_box(batch.svd(&t).unwrap())), &mut faer_loop);
        println!(
            "{:<10} {:>6} {:>12.3} {:>12.3} {:>8.3}",
            format!("{threads} thr"),
            count,
            ours * 1e3,
            theirs * 1e3,
            ours / theirs
        );
    }
}
