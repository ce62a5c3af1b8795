//! lindiff's task runner: `cargo xtask <task>`.
//!
//! * `test` — everything CI checks: formatting, clippy `-D warnings`, the
//!   tests of every workspace member (host-blas and host-cuda, which a plain
//!   `cargo test` leaves out, and the tests crate's `blas` arm; the fuzz
//!   suite's 10 000 calls per provider among them), `workspace_overflow`
//!   again in release, the core's unit tests under Miri (`miri` runs the
//!   doctests and host-cpu's kernels as well), the CUDA
//!   compile checks, the `no_std` builds of the core for Cortex-M
//!   (`thumbv7em-none-eabihf`) and the browser (`wasm32-unknown-unknown`),
//!   lindiff-cpu without `std` (f32 only) for Cortex-M, the firmware under
//!   QEMU and the wasm package under node and Chromium. Installs the rustup
//!   targets and components it needs when missing.
//! * `bench` — side-by-side ratios: lindiff-cpu vs faer called directly,
//!   lindiff-blas vs the same raw LAPACK calls, and host-cpu vs host-blas;
//!   then every overhead row as the median over fresh processes; writes
//!   docs/benchmarks.md. `--quick`: one process, shorter rows; `--peers`:
//!   numpy, scipy and JAX too (`bench.rs`);
//!   `bench singular` prints only what solve's singularity tests cost.
//! * `fuzz N SEED` — the fuzz suite in release, N calls per provider from
//!   SEED, printing its reports (`fuzz.rs`).
//! * `miri` — the core's unit tests and doctests and host-cpu's kernels on
//!   small fuzz cases under Miri, on a pinned nightly (`miri.rs`, which
//!   lists what Miri leaves out).
//!
//! `test` installs Debian's `libopenblas-dev` when it is missing (lindiff-blas
//! links the system OpenBLAS).
//! * `embedded` — the Cortex-M firmware under QEMU (`embedded.rs`); part of `test`.
//! * `demo` — builds the wasm package and serves the browser demo (`web.rs`).
//! * `browser` — the demo in Chromium against native values; part of `test`.
//! * `citations` — every cited file and section exists, nothing cites notes
//!   outside the tree or issue numbers (`citations.rs`); part of `test`.
//! * `modules` — no import cycle between a crate's top-level modules
//!   (`modules.rs`); part of `test`.
//! * `machine-code` — no legacy-SSE instruction inside a function that uses
//!   AVX registers, in the release build of every kernel
//!   (`machine_code.rs`); part of `test`.
//! * `sweep-ties` — the spectral near-tie sweep's table (the test runs in `test`).

mod bench;
mod citations;
mod cuda;
mod embedded;
mod fuzz;
mod machine_code;
mod miri;
mod modules;
mod nvrtc;
mod web;

use std::process::{Command, ExitCode};
use std::time::Instant;

/// Cross targets the no_std crates must build for.
const CROSS_TARGETS: &[&str] = &["thumbv7em-none-eabihf", "wasm32-unknown-unknown"];
/// rustup components the checks use.
const COMPONENTS: &[&str] = &["rustfmt", "clippy"];
/// The tests crate's LAPACK arm (`blas::` tests, `agreement.rs`): off in a
/// plain `cargo test`, on in `cargo xtask test`, which also builds and tests
/// every workspace member (host-blas and host-cuda are not default members).
const BLAS_TESTS: &str = "lindiff-tests/blas";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("bench") => bench::bench(&args[1..]),
        Some("fuzz") => fuzz::fuzz(&args[1..]),
        Some("miri") => miri::miri(),
        Some("embedded") => embedded::run(),
        Some("demo") => web::demo(),
        Some("browser") => web::browser(),
        Some("node") => web::node_tests(),
        Some("cuda-check") => cuda::check(),
        Some("nvrtc") => nvrtc::test(),
        Some("citations") => citations::check(),
        Some("modules") => modules::check(),
        Some("machine-code") => machine_code::check(),
        Some("sweep-ties") => sweep_ties(),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\ntasks:\n  test      formatting, clippy, all tests, no_std cross builds, QEMU, browser\n  bench     lindiff vs faer and vs raw LAPACK, side by side; writes docs/benchmarks.md [--quick] [--peers: numpy, scipy, JAX] (`bench singular`: only the cost of solve's singularity tests)\n  fuzz N SEED  the fuzz suite in release, N calls per provider (cpu, blas) from SEED\n  miri      the core's tests and host-cpu's kernels (small fuzz cases) under Miri, pinned nightly\n  embedded  Cortex-M firmware under QEMU (no heap), sizes\n  demo      build the wasm, serve the browser demo on 127.0.0.1, print the URL\n  browser   the demo in Chromium against native values (also run by test)\n  node      the wasm API under node: wasm-bindgen tests, the built package (also run by test)\n  cuda-check  build the CUDA device-check binaries into .device/ (run them on a GPU machine)\n  nvrtc     fetch NVRTC 13 (PyPI wheel, cached) and compile the CUDA kernels with it (also run by test)\n  citations every cited file and section exists; no outside notes or issue numbers (also run by test)\n  modules   no import cycles between a crate's top-level modules (also run by test)\n  machine-code  no legacy-SSE instruction inside AVX code in the release kernels (also run by test)\n  sweep-ties  spectral gradients at gaps 0, 1e-16 … 1e-4 against closed forms: the table (also run by test)"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) type Step = Result<(), String>;

/// The near-tie sweep (`tests/tests/tie_sweep.rs`) in release, printing its
/// table: each point right to 1e-7 or a typed error.
fn sweep_ties() -> Step {
    run(
        "cargo",
        &[
            "test",
            "--release",
            "-p",
            "lindiff-tests",
            "--test",
            "tie_sweep",
            "--",
            "--nocapture",
            "--test-threads",
            "1",
        ],
    )
}

/// The repository root (xtask sits in it): from `CARGO_MANIFEST_DIR` as
/// `cargo run` sets it when xtask starts, so that a binary built in another
/// checkout sharing the target directory (cargo may reuse it) works on this
/// one; the build-time value only outside `cargo run`.
pub(crate) fn repo_root() -> std::path::PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")), std::path::PathBuf::from);
    manifest.parent().expect("xtask sits in the workspace").to_path_buf()
}

/// Runs a command, echoing it; fails with the command line on a non-zero exit.
pub(crate) fn run(program: &str, args: &[&str]) -> Step {
    let line = format!("{program} {}", args.join(" "));
    eprintln!("\n==> {line}");
    let status =
        Command::new(program).args(args).status().map_err(|e| format!("cannot start `{line}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{line}` failed ({status})"))
    }
}

/// Output of a command, or an empty string if it cannot run.
fn capture(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// Where Debian's `libopenblas-dev` puts the library lindiff-blas links.
const OPENBLAS: &str = "/usr/lib/x86_64-linux-gnu/libopenblas.so";

/// Installs Debian's `libopenblas-dev` (lindiff-blas links the system
/// OpenBLAS) when it is missing: `apt-get` as root, through `sudo` otherwise.
pub(crate) fn ensure_openblas() -> Step {
    let installed = std::path::Path::new(OPENBLAS).exists()
        || Command::new("dpkg").args(["-s", "libopenblas-dev"]).output().is_ok_and(|o| o.status.success());
    if installed {
        return Ok(());
    }
    apt_get(&["update"], "libopenblas-dev")?;
    apt_get(&["install", "-y", "libopenblas-dev"], "libopenblas-dev")
}

/// `apt-get ARGS` as root, through `sudo -n` otherwise; `what` names the
/// missing packages for the error when neither is available.
pub(crate) fn apt_get(args: &[&str], what: &str) -> Step {
    if capture("id", &["-u"]).trim() == "0" {
        return run("apt-get", args);
    }
    if Command::new("sudo").arg("-n").arg("true").status().is_ok_and(|s| s.success()) {
        return run("sudo", &[&["apt-get"], args].concat());
    }
    Err(format!("{what} is missing and neither root nor sudo is available: install it"))
}

/// Adds the rustup targets and components the checks need, if missing, and
/// the system OpenBLAS.
fn ensure_toolchain() -> Step {
    ensure_openblas()?;
    let installed = capture("rustup", &["target", "list", "--installed"]);
    for target in CROSS_TARGETS {
        if !installed.lines().any(|l| l.trim() == *target) {
            run("rustup", &["target", "add", target])?;
        }
    }
    let components = capture("rustup", &["component", "list", "--installed"]);
    for component in COMPONENTS {
        if !components.lines().any(|l| l.starts_with(component)) {
            run("rustup", &["component", "add", component])?;
        }
    }
    Ok(())
}

fn test() -> Step {
    let started = Instant::now();
    let mut timings: Vec<(&str, f64)> = Vec::new();
    let mut timed = |name: &'static str, step: &dyn Fn() -> Step| -> Step {
        let t = Instant::now();
        step()?;
        timings.push((name, t.elapsed().as_secs_f64()));
        Ok(())
    };
    timed("toolchain", &ensure_toolchain)?;
    timed("cuda (no GPU)", &cuda::test)?;
    timed("nvrtc 13 compile", &nvrtc::test)?;
    timed("rustfmt", &|| run("cargo", &["fmt", "--all", "--", "--check"]))?;
    timed("citations", &citations::check)?;
    timed("modules", &modules::check)?;
    timed("clippy", &|| {
        run(
            "cargo",
            &["clippy", "--workspace", "--all-targets", "--features", BLAS_TESTS, "--", "-D", "warnings"],
        )
    })?;
    timed("tests", &|| run("cargo", &["test", "--workspace", "--no-fail-fast", "--features", BLAS_TESTS]))?;
    // The overflow checks in release too (no overflow checks there: a
    // wrapped size must still give `Overflow`, not a panic or a tiny size).
    timed("overflow release", &|| {
        run(
            "cargo",
            &[
                "test",
                "--release",
                "-p",
                "lindiff-tests",
                "--features",
                "blas",
                "--test",
                "workspace_overflow",
            ],
        )
    })?;
    timed("machine code", &machine_code::check)?;
    timed("miri core units", &miri::core_unit)?;
    timed("rustdoc", &|| {
        // Deny rustdoc warnings (broken links, bad markup) in our crates.
        let status = Command::new("cargo")
            .args(["doc", "--no-deps", "--workspace", "--exclude", "xtask"])
            .env("RUSTDOCFLAGS", "-D warnings")
            .status()
            .map_err(|e| format!("cannot start cargo doc: {e}"))?;
        eprintln!("\n==> RUSTDOCFLAGS=-D warnings cargo doc --no-deps --workspace --exclude xtask");
        status.success().then_some(()).ok_or_else(|| format!("cargo doc failed ({status})"))
    })?;
    for target in CROSS_TARGETS {
        timed("core no_std", &|| {
            run("cargo", &["build", "-p", "lindiff-core", "--no-default-features", "--target", target])
        })?;
    }
    timed("cpu no_std f32", &|| {
        run(
            "cargo",
            &[
                "build",
                "-p",
                "lindiff-cpu",
                "--no-default-features",
                "--features",
                // The matrix functions' kernels (exp, log, sqrt, the Schur form)
                // take their logarithms and roots from lindiff's RealScalar.
                "f32,op-matfun",
                "--target",
                "thumbv7em-none-eabihf",
            ],
        )
    })?;
    timed("embedded", &embedded::run)?;
    timed("wasm node + browser", &web::test)?;
    eprintln!("\nxtask test: all green in {:.0} s", started.elapsed().as_secs_f64());
    for (name, secs) in timings {
        eprintln!("  {name:<14} {secs:>7.1} s");
    }
    Ok(())
}
