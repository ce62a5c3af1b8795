//! `cargo xtask fuzz N SEED`: the fuzz suite (`tests/src/fuzz`, run by
//! `tests/tests/fuzz.rs`) long and in release, on host-cpu and host-blas:
//! `N` calls per provider from seed `SEED`. Prints each provider's report
//! (calls by path and dtype, typed errors by variant, panics, violations);
//! fails on any panic or violation. A violation names its seed and case:
//! `LINDIFF_FUZZ_SEED=SEED LINDIFF_FUZZ_CASE=K cargo test -p lindiff-tests
//! --test fuzz` replays that one case.

use crate::Step;
use std::process::Command;
use std::time::Instant;

/// The cargo arguments of a release fuzz run. (`cargo xtask test` runs the
/// suite's default 10 000 calls per provider in its debug `cargo test`:
/// ~4 s here.)
const ARGS: &[&str] = &[
    "test",
    "--release",
    "-p",
    "lindiff-tests",
    "--features",
    "blas",
    "--test",
    "fuzz",
    "--",
    "--nocapture",
];

/// `cargo xtask fuzz N SEED`.
pub(crate) fn fuzz(args: &[String]) -> Step {
    let usage = "usage: cargo xtask fuzz N SEED   (N calls per provider, N and SEED unsigned integers)";
    let [calls, seed] = args else {
        return Err(usage.into());
    };
    let (Ok(calls), Ok(seed)) = (calls.parse::<u64>(), seed.parse::<u64>()) else {
        return Err(usage.into());
    };
    crate::ensure_openblas()?;
    run_release(calls, seed)
}

/// Runs the fuzz test binary in release with `calls` calls per provider
/// from `seed`, echoing the command.
fn run_release(calls: u64, seed: u64) -> Step {
    let line = format!("LINDIFF_FUZZ_CALLS={calls} LINDIFF_FUZZ_SEED={seed} cargo {}", ARGS.join(" "));
    eprintln!("\n==> {line}");
    let started = Instant::now();
    let status = Command::new("cargo")
        .args(ARGS)
        .env("LINDIFF_FUZZ_CALLS", calls.to_string())
        .env("LINDIFF_FUZZ_SEED", seed.to_string())
        .env_remove("LINDIFF_FUZZ_CASE")
        .status()
        .map_err(|e| format!("cannot start `{line}`: {e}"))?;
    eprintln!("fuzz: {:.0} s (build included)", started.elapsed().as_secs_f64());
    status.success().then_some(()).ok_or_else(|| format!("`{line}` failed ({status})"))
}
