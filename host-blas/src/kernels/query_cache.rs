//! Remembered LAPACK workspace queries (`lwork = -1`).
//!
//! A query's answer depends only on the routine, its job options, the dtype
//! and the shape, but asking costs a full call into LAPACK (`ilaenv`'s
//! string matching and block-size tables) — at n = 32 a visible part of a
//! small decomposition, and every call asks twice (`workspace()` sizes the
//! scratch, the kernel sizes its arrays). Each thread keeps the last few
//! answers in a fixed table (no allocation, no lock): a hit returns the
//! stored sizes, a miss runs the query and replaces the oldest entry.

use core::cell::Cell;
use lindiff_core::Element;

/// Entries per thread: more than the distinct (op, shape, dtype) a loop
/// or a small program cycles through.
const SLOTS: usize = 8;

/// What a query is for: the kernel family and its options (`tag`, chosen by
/// each kernel), the dtype, and the input's m×n.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    tag: u32,
    dtype: lindiff_core::DType,
    m: usize,
    n: usize,
}

/// The first tag of each kernel family; a kernel adds its options (below
/// 0x100) so that each (routine, job) has its own tag.
pub(super) const SVD: u32 = 0x100;
/// See [`SVD`].
pub(super) const QR: u32 = 0x200;
/// See [`SVD`].
pub(super) const EIGH: u32 = 0x300;
/// See [`SVD`].
pub(super) const EIG: u32 = 0x400;

/// The sizes a query answered (up to three: lwork, lrwork, liwork).
pub(super) type Sizes = [usize; 3];

thread_local! {
    static TABLE: [Cell<Option<(Key, Sizes)>>; SLOTS] = const { [const { Cell::new(None) }; SLOTS] };
    static NEXT: Cell<usize> = const { Cell::new(0) };
}

/// The sizes `query` answers for kernel `tag` on an m×n `T` input,
/// running it only when this thread has not asked the same before.
pub(super) fn cached<T: Element>(tag: u32, m: usize, n: usize, query: impl FnOnce() -> Sizes) -> Sizes {
    let key = Key { tag, dtype: T::DTYPE, m, n };
    let hit = TABLE.with(|t| t.iter().find_map(|c| c.get().filter(|(k, _)| *k == key).map(|(_, s)| s)));
    if let Some(sizes) = hit {
        return sizes;
    }
    let sizes = query();
    let slot = NEXT.with(|i| {
        let slot = i.get();
        i.set((slot + 1) % SLOTS);
        slot
    });
    TABLE.with(|t| t[slot].set(Some((key, sizes))));
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_once_per_key_and_keeps_keys_apart() {
        let mut asked = 0;
        let mut ask = |tag, m, n| {
            cached::<f64>(tag, m, n, || {
                asked += 1;
                [tag as usize, m, n]
            })
        };
        assert_eq!(ask(1, 3, 4), [1, 3, 4]);
        assert_eq!(ask(1, 3, 4), [1, 3, 4]);
        assert_eq!(ask(2, 3, 4), [2, 3, 4]);
        assert_eq!(ask(1, 4, 3), [1, 4, 3]);
        assert_eq!(asked, 3);
        // Another dtype is another key.
        assert_eq!(cached::<f32>(1, 3, 4, || [9, 9, 9]), [9, 9, 9]);
    }
}
