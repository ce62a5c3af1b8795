//! Extra peak memory of an SVD loss's value and gradient, n = 1024
//! (`cargo xtask bench --peers`): lindiff's eager face, its traced program
//! run on the direct face, faer's thin SVD alone (the forward, as a floor)
//! and JAX's `jit(value_and_grad)` when a Python with JAX is at
//! `$LINDIFF_PEERS_PYTHON`. Each side runs in a fresh process on the same
//! input (raw little-endian f64, written here): its input read (and JAX's
//! function compiled, lindiff's program traced and compiled), the resident
//! set is read (VmRSS), the kernel's high-water mark reset
//! (`/proc/self/clear_refs`), one call made, and the high-water mark read
//! again (VmHWM): extra = peak − before. Every side runs with glibc's
//! `MALLOC_MMAP_THRESHOLD_` fixed at 128 KiB, so that a large buffer freed
//! before the reading is given back to the system, not reused unseen.
//! Also printed: the compiled program's `peak_bytes` and the buffers live
//! at that peak. Linux only (it reads `/proc`); a side that cannot measure
//! is reported and skipped.

use lindiff_core::var::trace_value_and_grad;
use lindiff_cpu::prelude::*;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;

#[allow(dead_code)]
#[path = "harness/mod.rs"]
mod harness;

const N: usize = 1024;

/// The environment of every side.
const ENV: &[(&str, &str)] = &[
    ("MALLOC_MMAP_THRESHOLD_", "131072"),
    ("OMP_NUM_THREADS", "1"),
    ("OPENBLAS_NUM_THREADS", "1"),
    ("MKL_NUM_THREADS", "1"),
    ("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"),
];

/// The loss, as in the peers bench: Σ s_i (the nuclear norm).
const JAX: &str = r#"
import sys, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
n = int(sys.argv[2])
x = jnp.asarray(np.fromfile(sys.argv[1], dtype="<f8").reshape((n, n), order="F"))
f = jax.jit(jax.value_and_grad(lambda m: jnp.sum(jnp.linalg.svd(m, compute_uv=False))))
call = f.lower(x).compile()
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
before = status("VmRSS:")
open("/proc/self/clear_refs", "w").write("5")
jax.block_until_ready(call(x))
print(status("VmHWM:") - before)
"#;

/// `key` of /proc/self/status in bytes.
fn status(key: &str) -> Result<usize, String> {
    let text = std::fs::read_to_string("/proc/self/status").map_err(|e| format!("/proc/self/status: {e}"))?;
    let line = text.lines().find(|l| l.starts_with(key)).ok_or(format!("no {key} in /proc/self/status"))?;
    let kb = line.split_whitespace().nth(1).and_then(|k| k.parse::<usize>().ok());
    kb.map(|kb| kb * 1024).ok_or(format!("unreadable {line}"))
}

/// Runs `call` once and returns its extra peak: the high-water mark after
/// it, reset just before, less the resident set before.
fn extra(call: impl FnOnce()) -> Result<usize, String> {
    let before = status("VmRSS:")?;
    std::fs::write("/proc/self/clear_refs", "5").map_err(|e| format!("/proc/self/clear_refs: {e}"))?;
    call();
    Ok(status("VmHWM:")?.saturating_sub(before))
}

/// One side in this (fresh) process, on the matrix in `input`: prints its
/// extra peak in bytes (and, traced, the plan).
fn child(side: &str, input: &Path) -> Result<(), String> {
    let bytes = std::fs::read(input).map_err(|e| format!("{}: {e}", input.display()))?;
    let data: Vec<f64> = bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    let mut la = Direct::new(Cpu::new());
    let a = la.tensor(&[N, N], &data).unwrap();
    match side {
        "faer" => {
            let m = faer::Mat::<f64>::from_fn(N, N, |i, j| data[i + j * N]);
            println!("{}", extra(|| drop(black_box(m.thin_svd().unwrap())))?);
        }
        "eager" => {
            let loss = || drop(black_box(la.value_and_grad([&a], |[a]| a.svd_vals().sum()).unwrap()));
            println!("{}", extra(loss)?);
        }
        _ => {
            let program = trace_value_and_grad([a.meta().clone()], |[a]| a.svd_vals().sum()).unwrap();
            let cpu = Cpu::new();
            let compiled = program.compile(&cpu, &[a.desc()]).unwrap();
            println!("{}", extra(|| drop(black_box(la.run(&compiled, &[&a]).unwrap())))?);
            // The plan: the arena's size and what it holds at the peak.
            println!("peak_bytes {}", compiled.peak_bytes());
            for live in compiled.live_at_peak().unwrap().iter() {
                let instr = &program.instrs()[live.instr];
                let what = match (live.workspace, live.value) {
                    (true, _) => "the workspace",
                    (false, Some(_)) => "a value",
                    (false, None) => "an output with no value",
                };
                let dims: Vec<String> = instr
                    .inputs
                    .iter()
                    .map(|&v| format!("{:?}", program.meta(v).unwrap().shape.dims()))
                    .collect();
                println!(
                    "live at {:>10} B: {:>10} B, {what} of instruction {} ({} of {})",
                    live.offset,
                    live.bytes,
                    live.instr,
                    instr.op.name(),
                    dims.join(", ")
                );
            }
        }
    }
    Ok(())
}

/// Runs `program args` with [`ENV`]; its stdout lines, or why not.
fn fresh(program: &Path, args: &[&str], side: Option<&str>) -> Result<Vec<String>, String> {
    let mut command = Command::new(program);
    command.args(args).envs(ENV.iter().copied());
    if let Some(side) = side {
        command.env("LINDIFF_MEMORY_SIDE", side);
    }
    let out = command.output().map_err(|e| format!("{}: {e}", program.display()))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect())
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

/// The first line of a side's output as bytes.
fn first(lines: &[String]) -> Option<usize> {
    lines.first().and_then(|l| l.parse().ok())
}

fn main() {
    let input = std::env::temp_dir().join(format!("lindiff-memory-{}.f64", std::process::id()));
    if let Ok(side) = std::env::var("LINDIFF_MEMORY_SIDE") {
        let path = std::env::var("LINDIFF_MEMORY_INPUT").map(Into::into).unwrap_or(input);
        if let Err(e) = child(&side, &path) {
            eprintln!("memory ({side}): {e}");
            std::process::exit(1);
        }
        return;
    }
    if !cfg!(target_os = "linux") {
        eprintln!("memory: reads /proc; skipped on this OS");
        return;
    }
    let bytes: Vec<u8> = harness::matrix(N, N, 7).iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&input, bytes).expect("the input file");
    std::env::set_var("LINDIFF_MEMORY_INPUT", &input);
    let exe = std::env::current_exe().expect("the bench's path");
    let side = |name: &str| match fresh(&exe, &[], Some(name)) {
        Ok(lines) => Some(lines),
        Err(e) => {
            eprintln!("memory: {name} side skipped: {e}");
            None
        }
    };
    let (eager, traced, faer) = (side("eager"), side("traced"), side("faer"));
    let jax = std::env::var("LINDIFF_PEERS_PYTHON").ok().and_then(|python| {
        let args = ["-c", JAX, input.to_str()?, &N.to_string()];
        match fresh(Path::new(&python), &args, None) {
            Ok(lines) => first(&lines),
            Err(e) => {
                eprintln!("memory: JAX side skipped: {e}");
                None
            }
        }
    });
    let _ = std::fs::remove_file(&input);
    harness::table(
        &format!("extra peak RSS, SVD loss Σ sᵢ value+grad, n = {N} (MB; ratio = lindiff / jax; a fresh process each)"),
        "lindiff",
        "jax",
    );
    for (name, lines) in [("svd loss value+grad, eager", &eager), ("svd loss value+grad, traced", &traced)] {
        let Some(ours) = lines.as_deref().and_then(first) else { continue };
        let (theirs, ratio) = jax.map_or((f64::NAN, f64::NAN), |j| (mb(j), ours as f64 / j as f64));
        println!("{:<36} {:>6} {:>12.1} {:>12.1} {:>8.3}", name, N, mb(ours), theirs, ratio);
    }
    println!();
    if let Some(f) = faer.as_deref().and_then(first) {
        println!("The forward alone, faer's thin SVD called directly: {:.1} MB extra.", mb(f));
    }
    println!("One n×n f64 matrix is {:.1} MB.", mb(N * N * 8));
    if let Some(traced) = traced {
        println!("The traced program's plan (`Compiled::peak_bytes`, `Compiled::live_at_peak`):");
        for line in &traced[1..] {
            println!("{line}");
        }
    }
}
