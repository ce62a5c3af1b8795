//! The CUDA provider's checks (lindiff-cuda).
//!
//! * `test()` (part of `cargo xtask test`, before the workspace tests):
//!   installs `g++` when missing (a lindiff-cuda unit test type-checks the
//!   NVRTC kernel source as host C++), `cargo check`s the conformance suites
//!   with `--no-default-features --features cuda` (the `cuda` arm of
//!   `providers!`, the `CudaStaged` harness, the `cuda_conformance` binary;
//!   no OpenBLAS), runs the harness's unit tests (`--lib`: the Unsupported
//!   skip rule, the budgets), checks the README table's cuda column
//!   against `lindiff_cuda::ops::runs` (`--test readme_table`), runs one
//!   small suite's `cuda` arm (`ad_cholesky -- ::cuda --nocapture`:
//!   without a GPU it must pass `1 passed` printing
//!   `skipped: …`, and fail under `LINDIFF_REQUIRE_CUDA=1` naming why; with
//!   one it runs), runs `host-cuda/device-check-test.sh` (the device check's
//!   `run` path end to end with fake test binaries that print what the real
//!   ones print, ~1 s), and runs the timing example, which must print
//!   `skipped: …` cleanly without a GPU. Debug builds, like the workspace
//!   tests, whose dependency builds they share (only lindiff-tests itself is
//!   built again, with the `cuda` feature). lindiff-cuda itself is built and
//!   its unit tests run by the workspace tests. A few seconds when cached;
//!   the first build of lindiff-tests with `cuda` takes minutes.
//! * `cuda-check`: `host-cuda/device-check.sh build` — the stripped release
//!   test binaries and timing binary in `.device/`, which
//!   `bash .device/device-check.sh run` runs on a machine with an NVIDIA GPU.

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
    // The README's op table: its cuda column against lindiff-cuda's own
    // table of what runs where (`cuda_column_matches_lindiff_cuda`).
    run("cargo", &[&["test"], &cuda_tests[..], &["--test", "readme_table"]].concat())?;
    // One small suite binary on the cuda arm: the printed skip path (or,
    // on a machine with a GPU, the real run).
    let args = [&["test", "-q"], &cuda_tests[..], &["--test", "ad_cholesky", "--", "::cuda", "--nocapture"]]
        .concat();
    eprintln!("\n==> cargo {}", args.join(" "));
    let out = cargo_output(&args, None)?;
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    // "cuda: N device calls" is printed only when the suite ran on a GPU.
    let gpu = text.contains(" device calls in ");
    if !out.status.success()
        || !text.contains("test result: ok. 1 passed")
        || !(gpu || text.contains("skipped: "))
    {
        return Err(format!(
            "the cuda arm of ad_cholesky must pass 1 test and print `skipped: …` without a GPU ({}): {text}",
            out.status
        ));
    }
    if !gpu {
        // The negative case: the device check's LINDIFF_REQUIRE_CUDA=1 turns
        // the skip into a failure naming why.
        eprintln!("\n==> LINDIFF_REQUIRE_CUDA=1 cargo {}", args.join(" "));
        let out = cargo_output(&args, Some(("LINDIFF_REQUIRE_CUDA", "1")))?;
        let both =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if out.status.success()
            || !both.contains("LINDIFF_REQUIRE_CUDA=1 but the CUDA provider is unavailable")
        {
            return Err(format!(
                "with LINDIFF_REQUIRE_CUDA=1 and no GPU the cuda arm of ad_cholesky must fail with \
                 \"LINDIFF_REQUIRE_CUDA=1 but the CUDA provider is unavailable\" ({}): {both}",
                out.status
            ));
        }
        eprintln!("LINDIFF_REQUIRE_CUDA=1: failed as it must, naming why");
    }
    eprintln!("cuda arm of ad_cholesky: {}", if gpu { "ran on a GPU" } else { "printed its skip (no GPU)" });
    // The device check's `run` path end to end, with fake binaries standing in
    // for the GPU test binaries (no GPU needed, ~1 s).
    run("bash", &["host-cuda/device-check-test.sh"])?;
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

/// `cargo ARGS` with its output captured, with one extra environment variable.
fn cargo_output(args: &[&str], env: Option<(&str, &str)>) -> Result<std::process::Output, String> {
    let mut cmd = Command::new("cargo");
    cmd.args(args);
    if let Some((k, v)) = env {
        cmd.env(k, v);
    }
    cmd.output().map_err(|e| format!("cannot start cargo test: {e}"))
}

/// `cargo xtask cuda-check`: the build half of the device check.
pub fn check() -> Step {
    run("bash", &["host-cuda/device-check.sh", "build"])
}
