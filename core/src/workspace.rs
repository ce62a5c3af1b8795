//! The workspace contract: how much memory a call needs ([`WorkspaceReq`]),
//! who provides it (the caller's [`Allocator`]), and a ready-made allocator
//! over caller bytes ([`Arena`]). Core never calls the global allocator.

use crate::error::{Error, Result};
use crate::memory::{Host, HostBuffer, Memory};
use core::marker::PhantomData;
use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::NonNull;

/// A memory requirement: `bytes` starting at an address aligned to `align`.
///
/// Requirements compose like faer's `StackReq`: [`and`](Self::and) for
/// regions live at the same time, [`or`](Self::or) for regions used one after
/// the other. Arithmetic saturates: an impossible requirement has
/// `bytes == usize::MAX` and every allocator refuses it with
/// [`Error::OutOfMemory`].
///
/// ```
/// use lindiff_core::WorkspaceReq;
/// let a = WorkspaceReq::of::<f64>(3);              // 24 bytes, align 8
/// let b = WorkspaceReq::new(5, 1);
/// assert_eq!(a.and(b).bytes(), 29);                // 24 + 5
/// assert_eq!(b.and(a).bytes(), 32);                // 5, pad to 8, + 24
/// assert_eq!(a.or(b).bytes(), 24);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WorkspaceReq {
    bytes: usize,
    align: usize,
}

impl Default for WorkspaceReq {
    fn default() -> Self {
        WorkspaceReq::EMPTY
    }
}

impl WorkspaceReq {
    /// No memory.
    pub const EMPTY: WorkspaceReq = WorkspaceReq { bytes: 0, align: 1 };

    /// `bytes` at alignment `align` (rounded up to a power of two; 0 means 1).
    pub const fn new(bytes: usize, align: usize) -> WorkspaceReq {
        let align = if align <= 1 {
            1
        } else {
            match align.checked_next_power_of_two() {
                Some(a) => a,
                None => return WorkspaceReq { bytes: usize::MAX, align: 1 },
            }
        };
        WorkspaceReq { bytes, align }
    }

    /// Room for `count` values of `T`.
    pub const fn of<T>(count: usize) -> WorkspaceReq {
        let bytes = match count.checked_mul(size_of::<T>()) {
            Some(b) => b,
            None => usize::MAX,
        };
        WorkspaceReq::new(bytes, align_of::<T>())
    }

    /// Room for `count` elements of `dtype`.
    pub const fn of_dtype(dtype: crate::DType, count: usize) -> WorkspaceReq {
        let bytes = match count.checked_mul(dtype.size()) {
            Some(b) => b,
            None => usize::MAX,
        };
        WorkspaceReq::new(bytes, dtype.align())
    }

    /// Bytes needed (`usize::MAX` when impossible).
    pub const fn bytes(self) -> usize {
        self.bytes
    }

    /// Alignment needed (a power of two).
    pub const fn align(self) -> usize {
        self.align
    }

    /// `false` when the requirement overflowed.
    pub const fn is_satisfiable(self) -> bool {
        self.bytes != usize::MAX
    }

    /// Bytes to ask for when the region's start might have any alignment.
    pub const fn bytes_unaligned(self) -> usize {
        self.bytes.saturating_add(self.align - 1)
    }

    /// Both regions at once: `self` first, then `other` at its alignment.
    pub const fn and(self, other: WorkspaceReq) -> WorkspaceReq {
        if !self.is_satisfiable() || !other.is_satisfiable() {
            return WorkspaceReq { bytes: usize::MAX, align: 1 };
        }
        let align = if self.align > other.align { self.align } else { other.align };
        let start = match align_up(self.bytes, other.align) {
            Some(s) => s,
            None => return WorkspaceReq { bytes: usize::MAX, align },
        };
        let bytes = match start.checked_add(other.bytes) {
            Some(b) => b,
            None => usize::MAX,
        };
        WorkspaceReq { bytes, align }
    }

    /// Either region, one at a time: the larger size and alignment.
    pub const fn or(self, other: WorkspaceReq) -> WorkspaceReq {
        WorkspaceReq {
            bytes: if self.bytes > other.bytes { self.bytes } else { other.bytes },
            align: if self.align > other.align { self.align } else { other.align },
        }
    }

    /// `count` copies of `self`, all live at once (e.g. one per batch lane).
    pub const fn repeat(self, count: usize) -> WorkspaceReq {
        if count == 0 {
            return WorkspaceReq::EMPTY;
        }
        let stride = match align_up(self.bytes, self.align) {
            Some(s) => s,
            None => return WorkspaceReq { bytes: usize::MAX, align: self.align },
        };
        // (count - 1) strides plus one unpadded copy.
        let bytes = match stride.checked_mul(count - 1) {
            Some(b) => match b.checked_add(self.bytes) {
                Some(b) => b,
                None => usize::MAX,
            },
            None => usize::MAX,
        };
        WorkspaceReq { bytes, align: self.align }
    }
}

/// `x` rounded up to a multiple of the power of two `align`.
const fn align_up(x: usize, align: usize) -> Option<usize> {
    match x.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}

/// The caller's memory source for a memory space `M`.
///
/// Outputs and workspaces are taken from it and returned to it after their
/// last use. `'m` is how long handed-out buffers stay valid.
pub trait Allocator<'m, M: Memory> {
    /// A buffer of at least `req.bytes()` bytes aligned to `req.align()`.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the request cannot be met.
    fn allocate(&mut self, req: WorkspaceReq) -> Result<M::Buffer<'m>>;

    /// Returns a buffer this allocator handed out.
    fn release(&mut self, buffer: M::Buffer<'m>);
}

/// A bump allocator over caller-owned bytes: no global heap, ever.
///
/// Released buffers are reclaimed when they are the most recent live
/// allocation (stack order); others are reclaimed when the arena is dropped
/// and its bytes borrowed again. [`Arena::peak`] reports the high-water mark,
/// which sizes a static buffer for firmware.
///
/// ```
/// use core::mem::MaybeUninit;
/// use lindiff_core::{Allocator, Arena, Host, WorkspaceReq};
/// let mut bytes = [MaybeUninit::<u8>::uninit(); 256];
/// let mut arena = Arena::new(&mut bytes);
/// let mut buf = Allocator::<Host>::allocate(&mut arena, WorkspaceReq::of::<f64>(4)).unwrap();
/// buf.typed_mut::<f64>().unwrap()[0] = 1.0;
/// assert!(arena.used() >= 32);
/// arena.release(buf);
/// assert_eq!(arena.used(), 0);
/// assert!(Allocator::<Host>::allocate(&mut arena, WorkspaceReq::new(1000, 1)).is_err());
/// ```
///
/// The lifetime is invariant, so an arena cannot be shortened to release a
/// long-lived region early and hand it out twice:
///
/// ```compile_fail
/// use core::mem::MaybeUninit;
/// use lindiff_core::{Arena, WorkspaceReq};
/// fn shorten<'s, 'm: 's>(a: &'s mut Arena<'m>) -> &'s mut Arena<'s> { a }
/// ```
pub struct Arena<'m> {
    start: NonNull<MaybeUninit<u8>>,
    capacity: usize,
    used: usize,
    peak: usize,
    _bytes: PhantomData<&'m mut [MaybeUninit<u8>]>,
    /// `'m` must be invariant: were the arena shortened to a smaller `'s`, a
    /// region of `'m` could be released for `'s` and handed out twice.
    _invariant: PhantomData<fn(&'m ()) -> &'m ()>,
}

// SAFETY: an `Arena` is a unique borrow of its bytes (like the
// `&'m mut [MaybeUninit<u8>]` it was made from), which is `Send`.
unsafe impl Send for Arena<'_> {}

impl<'m> Arena<'m> {
    /// An arena over `bytes`.
    pub fn new(bytes: &'m mut [MaybeUninit<u8>]) -> Arena<'m> {
        Arena {
            capacity: bytes.len(),
            start: NonNull::from(bytes).cast(),
            used: 0,
            peak: 0,
            _bytes: PhantomData,
            _invariant: PhantomData,
        }
    }

    /// Total bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes currently in use (including alignment padding).
    pub fn used(&self) -> usize {
        self.used
    }

    /// The largest `used()` seen so far.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Carves an aligned region of `req.bytes()` bytes.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the rest of the arena is too small.
    pub fn allocate_bytes(&mut self, req: WorkspaceReq) -> Result<&'m mut [MaybeUninit<u8>]> {
        let base = self.start.as_ptr() as usize;
        let oom = Error::OutOfMemory {
            bytes: req.bytes(),
            align: req.align(),
            available: self.capacity - self.used,
        };
        let here = base.checked_add(self.used).ok_or_else(|| oom.clone())?;
        let pad = here.wrapping_neg() & (req.align() - 1);
        let begin = self.used.checked_add(pad).ok_or_else(|| oom.clone())?;
        let end = begin.checked_add(req.bytes()).ok_or_else(|| oom.clone())?;
        if end > self.capacity {
            return Err(oom);
        }
        self.used = end;
        self.peak = self.peak.max(end);
        // SAFETY: `begin..end` lies inside the `capacity` bytes this arena
        // borrows uniquely for `'m`. Regions handed out are disjoint: every
        // live region lies below `used`, which only moves down in `release`
        // over a region that was given back by value.
        Ok(unsafe { core::slice::from_raw_parts_mut(self.start.as_ptr().add(begin), end - begin) })
    }

    /// Takes a region back; reclaims it if it is the top of the stack.
    pub fn release_bytes(&mut self, region: &'m mut [MaybeUninit<u8>]) {
        let base = self.start.as_ptr() as usize;
        let begin = region.as_ptr() as usize;
        let top = base + self.used;
        if begin >= base && begin <= top && begin + region.len() == top {
            // The region ends exactly at the top and starts inside the arena,
            // so it covers [begin, top), which its owner has now given up.
            self.used = begin - base;
        }
    }
}

impl<'m> Allocator<'m, Host> for Arena<'m> {
    fn allocate(&mut self, req: WorkspaceReq) -> Result<HostBuffer<'m>> {
        self.allocate_bytes(req).map(HostBuffer::from_uninit)
    }

    fn release(&mut self, buffer: HostBuffer<'m>) {
        if let Some(region) = buffer.into_uninit() {
            self.release_bytes(region);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturates_instead_of_overflowing() {
        let huge = WorkspaceReq::of::<f64>(usize::MAX / 4);
        assert!(!huge.is_satisfiable());
        assert!(!huge.and(WorkspaceReq::new(1, 1)).is_satisfiable());
        assert!(!WorkspaceReq::new(usize::MAX / 2 + 2, 1).repeat(2).is_satisfiable());
        assert_eq!(WorkspaceReq::new(3, 4).repeat(3).bytes(), 11);
        assert_eq!(WorkspaceReq::new(3, 3).align(), 4);
    }

    #[test]
    fn arena_aligns_and_reclaims_in_stack_order() {
        let mut bytes = [MaybeUninit::<u8>::uninit(); 128];
        let mut arena = Arena::new(&mut bytes);
        let a = arena.allocate_bytes(WorkspaceReq::new(3, 1)).unwrap();
        let b = arena.allocate_bytes(WorkspaceReq::new(16, 16)).unwrap();
        assert_eq!(b.as_ptr() as usize % 16, 0);
        let peak = arena.used();
        arena.release_bytes(a); // not the top: stays used
        assert_eq!(arena.used(), peak);
        arena.release_bytes(b);
        assert!(arena.used() <= 3 + 15);
        assert_eq!(arena.peak(), peak);
    }

    #[test]
    fn arena_refuses_what_does_not_fit() {
        let mut bytes = [MaybeUninit::<u8>::uninit(); 8];
        let mut arena = Arena::new(&mut bytes);
        let err = arena.allocate_bytes(WorkspaceReq::new(9, 1)).unwrap_err();
        assert_eq!(err, Error::OutOfMemory { bytes: 9, align: 1, available: 8 });
        assert!(arena.allocate_bytes(WorkspaceReq::new(usize::MAX, 1)).is_err());
    }
}
