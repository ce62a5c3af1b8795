//! Device memory as core sees it: [`Device`] is the memory space, its
//! buffers ([`DeviceBuffer`]) and read-only views ([`DeviceData`]) are
//! device addresses with a length. Core moves them around and checks sizes
//! and alignment; only this crate's kernels and the CUDA libraries ever
//! touch the bytes behind them.

use core::marker::PhantomData;
use lindiff_core::Memory;

/// The memory space of the [`Cuda`](crate::Cuda) provider: device
/// allocations of one CUDA context.
#[derive(Clone, Copy, Debug, Default)]
pub struct Device;

/// A writable device region, valid for `'m` (it borrows the
/// [`DeviceMemory`](crate::DeviceMemory) it was carved from). Remembers
/// whether it has been written, like core's `HostBuffer`.
#[derive(Debug)]
pub struct DeviceBuffer<'m> {
    pub(crate) ptr: u64,
    pub(crate) bytes: usize,
    pub(crate) written: bool,
    _region: PhantomData<&'m mut [u8]>,
}

/// A read-only view of written device bytes (an op input).
#[derive(Clone, Copy, Debug)]
pub struct DeviceData<'a> {
    pub(crate) ptr: u64,
    pub(crate) bytes: usize,
    _region: PhantomData<&'a [u8]>,
}

/// The accessors a device region (`ptr`, `bytes`) shares with its view:
/// address, length, emptiness. `$what` names the region in the docs.
macro_rules! region_accessors {
    ($what:literal) => {
        /// The device address.
        pub fn device_ptr(&self) -> u64 {
            self.ptr
        }

        /// Length in bytes.
        pub fn len(&self) -> usize {
            self.bytes
        }

        #[doc = concat!("`true` for a zero-length ", $what, ".")]
        pub fn is_empty(&self) -> bool {
            self.bytes == 0
        }
    };
}

impl<'m> DeviceBuffer<'m> {
    /// Wraps `bytes` device bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` must be device memory of the provider's context
    /// that nothing else writes while the buffer lives (`'m`).
    pub unsafe fn from_raw(ptr: u64, bytes: usize) -> DeviceBuffer<'m> {
        DeviceBuffer { ptr, bytes, written: false, _region: PhantomData }
    }

    region_accessors!("buffer");

    /// `true` once the bytes hold written data.
    pub fn is_initialized(&self) -> bool {
        self.written
    }

    /// Marks the buffer written (a kernel filled it).
    pub(crate) fn mark_written(&mut self) {
        self.written = true;
    }

    /// A read-only view, or `None` while unwritten.
    pub fn data(&self) -> Option<DeviceData<'_>> {
        self.written.then_some(DeviceData { ptr: self.ptr, bytes: self.bytes, _region: PhantomData })
    }
}

impl DeviceData<'_> {
    region_accessors!("view");
}

/// Padding from `ptr` up to the next multiple of `align`.
pub(crate) fn pad_to(ptr: u64, align: usize) -> usize {
    let align = align.max(1) as u64;
    (ptr.wrapping_neg() & (align - 1)) as usize
}

impl Memory for Device {
    type Buffer<'m> = DeviceBuffer<'m>;
    type Data<'a> = DeviceData<'a>;

    fn usable_bytes(buffer: &DeviceBuffer<'_>, align: usize) -> usize {
        buffer.bytes.saturating_sub(pad_to(buffer.ptr, align))
    }

    fn data_bytes(data: &DeviceData<'_>) -> usize {
        data.bytes
    }

    fn data_is_aligned(data: &DeviceData<'_>, align: usize) -> bool {
        data.ptr.is_multiple_of(align.max(1) as u64)
    }

    fn buffer_is_aligned(buffer: &DeviceBuffer<'_>, align: usize) -> bool {
        buffer.ptr.is_multiple_of(align.max(1) as u64)
    }

    fn data<'a, 'm: 'a>(buffer: &'a DeviceBuffer<'m>) -> Option<DeviceData<'a>> {
        buffer.data()
    }

    fn shorten<'s, 'a: 's>(data: DeviceData<'a>) -> DeviceData<'s> {
        data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_and_usable_bytes_follow_the_address() {
        // SAFETY: the buffer is never dereferenced; only its address and
        // length are inspected.
        let buf = unsafe { DeviceBuffer::from_raw(0x1000 + 8, 300) };
        assert_eq!(Device::usable_bytes(&buf, 8), 300);
        assert_eq!(Device::usable_bytes(&buf, 256), 52, "248 bytes of padding up to 0x1100");
        assert!(Device::buffer_is_aligned(&buf, 8));
        assert!(!Device::buffer_is_aligned(&buf, 16));
        assert!(buf.data().is_none(), "an unwritten buffer has no data view");
        // SAFETY: as above.
        let mut small = unsafe { DeviceBuffer::from_raw(0x2001, 4) };
        assert_eq!(Device::usable_bytes(&small, 256), 0);
        small.mark_written();
        let view = small.data().unwrap();
        assert_eq!((view.device_ptr(), view.len()), (0x2001, 4));
        assert!(!Device::data_is_aligned(&view, 2));
    }
}
