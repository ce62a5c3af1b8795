//! The fuzz suite (`tests/src/fuzz`) in `cargo test`: on every host
//! provider, `LINDIFF_FUZZ_CALLS` calls (default 10 000) from seed
//! `LINDIFF_FUZZ_SEED` (default 29), or only case `LINDIFF_FUZZ_CASE` of
//! that seed (to replay a reported violation). `cargo xtask fuzz N SEED`
//! runs it long, in release. Fails on any panic or violation; prints the
//! report (typed errors by variant, panics, violations).

use lindiff_tests::fuzz::{run, run_case, Report};
use lindiff_tests::TestProvider;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn fuzz<P: TestProvider>(provider: &P) {
    let seed = env("LINDIFF_FUZZ_SEED", 29);
    let report = match std::env::var("LINDIFF_FUZZ_CASE").ok().and_then(|v| v.parse().ok()) {
        Some(case_no) => {
            let mut report = Report { provider: provider.name(), seed, cases: 1, ..Report::default() };
            run_case(*provider, seed, case_no, &mut report);
            report
        }
        None => run(*provider, seed, env("LINDIFF_FUZZ_CALLS", 10_000) as usize),
    };
    println!("{report}");
    assert!(report.clean(), "{report}");
}

// The host providers only (not `providers!`, whose `cuda` arm would run
// this on host-cuda, whose kernels neither scale nor test singularity:
// out of scope without a GPU to run them).
mod fuzz {
    #[test]
    fn cpu() {
        super::fuzz(&lindiff_tests::Cpu::default())
    }
    #[cfg(feature = "blas")]
    #[test]
    fn blas() {
        super::fuzz(&lindiff_tests::Blas::default())
    }
}
