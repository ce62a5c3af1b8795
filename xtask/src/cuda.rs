//! The CUDA provider's checks (lindiff-cuda, issue 9).
//!
//! * `test()` (part of `cargo xtask test`, before the workspace tests):
//!   installs `g++` when missing (a lindiff-cuda unit test type-checks the
//!   NVRTC kernel source as host C++), `cargo check`s the conformance suites
//!   with `--no-default-features --features cuda` (the `cuda` arm of
//!   `providers!`, the `CudaStaged` harness, the `cuda_conformance` binary;
//!   no OpenBLAS), runs the harness's unit tests (`--lib`: the Unsupported
//!   skip rule) and one small suite's `cuda` arm (`ad_cholesky -- ::cuda
//!   --show-output`: without a GPU it must print `skipped: …` and pass;
//!   with one it runs), and runs the timing example, which must print
//!   `skipped: …` cleanly without a GPU. Debug builds, like the workspace
//!   tests, whose dependency builds they share (only lindiff-tests itself is
//!   built again, with the `cuda` feature). lindiff-cuda itself is built and
//!   its unit tests run by the workspace tests. About a minute when cached.
//! * `cuda-check`: `host-cuda/device-check.sh build` — the stripped release
//!   test binary and timing binary in `.device/`, and the `run` tool call for
//!   a GPU session.

use std::process::Command;

use crate::{run, Step};

/// `g++` for the kernel-source check, from apt when missing.
fn ensure_gpp() -> Step {
    if Command::new("g++").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Ok(());
    }
    crate::apt_get(&["update"], "g++")?;
    crate::apt_get(&["install", "-y", "--no-install-recommends", "g++"], "g++")
}

/// The cheap CUDA checks of `cargo xtask test` (no GPU needed).
pub fn test() -> Step {
    ensure_gpp()?;
    let cuda_tests = ["-p", "lindiff-tests", "--no-default-features", "--features", "cuda"];
    run("cargo", &[&["check"], &cuda_tests[..], &["--tests"]].concat())?;
    run("cargo", &[&["test"], &cuda_tests[..], &["--lib"]].concat())?;
    // One small suite binary on the cuda arm: the printed skip path (or,
    // on a machine with a GPU, the real run).
    let args =
        [&["test", "-q"], &cuda_tests[..], &["--test", "ad_cholesky", "--", "::cuda", "--show-output"]]
            .concat();
    eprintln!("\n==> cargo {}", args.join(" "));
    let out =
        Command::new("cargo").args(&args).output().map_err(|e| format!("cannot start cargo test: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    let gpu = !text.contains("skipped: ");
    if !out.status.success() || !text.contains("test result: ok.") {
        return Err(format!("the cuda arm of ad_cholesky failed ({}): {text}", out.status));
    }
    eprintln!("cuda arm of ad_cholesky: {}", if gpu { "ran on a GPU" } else { "printed its skip (no GPU)" });
    let out = Command::new("cargo")
        .args(["run", "-q", "-p", "lindiff-cuda", "--example", "cuda_timing", "--", "--quick"])
        .output()
        .map_err(|e| format!("cannot start the timing example: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("\n==> cargo run -p lindiff-cuda --example cuda_timing -- --quick\n{text}");
    if !out.status.success() || !(text.starts_with("skipped: ") || text.starts_with("device: ")) {
        return Err(format!("the CUDA timing example failed ({}): {text}", out.status));
    }
    Ok(())
}

/// `cargo xtask cuda-check`: the build half of the device check.
pub fn check() -> Step {
    run("bash", &["host-cuda/device-check.sh", "build"])
}
