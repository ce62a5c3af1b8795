//! A counting global allocator for allocation tests. Counts are per thread,
//! so tests running in parallel in one binary cannot pollute each other.
//!
//! A test binary installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;` and measures with
//! [`count`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Forwards to the system allocator and counts allocations on threads that
/// are inside [`count`].
pub struct Counting;

thread_local! {
    // `None`: not counting on this thread.
    static COUNT: Cell<Option<usize>> = const { Cell::new(None) };
}

fn note_allocation() {
    // `try_with`: the thread-local may already be gone during thread exit.
    let _ = COUNT.try_with(|c| c.set(c.get().map(|n| n + 1)));
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
