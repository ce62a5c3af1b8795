//! The provider every call runs on: faer through lindiff-cpu, serial by
//! default; with the `threads` feature, batch lanes over a rayon pool of
//! [`set_threads`] workers.

use core::sync::atomic::{AtomicUsize, Ordering};
use lindiff_core::Exec;
use lindiff_cpu::{Cpu, Direct};

static THREADS: AtomicUsize = AtomicUsize::new(1);

/// Sets the team width batch calls use (1 = serial). Without the `threads`
/// feature lanes run one after another, so results are the same either way.
/// In the browser, call `initThreadPool(n)` first (threaded build only).
pub fn set_threads(threads: usize) {
    THREADS.store(threads.max(1), Ordering::Relaxed);
}

/// The team width batch calls use.
pub fn threads() -> usize {
    THREADS.load(Ordering::Relaxed)
}

/// The provider for single-matrix calls (serial: faer gets `Par::Seq`).
pub(crate) fn serial() -> Direct<Cpu> {
    Direct::new(Cpu::new())
}

/// The provider for batch calls (lanes over the pool).
pub(crate) fn batched() -> Direct<Cpu> {
    Direct::new(Cpu::with_exec(Exec::with_threads(threads())))
}
