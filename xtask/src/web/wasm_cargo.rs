//! Cargo for the wasm builds, with the vendored gemm-f64.
//!
//! `vendor/gemm-f64` changes gemm-f64's wasm32 simd128 microkernels only
//! (`vendor/gemm-f64/LINDIFF.md`). A `[patch.crates-io]` in the workspace
//! `Cargo.toml` would apply to every build, native ones included; instead
//! every cargo call that builds for wasm32 passes it on the command line:
//!
//! ```text
//! cargo --config 'patch.crates-io.gemm-f64.path="<root>/vendor/gemm-f64"' …
//! ```
//!
//! so a plain `cargo build`/`cargo test` (native) uses the published crate.
//! The patch changes the resolution (gemm-f64 comes from a path, not the
//! registry), and cargo writes that into `Cargo.lock`; the committed lock
//! stays the native one: [`wasm_cargo`] puts the lock back as it was after
//! each patched call. (A call that is killed half-way leaves the patched
//! lock; the next native cargo call resolves it back by itself.) The
//! threaded build's `-Z build-std` resolves the standard library's own
//! workspace with the same `--config` and warns there that the patch "was
//! not used in the crate graph"; lindiff-wasm's graph does use it.

use std::path::Path;
use std::process::Command;

/// The `--config` value that patches gemm-f64 with the vendored copy.
fn gemm_patch(root: &Path) -> String {
    // An absolute path: a relative one in `--config` is taken from the
    // current directory, not the workspace root.
    let vendor = root.join("vendor/gemm-f64");
    format!("patch.crates-io.gemm-f64.path={:?}", vendor.to_string_lossy())
}

/// Runs `cargo [toolchain] --config <gemm patch> ARGS` in `root` with
/// `envs`, echoing it, and restores `Cargo.lock` afterwards; fails with the
/// command line on a non-zero exit. `toolchain` is a `+name` or `None`.
pub fn wasm_cargo(
    root: &Path,
    toolchain: Option<&str>,
    envs: &[(&str, &str)],
    args: &[&str],
) -> Result<(), String> {
    let patch = gemm_patch(root);
    let mut full: Vec<&str> = toolchain.into_iter().collect();
    full.extend_from_slice(&["--config", &patch]);
    full.extend_from_slice(args);
    let line = format!("cargo {}", full.join(" "));
    eprintln!("\n==> {line}");
    let lock_path = root.join("Cargo.lock");
    let lock = std::fs::read(&lock_path).map_err(|e| format!("cannot read {}: {e}", lock_path.display()))?;
    let status = Command::new("cargo").args(&full).current_dir(root).envs(envs.iter().copied()).status();
    // Put the native lock back whatever the outcome (untouched when the
    // call left it as it was).
    let unchanged = std::fs::read(&lock_path).is_ok_and(|now| now == lock);
    let restored = if unchanged { Ok(()) } else { std::fs::write(&lock_path, &lock) };
    let status = status.map_err(|e| format!("cannot start `{line}`: {e}"))?;
    restored.map_err(|e| format!("cannot restore {}: {e}", lock_path.display()))?;
    status.success().then_some(()).ok_or_else(|| format!("`{line}` failed ({status})"))
}
