//! `cargo xtask bench [--quick] [--peers]`: the side-by-side benches, then
//! (without `--quick`) their overhead rows again in fresh processes,
//! summarised as the median ratio per row; writes every table, with the
//! machine it ran on, to docs/benchmarks.md.
//!
//! Why several processes: at n = 32 and 128 a call takes 1–100 µs, and
//! where the allocator and the kernel place a run's buffers (ASLR, heap
//! layout) moves one side of a row by a few percent against the other. The
//! same binary, started five times in a row, read lindiff-cpu's prepared
//! Cholesky at 32 as 1.008, 1.024, 1.031, 1.054 and 1.085 × faer, each
//! process's own figure stable to ±1 %: one run's ratio is one draw of the
//! placement. Every process still measures both sides of a row side by
//! side; the summary is the median (and the range) of those per-process
//! ratios. 512 is summarised too: a call takes 1–70 ms, and two processes
//! of the same build read lindiff-cpu's direct SVD at 512 as 1.057 and
//! 1.010 × faer. Each row alternates the sides for at least 0.4 s (the
//! benches' `harness::side_by_side`), so that a 1 ms call at 512 is sampled
//! enough.
//!
//! `--quick` runs each bench once, in one process, with half the time per
//! row, and skips the fresh-process pass: the whole run fits in
//! about ten minutes on a 2-core machine, at the price of one placement
//! draw per row. `--peers` adds host-cpu/benches/peers.rs (numpy, scipy,
//! JAX) and host-cpu/benches/memory.rs (peak memory against JAX) when a
//! Python with them is found (`$LINDIFF_PEERS_PYTHON`, else
//! [`DEFAULT_PYTHON`]); without one it prints how to install it and skips.

use crate::{repo_root, run, Step};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Processes per bench for the summary. Nine, not five: with five, the
/// median of a 128 or 512 row moved by ±2 % between two runs of the same
/// build (the processes' own ratios spread over 0.89–1.06), as much as the
/// targets' margin, so which of those rows read above 1.02 was a draw
/// from one run to the next. The median of nine spreads about √(5/9) ≈ 3/4
/// as much as the median of five; it costs ~3 more minutes.
const PROCESSES: usize = 9;
/// Orders the repeated processes measure (the benches read this variable).
const ORDERS: &str = "32,128,512";
/// Where `--peers` looks for Python when `LINDIFF_PEERS_PYTHON` is unset.
const DEFAULT_PYTHON: &str = "/tmp/lindiff-peers/bin/python";
/// How to make [`DEFAULT_PYTHON`].
const INSTALL: &str =
    "python3 -m venv /tmp/lindiff-peers && /tmp/lindiff-peers/bin/pip install numpy scipy jax mpmath";
/// A load average above this during the run is reported as a shared machine.
const SHARED_LOAD: f64 = 1.5;

/// The cost of the LU solves' singularity tests (`host-cpu/benches/singular.rs`):
/// `cargo xtask bench singular`, raw vs pivot ratio vs condition estimate.
const SINGULAR: &[&str] = &["bench", "-p", "lindiff-cpu", "--bench", "singular"];

/// One `## title` table of a bench's output.
struct Group {
    title: String,
    command: String,
    ours: String,
    theirs: String,
    rows: Vec<Row>,
    /// Lines that are not rows (the AD bench's tables, cross-checks).
    notes: Vec<String>,
}

struct Row {
    op: String,
    n: usize,
    ours: f64,
    theirs: f64,
    ratio: f64,
    /// Median and range of the fresh processes' ratios.
    processes: Option<(f64, f64, f64)>,
}

pub(crate) fn bench(args: &[String]) -> Step {
    let (mut quick, mut peers) = (false, false);
    for a in args {
        match a.as_str() {
            "--quick" => quick = true,
            "--peers" => peers = true,
            "singular" => return run("cargo", SINGULAR),
            other => return Err(format!("bench: unknown option {other} (options: --quick, --peers)")),
        }
    }
    let load_start = loadavg();
    let started = std::time::Instant::now();
    let env: &[(&str, &str)] = if quick { &[("LINDIFF_BENCH_QUICK", "1")] } else { &[] };
    let cpu = ["bench", "-p", "lindiff-cpu", "--features", "threads", "--bench", "overhead"];
    let ad = ["bench", "-p", "lindiff-cpu", "--bench", "ad"];
    let blas = ["bench", "-p", "lindiff-blas", "--bench", "overhead"];
    let mut groups = Vec::new();
    for args in [&cpu[..], &ad, &blas] {
        groups.extend(stream(args, env)?);
    }
    let mut peer_line = format!("not run (`cargo xtask bench --peers`; needs `{INSTALL}`)");
    if peers {
        match peers_python() {
            Some(python) => {
                let mut with = env.to_vec();
                with.push(("LINDIFF_PEERS_PYTHON", &python));
                let peers_args = ["bench", "-p", "lindiff-cpu", "--features", "threads", "--bench", "peers"];
                groups.extend(stream(&peers_args, &with)?);
                let memory_args = ["bench", "-p", "lindiff-cpu", "--bench", "memory"];
                groups.extend(stream(&memory_args, &with)?);
                peer_line = peer_versions(&python);
            }
            None => eprintln!(
                "bench --peers: no Python with numpy, scipy, jax and mpmath at $LINDIFF_PEERS_PYTHON or {DEFAULT_PYTHON}; \
                 skipped. Install: {INSTALL}"
            ),
        }
    }
    if !quick {
        for args in [&cpu[..], &blas] {
            summary(args, &mut groups)?;
        }
    }
    let load_end = loadavg();
    let minutes = started.elapsed().as_secs_f64() / 60.0;
    let doc = render(&groups, quick, &peer_line, &load_start, &load_end, minutes);
    let path = repo_root().join("docs/benchmarks.md");
    std::fs::write(&path, doc).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("\nwrote {}", path.display());
    Ok(())
}

/// Runs `cargo <args>` with `env`, echoing its output, and parses its tables.
fn stream(args: &[&str], env: &[(&str, &str)]) -> Result<Vec<Group>, String> {
    let vars: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    let line = format!("{}cargo {}", vars.concat(), args.join(" "));
    eprintln!("\n==> {line}");
    let mut child = Command::new("cargo")
        .args(args)
        .envs(env.iter().copied())
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("{line}: {e}"))?;
    let mut out = String::new();
    for l in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let l = l.map_err(|e| format!("{line}: {e}"))?;
        println!("{l}");
        out.push_str(&l);
        out.push('\n');
    }
    let status = child.wait().map_err(|e| format!("{line}: {e}"))?;
    if !status.success() {
        return Err(format!("`{line}` failed ({status})"));
    }
    Ok(parse(&out, &line))
}

/// A bench's `## title` tables.
fn parse(out: &str, command: &str) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for line in out.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            groups.push(Group {
                title: title.trim().into(),
                command: command.into(),
                ours: "lindiff".into(),
                theirs: "peer".into(),
                rows: Vec::new(),
                notes: Vec::new(),
            });
            continue;
        }
        let Some(g) = groups.last_mut() else { continue };
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let Some(((op, n), ours, theirs, ratio)) = parse_full_row(line) {
            g.rows.push(Row { op, n, ours, theirs, ratio, processes: None });
        } else if fields.first() == Some(&"op") && fields.len() >= 5 {
            g.ours = fields[2].into();
            g.theirs = fields[3..fields.len() - 1].join(" ");
        } else if !line.trim().is_empty() {
            g.notes.push(line.into());
        }
    }
    groups
}

/// Runs `cargo <args>` in [`PROCESSES`] fresh processes on [`ORDERS`] and
/// records each row's median ratio and range in `groups`.
fn summary(args: &[&str], groups: &mut [Group]) -> Step {
    let mut ratios: Vec<((String, String, usize), Vec<f64>)> = Vec::new();
    let line = format!("LINDIFF_BENCH_SIZES={ORDERS} cargo {}", args.join(" "));
    for k in 1..=PROCESSES {
        eprintln!("\n==> {line}   ({k} of {PROCESSES})");
        let out = Command::new("cargo")
            .args(args)
            .env("LINDIFF_BENCH_SIZES", ORDERS)
            .current_dir(repo_root())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("{line}: {e}"))?;
        if !out.status.success() {
            return Err(format!("{line}: {}", out.status));
        }
        for g in parse(&String::from_utf8_lossy(&out.stdout), &line) {
            for r in g.rows {
                let key = (g.title.clone(), r.op, r.n);
                match ratios.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, v)) => v.push(r.ratio),
                    None => ratios.push((key, vec![r.ratio])),
                }
            }
        }
    }
    for ((title, op, n), mut v) in ratios {
        v.sort_by(f64::total_cmp);
        let spread = (v[v.len() / 2], v[0], v[v.len() - 1]);
        let row = groups
            .iter_mut()
            .filter(|g| g.title == title)
            .flat_map(|g| g.rows.iter_mut())
            .find(|r| r.op == op && r.n == n);
        if let Some(r) = row {
            r.processes = Some(spread);
        }
    }
    Ok(())
}

/// A bench table row `op… n ours theirs ratio` as ((op, n), ratio).
#[cfg(test)]
fn parse_row(line: &str) -> Option<((String, usize), f64)> {
    parse_full_row(line).map(|(key, _, _, ratio)| (key, ratio))
}

/// A bench table row `op… n ours theirs ratio`.
fn parse_full_row(line: &str) -> Option<((String, usize), f64, f64, f64)> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let [label @ .., n, ours, theirs, ratio] = fields.as_slice() else {
        return None;
    };
    let n = n.parse().ok()?;
    let ours = ours.parse::<f64>().ok()?;
    let theirs = theirs.parse::<f64>().ok()?;
    let ratio = ratio.parse().ok()?;
    (!label.is_empty()).then(|| ((label.join(" "), n), ours, theirs, ratio))
}

/// `$LINDIFF_PEERS_PYTHON`, else [`DEFAULT_PYTHON`], when it imports
/// numpy, scipy, jax and mpmath (the accuracy table's reference).
fn peers_python() -> Option<String> {
    let python = std::env::var("LINDIFF_PEERS_PYTHON").unwrap_or_else(|_| DEFAULT_PYTHON.into());
    let ok = Command::new(&python)
        .args(["-c", "import numpy, scipy, jax, mpmath"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(python)
}

/// "numpy x, scipy y, jax z (Python w)".
fn peer_versions(python: &str) -> String {
    let script =
        "import sys, numpy, scipy, jax; print(f'numpy {numpy.__version__}, scipy {scipy.__version__}, \
                  jax {jax.__version__} (Python {sys.version.split()[0]})')";
    let out = Command::new(python).args(["-c", script]).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default()
}

/// The 1-, 5- and 15-minute load averages.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// The SIMD features this machine reports at run time.
fn simd() -> String {
    #[cfg(target_arch = "x86_64")]
    {
        let mut on = Vec::new();
        macro_rules! probe {
            ($($f:tt),*) => {$(
                if std::arch::is_x86_feature_detected!($f) {
                    on.push($f);
                }
            )*};
        }
        probe!("sse4.2", "avx", "avx2", "fma", "avx512f", "avx512vl", "avx512dq", "avx512bw");
        on.join(", ")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        format!("(not probed on {})", std::env::consts::ARCH)
    }
}

fn first_line_with(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let value = line.split_once(['=', ':'])?.1;
    Some(value.trim().trim_matches('"').to_string())
}

fn output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The faer version Cargo.lock pins.
fn faer_version() -> String {
    let lock = std::fs::read_to_string(repo_root().join("Cargo.lock")).unwrap_or_default();
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l == "name = \"faer\"" {
            if let Some(v) = lines.next().and_then(|v| v.strip_prefix("version = ")) {
                return v.trim_matches('"').to_string();
            }
        }
    }
    "unknown".into()
}

fn max_load(load: &str) -> f64 {
    load.split_whitespace().filter_map(|x| x.parse::<f64>().ok()).fold(0.0, f64::max)
}

/// docs/benchmarks.md.
fn render(
    groups: &[Group],
    quick: bool,
    peers: &str,
    load_start: &str,
    load_end: &str,
    minutes: f64,
) -> String {
    let mut d = String::new();
    let cpu = first_line_with("/proc/cpuinfo", "model name").unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let os = first_line_with("/etc/os-release", "PRETTY_NAME").unwrap_or_else(|| std::env::consts::OS.into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mode = if quick {
        "`--quick`: each bench once, in one process, half the time per row; no fresh-process pass".to_string()
    } else {
        format!(
            "full: each bench once, then lindiff-cpu's and lindiff-blas's overhead rows at n = {ORDERS} again in \
             {PROCESSES} fresh processes (column \"processes\": the median of their ratios and its range)"
        )
    };
    let shared = max_load(load_start).max(max_load(load_end)) > SHARED_LOAD;
    d.push_str("# Benchmarks\n\n");
    d.push_str(
        "Generated by `cargo xtask bench` (xtask/src/bench.rs); rerun it rather than edit this file. Every \
         ratio compares two sides measured in the same process, alternated round by round (a round is a \
         block of calls of one side, timed call by call, its time the fastest call), so that load which \
         comes and goes on the machine hits both sides alike. A row's times are the medians over its \
         rounds and its ratio the median of the rounds' ratios; below 1 lindiff is faster. For n ≤ 32 the \
         column Δ is (ratio − 1) × the other side's time, in ns: per call, what lindiff adds (checks, \
         conventions, dispatch) where both sides run the same kernel. Where lindiff runs its own kernel \
         (lindiff-cpu's real Cholesky up to n = 132, LU up to 48, QR up to 96, its 8×8 SVD, the \
         tridiagonal step of real eigh from n = 128 and the bidiagonal step of the real SVD from \
         min(m, n) = 128) or the other side is another library, Δ compares \
         two implementations and can be negative. Rows marked (plan) call lindiff through a call \
         planned once over caller buffers instead of the direct face. Absolute times depend on the machine \
         and its load; read the ratios.\n\nOther CPUs: those kernel choices are fixed size thresholds, not \
         run-time CPU features, and were measured on this machine only. lindiff's own kernels use at most \
         AVX2 (a run-time copy beside the baseline one), while faer's matrix products use AVX-512 \
         where the CPU has it, so on a CPU without AVX-512 faer's kernels lose speed and lindiff's own \
         do not: where lindiff's own kernel wins here, it wins there. \
         The stall that made one Xeon 9× slower than an EPYC on the same code, legacy-SSE instructions \
         inside AVX code, is checked in the machine code by `cargo xtask machine-code` (part of \
         `cargo xtask test`), not by timings.\n\n",
    );
    d.push_str(&format!(
        "- Command: `cargo xtask bench{}{}`, mode: {mode}\n",
        if peers.starts_with("not run") { "" } else { " --peers" },
        if quick { " --quick" } else { "" },
    ));
    d.push_str(&format!(
        "- Date: {} (end of the run, which took {minutes:.1} min with the builds)\n",
        output("date", &["-u", "+%Y-%m-%d %H:%M UTC"])
    ));
    d.push_str(&format!("- CPU: {cpu}, {cores} cores\n"));
    d.push_str(&format!("- SIMD detected at run time: {}\n", simd()));
    d.push_str(&format!("- OS: {os}, Linux {}\n", kernel.trim()));
    d.push_str(&format!("- rustc: {}; faer {}\n", output("rustc", &["-V"]), faer_version()));
    d.push_str(&format!("- Peers: {peers}\n"));
    d.push_str(&format!("- loadavg (1, 5, 15 min): {load_start} at the start, {load_end} at the end\n"));
    if shared {
        d.push_str(&format!(
            "\n**The machine was shared during this run** (load average above {SHARED_LOAD}): other work \
             competed for the cores, so rows spread more than on an idle machine; the interleaving keeps \
             the ratios comparable, not exact.\n"
        ));
    }
    d.push_str(&format!(
        "\nPeers (`--peers`): install with `{INSTALL}` (xtask uses `$LINDIFF_PEERS_PYTHON`, else \
         {DEFAULT_PYTHON}). xtask/peers/peers.py runs as a persistent subprocess driven over stdin/stdout, so \
         lindiff's and the peer's rounds alternate one by one; it reads the same inputs, bit for bit, from \
         raw little-endian f64 files the bench writes, and each case's results are cross-checked. One thread \
         each: OMP_NUM_THREADS=1, OPENBLAS_NUM_THREADS=1, MKL_NUM_THREADS=1, \
         XLA_FLAGS=\"--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1\"; JAX is timed after \
         a warm-up call (compilation excluded), each call until `block_until_ready`.\n"
    ));
    for g in groups {
        d.push_str(&format!("\n## {}\n\n`{}`\n\n", g.title, g.command));
        if !g.rows.is_empty() {
            let with_processes = g.rows.iter().any(|r| r.processes.is_some());
            // The unit the title names (time tables in µs or ms, memory in MB).
            let unit = ["µs", "MB"].into_iter().find(|u| g.title.contains(u)).unwrap_or("ms");
            let micro = unit == "µs";
            // Δ, the cost per call in ns, for time tables only.
            let timed = unit != "MB";
            d.push_str(&format!("| case | n | {} ({unit}) | {} ({unit}) | ratio |", g.ours, g.theirs));
            if timed {
                d.push_str(" Δ (ns) |");
            }
            if with_processes {
                d.push_str(&format!(" processes: median ({PROCESSES}), range |"));
            }
            d.push_str(&format!(
                "\n|---|--:|--:|--:|--:|{}{}\n",
                if timed { "--:|" } else { "" },
                if with_processes { "--:|" } else { "" }
            ));
            for r in &g.rows {
                let overhead = if micro && r.n <= 32 {
                    format!("{:.0}", (r.ratio - 1.0) * r.theirs * 1e3)
                } else {
                    String::new()
                };
                d.push_str(&format!(
                    "| {} | {} | {:.3} | {:.3} | {:.3} |",
                    r.op, r.n, r.ours, r.theirs, r.ratio
                ));
                if timed {
                    d.push_str(&format!(" {overhead} |"));
                }
                if with_processes {
                    let cell =
                        r.processes.map_or(String::new(), |(m, lo, hi)| format!("{m:.3} ({lo:.3}–{hi:.3})"));
                    d.push_str(&format!(" {cell} |"));
                }
                d.push('\n');
            }
        }
        // A bench's own markdown table (lines starting with `|`) stays a
        // table; other notes are kept verbatim in a code block.
        let (table, notes): (Vec<&String>, Vec<&String>) = g.notes.iter().partition(|l| l.starts_with('|'));
        if !notes.is_empty() {
            let notes: Vec<&str> = notes.iter().map(|l| l.as_str()).collect();
            d.push_str(&format!("\n```\n{}\n```\n", notes.join("\n")));
        }
        if !table.is_empty() {
            let table: Vec<&str> = table.iter().map(|l| l.as_str()).collect();
            d.push_str(&format!("\n{}\n", table.join("\n")));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::{parse, parse_row};

    #[test]
    fn rows_parse_and_headers_do_not() {
        assert_eq!(
            parse_row("svd (plan)           32        51.20        50.10    1.022"),
            Some((("svd (plan)".into(), 32), 1.022))
        );
        assert_eq!(parse_row("qr 128 1.0 2.0 0.5"), Some((("qr".into(), 128), 0.5)));
        assert_eq!(parse_row("op                    n      lindiff         faer    ratio"), None);
        assert_eq!(parse_row("1 thr 10000 12.0 11.0 1.09"), Some((("1 thr".into(), 10000), 1.09)));
        assert_eq!(parse_row(""), None);
    }

    #[test]
    fn groups_take_their_rows_columns_and_notes() {
        let out = "ignored\n\n## first (µs)\nop n lindiff faer loop ratio\nqr 8 1.5 1.0 1.4\n\n## second\n   n  fwd\n 128 1.0\n";
        let g = parse(out, "cargo bench");
        assert_eq!(g.len(), 2);
        assert_eq!(
            (g[0].title.as_str(), g[0].ours.as_str(), g[0].theirs.as_str()),
            ("first (µs)", "lindiff", "faer loop")
        );
        assert_eq!(g[0].rows.len(), 1);
        assert!(g[0].notes.is_empty());
        assert_eq!(g[1].rows.len(), 0);
        assert_eq!(g[1].notes, ["   n  fwd", " 128 1.0"]);
    }
}
