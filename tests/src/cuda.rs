//! **A test harness, not a host fallback.** [`CudaStaged`] lets the
//! host-memory conformance suites (`P: TestProvider`, i.e.
//! `Provider<Memory = Host>`) run on the CUDA provider: each call uploads
//! its inputs to device memory, runs `lindiff_cuda::Cuda` there (same op,
//! same descriptors, a device workspace of the size `Cuda::workspace`
//! asks for) and downloads the outputs into the caller's host buffers. The
//! library itself never copies to the host to compute; this adapter exists
//! only so that the same suites check the device results.
//!
//! The provider is one process-wide `Cuda` (a `OnceLock`), so
//! `CudaStaged` is `Copy + Default` like the host providers. Without a GPU
//! [`CudaStaged::available`] returns the reason and the `cuda` arm of
//! `providers!` ([`run_suite`]) prints `skipped: <reason>` — or panics when
//! `LINDIFF_REQUIRE_CUDA=1` (the device check sets it, so an all-skipped
//! run fails).
//!
//! **Ops the device does not run.** `Cuda::workspace` answers
//! `Error::Unsupported` for full_piv_lu*, rank_revealing_qr, householder_*
//! and adjugate (lindiff-cuda's table). `CudaStaged` remembers, per thread,
//! the `Unsupported` error its latest call answered (its `Display` and
//! `Debug` text); when a suite then panics with a message containing
//! either — `panic!("{e}")`, `panic!("{e:?}")`, `.unwrap()`, `.expect(…)` —
//! [`run_suite`] prints `skipped (unsupported on cuda): …` and passes. The
//! rest of that suite is not run (the suites are shared with the host
//! providers and do not branch on the provider); any other panic fails the
//! test as before.
//!
//! **Budgets.** Each `CudaStaged` call is a staged device round trip
//! (allocation, memset, uploads, the op with its synchronisations,
//! downloads, free), and some suites make 10⁴–10⁶ provider calls (finite
//! differences; `cargo test --features calls`, see `calls.rs`). Three
//! limits, all off unless set (the device check sets the first two):
//!
//! * `LINDIFF_CUDA_SUITE_SECONDS=S`: a suite whose own time in staged device
//!   calls reached `S` seconds is refused further calls ("stopped at the
//!   suite budget"). The staged calls are serialised (one at a time in the
//!   process) and timed inside that lock, so the time is the device work,
//!   not the wait for another test thread's call.
//! * `LINDIFF_CUDA_DEADLINE_S=S`: a process-wide deadline, `S` seconds after
//!   the process's first device call; every call after it is refused
//!   ("stopped at the deadline"), so a binary ends on its own before the
//!   device check's `timeout` kills it.
//! * `LINDIFF_CUDA_SUITE_CALLS=N`: a fixed cap of `N` calls per suite
//!   ("stopped at the call budget"), an optional override.
//!
//! The first refused call of a suite panics with the payload [`BudgetStop`]
//! (`std::panic::panic_any`), whatever the suite would do with an error;
//! later refusals (a suite that caught the panic) answer
//! `ProviderUnavailable`. [`run_suite`] passes a stopped suite only when it
//! ended `Ok` or with that very payload ([`verdict`]): a suite that failed
//! for another reason fails, before or after the budget was spent. Every
//! suite ends with `<test>: cuda: <n> device calls in <t> s` (`t`: the time
//! in the staged calls; `<test>` is libtest's thread name).
//!
//! **The finite-difference reference runs on the host.** On the cuda arm
//! [`run_suite`] marks the suite's thread
//! ([`reference::on_host`](crate::reference::on_host)), and the AD
//! harness's finite differences (`ad::finite_difference`, which
//! `closest_difference` and the entrywise gradient check call) evaluate the
//! loss on host-cpu instead of on the device: they are the reference, not
//! the code under test, and they were most of the suites' calls. The
//! forward values, forward mode, the eager and traced gradients and jvps
//! still run on the device.
//!
//! **Allocation counts.** The staging (device allocation, upload,
//! download, the adapter's `Vec`s) runs inside
//! [`counting::uncounted`](crate::counting::uncounted), the provider's
//! `run_into` inside [`counted`](crate::counting::counted): a counting
//! test on the `cuda` arm measures lindiff-cuda's own host allocations per
//! call (kernel names, cudarc's launch argument lists, host scratch), which
//! are not zero; the suites print that count for `cuda` instead of
//! asserting zero.

use lindiff_core::{
    Allocator, Exec, Host, HostBuffer, Input, Memory, Op, Output, Provider, Result, TensorDesc, WorkspaceReq,
};
use lindiff_cuda::{Cuda, Device, DeviceArena, DeviceBuffer};
use std::cell::{Cell, RefCell};
use std::sync::OnceLock;

static CUDA: OnceLock<core::result::Result<Cuda, String>> = OnceLock::new();

/// Serialises the staged calls (see `run_into`).
static STAGE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The process's provider, or why there is none (with NVRTC's log when the
/// kernels did not compile).
fn cuda() -> core::result::Result<&'static Cuda, String> {
    CUDA.get_or_init(|| {
        Cuda::new().map_err(|e| match lindiff_cuda::compile_log() {
            Some(log) => format!("{e}\nNVRTC log:\n{log}"),
            None => e.to_string(),
        })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The `Display` and `Debug` texts of an `Unsupported` answer.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Answered {
    display: String,
    debug: String,
}

thread_local! {
    /// The `Unsupported` error of this thread's latest `CudaStaged` call,
    /// `None` when that call did not answer `Unsupported`.
    static LAST_UNSUPPORTED: RefCell<Option<Answered>> = const { RefCell::new(None) };
}

/// Passes `result` through, remembering whether it is `Error::Unsupported`.
fn note<T>(result: Result<T>) -> Result<T> {
    crate::counting::uncounted(|| {
        let unsupported = match &result {
            Err(e @ lindiff_core::Error::Unsupported { .. }) => {
                Some(Answered { display: e.to_string(), debug: format!("{e:?}") })
            }
            _ => None,
        };
        if let Some(a) = &unsupported {
            println!("{}: cuda: {}", test_name(), a.display);
        }
        LAST_UNSUPPORTED.with(|l| *l.borrow_mut() = unsupported);
    });
    result
}

/// Why a suite's calls were refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// `LINDIFF_CUDA_SUITE_CALLS`: this many calls were made.
    Calls(usize),
    /// `LINDIFF_CUDA_SUITE_SECONDS`: this many seconds of staged calls.
    Seconds(f64),
    /// `LINDIFF_CUDA_DEADLINE_S`: this many seconds after the first call.
    Deadline(f64),
}

impl core::fmt::Display for Stop {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Stop::Calls(n) => write!(f, "stopped at the call budget ({n} calls, LINDIFF_CUDA_SUITE_CALLS)"),
            Stop::Seconds(s) => {
                write!(f, "stopped at the suite budget ({s} s of device calls, LINDIFF_CUDA_SUITE_SECONDS)")
            }
            Stop::Deadline(s) => {
                write!(
                    f,
                    "stopped at the deadline ({s} s after the first device call, LINDIFF_CUDA_DEADLINE_S)"
                )
            }
        }
    }
}

/// The panic payload of a suite's first refused call (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetStop(pub Stop);

/// This thread's suite budget: calls made, their staged time, the caps
/// (`None`: none), and why a call was refused (`None`: none was).
#[derive(Clone, Copy, Debug, Default)]
struct Budget {
    used: usize,
    seconds: f64,
    calls_cap: Option<usize>,
    seconds_cap: Option<f64>,
    spent: Option<Stop>,
}

impl Budget {
    const NONE: Budget = Budget { used: 0, seconds: 0.0, calls_cap: None, seconds_cap: None, spent: None };

    /// Why the next call is refused, if it is.
    fn refusal(&self) -> Option<Stop> {
        if let Some(cap) = self.calls_cap.filter(|&cap| self.used >= cap) {
            return Some(Stop::Calls(cap));
        }
        self.seconds_cap.filter(|&cap| self.seconds >= cap).map(Stop::Seconds)
    }
}

thread_local! {
    static BUDGET: Cell<Budget> = const { Cell::new(Budget::NONE) };
}

/// The refusal of a call past the suite's budget or the deadline, after
/// the first (which panics with [`BudgetStop`]).
const BUDGET_SPENT: lindiff_core::Error = lindiff_core::Error::ProviderUnavailable {
    provider: "cuda",
    why: "this suite's device budget (LINDIFF_CUDA_SUITE_SECONDS / _CALLS) or the process's deadline \
          (LINDIFF_CUDA_DEADLINE_S) is spent",
};

/// The process's deadline: `LINDIFF_CUDA_DEADLINE_S` seconds after the
/// first device call (set by that call), with its length.
static DEADLINE: OnceLock<Option<(std::time::Instant, f64)>> = OnceLock::new();

/// `Some(Stop::Deadline)` once the process's deadline has passed.
fn deadline_passed() -> Option<Stop> {
    let deadline = DEADLINE.get_or_init(|| {
        env_number("LINDIFF_CUDA_DEADLINE_S")
            .map(|s: f64| (std::time::Instant::now() + std::time::Duration::from_secs_f64(s.max(0.0)), s))
    });
    deadline.filter(|(at, _)| std::time::Instant::now() >= *at).map(|(_, s)| Stop::Deadline(s))
}

/// Counts a device call against this thread's budget. The first refused
/// call panics with [`BudgetStop`]; later ones answer [`BUDGET_SPENT`].
fn charge() -> Result<()> {
    let refused = BUDGET.with(|b| {
        let mut budget = b.get();
        let stop = budget.refusal().or_else(deadline_passed);
        let first = stop.is_some() && budget.spent.is_none();
        match stop {
            Some(stop) => budget.spent = budget.spent.or(Some(stop)),
            None => budget.used += 1,
        }
        b.set(budget);
        stop.map(|stop| (stop, first))
    });
    match refused {
        None => Ok(()),
        Some((stop, true)) => std::panic::panic_any(BudgetStop(stop)),
        Some((_, false)) => Err(BUDGET_SPENT),
    }
}

/// Adds a staged call's time to this thread's budget.
fn spend(seconds: f64) {
    BUDGET.with(|b| {
        let mut budget = b.get();
        budget.seconds += seconds;
        b.set(budget);
    });
}

/// An environment variable parsed as a number (unset or unparsable: `None`).
fn env_number<T: core::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Whether `LINDIFF_REQUIRE_CUDA=1` (set by `host-cuda/device-check.sh run`).
fn cuda_required() -> bool {
    std::env::var("LINDIFF_REQUIRE_CUDA").is_ok_and(|v| v == "1")
}

/// The test running on this thread (libtest names the thread after it).
fn test_name() -> String {
    std::thread::current().name().unwrap_or("?").to_owned()
}

/// Installs (once) a panic hook that prints nothing for a [`BudgetStop`]
/// (the suite's `stopped at …` line says it) and defers to the previous
/// hook for every other panic.
fn quiet_budget_stops() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<BudgetStop>() {
                previous(info);
            }
        }));
    });
}

/// What [`run_suite`] makes of a suite's end.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// It ran to the end within its budgets.
    Pass,
    /// Its budget or the deadline stopped it: passes, saying so.
    Stopped(Stop),
    /// It stopped at an op the device answers `Unsupported`: passes, saying so.
    Unsupported(String),
    /// Any other panic: the test fails (the panic is resumed).
    Fail,
}

/// The decision of [`run_suite`]: `outcome` is the suite's result, `spent`
/// why a call was refused (if one was), `unsupported` the skip rule
/// ([`unsupported_skip`]) applied to a panic's message. A spent budget is
/// accepted only when the suite ended `Ok` or with the [`BudgetStop`]
/// payload; a failure for any other reason fails, whenever it happened.
pub fn verdict(
    outcome: &std::thread::Result<()>,
    spent: Option<Stop>,
    unsupported: impl FnOnce(&str) -> Option<String>,
) -> Verdict {
    let payload = match outcome {
        Ok(()) => return spent.map_or(Verdict::Pass, Verdict::Stopped),
        Err(payload) => payload,
    };
    if let Some(BudgetStop(stop)) = payload.downcast_ref::<BudgetStop>() {
        return Verdict::Stopped(*stop);
    }
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    unsupported(&message).map_or(Verdict::Fail, Verdict::Unsupported)
}

/// The `cuda` arm of `providers!`: runs `suite` on [`CudaStaged`].
///
/// Without a GPU it prints `skipped: <reason>` (panics instead under
/// `LINDIFF_REQUIRE_CUDA=1`). Otherwise runs the suite with its finite-
/// difference reference on the host and under the budgets of the module
/// docs, and decides by [`verdict`]: prints `skipped (unsupported on
/// cuda): <error>` or `stopped at …` and returns, or resumes the panic.
/// Ends with `<test>: cuda: <n> device calls in <t> s`. Every line starts
/// with the test's name.
pub fn run_suite(suite: impl FnOnce(&CudaStaged)) {
    let name = test_name();
    let provider = match CudaStaged::available() {
        Ok(p) => p,
        Err(why) if cuda_required() => {
            panic!("{name}: LINDIFF_REQUIRE_CUDA=1 but the CUDA provider is unavailable: {why}")
        }
        Err(why) => {
            println!("{name}: skipped: {why}");
            return;
        }
    };
    quiet_budget_stops();
    LAST_UNSUPPORTED.with(|l| *l.borrow_mut() = None);
    BUDGET.with(|b| {
        b.set(Budget {
            calls_cap: env_number("LINDIFF_CUDA_SUITE_CALLS"),
            seconds_cap: env_number("LINDIFF_CUDA_SUITE_SECONDS"),
            ..Budget::NONE
        })
    });
    let start = std::time::Instant::now();
    let outcome = crate::reference::on_host(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| suite(&provider)))
    });
    let budget = BUDGET.with(|b| b.replace(Budget::NONE));
    println!(
        "{name}: cuda: {} device calls in {:.2} s (suite: {:.2} s)",
        budget.used,
        budget.seconds,
        start.elapsed().as_secs_f64()
    );
    match verdict(&outcome, budget.spent, unsupported_skip) {
        Verdict::Pass => {}
        Verdict::Stopped(stop) => println!("{name}: {stop}: the rest of this suite did not run"),
        Verdict::Unsupported(error) => {
            println!("{name}: skipped (unsupported on cuda): {error}; the rest of this suite did not run")
        }
        Verdict::Fail => {
            if let Some(stop) = budget.spent {
                println!("{name}: failed ({stop} came after the failure's cause or was caught by the suite)");
            }
            std::panic::resume_unwind(outcome.expect_err("a failure is a panic"))
        }
    }
}

/// The `Unsupported` error a suite's panic (`message`) stopped at: this
/// thread's latest `CudaStaged` call answered it and the panic names it.
/// `None` for every other panic. Clears the record.
fn unsupported_skip(message: &str) -> Option<String> {
    let last = LAST_UNSUPPORTED.with(|l| l.borrow_mut().take())?;
    (message.contains(&last.display) || message.contains(&last.debug)).then_some(last.display)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsupported() -> lindiff_core::Error {
        lindiff_core::Error::Unsupported {
            op: "full_piv_lu",
            provider: "cuda",
            why: "cuSOLVER has no full-pivot LU",
        }
    }

    #[test]
    fn display_and_debug_panics_on_the_unsupported_answer_are_skips() {
        // `panic!("{e}")`, as ~20 suite sites do (e.g. ad_support.rs).
        let err = note::<()>(Err(unsupported())).unwrap_err();
        let panic = format!("{err}");
        assert!(panic.starts_with("full_piv_lu: not supported by provider cuda"), "{panic}");
        assert!(unsupported_skip(&panic).is_some_and(|m| m.contains("full_piv_lu")));
        // `panic!("{e:?}")`.
        let err = note::<()>(Err(unsupported())).unwrap_err();
        assert!(unsupported_skip(&format!("{err:?}")).is_some_and(|m| m.contains("full_piv_lu")));
        // A suite's own context around either form.
        let err = note::<()>(Err(unsupported())).unwrap_err();
        assert!(unsupported_skip(&format!("n = 4: {err}")).is_some());
    }

    #[test]
    fn a_panic_on_another_error_is_no_skip() {
        // The latest call answered Unsupported, but the suite panicked on
        // another error (Display or Debug form): no skip.
        let _ = note::<()>(Err(unsupported()));
        let other = lindiff_core::Error::NonFinite { op: "lu", arg: "a", batch_index: 0 };
        assert_eq!(unsupported_skip(&format!("{other}")), None);
        let _ = note::<()>(Err(unsupported()));
        assert_eq!(unsupported_skip(&format!("{other:?}")), None);
        // Another Unsupported error than the one answered (another op).
        let _ = note::<()>(Err(unsupported()));
        let adjugate =
            lindiff_core::Error::Unsupported { op: "adjugate", provider: "cuda", why: "not written" };
        assert_eq!(unsupported_skip(&format!("{adjugate}")), None);
        // The panic names the error, but the latest call was not it.
        let err = note::<()>(Err(unsupported())).unwrap_err();
        let _ = note::<()>(Err(other));
        assert_eq!(unsupported_skip(&format!("{err}")), None);
    }

    /// Runs `f` as a suite would (caught), with `budget` on this thread.
    fn caught(budget: Budget, f: impl FnOnce()) -> (std::thread::Result<()>, Budget) {
        BUDGET.with(|b| b.set(budget));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        (outcome, BUDGET.with(|b| b.replace(Budget::NONE)))
    }

    #[test]
    fn the_first_refused_call_panics_with_budget_stop_and_later_ones_err() {
        let cap = Budget { calls_cap: Some(2), ..Budget::NONE };
        let (outcome, budget) = caught(cap, || {
            assert!(charge().is_ok() && charge().is_ok());
            let _ = charge();
            unreachable!("the third call panics");
        });
        let payload = outcome.unwrap_err();
        assert_eq!(payload.downcast_ref::<BudgetStop>(), Some(&BudgetStop(Stop::Calls(2))));
        assert_eq!((budget.used, budget.spent), (2, Some(Stop::Calls(2))));
        // A suite that caught the panic: later calls answer the error.
        let (outcome, budget) = caught(cap, || {
            assert!(charge().is_ok() && charge().is_ok());
            assert!(std::panic::catch_unwind(charge).is_err());
            assert_eq!(charge(), Err(BUDGET_SPENT));
        });
        assert!(outcome.is_ok() && budget.spent == Some(Stop::Calls(2)));
        // The seconds budget: refused once the staged time reached it.
        let (outcome, budget) = caught(Budget { seconds_cap: Some(0.5), ..Budget::NONE }, || {
            assert!(charge().is_ok());
            spend(0.3);
            assert!(charge().is_ok());
            spend(0.3);
            let _ = charge();
        });
        assert!(outcome.unwrap_err().is::<BudgetStop>());
        assert_eq!((budget.used, budget.spent), (2, Some(Stop::Seconds(0.5))));
        // No cap: never refused (the deadline is unset in the unit tests).
        let (outcome, budget) = caught(Budget::NONE, || assert!((0..1000).all(|_| charge().is_ok())));
        assert!(outcome.is_ok() && budget.spent.is_none() && budget.used == 1000);
    }

    #[test]
    fn the_verdict_accepts_a_spent_budget_only_for_ok_or_budget_stop() {
        let never = |_: &str| -> Option<String> { None };
        let boxed = |p: Box<dyn std::any::Any + Send>| -> std::thread::Result<()> { Err(p) };
        let stop = Some(Stop::Seconds(1.0));
        // Ok: passes, or stopped when a call was refused (and caught).
        assert_eq!(verdict(&Ok(()), None, never), Verdict::Pass);
        assert_eq!(verdict(&Ok(()), stop, never), Verdict::Stopped(Stop::Seconds(1.0)));
        // The BudgetStop payload: stopped.
        let budget_stop = boxed(Box::new(BudgetStop(Stop::Deadline(100.0))));
        assert_eq!(
            verdict(&budget_stop, Some(Stop::Deadline(100.0)), never),
            Verdict::Stopped(Stop::Deadline(100.0))
        );
        // A panic on the latest Unsupported answer: skipped.
        let unsupported = boxed(Box::new("householder_qr: not supported by provider cuda".to_owned()));
        assert_eq!(
            verdict(&unsupported, None, |m| m
                .contains("householder_qr")
                .then(|| "householder_qr".to_owned())),
            Verdict::Unsupported("householder_qr".to_owned())
        );
        // A real failure after the budget was spent (its cause earlier, or a
        // suite that swallowed the refusal): fails.
        let failure = || boxed(Box::new("assertion failed: err <= tol".to_owned()));
        assert_eq!(verdict(&failure(), stop, never), Verdict::Fail);
        // … and before it: fails.
        assert_eq!(verdict(&failure(), None, never), Verdict::Fail);
        let str_failure = boxed(Box::new("index out of bounds"));
        assert_eq!(verdict(&str_failure, None, never), Verdict::Fail);
    }

    #[test]
    fn only_a_panic_on_the_latest_unsupported_answer_is_a_skip() {
        let err = note::<()>(Err(unsupported())).unwrap_err();
        let panic = format!("called `Result::unwrap()` on an `Err` value: {err:?}");
        assert!(unsupported_skip(&panic).is_some_and(|m| m.contains("full_piv_lu")));
        // The record is cleared by a later successful call …
        let _ = note::<()>(Err(unsupported()));
        let _ = note(Ok(()));
        assert_eq!(unsupported_skip(&panic), None);
        // … and a panic that does not name it (a failed check) is no skip.
        let _ = note::<()>(Err(unsupported()));
        assert_eq!(unsupported_skip("assertion failed: err <= tol"), None);
        assert_eq!(unsupported_skip(&panic), None, "the record was taken");
    }
}

/// The staging adapter (see the module docs). Every method fails with the
/// reason when there is no GPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct CudaStaged;

impl CudaStaged {
    /// The adapter when a GPU is usable, else why not.
    ///
    /// # Errors
    /// The `Cuda::new` message (e.g. "no CUDA driver library (libcuda.so)
    /// found").
    pub fn available() -> core::result::Result<CudaStaged, String> {
        cuda().map(|_| CudaStaged)
    }

    fn provider() -> Result<&'static Cuda> {
        cuda()
            .map_err(|_| lindiff_core::Error::ProviderUnavailable { provider: "cuda", why: "no usable GPU" })
    }
}

impl crate::TestProvider for CudaStaged {
    fn with_exec(_exec: Exec) -> Self {
        CudaStaged
    }
}

/// Bytes of a region rounded up so the next one starts 256-aligned.
fn slot(bytes: usize) -> usize {
    bytes.div_ceil(256) * 256 + 256
}

impl Provider for CudaStaged {
    type Memory = Host;

    fn name(&self) -> &'static str {
        "cuda"
    }

    fn exec(&self) -> Exec {
        Exec::serial()
    }

    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        // The host workspace is unused: the device one is sized again in
        // `run_into`. Ask the device provider so unsupported ops fail here.
        note(Self::provider()?.workspace(op, inputs).map(|_| WorkspaceReq::EMPTY))
    }

    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Host>],
        outputs: &mut [Option<Output<'_, 'm, Host>>],
        _workspace: &mut HostBuffer<'m>,
    ) -> Result<()> {
        if let Err(e) = charge() {
            return note(Err(e));
        }
        // One staged call at a time, timed inside the lock: the suite's
        // budget counts its own device work, not the wait for another
        // thread's call (the device runs one at a time anyway).
        let _stage = STAGE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let start = std::time::Instant::now();
        // SAFETY: forwarded under the caller's guarantees.
        let result = crate::counting::uncounted(|| unsafe { self.staged_run(op, inputs, outputs) });
        spend(start.elapsed().as_secs_f64());
        note(result)
    }
}

impl CudaStaged {
    /// `run_into` proper: upload, run on the device, download. Called
    /// inside `counting::uncounted`; only the provider's `run_into` is
    /// counted.
    ///
    /// # Safety
    /// As [`Provider::run_into`].
    unsafe fn staged_run<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Host>],
        outputs: &mut [Option<Output<'_, 'm, Host>>],
    ) -> Result<()> {
        let cuda = Self::provider()?;
        let descs: Vec<&TensorDesc> = inputs.iter().map(|i| i.desc).collect();
        let ws_req = cuda.workspace(op, &descs)?;
        let total: usize = inputs.iter().map(|i| slot(i.data.bytes().len())).sum::<usize>()
            + outputs.iter().flatten().map(|o| slot(o.buffer.len())).sum::<usize>()
            + slot(ws_req.bytes());
        let mut memory = cuda.alloc(total)?;
        let mut arena = DeviceArena::new(&mut memory);
        let mut device_inputs: Vec<DeviceBuffer<'_>> = Vec::new();
        for input in inputs {
            let bytes = input.data.bytes();
            let mut buf = arena.allocate(WorkspaceReq::new(bytes.len(), 256))?;
            cuda.upload_bytes(bytes, &mut buf)?;
            device_inputs.push(buf);
        }
        let mut device_outputs: Vec<Option<DeviceBuffer<'_>>> = Vec::new();
        for out in outputs.iter() {
            device_outputs.push(match out {
                Some(o) => Some(arena.allocate(WorkspaceReq::new(o.buffer.len(), 256))?),
                None => None,
            });
        }
        let mut ws = arena.allocate(ws_req)?;
        let ins: Vec<Input<'_, Device>> = inputs
            .iter()
            .zip(&device_inputs)
            .map(|(i, d)| Input { desc: i.desc, data: Device::data(d).expect("uploaded") })
            .collect();
        let mut outs: Vec<Option<Output<'_, '_, Device>>> = outputs
            .iter()
            .zip(device_outputs.iter_mut())
            .map(|(o, d)| match (o, d) {
                (Some(o), Some(d)) => Some(Output { meta: o.meta, buffer: d }),
                _ => None,
            })
            .collect();
        // SAFETY: the host call passed core's checks; the device buffers
        // have the host buffers' sizes at 256-byte alignment, the inputs
        // keep their descriptors over byte-identical copies, and the
        // workspace is what `Cuda::workspace` asked for.
        crate::counting::counted(|| unsafe { cuda.run_into(op, &ins, &mut outs, &mut ws) })?;
        drop(outs);
        for (out, dev) in outputs.iter_mut().zip(&device_outputs) {
            if let (Some(out), Some(dev)) = (out, dev) {
                let mut host = vec![0u8; out.buffer.len()];
                let data = Device::data(dev).ok_or(lindiff_core::Error::ProviderUnavailable {
                    provider: "cuda",
                    why: "the device provider left an output unwritten",
                })?;
                cuda.download_bytes(data, &mut host)?;
                // SAFETY: only initialised bytes are stored, and the whole
                // buffer is declared initialised after it is written.
                unsafe {
                    let dst = out.buffer.as_uninit_bytes_mut();
                    for (d, s) in dst.iter_mut().zip(&host) {
                        d.write(*s);
                    }
                    out.buffer.assume_init_prefix(host.len());
                }
            }
        }
        Ok(())
    }
}
