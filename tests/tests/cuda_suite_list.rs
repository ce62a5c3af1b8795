//! Keeps `tests/cuda/main.rs` (the one CUDA conformance binary of the
//! device check) complete: every suite file here that uses `providers!`
//! must be listed there as `#[path = "../<file>"] mod <name>;`, unless it
//! is in [`SEPARATE`] (suites that install their own `#[global_allocator]`,
//! one per binary; `host-cuda/device-check.sh` builds and runs those
//! separately). Runs without a GPU, in every `cargo test`.

/// Suites that cannot join the combined binary, and why.
const SEPARATE: &[(&str, &str)] = &[
    ("alloc_free.rs", "installs a counting #[global_allocator] (not in device-check.sh yet)"),
    ("ad_program.rs", "installs a counting #[global_allocator]"),
    ("prims.rs", "installs a counting #[global_allocator]"),
    ("out_of_range.rs", "lindiff-cuda makes no output range check on device memory yet (docs/cuda.md)"),
];

#[test]
fn every_provider_suite_is_in_the_cuda_binary() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let main = std::fs::read_to_string(dir.join("cuda/main.rs")).expect("tests/cuda/main.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/tests") {
        let path = entry.expect("a directory entry").path();
        let Some(file) = path.file_name().and_then(|f| f.to_str()).map(str::to_owned) else { continue };
        if !file.ends_with(".rs") || SEPARATE.iter().any(|(f, _)| *f == file) {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("a suite file");
        let uses = source
            .lines()
            .map(str::trim_start)
            .any(|l| l.starts_with("providers!(") || l.starts_with("lindiff_tests::providers!("));
        if uses && !main.contains(&format!("#[path = \"../{file}\"]")) {
            missing.push(file);
        }
    }
    assert!(
        missing.is_empty(),
        "suites using providers! missing from tests/tests/cuda/main.rs (add `#[path = \"../<file>\"] mod <name>;`, \
         or list them in SEPARATE in cuda_suite_list.rs with the reason): {missing:?}"
    );
    for (file, why) in SEPARATE {
        assert!(dir.join(file).exists(), "{file} is listed as separate ({why}) but does not exist");
    }
}
