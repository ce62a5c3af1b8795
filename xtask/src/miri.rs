//! `cargo xtask miri`: lindiff's unsafe code under Miri, on a pinned
//! nightly ([`NIGHTLY`], installed with the `miri` and `rust-src`
//! components when missing), in two jobs:
//!
//! 1. `cargo +NIGHTLY miri test -p lindiff-core --features soft-float`: the
//!    core's unit tests and doctests (the doctests that run a call go
//!    through lindiff-cpu, the core's dev-dependency).
//! 2. `cargo +NIGHTLY miri test -p lindiff-tests --test miri_kernels
//!    --features lindiff-core/soft-float`, with `LINDIFF_MIRI_CASES` =
//!    [`KERNEL_CASES`]: fuzz cases with dims ≤ 3 on host-cpu, through the
//!    direct face, `call::run_into` over caller buffers and the eager
//!    gradient (`tests/tests/miri_kernels.rs`).
//!
//! `soft-float` makes libm use its portable code instead of x86 inline
//! assembly, which Miri cannot run. Isolation stays on; job 2's
//! `MIRIFLAGS=-Zmiri-env-forward=LINDIFF_MIRI_CASES` lets the test read its
//! case count (under isolation a program sees no host variable unless
//! forwarded).
//!
//! Measured on the 2-core development machine (shared, loaded): job 1 in
//! 6.5 min with a cold build (3 min of build, 10 s of unit tests, 3 min
//! for the 47 doctests, each compiled and interpreted), job 2 ~7 min of
//! build the first time and ~2.7 s per case interpreted (200 cases:
//! 9 min; the 40 here: 1.8 min); warm, both jobs take 4.6 min. Cold (as
//! in CI's fresh clone) they pass 10 min — so `cargo xtask test` runs only
//! the core's unit tests under Miri ([`core_unit`]) and the two jobs stay
//! here.
//!
//! What Miri does not check here: faer's SIMD kernels (pulp dispatches at
//! run time, and Miri's x86-64 target reports no AVX2/AVX-512, so faer
//! and gemm run their scalar fallbacks) and lindiff-cpu's own AVX2 copies
//! (`kernels/avx2.rs`), for the same reason; sizes past 3×3, so the
//! blocked and recursive paths that start at larger orders (faer's blocked
//! Cholesky and QR, divide and conquer SVD, lindiff's padded-copy
//! Cholesky); the `threads` feature's rayon batch lanes (the tests run
//! batches serially); lindiff-blas (OpenBLAS is C, out of Miri's reach);
//! lindiff-cuda and the wasm crate; and the other integration suites,
//! too slow interpreted.

use crate::Step;
use std::process::Command;
use std::time::Instant;

/// The nightly Miri runs on: a dated one, so that a new nightly's Miri
/// (stricter checks, a changed `miri setup`) changes nothing until this
/// line does.
pub(crate) const NIGHTLY: &str = "nightly-2026-05-20";

/// Fuzz cases of job 2: ~2 min interpreted.
const KERNEL_CASES: &str = "40";

/// Installs [`NIGHTLY`] with Miri and the standard library's source, when
/// missing, and builds Miri's sysroot.
fn setup() -> Step {
    let toolchain = format!("+{NIGHTLY}");
    let has_miri = Command::new("cargo")
        .args([toolchain.as_str(), "miri", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_miri {
        crate::run(
            "rustup",
            &["toolchain", "install", NIGHTLY, "--component", "miri,rust-src", "--profile", "minimal"],
        )?;
    }
    crate::run("cargo", &[toolchain.as_str(), "miri", "setup"])
}

/// Runs `cargo +NIGHTLY miri <args>` with `envs`, echoing it and its time.
fn miri_job(args: &[&str], envs: &[(&str, &str)]) -> Step {
    let toolchain = format!("+{NIGHTLY}");
    let env_line: String = envs.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    let line = format!("{env_line}cargo {toolchain} miri {}", args.join(" "));
    eprintln!("\n==> {line}");
    let started = Instant::now();
    let status = Command::new("cargo")
        .arg(&toolchain)
        .arg("miri")
        .args(args)
        .env_remove("MIRIFLAGS")
        .envs(envs.iter().copied())
        .status()
        .map_err(|e| format!("cannot start `{line}`: {e}"))?;
    eprintln!("miri: {:.0} s for `{line}`", started.elapsed().as_secs_f64());
    status.success().then_some(()).ok_or_else(|| format!("`{line}` failed ({status})"))
}

/// Job 1: the core's unit tests and doctests.
pub(crate) fn core() -> Step {
    miri_job(&["test", "-p", "lindiff-core", "--features", "soft-float"], &[])
}

/// Job 2: host-cpu's kernels on small fuzz cases.
fn kernels() -> Step {
    miri_job(
        &["test", "-p", "lindiff-tests", "--features", "lindiff-core/soft-float", "--test", "miri_kernels"],
        &[("LINDIFF_MIRI_CASES", KERNEL_CASES), ("MIRIFLAGS", "-Zmiri-env-forward=LINDIFF_MIRI_CASES")],
    )
}

/// `cargo xtask miri`: both jobs.
pub(crate) fn miri() -> Step {
    let started = Instant::now();
    setup()?;
    core()?;
    kernels()?;
    eprintln!("\nxtask miri: both jobs in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The Miri setup and the core's unit tests (no doctests), for
/// `cargo xtask test`: ~3 min with a cold build, seconds warm.
pub(crate) fn core_unit() -> Step {
    setup()?;
    miri_job(&["test", "-p", "lindiff-core", "--features", "soft-float", "--lib"], &[])
}
