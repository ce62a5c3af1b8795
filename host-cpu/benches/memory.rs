//! Extra peak memory of an SVD loss's value and gradient, n = 1024
//! (`cargo xtask bench --peers`): lindiff's eager face, its traced program
//! run on the direct face, and JAX's `jit(value_and_grad)` when a Python
//! with JAX is at `$LINDIFF_PEERS_PYTHON`. Each side runs in a fresh
//! process: its input made (and JAX's function compiled, lindiff's program
//! traced and compiled), the resident set is read (VmRSS), the kernel's
//! high-water mark reset (`/proc/self/clear_refs`), one call made, and the
//! high-water mark read again (VmHWM): extra = peak − before. Also printed:
//! the compiled program's `peak_bytes` and the buffers live at that peak.
//! Linux only (it reads `/proc`).

use lindiff_core::var::trace_value_and_grad;
use lindiff_cpu::prelude::*;
use std::hint::black_box;
use std::process::Command;

#[allow(dead_code)]
#[path = "harness/mod.rs"]
mod harness;

const N: usize = 1024;

/// The loss, as in the peers bench: Σ s_i (the nuclear norm).
const JAX: &str = r#"
import sys, numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
n = int(sys.argv[1])
x = jnp.asarray(np.random.default_rng(7).standard_normal((n, n)))
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
fn status(key: &str) -> usize {
    let text = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = text.lines().find(|l| l.starts_with(key)).expect("a VmRSS/VmHWM line");
    line.split_whitespace().nth(1).and_then(|k| k.parse::<usize>().ok()).expect("kB") * 1024
}

/// Resets the high-water mark to the current resident set.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("/proc/self/clear_refs");
}

/// One side in this (fresh) process: prints its extra peak in bytes.
fn child(side: &str) {
    let mut la = Direct::new(Cpu::new());
    let a = la.tensor(&[N, N], &harness::matrix(N, N, 7)).unwrap();
    let meta = a.meta().clone();
    match side {
        "faer" => {
            // The forward alone, faer called directly (thin U and V): a floor.
            let data = harness::matrix(N, N, 7);
            let m = faer::Mat::<f64>::from_fn(N, N, |i, j| data[i + j * N]);
            let before = status("VmRSS:");
            reset_peak();
            black_box(m.thin_svd().unwrap());
            println!("{}", status("VmHWM:") - before);
        }
        "eager" => {
            let before = status("VmRSS:");
            reset_peak();
            black_box(la.value_and_grad([&a], |[a]| a.svd_vals().sum()).unwrap());
            println!("{}", status("VmHWM:") - before);
        }
        _ => {
            let program = trace_value_and_grad([meta], |[a]| a.svd_vals().sum()).unwrap();
            let cpu = Cpu::new();
            let compiled = program.compile(&cpu, &[a.desc()]).unwrap();
            let before = status("VmRSS:");
            reset_peak();
            black_box(la.run(&compiled, &[&a]).unwrap());
            println!("{}", status("VmHWM:") - before);
            // The plan: the arena's size and what it holds at the peak.
            println!("peak_bytes {}", compiled.peak_bytes());
            for live in compiled.live_at_peak().unwrap().iter() {
                let instr = &program.instrs()[live.instr];
                let what = if live.value.is_some() { "value" } else { "workspace or unread output" };
                let dims: Vec<String> = instr
                    .inputs
                    .iter()
                    .map(|&v| format!("{:?}", program.meta(v).unwrap().shape.dims()))
                    .collect();
                println!(
                    "live {} {} {} of instruction {} ({} of {})",
                    live.offset,
                    live.bytes,
                    what,
                    live.instr,
                    instr.op.name(),
                    dims.join(", ")
                );
            }
        }
    }
}

/// Runs a side in a fresh process; its stdout lines.
fn fresh(side: &str) -> Vec<String> {
    let exe = std::env::current_exe().expect("the bench's path");
    let out = Command::new(exe).env("LINDIFF_MEMORY_SIDE", side).output().expect("the bench runs");
    assert!(out.status.success(), "{side}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn main() {
    if let Ok(side) = std::env::var("LINDIFF_MEMORY_SIDE") {
        return child(&side);
    }
    if !cfg!(target_os = "linux") {
        eprintln!("memory: reads /proc; skipped on this OS");
        return;
    }
    let jax = std::env::var("LINDIFF_PEERS_PYTHON").ok().and_then(|python| {
        let out = Command::new(python)
            .args(["-c", JAX, &N.to_string()])
            .env("OMP_NUM_THREADS", "1")
            .env("OPENBLAS_NUM_THREADS", "1")
            .env("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
            .output()
            .ok()?;
        if !out.status.success() {
            eprintln!("memory: JAX side failed: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        String::from_utf8_lossy(&out.stdout).trim().parse::<usize>().ok()
    });
    let eager = fresh("eager");
    let traced = fresh("traced");
    let faer = fresh("faer");
    let extra = |lines: &[String]| lines[0].parse::<usize>().expect("bytes");
    harness::table(
        &format!("extra peak RSS, SVD loss Σ sᵢ value+grad, n = {N} (MB; ratio = lindiff / jax; a fresh process each)"),
        "lindiff",
        "jax",
    );
    for (name, lines) in [("svd loss value+grad, eager", &eager), ("svd loss value+grad, traced", &traced)] {
        let ours = extra(lines);
        let (theirs, ratio) = jax.map_or((f64::NAN, f64::NAN), |j| (mb(j), ours as f64 / j as f64));
        println!("{:<36} {:>6} {:>12.1} {:>12.1} {:>8.3}", name, N, mb(ours), theirs, ratio);
    }
    println!();
    println!(
        "The forward alone, faer's thin SVD called directly: {:.1} MB extra. One n×n f64 matrix is {:.1} MB. \
         The traced program's plan (`Compiled::peak_bytes`, `live_at_peak`):",
        mb(extra(&faer)),
        mb(N * N * 8)
    );
    for line in &traced[1..] {
        println!("{line}");
    }
}
