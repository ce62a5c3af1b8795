//! The device check's timing table: batched 10 000 × 8×8 SVD, 4096² SVD
//! (`Auto` and each cuSOLVER driver) and 4096² solve, in f64 and f32. Each
//! row is one warm-up then the median of 3 synchronised runs (batched) or 1
//! timed run (4096², to keep the device check within its time).
//! `--part required` prints only the rows the issue asks for (batched SVD,
//! 4096² Auto SVD — `Xgesvd` above 32×32 —, 4096² solve), `--part drivers`
//! only the explicit drivers (`Jacobi` = gesvdj, `Polar` = Xgesvdp; the
//! `QrIteration` override is the Auto row's routine), informational rows the
//! device check runs last to tune `Auto`'s size rule; default both. Inputs
//! are made on the host, uploaded once, and every run goes through
//! `lindiff_core::call::run_into` with device outputs and workspace from a
//! `DeviceArena`.
//!
//! Run: `cargo run --release -p lindiff-cuda --example cuda_timing [-- --quick]`.
//! Without a GPU it prints `skipped: <reason>` and exits 0 (2 with
//! `--require-gpu`, which the device check passes); a failing required row
//! prints `error: …` in its row and makes the exit status 1 (a failing
//! driver row is only printed); when NVRTC rejected the
//! kernels it prints NVRTC's log after the reason. `--quick` times 1024²
//! instead of 4096².

use lindiff_core::op::{LuFactorSolve, Svd, SvdDriver, SvdOptions};
use lindiff_core::{call, Allocator, Element, LinalgOp, Op, Shape, TensorDesc, TensorMeta, WorkspaceReq};
use lindiff_cuda::{Cuda, DeviceArena};
use std::time::Instant;

/// A deterministic pseudo-random fill in [-1, 1) (splitmix64).
fn fill(len: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        })
        .collect()
}

/// Median wall time (ms) of `runs` synchronised runs of `op` after one warm-up.
fn time<T: Element + Copy>(
    cuda: &Cuda,
    op: &Op,
    dims: &[&[usize]],
    host: &[Vec<T>],
    runs: usize,
) -> Result<f64, String> {
    let descs: Vec<TensorDesc> = dims
        .iter()
        .map(|d| TensorDesc::contiguous(TensorMeta::new(T::DTYPE, Shape::new(d).unwrap())).unwrap())
        .collect();
    let refs: Vec<&TensorDesc> = descs.iter().collect();
    let outs = call::infer(op, &refs).map_err(|e| e.to_string())?;
    let ws = call::workspace(cuda, op, &refs).map_err(|e| e.to_string())?;
    let out_bytes: usize = outs.iter().flatten().map(|m| m.bytes().unwrap() + 512).sum();
    let in_bytes: usize = host.iter().map(|h| std::mem::size_of_val(&h[..]) + 512).sum();
    let mut memory = cuda.alloc(in_bytes + out_bytes + ws.bytes() + 512).map_err(|e| e.to_string())?;
    let mut arena = DeviceArena::new(&mut memory);
    let mut inputs = Vec::new();
    for h in host {
        let mut buf = arena
            .allocate(WorkspaceReq::of::<T>(h.len()).and(WorkspaceReq::new(0, 256)))
            .map_err(|e| e.to_string())?;
        cuda.upload(h, &mut buf).map_err(|e| e.to_string())?;
        inputs.push(buf);
    }
    let mut out_bufs = Vec::new();
    for m in outs.iter().flatten() {
        out_bufs.push(arena.allocate(WorkspaceReq::new(m.bytes().unwrap(), 256)).map_err(|e| e.to_string())?);
    }
    let mut workspace = arena.allocate(ws).map_err(|e| e.to_string())?;
    let mut samples = Vec::new();
    for run in 0..=runs {
        let ins: Vec<lindiff_core::Input<'_, lindiff_cuda::Device>> = inputs
            .iter()
            .zip(&descs)
            .map(|(b, d)| lindiff_core::Input { desc: d, data: b.data().unwrap() })
            .collect();
        let mut refs_out: Vec<Option<&mut lindiff_cuda::DeviceBuffer<'_>>> =
            out_bufs.iter_mut().map(Some).collect();
        let start = Instant::now();
        call::run_into(cuda, op, &ins, &mut refs_out, &mut workspace).map_err(|e| e.to_string())?;
        cuda.synchronize().map_err(|e| e.to_string())?;
        if run > 0 {
            samples.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}

fn row<T: Element + Copy>(
    cuda: &Cuda,
    label: &str,
    op: Op,
    dims: &[&[usize]],
    cast: fn(f64) -> T,
    runs: usize,
) -> bool {
    let host: Vec<Vec<T>> = dims
        .iter()
        .enumerate()
        .map(|(i, d)| fill(d.iter().product(), 7 + i as u64).into_iter().map(cast).collect())
        .collect();
    match time(cuda, &op, dims, &host, runs) {
        Ok(ms) => {
            println!("| {label} | {} | {ms:.2} |", T::DTYPE.name());
            true
        }
        Err(e) => {
            println!("| {label} | {} | error: {e} |", T::DTYPE.name());
            false
        }
    }
}

/// Which rows of the table to print.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    /// Batched SVD, Auto SVD and solve at n².
    Required,
    /// The other SVD drivers at n².
    Drivers,
    /// Both.
    All,
}

/// Prints the rows of `part`; returns how many of the required rows
/// (batched SVD, Auto SVD, solve) failed. A failing driver row is only
/// reported.
fn table<T: Element + Copy>(cuda: &Cuda, cast: fn(f64) -> T, quick: bool, part: Part) -> usize {
    let mut failed = 0;
    let n = if quick { 1024 } else { 4096 };
    let big_runs = if quick { 3 } else { 1 };
    let svd = |driver| Op::Linalg(LinalgOp::Svd(Svd(SvdOptions::default().driver(driver))));
    if part != Part::Drivers {
        let solve = Op::Linalg(LinalgOp::LuFactorSolve(LuFactorSolve::default()));
        let required = [
            row(cuda, "svd 10000 × 8×8 (gesvdjBatched)", svd(SvdDriver::Auto), &[&[8, 8, 10_000]], cast, 3),
            row(cuda, &format!("svd {n}² (Auto = Xgesvd)"), svd(SvdDriver::Auto), &[&[n, n]], cast, big_runs),
            row(cuda, &format!("solve {n}² (Xgetrf + Xgetrs)"), solve, &[&[n, n], &[n, 1]], cast, big_runs),
        ];
        failed += required.iter().filter(|ok| !**ok).count();
    }
    if part != Part::Required {
        // QrIteration (Xgesvd) is the Auto row's routine at this size.
        for (name, driver) in [("Jacobi = gesvdj", SvdDriver::Jacobi), ("Polar = Xgesvdp", SvdDriver::Polar)]
        {
            row(cuda, &format!("svd {n}² ({name})"), svd(driver), &[&[n, n]], cast, big_runs);
        }
    }
    failed
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let require = args.iter().any(|a| a == "--require-gpu");
    let part = match args.iter().position(|a| a == "--part").and_then(|i| args.get(i + 1)).map(String::as_str)
    {
        None => Part::All,
        Some("required") => Part::Required,
        Some("drivers") => Part::Drivers,
        Some(other) => {
            eprintln!("cuda_timing: --part takes `required` or `drivers`, not `{other}`");
            std::process::exit(2);
        }
    };
    let cuda = match Cuda::new() {
        Ok(c) => c,
        Err(e) => {
            println!("skipped: {e}");
            if let Some(log) = lindiff_cuda::compile_log() {
                println!("NVRTC log:\n{log}");
            }
            std::process::exit(if require { 2 } else { 0 });
        }
    };
    println!("device: {}", cuda.device_name());
    println!("| op | dtype | median ms |");
    println!("|---|---|---|");
    let failed = table::<f64>(&cuda, |x| x, quick, part) + table::<f32>(&cuda, |x| x as f32, quick, part);
    if failed > 0 {
        // The device check's timing step is required: a failed required row
        // fails it (the driver rows are informational and never count).
        println!("error: {failed} required row(s) failed");
        std::process::exit(1);
    }
}
