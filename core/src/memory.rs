//! Memory spaces. Core moves buffers around but never looks inside them: a
//! provider names its [`Memory`], and core code is generic over
//! `Memory::Buffer`, so device memory (CUDA) and handle-based memory fit the
//! same contract as host bytes. [`Host`] is the memory space of the CPU
//! providers (faer, LAPACK, wasm, firmware).

use crate::dtype::Element;
use core::mem::{align_of, size_of, MaybeUninit};

/// A memory space: the type of its buffers and of read-only views of them.
pub trait Memory {
    /// A writable region handed out by an [`Allocator`](crate::Allocator),
    /// valid for `'m`.
    type Buffer<'m>;
    /// A read-only view of data in this memory space (an op input).
    type Data<'a>: Copy;

    /// Bytes usable in `buffer` when its start is aligned up to `align`.
    fn usable_bytes(buffer: &Self::Buffer<'_>, align: usize) -> usize;
    /// Bytes viewable through `data`.
    fn data_bytes(data: &Self::Data<'_>) -> usize;
    /// `true` when `data` starts at a multiple of `align`.
    fn data_is_aligned(data: &Self::Data<'_>, align: usize) -> bool;
    /// `true` when `buffer` starts at a multiple of `align`.
    fn buffer_is_aligned(buffer: &Self::Buffer<'_>, align: usize) -> bool;
    /// A read-only view of a buffer, or `None` while it holds no written data.
    fn data<'a, 'm: 'a>(buffer: &'a Self::Buffer<'m>) -> Option<Self::Data<'a>>;
    /// The same view for a shorter lifetime (views are covariant in fact;
    /// the trait cannot say so).
    fn shorten<'s, 'a: 's>(data: Self::Data<'a>) -> Self::Data<'s>;
}

/// Host (CPU) memory: buffers are byte slices borrowed for `'m`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Host;

impl Memory for Host {
    type Buffer<'m> = HostBuffer<'m>;
    type Data<'a> = HostData<'a>;

    #[inline]
    fn usable_bytes(buffer: &HostBuffer<'_>, align: usize) -> usize {
        let addr = buffer.bytes.as_ptr() as usize;
        let pad = addr.wrapping_neg() & (align.max(1) - 1);
        buffer.bytes.len().saturating_sub(pad)
    }

    #[inline]
    fn data_bytes(data: &HostData<'_>) -> usize {
        data.bytes.len()
    }

    #[inline]
    fn data_is_aligned(data: &HostData<'_>, align: usize) -> bool {
        (data.bytes.as_ptr() as usize).is_multiple_of(align.max(1))
    }

    #[inline]
    fn buffer_is_aligned(buffer: &HostBuffer<'_>, align: usize) -> bool {
        (buffer.bytes.as_ptr() as usize).is_multiple_of(align.max(1))
    }

    fn data<'a, 'm: 'a>(buffer: &'a HostBuffer<'m>) -> Option<HostData<'a>> {
        buffer.data()
    }

    fn shorten<'s, 'a: 's>(data: HostData<'a>) -> HostData<'s> {
        data
    }
}

/// A writable host region, possibly not yet initialised.
///
/// It remembers whether its bytes have been written: kernels write through
/// [`HostBuffer::typed_mut`] (zero-fills once if needed) or through the
/// `unsafe` [`HostBuffer::uninit_typed_mut`] followed by the `unsafe`
/// [`HostBuffer::assume_init`]; only an initialised buffer can be read.
#[derive(Debug)]
pub struct HostBuffer<'m> {
    bytes: &'m mut [MaybeUninit<u8>],
    initialized: bool,
    /// Made from the caller's initialised elements: must stay initialised,
    /// and is never handed back as uninitialised bytes.
    pinned: bool,
}

impl<'m> HostBuffer<'m> {
    /// Wraps uninitialised bytes (e.g. from an [`Arena`](crate::Arena)).
    pub fn from_uninit(bytes: &'m mut [MaybeUninit<u8>]) -> HostBuffer<'m> {
        HostBuffer { bytes, initialized: false, pinned: false }
    }

    /// Wraps caller-owned elements, e.g. output memory the caller already has.
    pub fn from_slice_mut<T: Element>(data: &'m mut [T]) -> HostBuffer<'m> {
        let len = core::mem::size_of_val(data);
        // SAFETY: `T: Element` is plain data without padding, so its storage
        // is `len` initialised bytes; we keep the unique borrow for `'m`, and
        // every write through the byte view stores bytes of valid `Element`
        // values (any bit pattern is a valid `T`).
        let bytes =
            unsafe { core::slice::from_raw_parts_mut(data.as_mut_ptr().cast::<MaybeUninit<u8>>(), len) };
        HostBuffer { bytes, initialized: true, pinned: true }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// `true` for a zero-length buffer.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// `true` once the bytes hold written data.
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// The raw bytes, e.g. to build scratch space over them. Writing through
    /// them does not mark the buffer initialised.
    ///
    /// # Safety
    /// While the buffer [`is_initialized`](Self::is_initialized), only
    /// initialised bytes may be stored through the result (the buffer stays
    /// readable as data).
    pub unsafe fn as_uninit_bytes_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        self.bytes
    }

    /// The bytes as uninitialised `T`s (whole elements; `None` when the start
    /// is misaligned for `T`).
    ///
    /// # Safety
    /// As [`HostBuffer::as_uninit_bytes_mut`].
    pub unsafe fn uninit_typed_mut<T: Element>(&mut self) -> Option<&mut [MaybeUninit<T>]> {
        let ptr = self.bytes.as_mut_ptr();
        if !(ptr as usize).is_multiple_of(align_of::<T>()) {
            return None;
        }
        let count = self.bytes.len() / size_of::<T>();
        // SAFETY: `ptr` is aligned for `T` (checked above) and the first
        // `count * size_of::<T>()` bytes lie inside `self.bytes`, which we
        // borrow uniquely; `MaybeUninit<T>` has no validity requirement.
        Some(unsafe { core::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), count) })
    }

    /// Declares that every byte has been written.
    ///
    /// # Safety
    /// Every byte of the buffer must have been initialised (e.g. all elements
    /// of [`HostBuffer::uninit_typed_mut`] written, with no trailing bytes
    /// left).
    pub unsafe fn assume_init(&mut self) {
        self.initialized = true;
    }

    /// Declares the first `len` bytes written, zero-fills the rest (a buffer
    /// may be larger than the tensor in it) and marks the buffer initialised.
    ///
    /// # Safety
    /// The first `min(len, self.len())` bytes must have been initialised.
    #[inline]
    pub unsafe fn assume_init_prefix(&mut self, len: usize) {
        let start = len.min(self.bytes.len());
        self.bytes[start..].fill(MaybeUninit::new(0));
        self.initialized = true;
    }

    /// The buffer as initialised `T`s, zero-filling it first if it has never
    /// been written. `None` if misaligned for `T`.
    pub fn typed_mut<T: Element>(&mut self) -> Option<&mut [T]> {
        if !(self.bytes.as_ptr() as usize).is_multiple_of(align_of::<T>()) {
            return None;
        }
        if !self.initialized {
            self.bytes.fill(MaybeUninit::new(0));
            self.initialized = true;
        }
        let count = self.bytes.len() / size_of::<T>();
        // SAFETY: aligned (checked), in bounds, uniquely borrowed, and every
        // byte is initialised (flag set only after a full fill or write); any
        // bit pattern is a valid `T: Element`.
        Some(unsafe { core::slice::from_raw_parts_mut(self.bytes.as_mut_ptr().cast::<T>(), count) })
    }

    /// A read-only view, or `None` while unwritten.
    pub fn data(&self) -> Option<HostData<'_>> {
        if !self.initialized {
            return None;
        }
        // SAFETY: the flag says every byte is initialised; `MaybeUninit<u8>`
        // and `u8` have the same layout.
        let bytes =
            unsafe { core::slice::from_raw_parts(self.bytes.as_ptr().cast::<u8>(), self.bytes.len()) };
        Some(HostData { bytes })
    }

    /// Gives the region back (for an allocator's `release`); `None` for a
    /// buffer over the caller's elements ([`HostBuffer::from_slice_mut`]),
    /// which must stay initialised.
    pub fn into_uninit(self) -> Option<&'m mut [MaybeUninit<u8>]> {
        (!self.pinned).then_some(self.bytes)
    }
}

/// A read-only view of initialised host bytes (an op input).
#[derive(Clone, Copy, Debug)]
pub struct HostData<'a> {
    bytes: &'a [u8],
}

impl<'a> HostData<'a> {
    /// Views a slice of elements, e.g. the caller's input matrix.
    ///
    /// ```
    /// use lindiff_core::HostData;
    /// let a = [1.0f64, 2.0, 3.0, 4.0];
    /// let data = HostData::from_slice(&a);
    /// assert_eq!(data.typed::<f64>(), Some(&a[..]));
    /// assert_eq!(data.typed::<f32>().map(|s| s.len()), Some(8));
    /// ```
    pub fn from_slice<T: Element>(data: &'a [T]) -> HostData<'a> {
        // SAFETY: `T: Element` has no padding, so its storage is
        // `size_of_val(data)` initialised bytes, borrowed for `'a`.
        let bytes =
            unsafe { core::slice::from_raw_parts(data.as_ptr().cast::<u8>(), core::mem::size_of_val(data)) };
        HostData { bytes }
    }

    /// Views raw bytes (e.g. a tensor received over a wire).
    pub fn from_bytes(bytes: &'a [u8]) -> HostData<'a> {
        HostData { bytes }
    }

    /// The bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The data as `T`s (whole elements only), or `None` when misaligned.
    pub fn typed<T: Element>(&self) -> Option<&'a [T]> {
        let ptr = self.bytes.as_ptr();
        if !(ptr as usize).is_multiple_of(align_of::<T>()) {
            return None;
        }
        let count = self.bytes.len() / size_of::<T>();
        // SAFETY: aligned (checked), in bounds, initialised (HostData only
        // wraps initialised bytes) and any bit pattern is a valid `T`.
        Some(unsafe { core::slice::from_raw_parts(ptr.cast::<T>(), count) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_buffers_cannot_be_read() {
        let mut raw = [MaybeUninit::<u8>::uninit(); 32];
        let buf = HostBuffer::from_uninit(&mut raw);
        assert!(buf.data().is_none());
        let mut raw2 = [MaybeUninit::<u8>::uninit(); 40];
        let off = raw2.as_ptr().align_offset(8);
        let mut aligned = HostBuffer::from_uninit(&mut raw2[off..off + 32]);
        let xs = aligned.typed_mut::<f64>().unwrap();
        assert_eq!(xs, &[0.0; 4]);
        xs[1] = 2.5;
        assert_eq!(aligned.data().unwrap().typed::<f64>().unwrap()[1], 2.5);
    }

    #[test]
    fn usable_bytes_accounts_for_alignment() {
        let mut raw = [0i64; 4];
        let buf = HostBuffer::from_slice_mut(&mut raw[..]);
        assert_eq!(Host::usable_bytes(&buf, 8), 32);
        assert!(buf.is_initialized());
    }
}
