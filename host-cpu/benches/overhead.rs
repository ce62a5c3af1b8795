//! lindiff-cpu vs faer called directly, measured side by side in one run.
//!
//! `cargo xtask bench` (or `cargo bench -p lindiff-cpu --features threads
//! --bench overhead`). Rows alternate lindiff and faer round by round (for
//! at least 0.4 s a row, `harness::side_by_side`) so that machine noise
//! hits both alike; a row's times are the medians over rounds and its
//! ratio the median of the rounds' ratios. The
//! faer side asks for the same results with the same parameters (thin
//! factors, default params, `Par::Seq`, preallocated outputs and scratch) and
//! leaves
//! the same outputs: R and L with zeros below / above the diagonal, as
//! faer's own `Qr::new` and `Llt::new` make them (its in-place calls leave
//! Householder vectors there, or A's entries); the lindiff
//! side goes through the direct face (checks, pool, conventions, SVD guard)
//! and, in the rows marked "(plan)", through a call planned once
//! (`call::prepare` + `call::run_prepared` over caller buffers: the same
//! checks, conventions and guard, without the pool and the per-call plan).
//! Where lindiff-cpu runs its own kernel (real Cholesky up to n = 132, LU
//! up to 48, QR up to 96, the SVD up to 8×8 with the default driver, the
//! tridiagonal step of eigh and the bidiagonal step of the SVD from
//! n = 128) a row compares two kernels; the
//! batch's "(QR)" row asks lindiff for `SvdDriver::QrIteration`, i.e.
//! faer's own 8×8 algorithm, so it measures lindiff's overhead on faer.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::zip::Diag;
use faer::linalg::{cholesky, evd, householder, lu, qr, svd};
use faer::{unzip, zip, Col, Conj, Mat, MatRef, Par};
use lindiff_core::op::{Cholesky, Eigh, Lu, LuFactorSolve, Qr, Svd, SvdDriver, SvdOptions};
use lindiff_core::{BatchPolicy, Exec, LinalgOp, Ops};
use lindiff_cpu::{Cpu, Direct, Tensor};
use std::hint::black_box;

#[path = "harness/mod.rs"]
mod harness;
use harness::{matrix, reps_for, row, side_by_side, sizes, table, Pair, Planned};

/// The prepared call of `op` against the same faer closure.
fn planned_row(
    op: &str,
    n: usize,
    planned: &mut Planned<Cpu>,
    rounds: usize,
    reps: usize,
    theirs: impl FnMut(),
) {
    let label = format!("{op} (plan)");
    row(&label, n, side_by_side(rounds, reps, || planned.run(), theirs));
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
    table("lindiff-cpu vs faer called directly (f64, serial, µs; ratio = lindiff / faer)", "lindiff", "faer");
    let mut la = Direct::new(Cpu::new());
    for n in sizes(&[8, 16, 32, 64, 128, 256, 512]) {
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
        let mut faer_svd = || svd_faer(a_faer.as_ref(), &mut u, &mut v, &mut s, &mut mem);
        row("svd", n, side_by_side(rounds, reps, || drop(black_box(la.svd(&a).unwrap())), &mut faer_svd));
        let mut plan = Planned::new(Cpu::new(), LinalgOp::Svd(Svd::default()), &[(&[n, n], &data)]);
        planned_row("svd", n, &mut plan, rounds, reps, &mut faer_svd);

        // QR: factor a copy, form the thin Q, and leave R with zeros below
        // the diagonal (faer's `Qr::new` splits R off the same way).
        let bs = qr::no_pivoting::factor::recommended_block_size::<f64>(n, n);
        let (mut qr_m, mut coeff, mut q) = (Mat::zeros(n, n), Mat::zeros(bs, n), Mat::zeros(n, n));
        let req = qr::no_pivoting::factor::qr_in_place_scratch::<f64>(n, n, bs, Par::Seq, Default::default())
            .or(householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(n, bs, n));
        let mut mem = MemBuffer::new(req);
        let mut faer_qr = || {
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
            zip!(qr_m.as_mut()).for_each_triangular_lower(Diag::Skip, |unzip!(x)| *x = 0.0);
        };
        row("qr", n, side_by_side(rounds, reps, || drop(black_box(la.qr(&a).unwrap())), &mut faer_qr));
        let mut plan = Planned::new(Cpu::new(), LinalgOp::Qr(Qr::default()), &[(&[n, n], &data)]);
        planned_row("qr", n, &mut plan, rounds, reps, &mut faer_qr);

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
        let mut faer_eigh = || {
            evd::self_adjoint_evd(
                sym_faer.as_ref(),
                w.as_mut().as_diagonal_mut(),
                Some(vecs.as_mut()),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .unwrap();
        };
        row(
            "eigh",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.eigh(&sym).unwrap())), &mut faer_eigh),
        );
        let mut plan = Planned::new(Cpu::new(), LinalgOp::Eigh(Eigh::default()), &[(&[n, n], &sym_data)]);
        planned_row("eigh", n, &mut plan, rounds, reps, &mut faer_eigh);

        // Cholesky of A Aᵀ + n I.
        let spd_faer = &a_faer * a_faer.transpose() + Mat::<f64>::identity(n, n) * (n as f64);
        let spd_data: Vec<f64> = (0..n * n).map(|k| spd_faer[(k % n, k / n)]).collect();
        let spd = la.tensor(&[n, n], &spd_data).unwrap();
        let mut l = Mat::zeros(n, n);
        let req = cholesky::llt::factor::cholesky_in_place_scratch::<f64>(n, Par::Seq, Default::default());
        let mut mem = MemBuffer::new(req);
        // faer's own `Llt::new` steps, without its allocations: the lower
        // triangle in, factor in place, zeros above the diagonal (the
        // in-place call leaves A's entries there, and lindiff returns L).
        let mut faer_cholesky = || {
            l.copy_from_triangular_lower(spd_faer.as_ref());
            cholesky::llt::factor::cholesky_in_place(
                l.as_mut(),
                Default::default(),
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            )
            .unwrap();
            zip!(l.as_mut()).for_each_triangular_upper(Diag::Skip, |unzip!(x)| *x = 0.0);
        };
        row(
            "cholesky",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.cholesky(&spd).unwrap())), &mut faer_cholesky),
        );
        let mut plan = Planned::new(Cpu::new(), LinalgOp::Cholesky(Cholesky), &[(&[n, n], &spd_data)]);
        planned_row("cholesky", n, &mut plan, rounds, reps, &mut faer_cholesky);

        // Partial-pivot LU into P, L (unit lower) and U (upper), as
        // lindiff's `lu` returns them: factor a copy in place, then split
        // it into the two triangles and write the permutation as i64.
        let (mut lu_f, mut l_f, mut u_f) = (Mat::zeros(n, n), Mat::zeros(n, n), Mat::zeros(n, n));
        let (mut fwd, mut inv, mut perm64) = (vec![0usize; n], vec![0usize; n], vec![0i64; n]);
        let req = lu::partial_pivoting::factor::lu_in_place_scratch::<usize, f64>(
            n,
            n,
            Par::Seq,
            Default::default(),
        );
        let mut mem = MemBuffer::new(req);
        let mut faer_lu = || {
            lu_f.copy_from(a_faer.as_ref());
            lu::partial_pivoting::factor::lu_in_place(
                lu_f.as_mut(),
                &mut fwd,
                &mut inv,
                Par::Seq,
                MemStack::new(&mut mem),
                Default::default(),
            );
            l_f.copy_from_strict_triangular_lower(lu_f.as_ref());
            l_f.diagonal_mut().fill(1.0);
            u_f.copy_from_triangular_upper(lu_f.as_ref());
            for (p, &f) in perm64.iter_mut().zip(&fwd) {
                *p = f as i64;
            }
            black_box((&l_f, &u_f, &perm64));
        };
        row("lu", n, side_by_side(rounds, reps, || drop(black_box(la.lu(&a).unwrap())), &mut faer_lu));
        let mut plan = Planned::new(Cpu::new(), LinalgOp::Lu(Lu), &[(&[n, n], &data)]);
        planned_row("lu", n, &mut plan, rounds, reps, &mut faer_lu);

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
        let mut faer_solve = || {
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
        };
        row(
            "solve",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.solve(&a, &b).unwrap())), &mut faer_solve),
        );
        let mut plan = Planned::new(
            Cpu::new(),
            LinalgOp::LuFactorSolve(LuFactorSolve::default()),
            &[(&[n, n], &data), (&[n, 1], &b_data)],
        );
        planned_row("solve", n, &mut plan, rounds, reps, &mut faer_solve);
    }

    // Every run (the process medians of `cargo xtask bench` too): one
    // process's batch ratio read 0.970, 1.009 and 1.060 in three runs.
    batch_table();
}

/// One batch row: seconds in, ms out.
fn batch_row(label: &str, count: usize, p: Pair) {
    println!("{label:<10} {count:>6} {:>12.3} {:>12.3} {:>8.3}", p.ours * 1e3, p.theirs * 1e3, p.ratio);
}

/// A batch of 10 000 8×8 SVDs vs a plain loop of faer calls.
fn batch_table() {
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
    table(&format!("{count} SVDs of {n}×{n} (values + vectors): one batch call vs faer in a loop (ms; ratio = lindiff / faer)"), "lindiff", "faer loop");
    for threads in [1usize, 2] {
        let mut batch = Direct::new(Cpu::with_exec(Exec::with_threads(threads).policy(BatchPolicy::Auto)));
        let t = batch.tensor(&[n, n, count], &data).unwrap();
        let p = side_by_side(3, 3, || drop(black_box(batch.svd(&t).unwrap())), &mut faer_loop);
        batch_row(&format!("{threads} thr"), count, p);
        if threads == 1 {
            // faer's algorithm inside lindiff (below 128 faer's default is
            // QR iteration too): lindiff's overhead on faer's 8×8 SVD.
            let qr = SvdOptions::default().driver(SvdDriver::QrIteration);
            let p = side_by_side(
                3,
                3,
                || drop(black_box(batch.svd_with_options(&t, qr).unwrap())),
                &mut faer_loop,
            );
            batch_row("1 thr (QR)", count, p);
        }
    }
}
