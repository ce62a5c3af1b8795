//! Workspace layout: a call's scratch is a list of regions (work copies,
//! `*_bufferSize` areas, pivots, info words) placed one after another at
//! [`REGION_ALIGN`]. The same [`Layout`] is computed by `workspace()` (its
//! total is the request) and by `run_into` (its offsets, from the aligned
//! start of the caller's workspace buffer), so both always agree.

use lindiff_core::{Error, Result, WorkspaceReq};

/// Alignment of every region (cuBLAS/cuSOLVER want 256-byte starts for
/// their best paths; device allocations are at least that aligned).
pub const REGION_ALIGN: usize = 256;

/// Regions laid out in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    end: usize,
    overflow: bool,
}

impl Layout {
    /// An empty layout.
    pub fn new() -> Layout {
        Layout::default()
    }

    /// Appends a region of `bytes` bytes and returns its offset.
    pub fn region(&mut self, bytes: usize) -> usize {
        let start = self.end.checked_add(REGION_ALIGN - 1).map(|v| v & !(REGION_ALIGN - 1));
        match start.and_then(|s| s.checked_add(bytes).map(|e| (s, e))) {
            Some((s, e)) => {
                self.end = e;
                s
            }
            None => {
                self.overflow = true;
                0
            }
        }
    }

    /// Appends a region of `count` elements of `T`.
    pub fn array<T>(&mut self, count: usize) -> usize {
        match count.checked_mul(core::mem::size_of::<T>()) {
            Some(bytes) => self.region(bytes),
            None => {
                self.overflow = true;
                0
            }
        }
    }

    /// The request for the whole layout (aligned to [`REGION_ALIGN`]).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] (for `usize::MAX` bytes) when the sizes
    /// overflow `usize`: no device could hold it.
    pub fn req(&self) -> Result<WorkspaceReq> {
        if self.overflow {
            return Err(Error::OutOfMemory { bytes: usize::MAX, align: REGION_ALIGN, available: 0 });
        }
        Ok(WorkspaceReq::new(self.end, REGION_ALIGN))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_aligned_and_disjoint() {
        let mut l = Layout::new();
        assert_eq!(l.region(10), 0);
        assert_eq!(l.array::<f64>(40), 256);
        assert_eq!(l.region(0), 256 + 320 + 192, "next multiple of 256 after 576");
        assert_eq!(l.array::<i32>(1), 768);
        let req = l.req().unwrap();
        assert_eq!((req.bytes(), req.align()), (772, 256));
        let mut big = Layout::new();
        big.array::<f64>(usize::MAX / 4);
        let err = big.req().unwrap_err();
        assert!(matches!(err, Error::OutOfMemory { bytes: usize::MAX, .. }), "{err:?}");
    }
}
