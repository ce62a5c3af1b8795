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
//! **Call budget.** Each `CudaStaged` call is a staged device round trip
//! (allocation, memset, uploads, the op with its synchronisations,
//! downloads, free), and some suites make 10⁴–10⁶ provider calls (finite
//! differences; `cargo test --features calls`, see `calls.rs`): about 5
//! million in the combined binary. `LINDIFF_CUDA_SUITE_CALLS=N` (the device
//! check sets it) caps each suite's calls: the call past the cap answers
//! `ProviderUnavailable` ("the call budget …"), and [`run_suite`] then
//! prints `stopped at the call budget (N calls): the rest of this suite did
//! not run` and passes, whatever the suite did with that error. Every suite
//! ends with a line `cuda: <n> device calls in <t> s` (per-call cost for
//! sizing the budget).
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
            println!("cuda: {}", a.display);
        }
        LAST_UNSUPPORTED.with(|l| *l.borrow_mut() = unsupported);
    });
    result
}

/// This thread's suite call budget: calls made, the cap (`None`: none),
/// and whether a call was refused for it.
#[derive(Clone, Copy, Debug, Default)]
struct Budget {
    used: usize,
    cap: Option<usize>,
    spent: bool,
}

thread_local! {
    static BUDGET: Cell<Budget> = const { Cell::new(Budget { used: 0, cap: None, spent: false }) };
}

/// The refusal of a call past the suite's budget.
const BUDGET_SPENT: lindiff_core::Error = lindiff_core::Error::ProviderUnavailable {
    provider: "cuda",
    why: "the call budget of this suite (LINDIFF_CUDA_SUITE_CALLS) is spent",
};

/// Counts a device call against this thread's budget; `Err` once spent.
fn charge() -> Result<()> {
    BUDGET.with(|b| {
        let mut budget = b.get();
        if budget.cap.is_some_and(|cap| budget.used >= cap) {
            budget.spent = true;
            b.set(budget);
            return Err(BUDGET_SPENT);
        }
        budget.used += 1;
        b.set(budget);
        Ok(())
    })
}

/// `LINDIFF_CUDA_SUITE_CALLS`, the per-suite call cap (unset: none).
fn suite_cap() -> Option<usize> {
    std::env::var("LINDIFF_CUDA_SUITE_CALLS").ok().and_then(|v| v.parse().ok())
}

/// Whether `LINDIFF_REQUIRE_CUDA=1` (set by `host-cuda/device-check.sh run`).
fn cuda_required() -> bool {
    std::env::var("LINDIFF_REQUIRE_CUDA").is_ok_and(|v| v == "1")
}

/// The `cuda` arm of `providers!`: runs `suite` on [`CudaStaged`].
///
/// Without a GPU it prints `skipped: <reason>` (panics instead under
/// `LINDIFF_REQUIRE_CUDA=1`). When the suite panics right after the
/// device answered `Error::Unsupported` and the panic names it, prints
/// `skipped (unsupported on cuda): <error>` and returns; when the suite's
/// call budget (`LINDIFF_CUDA_SUITE_CALLS`) was spent, prints `stopped at
/// the call budget …` and returns, panic or not; every other panic is
/// resumed. Ends with `cuda: <n> device calls in <t> s`.
pub fn run_suite(suite: impl FnOnce(&CudaStaged)) {
    let provider = match CudaStaged::available() {
        Ok(p) => p,
        Err(why) if cuda_required() => {
            panic!("LINDIFF_REQUIRE_CUDA=1 but the CUDA provider is unavailable: {why}")
        }
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    LAST_UNSUPPORTED.with(|l| *l.borrow_mut() = None);
    BUDGET.with(|b| b.set(Budget { used: 0, cap: suite_cap(), spent: false }));
    let start = std::time::Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| suite(&provider)));
    let budget = BUDGET.with(|b| b.replace(Budget::default()));
    println!("cuda: {} device calls in {:.1} s", budget.used, start.elapsed().as_secs_f64());
    let stopped_at_budget = || {
        println!(
            "stopped at the call budget ({} calls, LINDIFF_CUDA_SUITE_CALLS): the rest of this suite did not run",
            budget.used
        )
    };
    let payload = match outcome {
        Ok(()) if budget.spent => return stopped_at_budget(),
        Ok(()) => return,
        Err(payload) => payload,
    };
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    match unsupported_skip(&message) {
        Some(unsupported) => {
            println!("skipped (unsupported on cuda): {unsupported}; the rest of this suite did not run")
        }
        None if budget.spent => stopped_at_budget(),
        None => std::panic::resume_unwind(payload),
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

    #[test]
    fn the_call_budget_refuses_past_the_cap_and_remembers() {
        BUDGET.with(|b| b.set(Budget { used: 0, cap: Some(2), spent: false }));
        assert!(charge().is_ok() && charge().is_ok());
        assert_eq!(charge(), Err(BUDGET_SPENT));
        let budget = BUDGET.with(|b| b.replace(Budget::default()));
        assert!(budget.spent && budget.used == 2);
        // No cap: never refused.
        assert!((0..1000).all(|_| charge().is_ok()));
        assert!(!BUDGET.with(Cell::get).spent);
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
        // SAFETY: forwarded under the caller's guarantees.
        let result = crate::counting::uncounted(|| unsafe { self.staged_run(op, inputs, outputs) });
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
