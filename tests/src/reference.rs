//! Where the AD harness's finite-difference reference runs.
//!
//! `ad::finite_difference` (and through it `closest_difference` and the
//! entrywise gradient check) evaluates the loss at x ± h·d: a reference the
//! derivatives are compared with, not the code under test — and most of a
//! suite's provider calls. On the host arms it runs on the suite's provider
//! as before. On the `cuda` arm, `cuda::run_suite` runs the suite inside
//! [`on_host`], and the reference runs on host-cpu (`Cpu::default()`), so
//! only the forward values and the derivatives are staged to the device.
//! The flag is per thread (a suite runs on its test's thread).
//!
//! [`evaluating`] marks the reference's own calls, so that the `calls`
//! feature can count them apart (`calls.rs`).

use std::cell::Cell;

thread_local! {
    static ON_HOST: Cell<bool> = const { Cell::new(false) };
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Restores a thread-local `Cell` when dropped (also on unwind).
struct Restore<T: Copy + 'static>(&'static std::thread::LocalKey<Cell<T>>, T);

impl<T: Copy + 'static> Drop for Restore<T> {
    fn drop(&mut self) {
        self.0.with(|c| c.set(self.1));
    }
}

/// Runs `f` with the finite-difference reference on host-cpu (this thread).
pub fn on_host<R>(f: impl FnOnce() -> R) -> R {
    let _restore = Restore(&ON_HOST, ON_HOST.with(|c| c.replace(true)));
    f()
}

/// Whether the reference runs on host-cpu on this thread.
pub fn is_on_host() -> bool {
    ON_HOST.with(Cell::get)
}

/// Runs `f`, a reference evaluation, marked as such on this thread.
pub fn evaluating<R>(f: impl FnOnce() -> R) -> R {
    let _restore = Restore(&DEPTH, DEPTH.with(|c| c.replace(c.get() + 1)));
    f()
}

/// Whether this thread is inside a reference evaluation.
pub fn inside() -> bool {
    DEPTH.with(Cell::get) > 0
}
