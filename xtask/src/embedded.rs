//! `cargo xtask embedded`: builds the bare-metal firmware in `embedded/`
//! (its own workspace) for each configuration, runs it under QEMU, and
//! checks each exit status — including the runs that must fail: a wrong
//! expectation (`break-expectation`) and a problem size where faer
//! allocates (the always-failing allocator must stop it). Prints flash
//! and static RAM (from the ELF section headers), arena and stack figures.
//! Also lints and tests lindiff-core with only the firmware's op families
//! (`op-*` features), the configuration the firmware links, and runs the
//! SVD suites with lindiff-cpu's `svd-jacobi`, the firmware's SVD.
//!
//! Installs what it needs when missing: the rustup targets, and
//! `qemu-system-arm` with apt-get. The firmware builds in
//! `$CARGO_TARGET_DIR/embedded` (or `embedded/target`).

use std::path::{Path, PathBuf};
use std::process::Command;

type Step = Result<(), String>;

/// The two machines QEMU emulates.
#[derive(Clone, Copy)]
struct Machine {
    feature: &'static str,
    target: &'static str,
    cpu: &'static str,
}

const M4F: Machine = Machine { feature: "mps2-an386", target: "thumbv7em-none-eabihf", cpu: "cortex-m4" };
const M3: Machine = Machine { feature: "lm3s6965evb", target: "thumbv7m-none-eabi", cpu: "cortex-m3" };

/// One firmware build and what its run must show.
struct Config {
    name: &'static str,
    machine: Machine,
    scalar: &'static str,
    extra_feature: Option<&'static str>,
    /// Overrides the machine's problem order (`LINDIFF_EMBEDDED_N`).
    order: Option<&'static str>,
    /// The exit status the run must end with.
    exit: i32,
    /// A line the output must contain.
    marker: &'static str,
    /// The most .text bytes the build may have (the flash target), where
    /// one applies.
    max_text: Option<u64>,
}

/// The flash target for the f32 8×8 firmware: .text ≤ 200 KiB (195.0 KiB
/// with the scale-robust kernels, reverse mode's tie checks and forward
/// mode's; see docs/embedded.md).
const F32_TEXT_TARGET: u64 = 200 * 1024;

/// A build whose checks all pass: what `CONFIGS` entries differ from.
const PASSES: Config = Config {
    name: "",
    machine: M4F,
    scalar: "f32",
    extra_feature: None,
    order: None,
    exit: 0,
    marker: "PASSED",
    max_text: None,
};

const CONFIGS: &[Config] = &[
    Config { name: "M4F f32 8×8", max_text: Some(F32_TEXT_TARGET), ..PASSES },
    Config { name: "M4F f64 8×8", scalar: "f64", ..PASSES },
    Config { name: "M3 f32 4×4", machine: M3, ..PASSES },
    // Negative test: one expected singular value is off by one; the run must
    // fail on exactly that comparison (exit status 1).
    Config {
        name: "M4F f32 wrong expectation",
        extra_feature: Some("break-expectation"),
        exit: 1,
        marker: "FAIL svd: singular values",
        ..PASSES
    },
    // The largest order whose programs never call the allocator…
    Config { name: "M4F f32 32×32", order: Some("32"), ..PASSES },
    // …also with the matrix functions and their gradients, whose own
    // products and solves stay off the heap (lindiff-cpu's gemm and trsm).
    Config { name: "M4F f32 32×32 matfun", extra_feature: Some("matfun"), order: Some("32"), ..PASSES },
    // …and the first where faer does (its LU in the solve; the firmware's
    // SVD, lindiff's Jacobi SVD, never allocates): the refusing allocator
    // stops it.
    Config {
        name: "M4F f32 33×33 (faer allocates)",
        order: Some("33"),
        exit: 3,
        // The panic handler prints where the panic was raised, never its
        // message: this one is alloc's `handle_alloc_error`.
        marker: "PANIC: a heap allocation",
        ..PASSES
    },
];

/// Runs `cargo xtask embedded`.
pub fn run() -> Step {
    let root = crate::repo_root();
    let dir = root.join("embedded");
    let target_dir = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => PathBuf::from(d).join("embedded"),
        None => dir.join("target"),
    };
    ensure_tools()?;
    // The firmware's own formatting and lints (it is outside the root workspace).
    cargo(&dir, &target_dir, None, &["fmt", "--", "--check"])?;
    for (machine, extra) in [(M4F, ""), (M4F, ",matfun"), (M3, "")] {
        let features = format!("{},f32{extra}", machine.feature);
        let args = [
            "clippy",
            "--release",
            "--target",
            machine.target,
            "--features",
            &features,
            "--",
            "-D",
            "warnings",
        ];
        cargo(&dir, &target_dir, None, &args)?;
    }
    core_families(&root)?;
    let mut rows = Vec::new();
    for config in CONFIGS {
        rows.push(build_and_run(&dir, &target_dir, config)?);
    }
    eprintln!("\nembedded: every run ended as it must");
    eprintln!(
        "  {:<32} {:>5}  {:>10} {:>9} {:>9}  {:>10}  {:>10}",
        "configuration", "exit", "flash B", ".text B", "RAM B", "arena B", "stack B"
    );
    for row in rows {
        eprintln!("  {row}");
    }
    Ok(())
}

/// Builds one configuration, runs it under QEMU and checks its exit status
/// and output; returns its figures as a table row.
fn build_and_run(dir: &Path, target_dir: &Path, config: &Config) -> Result<String, String> {
    let m = config.machine;
    let mut features = format!("{},{}", m.feature, config.scalar);
    if let Some(extra) = config.extra_feature {
        features = format!("{features},{extra}");
    }
    let order = config.order.map(|n| ("LINDIFF_EMBEDDED_N", n));
    cargo(dir, target_dir, order, &["build", "--release", "--target", m.target, "--features", &features])?;
    let elf = target_dir.join(m.target).join("release").join("lindiff-embedded");
    let line = format!(
        "timeout 120 qemu-system-arm -cpu {} -machine {} -nographic -semihosting-config enable=on,target=native -kernel {}",
        m.cpu,
        m.feature,
        elf.display()
    );
    eprintln!("\n==> [{}] {line}", config.name);
    let output = Command::new("timeout")
        .args(["120", "qemu-system-arm", "-cpu", m.cpu, "-machine", m.feature, "-nographic"])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(&elf)
        .output()
        .map_err(|e| format!("cannot start `{line}`: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprint!("{stdout}");
    let code = output.status.code().unwrap_or(-1);
    if code != config.exit {
        return Err(format!(
            "[{}] exited with {code}, expected {} ({})",
            config.name,
            config.exit,
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    if !stdout.contains(config.marker) {
        return Err(format!("[{}] exited with {code} but never printed {:?}", config.name, config.marker));
    }
    let sizes = elf_sizes(&elf)?;
    if let Some(max) = config.max_text.filter(|&max| sizes.text > max) {
        return Err(format!(
            "[{}] .text is {} bytes, above the {max}-byte flash target (docs/embedded.md)",
            config.name, sizes.text
        ));
    }
    let figure = |key: &str| -> String {
        // "arena: peak A of B bytes; stack: peak S of T bytes"
        stdout
            .lines()
            .find_map(|l| l.split(key).nth(1))
            .and_then(|rest| rest.split_whitespace().nth(1))
            .unwrap_or("-")
            .to_string()
    };
    Ok(format!(
        "{:<32} {:>5}  {:>10} {:>9} {:>9}  {:>10}  {:>10}",
        config.name,
        code,
        sizes.flash,
        sizes.text,
        sizes.ram,
        figure("arena:"),
        figure("stack:")
    ))
}

/// lindiff-core with only the firmware's op families (its `op-*`
/// features): clippy (a dependency's lints are capped in the firmware
/// build), and the test that the families built differentiate (with the
/// ops their rules record) while an op of a family left out is
/// `Error::Unsupported`, never a zero or a panic. Also the SVD suites with
/// lindiff-cpu's `svd-jacobi` (the firmware's SVD: the one-sided Jacobi
/// SVD instead of faer's), including sizes ≥ 128 (140×130 real and
/// 130×135 complex, and spectra graded over 15 decades at 128×128 to
/// 200×130, which take 34–37 sweeps: about 45 s unoptimised, as Jacobi is
/// meant for small matrices), and
/// the suites that run on its results: the SVD's derivatives, the gauge
/// checks at ties and zeros, the recombinations and their derivatives.
fn core_families(root: &Path) -> Step {
    let steps: [&[&str]; 3] = [
        &[
            "clippy",
            "-p",
            "lindiff-core",
            "--no-default-features",
            "--features",
            "op-svd,op-lu,op-cholesky",
            "--",
            "-D",
            "warnings",
        ],
        &[
            "test",
            "-p",
            "lindiff-core",
            "--no-default-features",
            "--features",
            "op-svd,op-lu,op-cholesky",
            "--lib",
            "family_tests",
        ],
        &[
            "test",
            "-p",
            "lindiff-tests",
            "--features",
            "lindiff-cpu/svd-jacobi",
            "--test",
            "svd",
            "--test",
            "svd_large",
            "--test",
            "ad_svd",
            "--test",
            "ad_gauge",
            "--test",
            "recombine",
            "--test",
            "ad_recombine",
        ],
    ];
    for args in steps {
        let line = format!("cargo {}", args.join(" "));
        eprintln!("\n==> {line}");
        let status = Command::new("cargo")
            .current_dir(root)
            .args(args)
            .status()
            .map_err(|e| format!("cannot start `{line}`: {e}"))?;
        status.success().then_some(()).ok_or_else(|| format!("`{line}` failed ({status})"))?;
    }
    Ok(())
}

/// Runs cargo in the firmware's folder (so its `.cargo/config.toml`
/// applies), with its own target dir and an optional extra variable.
fn cargo(dir: &Path, target_dir: &Path, var: Option<(&str, &str)>, args: &[&str]) -> Step {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(dir).env("CARGO_TARGET_DIR", target_dir).args(args);
    let mut line = format!("(cd embedded && cargo {})", args.join(" "));
    if let Some((k, v)) = var {
        cmd.env(k, v);
        line = format!("{k}={v} {line}");
    }
    eprintln!("\n==> {line}");
    let status = cmd.status().map_err(|e| format!("cannot start `{line}`: {e}"))?;
    status.success().then_some(()).ok_or_else(|| format!("`{line}` failed ({status})"))
}

/// Adds the rustup targets and installs QEMU when missing.
fn ensure_tools() -> Step {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    for target in [M4F.target, M3.target] {
        if !installed.lines().any(|l| l.trim() == target) {
            simple("rustup", &["target", "add", target])?;
        }
    }
    let has_qemu =
        Command::new("qemu-system-arm").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_qemu {
        simple("apt-get", &["update"])?;
        simple("apt-get", &["install", "-y", "--no-install-recommends", "qemu-system-arm"])?;
    }
    Ok(())
}

fn simple(program: &str, args: &[&str]) -> Step {
    let line = format!("{program} {}", args.join(" "));
    eprintln!("\n==> {line}");
    let status =
        Command::new(program).args(args).status().map_err(|e| format!("cannot start `{line}`: {e}"))?;
    status.success().then_some(()).ok_or_else(|| format!("`{line}` failed ({status})"))
}

/// Section sizes of a firmware ELF.
struct Sizes {
    /// Bytes programmed into flash: every allocated section with contents
    /// (vector table, .text, .rodata, .data's initial values).
    flash: u64,
    /// The code alone.
    text: u64,
    /// Static RAM: .data + .bss + .uninit (the stack comes on top).
    ram: u64,
}

/// Reads the section headers of a 32-bit little-endian ELF.
fn elf_sizes(path: &Path) -> Result<Sizes, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bad = || format!("{} is not a 32-bit little-endian ELF", path.display());
    if bytes.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 1, 1]) {
        return Err(bad());
    }
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |o: usize| bytes.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64);
    let (shoff, shentsize, shnum, shstrndx) = (
        u32_at(0x20).ok_or_else(bad)? as usize,
        u16_at(0x2e).ok_or_else(bad)?,
        u16_at(0x30).ok_or_else(bad)?,
        u16_at(0x32).ok_or_else(bad)?,
    );
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u32_at(header(shstrndx) + 0x10).ok_or_else(bad)? as usize;
    let mut sizes = Sizes { flash: 0, text: 0, ram: 0 };
    for i in 0..shnum {
        let h = header(i);
        let name_at = strtab + u32_at(h).ok_or_else(bad)? as usize;
        let name_len = bytes.get(name_at..).and_then(|s| s.iter().position(|&c| c == 0)).ok_or_else(bad)?;
        let name = String::from_utf8_lossy(&bytes[name_at..name_at + name_len]);
        let (kind, flags, size) = (
            u32_at(h + 4).ok_or_else(bad)?,
            u32_at(h + 8).ok_or_else(bad)?,
            u32_at(h + 0x14).ok_or_else(bad)?,
        );
        const SHF_ALLOC: u64 = 2;
        const SHT_NOBITS: u64 = 8;
        if flags & SHF_ALLOC == 0 {
            continue;
        }
        if kind != SHT_NOBITS {
            sizes.flash += size;
        }
        match &*name {
            ".text" => sizes.text = size,
            ".data" | ".bss" | ".uninit" => sizes.ram += size,
            _ => {}
        }
    }
    Ok(sizes)
}
