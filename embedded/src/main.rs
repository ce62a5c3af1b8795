//! lindiff on a bare-metal Cortex-M, under QEMU: the SVD, a solve, a
//! Cholesky factorization and three gradients through lindiff's AD, each
//! checked against its closed form ([`suite`]), with no heap.
//!
//! * The global allocator always fails ([`NoHeap`]): faer needs one to
//!   link, and any heap allocation ends the run ("PANIC: a heap
//!   allocation", exit status 3), so a passing run touched no heap.
//! * Every buffer comes from a static byte array through lindiff-core's
//!   `Arena`; traced programs are fixed capacity and live on the stack.
//! * Results go out over semihosting; the exit status (SYS_EXIT_EXTENDED)
//!   is 0 when every check passed, 1 when one failed, 2 for a lindiff
//!   error, 3 for a panic (an allocation attempt included).
//! * The stack is painted at reset (cortex-m-rt's `paint-stack`) and
//!   repainted before each check; the untouched paint after it gives the
//!   check's peak stack ([`stack`]).
//!
//! Features pick the machine (`mps2-an386`: Cortex-M4F, 8×8, every check;
//! `lm3s6965evb`: Cortex-M3 with 64 KiB RAM and 256 KiB flash, 4×4, the
//! forward checks) and the scalar (`f32`, `f64`); `break-expectation` flips
//! one expected value (the negative test); `LINDIFF_EMBEDDED_N` at build
//! time changes the order (build.rs).
#![no_std]
#![no_main]
#![deny(unsafe_op_in_unsafe_fn)]

mod dense;
mod programs;
mod sink;
mod stack;
mod suite;
mod text;

use core::alloc::{GlobalAlloc, Layout};
use core::mem::MaybeUninit;
use cortex_m_rt::entry;
use cortex_m_semihosting::hio;
use text::Line;

#[cfg(all(feature = "f32", not(feature = "f64")))]
type Real = f32;
#[cfg(all(feature = "f64", not(feature = "f32")))]
type Real = f64;
#[cfg(not(any(all(feature = "f32", not(feature = "f64")), all(feature = "f64", not(feature = "f32")))))]
compile_error!("enable exactly one of the features `f32` and `f64`");

/// The machine.
#[cfg(feature = "mps2-an386")]
const MACHINE: &str = "mps2-an386 (Cortex-M4F)";
#[cfg(all(feature = "lm3s6965evb", not(feature = "mps2-an386")))]
const MACHINE: &str = "lm3s6965evb (Cortex-M3)";

// The order N of the test problem (written by build.rs).
include!(concat!(env!("OUT_DIR"), "/problem.rs"));

/// Capacity of the test matrices (N² entries).
const CAP: usize = N * N;

/// The static arena every program runs in: 64·N² scalars — 16 KiB for the
/// 8×8 f32 problem (whose largest program needs 8.2 KiB), 32 KiB for f64.
const ARENA_BYTES: usize = 64 * N * N * core::mem::size_of::<Real>();

/// Exit statuses.
const EXIT_PASSED: usize = 0;
const EXIT_CHECK_FAILED: usize = 1;
const EXIT_LINDIFF_ERROR: usize = 2;
const EXIT_PANIC: usize = 3;

/// The arena bytes, aligned for faer's 64-byte temporaries.
#[repr(C, align(64))]
struct ArenaBytes([MaybeUninit<u8>; ARENA_BYTES]);

/// A global allocator that refuses every request. A heap allocation then
/// ends in `handle_alloc_error`, whose panic (raised in alloc's
/// `alloc/src/alloc.rs`) the panic handler reports with exit status 3.
/// (The allocator cannot report by itself: the compiler treats allocator
/// calls as free of side effects and, knowing this one returns null, calls
/// `handle_alloc_error` directly; a volatile store of the refused size here
/// does not survive either.)
struct NoHeap;

// SAFETY: `alloc` always returns null, which GlobalAlloc allows (an
// allocation failure); `dealloc` is never reached because no allocation
// ever succeeded.
unsafe impl GlobalAlloc for NoHeap {
    unsafe fn alloc(&self, _layout: Layout) -> *mut u8 {
        core::ptr::null_mut()
    }

    unsafe fn dealloc(&self, _ptr: *mut u8, _layout: Layout) {}
}

#[global_allocator]
static HEAP: NoHeap = NoHeap;

/// Semihosting standard output, as a [`sink::Sink`].
struct Semihosting(Option<hio::HostStream>);

impl sink::Sink for Semihosting {
    fn put(&mut self, bytes: &[u8]) {
        if let Some(out) = &mut self.0 {
            let _ = out.write_all(bytes);
        }
    }

    fn stack_mark(&mut self) {
        stack::repaint();
    }

    fn stack_peak(&mut self) -> Option<usize> {
        Some(stack::peak())
    }

    fn stack_capacity(&self) -> Option<usize> {
        Some(stack::capacity())
    }
}

fn stdout() -> Semihosting {
    Semihosting(hio::hstdout().ok())
}

/// Ends the QEMU run with `code` (SYS_EXIT_EXTENDED, reason
/// ADP_Stopped_ApplicationExit).
fn exit(code: usize) -> ! {
    const SYS_EXIT_EXTENDED: usize = 0x20;
    const ADP_STOPPED_APPLICATION_EXIT: usize = 0x20026;
    let block = [ADP_STOPPED_APPLICATION_EXIT, code];
    // SAFETY: the semihosting call reads the two-word parameter block,
    // which lives on this stack frame for the duration of the call.
    unsafe {
        cortex_m_semihosting::syscall(SYS_EXIT_EXTENDED, &block);
    }
    loop {
        cortex_m::asm::bkpt();
    }
}

#[entry]
fn main() -> ! {
    static mut ARENA: ArenaBytes = ArenaBytes([MaybeUninit::uninit(); ARENA_BYTES]);
    let mut out = stdout();
    Line::new(&mut out).s("machine: ").s(MACHINE).end();
    let outcome = suite::Suite::<Real, CAP, _>::new(N, &mut out, &mut ARENA.0).run();
    let code = match outcome {
        Ok(o) => {
            let stack = o.peak_stack.unwrap_or(0);
            Line::new(&mut out)
                .s("arena: peak ")
                .n(o.peak_arena)
                .s(" of ")
                .n(ARENA_BYTES)
                .s(" bytes; stack: peak ")
                .n(stack)
                .s(" of ")
                .n(stack::capacity())
                .s(" bytes")
                .end();
            let verdict = if o.failures == 0 { "PASSED" } else { "FAILED" };
            Line::new(&mut out)
                .s(verdict)
                .s(": ")
                .n(o.checks - o.failures)
                .s(" of ")
                .n(o.checks)
                .s(" checks passed")
                .end();
            if o.failures == 0 {
                EXIT_PASSED
            } else {
                EXIT_CHECK_FAILED
            }
        }
        Err(f) => {
            let line = Line::new(&mut out).s("ERROR in ").s(f.check).s(": ");
            suite::error_line(line, &f.error).end();
            EXIT_LINDIFF_ERROR
        }
    };
    exit(code)
}

/// Reports a panic with exit status 3. It never formats the panic's message
/// (doing so would link the message formatting of every panic site: faer's
/// `equator` assertions with their `Debug` operands, core's number
/// formatting; 17 KiB of .text and 8 KiB of .rodata in the f32 build: even
/// reading a plain-string message keeps them). It prints where the panic was
/// raised; a refused heap allocation is named as such (its panic comes from
/// alloc's `handle_alloc_error`, in `alloc/src/alloc.rs`).
///
/// The location goes out through `write!`, the firmware's one use of
/// `core::fmt` (2 KiB of .text): written with [`Line`] instead, the
/// compiler no longer finds the message dead at the panic sites (rustc
/// 1.95, fat LTO: +7.7 KiB of .text and +6.3 KiB of .rodata, `equator`'s
/// formatting among them), an optimiser effect, measured, not designed.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let mut out = stdout();
    match info.location() {
        Some(at) => {
            if let Some(o) = &mut out.0 {
                use core::fmt::Write;
                let _ = writeln!(o, "PANIC at {}:{}", at.file(), at.line());
            }
            if at.file().ends_with("alloc/src/alloc.rs") {
                Line::new(&mut out).s("PANIC: a heap allocation (the allocator refuses every request)").end();
            }
        }
        None => Line::new(&mut out).s("PANIC").end(),
    }
    exit(EXIT_PANIC)
}
