//! lindiff-cpu vs numpy, scipy and JAX on the same inputs, sample by sample.
//!
//! `cargo xtask bench --peers` runs this with `LINDIFF_PEERS_PYTHON` set to
//! a Python that has numpy, scipy, JAX and mpmath (without it the bench says so
//! and exits). It starts `xtask/peers/peers.py` once, as a persistent
//! subprocess driven over stdin/stdout, writes each case's input to a
//! temporary file (raw little-endian f64, from the seeded generator of the
//! overhead benches) for the script to read bit for bit, and then
//! alternates: a round of lindiff calls here, a round of the peer's calls
//! there, and so on. A round's time is its fastest call; a row's ratio is
//! the median of the rounds' ratios lindiff / peer. Everything runs on one
//! thread: lindiff-cpu serial (the batch on one lane), the peers under
//! OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, MKL_NUM_THREADS=1 and
//! XLA_FLAGS="--xla_cpu_multi_thread_eigen=false
//! intra_op_parallelism_threads=1". JAX is timed after a warm-up call
//! (compilation excluded), each call until `block_until_ready`.
//!
//! Each case's results are cross-checked against lindiff's (singular
//! values, Cholesky factors, loss values and gradients): the largest
//! difference relative to the largest entry is printed as a `check:` line,
//! marked DISAGREE above the case's tolerance. With `LINDIFF_PEERS_KEEP`
//! set, the inputs and both sides' check vectors stay in the temporary
//! directory (its path is printed) for a closer look.
//!
//! Last, the accuracy at near ties ([`near_tie_accuracy`]): expm, logm and
//! sqrtm and their gradients by lindiff and each peer against mpmath at 40
//! digits (`LINDIFF_PEERS_ONLY=accuracy` runs only that).

use faer::Mat;
use lindiff_core::{BatchPolicy, Exec};
use lindiff_cpu::prelude::*;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

#[allow(dead_code)]
#[path = "harness/mod.rs"]
mod harness;
use harness::{matrix, median, min_time, quick};

/// The script, driven over stdin/stdout.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    fn start(python: &str) -> Peer {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../xtask/peers/peers.py");
        let mut child = Command::new(python)
            .arg(script)
            .env("OMP_NUM_THREADS", "1")
            .env("OPENBLAS_NUM_THREADS", "1")
            .env("MKL_NUM_THREADS", "1")
            .env("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
            .env("JAX_PLATFORMS", "cpu")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{python} {script}: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Peer { child, stdin, stdout }
    }

    /// Sends one JSON line, returns the reply line (panics on an error reply).
    fn ask(&mut self, msg: &str) -> String {
        writeln!(self.stdin, "{msg}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "peers.py exited on {msg}");
        assert!(!line.contains("\"error\""), "peers.py on {msg}: {line}");
        line
    }
}

/// The number after `"key": ` in a one-line JSON reply.
fn number(reply: &str, key: &str) -> f64 {
    let at =
        reply.find(&format!("\"{key}\": ")).unwrap_or_else(|| panic!("{key} in {reply}")) + key.len() + 4;
    let end = reply[at..].find([',', '}']).map_or(reply.len(), |e| at + e);
    reply[at..end].trim().parse().unwrap_or_else(|_| panic!("{key} in {reply}"))
}

/// The quoted strings of the `"libs": [...]` list of a reply.
fn libs(reply: &str) -> Vec<String> {
    let start = reply.find('[').unwrap();
    let end = reply.find(']').unwrap();
    reply[start + 1..end]
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn write_f64(path: &PathBuf, data: &[f64]) {
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

fn read_f64(path: &PathBuf) -> Vec<f64> {
    std::fs::read(path).unwrap().chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

/// One case: its name, its kind (peers.py's dispatch), n (the batch's
/// count for the batch), the input's dims and data, and the tolerance of
/// the cross-check.
struct Case {
    name: String,
    kind: &'static str,
    n: usize,
    dims: Vec<usize>,
    data: Vec<f64>,
    tol: f64,
}

/// A table row for one peer.
struct Row {
    case: String,
    n: usize,
    ours: f64,
    theirs: f64,
    ratio: f64,
}

fn spd(n: usize) -> Vec<f64> {
    let data = matrix(n, n, 7);
    let a = Mat::from_fn(n, n, |i, j| data[i + j * n]);
    let s = &a * a.transpose() + Mat::<f64>::identity(n, n) * (n as f64);
    (0..n * n).map(|k| s[(k % n, k / n)]).collect()
}

fn symmetric(n: usize) -> Vec<f64> {
    let data = matrix(n, n, 7);
    (0..n * n).map(|k| data[k] + data[(k % n) * n + k / n]).collect()
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let square =
        |name: &str, kind, n, data, tol| Case { name: name.into(), kind, n, dims: vec![n, n], data, tol };
    out.push(Case {
        name: "10 000 SVDs of 8×8 (values + vectors)".into(),
        kind: "svd_batch",
        n: 10_000,
        dims: vec![8, 8, 10_000],
        data: matrix(64, 10_000, 3),
        tol: 1e-10,
    });
    for n in [32, 128] {
        out.push(square("cholesky", "cholesky", n, spd(n), 1e-10));
    }
    for n in [128, 256, 512] {
        out.push(square("svd (values + vectors)", "svd", n, matrix(n, n, 7), 1e-10));
    }
    for n in [128, 256, 512] {
        out.push(square("svd loss value+grad", "svd_loss", n, matrix(n, n, 7), 1e-8));
    }
    for n in [128, 256, 512] {
        out.push(square("eigh (values + vectors)", "eigh", n, symmetric(n), 1e-10));
    }
    out.push(square("eigh loss value+grad", "eigh_loss", 256, symmetric(256), 1e-8));
    out.push(square("eigh by phase", "eigh_phases", 256, symmetric(256), 1e-10));
    out.push(Case {
        name: "svd loss (Σ s) HVP, jvp(grad)".into(),
        kind: "svd_hvp",
        n: 128,
        dims: vec![128, 128, 2],
        data: [matrix(128, 128, 7), matrix(128, 128, 11)].concat(),
        tol: 1e-7,
    });
    for n in [64, 256] {
        out.push(square("expm (symmetric input)", "expm", n, unit_symmetric(n), 1e-10));
    }
    for n in [64, 256] {
        out.push(square("expm loss (Σ expm) value+grad", "expm_loss", n, unit_symmetric(n), 1e-8));
    }
    for n in [64, 256] {
        out.push(square("expm (general input)", "expm_general", n, unit_general(n), 1e-10));
    }
    for n in [64, 256] {
        out.push(square(
            "expm loss, general input, value+grad",
            "expm_general_loss",
            n,
            unit_general(n),
            1e-8,
        ));
    }
    for kind in ["logm", "sqrtm"] {
        for n in [64, 256] {
            out.push(square(kind, kind, n, shifted_general(n), 1e-10));
        }
    }
    out
}

/// [`unit_general`] + 2.5·I: eigenvalues in a disc of radius about 2
/// around 2.5, inside the real principal logarithm's and square root's
/// domain.
fn shifted_general(n: usize) -> Vec<f64> {
    let mut a = unit_general(n);
    for i in 0..n {
        a[i * n + i] += 2.5;
    }
    a
}

/// A random n×n matrix scaled by 1/√n: ‖A‖₂ of order 2, so e^A stays in
/// range at every n and the Padé path scales (degree 13, a few squarings).
fn unit_general(n: usize) -> Vec<f64> {
    let scale = 1.0 / (n as f64).sqrt();
    matrix(n, n, 13).into_iter().map(|x| x * scale).collect()
}

/// [`symmetric`] scaled by 1/√n: eigenvalues of order 1, so e^A stays in
/// range at every n.
fn unit_symmetric(n: usize) -> Vec<f64> {
    let scale = 1.0 / (n as f64).sqrt();
    symmetric(n).into_iter().map(|x| x * scale).collect()
}

/// The HVP program of Σ svd_vals(A) compiled for n×n, with its inputs (A,
/// then the direction) as `case.data` holds them: the call runs it on a
/// reused pool; the check vector is H·direction.
fn svd_hvp(case: &Case) -> (Box<dyn FnMut()>, Vec<f64>) {
    use lindiff_core::face::direct::Pool;
    use lindiff_core::{Allocator, Host, HostData, Input, Memory};
    let n = case.n;
    let meta = TensorMeta::new(DType::F64, Shape::new(&[n, n]).unwrap());
    let mut b: Builder = Builder::new();
    let a = b.param(meta.clone()).unwrap();
    let s = b.svd_vals(&a).unwrap();
    let loss = b.reduce(ReduceOp::Sum, &s, 1).unwrap();
    let program: &'static Program = Box::leak(Box::new(hvp(&b.finish(&[&loss]).unwrap(), &[0]).unwrap()));
    let desc = TensorDesc::contiguous(meta).unwrap();
    // The compiled plan borrows its program and provider for as long as the
    // bench runs it.
    let cpu: &'static Cpu = Box::leak(Box::new(Cpu::new()));
    let compiled = program.compile(cpu, &[&desc, &desc]).unwrap();
    let data = case.data.clone();
    let mut pool = Pool::new();
    let mut run = move |keep: bool| -> Vec<f64> {
        let inputs =
            [&data[..n * n], &data[n * n..]].map(|x| Input { desc: &desc, data: HostData::from_slice(x) });
        let mut alloc = pool.allocator();
        let results = compiled.run(&mut alloc, &inputs).unwrap();
        let mut check = Vec::new();
        for (k, (_, buffer)) in results.into_iter().enumerate() {
            if keep && k == 3 {
                check = Host::data(&buffer).unwrap().typed::<f64>().unwrap()[..n * n].to_vec();
            }
            Allocator::<Host>::release(&mut alloc, buffer);
        }
        check
    };
    let check = run(true);
    (Box::new(move || drop(black_box(run(false)))), check)
}

/// lindiff's call for a case, and the vector its cross-check compares.
fn lindiff_call(case: &Case) -> (Box<dyn FnMut()>, Vec<f64>) {
    let n = case.n;
    match case.kind {
        "svd_batch" => {
            let mut la = Direct::new(Cpu::with_exec(Exec::with_threads(1).policy(BatchPolicy::Auto)));
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let check = la.svd(&t).unwrap().s.to_vec::<f64>().unwrap();
            (Box::new(move || drop(black_box(la.svd(&t).unwrap()))), check)
        }
        "cholesky" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let check = la.cholesky(&t).unwrap().to_vec::<f64>().unwrap();
            (Box::new(move || drop(black_box(la.cholesky(&t).unwrap()))), check)
        }
        "svd" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let check = la.svd(&t).unwrap().s.to_vec::<f64>().unwrap();
            (Box::new(move || drop(black_box(la.svd(&t).unwrap()))), check)
        }
        "eigh" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let check = la.eigh(&t).unwrap().w.to_vec::<f64>().unwrap();
            (Box::new(move || drop(black_box(la.eigh(&t).unwrap()))), check)
        }
        "svd_loss" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let out = la.value_and_grad([&t], |[a]| a.svd_vals().sum()).unwrap();
            let mut check = vec![out.value];
            check.extend(out.grads[0].to_vec::<f64>().unwrap());
            let call = move || drop(black_box(la.value_and_grad([&t], |[a]| a.svd_vals().sum()).unwrap()));
            (Box::new(call), check)
        }
        "eigh_loss" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let weights: Vec<f64> = (1..=n).map(|i| i as f64).collect();
            let w = la.tensor(&[n], &weights).unwrap();
            let out = la.value_and_grad([&t], |[a]| a.eigh().w.dot(&a.constant(&w))).unwrap();
            let mut check = vec![out.value];
            check.extend(out.grads[0].to_vec::<f64>().unwrap());
            let call = move || {
                drop(black_box(la.value_and_grad([&t], |[a]| a.eigh().w.dot(&a.constant(&w))).unwrap()))
            };
            (Box::new(call), check)
        }
        "svd_hvp" => svd_hvp(case),
        "expm" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let check = la.expm_hermitian(&t).unwrap().to_vec::<f64>().unwrap();
            (Box::new(move || drop(black_box(la.expm_hermitian(&t).unwrap()))), check)
        }
        "expm_loss" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let out = la.value_and_grad([&t], |[a]| a.expm_hermitian().sum()).unwrap();
            let mut check = vec![out.value];
            check.extend(out.grads[0].to_vec::<f64>().unwrap());
            let call =
                move || drop(black_box(la.value_and_grad([&t], |[a]| a.expm_hermitian().sum()).unwrap()));
            (Box::new(call), check)
        }
        "expm_general" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let check = la.expm(&t).unwrap().to_vec::<f64>().unwrap();
            (Box::new(move || drop(black_box(la.expm(&t).unwrap()))), check)
        }
        "expm_general_loss" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let out = la.value_and_grad([&t], |[a]| a.expm().sum()).unwrap();
            let mut check = vec![out.value];
            check.extend(out.grads[0].to_vec::<f64>().unwrap());
            let call = move || drop(black_box(la.value_and_grad([&t], |[a]| a.expm().sum()).unwrap()));
            (Box::new(call), check)
        }
        "logm" | "sqrtm" => {
            let mut la = Direct::new(Cpu::new());
            let t = la.tensor(&case.dims, &case.data).unwrap();
            let log = case.kind == "logm";
            let run = move |la: &mut Direct<Cpu>| if log { la.logm(&t) } else { la.sqrtm(&t) };
            let check = run(&mut la).unwrap().to_vec::<f64>().unwrap();
            (Box::new(move || drop(black_box(run(&mut la).unwrap()))), check)
        }
        other => panic!("unknown case kind {other}"),
    }
}

/// faer's symmetric eigendecomposition (lindiff-cpu's `eigh` kernel) step
/// by step against LAPACK's dsyevd step by step, from scipy's OpenBLAS (the
/// LAPACK JAX calls): whole (`self_adjoint_evd` / dsyevd), the reduction to
/// tridiagonal form (`tridiag_in_place` on a copy of the lower triangle /
/// dsytrd), the tridiagonal eigensolver with vectors (dstevd; faer does not
/// export its own, so its figure is the whole minus the other two steps)
/// and the back-transformation of the eigenvectors (faer's block
/// Householder sequence / dormqr, which is dormtr for a lower dsytrd). Each
/// round takes the fastest of three calls of every step on both sides, one
/// after the other, so load hits them alike; each figure is the median over
/// rounds. Returns the table's lines and the checks (the eigenvalues each
/// LAPACK step leads to, against faer's).
fn eigh_phases(
    peer: &mut Peer,
    case: &Case,
    id: &str,
    dir: &std::path::Path,
    (rounds, row_time): (usize, Duration),
) -> (Vec<String>, Vec<String>) {
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::{evd, householder, qr};
    use faer::{Col, Conj, Par};
    let n = case.n;
    let a = Mat::from_fn(n, n, |i, j| case.data[i + j * n]);
    let yes = evd::ComputeEigenvectors::Yes;
    let mut evd_mem =
        MemBuffer::new(evd::self_adjoint_evd_scratch::<f64>(n, yes, Par::Seq, Default::default()));
    let mut v = Mat::<f64>::zeros(n, n);
    let mut whole = |a: &Mat<f64>, w: &mut Col<f64>| {
        let (d, stack) = (w.as_mut().as_diagonal_mut(), MemStack::new(&mut evd_mem));
        evd::self_adjoint_evd(a.as_ref(), d, Some(v.as_mut()), Par::Seq, stack, Default::default()).unwrap();
        black_box(&v);
    };
    let mut w = Col::<f64>::zeros(n);
    whole(&a, &mut w);
    let ours: Vec<f64> = w.iter().copied().collect();
    let bs = qr::no_pivoting::factor::recommended_block_size::<f64>(n, n);
    let mut tri_mem =
        MemBuffer::new(evd::tridiag::tridiag_in_place_scratch::<f64>(n, Par::Seq, Default::default()));
    let mut tridiagonalize = |t: &mut Mat<f64>, h: &mut Mat<f64>| {
        t.copy_from_triangular_lower(a.as_ref());
        let stack = MemStack::new(&mut tri_mem);
        evd::tridiag::tridiag_in_place(t.as_mut(), h.as_mut(), Par::Seq, stack, Default::default());
        black_box((&*t, &*h));
    };
    // The reflectors the back-transformation applies (to any n×n matrix:
    // its cost does not depend on the entries).
    let (mut t, mut h) = (Mat::<f64>::zeros(n, n), Mat::<f64>::zeros(bs, n - 1));
    tridiagonalize(&mut t, &mut h);
    let (mut t_timed, mut h_timed) = (t.clone(), h.clone());
    let mut back_mem = MemBuffer::new(
        householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(n - 1, bs, n),
    );
    let mut z = Mat::<f64>::identity(n, n);
    let mut back_transform = || {
        householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            t.as_ref().submatrix(1, 0, n - 1, n - 1),
            h.as_ref(),
            Conj::No,
            z.as_mut().subrows_mut(1, n - 1),
            Par::Seq,
            MemStack::new(&mut back_mem),
        );
        black_box(&z);
    };
    let lapack = ["dsyevd", "dsytrd", "dstevd", "dormtr"];
    let mut checks = Vec::new();
    for lib in lapack {
        let path = dir.join(format!("check-phases-{lib}.f64"));
        peer.ask(&format!(
            r#"{{"cmd": "check", "case": "{id}", "lib": "{lib}", "path": "{}"}}"#,
            path.display()
        ));
        let diff = difference(case, &ours, &read_f64(&path));
        let verdict = if diff <= case.tol { "agree" } else { "DISAGREE" };
        checks.push(format!(
            "check: {id}, {lib}: max |faer − {lib}| / max |faer| (eigenvalues) = {diff:.1e} (tolerance {:.0e}): {verdict}",
            case.tol
        ));
    }
    // faer's whole, tridiagonalization and back-transformation, then
    // LAPACK's steps in the order of `lapack`.
    let mut samples: [Vec<f64>; 7] = Default::default();
    let start = Instant::now();
    while samples[0].len() < rounds || start.elapsed() < row_time * 4 {
        samples[0].push(min_time(3, || whole(&a, &mut w)));
        samples[1].push(min_time(3, || tridiagonalize(&mut t_timed, &mut h_timed)));
        samples[2].push(min_time(3, &mut back_transform));
        for (k, lib) in lapack.iter().enumerate() {
            let reply = peer.ask(&format!(r#"{{"cmd": "time", "case": "{id}", "lib": "{lib}", "reps": 3}}"#));
            samples[3 + k].push(number(&reply, "seconds"));
        }
    }
    let [fw, ft, fb, lw, lt, ls, lb] = samples.map(|mut s| median(&mut s) * 1e6);
    let rows = [
        ("eigh, values + vectors (dsyevd)", fw, lw),
        ("tridiagonalization (dsytrd)", ft, lt),
        ("tridiagonal eigensolver (dstevd; faer's = whole − the other two)", fw - ft - fb, ls),
        ("back-transformation (dormtr)", fb, lb),
    ];
    let mut lines = vec![
        "\n## faer's eigh step by step vs LAPACK's dsyevd step by step, from scipy's OpenBLAS as JAX calls it \
         (f64, one thread, µs; ratio = faer / LAPACK)"
            .to_string(),
        format!("{:<16} {:>6} {:>12} {:>12} {:>8}", "op", "n", "faer", "LAPACK", "ratio"),
    ];
    for (step, ours, theirs) in rows {
        lines.push(format!("{step:<36} {n:>6} {ours:>12.3} {theirs:>12.3} {:>8.3}", ours / theirs));
    }
    (lines, checks)
}

/// Whether lindiff's op reads the lower triangle of A (eigh and the
/// Hermitian matrix functions), so its gradient lives there while the
/// peer's is symmetric.
fn reads_lower(case: &Case) -> bool {
    matches!(case.kind, "eigh_loss" | "expm_loss")
}

/// The largest difference between two check vectors relative to the
/// largest entry of lindiff's; for a loss, the worse of the value's
/// relative difference and the gradient's. eigh reads the lower triangle
/// of A, so lindiff's gradient lives there, while JAX's eigh symmetrises
/// its input and so its gradient; both give the same derivative along
/// every symmetric direction, which is what comparing the symmetric parts
/// (G + Gᵀ)/2 checks.
fn difference(case: &Case, ours: &[f64], theirs: &[f64]) -> f64 {
    if ours.len() != theirs.len() {
        return f64::INFINITY;
    }
    let rel = |a: &[f64], b: &[f64]| {
        let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
    };
    if !case.kind.ends_with("_loss") {
        return rel(ours, theirs);
    }
    let n = case.n;
    let sym = |g: &[f64]| -> Vec<f64> { (0..n * n).map(|k| 0.5 * (g[k] + g[(k % n) * n + k / n])).collect() };
    let (ga, gb) = if reads_lower(case) {
        (sym(&ours[1..]), sym(&theirs[1..]))
    } else {
        (ours[1..].to_vec(), theirs[1..].to_vec())
    };
    rel(&ours[..1], &theirs[..1]).max(rel(&ga, &gb))
}

/// The value and the gradient of ⟨W, f(A)⟩ by lindiff, column-major, one
/// after the other; or lindiff's error. `kind` names the op.
fn matrix_function_and_gradient(kind: &str, a: &[f64], w: &[f64], n: usize) -> Result<Vec<f64>, Error> {
    let mut la = Direct::new(Cpu::new());
    let (ta, tw) = (la.tensor(&[n, n], a)?, la.tensor(&[n, n], w)?);
    let value = match kind {
        "expm" => la.expm(&ta)?,
        "logm" => la.logm(&ta)?,
        "sqrtm" => la.sqrtm(&ta)?,
        "expm_hermitian" => la.expm_hermitian(&ta)?,
        "logm_pd" => la.logm_pd(&ta)?,
        _ => la.sqrtm_psd(&ta)?,
    };
    let out = la.value_and_grad([&ta], |[x]| {
        let fx = match kind {
            "expm" => x.expm(),
            "logm" => x.logm(),
            "sqrtm" => x.sqrtm(),
            "expm_hermitian" => x.expm_hermitian(),
            "logm_pd" => x.logm_pd(),
            _ => x.sqrtm_psd(),
        };
        x.constant(&tw).dot(&fx)
    })?;
    let mut v = value.to_vec::<f64>()?;
    v.extend(out.grads[0].to_vec::<f64>()?);
    Ok(v)
}

/// One row of the accuracy table: the op, how A was made, A (n×n).
struct AccuracyCase {
    kind: &'static str,
    input: String,
    n: usize,
    a: Vec<f64>,
}

/// The accuracy table's inputs. General functions: a non-normal
/// A = X Λ X⁻¹ with three eigenvalues g apart (Λ = 1, 1 + g, 1 + 2g, 1.7,
/// 2.3, 0.8; X = I + 0.3·R), gaps 0 and 1e-14 … 1e-4; and expm of
/// [[1, b], [0, −1]], whose ‖A‖₁ overstates its powers' growth. Hermitian
/// forms: Q Λ Qᵀ with the same Λ (Q a Householder reflector).
fn accuracy_cases() -> Vec<AccuracyCase> {
    const N: usize = 6;
    let r = matrix(N, N, 11);
    let x = Mat::from_fn(N, N, |i, j| if i == j { 1.0 } else { 0.0 } + 0.3 * r[i + j * N]);
    let x_inv = {
        use faer::linalg::solvers::DenseSolveCore;
        x.partial_piv_lu().inverse()
    };
    let v = matrix(N, 1, 13);
    let vv: f64 = v.iter().map(|t| t * t).sum();
    let q = Mat::from_fn(N, N, |i, j| if i == j { 1.0 } else { 0.0 } - 2.0 * v[i] * v[j] / vv);
    let similar = |basis: &Mat<f64>, inverse: &Mat<f64>, lambda: &[f64; N]| -> Vec<f64> {
        let a = Mat::from_fn(N, N, |i, j| basis[(i, j)] * lambda[j]) * inverse;
        (0..N * N).map(|k| a[(k % N, k / N)]).collect()
    };
    let gaps = [0.0, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6, 1e-4];
    let gap_name = |g: f64| if g == 0.0 { "gap 0".to_string() } else { format!("gap {g:.0e}") };
    let mut out = Vec::new();
    for (kinds, hermitian) in
        [(["expm", "logm", "sqrtm"], false), (["expm_hermitian", "logm_pd", "sqrtm_psd"], true)]
    {
        for kind in kinds {
            for g in gaps {
                let lambda = [1.0, 1.0 + g, 1.0 + 2.0 * g, 1.7, 2.3, 0.8];
                let a = if hermitian { similar(&q, &q, &lambda) } else { similar(&x, &x_inv, &lambda) };
                out.push(AccuracyCase { kind, input: gap_name(g), n: N, a });
            }
        }
    }
    for b in [1e4, 1e8, 1e10] {
        let input = format!("[[1, {b:.0e}], [0, −1]]");
        out.push(AccuracyCase { kind: "expm", input, n: 2, a: vec![1.0, 0.0, b, -1.0] });
    }
    out
}

/// Accuracy at near ties ([`accuracy_cases`]): the relative errors of f(A)
/// and of the gradient of ⟨W, f(A)⟩ by lindiff and each peer against
/// mpmath at 40 digits on the same stored A (peers.py). Returns the
/// table's lines.
fn near_tie_accuracy(peer: &mut Peer, dir: &std::path::Path) -> Vec<String> {
    let (a_path, w_path, ours_path) =
        (dir.join("tie-a.f64"), dir.join("tie-w.f64"), dir.join("tie-ours.f64"));
    let mut lines = vec![
        "\n## accuracy at near ties (f64; relative Frobenius error against mpmath at 40 digits on the same \
         A; gradient of ⟨W, f(A)⟩)\n"
            .to_string(),
        "General f: A = X diag(1, 1 + g, 1 + 2g, 1.7, 2.3, 0.8) X⁻¹, X = I + 0.3·R (non-normal), and \
         [[1, b], [0, −1]]. Hermitian forms: A = Q diag(…) Qᵀ with the same eigenvalues, compared with \
         scipy's and JAX's general functions on that A; their gradients (which read the lower triangle) \
         against mpmath's folded onto it, as are the peers'. scipy's gradient: its Fréchet derivative of \
         expm, the block identity f([[Aᵀ, W], [0, Aᵀ]]) for logm and sqrtm; JAX's: its grad transform (JAX has no \
         logm, and no derivative of sqrtm).\n"
            .to_string(),
        "| f | A | lindiff value | scipy value | JAX value | lindiff gradient | scipy gradient | JAX gradient |"
            .to_string(),
        "|---|---|---|---|---|---|---|---|".to_string(),
    ];
    for case in accuracy_cases() {
        let (kind, n) = (case.kind, case.n);
        let w = matrix(n, n, 12);
        write_f64(&w_path, &w);
        write_f64(&a_path, &case.a);
        let ours = matrix_function_and_gradient(kind, &case.a, &w, n);
        if let Ok(v) = &ours {
            write_f64(&ours_path, v);
        }
        let reply = match ours {
            Ok(_) => peer.ask(&format!(
                r#"{{"cmd": "accuracy", "kind": "{kind}", "n": {n}, "a": "{}", "w": "{}", "ours": "{}"}}"#,
                a_path.display(),
                w_path.display(),
                ours_path.display()
            )),
            Err(e) => format!("lindiff: {e}"),
        };
        let cell = |key: &str| {
            if reply.contains(&format!("\"{key}\"")) {
                format!("{:.1e}", number(&reply, key))
            } else if key.starts_with("lindiff") && reply.starts_with("lindiff:") {
                "error".to_string()
            } else {
                "—".to_string()
            }
        };
        let keys = ["lindiff_value", "scipy_value", "jax_value", "lindiff_grad", "scipy_grad", "jax_grad"];
        let cells: Vec<String> = keys.iter().map(|k| cell(k)).collect();
        lines.push(format!("| {kind} | {} | {} |", case.input, cells.join(" | ")));
    }
    lines
}

fn main() {
    let Ok(python) = std::env::var("LINDIFF_PEERS_PYTHON") else {
        eprintln!("peers: LINDIFF_PEERS_PYTHON is not set; skipped (cargo xtask bench --peers sets it)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("lindiff-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut peer = Peer::start(&python);
    let only = std::env::var("LINDIFF_PEERS_ONLY").ok();
    // Per row: at least ROUNDS rounds, then on until the row's time is spent.
    let (rounds, row_time) =
        if quick() { (5, Duration::from_millis(1500)) } else { (9, Duration::from_secs(6)) };
    let mut tables: Vec<(String, Vec<Row>)> = Vec::new();
    let mut checks = Vec::new();
    let mut phases = Vec::new();
    for (k, case) in cases().into_iter().enumerate() {
        let id = format!("{} {}", case.name, case.n);
        if only.as_deref().is_some_and(|o| !case.kind.starts_with(o)) {
            continue;
        }
        eprintln!("peers: {id}");
        let input = dir.join(format!("input{k}.f64"));
        write_f64(&input, &case.data);
        let dims: Vec<String> = case.dims.iter().map(|d| d.to_string()).collect();
        let reply = peer.ask(&format!(
            r#"{{"cmd": "load", "kind": "{}", "case": "{id}", "path": "{}", "dims": [{}]}}"#,
            case.kind,
            input.display(),
            dims.join(", ")
        ));
        if case.kind == "eigh_phases" {
            let (lines, phase_checks) = eigh_phases(&mut peer, &case, &id, &dir, (rounds, row_time));
            phases.extend(lines);
            checks.extend(phase_checks);
            continue;
        }
        let (mut ours, check) = lindiff_call(&case);
        // Calls per round: a round's calls last ~2 ms or more.
        let one = min_time(3, &mut ours);
        let reps = ((2e-3 / one).ceil() as usize).clamp(1, 1000);
        for lib in libs(&reply) {
            let path = dir.join(format!("check{k}-{lib}.f64"));
            peer.ask(&format!(
                r#"{{"cmd": "check", "case": "{id}", "lib": "{lib}", "path": "{}"}}"#,
                path.display()
            ));
            let theirs = read_f64(&path);
            if std::env::var_os("LINDIFF_PEERS_KEEP").is_some() {
                write_f64(&dir.join(format!("check{k}-lindiff.f64")), &check);
            }
            let diff = difference(&case, &check, &theirs);
            let verdict = if diff <= case.tol { "agree" } else { "DISAGREE" };
            checks.push(format!(
                "check: {id}, {lib}: max |lindiff − {lib}| / max |lindiff| = {diff:.1e} (tolerance {:.0e}{}): {verdict}",
                case.tol,
                if reads_lower(&case) { "; symmetric parts of the gradients" } else { "" }
            ));
            let (mut a, mut b, mut r) = (Vec::new(), Vec::new(), Vec::new());
            let start = Instant::now();
            while a.len() < rounds || start.elapsed() < row_time {
                let x = min_time(reps, &mut ours);
                let reply = peer
                    .ask(&format!(r#"{{"cmd": "time", "case": "{id}", "lib": "{lib}", "reps": {reps}}}"#));
                let y = number(&reply, "seconds");
                a.push(x);
                b.push(y);
                r.push(x / y);
            }
            let row = Row {
                case: case.name.clone(),
                n: case.n,
                ours: median(&mut a),
                theirs: median(&mut b),
                ratio: median(&mut r),
            };
            match tables.iter_mut().find(|(l, _)| *l == lib) {
                Some((_, rows)) => rows.push(row),
                None => tables.push((lib, vec![row])),
            }
        }
    }
    let accuracy = if only.as_deref().is_none_or(|o| o == "accuracy") {
        eprintln!("peers: accuracy at near ties");
        near_tie_accuracy(&mut peer, &dir)
    } else {
        Vec::new()
    };
    let medians = peer.ask(r#"{"cmd": "done"}"#);
    let _ = peer.child.wait();
    if std::env::var_os("LINDIFF_PEERS_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("peers: inputs and check vectors kept in {}", dir.display());
    }
    let order = |lib: &str| ["numpy", "scipy", "jax"].iter().position(|l| *l == lib);
    tables.sort_by_key(|(lib, _)| order(lib));
    for (lib, rows) in tables {
        harness::table(
            &format!("lindiff-cpu vs {lib} (f64, one thread, µs; ratio = lindiff / {lib}; sample by sample)"),
            "lindiff",
            &lib,
        );
        for r in rows {
            println!(
                "{:<36} {:>6} {:>12.3} {:>12.3} {:>8.3}",
                r.case,
                r.n,
                r.ours * 1e6,
                r.theirs * 1e6,
                r.ratio
            );
        }
    }
    for line in phases.into_iter().chain(accuracy) {
        println!("{line}");
    }
    println!("\n## cross-checks (lindiff-cpu vs each peer, same inputs)");
    for c in checks {
        println!("{c}");
    }
    eprintln!("peers.py medians (s): {}", medians.trim());
}
