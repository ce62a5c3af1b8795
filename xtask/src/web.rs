//! The browser demo's tasks:
//!
//! * `cargo xtask demo` — builds the release wasm (simd128, wasm-opt -O3) into
//!   `www/pkg` and, with the pinned nightly, the threaded build into
//!   `www/pkg-threads`; serves `www/` on 127.0.0.1 with COOP/COEP headers
//!   and prints the URL.
//! * `cargo xtask browser` — the browser test: the native library writes a
//!   fixture, Chromium (Debian's, driven by playwright-core) loads the page
//!   from this server and must reproduce it; also the 256×256 SVD
//!   Chromium/native ratio (the test alternates the native binary and the
//!   page's single-threaded build), the vjp checks (`www/test/vjp_cases.mjs`)
//!   in the page, no console warning or error, and `tsc --noEmit` on
//!   `www/test/vjp_usage.ts` against the package's `.d.ts`. Screenshots land
//!   in `<target>/browser/`, and the page's first one also at
//!   `/tmp/web-screenshot.png` (`LINDIFF_SCREENSHOT` moves it).
//! * `cargo xtask node` — the wasm-bindgen tests under node,
//!   `www/test/api.mjs` on the built package (the vjp checks included) and
//!   the same `tsc --noEmit` check.
//! * `web::test()` (from `cargo xtask test`): both builds once, the node
//!   checks, then the browser test (threaded batch vs single-threaded).

mod server;
mod tools;
mod wasm_cargo;

use super::run;
use server::Server;
use std::path::{Path, PathBuf};
use std::process::Command;
use wasm_cargo::wasm_cargo;

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// Target features of the single-threaded build.
const SIMD_FLAGS: &str = "-C target-feature=+simd128";
/// The threaded build: shared memory and the TLS exports wasm-bindgen-rayon
/// needs (1 GiB maximum memory).
const THREAD_FLAGS: &str = "-C target-feature=+atomics,+bulk-memory,+simd128 \
    -C link-arg=--shared-memory -C link-arg=--import-memory -C link-arg=--max-memory=1073741824 \
    -C link-arg=--export=__wasm_init_tls -C link-arg=--export=__tls_size \
    -C link-arg=--export=__tls_align -C link-arg=--export=__tls_base";
/// The wasm features wasm-opt may keep (what rustc emits for the target).
const WASM_OPT_FEATURES: &[&str] = &[
    "--enable-simd",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-mutable-globals",
    "--enable-reference-types",
    "--enable-multivalue",
];

/// Which wasm build.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    /// Stable, simd128, no threads: works everywhere.
    Single,
    /// Nightly, build-std, atomics, wasm-bindgen-rayon: needs
    /// `crossOriginIsolated`.
    Threads,
}

impl Flavor {
    fn out_dir(self) -> &'static str {
        match self {
            Flavor::Single => "www/pkg",
            Flavor::Threads => "www/pkg-threads",
        }
    }
}

fn run_in(dir: &Path, envs: &[(&str, &str)], program: &str, args: &[&str]) -> Result<(), String> {
    let line = format!("{program} {}", args.join(" "));
    eprintln!("\n==> {line}");
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .envs(envs.iter().copied())
        .status()
        .map_err(|e| format!("cannot start `{line}`: {e}"))?;
    status.success().then_some(()).ok_or_else(|| format!("`{line}` failed ({status})"))
}

/// Builds one flavor into its `www/` folder: cargo (wasm-release profile),
/// wasm-bindgen `--target web`, wasm-opt -O3, and the npm package.json.
fn build(root: &Path, flavor: Flavor, npm_bin: &Path) -> Result<(), String> {
    let target = target_dir(root);
    let wasm = match flavor {
        Flavor::Single => {
            let dir = target;
            wasm_cargo(
                root,
                None,
                &[("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS", SIMD_FLAGS)],
                &["build", "-p", "lindiff-wasm", "--target", WASM_TARGET, "--profile", "wasm-release"],
            )?;
            dir.join(WASM_TARGET).join("wasm-release/lindiff_wasm.wasm")
        }
        Flavor::Threads => {
            tools::ensure_nightly()?;
            // Its own target dir: build-std artifacts differ from the stable ones.
            let dir = target.join("wasm-threads");
            let dir_s = dir.to_string_lossy().into_owned();
            let toolchain = format!("+{}", tools::NIGHTLY);
            wasm_cargo(
                root,
                Some(&toolchain),
                &[
                    ("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS", THREAD_FLAGS),
                    ("CARGO_TARGET_DIR", &dir_s),
                ],
                &[
                    "build",
                    "-p",
                    "lindiff-wasm",
                    "--features",
                    "threads",
                    "--target",
                    WASM_TARGET,
                    "--profile",
                    "wasm-release",
                    "-Z",
                    "build-std=panic_abort,std",
                ],
            )?;
            dir.join(WASM_TARGET).join("wasm-release/lindiff_wasm.wasm")
        }
    };
    let out = root.join(flavor.out_dir());
    let _ = std::fs::remove_dir_all(&out);
    let wasm_s = wasm.to_string_lossy().into_owned();
    let out_s = out.to_string_lossy().into_owned();
    run("wasm-bindgen", &["--target", "web", "--out-dir", &out_s, &wasm_s])?;
    if flavor == Flavor::Threads {
        modern_worker_init(&out)?;
    }
    let bg = out.join("lindiff_wasm_bg.wasm").to_string_lossy().into_owned();
    let mut args = vec!["-O3"];
    args.extend_from_slice(WASM_OPT_FEATURES);
    if flavor == Flavor::Threads {
        args.push("--enable-threads");
    }
    args.extend_from_slice(&[&bg, "-o", &bg]);
    run(&npm_bin.join("wasm-opt").to_string_lossy(), &args)?;
    copy_docs(root, &out)?;
    write_package_json(root, &out)
}

/// wasm-bindgen-rayon 1.3's worker helper (no-bundler) starts each worker
/// with `init(module, memory)`, the positional form that wasm-bindgen's glue
/// now answers with a console warning ("using deprecated parameters for the
/// initialization function; pass a single object instead") — once per
/// worker. The same call in the object form (`{ module_or_path, memory }`,
/// which the glue reads the same way) keeps the console clean. Fails when
/// the helper no longer has the old call, so a new wasm-bindgen-rayon is
/// looked at rather than silently left alone.
fn modern_worker_init(out: &Path) -> Result<(), String> {
    const OLD: &str = "pkg.default(data.module, data.memory)";
    const NEW: &str = "pkg.default({ module_or_path: data.module, memory: data.memory })";
    let snippets = out.join("snippets");
    let mut patched = 0;
    let mut stack = vec![snippets.clone()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "workerHelpers.no-bundler.js") {
                let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
                if text.contains(OLD) {
                    std::fs::write(&path, text.replace(OLD, NEW)).map_err(|e| e.to_string())?;
                    patched += 1;
                } else if !text.contains(NEW) {
                    return Err(format!(
                        "{}: no `{OLD}` to rewrite (a new wasm-bindgen-rayon?)",
                        path.display()
                    ));
                }
            }
        }
    }
    if patched == 0 {
        return Err(format!("no wasm-bindgen-rayon worker helper under {}", snippets.display()));
    }
    Ok(())
}

/// README.md and LICENSE* files next to the package, as wasm-pack copies
/// them: from the crate's own folder only (`wasm/`, which has none today, so
/// nothing is copied; the workspace root's README is not wasm-pack's).
fn copy_docs(root: &Path, out: &Path) -> Result<(), String> {
    let dir = root.join("wasm");
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(()) };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n == "README.md" || n.starts_with("LICENSE"))
        .collect();
    names.sort();
    for name in names {
        std::fs::copy(dir.join(&name), out.join(&name))
            .map_err(|e| format!("cannot copy {name} into {}: {e}", out.display()))?;
    }
    Ok(())
}

/// The npm package.json, as `wasm-pack build --mode no-install --target web`
/// writes it (wasm-pack is not needed: wasm-bindgen made the rest): the same
/// fields in the same order, LICENSE-* files listed, no trailing newline
/// (serde_json's pretty printer). One deliberate difference: the build's
/// `snippets/` folder (both builds: the `LindiffError` class module; the
/// threaded build also wasm-bindgen-rayon's worker helpers) is listed in
/// `files`; wasm-pack leaves it out, so `npm pack` of its package would
/// drop the files the glue imports.
fn write_package_json(root: &Path, out: &Path) -> Result<(), String> {
    let manifest = std::fs::read_to_string(root.join("wasm/Cargo.toml")).map_err(|e| e.to_string())?;
    let field = |name: &str| {
        manifest
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} = \""))?.strip_suffix('"').map(str::to_owned))
    };
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let ws = |name: &str| {
        workspace
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} = \""))?.strip_suffix('"').map(str::to_owned))
    };
    // wasm-pack lists the LICENSE-* files it copied (not a plain LICENSE).
    let mut licenses: Vec<String> = std::fs::read_dir(out)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("LICENSE") && n != "LICENSE")
        .collect();
    licenses.sort();
    let json = format!(
        "{{\n  \"name\": \"lindiff-wasm\",\n  \"type\": \"module\",\n  \"description\": {:?},\n  \"version\": {:?},\n  \
         \"license\": {:?},\n  \"repository\": {{\n    \"type\": \"git\",\n    \"url\": {:?}\n  }},\n  \"files\": [\n    \
         \"lindiff_wasm_bg.wasm\",\n    \"lindiff_wasm.js\",\n    \"lindiff_wasm.d.ts\"{}{}\n  ],\n  \"main\": \"lindiff_wasm.js\",\n  \
         \"types\": \"lindiff_wasm.d.ts\",\n  \"sideEffects\": [\n    \"./snippets/*\"\n  ]\n}}",
        field("description").unwrap_or_default(),
        ws("version").unwrap_or_default(),
        ws("license").unwrap_or_default(),
        ws("repository").unwrap_or_default(),
        licenses.iter().map(|n| format!(",\n    {n:?}")).collect::<String>(),
        // Inline JS modules (LindiffError; the threaded build's worker helpers) live in snippets/.
        if out.join("snippets").is_dir() { ",\n    \"snippets/\"" } else { "" },
    );
    std::fs::write(out.join("package.json"), json).map_err(|e| e.to_string())
}

/// Which builds a task needs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Builds {
    /// `www/pkg` only (the node checks).
    Single,
    /// Both; the page falls back to single-threaded if the threaded build
    /// fails (`demo`).
    TryThreads,
    /// Both, the threaded one required (the browser test: it compares the
    /// threaded batch with the single-threaded one). A cold CI machine pays
    /// ~6 min for it (nightly + rust-src about 1 min, the build-std build
    /// about 5 min on a busy 2-core machine); `LINDIFF_BROWSER_THREADS=0`
    /// skips it.
    Threads,
}

fn build_all(root: &Path, builds: Builds) -> Result<PathBuf, String> {
    tools::ensure_wasm_target()?;
    tools::ensure_wasm_bindgen(root)?;
    let npm_bin = tools::ensure_npm_tools(root)?;
    build(root, Flavor::Single, &npm_bin)?;
    let skip = builds == Builds::Threads && std::env::var("LINDIFF_BROWSER_THREADS").is_ok_and(|v| v == "0");
    if skip {
        eprintln!("xtask: LINDIFF_BROWSER_THREADS=0: the threaded build and its checks are skipped");
    }
    if builds != Builds::Single && !skip {
        if let Err(e) = build(root, Flavor::Threads, &npm_bin) {
            if builds == Builds::Threads {
                return Err(e);
            }
            eprintln!("xtask demo: the threaded build failed ({e}); the page runs single-threaded");
            let _ = std::fs::remove_dir_all(root.join(Flavor::Threads.out_dir()));
        }
    } else {
        let _ = std::fs::remove_dir_all(root.join(Flavor::Threads.out_dir()));
    }
    // Tells the page which builds exist (so it never requests a missing one).
    let threads = root.join(Flavor::Threads.out_dir()).join("lindiff_wasm.js").exists();
    std::fs::write(
        root.join("www/builds.json"),
        format!(
            "{{\"single\": \"pkg\", \"threads\": {}}}\n",
            if threads { "\"pkg-threads\"" } else { "null" }
        ),
    )
    .map_err(|e| format!("cannot write www/builds.json: {e}"))?;
    Ok(npm_bin)
}

/// `cargo xtask demo`: build, serve, print the URL, serve until stopped.
pub fn demo() -> Result<(), String> {
    let root = crate::repo_root();
    build_all(&root, Builds::TryThreads)?;
    let addr = std::env::var("LINDIFF_DEMO_ADDR").unwrap_or_else(|_| "127.0.0.1:8000".into());
    let server = Server::start(root.join("www"), &addr)?;
    println!("\nlindiff demo: {}  (Ctrl-C stops it)", server.url());
    server.wait();
    Ok(())
}

/// The wasm-bindgen tests of the JS API under node (Rust side of the
/// boundary), then `www/test/api.mjs` on the built package (the JS glue:
/// the README's example, reused objects, closed forms at ties and zeros).
pub fn node_tests() -> Result<(), String> {
    let root = crate::repo_root();
    build_all(&root, Builds::Single)?;
    node_checks(&root)
}

/// The node checks on an already built `www/pkg`.
fn node_checks(root: &Path) -> Result<(), String> {
    tools::ensure_node()?;
    wasm_cargo(
        root,
        None,
        &[
            ("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS", SIMD_FLAGS),
            ("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER", "wasm-bindgen-test-runner"),
        ],
        &["test", "-p", "lindiff-wasm", "--target", WASM_TARGET, "--test", "node"],
    )?;
    run_in(root, &[], "node", &["www/test/api.mjs"])?;
    typescript_check(root)
}

/// `tsc --noEmit --strict` on `www/test/vjp_usage.ts`: the package's
/// TypeScript declarations (the vjp API's, hand-written in `js_vjp.rs`)
/// type-check a real user of them, `@ts-expect-error` lines included.
fn typescript_check(root: &Path) -> Result<(), String> {
    let tsc = root.join("www/test/node_modules/.bin/tsc");
    run_in(
        root,
        &[],
        &tsc.to_string_lossy(),
        &[
            "--noEmit",
            "--strict",
            "--target",
            "es2022",
            "--module",
            "es2022",
            "--moduleResolution",
            "bundler",
            "--lib",
            "es2022,dom,esnext.disposable",
            "www/test/vjp_usage.ts",
        ],
    )
}

/// `cargo xtask browser`: the page in Chromium against the native fixture.
pub fn browser() -> Result<(), String> {
    let root = crate::repo_root();
    build_all(&root, Builds::Threads)?;
    browser_checks(&root)
}

/// The browser test on the already built packages.
fn browser_checks(root: &Path) -> Result<(), String> {
    typescript_check(root)?;
    let chromium = tools::ensure_chromium()?;
    let out = target_dir(root).join("browser");
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let fixture = out.join("fixture.json");
    let fixture_s = fixture.to_string_lossy().into_owned();
    // The native side, built once: it writes the fixture now, and the
    // browser test runs it for the bench, alternating with the page.
    run("cargo", &["build", "--release", "--quiet", "-p", "lindiff-wasm", "--example", "native_side"])?;
    let native = target_dir(root)
        .join("release/examples")
        .join(format!("native_side{}", std::env::consts::EXE_SUFFIX));
    let native_s = native.to_string_lossy().into_owned();
    run(&native_s, &["fixture", &fixture_s])?;
    let server = Server::start(root.join("www"), "127.0.0.1:0")?;
    let url = server.url();
    let screenshot = std::env::var("LINDIFF_SCREENSHOT").unwrap_or_else(|_| "/tmp/web-screenshot.png".into());
    let result = run_in(
        root,
        &[],
        "node",
        &[
            "www/test/browser.mjs",
            "--url",
            &url,
            "--fixture",
            &fixture_s,
            "--out",
            &out.to_string_lossy(),
            "--chromium",
            &chromium.to_string_lossy(),
            "--native-bin",
            &native_s,
            "--screenshot",
            &screenshot,
        ],
    );
    server.stop();
    result
}

/// From `cargo xtask test`: one build, the node checks, the browser test.
pub fn test() -> Result<(), String> {
    let root = crate::repo_root();
    build_all(&root, Builds::Threads)?;
    node_checks(&root)?;
    browser_checks(&root)
}
