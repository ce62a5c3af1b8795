//! Device memory the caller owns and hands out: [`DeviceMemory`] is one
//! device allocation (made once, outside any call), and [`DeviceArena`] is
//! core's `Allocator` over it — a bump allocator that reclaims in stack
//! order, like core's host `Arena`. Outputs and workspaces of every call
//! come from it: the provider never allocates device memory in `run_into`.

use crate::error::driver;
use crate::memory::{pad_to, Device, DeviceBuffer};
use core::marker::PhantomData;
use cudarc::driver::{CudaSlice, DevicePtr};
use lindiff_core::{Allocator, Error, Result, WorkspaceReq};

/// One device allocation owned by the caller (freed on drop). Make it with
/// [`Cuda::alloc`](crate::Cuda::alloc) and carve it with a [`DeviceArena`].
#[derive(Debug)]
pub struct DeviceMemory {
    pub(crate) slice: CudaSlice<u8>,
    pub(crate) base: u64,
}

impl DeviceMemory {
    /// Wraps a device allocation.
    pub(crate) fn new(slice: CudaSlice<u8>) -> Result<DeviceMemory> {
        let stream = slice.stream().clone();
        let base = {
            let (base, _sync) = slice.device_ptr(&stream);
            base
        };
        Ok(DeviceMemory { base, slice })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// `true` for an empty allocation.
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }

    /// The whole allocation as one buffer (for a single large workspace).
    pub fn as_buffer(&mut self) -> DeviceBuffer<'_> {
        // SAFETY: the unique borrow of `self` keeps the allocation alive and
        // unshared for the buffer's lifetime.
        unsafe { DeviceBuffer::from_raw(self.base, self.slice.len()) }
    }
}

/// A bump allocator over a [`DeviceMemory`]: core's [`Allocator`] for
/// device buffers (outputs, workspaces, program values).
///
/// ```no_run
/// # fn main() -> lindiff_core::Result<()> {
/// use lindiff_cuda::{Cuda, DeviceArena};
/// use lindiff_core::{Allocator, WorkspaceReq};
/// let cuda = Cuda::new()?; // Err without a CUDA driver or device
/// let mut memory = cuda.alloc(1 << 20)?;
/// let mut arena = DeviceArena::new(&mut memory);
/// let buffer = arena.allocate(WorkspaceReq::of::<f64>(16))?;
/// assert_eq!(buffer.len(), 128);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct DeviceArena<'m> {
    base: u64,
    capacity: usize,
    used: usize,
    peak: usize,
    _memory: PhantomData<&'m mut DeviceMemory>,
}

impl<'m> DeviceArena<'m> {
    /// An arena over all of `memory`.
    pub fn new(memory: &'m mut DeviceMemory) -> DeviceArena<'m> {
        DeviceArena { base: memory.base, capacity: memory.len(), used: 0, peak: 0, _memory: PhantomData }
    }

    /// An arena over `capacity` bytes at `base` (for tests of the
    /// arithmetic; the arena never dereferences).
    ///
    /// # Safety
    /// `base..base + capacity` must be device memory unused by anything
    /// else for `'m`.
    pub unsafe fn from_raw(base: u64, capacity: usize) -> DeviceArena<'m> {
        DeviceArena { base, capacity, used: 0, peak: 0, _memory: PhantomData }
    }

    /// Bytes in use now.
    pub fn used(&self) -> usize {
        self.used
    }

    /// The most bytes ever in use.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl<'m> Allocator<'m, Device> for DeviceArena<'m> {
    fn allocate(&mut self, req: WorkspaceReq) -> Result<DeviceBuffer<'m>> {
        let oom = || Error::OutOfMemory {
            bytes: req.bytes(),
            align: req.align(),
            available: self.capacity - self.used,
        };
        if !req.is_satisfiable() {
            return Err(oom());
        }
        let here = self.base.checked_add(self.used as u64).ok_or_else(oom)?;
        let begin = self.used.checked_add(pad_to(here, req.align())).ok_or_else(oom)?;
        let end = begin.checked_add(req.bytes()).ok_or_else(oom)?;
        if end > self.capacity {
            return Err(oom());
        }
        self.used = end;
        self.peak = self.peak.max(end);
        // SAFETY: `begin..end` lies inside the memory this arena borrows
        // uniquely for `'m`; live regions are disjoint (all below `used`).
        Ok(unsafe { DeviceBuffer::from_raw(self.base + begin as u64, end - begin) })
    }

    fn release(&mut self, buffer: DeviceBuffer<'m>) {
        let top = self.base + self.used as u64;
        if buffer.ptr >= self.base && buffer.ptr + buffer.bytes as u64 == top {
            self.used = (buffer.ptr - self.base) as usize;
        }
    }
}

/// Maps a driver error of an allocation to `OutOfMemory` when it is one.
pub(crate) fn alloc_error(bytes: usize, e: cudarc::driver::DriverError) -> Error {
    use cudarc::driver::sys::CUresult;
    if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory { bytes, align: 256, available: 0 }
    } else {
        driver(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_aligns_bounds_and_reclaims_in_stack_order() {
        // SAFETY: the arena only does arithmetic on these addresses.
        let mut arena = unsafe { DeviceArena::from_raw(0x10_0000, 1024) };
        let a = arena.allocate(WorkspaceReq::new(3, 1)).unwrap();
        let b = arena.allocate(WorkspaceReq::new(100, 256)).unwrap();
        assert_eq!(a.device_ptr(), 0x10_0000);
        assert_eq!(b.device_ptr() % 256, 0);
        assert_eq!(b.device_ptr(), 0x10_0100, "3 bytes used, padded up to 256");
        assert_eq!(arena.used(), 256 + 100);
        let err = arena.allocate(WorkspaceReq::new(1024, 1)).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { bytes: 1024, .. }), "{err:?}");
        arena.release(a); // not on top: kept
        assert_eq!(arena.used(), 356);
        arena.release(b);
        assert_eq!(arena.used(), 256, "b's padding stays until a is released");
        assert_eq!(arena.peak(), 356);
        let huge = arena.allocate(WorkspaceReq::of::<f64>(usize::MAX / 4)).unwrap_err();
        assert!(matches!(huge, Error::OutOfMemory { .. }));
    }
}
