//! Square temporaries carved from one block of a kernel's scratch.

use crate::field::Field;
use faer::MatMut;

/// n×n matrices handed out one after another from a slice.
pub(crate) struct Pool<'a, T> {
    chunks: core::slice::ChunksExactMut<'a, T>,
    n: usize,
}

impl<'a, T: Field> Pool<'a, T> {
    /// A pool over `block` (a multiple of n² long; n > 0).
    pub(crate) fn new(block: &'a mut [T], n: usize) -> Self {
        Pool { chunks: block.chunks_exact_mut(n * n), n }
    }

    /// The next matrix, with the contents its slice had. Each kernel's
    /// `scratch` counts how many it takes; a miscount is a bug and panics
    /// here, before any write.
    pub(crate) fn take(&mut self) -> MatMut<'a, T> {
        let chunk = self.chunks.next().expect("kernel scratch pool miscounted");
        MatMut::from_column_major_slice_mut(chunk, self.n, self.n)
    }
}
