//! Stack measurement by painting: cortex-m-rt's `paint-stack` fills the
//! whole stack region with `STACK_PAINT_VALUE` at reset; [`repaint`]
//! refills the part below the current stack pointer, and [`peak`] finds the
//! lowest word that no longer holds the paint — the deepest the stack went
//! since the last paint.

use cortex_m_rt::STACK_PAINT_VALUE;

/// Bytes left unpainted below the stack pointer in [`repaint`], for the
/// painting function's own use.
const MARGIN: usize = 64;

/// The stack region `[bottom, top)` reserved by cortex-m-rt's linker
/// script (the stack grows down from `top`).
fn region() -> (usize, usize) {
    extern "C" {
        static _stack_start: u32;
        static _stack_end: u32;
    }
    let top = core::ptr::addr_of!(_stack_start) as usize;
    let bottom = core::ptr::addr_of!(_stack_end) as usize;
    (bottom, top)
}

/// Size of the stack region in bytes.
pub fn capacity() -> usize {
    let (bottom, top) = region();
    top - bottom
}

/// Paints the unused part of the stack again, so the next [`peak`]
/// measures from here.
#[inline(never)]
pub fn repaint() {
    let (bottom, _) = region();
    let sp = cortex_m::register::msp::read() as usize;
    let mut addr = bottom;
    while addr + MARGIN < sp {
        // SAFETY: [bottom, sp) is the part of the stack region below the
        // stack pointer: mapped RAM that no live frame uses (no interrupts
        // are enabled, so nothing else pushes onto it), and word aligned
        // (the linker script asserts `_stack_end % 4 == 0`). This loop
        // calls nothing, so its own frame stays above `sp − MARGIN`.
        unsafe { core::ptr::write_volatile(addr as *mut u32, STACK_PAINT_VALUE) };
        addr += 4;
    }
}

/// The deepest stack use since the last paint: bytes from the top of the
/// stack to the lowest overwritten word.
pub fn peak() -> usize {
    let (bottom, top) = region();
    let mut addr = bottom;
    while addr < top {
        // SAFETY: [bottom, top) is the stack region in RAM, mapped and word
        // aligned; reading any word of it (painted or in use) is harmless.
        let word = unsafe { core::ptr::read_volatile(addr as *const u32) };
        if word != STACK_PAINT_VALUE {
            break;
        }
        addr += 4;
    }
    top - addr
}
