//! lindiff's task runner: `cargo xtask <task>`.
//!
//! * `test` — everything CI checks: formatting, clippy `-D warnings`, the
//!   workspace tests, the `no_std` builds of the core for Cortex-M
//!   (`thumbv7em-none-eabihf`) and the browser (`wasm32-unknown-unknown`), and
//!   lindiff-cpu without `std` (f32 only) for Cortex-M. Installs the rustup
//!   targets and components it needs when missing.
//! * `bench` — side-by-side ratios: lindiff-cpu vs faer called directly,
//!   lindiff-blas vs the same raw LAPACK calls, and host-cpu vs host-blas;
//!   then every overhead row as the median over fresh processes (`bench.rs`).
//!
//! `test` installs Debian's `libopenblas-dev` when it is missing (lindiff-blas
//! links the system OpenBLAS).
//! * `embedded` — the Cortex-M firmware under QEMU (`embedded.rs`); part of `test`.
//! * `demo` — builds the wasm package and serves the browser demo (`web.rs`).
//! * `browser` — the demo in Chromium against native values; part of `test`.

mod bench;
mod cuda;
mod embedded;
mod nvrtc;
mod web;

use std::process::{Command, ExitCode};
use std::time::Instant;

/// Cross targets the no_std crates must build for.
const CROSS_TARGETS: &[&str] = &["thumbv7em-none-eabihf", "wasm32-unknown-unknown"];
/// rustup components the checks use.
const COMPONENTS: &[&str] = &["rustfmt", "clippy"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("bench") => bench::bench(),
        Some("embedded") => embedded::run(),
        Some("demo") => web::demo(),
        Some("browser") => web::browser(),
        Some("node") => web::node_tests(),
        Some("cuda-check") => cuda::check(),
        Some("nvrtc") => nvrtc::test(),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\ntasks:\n  test      formatting, clippy, all tests, no_std cross builds, QEMU, browser\n  bench     lindiff vs faer and vs raw LAPACK, side by side\n  embedded  Cortex-M firmware under QEMU (no heap), sizes\n  demo      build the wasm, serve the browser demo on 127.0.0.1, print the URL\n  browser   the demo in Chromium against native values (also run by test)\n  node      the wasm API under node: wasm-bindgen tests, the built package (also run by test)\n  cuda-check  build the CUDA device-check binaries into .device/ and print the GPU run call\n  nvrtc     fetch NVRTC 13 (PyPI wheel, cached) and compile the CUDA kernels with it (also run by test)"
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
fn ensure_openblas() -> Step {
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
    timed("clippy", &|| run("cargo", &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))?;
    timed("tests", &|| run("cargo", &["test", "--workspace", "--no-fail-fast"]))?;
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
                "f32",
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
