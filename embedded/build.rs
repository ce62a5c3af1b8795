//! Puts the chosen machine's linker script where cortex-m-rt's `link.x`
//! looks for `memory.x` (the build's OUT_DIR, added to the search path),
//! and writes the problem size: the machine's (8 on mps2-an386, 4 on
//! lm3s6965evb) unless `LINDIFF_EMBEDDED_N` (2 to 64) overrides it, as the
//! heap-free size probes of `cargo xtask embedded` do.

use std::path::PathBuf;
use std::{env, fs};

fn main() {
    let machines =
        [("CARGO_FEATURE_MPS2_AN386", "mps2-an386", 8), ("CARGO_FEATURE_LM3S6965EVB", "lm3s6965evb", 4)];
    let chosen: Vec<(&str, usize)> =
        machines.iter().filter(|(var, ..)| env::var_os(var).is_some()).map(|m| (m.1, m.2)).collect();
    let [(machine, default_n)] = chosen[..] else {
        panic!("lindiff-embedded: enable exactly one machine feature (mps2-an386 or lm3s6965evb), got {chosen:?}");
    };
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let script = format!("memory/{machine}.x");
    fs::copy(&script, out.join("memory.x")).unwrap_or_else(|e| panic!("cannot copy {script}: {e}"));
    println!("cargo:rustc-link-search={}", out.display());
    let n = match env::var("LINDIFF_EMBEDDED_N") {
        Ok(v) => match v.parse::<usize>() {
            Ok(n) if (2..=64).contains(&n) => n,
            _ => panic!("LINDIFF_EMBEDDED_N must be an order from 2 to 64, got {v:?}"),
        },
        Err(_) => default_n,
    };
    let problem = format!("/// Order of the test matrices (build.rs: the machine's, or `LINDIFF_EMBEDDED_N`).\npub const N: usize = {n};\n");
    fs::write(out.join("problem.rs"), problem).expect("cannot write problem.rs");
    println!("cargo:rerun-if-env-changed=LINDIFF_EMBEDDED_N");
    println!("cargo:rerun-if-changed={script}");
    println!("cargo:rerun-if-changed=build.rs");
}
