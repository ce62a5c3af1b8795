//! What both overhead benches (host-cpu/benches/overhead.rs and
//! host-blas/benches/overhead.rs, which includes this file by path) measure
//! with: aligned buffers, a prepared call over caller-owned memory, the
//! test matrices and the side-by-side timing.

use lindiff_core::call::{self, Prepared};
use lindiff_core::{
    Host, HostBuffer, HostData, Input, LinalgOp, Op, Provider, Shape, TensorDesc, TensorMeta,
};
use std::mem::MaybeUninit;
use std::time::Instant;

/// f64s starting on a 64-byte boundary, like the direct face's pool blocks,
/// faer's matrices and lindiff-blas's carved LAPACK arrays: both sides of a
/// row get such buffers (a `Vec<f64>` alone is only 16-byte aligned, which
/// costs faer up to 15 % at n = 512 and ?getrf up to 8 % at n = 32).
pub struct Aligned {
    buf: Vec<f64>,
    off: usize,
    len: usize,
}

impl Aligned {
    /// `len` zeros.
    pub fn zeros(len: usize) -> Aligned {
        let buf = vec![0.0; len + 8];
        let off = buf.as_ptr().align_offset(64);
        Aligned { buf, off, len }
    }

    /// A copy of `values`.
    pub fn from(values: &[f64]) -> Aligned {
        let mut a = Aligned::zeros(values.len());
        a.copy_from_slice(values);
        a
    }
}

impl std::ops::Deref for Aligned {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        &self.buf[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for Aligned {
    fn deref_mut(&mut self) -> &mut [f64] {
        &mut self.buf[self.off..self.off + self.len]
    }
}

/// One op planned once (`call::prepare`) over caller-owned inputs, outputs
/// and workspace, then run with `call::run_prepared`: lindiff's hot-loop
/// use, with the same preallocated setup as the other side of the row. The
/// direct face adds its pool and per-call plan lookup on top.
pub struct Planned<P> {
    provider: P,
    plan: Prepared,
    descs: Vec<TensorDesc>,
    data: Vec<Aligned>,
    outs: Vec<Option<Aligned>>,
    workspace: Vec<MaybeUninit<u8>>,
}

impl<P: Provider<Memory = Host>> Planned<P> {
    /// `op` on contiguous f64 inputs `(dims, data)`, planned on `provider`.
    pub fn new(provider: P, op: LinalgOp, inputs: &[(&[usize], &[f64])]) -> Planned<P> {
        let descs: Vec<TensorDesc> = inputs
            .iter()
            .map(|(dims, _)| {
                let meta = TensorMeta::new(lindiff_core::DType::F64, Shape::new(dims).unwrap());
                TensorDesc::contiguous(meta).unwrap()
            })
            .collect();
        let refs: Vec<&TensorDesc> = descs.iter().collect();
        let plan = call::prepare(&provider, &Op::Linalg(op), &refs).unwrap();
        // f64 and i64 outputs alike: 8-byte elements.
        let outs = plan
            .outputs()
            .iter()
            .map(|m| m.as_ref().map(|m| Aligned::zeros(m.bytes().unwrap() / 8)))
            .collect();
        let req = plan.workspace();
        let workspace = vec![MaybeUninit::uninit(); req.bytes() + req.align()];
        let data = inputs.iter().map(|(_, d)| Aligned::from(d)).collect();
        Planned { provider, plan, descs, data, outs, workspace }
    }

    /// One call.
    pub fn run(&mut self) {
        let mut ins = heapless::Vec::<Input<'_, Host>, 6>::new();
        for (desc, data) in self.descs.iter().zip(&self.data) {
            let _ = ins.push(Input { desc, data: HostData::from_slice(&data[..]) });
        }
        let mut bufs = heapless::Vec::<Option<HostBuffer<'_>>, 4>::new();
        for out in self.outs.iter_mut() {
            let _ = bufs.push(out.as_mut().map(|o| HostBuffer::from_slice_mut(&mut o[..])));
        }
        let mut refs = heapless::Vec::<Option<&mut HostBuffer<'_>>, 4>::new();
        for b in bufs.iter_mut() {
            let _ = refs.push(b.as_mut());
        }
        let mut ws = HostBuffer::from_uninit(&mut self.workspace);
        call::run_prepared(&self.provider, &self.plan, &ins, &mut refs, &mut ws).unwrap();
    }
}

/// Uniform [-0.5, 0.5) entries from xorshift, as in the seed's timing runs.
pub fn matrix(n: usize, m: usize, seed: u64) -> Vec<f64> {
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

/// The fastest of `reps` calls of `f` (after one warm-up call), in seconds.
pub fn min_time(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

/// `true` when `LINDIFF_BENCH_QUICK` is set (`cargo xtask bench --quick`):
/// each row alternates its sides for half of [`ROW_TIME`].
pub fn quick() -> bool {
    std::env::var_os("LINDIFF_BENCH_QUICK").is_some()
}

/// How long [`side_by_side`] keeps alternating once its minimum number of
/// rounds is done. A row's cost differs by 10⁴ between its ops at one
/// order (a 512×512 Cholesky takes 1.2 ms, the SVD 70 ms): with a fixed
/// count of rounds the fast ops got a few milliseconds of samples per side
/// (3 rounds of 3 calls: 11 ms for the 512 Cholesky), and their
/// per-process ratios spread over 0.99–1.09.
const ROW_TIME: std::time::Duration = std::time::Duration::from_millis(400);

/// One row's figures: the median over rounds of each side's time (a
/// round's time is the fastest of its calls), and the median over rounds
/// of the round's ratio ours / theirs. The ratio of one round compares two
/// blocks of calls run one right after the other, so load that comes and
/// goes on a shared machine moves both sides of it alike; the median drops
/// the rounds a burst hit on one side only.
#[derive(Clone, Copy, Debug)]
pub struct Pair {
    pub ours: f64,
    pub theirs: f64,
    pub ratio: f64,
}

/// The median of `xs` (the upper one of an even count).
pub fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Alternates the two closures — at least `rounds` rounds, then on until
/// [`ROW_TIME`] (half of it with [`quick`]) has passed (at most
/// 10 000 rounds), each round `reps` timed calls of each after one warm-up
/// call — and returns the medians of [`Pair`].
pub fn side_by_side(rounds: usize, reps: usize, mut ours: impl FnMut(), mut theirs: impl FnMut()) -> Pair {
    let budget = if quick() { ROW_TIME / 2 } else { ROW_TIME };
    let (mut a, mut b, mut r) = (Vec::new(), Vec::new(), Vec::new());
    let start = Instant::now();
    while a.len() < rounds || (start.elapsed() < budget && a.len() < 10_000) {
        let x = min_time(reps, &mut ours);
        let y = min_time(reps, &mut theirs);
        a.push(x);
        b.push(y);
        r.push(x / y);
    }
    Pair { ours: median(&mut a), theirs: median(&mut b), ratio: median(&mut r) }
}

/// The orders a run measures: those listed in `LINDIFF_BENCH_SIZES`
/// (comma-separated; `cargo xtask bench` reruns some orders in fresh
/// processes that way), else `default`.
pub fn sizes(default: &[usize]) -> Vec<usize> {
    match std::env::var("LINDIFF_BENCH_SIZES") {
        Ok(list) => list.split(',').map(|n| n.trim().parse().expect("LINDIFF_BENCH_SIZES: orders")).collect(),
        Err(_) => default.to_vec(),
    }
}

/// Starts a table: `## title` (what `cargo xtask bench` reads as the
/// group's name), then the column header.
pub fn table(title: &str, ours: &str, theirs: &str) {
    println!("\n## {title}");
    println!("{:<16} {:>6} {:>12} {:>12} {:>8}", "op", "n", ours, theirs, "ratio");
}

/// (minimum rounds, repetitions per round) for order `n`: a round's block
/// of calls lasts ~0.2 ms or more for the cheapest op at 8 to 128;
/// from 256 on one call per round, so that the two sides alternate call
/// by call (`side_by_side` adds rounds up to its time budget).
pub fn reps_for(n: usize) -> (usize, usize) {
    match n {
        0..=16 => (5, 1000),
        17..=32 => (5, 200),
        33..=128 => (5, 20),
        _ => (5, 1),
    }
}

/// One table row: both medians in µs (to the ns) and the median ratio.
pub fn row(op: &str, n: usize, p: Pair) {
    println!("{op:<16} {n:>6} {:>12.3} {:>12.3} {:>8.3}", p.ours * 1e6, p.theirs * 1e6, p.ratio);
}
