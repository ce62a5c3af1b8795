//! `cargo xtask machine-code`: no legacy-SSE instruction inside AVX code.
//!
//! An x86 function that uses the 256- or 512-bit registers leaves their
//! upper halves dirty; a legacy (non-VEX) SSE instruction run in that state
//! costs a state transition or a false dependency on the whole register,
//! by CPU: nothing on one Xeon or EPYC, a 9× slower 8×8 SVD batch on
//! another. The compiler encodes every vector instruction of a function for
//! that function's target features (all VEX in an AVX function) and clears
//! the upper halves (`vzeroupper`) before it calls or returns to baseline
//! code, so a mix can only come from inline assembly inlined into AVX code — as libm's x86-64 square
//! root is (`sqrtsd` in `asm!`), the reason lindiff-core takes `sqrt` from
//! std in std builds (core/src/scalar.rs).
//!
//! The check builds the release test binary `workspace_overflow` (every
//! kernel of both host providers is linked into it through their
//! dispatch, with faer, gemm and pulp beneath), disassembles it with
//! `objdump` (Debian's binutils, installed when missing), and fails on any
//! function that has both a ymm/zmm operand and a non-VEX instruction on an
//! xmm register. It also fails when it
//! finds none of lindiff's run-time AVX2 copies (`with_avx2!`), so that a
//! build without them cannot pass it vacuously. On hosts other than
//! x86-64 it reports that it has nothing to check.

use crate::Step;
use std::process::{Command, Stdio};

/// The test binary whose machine code is checked.
const BINARY: &str = "workspace_overflow";

/// Builds the release test binary, disassembles it and scans it.
pub fn check() -> Step {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("machine-code: not an x86-64 host, nothing to check");
        return Ok(());
    }
    if Command::new("objdump").arg("--version").output().is_err() {
        crate::apt_get(&["update"], "binutils")?;
        crate::apt_get(&["install", "-y", "binutils"], "binutils")?;
    }
    let exe = release_binary()?;
    eprintln!("\n==> objdump -d --no-show-raw-insn -M att -C {exe}");
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn", "-M", "att", "-C", &exe])
        .output()
        .map_err(|e| format!("cannot start objdump (binutils): {e}"))?;
    if !out.status.success() {
        return Err(format!("objdump failed ({})", out.status));
    }
    let report = scan(&String::from_utf8_lossy(&out.stdout));
    eprintln!(
        "machine-code: {} functions use ymm/zmm registers ({} of them lindiff's AVX2 copies); {} mix in legacy SSE",
        report.wide, report.lindiff_avx2, report.mixed.len()
    );
    if report.lindiff_avx2 == 0 {
        return Err(format!("machine-code: no AVX2 copy of a lindiff kernel found in {exe}"));
    }
    if let Some((function, instruction)) = report.mixed.first() {
        for (f, i) in &report.mixed {
            eprintln!("  {f}: {i}");
        }
        return Err(format!("machine-code: legacy SSE `{instruction}` inside AVX code in {function}"));
    }
    Ok(())
}

/// The path of the release build of the tests crate's [`BINARY`] test
/// (built if needed), from cargo's JSON messages.
fn release_binary() -> Result<String, String> {
    let args =
        ["test", "--release", "-p", "lindiff-tests", "--features", "blas", "--test", BINARY, "--no-run"];
    eprintln!("\n==> cargo {} --message-format=json-render-diagnostics", args.join(" "));
    let out = Command::new("cargo")
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!("building {BINARY} failed ({})", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .filter(|line| line.contains("\"executable\":\"") && line.contains(BINARY))
        .filter_map(|line| line.split("\"executable\":\"").nth(1)?.split('"').next())
        .next_back()
        .map(str::to_owned)
        .ok_or_else(|| format!("cargo named no executable for {BINARY}"))
}

/// What [`scan`] found.
#[derive(Debug, Default, PartialEq)]
pub struct Report {
    /// Functions with a ymm or zmm operand.
    pub wide: usize,
    /// Of those, lindiff's run-time AVX2 copies (`...::avx2`, or
    /// `...::avx2::<f64>` with v0 symbol mangling).
    pub lindiff_avx2: usize,
    /// (function, first legacy-SSE instruction) for each function that
    /// mixes the two.
    pub mixed: Vec<(String, String)>,
}

/// Scans `objdump -d --no-show-raw-insn` output (AT&T syntax, demangled).
pub fn scan(disassembly: &str) -> Report {
    let mut report = Report::default();
    let mut name = String::new();
    let (mut wide, mut legacy): (bool, Option<String>) = (false, None);
    /// Counts the function just read.
    fn finish(name: &str, wide: bool, legacy: Option<String>, report: &mut Report) {
        if !wide {
            return;
        }
        report.wide += 1;
        if name.contains("lindiff") && (name.ends_with("::avx2") || name.contains("::avx2::")) {
            report.lindiff_avx2 += 1;
        }
        if let Some(instruction) = legacy {
            report.mixed.push((name.to_owned(), instruction));
        }
    }
    for line in disassembly.lines() {
        // A function starts at `0000000000318c80 <symbol>:`.
        if let Some(symbol) = line.strip_suffix(">:").and_then(|l| l.split_once(" <")).map(|(_, s)| s) {
            finish(&name, wide, legacy.take(), &mut report);
            (name, wide) = (symbol.to_owned(), false);
            continue;
        }
        // An instruction line: `  318c80:\tvmulpd %ymm1,%ymm2,%ymm3`.
        let Some(instruction) = line.split('\t').nth(1).map(str::trim) else { continue };
        if instruction.contains("%ymm") || instruction.contains("%zmm") {
            wide = true;
        }
        let mnemonic = instruction.split_whitespace().next().unwrap_or("");
        if legacy.is_none() && instruction.contains("%xmm") && !mnemonic.starts_with('v') {
            legacy = Some(instruction.to_owned());
        }
    }
    finish(&name, wide, legacy, &mut report);
    report
}

#[cfg(test)]
mod tests {
    use super::scan;

    /// A function with ymm code and an inlined legacy `sqrtsd` is flagged;
    /// one with VEX code alone, or legacy SSE without wide registers (a
    /// baseline function, whose upper halves are clean), is not.
    #[test]
    fn flags_legacy_sse_in_avx_functions_only() {
        let text = "\
0000000000001000 <lindiff_cpu::kernels::gauge::pairs::avx2>:
    1000:\tvmulpd %ymm1,%ymm2,%ymm3
    1004:\tvsqrtsd %xmm0,%xmm0,%xmm0
    1008:\tret
0000000000002000 <lindiff_cpu::kernels::svd::small::avx2>:
    2000:\tvfmadd231pd %ymm1,%ymm2,%ymm3
    2004:\tsqrtsd %xmm1,%xmm0
    2008:\tret
0000000000003000 <faer::baseline>:
    3000:\tmulsd %xmm1,%xmm0
    3004:\tret
";
        let report = scan(text);
        assert_eq!(report.wide, 2);
        assert_eq!(report.lindiff_avx2, 2);
        assert_eq!(
            report.mixed,
            vec![("lindiff_cpu::kernels::svd::small::avx2".to_owned(), "sqrtsd %xmm1,%xmm0".to_owned())]
        );
    }
}
