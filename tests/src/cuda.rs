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
//! whether its latest call answered `Unsupported`; when a suite then panics
//! on that error, [`run_suite`] prints `skipped (unsupported on cuda): …`
//! and passes. The rest of that suite is not run (the suites are shared
//! with the host providers and do not branch on the provider); any other
//! panic fails the test as before.

use lindiff_core::{
    Allocator, Exec, Host, HostBuffer, Input, Memory, Op, Output, Provider, Result, TensorDesc, WorkspaceReq,
};
use lindiff_cuda::{Cuda, Device, DeviceArena, DeviceBuffer};
use std::cell::RefCell;
use std::sync::OnceLock;

static CUDA: OnceLock<core::result::Result<Cuda, String>> = OnceLock::new();

fn cuda() -> core::result::Result<&'static Cuda, String> {
    CUDA.get_or_init(|| Cuda::new().map_err(|e| e.to_string())).as_ref().map_err(Clone::clone)
}

thread_local! {
    /// The `Unsupported` message of this thread's latest `CudaStaged` call,
    /// `None` when that call did not answer `Unsupported`.
    static LAST_UNSUPPORTED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Passes `result` through, remembering whether it is `Error::Unsupported`.
fn note<T>(result: Result<T>) -> Result<T> {
    let unsupported = match &result {
        Err(e @ lindiff_core::Error::Unsupported { .. }) => Some(e.to_string()),
        _ => None,
    };
    if let Some(msg) = &unsupported {
        println!("cuda: {msg}");
    }
    LAST_UNSUPPORTED.with(|l| *l.borrow_mut() = unsupported);
    result
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
/// `skipped (unsupported on cuda): <error>` and returns; every other panic
/// is resumed.
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
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| suite(&provider)));
    let Err(payload) = outcome else { return };
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    match unsupported_skip(&message) {
        Some(unsupported) => {
            println!("skipped (unsupported on cuda): {unsupported}; the rest of this suite did not run")
        }
        None => std::panic::resume_unwind(payload),
    }
}

/// The `Unsupported` error a suite's panic (`message`) stopped at: this
/// thread's latest `CudaStaged` call answered it and the panic names it.
/// `None` for every other panic. Clears the record.
fn unsupported_skip(message: &str) -> Option<String> {
    let last = LAST_UNSUPPORTED.with(|l| l.borrow_mut().take())?;
    (message.contains("Unsupported") || message.contains("unsupported")).then_some(last)
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
        // SAFETY: forwarded under the caller's guarantees.
        note(unsafe { self.staged_run(op, inputs, outputs) })
    }
}

impl CudaStaged {
    /// `run_into` proper: upload, run on the device, download.
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
        unsafe { cuda.run_into(op, &ins, &mut outs, &mut ws)? };
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
