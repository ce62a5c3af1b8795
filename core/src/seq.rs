//! [`Seq`] and [`SmallSeq`]: the storage of tapes, programs and plans —
//! vectors that grow on the heap with the `alloc` feature and hold at most
//! `N` elements in place without it.
//!
//! Firmware (no `alloc`) gets fixed capacities it can size at compile time
//! and a typed [`Error::Capacity`] past them; desktop and browser builds get
//! storage that grows, where running out of memory is a typed
//! [`Error::OutOfMemory`]. Code using them is the same in both builds.
//!
//! A [`Seq`] lives on the heap (with `alloc`): programs and tapes of any
//! size, a few words on the stack. A [`SmallSeq`] holds its first `N`
//! elements in place and moves to the heap past them: per-call scratch
//! (one rule's linear program, a run's buffers, the gradients) that a
//! steady loop then never allocates.

use crate::error::{Error, Result};
use core::ops::{Deref, DerefMut};

#[cfg(feature = "alloc")]
type Inner<T, const N: usize> = alloc::vec::Vec<T>;
#[cfg(not(feature = "alloc"))]
type Inner<T, const N: usize> = heapless::Vec<T, N>;

/// A vector that grows (`alloc`) or holds at most `N` elements (no `alloc`).
///
/// ```
/// use lindiff_core::seq::Seq;
/// let mut s: Seq<u32, 2> = Seq::new();
/// s.push(1, "example").unwrap();
/// s.push(2, "example").unwrap();
/// // With `alloc` the third element fits; without it, `Error::Capacity`.
/// assert_eq!(s.push(3, "example").is_ok(), cfg!(feature = "alloc"));
/// assert_eq!(&s[..2], &[1, 2]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Seq<T, const N: usize>(Inner<T, N>);

impl<T, const N: usize> Seq<T, N> {
    /// An empty sequence.
    pub const fn new() -> Self {
        Seq(Inner::<T, N>::new())
    }

    /// Appends `x`.
    ///
    /// # Errors
    /// [`Error::Capacity`] naming `what` past `N` elements (no `alloc`);
    /// [`Error::OutOfMemory`] when the heap cannot grow (`alloc`).
    pub fn push(&mut self, x: T, what: &'static str) -> Result<()> {
        #[cfg(feature = "alloc")]
        {
            let _ = what;
            self.0.try_reserve(1).map_err(|_| out_of_memory::<T>(self.0.len() + 1))?;
            self.0.push(x);
            Ok(())
        }
        #[cfg(not(feature = "alloc"))]
        self.0.push(x).map_err(|_| Error::Capacity { what, capacity: N })
    }

    /// A sequence of `len` clones of `x`.
    ///
    /// # Errors
    /// As [`Seq::push`].
    pub fn filled(len: usize, x: T, what: &'static str) -> Result<Self>
    where
        T: Clone,
    {
        let mut s = Seq::new();
        s.reserve(len, what)?;
        for _ in 0..len {
            s.push(x.clone(), what)?;
        }
        Ok(s)
    }

    /// Makes room for `more` elements.
    ///
    /// # Errors
    /// As [`Seq::push`] (without `alloc`, when `more` elements would not fit).
    pub fn reserve(&mut self, more: usize, what: &'static str) -> Result<()> {
        #[cfg(feature = "alloc")]
        {
            let _ = what;
            self.0.try_reserve(more).map_err(|_| out_of_memory::<T>(self.0.len().saturating_add(more)))
        }
        #[cfg(not(feature = "alloc"))]
        {
            if self.0.len().saturating_add(more) > N {
                return Err(Error::Capacity { what, capacity: N });
            }
            Ok(())
        }
    }

    /// Removes every element (keeping the storage).
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Shortens to `len` elements.
    pub fn truncate(&mut self, len: usize) {
        self.0.truncate(len);
    }

    /// Keeps the elements for which `keep` is true, in order.
    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.0.retain(keep);
    }

    /// The last element, removed.
    pub fn pop(&mut self) -> Option<T> {
        self.0.pop()
    }
}

/// A vector holding its first `N` elements in place; with `alloc` it moves
/// to the heap past them, without it [`SmallSeq::push`] fails there.
///
/// ```
/// use lindiff_core::seq::SmallSeq;
/// let mut s: SmallSeq<u32, 2> = SmallSeq::new();
/// for i in 0..2 {
///     s.push(i, "example").unwrap(); // in place: no allocation
/// }
/// assert_eq!(s.push(2, "example").is_ok(), cfg!(feature = "alloc"));
/// ```
#[derive(Clone, Debug)]
pub struct SmallSeq<T, const N: usize>(Small<T, N>);

#[derive(Clone, Debug)]
enum Small<T, const N: usize> {
    Inline(heapless::Vec<T, N>),
    #[cfg(feature = "alloc")]
    Heap(alloc::vec::Vec<T>),
}

impl<T, const N: usize> SmallSeq<T, N> {
    /// An empty sequence (in place).
    pub const fn new() -> Self {
        SmallSeq(Small::Inline(heapless::Vec::new()))
    }

    /// Appends `x`.
    ///
    /// # Errors
    /// [`Error::Capacity`] naming `what` past `N` elements (no `alloc`);
    /// [`Error::OutOfMemory`] when the heap cannot grow (`alloc`).
    pub fn push(&mut self, x: T, what: &'static str) -> Result<()> {
        match &mut self.0 {
            Small::Inline(v) => match v.push(x) {
                Ok(()) => Ok(()),
                #[cfg(feature = "alloc")]
                Err(x) => {
                    let mut heap = alloc::vec::Vec::new();
                    heap.try_reserve(2 * N.max(1)).map_err(|_| out_of_memory::<T>(2 * N.max(1)))?;
                    heap.extend(core::mem::take(v));
                    heap.push(x);
                    self.0 = Small::Heap(heap);
                    Ok(())
                }
                #[cfg(not(feature = "alloc"))]
                Err(_) => Err(Error::Capacity { what, capacity: N }),
            },
            #[cfg(feature = "alloc")]
            Small::Heap(v) => {
                let _ = what;
                v.try_reserve(1).map_err(|_| out_of_memory::<T>(v.len() + 1))?;
                v.push(x);
                Ok(())
            }
        }
    }

    /// Removes every element (a spilled sequence keeps its heap storage).
    pub fn clear(&mut self) {
        match &mut self.0 {
            Small::Inline(v) => v.clear(),
            #[cfg(feature = "alloc")]
            Small::Heap(v) => v.clear(),
        }
    }
}

/// The error of a heap that cannot hold `len` elements of `T`.
#[cfg(feature = "alloc")]
fn out_of_memory<T>(len: usize) -> Error {
    Error::OutOfMemory {
        bytes: len.saturating_mul(core::mem::size_of::<T>()),
        align: core::mem::align_of::<T>(),
        available: 0,
    }
}

impl<T, const N: usize> Default for SmallSeq<T, N> {
    fn default() -> Self {
        SmallSeq::new()
    }
}

impl<T, const N: usize> Deref for SmallSeq<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.0 {
            Small::Inline(v) => v,
            #[cfg(feature = "alloc")]
            Small::Heap(v) => v,
        }
    }
}

impl<T, const N: usize> DerefMut for SmallSeq<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.0 {
            Small::Inline(v) => v,
            #[cfg(feature = "alloc")]
            Small::Heap(v) => v,
        }
    }
}

impl<T, const N: usize> IntoIterator for SmallSeq<T, N> {
    type Item = T;
    type IntoIter = SmallIter<T, N>;

    fn into_iter(self) -> SmallIter<T, N> {
        match self.0 {
            Small::Inline(v) => SmallIter::Inline(v.into_iter()),
            #[cfg(feature = "alloc")]
            Small::Heap(v) => SmallIter::Heap(v.into_iter()),
        }
    }
}

/// The owning iterator of a [`SmallSeq`].
pub enum SmallIter<T, const N: usize> {
    /// Over elements in place.
    Inline(<heapless::Vec<T, N> as IntoIterator>::IntoIter),
    /// Over elements on the heap.
    #[cfg(feature = "alloc")]
    Heap(alloc::vec::IntoIter<T>),
}

impl<T, const N: usize> Iterator for SmallIter<T, N> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        match self {
            SmallIter::Inline(i) => i.next(),
            #[cfg(feature = "alloc")]
            SmallIter::Heap(i) => i.next(),
        }
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a SmallSeq<T, N> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T, const N: usize> Default for Seq<T, N> {
    fn default() -> Self {
        Seq::new()
    }
}

impl<T, const N: usize> Deref for Seq<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T, const N: usize> DerefMut for Seq<T, N> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T, const N: usize> IntoIterator for Seq<T, N> {
    type Item = T;
    type IntoIter = <Inner<T, N> as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, T, const N: usize> IntoIterator for &'a Seq<T, N> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_or_reports_capacity_by_name() {
        let mut s: Seq<u8, 1> = Seq::new();
        s.push(1, "things").unwrap();
        let second = s.push(2, "things");
        if cfg!(feature = "alloc") {
            assert!(second.is_ok());
            assert_eq!(&s[..], &[1, 2]);
        } else {
            assert_eq!(second.unwrap_err(), Error::Capacity { what: "things", capacity: 1 });
        }
        let filled: Seq<u8, 4> = Seq::filled(3, 7, "things").unwrap();
        assert_eq!(&filled[..], &[7, 7, 7]);
    }

    #[test]
    fn small_spills_to_the_heap_or_reports_capacity() {
        let mut s: SmallSeq<u16, 2> = SmallSeq::new();
        for i in 0..2 {
            s.push(i, "things").unwrap();
        }
        let third = s.push(2, "things");
        if cfg!(feature = "alloc") {
            assert!(third.is_ok());
            assert_eq!(&s[..], &[0, 1, 2]);
            s.push(3, "things").unwrap();
            assert_eq!(s.iter().copied().sum::<u16>(), 6);
        } else {
            assert_eq!(third.unwrap_err(), Error::Capacity { what: "things", capacity: 2 });
        }
        let all: heapless::Vec<u16, 8> = s.clone().into_iter().collect();
        assert_eq!(&all[..], &s[..]);
        s.clear();
        assert!(s.is_empty());
    }
}
