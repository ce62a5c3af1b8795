//! Strided iteration shared by the primitive kernels: typed access to inputs,
//! column-major walks over an output's dims that carry the matching element
//! offsets of one or more strided input views, and the single place where an
//! output buffer is declared written.
//!
//! Every kernel that is not a GEMM is "walk the output in column-major order
//! and compute each element from input offsets": inputs that are broadcast
//! over output dims get stride 0 there (a `[n, batch…]` vector seen over
//! `[m, n, batch…]` has strides `[0, s₀, s_batch…]`), permuted dims swap
//! strides (transpose), and blocks shift the offset (slice).

use core::mem::MaybeUninit;
use lindiff_core::{Element, Error, Host, Input, Output, Result, TensorDesc, MAX_RANK};

/// Where one input's elements sit for each position of a walk: a stride per
/// walked dim and the offset of position 0, in elements.
#[derive(Clone, Copy, Debug)]
pub(super) struct View {
    strides: [usize; MAX_RANK],
    offset: usize,
}

impl View {
    /// The input's own layout (walked over its own dims).
    pub(super) fn of(desc: &TensorDesc) -> View {
        View::new(&[&desc.strides], desc.offset)
    }

    /// Strides given as consecutive parts (concatenated), e.g.
    /// `&[&[0], &v.strides]` for `v` broadcast over a new leading dim.
    pub(super) fn new(parts: &[&[usize]], offset: usize) -> View {
        let mut strides = [0; MAX_RANK];
        // Views describe at most MAX_RANK dims (shapes cannot hold more).
        for (slot, &s) in strides.iter_mut().zip(parts.iter().flat_map(|p| p.iter())) {
            *slot = s;
        }
        View { strides, offset }
    }

    /// The same strides, offset moved by `Σ start[d]·stride[d]` (a block's
    /// corner). Wrapping: the corner of an empty block may lie past the data
    /// and is then never read.
    pub(super) fn shifted(mut self, start: &[usize]) -> View {
        for (&s, &stride) in start.iter().zip(&self.strides) {
            self.offset = self.offset.wrapping_add(s.wrapping_mul(stride));
        }
        self
    }
}

/// One position of a [`Walk`]: its first two indices (0 past the rank) and
/// each view's element offset there.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pos<const N: usize> {
    /// Index in dim 0 (the row of a matrix).
    pub row: usize,
    /// Index in dim 1 (the column of a matrix).
    pub col: usize,
    /// Offset of this position in each view.
    pub offsets: [usize; N],
}

/// Column-major traversal of `dims` (dim 0 fastest), tracking the offsets of
/// `N` strided views: an odometer, no allocation.
#[derive(Clone, Debug)]
pub(super) struct Walk<const N: usize> {
    rank: usize,
    dims: [usize; MAX_RANK],
    strides: [[usize; MAX_RANK]; N],
    index: [usize; MAX_RANK],
    offsets: [usize; N],
    remaining: usize,
}

impl<const N: usize> Walk<N> {
    /// A walk over `dims` (at most `MAX_RANK`) reading `views`.
    pub(super) fn new(dims: &[usize], views: [View; N]) -> Walk<N> {
        let mut d = [0; MAX_RANK];
        d[..dims.len()].copy_from_slice(dims);
        Walk {
            rank: dims.len(),
            dims: d,
            strides: views.map(|v| v.strides),
            index: [0; MAX_RANK],
            offsets: views.map(|v| v.offset),
            // Element counts of checked shapes fit in usize.
            remaining: dims.iter().product(),
        }
    }
}

impl<const N: usize> Iterator for Walk<N> {
    type Item = Pos<N>;

    fn next(&mut self) -> Option<Pos<N>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let pos = Pos { row: self.index[0], col: self.index[1], offsets: self.offsets };
        if self.remaining > 0 {
            // Some dim still has room (positions remain), so this stops
            // before `rank`. Offsets wrap: a size-1 dim may carry any stride.
            let mut d = 0;
            while d < self.rank {
                self.index[d] += 1;
                for (off, s) in self.offsets.iter_mut().zip(&self.strides) {
                    *off = off.wrapping_add(s[d]);
                }
                if self.index[d] < self.dims[d] {
                    break;
                }
                for (off, s) in self.offsets.iter_mut().zip(&self.strides) {
                    *off = off.wrapping_sub(self.dims[d].wrapping_mul(s[d]));
                }
                self.index[d] = 0;
                d += 1;
            }
        }
        Some(pos)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<const N: usize> ExactSizeIterator for Walk<N> {}

fn misaligned(op: &'static str, arg: &'static str, addr: usize, align: usize) -> Error {
    Error::Buffer { op, arg, why: "is not aligned for its dtype", needed: align, got: addr % align }
}

/// Input `input`'s whole buffer as `E`s (index it with a [`Walk`]'s offsets;
/// `lindiff_core::call` checked that the view lies inside).
///
/// # Errors
/// [`Error::Buffer`] when the buffer is misaligned for `E`.
pub(super) fn input<'a, E: Element>(
    op: &'static str,
    arg: &'static str,
    input: &Input<'a, Host>,
) -> Result<&'a [E]> {
    let addr = input.data.bytes().as_ptr() as usize;
    input.data.typed::<E>().ok_or_else(|| misaligned(op, arg, addr, core::mem::align_of::<E>()))
}

/// The elements of a contiguous column-major input in order (its whole
/// view as one slice), or `None` for any other layout. Kernels use it to
/// skip the strided walk: a plain slice loop is several times faster and
/// vectorizes.
pub(super) fn contiguous<'a, E>(desc: &TensorDesc, data: &'a [E]) -> Option<&'a [E]> {
    let numel: usize = desc.meta.shape.dims().iter().product();
    if desc.is_contiguous() {
        data.get(..numel)
    } else {
        None
    }
}

/// Output `out` as exactly its element count of uninitialised `E`s, in
/// column-major order.
///
/// # Errors
/// [`Error::Buffer`] when the buffer is misaligned for `E`.
pub(super) fn output<'b, E: Element>(
    op: &'static str,
    arg: &'static str,
    out: &'b mut Output<'_, '_, Host>,
) -> Result<&'b mut [MaybeUninit<E>]> {
    let numel = numel(out);
    // SAFETY (both calls): the primitives store only initialised values of
    // `E` through the returned slice.
    let addr = unsafe { out.buffer.as_uninit_bytes_mut() }.as_ptr() as usize;
    let slot = unsafe { out.buffer.uninit_typed_mut::<E>() }
        .ok_or_else(|| misaligned(op, arg, addr, core::mem::align_of::<E>()))?;
    // `call` checked the buffer holds the output's bytes at its alignment,
    // and the start is aligned (above), so `numel` elements fit.
    Ok(&mut slot[..numel])
}

/// Element count of an output (fits: `call` checked its byte size).
fn numel(out: &Output<'_, '_, Host>) -> usize {
    out.meta.shape.dims().iter().product()
}

/// Zeroes the bytes after the output's elements and marks the buffer written.
///
/// # Safety
/// All elements of `output::<E>(.., out)` must have been written.
pub(super) unsafe fn finish<E: Element>(out: &mut Output<'_, '_, Host>) {
    let used = numel(out) * core::mem::size_of::<E>();
    // SAFETY: the caller wrote every element (the first `used` bytes; `E`
    // has no padding); `assume_init_prefix` zero-fills the rest.
    unsafe { out.buffer.assume_init_prefix(used) };
}

/// Writes `values` into `out` in column-major order and marks it written.
///
/// # Errors
/// [`Error::Buffer`] when the buffer is misaligned for `E`.
///
/// # Panics
/// When `values` yields fewer elements than `out` has (a kernel bug).
pub(super) fn write_values<E: Element>(
    op: &'static str,
    arg: &'static str,
    out: &mut Output<'_, '_, Host>,
    values: impl Iterator<Item = E>,
) -> Result<()> {
    let slot = output::<E>(op, arg, out)?;
    let len = slot.len();
    let mut written = 0;
    for (o, v) in slot.iter_mut().zip(values) {
        o.write(v);
        written += 1;
    }
    assert_eq!(written, len, "{op}: kernel produced too few elements");
    // SAFETY: all `len` elements of the slot were written (counted above).
    unsafe { finish::<E>(out) };
    Ok(())
}

/// `out[i] = f(xs[i])` for a contiguous input of the output's length: no
/// count in the loop, so it vectorizes.
///
/// # Errors
/// [`Error::Buffer`] when the buffer is misaligned for `E`.
///
/// # Panics
/// When `xs` has another length than `out` (a kernel bug).
pub(super) fn write_map<A: Copy, E: Element>(
    op: &'static str,
    arg: &'static str,
    out: &mut Output<'_, '_, Host>,
    xs: &[A],
    f: impl Fn(A) -> E,
) -> Result<()> {
    let slot = output::<E>(op, arg, out)?;
    assert_eq!(xs.len(), slot.len(), "{op}: input and output lengths differ");
    for (o, &x) in slot.iter_mut().zip(xs) {
        o.write(f(x));
    }
    // SAFETY: `xs` has the slot's length (asserted), so the zip wrote every
    // element.
    unsafe { finish::<E>(out) };
    Ok(())
}

/// `out[i] = f(xs[i], ys[i])`, as [`write_map`].
///
/// # Errors
/// [`Error::Buffer`] when the buffer is misaligned for `E`.
///
/// # Panics
/// When `xs` or `ys` has another length than `out` (a kernel bug).
pub(super) fn write_zip<A: Copy, B: Copy, E: Element>(
    op: &'static str,
    arg: &'static str,
    out: &mut Output<'_, '_, Host>,
    (xs, ys): (&[A], &[B]),
    f: impl Fn(A, B) -> E,
) -> Result<()> {
    let slot = output::<E>(op, arg, out)?;
    assert!(xs.len() == slot.len() && ys.len() == slot.len(), "{op}: input and output lengths differ");
    for ((o, &x), &y) in slot.iter_mut().zip(xs).zip(ys) {
        o.write(f(x, y));
    }
    // SAFETY: both inputs have the slot's length (asserted), so the zip
    // wrote every element.
    unsafe { finish::<E>(out) };
    Ok(())
}

/// Walks `out`'s dims in column-major order and writes `f(position)` at each
/// position; `views` locate the inputs' elements over the output's dims.
///
/// In no-std builds (firmware) the walk ([`walk_body`]) is one out-of-line
/// instance per element type and view count that calls `f` through a `dyn`
/// reference (the elementwise maps do the same), so the odometer and the
/// slice loops are not copied into every kernel closure (−5.9 KiB of
/// Cortex-M .text). With `std` it is instantiated for each closure and
/// inlined: a `dyn` call per element stays an indirect call that LLVM does
/// not remove, and keeps the loops from vectorizing.
///
/// # Errors
/// [`Error::Buffer`] when the buffer is misaligned for `E`.
pub(super) fn write_walk<E: Element, const N: usize>(
    op: &'static str,
    arg: &'static str,
    out: &mut Output<'_, '_, Host>,
    views: [View; N],
    mut f: impl FnMut(Pos<N>) -> E,
) -> Result<()> {
    #[cfg(feature = "std")]
    return walk_body(op, arg, out, views, &mut f);
    #[cfg(not(feature = "std"))]
    return walk_body::<E, N, dyn FnMut(Pos<N>) -> E>(op, arg, out, views, &mut f);
}

/// [`write_walk`]'s body: column by
/// column, the odometer steps once per column and the rows run as a plain
/// loop with each view's row stride (a per-element odometer cost several ns
/// per element in transposes and diagonal embeddings).
#[cfg_attr(feature = "std", inline(always))]
#[cfg_attr(not(feature = "std"), inline(never))]
fn walk_body<E: Element, const N: usize, F: FnMut(Pos<N>) -> E + ?Sized>(
    op: &'static str,
    arg: &'static str,
    out: &mut Output<'_, '_, Host>,
    views: [View; N],
    f: &mut F,
) -> Result<()> {
    let dims = out.meta.shape.dims();
    let slot = output::<E>(op, arg, out)?;
    // A scalar output is one row of one column.
    let (rows, tail) = dims.split_first().map_or((1, &[][..]), |(&r, t)| (r, t));
    let row_strides = views.map(|v| v.strides[0]);
    let tails = views.map(|v| View { strides: shift_left(&v.strides), offset: v.offset });
    if rows > 0 {
        for (column, c) in slot.chunks_exact_mut(rows).zip(Walk::new(tail, tails)) {
            let mut offsets = c.offsets;
            for (row, o) in column.iter_mut().enumerate() {
                o.write(f(Pos { row, col: c.row, offsets }));
                for (off, s) in offsets.iter_mut().zip(&row_strides) {
                    *off = off.wrapping_add(*s);
                }
            }
        }
    }
    // SAFETY: the columns of `rows` elements, one per position of the walk
    // over the other dims, cover all `rows · Π tail` elements of the slot.
    unsafe { finish::<E>(out) };
    Ok(())
}

/// `strides` without its first entry (a zero appended).
fn shift_left(strides: &[usize; MAX_RANK]) -> [usize; MAX_RANK] {
    let mut s = [0; MAX_RANK];
    s[..MAX_RANK - 1].copy_from_slice(&strides[1..]);
    s
}

/// The output's dims.
pub(super) fn dims<'a>(out: &Output<'a, '_, Host>) -> &'a [usize] {
    out.meta.shape.dims()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_is_column_major_with_broadcast_and_transpose() {
        // A 2×3 row-major matrix read as its transpose (3×2) plus a
        // broadcast vector over the rows.
        let a = View::new(&[&[1, 3]], 0);
        let v = View::new(&[&[0, 1]], 10);
        let got: heapless::Vec<(usize, usize, usize, usize), 8> =
            Walk::new(&[3, 2], [a, v]).map(|p| (p.row, p.col, p.offsets[0], p.offsets[1])).collect();
        let want = [(0, 0, 0, 10), (1, 0, 1, 10), (2, 0, 2, 10), (0, 1, 3, 11), (1, 1, 4, 11), (2, 1, 5, 11)];
        assert_eq!(got.as_slice(), &want);
        assert_eq!(Walk::<0>::new(&[], []).count(), 1);
        assert_eq!(Walk::<0>::new(&[4, 0, 2], []).count(), 0);
        // A size-1 dim with an absurd stride never disturbs the offsets.
        let odd = View::new(&[&[2, usize::MAX, 1]], 0);
        let offs: heapless::Vec<usize, 8> = Walk::new(&[2, 1, 2], [odd]).map(|p| p.offsets[0]).collect();
        assert_eq!(offs.as_slice(), &[0, 2, 1, 3]);
    }
}
