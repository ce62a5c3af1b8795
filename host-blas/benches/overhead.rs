//! lindiff-blas vs the same raw LAPACK calls, and host-cpu vs host-blas,
//! measured side by side in one run.
//!
//! `cargo xtask bench` (or `cargo bench -p lindiff-blas --bench overhead`;
//! the workspace's `.cargo/config.toml` sets `OPENBLAS_NUM_THREADS=1`).
//! Each figure is the minimum over repeated runs, alternating the two sides
//! so that machine noise hits both alike; f64, serial, uniform [−0.5, 0.5)
//! matrices.
//!
//! * Table 1, lindiff-blas / raw LAPACK: the raw side makes the same calls
//!   (same routines, JOBZ, UPLO) on preallocated buffers with a
//!   preallocated optimal work array, including the copy of the input each
//!   call needs because LAPACK overwrites it; the lindiff side goes through
//!   the direct face (checks, pool, workspace queries, conventions). The
//!   rows marked "(plan)" run the lindiff side as a call planned once
//!   (`call::prepare` + `call::run_prepared` over caller buffers: the same
//!   checks, LAPACK calls and conventions, without the direct face's pool
//!   and per-call plan) against the same raw calls.
//! * Table 2, host-cpu vs host-blas through the same direct face.

use lindiff_blas::{Blas, Direct, Lapack, Linalg, Tensor};
use lindiff_core::call::{self, Prepared};
use lindiff_core::op::{Eigh, EighVals, LuFactorSolve, Qr, Svd, SvdVals};
use lindiff_core::{Host, HostBuffer, HostData, Input, LinalgOp, Op, Shape, TensorDesc, TensorMeta};
use lindiff_cpu::Cpu;
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::time::Instant;

/// f64s starting on a 64-byte boundary, as the direct face's pool blocks
/// and lindiff-blas's carved LAPACK arrays: every matrix, vector and WORK
/// array of both sides is one (a `Vec<f64>` alone is only 16-byte aligned,
/// and ?getrf at n = 32 runs up to 8 % slower on one). IWORK and IPIV stay
/// `Vec<i32>` on the raw side.
struct Aligned64 {
    buf: Vec<f64>,
    off: usize,
    len: usize,
}

impl Aligned64 {
    fn zeros(len: usize) -> Aligned64 {
        let buf = vec![0.0; len + 8];
        let off = buf.as_ptr().align_offset(64);
        Aligned64 { buf, off, len }
    }

    fn from(values: &[f64]) -> Aligned64 {
        let mut a = Aligned64::zeros(values.len());
        a.copy_from_slice(values);
        a
    }
}

impl std::ops::Deref for Aligned64 {
    type Target = [f64];
    fn deref(&self) -> &[f64] {
        &self.buf[self.off..self.off + self.len]
    }
}

impl std::ops::DerefMut for Aligned64 {
    fn deref_mut(&mut self) -> &mut [f64] {
        &mut self.buf[self.off..self.off + self.len]
    }
}

/// One op planned once (`call::prepare`) on host-blas over caller-owned
/// inputs, outputs and workspace, then run with `call::run_prepared`: the
/// hot-loop use, with the same preallocated setup as the raw side.
struct Planned {
    blas: Blas,
    plan: Prepared,
    descs: Vec<TensorDesc>,
    data: Vec<Aligned64>,
    outs: Vec<Option<Aligned64>>,
    workspace: Vec<MaybeUninit<u8>>,
}

impl Planned {
    fn new(op: LinalgOp, inputs: &[(&[usize], &[f64])]) -> Planned {
        let blas = Blas::new();
        let descs: Vec<TensorDesc> = inputs
            .iter()
            .map(|(dims, _)| {
                let meta = TensorMeta::new(lindiff_core::DType::F64, Shape::new(dims).unwrap());
                TensorDesc::contiguous(meta).unwrap()
            })
            .collect();
        let refs: Vec<&TensorDesc> = descs.iter().collect();
        let plan = call::prepare(&blas, &Op::Linalg(op), &refs).unwrap();
        // f64 and i64 outputs alike: 8-byte elements.
        let outs = plan
            .outputs()
            .iter()
            .map(|m| m.as_ref().map(|m| Aligned64::zeros(m.bytes().unwrap() / 8)))
            .collect();
        let req = plan.workspace();
        let workspace = vec![MaybeUninit::uninit(); req.bytes() + req.align()];
        let data = inputs.iter().map(|(_, d)| Aligned64::from(d)).collect();
        Planned { blas, plan, descs, data, outs, workspace }
    }

    fn run(&mut self) {
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
        call::run_prepared(&self.blas, &self.plan, &ins, &mut refs, &mut ws).unwrap();
    }
}

/// Uniform [-0.5, 0.5) entries from xorshift, as in host-cpu's bench.
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
    println!("{op:<16} {n:>6} {:>12.2} {:>12.2} {:>8.3}", ours * 1e6, theirs * 1e6, ours / theirs);
}

/// The optimal LWORK LAPACK reports in `work[0]`.
fn lwork(w: f64) -> usize {
    w.max(1.0) as usize
}

/// Raw dgesdd (JOBZ = 'S' or 'N') on preallocated buffers.
struct RawSvd {
    n: usize,
    job: u8,
    a: Aligned64,
    s: Aligned64,
    u: Aligned64,
    vt: Aligned64,
    work: Aligned64,
    iwork: Vec<i32>,
}

impl RawSvd {
    fn new(n: usize, job: u8) -> RawSvd {
        let mut r = RawSvd {
            n,
            job,
            a: Aligned64::zeros(n * n),
            s: Aligned64::zeros(n),
            u: Aligned64::zeros(n * n),
            vt: Aligned64::zeros(n * n),
            work: Aligned64::zeros(1),
            iwork: vec![0; 8 * n],
        };
        let ni = n as i32;
        // SAFETY: a workspace query; every array is sized for n×n.
        let info = unsafe {
            f64::gesdd(
                job,
                ni,
                ni,
                r.a.as_mut_ptr(),
                ni,
                r.s.as_mut_ptr(),
                r.u.as_mut_ptr(),
                ni,
                r.vt.as_mut_ptr(),
                ni,
                r.work.as_mut_ptr(),
                -1,
                [].as_mut_ptr(),
                r.iwork.as_mut_ptr(),
            )
        };
        assert_eq!(info, 0);
        r.work = Aligned64::zeros(lwork(r.work[0]));
        r
    }

    fn run(&mut self, data: &[f64]) {
        let ni = self.n as i32;
        self.a.copy_from_slice(data);
        let lw = self.work.len() as i32;
        // SAFETY: every array is sized for n×n and LWORK is WORK's length.
        let info = unsafe {
            f64::gesdd(
                self.job,
                ni,
                ni,
                self.a.as_mut_ptr(),
                ni,
                self.s.as_mut_ptr(),
                self.u.as_mut_ptr(),
                ni,
                self.vt.as_mut_ptr(),
                ni,
                self.work.as_mut_ptr(),
                lw,
                [].as_mut_ptr(),
                self.iwork.as_mut_ptr(),
            )
        };
        assert_eq!(info, 0);
    }
}

/// Raw dgeqrf + dorgqr (thin Q) on preallocated buffers, leaving R with
/// zeros below the diagonal (where dgeqrf keeps its reflectors): the two
/// outputs lindiff's `qr` returns.
struct RawQr {
    n: usize,
    a: Aligned64,
    q: Aligned64,
    tau: Aligned64,
    work: Aligned64,
}

impl RawQr {
    fn new(n: usize) -> RawQr {
        let mut r = RawQr {
            n,
            a: Aligned64::zeros(n * n),
            q: Aligned64::zeros(n * n),
            tau: Aligned64::zeros(n),
            work: Aligned64::zeros(1),
        };
        let ni = n as i32;
        let mut w2 = [0.0];
        // SAFETY: workspace queries; arrays sized for n×n.
        unsafe {
            f64::geqrf(ni, ni, r.a.as_mut_ptr(), ni, r.tau.as_mut_ptr(), r.work.as_mut_ptr(), -1);
            f64::ungqr(ni, ni, ni, r.q.as_mut_ptr(), ni, r.tau.as_ptr(), w2.as_mut_ptr(), -1);
        }
        r.work = Aligned64::zeros(lwork(r.work[0].max(w2[0])));
        r
    }

    fn run(&mut self, data: &[f64]) {
        let ni = self.n as i32;
        let lw = self.work.len() as i32;
        self.a.copy_from_slice(data);
        // SAFETY: arrays sized for n×n; LWORK is WORK's length.
        unsafe {
            assert_eq!(
                f64::geqrf(
                    ni,
                    ni,
                    self.a.as_mut_ptr(),
                    ni,
                    self.tau.as_mut_ptr(),
                    self.work.as_mut_ptr(),
                    lw
                ),
                0
            );
        }
        self.q.copy_from_slice(&self.a);
        // SAFETY: as above.
        unsafe {
            assert_eq!(
                f64::ungqr(
                    ni,
                    ni,
                    ni,
                    self.q.as_mut_ptr(),
                    ni,
                    self.tau.as_ptr(),
                    self.work.as_mut_ptr(),
                    lw
                ),
                0
            );
        }
        for (j, col) in self.a.chunks_exact_mut(self.n).enumerate() {
            col[j + 1..].fill(0.0);
        }
    }
}

/// Raw dsyevd (lower) on preallocated buffers.
struct RawEigh {
    n: usize,
    job: u8,
    a: Aligned64,
    w: Aligned64,
    work: Aligned64,
    iwork: Vec<i32>,
}

impl RawEigh {
    fn new(n: usize, job: u8) -> RawEigh {
        let mut r = RawEigh {
            n,
            job,
            a: Aligned64::zeros(n * n),
            w: Aligned64::zeros(n),
            work: Aligned64::zeros(1),
            iwork: vec![0; 1],
        };
        let ni = n as i32;
        // SAFETY: a workspace query; arrays sized for n×n.
        let info = unsafe {
            f64::heevd(
                job,
                b'L',
                ni,
                r.a.as_mut_ptr(),
                ni,
                r.w.as_mut_ptr(),
                r.work.as_mut_ptr(),
                -1,
                [].as_mut_ptr(),
                -1,
                r.iwork.as_mut_ptr(),
                -1,
            )
        };
        assert_eq!(info, 0);
        r.work = Aligned64::zeros(lwork(r.work[0]));
        r.iwork = vec![0; r.iwork[0].max(1) as usize];
        r
    }

    fn run(&mut self, data: &[f64]) {
        let ni = self.n as i32;
        self.a.copy_from_slice(data);
        let (lw, liw) = (self.work.len() as i32, self.iwork.len() as i32);
        // SAFETY: arrays sized for n×n; LWORK/LIWORK are the lengths.
        let info = unsafe {
            f64::heevd(
                self.job,
                b'L',
                ni,
                self.a.as_mut_ptr(),
                ni,
                self.w.as_mut_ptr(),
                self.work.as_mut_ptr(),
                lw,
                [].as_mut_ptr(),
                0,
                self.iwork.as_mut_ptr(),
                liw,
            )
        };
        assert_eq!(info, 0);
    }
}

/// Raw dgetrf + dgetrs (one right-hand side) on preallocated buffers.
struct RawSolve {
    n: usize,
    a: Aligned64,
    x: Aligned64,
    ipiv: Vec<i32>,
}

impl RawSolve {
    fn run(&mut self, data: &[f64], b: &[f64]) {
        let ni = self.n as i32;
        self.a.copy_from_slice(data);
        self.x.copy_from_slice(b);
        // SAFETY: A n×n, IPIV n, B n×1.
        unsafe {
            assert_eq!(f64::getrf(ni, ni, self.a.as_mut_ptr(), ni, self.ipiv.as_mut_ptr()), 0);
            assert_eq!(
                f64::getrs(b'N', ni, 1, self.a.as_ptr(), ni, self.ipiv.as_ptr(), self.x.as_mut_ptr(), ni),
                0
            );
        }
    }
}

/// The inputs of one size, as data and as tensors of a face.
struct Case {
    data: Vec<f64>,
    sym: Vec<f64>,
    b: Vec<f64>,
}

impl Case {
    fn new(n: usize) -> Case {
        let data = matrix(n, n, 7);
        let sym = (0..n * n).map(|k| data[k] + data[(k % n) * n + k / n]).collect();
        Case { data, sym, b: matrix(n, 1, 11) }
    }
}

fn overhead_table() {
    println!("lindiff-blas vs raw LAPACK (f64, serial, µs; ratio = lindiff / LAPACK)");
    println!("{:<16} {:>6} {:>12} {:>12} {:>8}", "op", "n", "lindiff", "LAPACK", "ratio");
    let mut la = Direct::new(Blas::new());
    for n in [32usize, 128, 512] {
        let (rounds, reps) = reps_for(n);
        let c = Case::new(n);
        let a: Tensor = la.tensor(&[n, n], &c.data).unwrap();
        let sym: Tensor = la.tensor(&[n, n], &c.sym).unwrap();
        let b: Tensor = la.tensor(&[n, 1], &c.b).unwrap();
        let mut raw = RawSvd::new(n, b'S');
        row(
            "svd",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.svd(&a).unwrap())), || raw.run(&c.data)),
        );
        let mut plan = Planned::new(LinalgOp::Svd(Svd::default()), &[(&[n, n], &c.data)]);
        row("svd (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.data)));
        let mut raw = RawSvd::new(n, b'N');
        row(
            "svd_vals",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.svd_vals(&a).unwrap())), || raw.run(&c.data)),
        );
        let mut plan = Planned::new(LinalgOp::SvdVals(SvdVals::default()), &[(&[n, n], &c.data)]);
        row("svd_vals (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.data)));
        let mut raw = RawQr::new(n);
        row("qr", n, side_by_side(rounds, reps, || drop(black_box(la.qr(&a).unwrap())), || raw.run(&c.data)));
        let mut plan = Planned::new(LinalgOp::Qr(Qr::default()), &[(&[n, n], &c.data)]);
        row("qr (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.data)));
        let mut raw = RawEigh::new(n, b'V');
        row(
            "eigh",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.eigh(&sym).unwrap())), || raw.run(&c.sym)),
        );
        let mut plan = Planned::new(LinalgOp::Eigh(Eigh::default()), &[(&[n, n], &c.sym)]);
        row("eigh (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.sym)));
        let mut raw = RawEigh::new(n, b'N');
        row(
            "eigvalsh",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.eigvalsh(&sym).unwrap())), || raw.run(&c.sym)),
        );
        let mut plan = Planned::new(LinalgOp::EighVals(EighVals::default()), &[(&[n, n], &c.sym)]);
        row("eigvalsh (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.sym)));
        let mut raw = RawSolve { n, a: Aligned64::zeros(n * n), x: Aligned64::zeros(n), ipiv: vec![0; n] };
        row(
            "solve",
            n,
            side_by_side(
                rounds,
                reps,
                || drop(black_box(la.solve(&a, &b).unwrap())),
                || raw.run(&c.data, &c.b),
            ),
        );
        let mut plan =
            Planned::new(LinalgOp::LuFactorSolve(LuFactorSolve), &[(&[n, n], &c.data), (&[n, 1], &c.b)]);
        row("solve (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.data, &c.b)));
    }
}

fn cpu_vs_blas_table() {
    println!();
    println!("host-cpu vs host-blas through the direct face (f64, serial, µs; ratio = blas / cpu)");
    println!("{:<16} {:>6} {:>12} {:>12} {:>8}", "op", "n", "host-blas", "host-cpu", "ratio");
    let mut blas = Direct::new(Blas::new());
    let mut cpu = Direct::new(Cpu::new());
    for n in [32usize, 128, 512] {
        let (rounds, reps) = reps_for(n);
        let c = Case::new(n);
        let (ab, sb, bb) = (
            blas.tensor(&[n, n], &c.data).unwrap(),
            blas.tensor(&[n, n], &c.sym).unwrap(),
            blas.tensor(&[n, 1], &c.b).unwrap(),
        );
        let (ac, sc, bc) = (
            cpu.tensor(&[n, n], &c.data).unwrap(),
            cpu.tensor(&[n, n], &c.sym).unwrap(),
            cpu.tensor(&[n, 1], &c.b).unwrap(),
        );
        macro_rules! pair {
            ($name:expr, $call:ident ( $($x:ident),* ) / ( $($y:ident),* )) => {
                row(
                    $name,
                    n,
                    side_by_side(
                        rounds,
                        reps,
                        || drop(black_box(blas.$call($(&$x),*).unwrap())),
                        || drop(black_box(cpu.$call($(&$y),*).unwrap())),
                    ),
                )
            };
        }
        pair!("svd", svd(ab) / (ac));
        pair!("svd_vals", svd_vals(ab) / (ac));
        pair!("qr", qr(ab) / (ac));
        pair!("eigh", eigh(sb) / (sc));
        pair!("eigvalsh", eigvalsh(sb) / (sc));
        pair!("solve", solve(ab, bb) / (ac, bc));
    }
}

fn main() {
    if std::env::var("OPENBLAS_NUM_THREADS").as_deref() != Ok("1") {
        eprintln!("note: OPENBLAS_NUM_THREADS is not 1; LAPACK may use several threads");
    }
    overhead_table();
    cpu_vs_blas_table();
}
