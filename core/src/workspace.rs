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
/// allocation (stack order), together with the alignment padding that was
/// put before them (for the last [`PAD_RECORDS`] padded allocations still
/// live; an older one's padding stays used until the arena is dropped);
/// buffers released out of stack order are reclaimed when the arena is
/// dropped and its bytes borrowed again. [`Arena::peak`] reports the
/// high-water mark, which sizes a static buffer for firmware.
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
    stack: BumpStack,
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
            stack: BumpStack::default(),
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
        self.stack.used
    }

    /// The largest `used()` seen so far.
    pub fn peak(&self) -> usize {
        self.stack.peak
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
            available: self.capacity - self.stack.used,
        };
        let (begin, end) = self.stack.place(base, req).ok_or_else(|| oom.clone())?;
        if end > self.capacity {
            return Err(oom);
        }
        self.stack.commit(begin, end);
        // SAFETY: `begin..end` lies inside the `capacity` bytes this arena
        // borrows uniquely for `'m`. Regions handed out are disjoint: every
        // live region lies below `used`, which only moves down in `release`
        // over a region that was given back by value (and over the padding
        // before it, which no region holds: see `BumpStack`).
        Ok(unsafe { core::slice::from_raw_parts_mut(self.start.as_ptr().add(begin), end - begin) })
    }

    /// Takes a region back; reclaims it (and the alignment padding before
    /// it) if it is the top of the stack.
    pub fn release_bytes(&mut self, region: &'m mut [MaybeUninit<u8>]) {
        let base = self.start.as_ptr() as usize;
        let begin = (region.as_ptr() as usize).wrapping_sub(base);
        // A region from elsewhere gives a `begin` past the arena (wrapped),
        // which `release` ignores.
        if begin <= self.capacity {
            self.stack.release(begin, begin + region.len());
        }
    }
}

/// How many padded allocations an [`Arena`] remembers the padding of, to
/// give it back with them.
pub const PAD_RECORDS: usize = 8;

/// The offsets an [`Arena`] (and the interpreter's model of one, which
/// sizes a program's arena) keeps: the top of the stack, the high-water
/// mark, and where the most recent padded allocations began and what
/// padding they put before themselves.
///
/// Invariant: each record `(begin, pre)` is of a live-or-released region
/// starting at offset `begin ≤ used` whose allocation found the top at
/// `pre < begin`; no region ever handed out overlaps `[pre, begin)`
/// (the top only moves below `begin` when that region itself is released,
/// and then the record goes), so the top may move down to `pre`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BumpStack {
    used: usize,
    peak: usize,
    records: [(usize, usize); PAD_RECORDS],
    count: usize,
}

impl BumpStack {
    /// Where a region for `req` goes: offsets `(begin, end)` above the top,
    /// `begin` aligned when the arena starts at address `base`. `None` when
    /// the offsets overflow.
    pub(crate) fn place(&self, base: usize, req: WorkspaceReq) -> Option<(usize, usize)> {
        let here = base.checked_add(self.used)?;
        let pad = here.wrapping_neg() & (req.align() - 1);
        let begin = self.used.checked_add(pad)?;
        let end = begin.checked_add(req.bytes())?;
        Some((begin, end))
    }

    /// Takes `begin..end` (from [`BumpStack::place`]), remembering the
    /// padding before it.
    pub(crate) fn commit(&mut self, begin: usize, end: usize) {
        if begin > self.used {
            if self.count == PAD_RECORDS {
                // Forget the oldest record: its padding stays used.
                self.records.copy_within(1.., 0);
                self.count -= 1;
            }
            self.records[self.count] = (begin, self.used);
            self.count += 1;
        }
        self.used = end;
        self.peak = self.peak.max(end);
    }

    /// Gives `begin..end` back: when it ends at the top, the top moves to
    /// its start, and below the padding that was put before it.
    pub(crate) fn release(&mut self, begin: usize, end: usize) {
        if end != self.used || begin > end {
            return;
        }
        self.used = begin;
        // Records of regions above the new top are stale.
        while self.count > 0 && self.records[self.count - 1].0 > begin {
            self.count -= 1;
        }
        if self.count > 0 && self.records[self.count - 1].0 == begin {
            self.used = self.records[self.count - 1].1;
            self.count -= 1;
        }
    }

    /// The high-water mark.
    pub(crate) fn peak(&self) -> usize {
        self.peak
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
    use std::vec::Vec;

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
        arena.release_bytes(b); // the top, with its padding: down to a's end
        assert_eq!(arena.used(), 3);
        assert_eq!(arena.peak(), peak);
    }

    /// Released in stack order, regions with alignment padding between them
    /// (and before the first) give every byte back, at any start address.
    #[test]
    fn arena_reclaims_padding_in_stack_order() {
        let mut bytes = [MaybeUninit::<u8>::uninit(); 256];
        for start in 0..16 {
            let mut arena = Arena::new(&mut bytes[start..]);
            let a = arena.allocate_bytes(WorkspaceReq::new(3, 1)).unwrap();
            let b = arena.allocate_bytes(WorkspaceReq::new(16, 16)).unwrap();
            let c = arena.allocate_bytes(WorkspaceReq::new(5, 8)).unwrap();
            assert_eq!(b.as_ptr() as usize % 16, 0);
            arena.release_bytes(c);
            arena.release_bytes(b);
            assert_eq!(arena.used(), 3, "start {start}");
            arena.release_bytes(a);
            assert_eq!(arena.used(), 0, "start {start}");
            // The first region padded from the arena's start.
            let d = arena.allocate_bytes(WorkspaceReq::new(8, 64)).unwrap();
            arena.release_bytes(d);
            assert_eq!(arena.used(), 0, "start {start}");
        }
    }

    /// More nested padded regions than records: the oldest ones' padding
    /// stays used, nothing else; a region split in two and released tail
    /// first is given back whole.
    #[test]
    fn arena_forgets_only_the_oldest_padding() {
        let mut bytes = [MaybeUninit::<u8>::uninit(); 1024];
        let mut arena = Arena::new(&mut bytes);
        let start = arena.start.as_ptr() as usize;
        let base = arena.allocate_bytes(WorkspaceReq::new(1, 1)).unwrap();
        let mut regions = Vec::new();
        for _ in 0..PAD_RECORDS + 2 {
            regions.push(arena.allocate_bytes(WorkspaceReq::new(1, 8)).unwrap());
        }
        let second = regions[1].as_ptr() as usize - start;
        while let Some(r) = regions.pop() {
            arena.release_bytes(r);
        }
        // The two oldest records were dropped: the second region's padding
        // stays used, so the first region is no longer the top.
        assert_eq!(arena.used(), second);
        arena.release_bytes(base);
        assert_eq!(arena.used(), second);
        let mut bytes = [MaybeUninit::<u8>::uninit(); 64];
        let mut arena = Arena::new(&mut bytes);
        let _first = arena.allocate_bytes(WorkspaceReq::new(1, 1)).unwrap();
        let whole = arena.allocate_bytes(WorkspaceReq::new(8, 8)).unwrap();
        let (head, tail) = whole.split_at_mut(4);
        arena.release_bytes(tail);
        arena.release_bytes(head);
        assert_eq!(arena.used(), 1);
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
