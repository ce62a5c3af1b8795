//! AD costs, measured side by side in one run (`cargo xtask bench`):
//! * eager per-op overhead: a 2×2 eigh recorded on the eager tape vs the
//!   same call on the direct face vs faer called directly (target ≤ 2 µs
//!   over the kernel);
//! * SVD forward + VJP vs forward SVD at n = 128, 256, 512 (their ratio,
//!   grad/forward, the median over rounds that alternate the two), with the
//!   backward's cost in n³-matmul equivalents (target ≤ 4): compiled
//!   programs on the interpreter, cotangents for U, s and Vᴴ all nonzero.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd;
use faer::{Mat, Par};
use lindiff_core::ad::{vjp, Eager};
use lindiff_core::face::direct::Pool;
use lindiff_core::ir::{Builder, Program};
use lindiff_core::{DType, HostData, Input, Ops, Shape, TensorDesc, TensorMeta};
use lindiff_cpu::{Cpu, Direct};
use std::hint::black_box;

// The timing helpers of the overhead benches; the rest of the harness
// (prepared calls, aligned buffers, table rows) is theirs alone.
#[allow(dead_code)]
#[path = "harness/mod.rs"]
mod harness;
use harness::{matrix, min_time, side_by_side};

fn meta(dims: &[usize]) -> TensorMeta {
    TensorMeta::new(DType::F64, Shape::new(dims).unwrap())
}

/// A compiled program with its inputs, run on a reused pool.
struct Runner<'p> {
    compiled: lindiff_core::ir::Compiled<
        'p,
        Cpu,
        { lindiff_core::ir::DEFAULT_INSTRS },
        { lindiff_core::ir::DEFAULT_VALUES },
    >,
    descs: Vec<TensorDesc>,
    inputs: &'p [(Vec<usize>, Vec<f64>)],
    pool: Pool,
}

impl<'p> Runner<'p> {
    fn new(cpu: &'p Cpu, program: &'p Program, inputs: &'p [(Vec<usize>, Vec<f64>)]) -> Self {
        let descs: Vec<TensorDesc> =
            inputs.iter().map(|(d, _)| TensorDesc::contiguous(meta(d)).unwrap()).collect();
        let refs: Vec<&TensorDesc> = descs.iter().collect();
        let compiled = program.compile(cpu, &refs).unwrap();
        Runner { compiled, descs, inputs, pool: Pool::new() }
    }

    /// One run of the program; its results go back to the pool.
    fn run(&mut self) {
        let params: Vec<Input<'_, lindiff_core::Host>> = self
            .descs
            .iter()
            .zip(self.inputs)
            .map(|(d, (_, x))| Input { desc: d, data: HostData::from_slice(x) })
            .collect();
        let mut alloc = self.pool.allocator();
        let results = self.compiled.run(&mut alloc, &params).unwrap();
        for (_, b) in results {
            lindiff_core::Allocator::<lindiff_core::Host>::release(&mut alloc, b);
        }
    }
}

fn eager_overhead() {
    let a = [2.0f64, 1.0, 1.0, 3.0];
    let mut direct = Direct::new(Cpu::new());
    let ta = direct.tensor(&[2, 2], &a).unwrap();
    let mut tape: Eager<Direct<Cpu>> = Eager::new(Direct::new(Cpu::new()));
    let tt = tape.inner().tensor(&[2, 2], &a).unwrap();
    let fa = Mat::<f64>::from_fn(2, 2, |i, j| a[i + 2 * j]);
    let mut s = faer::Col::<f64>::zeros(2);
    let mut u = Mat::<f64>::zeros(2, 2);
    let scratch =
        evd::self_adjoint_evd_scratch::<f64>(2, evd::ComputeEigenvectors::Yes, Par::Seq, Default::default());
    let mut mem = MemBuffer::new(scratch);
    let reps = 20_000;
    let (mut t_tape, mut t_direct, mut t_faer) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..5 {
        t_tape = t_tape.min(min_time(1, || {
            for _ in 0..reps {
                tape.clear();
                let v = tape.watch(tt.clone()).unwrap();
                black_box(tape.eigh(&v).unwrap());
            }
        }));
        t_direct = t_direct.min(min_time(1, || {
            for _ in 0..reps {
                black_box(direct.eigh(&ta).unwrap());
            }
        }));
        t_faer = t_faer.min(min_time(1, || {
            for _ in 0..reps {
                evd::self_adjoint_evd(
                    fa.as_ref(),
                    s.as_mut().as_diagonal_mut(),
                    Some(u.as_mut()),
                    Par::Seq,
                    MemStack::new(&mut mem),
                    Default::default(),
                )
                .unwrap();
                black_box(&u);
            }
        }));
    }
    let per = |t: f64| t / reps as f64 * 1e6;
    println!("\n## eager per-op overhead, 2×2 eigh (µs per call)");
    println!("{:<28} {:>10.3}", "eager tape (record)", per(t_tape));
    println!("{:<28} {:>10.3}", "direct face", per(t_direct));
    println!("{:<28} {:>10.3}", "faer kernel", per(t_faer));
    println!("{:<28} {:>10.3}   (target ≤ 2)", "tape − faer kernel", per(t_tape) - per(t_faer));
    println!("{:<28} {:>10.3}", "tape − direct face", per(t_tape) - per(t_direct));
}

fn svd_backward() {
    println!(
        "\n## SVD forward+VJP vs forward (f64, serial, ms; medians over alternated rounds); \
         backward in n³-matmul equivalents (target ≤ 4): (ratio − 1) / (matmul / forward), \
         each ratio the median of its own alternation with the forward"
    );
    println!(
        "{:>6} {:>10} {:>12} {:>10} {:>10} {:>10}",
        "n", "forward", "fwd+vjp", "ratio", "matmul", "bwd/matmul"
    );
    let cpu = Cpu::new();
    for n in [128usize, 256, 512] {
        let a = matrix(n, n, 7);
        let mut b: Builder = Builder::new();
        let pa = b.param(meta(&[n, n])).unwrap();
        let f = b.svd(&pa).unwrap();
        let forward = b.finish(&[&f.u, &f.s, &f.vh]).unwrap();
        let with_vjp = vjp(&forward, &[0]).unwrap();
        let mut b: Builder = Builder::new();
        let x = b.param(meta(&[n, n])).unwrap();
        let y = b.param(meta(&[n, n])).unwrap();
        let p = b.matmul(&x, &y).unwrap();
        let matmul = b.finish(&[&p]).unwrap();
        let fwd_in = [(vec![n, n], a.clone())];
        let vjp_in = [
            (vec![n, n], a.clone()),
            (vec![n, n], matrix(n, n, 11)),
            (vec![n], matrix(n, 1, 13)),
            (vec![n, n], matrix(n, n, 17)),
        ];
        let mm_in = [(vec![n, n], a.clone()), (vec![n, n], a.clone())];
        let (mut fwd, mut grad, mut product) = (
            Runner::new(&cpu, &forward, &fwd_in),
            Runner::new(&cpu, &with_vjp, &vjp_in),
            Runner::new(&cpu, &matmul, &mm_in),
        );
        let (rounds, reps) = if n >= 512 { (3, 2) } else { (5, 3) };
        // grad/forward and matmul/forward, each from rounds that alternate
        // the two: their quotient is the backward in matmuls, with no time
        // of one round set against another's.
        let pair = side_by_side(rounds, reps, || grad.run(), || fwd.run());
        let mm = side_by_side(rounds, reps.max(5), || product.run(), || fwd.run());
        println!(
            "{n:>6} {:>10.2} {:>12.2} {:>10.3} {:>10.3} {:>10.2}",
            pair.theirs * 1e3,
            pair.ours * 1e3,
            pair.ratio,
            mm.ours * 1e3,
            (pair.ratio - 1.0) / mm.ratio
        );
    }
}

fn main() {
    eager_overhead();
    svd_backward();
}
