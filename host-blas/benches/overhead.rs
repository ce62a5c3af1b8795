//! lindiff-blas vs the same raw LAPACK calls, and host-cpu vs host-blas,
//! measured side by side in one run.
//!
//! `cargo xtask bench` (or `cargo bench -p lindiff-blas --bench overhead`;
//! the workspace's `.cargo/config.toml` sets `OPENBLAS_NUM_THREADS=1`).
//! Rows alternate the two sides round by round so that machine noise hits
//! both alike; times are medians over rounds, ratios the median of the
//! rounds' ratios; f64, serial, uniform [−0.5, 0.5)
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
//!   The rows marked "(floor)" run, instead of lindiff, the raw calls plus
//!   only the work the op's contract adds to them, each pass written once
//!   and tight: the NaN/∞ check fused into the input copies (host-cpu's
//!   `copy_finite`, the routine lindiff-blas uses), the i64 permutation
//!   (solve) and diag(R) ≥ 0 (qr: rows of R, columns of Q). No
//!   implementation of the contract built from these passes can beat it.
//! * Table 2, host-cpu vs host-blas through the same direct face.

use faer::{MatMut, MatRef};
use lindiff_blas::{Blas, Direct, Lapack, Ops, Tensor};
use lindiff_core::op::{Eigh, EighVals, LuFactorSolve, Qr, Svd, SvdVals};
use lindiff_core::LinalgOp;
use lindiff_cpu::kernel_api::copy_finite;
use lindiff_cpu::Cpu;
use std::cell::RefCell;
use std::hint::black_box;

#[path = "../../host-cpu/benches/harness/mod.rs"]
mod harness;
use harness::{matrix, reps_for, row, side_by_side, sizes, table, Aligned, Planned};

/// The optimal LWORK LAPACK reports in `work[0]`.
fn lwork(w: f64) -> usize {
    w.max(1.0) as usize
}

/// Raw dgesdd (JOBZ = 'S' or 'N') on preallocated buffers.
struct RawSvd {
    n: usize,
    job: u8,
    a: Aligned,
    s: Aligned,
    u: Aligned,
    vt: Aligned,
    work: Aligned,
    iwork: Vec<i32>,
}

impl RawSvd {
    fn new(n: usize, job: u8) -> RawSvd {
        let mut r = RawSvd {
            n,
            job,
            a: Aligned::zeros(n * n),
            s: Aligned::zeros(n),
            u: Aligned::zeros(n * n),
            vt: Aligned::zeros(n * n),
            work: Aligned::zeros(1),
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
        r.work = Aligned::zeros(lwork(r.work[0]));
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
    a: Aligned,
    q: Aligned,
    tau: Aligned,
    work: Aligned,
    /// −1 for the rows of R with a negative diagonal entry, else 1 (the
    /// floor run).
    sign: Aligned,
}

impl RawQr {
    fn new(n: usize) -> RawQr {
        let mut r = RawQr {
            n,
            a: Aligned::zeros(n * n),
            q: Aligned::zeros(n * n),
            tau: Aligned::zeros(n),
            work: Aligned::zeros(1),
            sign: Aligned::zeros(n),
        };
        let ni = n as i32;
        let mut w2 = [0.0];
        // SAFETY: workspace queries; arrays sized for n×n.
        unsafe {
            f64::geqrf(ni, ni, r.a.as_mut_ptr(), ni, r.tau.as_mut_ptr(), r.work.as_mut_ptr(), -1);
            f64::ungqr(ni, ni, ni, r.q.as_mut_ptr(), ni, r.tau.as_ptr(), w2.as_mut_ptr(), -1);
        }
        r.work = Aligned::zeros(lwork(r.work[0].max(w2[0])));
        r
    }

    fn run(&mut self, data: &[f64]) {
        self.a.copy_from_slice(data);
        self.factor();
        for (j, col) in self.a.chunks_exact_mut(self.n).enumerate() {
            col[j + 1..].fill(0.0);
        }
    }

    /// [`RawQr::run`] plus what lindiff's `qr` must add: the NaN/∞ check in
    /// the copy of A, and diag(R) ≥ 0 (row i of R negated where R[i,i] < 0,
    /// in the pass that zeroes below the diagonal, and column i of Q).
    fn run_floor(&mut self, data: &[f64]) {
        let n = self.n;
        let from = MatRef::from_column_major_slice(data, n, n);
        copy_finite(from, MatMut::from_column_major_slice_mut(&mut self.a, n, n), "a").unwrap();
        self.factor();
        for j in 0..n {
            self.sign[j] = if self.a[j + j * n] < 0.0 { -1.0 } else { 1.0 };
        }
        for (j, col) in self.a.chunks_exact_mut(n).enumerate() {
            for (x, &s) in col[..j].iter_mut().zip(&self.sign[..]) {
                *x *= s;
            }
            col[j] = col[j].abs();
            col[j + 1..].fill(0.0);
        }
        for (col, &s) in self.q.chunks_exact_mut(n).zip(&self.sign[..]) {
            if s < 0.0 {
                col.iter_mut().for_each(|x| *x = -*x);
            }
        }
    }

    /// ?geqrf of `a` in place, then ?orgqr of its copy in `q`.
    fn factor(&mut self) {
        let ni = self.n as i32;
        let lw = self.work.len() as i32;
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
    }
}

/// Raw dsyevd (lower) on preallocated buffers.
struct RawEigh {
    n: usize,
    job: u8,
    a: Aligned,
    w: Aligned,
    work: Aligned,
    iwork: Vec<i32>,
}

impl RawEigh {
    fn new(n: usize, job: u8) -> RawEigh {
        let mut r = RawEigh {
            n,
            job,
            a: Aligned::zeros(n * n),
            w: Aligned::zeros(n),
            work: Aligned::zeros(1),
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
        r.work = Aligned::zeros(lwork(r.work[0]));
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
    a: Aligned,
    x: Aligned,
    ipiv: Vec<i32>,
    /// The permutation as lindiff returns it (the floor run).
    perm: Vec<i64>,
}

impl RawSolve {
    fn new(n: usize) -> RawSolve {
        RawSolve { n, a: Aligned::zeros(n * n), x: Aligned::zeros(n), ipiv: vec![0; n], perm: vec![0; n] }
    }

    fn run(&mut self, data: &[f64], b: &[f64]) {
        self.a.copy_from_slice(data);
        self.x.copy_from_slice(b);
        self.solve();
    }

    /// [`RawSolve::run`] plus what lindiff's `solve` must add: the NaN/∞
    /// check in the copies of A and b, and the i64 permutation from IPIV.
    fn run_floor(&mut self, data: &[f64], b: &[f64]) {
        let n = self.n;
        let (a, x) = (MatRef::from_column_major_slice(data, n, n), MatRef::from_column_major_slice(b, n, 1));
        copy_finite(a, MatMut::from_column_major_slice_mut(&mut self.a, n, n), "a").unwrap();
        copy_finite(x, MatMut::from_column_major_slice_mut(&mut self.x, n, 1), "b").unwrap();
        self.solve();
        let perm = &mut self.perm;
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i as i64;
        }
        for (i, &p) in self.ipiv.iter().enumerate() {
            perm.swap(i, (p - 1) as usize);
        }
    }

    /// ?getrf of `a`, then ?getrs of `x`, in place.
    fn solve(&mut self) {
        let ni = self.n as i32;
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
    table("lindiff-blas vs raw LAPACK (f64, serial, µs; ratio = lindiff / LAPACK)", "lindiff", "LAPACK");
    let mut la = Direct::new(Blas::new());
    for n in sizes(&[32, 128, 512]) {
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
        let mut plan = Planned::new(Blas::new(), LinalgOp::Svd(Svd::default()), &[(&[n, n], &c.data)]);
        row("svd (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.data)));
        let mut raw = RawSvd::new(n, b'N');
        row(
            "svd_vals",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.svd_vals(&a).unwrap())), || raw.run(&c.data)),
        );
        let mut plan =
            Planned::new(Blas::new(), LinalgOp::SvdVals(SvdVals::default()), &[(&[n, n], &c.data)]);
        row("svd_vals (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.data)));
        let mut raw = RawQr::new(n);
        row("qr", n, side_by_side(rounds, reps, || drop(black_box(la.qr(&a).unwrap())), || raw.run(&c.data)));
        let mut plan = Planned::new(Blas::new(), LinalgOp::Qr(Qr::default()), &[(&[n, n], &c.data)]);
        row("qr (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.data)));
        // The same buffers on both sides: the floor's passes are the only difference.
        let same = RefCell::new(raw);
        let (floor, plain) = (|| same.borrow_mut().run_floor(&c.data), || same.borrow_mut().run(&c.data));
        row("qr (floor)", n, side_by_side(rounds, reps, floor, plain));
        let mut raw = RawEigh::new(n, b'V');
        row(
            "eigh",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.eigh(&sym).unwrap())), || raw.run(&c.sym)),
        );
        let mut plan = Planned::new(Blas::new(), LinalgOp::Eigh(Eigh::default()), &[(&[n, n], &c.sym)]);
        row("eigh (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.sym)));
        let mut raw = RawEigh::new(n, b'N');
        row(
            "eigvalsh",
            n,
            side_by_side(rounds, reps, || drop(black_box(la.eigvalsh(&sym).unwrap())), || raw.run(&c.sym)),
        );
        let mut plan =
            Planned::new(Blas::new(), LinalgOp::EighVals(EighVals::default()), &[(&[n, n], &c.sym)]);
        row("eigvalsh (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.sym)));
        let mut raw = RawSolve::new(n);
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
        let mut plan = Planned::new(
            Blas::new(),
            LinalgOp::LuFactorSolve(LuFactorSolve::default()),
            &[(&[n, n], &c.data), (&[n, 1], &c.b)],
        );
        row("solve (plan)", n, side_by_side(rounds, reps, || plan.run(), || raw.run(&c.data, &c.b)));
        let same = RefCell::new(raw);
        let floor = || same.borrow_mut().run_floor(&c.data, &c.b);
        row("solve (floor)", n, side_by_side(rounds, reps, floor, || same.borrow_mut().run(&c.data, &c.b)));
    }
}

fn cpu_vs_blas_table() {
    table(
        "host-cpu vs host-blas through the direct face (f64, serial, µs; ratio = blas / cpu)",
        "host-blas",
        "host-cpu",
    );
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

/// `true` unless `LINDIFF_BENCH_SIZES` selects orders: the cross-provider
/// table runs only then (`cargo xtask bench`'s process medians skip it).
fn full_run() -> bool {
    std::env::var_os("LINDIFF_BENCH_SIZES").is_none()
}

fn main() {
    if std::env::var("OPENBLAS_NUM_THREADS").as_deref() != Ok("1") {
        eprintln!("note: OPENBLAS_NUM_THREADS is not 1; LAPACK may use several threads");
    }
    overhead_table();
    if full_run() {
        cpu_vs_blas_table();
    }
}
