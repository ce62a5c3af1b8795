//! A seeded fuzz of every op, primitive and composite on a host provider:
//! random options, shapes (empty and degenerate ones too) and value
//! classes ([`values::Class`]: normal, integer, rank-deficient, NaN/±∞, ±0,
//! ≈1e±300, ≈1e−305, subnormal) in all four float dtypes, each case run
//! through the direct face, `call::run_into` with caller buffers (prefilled
//! with garbage) and the eager face's gradient, every run under
//! `catch_unwind`. Each `Ok` is checked ([`check`]), inputs must come back
//! unchanged, and the report counts the typed errors by variant, the
//! panics and the violations — each named with its seed and case number,
//! which [`run_case`] replays.
//!
//! `tests/tests/fuzz.rs` runs it in `cargo test` (10 000 calls per
//! provider by default), `cargo xtask fuzz N SEED` for long runs.

pub mod cases;
pub mod check;
mod paths;
pub mod values;

use crate::dense::Rng;
use crate::TestProvider;
use cases::{case, targets};
use lindiff_core::{Element, Scalar};
use num_complex::Complex;
use std::collections::BTreeMap;
use std::fmt;

/// What one run of a case through one path gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// `Ok`, checked.
    Ok,
    /// A typed error (its variant).
    Error(&'static str),
    /// A panic (its message).
    Panic(String),
    /// An `Ok` that failed a check (what).
    Violation(String),
}

/// The counts of a fuzz run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Provider name.
    pub provider: &'static str,
    /// The seed.
    pub seed: u64,
    /// Cases drawn.
    pub cases: u64,
    /// Calls made (a case runs through up to three paths).
    pub calls: usize,
    /// `Ok` results that passed their checks.
    pub ok: usize,
    /// Typed errors by variant.
    pub errors: BTreeMap<&'static str, usize>,
    /// Calls per path.
    pub paths: BTreeMap<&'static str, usize>,
    /// Calls per dtype.
    pub dtypes: BTreeMap<&'static str, usize>,
    /// Panics: "case N (dtype, path, target): message".
    pub panics: Vec<String>,
    /// Violations: "case N (dtype, path, target): what".
    pub violations: Vec<String>,
}

impl Report {
    fn note(
        &mut self,
        case_no: u64,
        dtype: &'static str,
        path: &'static str,
        target: &str,
        outcome: Outcome,
    ) {
        self.calls += 1;
        *self.paths.entry(path).or_default() += 1;
        *self.dtypes.entry(dtype).or_default() += 1;
        let at = format!("seed {} case {case_no} ({dtype}, {path}, {target})", self.seed);
        match outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::Error(kind) => *self.errors.entry(kind).or_default() += 1,
            Outcome::Panic(msg) => self.panics.push(format!("{at}: {msg}")),
            Outcome::Violation(what) => self.violations.push(format!("{at}: {what}")),
        }
    }

    /// `true` with no panic and no violation.
    pub fn clean(&self) -> bool {
        self.panics.is_empty() && self.violations.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let errors: usize = self.errors.values().sum();
        writeln!(
            f,
            "fuzz {} seed {}: {} cases, {} calls — {} ok, {} typed errors, {} panics, {} violations",
            self.provider,
            self.seed,
            self.cases,
            self.calls,
            self.ok,
            errors,
            self.panics.len(),
            self.violations.len()
        )?;
        let list = |m: &BTreeMap<&'static str, usize>| {
            m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
        };
        writeln!(f, "  paths: {}", list(&self.paths))?;
        writeln!(f, "  dtypes: {}", list(&self.dtypes))?;
        writeln!(f, "  typed errors: {}", list(&self.errors))?;
        for p in self.panics.iter().take(20) {
            writeln!(f, "  PANIC {p}")?;
        }
        for v in self.violations.iter().take(40) {
            writeln!(f, "  VIOLATION {v}")?;
        }
        Ok(())
    }
}

/// The generator of case `case_no` of `seed` (independent of every other
/// case, so one replays alone).
fn case_rng(seed: u64, case_no: u64) -> Rng {
    Rng::new(seed ^ case_no.wrapping_mul(0xD1B5_4A32_D192_ED03).rotate_left(17) ^ 0x5851_F42D)
}

/// The largest matrix dim a case draws.
pub const MAX_DIM: usize = 12;

/// Runs case `case_no` of `seed` on `provider` into `report`.
pub fn run_case<P: TestProvider>(provider: P, seed: u64, case_no: u64, report: &mut Report) {
    run_case_small(provider, seed, case_no, MAX_DIM, report);
}

/// [`run_case`] with dims at most `max_dim` (a smaller case for slow
/// interpreters: `tests/tests/miri_kernels.rs`).
pub fn run_case_small<P: TestProvider>(
    provider: P,
    seed: u64,
    case_no: u64,
    max_dim: usize,
    report: &mut Report,
) {
    let mut rng = case_rng(seed, case_no);
    let all = targets();
    let target = &all[(rng.uniform() * all.len() as f64) as usize];
    let at = (case_no, max_dim);
    match (rng.uniform() * 4.0) as usize {
        0 => one::<f64, P>(provider, &mut rng, target, at, "f64", report),
        1 => one::<f32, P>(provider, &mut rng, target, at, "f32", report),
        2 => one::<Complex<f64>, P>(provider, &mut rng, target, at, "c64", report),
        _ => one::<Complex<f32>, P>(provider, &mut rng, target, at, "c32", report),
    }
}

fn one<T: Scalar + Element, P: TestProvider>(
    provider: P,
    rng: &mut Rng,
    target: &cases::Target,
    (case_no, max_dim): (u64, usize),
    dtype: &'static str,
    report: &mut Report,
) where
    <T as Scalar>::Real: Element,
{
    let Some(c) = case::<T>(rng, target, max_dim) else { return };
    let args: Vec<String> =
        c.args.iter().map(|a| format!("{:?} {:?} 2^{}", a.dims, a.class, a.exponent)).collect();
    let name = format!("{} on {}", c.target.name(), args.join(", "));
    for (path, outcome) in paths::run_all(provider, &c) {
        report.note(case_no, dtype, path, &name, outcome);
    }
}

/// Runs cases from 0 until at least `calls` calls were made on `provider`,
/// with panic messages kept out of the output (they are in the report).
pub fn run<P: TestProvider>(provider: P, seed: u64, calls: usize) -> Report {
    let mut report = Report { provider: provider.name(), seed, ..Report::default() };
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut case_no = 0;
    while report.calls < calls {
        run_case(provider, seed, case_no, &mut report);
        case_no += 1;
    }
    std::panic::set_hook(hook);
    report.cases = case_no;
    report
}
