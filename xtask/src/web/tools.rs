//! The tools the demo's build and browser test need, installed when
//! missing (and reused when present): the wasm-bindgen CLI of exactly the
//! pinned crate version, the stable toolchain's wasm32 target, node/npm,
//! npm's binaryen (wasm-opt), playwright-core and typescript (in
//! `www/test/node_modules`), Debian's chromium, and the dated nightly with
//! rust-src for the threaded build.

use super::super::{apt_get, capture, run};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The nightly the threaded build uses (wasm-bindgen-rayon needs build-std
/// with atomics). Pinned so builds stay reproducible.
pub const NIGHTLY: &str = "nightly-2026-05-20";

/// The `wasm-bindgen = "=X"` pin of wasm/Cargo.toml.
pub fn pinned_wasm_bindgen(root: &Path) -> Result<String, String> {
    let manifest = std::fs::read_to_string(root.join("wasm/Cargo.toml")).map_err(|e| e.to_string())?;
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("wasm-bindgen = \"=").and_then(|rest| rest.split('"').next()))
        .map(str::to_owned)
        .ok_or_else(|| "wasm/Cargo.toml must pin wasm-bindgen = \"=X\"".into())
}

/// Installs wasm-bindgen-cli (with wasm-bindgen-test-runner) of the pinned
/// version unless `wasm-bindgen --version` already says it (~5 min).
pub fn ensure_wasm_bindgen(root: &Path) -> Result<(), String> {
    let version = pinned_wasm_bindgen(root)?;
    if capture("wasm-bindgen", &["--version"]).trim() == format!("wasm-bindgen {version}") {
        return Ok(());
    }
    run("cargo", &["install", "wasm-bindgen-cli", "--version", &version])
}

/// The default toolchain's `wasm32-unknown-unknown` target (a fresh
/// machine has the host target only).
pub fn ensure_wasm_target() -> Result<(), String> {
    let installed = capture("rustup", &["target", "list", "--installed"]);
    if installed.lines().any(|l| l.trim() == "wasm32-unknown-unknown") {
        return Ok(());
    }
    run("rustup", &["target", "add", "wasm32-unknown-unknown"])
}

/// Debian packages through the xtask's apt helper (root, or `sudo -n`).
fn apt_install(packages: &[&str]) -> Result<(), String> {
    let what = packages.join(", ");
    apt_get(&["update"], &what)?;
    let mut args = vec!["install", "-y", "--no-install-recommends"];
    args.extend_from_slice(packages);
    apt_get(&args, &what)
}

/// node and npm (Debian's, when missing).
pub fn ensure_node() -> Result<(), String> {
    if capture("node", &["--version"]).starts_with('v') && capture("npm", &["--version"]).contains('.') {
        return Ok(());
    }
    apt_install(&["nodejs", "npm"])
}

/// `www/test/node_modules` (binaryen, playwright-core, typescript) from the
/// lock file.
pub fn ensure_npm_tools(root: &Path) -> Result<PathBuf, String> {
    ensure_node()?;
    let dir = root.join("www/test");
    let bin = dir.join("node_modules/.bin");
    let have = bin.join("wasm-opt").exists()
        && bin.join("tsc").exists()
        && dir.join("node_modules/playwright-core").exists();
    if !have {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .status()
            .map_err(|e| format!("cannot start npm: {e}"))?;
        eprintln!("\n==> (cd www/test && npm ci)");
        if !status.success() {
            return Err(format!("npm ci failed ({status})"));
        }
    }
    Ok(bin)
}

/// Debian's chromium (driven by playwright-core; never `playwright install`).
pub fn ensure_chromium() -> Result<PathBuf, String> {
    let path = PathBuf::from("/usr/bin/chromium");
    if !path.exists() {
        apt_install(&["chromium"])?;
    }
    Ok(path)
}

/// The pinned nightly with rust-src and the wasm target (threaded build).
pub fn ensure_nightly() -> Result<(), String> {
    let have = capture("rustup", &["toolchain", "list"]);
    let components = capture("rustup", &["component", "list", "--installed", "--toolchain", NIGHTLY]);
    if have.lines().any(|l| l.starts_with(NIGHTLY)) && components.lines().any(|l| l.starts_with("rust-src")) {
        return Ok(());
    }
    run(
        "rustup",
        &[
            "toolchain",
            "install",
            NIGHTLY,
            "--profile",
            "minimal",
            "--component",
            "rust-src",
            "--target",
            "wasm32-unknown-unknown",
        ],
    )
}
