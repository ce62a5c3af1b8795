//! The direct face over host memory (`alloc` feature): each op runs at once
//! on a provider, and every output and workspace comes from a [`Pool`] of
//! reusable aligned blocks. A block returns to the pool when the last tensor
//! using it is dropped, so a steady loop of calls makes no heap allocations
//! once the pool has grown to its working set.
//!
//! ```
//! use lindiff_cpu::prelude::*;
//! let mut face = Direct::new(Cpu::new());
//! let a = face.tensor(&[2, 3], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0])?;
//! let err = face.det(&a).unwrap_err();
//! assert_eq!(err.to_string(), "det: argument `a` must be square, got 2×3");
//! let s = face.svd_vals(&a)?; // two singular values, descending
//! assert_eq!(s.dims(), [2]);
//! # Ok::<(), Error>(())
//! ```

use super::{Applied, Face};
use crate::call::{self, Prepared};
use crate::dtype::Element;
use crate::error::{Error, Result};
use crate::memory::{HostBuffer, HostData};
use crate::op::{MAX_INPUTS, MAX_OUTPUTS};
use crate::provider::{Input, Op, Provider};
use crate::shape::Shape;
use crate::tensor::{TensorDesc, TensorMeta};
use crate::Host;
use alloc::boxed::Box;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::cell::Cell;
use core::mem::MaybeUninit;
use core::ptr::NonNull;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([MaybeUninit<u8>; 64]);

/// One reusable region. Free while only the pool holds it.
struct Block {
    /// Start of `chunks` chunks owned by this block (from `Box::into_raw`).
    ptr: NonNull<Chunk>,
    chunks: usize,
    /// The layout of the tensor using the block (every tensor over a block
    /// shares it: only clones share blocks), set when the block is taken
    /// (unless it still carries the taking plan output's [`Label`]), and
    /// never while a tensor holds the block (only a free block is taken).
    /// Kept here rather than in [`Tensor`] so a tensor is a pointer and a
    /// length: results move out of `apply` by a few words, not by a few
    /// hundred bytes of shape and strides per output.
    desc: TensorDesc,
    /// Which plan output last labelled the block with `desc` ([`Label`]),
    /// or [`Label::NONE`].
    label: Label,
    /// Bytes lent by [`PoolAllocator`]'s `allocate` while the block is
    /// leased (the request, not the capacity: a kernel zero-fills what it
    /// was lent beyond its output, so lending a large block whole would
    /// cost a fill of all of it), so that `release` knows the exact region.
    lent: Cell<usize>,
}

/// [`Block::lent`] of a block not leased by [`PoolAllocator`] (no buffer is
/// that long).
const NOT_LENT: usize = usize::MAX;

/// A plan output's number, unique within one [`Direct`] face: a block
/// still carrying its output's label from the last call carries that
/// output's layout too (only relabelling changes a block's layout), so it
/// is not copied again.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Label(u64);

impl Label {
    /// No plan output's: the layout is always written.
    const NONE: Label = Label(0);
}

impl Block {
    /// A block of at least one chunk (so every block has its own address),
    /// or `None` when the allocation fails.
    fn new(chunks: usize, desc: TensorDesc, label: Label) -> Option<Block> {
        let chunks = chunks.max(1);
        let mut storage = Vec::new();
        storage.try_reserve_exact(chunks).ok()?;
        storage.resize(chunks, Chunk([MaybeUninit::uninit(); 64]));
        let boxed = storage.into_boxed_slice();
        // SAFETY: `Box::into_raw` never returns null.
        let ptr = unsafe { NonNull::new_unchecked(Box::into_raw(boxed).cast::<Chunk>()) };
        Some(Block { ptr, chunks, desc, label, lent: Cell::new(NOT_LENT) })
    }

    fn capacity(&self) -> usize {
        self.chunks * 64
    }

    /// The first `len` bytes, initialised.
    ///
    /// # Safety
    /// The block's first `len ≤ capacity` bytes must have been written (true of
    /// every block a tensor outside `Direct::apply` holds: a copy-in writes
    /// its tensor's bytes, and `apply` returns its output tensors only after
    /// the provider wrote them, see `Tensor::bytes`), and no mutable borrow
    /// of its bytes may exist.
    unsafe fn data(&self, len: usize) -> &[u8] {
        // SAFETY: per the caller: in bounds, initialised, not mutably borrowed.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().cast::<u8>(), len) }
    }

    /// The first `len ≤ capacity` bytes for writing.
    ///
    /// # Safety
    /// Nobody else may read or write the block while the result lives.
    #[allow(clippy::mut_from_ref)]
    unsafe fn uninit(&self, len: usize) -> &mut [MaybeUninit<u8>] {
        // SAFETY: exclusivity and bounds are the caller's obligations.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<MaybeUninit<u8>>(), len) }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        let slice = core::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.chunks);
        // SAFETY: `ptr`/`chunks` came from `Box::into_raw` of a boxed slice of
        // exactly `chunks` elements, and this is the only place freeing it.
        drop(unsafe { Box::from_raw(slice) });
    }
}

/// Reusable host blocks, aligned to 64 bytes.
#[derive(Default)]
pub struct Pool {
    blocks: Vec<Rc<Block>>,
}

impl Pool {
    /// An empty pool.
    pub fn new() -> Pool {
        Pool::default()
    }

    /// Number of blocks (free or in use).
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Total bytes held.
    pub fn reserved_bytes(&self) -> usize {
        self.blocks.iter().map(|b| b.capacity()).sum()
    }

    /// The smallest free block of at least `bytes`, or a new one, for a
    /// tensor laid out as `desc` (none for workspace).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when a new block cannot be allocated.
    fn take(&mut self, bytes: usize, desc: Option<&TensorDesc>) -> Result<Rc<Block>> {
        let mut anywhere = usize::MAX;
        self.take_hinted(bytes, desc.map(|d| (d, Label::NONE)), &mut anywhere)
    }

    /// [`take`](Pool::take), trying block `*hint` first (the block the same
    /// output of the same plan had last time: free again once the caller
    /// dropped that result) before searching the pool; `*hint` becomes the
    /// index of the block taken. `desc` comes with the label of the plan
    /// output it is for ([`Label::NONE`] for none).
    fn take_hinted(
        &mut self,
        bytes: usize,
        desc: Option<(&TensorDesc, Label)>,
        hint: &mut usize,
    ) -> Result<Rc<Block>> {
        let fits = |b: &Rc<Block>| Rc::strong_count(b) == 1 && b.capacity() >= bytes;
        // The hint only while it is not much larger than needed, so a small
        // request does not keep a large block from the calls that need it.
        let snug = |b: &Rc<Block>| b.capacity() <= 2 * bytes.max(64);
        let found = match self.blocks.get(*hint) {
            Some(b) if fits(b) && snug(b) => Some(*hint),
            _ => (self.blocks.iter().enumerate())
                .filter(|(_, b)| fits(b))
                .min_by_key(|(_, b)| b.capacity())
                .map(|(i, _)| i),
        };
        // A free block is held by the pool alone (no weak references are
        // ever made), so it can be relabelled in place.
        if let Some(i) = found {
            if let Some(block) = Rc::get_mut(&mut self.blocks[i]) {
                match desc {
                    Some((_, label)) if label != Label::NONE && block.label == label => {}
                    Some((desc, label)) => {
                        block.desc.clone_from(desc);
                        block.label = label;
                    }
                    None => {}
                }
                *hint = i;
                return Ok(Rc::clone(&self.blocks[i]));
            }
        }
        let oom = Error::OutOfMemory { bytes, align: 64, available: 0 };
        let (desc, label) = desc.map_or_else(|| (workspace_desc(), Label::NONE), |(d, l)| (d.clone(), l));
        let block = Rc::new(Block::new(bytes.div_ceil(64), desc, label).ok_or(oom.clone())?);
        self.blocks.try_reserve(1).map_err(|_| oom)?;
        *hint = self.blocks.len();
        self.blocks.push(Rc::clone(&block));
        Ok(block)
    }
}

/// The layout a block holds while it serves as workspace (no tensor).
fn workspace_desc() -> TensorDesc {
    TensorDesc {
        meta: TensorMeta::new(crate::DType::F64, Shape::default()),
        strides: Default::default(),
        offset: 0,
    }
}

/// The pool as a core [`Allocator`](crate::Allocator): buffers borrow blocks
/// for as long as the pool is borrowed; [`release`](crate::Allocator::release)
/// returns a block for reuse. A buffer never released keeps its block until
/// the pool is dropped, and then leaks it (it cannot be reused safely).
///
/// ```
/// use lindiff_core::face::direct::Pool;
/// use lindiff_core::{Allocator, Host, WorkspaceReq};
/// let mut pool = Pool::new();
/// let mut lease = pool.allocator();
/// for _ in 0..3 {
///     let buf = Allocator::<Host>::allocate(&mut lease, WorkspaceReq::of::<f64>(100))?;
///     lease.release(buf);
/// }
/// // A smaller request reuses the block and is lent just what it asked for.
/// let small = Allocator::<Host>::allocate(&mut lease, WorkspaceReq::of::<f64>(10))?;
/// assert_eq!(small.len(), 80);
/// lease.release(small);
/// drop(lease);
/// assert_eq!(pool.block_count(), 1); // one block, reused
/// # Ok::<(), lindiff_core::Error>(())
/// ```
pub struct PoolAllocator<'p> {
    pool: &'p mut Pool,
}

impl Pool {
    /// This pool as an [`Allocator`](crate::Allocator).
    pub fn allocator(&mut self) -> PoolAllocator<'_> {
        PoolAllocator { pool: self }
    }
}

impl PoolAllocator<'_> {
    /// A tensor holding a copy of `buffer`'s first bytes, contiguous with
    /// `meta` (a program's result, before the buffer goes back).
    ///
    /// # Errors
    /// [`Error::Buffer`] for a buffer shorter than `meta`'s bytes or not
    /// written; [`Error::OutOfMemory`].
    pub(crate) fn tensor_from(&mut self, meta: &TensorMeta, buffer: &HostBuffer<'_>) -> Result<Tensor> {
        let desc = TensorDesc::contiguous(meta.clone()).ok_or_else(|| Error::Overflow {
            op: "run",
            arg: "result",
            shape: meta.shape.clone(),
        })?;
        let bytes = meta.bytes().unwrap_or(usize::MAX);
        let src = HostBuffer::data(buffer).map(|d| d.bytes()).filter(|b| b.len() >= bytes).ok_or(
            Error::Buffer { op: "run", arg: "result", why: "was not written", needed: bytes, got: 0 },
        )?;
        let block = self.pool.take(bytes, Some(&desc))?;
        // SAFETY: `take` returned a block only the pool and we reference.
        let dst = unsafe { block.uninit(bytes) };
        for (d, s) in dst.iter_mut().zip(&src[..bytes]) {
            *d = MaybeUninit::new(*s);
        }
        Ok(Tensor { bytes, block })
    }
}

impl<'p> crate::Allocator<'p, Host> for PoolAllocator<'p> {
    fn allocate(&mut self, req: crate::WorkspaceReq) -> Result<HostBuffer<'p>> {
        if !req.is_satisfiable() {
            return Err(Error::OutOfMemory { bytes: req.bytes(), align: req.align(), available: 0 });
        }
        if req.bytes() == 0 {
            // Most ops need no workspace: an empty buffer, no block leased
            // (`release` finds no block for it and does nothing).
            return Ok(HostBuffer::from_uninit(&mut []));
        }
        let bytes = if req.align() <= 64 { req.bytes() } else { req.bytes_unaligned() };
        let block = self.pool.take(bytes, None)?;
        let ptr = block.ptr.as_ptr().cast::<MaybeUninit<u8>>();
        // `release` recognises the block by this exact region.
        block.lent.set(bytes);
        // The lease is this strong count: the block is not free until
        // `release` gives it back.
        core::mem::forget(block);
        // SAFETY: the block was free (only the pool held it) and is now
        // leased, so nobody else takes or reads it; its memory lives as long
        // as the pool, which outlives `'p` (the pool never frees blocks).
        Ok(HostBuffer::from_uninit(unsafe { core::slice::from_raw_parts_mut(ptr, bytes) }))
    }

    fn release(&mut self, buffer: HostBuffer<'p>) {
        let Some(region) = buffer.into_uninit() else { return };
        let start = region.as_ptr().cast::<Chunk>();
        // Only the exact region lent (start and length) releases its block:
        // a part of it may still be borrowed elsewhere.
        let lent = |b: &&Rc<Block>| core::ptr::eq(b.ptr.as_ptr(), start) && b.lent.get() == region.len();
        if let Some(block) = self.pool.blocks.iter().find(lent) {
            if Rc::strong_count(block) > 1 {
                block.lent.set(NOT_LENT);
                // SAFETY: `allocate` forgot one strong reference to this
                // block; this gives exactly that one back.
                unsafe { Rc::decrement_strong_count(Rc::as_ptr(block)) };
            }
        }
    }
}

/// A tensor of the direct face: a pool block and the layout it holds.
/// Cloning shares the block.
#[derive(Clone)]
pub struct Tensor {
    /// The tensor's data: the block's first `bytes`, exactly the span in
    /// bytes of its layout (`Direct::copy_in` and `apply`, the only places
    /// a tensor is made, ensure it), initialised (`apply` makes its output
    /// tensors before the provider writes them, and returns them only
    /// after). While the tensor holds the block, the block's layout does
    /// not change (see `Block::desc`).
    bytes: usize,
    block: Rc<Block>,
}

impl Tensor {
    /// Dtype, shape and strides.
    pub fn desc(&self) -> &TensorDesc {
        &self.block.desc
    }

    /// Dtype and shape.
    pub fn meta(&self) -> &TensorMeta {
        &self.block.desc.meta
    }

    /// The dims.
    pub fn dims(&self) -> &[usize] {
        self.block.desc.meta.shape.dims()
    }

    /// The elements in storage order (column-major for every op output).
    ///
    /// # Errors
    /// [`Error::DType`] when `T` is not the tensor's dtype.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        if T::DTYPE != self.meta().dtype {
            return Err(Error::DType {
                op: "as_slice",
                arg: "tensor",
                expected: crate::DTypeReq::Exactly(T::DTYPE),
                got: self.meta().dtype,
            });
        }
        // SAFETY: every tensor a caller can reach is over a written block
        // (`Tensor::bytes`; `apply` reads none of its own outputs), which
        // is never borrowed mutably again while a tensor holds it (outputs
        // are taken from free blocks only).
        let data = HostData::from_bytes(unsafe { self.block.data(self.bytes) });
        // Blocks are 64-byte aligned, so the typed view always exists.
        Ok(data.typed::<T>().unwrap_or(&[]))
    }

    /// A copy of the elements in storage order.
    ///
    /// # Errors
    /// As [`Tensor::as_slice`].
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.as_slice().map(<[T]>::to_vec)
    }

    /// A read-only view of the bytes (what a provider reads).
    pub fn data(&self) -> HostData<'_> {
        // SAFETY: as in `as_slice`.
        HostData::from_bytes(unsafe { self.block.data(self.bytes) })
    }
}

impl core::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tensor").field("desc", self.desc()).finish_non_exhaustive()
    }
}

/// How many call plans a [`Direct`] face keeps; beyond that a new plan
/// replaces the one after the plan used last (round robin).
const PLANS: usize = 16;

/// A call plan and what the face adds to it: the layout of each output
/// tensor, and the pool blocks the call took last time.
struct FacePlan {
    prepared: Prepared,
    /// Contiguous layouts of the present outputs.
    outputs: heapless::Vec<Option<TensorDesc>, MAX_OUTPUTS>,
    /// Pool indices of the blocks taken last: the workspace's, then each
    /// output's (tried first: in a loop they are free again).
    blocks: [usize; MAX_OUTPUTS + 1],
    /// Output `i`'s label is `Label(first_label + i)`.
    first_label: u64,
}

impl FacePlan {
    /// The face's plan for `op` on these layouts.
    ///
    /// # Errors
    /// As [`call::prepare`]; [`Error::Overflow`] for an output whose
    /// strides overflow.
    fn new<P: Provider>(provider: &P, op: &Op, descs: &[&TensorDesc], first_label: u64) -> Result<FacePlan> {
        let prepared = call::prepare(provider, op, descs)?;
        let mut outputs = heapless::Vec::new();
        for meta in prepared.outputs() {
            let desc = match meta {
                Some(m) => Some(TensorDesc::contiguous(m.clone()).ok_or_else(|| Error::Overflow {
                    op: op.name(),
                    arg: "output",
                    shape: m.shape.clone(),
                })?),
                None => None,
            };
            let _ = outputs.push(desc); // as many as the metas: ≤ MAX_OUTPUTS
        }
        Ok(FacePlan { prepared, outputs, blocks: [usize::MAX; MAX_OUTPUTS + 1], first_label })
    }
}

/// Runs every op immediately on a host-memory provider.
///
/// The plan of a call (output metas, workspace size: [`call::prepare`];
/// the output layouts and the pool blocks the call took last) is kept for
/// the last 16 distinct (op, input layouts) pairs, so a loop of
/// same-shaped calls plans once and finds its blocks at once. The face
/// makes every buffer of a call to the plan's measure (pool blocks), so it
/// runs the plan without `call`'s buffer checks (they run in debug builds).
pub struct Direct<P> {
    provider: P,
    pool: Pool,
    plans: Vec<FacePlan>,
    /// The plan used last (checked first), or the next one to replace.
    recent: usize,
    /// The first label of the next plan made (labels are never reused).
    next_label: u64,
}

impl<P: Provider<Memory = Host>> Direct<P> {
    /// A face over `provider` with an empty pool.
    pub fn new(provider: P) -> Direct<P> {
        Direct { provider, pool: Pool::new(), plans: Vec::new(), recent: 0, next_label: 1 }
    }

    /// The index of the plan for `op` on `descs`, made (and kept) if new.
    ///
    /// # Errors
    /// As [`call::prepare`]; [`Error::OutOfMemory`] when the plan list cannot grow.
    fn plan(&mut self, op: &Op, descs: &[&TensorDesc]) -> Result<usize> {
        let is_for = |p: &FacePlan| p.prepared.is_for(op, descs.iter().copied());
        if self.plans.get(self.recent).is_some_and(is_for) {
            return Ok(self.recent);
        }
        if let Some(i) = self.plans.iter().position(is_for) {
            self.recent = i;
            return Ok(i);
        }
        let plan = FacePlan::new(&self.provider, op, descs, self.next_label)?;
        self.next_label += MAX_OUTPUTS as u64;
        let slot = if self.plans.len() < PLANS {
            // Room for every plan at once: later plans never reallocate.
            let more = PLANS - self.plans.len();
            self.plans.try_reserve_exact(more).map_err(|_| Error::OutOfMemory {
                bytes: core::mem::size_of::<FacePlan>() * more,
                align: core::mem::align_of::<FacePlan>(),
                available: 0,
            })?;
            self.plans.push(plan);
            self.plans.len() - 1
        } else {
            // Replace the one after the last used, round robin.
            let slot = (self.recent + 1) % PLANS;
            self.plans[slot] = plan;
            slot
        };
        self.recent = slot;
        Ok(slot)
    }

    /// The provider.
    pub fn provider(&self) -> &P {
        &self.provider
    }

    /// The pool (for statistics).
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The pool, to lend buffers from.
    pub(crate) fn pool_mut(&mut self) -> &mut Pool {
        &mut self.pool
    }

    /// A contiguous column-major tensor holding a copy of `data`.
    ///
    /// # Errors
    /// Too many dims, or `data.len()` not the element count.
    pub fn tensor<T: Element>(&mut self, dims: &[usize], data: &[T]) -> Result<Tensor> {
        let shape =
            Shape::new(dims).map_err(|e| Error::TooManyDims { op: "tensor", arg: "dims", rank: e.rank })?;
        let desc = TensorDesc::contiguous(TensorMeta::new(T::DTYPE, shape.clone()))
            .ok_or(Error::Overflow { op: "tensor", arg: "dims", shape })?;
        self.copy_in(desc, data)
    }

    /// A `rows×cols` tensor over a copy of row-major `data` (a JS or NumPy
    /// array), read in place by the kernels through strides `[cols, 1]`.
    ///
    /// # Errors
    /// `data.len() != rows·cols`.
    pub fn tensor_row_major<T: Element>(&mut self, rows: usize, cols: usize, data: &[T]) -> Result<Tensor> {
        let desc = TensorDesc::row_major_matrix(T::DTYPE, rows, cols).ok_or_else(|| Error::Overflow {
            op: "tensor",
            arg: "dims",
            shape: Shape::new(&[rows, cols]).unwrap_or_default(),
        })?;
        self.copy_in(desc, data)
    }

    fn copy_in<T: Element>(&mut self, desc: TensorDesc, data: &[T]) -> Result<Tensor> {
        let needed = desc.span().unwrap_or(usize::MAX);
        if data.len() != needed {
            return Err(Error::Buffer {
                op: "tensor",
                arg: "data",
                why: "must hold every element",
                needed,
                got: data.len(),
            });
        }
        let bytes = core::mem::size_of_val(data);
        let block = self.pool.take(bytes, Some(&desc))?;
        // SAFETY: `take` returned a block only the pool and we reference.
        let dst = unsafe { block.uninit(bytes) };
        for (d, s) in dst.iter_mut().zip(HostData::from_slice(data).bytes()) {
            *d = MaybeUninit::new(*s);
        }
        Ok(Tensor { bytes, block })
    }
}

impl<P: Provider<Memory = Host>> Face for Direct<P> {
    type Tensor = Tensor;

    fn meta(&self, t: &Tensor) -> TensorMeta {
        t.meta().clone()
    }

    fn apply(&mut self, op: Op, inputs: &[&Tensor]) -> Result<Applied<Tensor>> {
        let mut descs = heapless::Vec::<&TensorDesc, MAX_INPUTS>::new();
        for t in inputs {
            descs.push(t.desc()).map_err(|_| Error::Arity {
                op: op.name(),
                expected: op.input_names().len(),
                got: inputs.len(),
            })?;
        }
        let index = self.plan(&op, &descs)?;
        let FacePlan { prepared: plan, outputs, blocks: hints, first_label } = &mut self.plans[index];
        let req = plan.workspace();
        if !req.is_satisfiable() {
            return Err(Error::OutOfMemory { bytes: req.bytes(), align: req.align(), available: 0 });
        }
        // Blocks start 64-byte aligned; a stricter requirement needs slack.
        let workspace_bytes = if req.align() <= 64 { req.bytes() } else { req.bytes_unaligned() };
        let [ws_hint, out_hints @ ..] = hints;
        let workspace = self.pool.take_hinted(workspace_bytes, None, ws_hint)?;
        // The result's tensors, over blocks the provider has yet to write:
        // they leave `apply` only once it has (`Tensor::bytes`).
        let mut outs = Applied::new();
        for (i, (output, hint)) in outputs.iter().zip(out_hints).enumerate() {
            let tensor = match output {
                Some(desc) => {
                    let bytes = plan.output_bytes(i);
                    let label = Label(*first_label + i as u64);
                    Some(Tensor { bytes, block: self.pool.take_hinted(bytes, Some((desc, label)), hint)? })
                }
                None => None,
            };
            let _ = outs.push(tensor); // as many as the outputs: ≤ MAX_OUTPUTS
        }
        {
            let mut ins = heapless::Vec::<Input<'_, Host>, MAX_INPUTS>::new();
            for t in inputs {
                let _ = ins.push(Input { desc: t.desc(), data: t.data() });
            }
            let mut buffers = heapless::Vec::<Option<HostBuffer<'_>>, MAX_OUTPUTS>::new();
            for t in &outs {
                // SAFETY: each output block was just taken free from the pool:
                // only the pool (which never touches contents) and this call
                // hold it, and every output has its own block.
                let _ = buffers
                    .push(t.as_ref().map(|t| HostBuffer::from_uninit(unsafe { t.block.uninit(t.bytes) })));
            }
            let mut refs = heapless::Vec::<Option<&mut HostBuffer<'_>>, MAX_OUTPUTS>::new();
            for b in buffers.iter_mut() {
                let _ = refs.push(b.as_mut());
            }
            // SAFETY: the workspace block was just taken free, as above.
            let mut ws = HostBuffer::from_uninit(unsafe { workspace.uninit(workspace_bytes) });
            // SAFETY: `plan` was made by `call::prepare` for exactly these
            // inputs' layouts (`Direct::plan` compared them; the layouts
            // cannot change while the tensors hold their blocks), and every
            // buffer was made here to its measure, so `call`'s buffer
            // checks would pass: a tensor's data is its block's first
            // `bytes`, its view's whole span (`Tensor::bytes`); blocks
            // start 64-byte aligned, past every dtype's alignment; `refs`
            // has a buffer of `plan.output_bytes(i)` bytes exactly where
            // the plan has output `i` (`outputs` was made from the plan's
            // metas); the workspace block holds `req.bytes()` from its
            // first `req.align()`-aligned byte (its start, up to 64; else
            // `bytes_unaligned` leaves room to align).
            unsafe { call::run_plan_unchecked(&self.provider, plan, &ins, &mut refs, &mut ws)? };
            drop(refs);
            for (b, t) in buffers.iter().zip(&outs) {
                if let (Some(b), Some(_)) = (b, t) {
                    if !b.is_initialized() {
                        return Err(Error::Buffer {
                            op: op.name(),
                            arg: "output",
                            why: "was not written by the provider",
                            needed: 1,
                            got: 0,
                        });
                    }
                }
            }
        }
        Ok(outs)
    }
}
