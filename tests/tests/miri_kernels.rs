//! host-cpu's unsafe code end to end at small sizes, for Miri
//! (`cargo xtask miri`): fuzz cases (`tests/src/fuzz`) with dims ≤ 3 —
//! every op family, primitive and composite over a few hundred cases —
//! through the direct face (its pool), `call::run_into` with caller
//! buffers and the eager gradient, each `Ok` checked as in the fuzz. Under
//! Miri the kernels take their portable paths (Miri's x86-64 target has no
//! AVX2, so neither faer's runtime-dispatched SIMD nor lindiff's AVX2
//! copies run). In a plain `cargo test` it is one more small fuzz run.
//! `LINDIFF_MIRI_CASES` sets the count (default 200).

use lindiff_tests::fuzz::{run_case_small, Report};
use lindiff_tests::Cpu;

#[test]
fn every_op_at_small_sizes() {
    let cases = std::env::var("LINDIFF_MIRI_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200u64);
    let mut report = Report { provider: "cpu", seed: 7, cases, ..Report::default() };
    for case_no in 0..cases {
        run_case_small(Cpu::default(), 7, case_no, 3, &mut report);
    }
    println!("{report}");
    assert!(report.clean(), "{report}");
}
