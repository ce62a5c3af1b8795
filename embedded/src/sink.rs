//! [`Sink`]: where the firmware's report lines go and how it meters its
//! stack. Below both its users: the checks (`suite.rs`) and the line
//! writer (`text.rs`); `main.rs` implements it over semihosting.

/// Where report lines go (semihosting on the target), and the stack
/// meter of the machine. Lines are written through
/// [`Line`](crate::text::Line), never `core::fmt`.
pub trait Sink {
    /// Writes a piece of a line (a line ends with `\n`).
    fn put(&mut self, bytes: &[u8]);
    /// Starts a stack measurement (nothing where the stack is not measured).
    fn stack_mark(&mut self) {}
    /// Peak stack bytes since the last [`Sink::stack_mark`], if measured.
    fn stack_peak(&mut self) -> Option<usize> {
        None
    }
    /// Size of the stack region in bytes, if measured.
    fn stack_capacity(&self) -> Option<usize> {
        None
    }
}
