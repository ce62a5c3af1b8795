//! A counting global allocator for allocation tests. Counts are per thread,
//! so tests running in parallel in one binary cannot pollute each other.
//!
//! A test binary installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;` and measures with
//! [`count`]. [`uncounted`] leaves a test harness's own allocations out
//! (the CUDA staging adapter wraps its uploads and downloads in it, and its
//! provider call in [`counted`]), so a count is the provider's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to the system allocator and counts allocations on threads that
/// are inside [`count`].
pub struct Counting;

thread_local! {
    // `None`: not counting on this thread.
    static COUNT: Cell<Option<usize>> = const { Cell::new(None) };
    // > 0: inside `uncounted` (and not in a `counted` within it).
    static PAUSED: Cell<u32> = const { Cell::new(0) };
}

fn note_allocation() {
    // `try_with`: the thread-locals may already be gone during thread exit.
    if PAUSED.try_with(Cell::get).unwrap_or(0) > 0 {
        return;
    }
    let _ = COUNT.try_with(|c| c.set(c.get().map(|n| n + 1)));
}

/// Restores `PAUSED` on scope exit (also when `f` panics).
struct Restore(u32);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = PAUSED.try_with(|p| p.set(self.0));
    }
}

/// Runs `f` with this thread's allocations not counted: the test
/// harness's own work (the CUDA staging adapter's uploads, downloads and
/// bookkeeping) around a provider call, which is what a count measures.
pub fn uncounted<R>(f: impl FnOnce() -> R) -> R {
    let before = PAUSED.with(|p| p.replace(p.get() + 1));
    let _restore = Restore(before);
    f()
}

/// Runs `f` counted again inside [`uncounted`] (the provider call the
/// harness wraps).
pub fn counted<R>(f: impl FnOnce() -> R) -> R {
    let before = PAUSED.with(|p| p.replace(0));
    let _restore = Restore(before);
    f()
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations made on this thread while running `f` (0 unless the binary
/// installed [`Counting`] as its global allocator).
pub fn count<R>(f: impl FnOnce() -> R) -> (usize, R) {
    COUNT.with(|c| c.set(Some(0)));
    let r = f();
    let n = COUNT.with(|c| c.replace(None)).unwrap_or(0);
    (n, r)
}

/// Whether a provider named `provider` is held to zero host allocations per
/// call: every host provider is; lindiff-cuda (`"cuda"`, through the
/// staging harness, whose own work is [`uncounted`]) allocates on the host
/// per call — kernel names, cudarc's launch argument lists, host scratch —
/// so its count is measured and printed, not asserted.
pub fn holds_to_zero(provider: &str) -> bool {
    provider != "cuda"
}

/// Asserts `allocs == 0` (`what` names the case) for a provider held to
/// zero ([`holds_to_zero`]); for `cuda` prints the measured count instead:
/// `cuda: <what>: <allocs> host allocations (the provider's own; staging not counted)`.
pub fn expect_zero(provider: &str, allocs: usize, what: &str) {
    if holds_to_zero(provider) {
        assert_eq!(allocs, 0, "{what}: {allocs} allocations");
    } else {
        println!("{provider}: {what}: {allocs} host allocations (the provider's own; staging not counted)");
    }
}
