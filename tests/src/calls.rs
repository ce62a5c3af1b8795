//! Counting provider calls (feature `calls`, off by default): the
//! `calls` arm of [`providers!`](crate::providers) runs each suite on
//! [`Counted`]`<Cpu>` and prints `calls: <suite>: <n> run_into calls`.
//! Each such call is one staged device call on the `cuda` arm (device
//! allocation, memset, uploads, the op, a synchronisation, downloads, free),
//! so the counts size `host-cuda/device-check.sh`'s suite time budgets:
//!
//! ```text
//! cargo test --release -p lindiff-tests --no-default-features --features cuda,calls \
//!     --test cuda_conformance -- ::calls --test-threads=1 --nocapture | grep '^calls:'
//! ```
//!
//! Counts are process-wide, so run with `--test-threads=1`. Each line also
//! says how many of the calls were the finite-difference reference
//! (`reference.rs`), which the `cuda` arm runs on host-cpu: the rest is what
//! the device gets. Measured before the finite differences moved to the host: about 5.0
//! million calls in `cuda_conformance`, 704 in `prims`, 410 in `ad_program`
//! (the finite-difference reference, which runs on the host, was most of
//! them). These are host-cpu's counts; on `cuda` an `Unsupported` op ends a
//! suite earlier. The device check therefore also limits each suite's
//! device time (`LINDIFF_CUDA_SUITE_SECONDS`, see `cuda.rs`).

use crate::TestProvider;
use lindiff_core::{Exec, Host, HostBuffer, Input, Op, Output, Provider, Result, TensorDesc, WorkspaceReq};
use std::sync::atomic::{AtomicUsize, Ordering};

static CALLS: AtomicUsize = AtomicUsize::new(0);
/// The calls made by the finite-difference reference (`reference.rs`),
/// which the `cuda` arm runs on host-cpu instead of the device.
static REFERENCE_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `P` with every `run_into` counted (process-wide).
#[derive(Clone, Copy, Debug, Default)]
pub struct Counted<P>(pub P);

impl<P: TestProvider> Provider for Counted<P> {
    type Memory = Host;

    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn exec(&self) -> Exec {
        self.0.exec()
    }

    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        self.0.workspace(op, inputs)
    }

    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Host>],
        outputs: &mut [Option<Output<'_, 'm, Host>>],
        workspace: &mut HostBuffer<'m>,
    ) -> Result<()> {
        CALLS.fetch_add(1, Ordering::Relaxed);
        if crate::reference::inside() {
            REFERENCE_CALLS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded under the caller's guarantees.
        unsafe { self.0.run_into(op, inputs, outputs, workspace) }
    }
}

impl<P: TestProvider> TestProvider for Counted<P> {
    fn with_exec(exec: Exec) -> Self {
        Counted(P::with_exec(exec))
    }
}

/// The `calls` arm: runs `suite` on `Counted<Cpu>` and prints its count.
pub fn run_suite(name: &str, suite: impl FnOnce(&Counted<crate::Cpu>)) {
    let before = (CALLS.load(Ordering::Relaxed), REFERENCE_CALLS.load(Ordering::Relaxed));
    suite(&Counted::default());
    // libtest names the test's thread after the test (`file::suite::calls`).
    let test = std::thread::current().name().map_or_else(|| name.to_owned(), str::to_owned);
    let all = CALLS.load(Ordering::Relaxed) - before.0;
    let reference = REFERENCE_CALLS.load(Ordering::Relaxed) - before.1;
    println!(
        "calls: {test}: {all} run_into calls, {reference} of them finite-difference reference, {} on the device",
        all - reference
    );
}
