//! What the singularity tests of the LU solves cost: `solve`
//! (`lu_factor_solve`, one right-hand side) with `SolveOptions::raw()` (no
//! test: only an exactly zero pivot is singular), the default (the pivot
//! ratio, O(n)) and `SingularCheck::ConditionEstimate` (the pivot ratio,
//! then a 1-norm condition estimate, ~10·n² flops), side by side in one
//! run: each round times a block of calls of each variant in turn, so
//! machine noise hits the three alike; each figure is the fastest block's
//! time per call.
//!
//! `cargo bench -p lindiff-cpu --bench singular` (orders 8, 64 and 256, or
//! those listed in `LINDIFF_BENCH_SIZES`). Each call is a planned call
//! (`call::prepare` once, `call::run_prepared` over caller buffers): the
//! factorization, the test and the triangular solves, without the direct
//! face's pool.

use lindiff_core::op::{LuFactorSolve, SingularCheck, SolveOptions};
use lindiff_core::LinalgOp;
use lindiff_cpu::Cpu;
use std::time::{Duration, Instant};

#[path = "harness/mod.rs"]
#[allow(dead_code)]
mod harness;
use harness::{matrix, Planned};

/// How long each order alternates the three variants.
const ORDER_TIME: Duration = Duration::from_millis(1500);

/// Seconds per call of the fastest of the blocks of `calls` calls.
fn block(calls: usize, run: &mut dyn FnMut()) -> f64 {
    let t = Instant::now();
    for _ in 0..calls {
        run();
    }
    t.elapsed().as_secs_f64() / calls as f64
}

fn main() {
    let sizes: Vec<usize> = match std::env::var("LINDIFF_BENCH_SIZES") {
        Ok(list) => list.split(',').map(|n| n.trim().parse().expect("LINDIFF_BENCH_SIZES: orders")).collect(),
        Err(_) => vec![8, 64, 256],
    };
    let variants = [
        ("raw", SolveOptions::raw()),
        ("pivot", SolveOptions::default()),
        ("cond", SolveOptions::default().check(SingularCheck::ConditionEstimate)),
    ];
    println!("lindiff-cpu solve (f64, n×n and n×1, planned call): µs per call, fastest block; ratios to raw");
    println!(
        "{:<8} {:>5} {:>11} {:>11} {:>11} {:>11} {:>10}",
        "op", "n", "raw", "pivot", "cond", "pivot/raw", "cond/raw"
    );
    let mut at8 = None;
    for n in sizes {
        let a = matrix(n, n, 7);
        let b = matrix(n, 1, 11);
        let mut plans: Vec<Planned<Cpu>> = variants
            .iter()
            .map(|&(_, opts)| {
                Planned::new(
                    Cpu::new(),
                    LinalgOp::LuFactorSolve(LuFactorSolve(opts)),
                    &[(&[n, n], &a), (&[n, 1], &b)],
                )
            })
            .collect();
        // A block lasts ~20 µs or more; warm every variant first.
        let calls = match n {
            0..=16 => 200,
            17..=64 => 4,
            _ => 1,
        };
        for p in plans.iter_mut() {
            for _ in 0..calls {
                p.run();
            }
        }
        let mut best = [f64::INFINITY; 3];
        let start = Instant::now();
        while start.elapsed() < ORDER_TIME {
            for (k, p) in plans.iter_mut().enumerate() {
                best[k] = best[k].min(block(calls, &mut || p.run()));
            }
        }
        let [raw, pivot, cond] = best;
        println!(
            "{:<8} {n:>5} {:>11.3} {:>11.3} {:>11.3} {:>11.3} {:>10.3}",
            "solve",
            raw * 1e6,
            pivot * 1e6,
            cond * 1e6,
            pivot / raw,
            cond / raw
        );
        if n == 8 {
            at8 = Some(best);
        }
    }
    if let Some([raw, pivot, cond]) = at8 {
        println!(
            "n = 8, ns per call: raw {:.0}, pivot {:.0} ({:+.0}), cond {:.0} ({:+.0})",
            raw * 1e9,
            pivot * 1e9,
            (pivot - raw) * 1e9,
            cond * 1e9,
            (cond - raw) * 1e9
        );
    }
}
