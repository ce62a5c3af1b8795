//! The batch driver: splits a batch into lanes, carves each lane's scratch
//! out of the workspace, and hands kernels typed views of one matrix at a time.
//!
//! Inputs are strided views (a row-major matrix is read in place); outputs are
//! contiguous column-major, one disjoint region per batch item. Kernels must
//! write every element of every present output (outputs start uninitialised).

use core::marker::PhantomData;
use core::mem::MaybeUninit;
use faer::dyn_stack::{MemStack, StackReq};
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::{MAX_INPUTS, MAX_OUTPUTS};
use lindiff_core::{
    DType, Element, Error, Exec, Host, HostBuffer, Input, LanePlan, Output, Result, TensorDesc, WorkspaceReq,
};

/// Where one argument's elements live, for every batch item.
#[derive(Clone, Copy, Debug)]
struct ArgPlan<'a> {
    base: *mut u8,
    dtype: DType,
    rows: usize,
    cols: usize,
    row_stride: isize,
    col_stride: isize,
    items: ItemStep<'a>,
}

/// How far apart an argument's batch items are, in elements.
#[derive(Clone, Copy, Debug)]
enum ItemStep<'a> {
    /// A strided input: one stride per batch dim (borrowed from its desc).
    Strided(&'a [usize]),
    /// A contiguous column-major output: item `b` starts at `b·len`
    /// (its batch dims follow the core dims without gaps).
    Packed(usize),
}

/// The per-matrix dims of a call, known before any memory exists: what
/// `Kernel::scratch` sizes from.
#[derive(Clone, Copy, Debug)]
pub struct Shapes {
    count: usize,
    dims: [(usize, usize); MAX_INPUTS],
}

impl Shapes {
    /// Shapes from input layouts with `batch_rank` batch dims (all arguments
    /// share them, as `lindiff_core::call` checked).
    pub fn new(inputs: &[&TensorDesc], batch_rank: usize) -> Shapes {
        let mut dims = [(0, 0); MAX_INPUTS];
        for (d, desc) in dims.iter_mut().zip(inputs) {
            let (r, c, _, _) = core_layout(desc, batch_rank);
            *d = (r, c);
        }
        let count = inputs
            .first()
            .map_or(1, |d| d.meta.shape.batch(d.meta.shape.rank() - batch_rank).iter().product());
        Shapes { count, dims }
    }

    /// Number of matrices in the batch.
    pub fn count(&self) -> usize {
        self.count
    }

    /// (rows, cols) of input `i`'s matrices (vectors are len×1).
    pub fn input(&self, i: usize) -> (usize, usize) {
        self.dims[i]
    }

    /// `true` when every input's matrix is small enough for the scratch
    /// arithmetic of the kernels (faer's is unchecked, and overflows or
    /// unwraps `None` for dims whose products do not fit): (rows + 64) ·
    /// (cols + 64) elements, with [`SCRATCH_MARGIN`] copies of 16 bytes
    /// each, fit in `isize`. Kernels that form a square of one dim (a full
    /// SVD's U, a complete QR's Q) check that too ([`square_fits`]).
    pub fn fit(&self) -> bool {
        self.dims.iter().all(|&(r, c)| product_fits(r, c))
    }
}

/// How many 16-byte copies of an input's elements the scratch arithmetic
/// must be able to count without overflow: far more than any kernel takes
/// (a few copies), so that faer's sums of its sizes stay in range too.
pub const SCRATCH_MARGIN: usize = 1 << 10;

/// `true` when (rows + 64) · (cols + 64) · 16 · [`SCRATCH_MARGIN`] bytes
/// fit in `isize` (see [`Shapes::fit`]).
fn product_fits(rows: usize, cols: usize) -> bool {
    let limit = isize::MAX as usize / (16 * SCRATCH_MARGIN);
    match (rows.checked_add(64), cols.checked_add(64)) {
        (Some(r), Some(c)) => r.checked_mul(c).is_some_and(|p| p <= limit),
        _ => false,
    }
}

/// [`Shapes::fit`] for an n×n matrix a kernel forms (a full SVD's U and V,
/// a complete QR's Q): its scratch returns `StackReq::OVERFLOW` otherwise,
/// before faer sees the size.
pub fn square_fits(n: usize) -> bool {
    product_fits(n, n)
}

/// The per-item layout of a call: inputs and outputs located, batch dims known.
pub(crate) struct BatchPlan<'a> {
    /// Number of matrices in the batch.
    count: usize,
    batch_dims: &'a [usize],
    inputs: heapless::Vec<ArgPlan<'a>, MAX_INPUTS>,
    /// `None` for an absent output (and past the op's outputs).
    // An array, not a second `heapless::Vec`: LLVM merged two vectors'
    // zero lengths into one `memset` over the uninitialised inputs between
    // them (400 bytes per call).
    outputs: [Option<ArgPlan<'a>>; MAX_OUTPUTS],
    _borrows: PhantomData<&'a mut [u8]>,
}

// SAFETY: a `BatchPlan` only holds addresses of memory borrowed for `'a`
// (inputs shared, outputs unique). Threads use it to read inputs and to write
// disjoint per-item output regions (`Item` hands out item `b`'s region only,
// and the lanes cover disjoint item ranges), so sharing it is race-free.
unsafe impl Sync for BatchPlan<'_> {}
// SAFETY: as above; moving the plan moves only addresses and the borrows.
unsafe impl Send for BatchPlan<'_> {}

/// Core dims of an argument with `batch_rank` trailing batch dims:
/// (rows, cols, row stride, col stride) — vectors are len×1, scalars 1×1.
#[inline(always)]
fn core_layout(desc: &TensorDesc, batch_rank: usize) -> (usize, usize, isize, isize) {
    let dims = desc.meta.shape.dims();
    let core = dims.len() - batch_rank;
    let s = &desc.strides;
    match core {
        0 => (1, 1, 1, 1),
        1 => (dims[0], 1, s[0] as isize, dims[0].max(1) as isize),
        _ => (dims[0], dims[1], s[0] as isize, s[1] as isize),
    }
}

impl<'a> BatchPlan<'a> {
    /// Locates every argument. `batch_rank` is the number of batch dims
    /// (shared by all arguments, checked by `lindiff_core::call`, which also
    /// sized every output buffer for its contiguous layout), then returns
    /// `f` of the plan. The plan (~670 bytes) is written where it will
    /// live, never moved: returned filled, it cost a `memcpy` per call, a
    /// visible part of a small call.
    pub(crate) fn run_with<R>(
        inputs: &'a [Input<'_, Host>],
        outputs: &'a mut [Option<Output<'_, '_, Host>>],
        batch_rank: usize,
        f: impl FnOnce(&BatchPlan<'a>) -> R,
    ) -> R {
        let first_dims = inputs
            .first()
            .map(|i| i.desc.meta.shape.dims())
            .or_else(|| outputs.iter().flatten().next().map(|o| o.meta.shape.dims()))
            .unwrap_or(&[]);
        let batch_dims = &first_dims[first_dims.len().saturating_sub(batch_rank)..];
        debug_assert!(inputs.len() <= MAX_INPUTS && outputs.len() <= MAX_OUTPUTS, "checked by `call`");
        let mut plan = BatchPlan {
            count: batch_dims.iter().product(),
            batch_dims,
            inputs: heapless::Vec::new(),
            outputs: [None; MAX_OUTPUTS],
            _borrows: PhantomData,
        };
        plan.locate(inputs, outputs, batch_rank);
        f(&plan)
    }

    /// Fills the argument plans of an empty plan.
    #[inline(always)]
    fn locate(
        &mut self,
        inputs: &'a [Input<'_, Host>],
        outputs: &'a mut [Option<Output<'_, '_, Host>>],
        batch_rank: usize,
    ) {
        for input in inputs {
            let desc = input.desc;
            let bytes = input.data.bytes();
            let size = desc.meta.dtype.size();
            // `lindiff_core::call` checked the start is aligned for the dtype.
            // Wrapping: an empty view may carry any offset and is never read.
            let base = bytes.as_ptr().wrapping_add(desc.offset.wrapping_mul(size));
            let (rows, cols, rs, cs) = core_layout(desc, batch_rank);
            let _ = self.inputs.push(ArgPlan {
                base: base.cast_mut(),
                dtype: desc.meta.dtype,
                rows,
                cols,
                row_stride: rs,
                col_stride: cs,
                items: ItemStep::Strided(&desc.strides[desc.strides.len() - batch_rank..]),
            });
        }
        for (planned, slot) in self.outputs.iter_mut().zip(outputs.iter_mut()) {
            *planned = slot.as_mut().map(|out| {
                let meta = out.meta;
                // SAFETY: kernels store only initialised values (whole
                // elements) through the output views built from this.
                let bytes = unsafe { out.buffer.as_uninit_bytes_mut() };
                // The contiguous column-major layout (`lindiff_core::call`
                // sized the buffer for it, so rows·cols cannot overflow).
                let dims = meta.shape.dims();
                let (rows, cols) = match dims.len() - batch_rank {
                    0 => (1, 1),
                    1 => (dims[0], 1),
                    _ => (dims[0], dims[1]),
                };
                ArgPlan {
                    base: bytes.as_mut_ptr().cast(),
                    dtype: meta.dtype,
                    rows,
                    cols,
                    row_stride: 1,
                    col_stride: rows.max(1) as isize,
                    items: ItemStep::Packed(rows * cols),
                }
            });
        }
    }

    /// Element offset of batch item `b` in an argument.
    fn item_offset(&self, arg: &ArgPlan<'_>, b: usize) -> usize {
        match arg.items {
            ItemStep::Packed(len) => b * len,
            ItemStep::Strided(strides) => {
                let mut rest = b;
                let mut offset = 0;
                for (&d, &stride) in self.batch_dims.iter().zip(strides) {
                    offset += (rest % d) * stride;
                    rest /= d;
                }
                offset
            }
        }
    }

    /// The bytes of each output (0 for an absent one): all its items.
    pub(crate) fn output_bytes(&self) -> [usize; MAX_OUTPUTS] {
        // `lindiff_core::call` sized each buffer for this many bytes, so
        // the products do not overflow.
        let mut bytes = [0; MAX_OUTPUTS];
        for (b, arg) in bytes.iter_mut().zip(&self.outputs) {
            if let Some(a) = arg {
                *b = a.rows * a.cols * self.count * a.dtype.size();
            }
        }
        bytes
    }

    /// The per-matrix dims, for [`Kernel::scratch`] (only a run with
    /// several lanes asks: see [`run`]).
    fn shapes(&self) -> Shapes {
        let mut dims = [(0, 0); MAX_INPUTS];
        for (d, arg) in dims.iter_mut().zip(&self.inputs) {
            *d = (arg.rows, arg.cols);
        }
        Shapes { count: self.count, dims }
    }

    /// The view of batch item `b`.
    pub(crate) fn item(&self, b: usize) -> Item<'_> {
        Item { plan: self, b }
    }
}

/// One batch item: typed views of its inputs and outputs.
pub struct Item<'p> {
    plan: &'p BatchPlan<'p>,
    b: usize,
}

impl<'p> Item<'p> {
    fn input_ptr<T: Element>(&self, i: usize) -> (&'p ArgPlan<'p>, *const T) {
        let arg = &self.plan.inputs[i];
        assert_eq!(arg.dtype, T::DTYPE, "kernel read input {i} with the wrong dtype");
        let offset = self.plan.item_offset(arg, self.b);
        (arg, arg.base.cast::<T>().wrapping_add(offset))
    }

    /// Input `i` of this item as a strided matrix (vectors are len×1).
    pub fn mat<T: Element>(&self, i: usize) -> MatRef<'p, T> {
        let (arg, ptr) = self.input_ptr::<T>(i);
        // SAFETY: `lindiff_core::call` checked that every element of the view
        // (offset + Σ index·stride over all dims) lies inside the input's
        // initialised data, which is borrowed for the plan's lifetime; the
        // base is aligned for `T` (checked by `lindiff_core::call`, and the dtype
        // matches by the assert above).
        unsafe { MatRef::from_raw_parts(ptr, arg.rows, arg.cols, arg.row_stride, arg.col_stride) }
    }

    /// Element `j` of input `i` in column-major order (entry `j` of a
    /// vector).
    pub fn get<T: Element>(&self, i: usize, j: usize) -> T {
        let (arg, ptr) = self.input_ptr::<T>(i);
        assert!(j < arg.rows * arg.cols, "kernel read past input {i}");
        let (row, col) = (j % arg.rows, j / arg.rows);
        // SAFETY: (row, col) is inside the checked rows×cols view (assert
        // above), so its offset is one of the view's elements: aligned,
        // initialised; see `mat`.
        unsafe { *ptr.offset(row as isize * arg.row_stride + col as isize * arg.col_stride) }
    }

    fn output_ptr<T: Element>(&self, i: usize) -> (&ArgPlan<'p>, *mut T) {
        let arg = self.plan.outputs[i]
            .as_ref()
            .expect("kernel wrote an absent output (switched off, or past the op's)");
        assert_eq!(arg.dtype, T::DTYPE, "kernel wrote output {i} with the wrong dtype");
        let offset = self.plan.item_offset(arg, self.b);
        (arg, arg.base.cast::<T>().wrapping_add(offset))
    }

    /// `true` when output `i` is present (not switched off by the options;
    /// `false` past the op's outputs).
    pub fn has_output(&self, i: usize) -> bool {
        self.plan.outputs[i].is_some()
    }

    /// Output `i` of this item as a contiguous column-major matrix.
    ///
    /// Its memory starts uninitialised: write every element before reading.
    pub fn out_mat<T: Element>(&mut self, i: usize) -> MatMut<'_, T> {
        let (arg, ptr) = self.output_ptr::<T>(i);
        // SAFETY: item `b`'s region of a contiguous output lies inside the
        // output buffer (sized by `call`) and is disjoint from every other
        // item's; only this `Item` (borrowed mutably) hands it out, and lanes
        // process disjoint items. Aligned (checked by `lindiff_core::call`).
        unsafe { MatMut::from_raw_parts_mut(ptr, arg.rows, arg.cols, arg.row_stride, arg.col_stride) }
    }

    /// Output `i` of this item as one slice (column-major; outputs are
    /// contiguous), for kernels that fill it element by element. Its memory
    /// may be uninitialised, hence `MaybeUninit`: write every element, and
    /// store only initialised values (the caller marks the output
    /// initialised once the kernel returns `Ok`).
    pub fn out_slice<T: Element>(&mut self, i: usize) -> &mut [MaybeUninit<T>] {
        let (arg, ptr) = self.output_ptr::<T>(i);
        // SAFETY: as in `out_mat`: item `b`'s region of output `i` is its
        // rows·cols contiguous elements from `ptr`, inside the buffer,
        // aligned (`call` checks every present output's alignment, empty
        // ones too) and exclusively ours while `self` is borrowed mutably;
        // `MaybeUninit<T>` has `T`'s layout and no validity requirement.
        unsafe { core::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), arg.rows * arg.cols) }
    }

    /// Outputs `i` and `j` (different) at once, as in [`Item::out_mat`].
    pub fn out_pair<A: Element, B: Element>(&mut self, i: usize, j: usize) -> (MatMut<'_, A>, MatMut<'_, B>) {
        assert_ne!(i, j, "kernel asked for the same output twice");
        let (ai, pi) = self.output_ptr::<A>(i);
        let (aj, pj) = self.output_ptr::<B>(j);
        // SAFETY: as in `out_mat`, for two different outputs, whose buffers
        // do not overlap (each is its own `&mut` region).
        unsafe {
            (
                MatMut::from_raw_parts_mut(pi, ai.rows, ai.cols, ai.row_stride, ai.col_stride),
                MatMut::from_raw_parts_mut(pj, aj.rows, aj.cols, aj.row_stride, aj.col_stride),
            )
        }
    }

    /// Writes element `j` (column-major) of output `i`.
    pub fn set<T: Element>(&mut self, i: usize, j: usize, value: T) {
        let (arg, ptr) = self.output_ptr::<T>(i);
        assert!(j < arg.rows * arg.cols, "kernel wrote past output {i}");
        // SAFETY: in bounds of item `b`'s region (assert above; contiguous),
        // aligned, exclusively ours; see `out_mat`.
        unsafe { ptr.add(j).write(value) }
    }
}

/// What went wrong with one matrix; `run` adds the op name and batch index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Failure {
    /// An input had NaN or infinity.
    NonFinite(&'static str),
    /// Cholesky met a non-positive pivot.
    NotPositiveDefinite(&'static str),
    /// A real function met a real input outside its domain.
    OutsideDomain(&'static str),
    /// A solve met an exactly singular matrix (or a permutation input that
    /// is not one).
    Singular(&'static str),
    /// A solve's singularity test found the matrix singular to working
    /// precision: `rcond` is the measure below n·ε (see
    /// `lindiff_core::op::SingularCheck`).
    NearlySingular {
        /// The matrix argument.
        arg: &'static str,
        /// The pivot ratio or estimated reciprocal condition number.
        rcond: f64,
    },
    /// The answer, or a quantity the kernel must form, is outside what the
    /// dtype represents accurately (`Error::OutOfRange`).
    OutOfRange {
        /// The argument.
        arg: &'static str,
        /// What is out of range, and what to do instead.
        why: &'static str,
    },
    /// An iteration did not converge.
    NonConvergence,
    /// A gauge check found a cotangent for which the decomposition `op` is
    /// not differentiable (reported under `op`, not the check's own name).
    NotDifferentiable {
        /// The decomposition ("svd", "eigh").
        op: &'static str,
        /// Its output whose cotangent is at fault.
        output: &'static str,
        /// Why.
        why: &'static str,
    },
    /// A check found a coupled tie or a near tie the rule cannot resolve
    /// accurately (reported under the decomposition `op`).
    NearTie {
        /// The decomposition.
        op: &'static str,
        /// The pair of values.
        pair: (usize, usize),
        /// Their gap.
        gap: f64,
        /// The estimated relative error (∞ at a tie).
        estimate: f64,
        /// What to use instead.
        suggestion: &'static str,
    },
}

impl Failure {
    /// The error this failure is for op `op` at batch item `batch_index`.
    pub(crate) fn into_error(self, op: &'static str, batch_index: usize) -> Error {
        match self {
            Failure::NonFinite(arg) => Error::NonFinite { op, arg, batch_index },
            Failure::NotPositiveDefinite(arg) => Error::NotPositiveDefinite { op, arg, batch_index },
            Failure::OutsideDomain(arg) => Error::OutsideDomain { op, arg, batch_index },
            Failure::Singular(arg) => Error::Singular { op, arg, batch_index, rcond: 0.0 },
            Failure::NearlySingular { arg, rcond } => Error::Singular { op, arg, batch_index, rcond },
            Failure::OutOfRange { arg, why } => Error::OutOfRange { op, arg, batch_index, why },
            Failure::NonConvergence => Error::NonConvergence { op, batch_index },
            Failure::NotDifferentiable { op, output, why } => Error::NotDifferentiable { op, output, why },
            Failure::NearTie { op, pair, gap, estimate, suggestion } => {
                Error::NearTie { op, pair, gap, estimate, suggestion }
            }
        }
    }
}

/// A per-matrix computation.
///
/// The contract [`run_kernel`](crate::batch_run::run_kernel) relies on
/// (its callers vouch for it): on `Ok`, `run` has written every element of
/// every present output of its item, and it never reads an output element
/// before writing it — output memory starts uninitialised.
pub trait Kernel<T>: Sync {
    /// Scratch one matrix needs when run with `par`.
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq;
    /// Computes one batch item, writing all its present outputs.
    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> core::result::Result<(), Failure>;
}

/// faer's parallelism for one matrix given `threads` team members.
pub(crate) fn par_for(threads: usize) -> Par {
    #[cfg(feature = "faer-rayon")]
    if threads > 1 {
        return Par::rayon(threads);
    }
    let _ = threads;
    Par::Seq
}

/// Where every lane's scratch region starts: a multiple of this many bytes.
const LANE_ALIGN: usize = 64;

/// One lane's region for a kernel's `StackReq`, aligned to at least
/// [`LANE_ALIGN`]. A single-lane call then carves its region without asking
/// the kernel for its scratch again ([`run`]): it pads the workspace to
/// [`LANE_ALIGN`] only, so its region starts at or before the boundary of
/// the kernel's own alignment that `call` counted the bytes from, and ends
/// at the same place; dyn-stack's aligned carves end no later for an
/// earlier start, so every carve still fits (tested below with alignments
/// up to 256 and every start).
pub(crate) fn to_req(req: StackReq) -> WorkspaceReq {
    if req.align_bytes() == 0 {
        // faer's `StackReq::OVERFLOW`: a size that does not fit in usize.
        return WorkspaceReq::new(usize::MAX, 1);
    }
    WorkspaceReq::new(req.size_bytes(), req.align_bytes().max(LANE_ALIGN))
}

/// The workspace a batched call needs: one scratch region per lane; an
/// unsatisfiable requirement (`bytes() == usize::MAX`) when an input is too
/// large for the kernels' scratch arithmetic ([`Shapes::fit`]), without
/// asking the kernel.
pub(crate) fn workspace<T>(kernel: &dyn Kernel<T>, shapes: &Shapes, exec: Exec) -> WorkspaceReq {
    if !shapes.fit() {
        return WorkspaceReq::new(usize::MAX, 1);
    }
    let lanes = exec.plan(shapes.count());
    to_req(kernel.scratch(shapes, par_for(lanes.threads_per_matrix))).repeat(lanes.lanes.min(MAX_LANES))
}

/// Most batch lanes one call uses (more threads than this share lanes).
pub(crate) const MAX_LANES: usize = 256;

/// Runs `kernel` over every item, lanes in parallel when the exec says so,
/// and reports the lowest-indexed failure.
pub(crate) fn run<T>(
    op: &'static str,
    kernel: &dyn Kernel<T>,
    plan: &BatchPlan<'_>,
    exec: Exec,
    workspace: &mut HostBuffer<'_>,
) -> Result<()> {
    let LanePlan { lanes, threads_per_matrix } = exec.plan(plan.count);
    let lanes = lanes.min(MAX_LANES);
    let par = par_for(threads_per_matrix);
    // SAFETY: faer and the kernels store only initialised values through
    // their scratch temporaries.
    let bytes = unsafe { workspace.as_uninit_bytes_mut() };
    // One lane takes the whole workspace from its first LANE_ALIGN
    // boundary (`to_req` sized the region for that), so only several lanes
    // need the kernel's scratch size (for the stride between regions): at
    // small n asking faer for it again is a visible part of a call.
    let lane_req = if lanes > 1 { Some(to_req(kernel.scratch(&plan.shapes(), par))) } else { None };
    let align = lane_req.map_or(LANE_ALIGN, |r| r.align());
    let pad = (bytes.as_ptr() as usize).wrapping_neg() & (align - 1);
    let pad = pad.min(bytes.len()); // an empty workspace needs no alignment
    let bytes = &mut bytes[pad..];
    let count = plan.count;
    let run_lane =
        |lane: usize, region: &mut [MaybeUninit<u8>]| -> core::result::Result<(), (usize, Failure)> {
            let (start, end) = (count * lane / lanes, count * (lane + 1) / lanes);
            let stack = MemStack::new(region);
            for b in start..end {
                let mut item = plan.item(b);
                kernel.run(&mut item, par, stack).map_err(|f| (b, f))?;
            }
            Ok(())
        };
    let result = match lane_req {
        None => run_lane(0, bytes),
        Some(req) => run_lanes(lanes, req.repeat(2).bytes() - req.bytes(), req.bytes(), bytes, &run_lane),
    };
    result.map_err(|(b, failure)| failure.into_error(op, b))
}

/// One lane's work: items of lane `lane` with that lane's scratch bytes;
/// the error carries the failing item's index.
type LaneFn<'a> =
    dyn Fn(usize, &mut [MaybeUninit<u8>]) -> core::result::Result<(), (usize, Failure)> + Sync + 'a;

/// The workspace bytes of lane `lane` (`stride` apart, `len` long).
fn lane_region(
    bytes: &mut [MaybeUninit<u8>],
    stride: usize,
    len: usize,
    lanes: usize,
) -> impl Iterator<Item = &mut [MaybeUninit<u8>]> {
    let mut rest = bytes;
    (0..lanes).map(move |lane| {
        let take = if lane + 1 == lanes { len } else { stride };
        let all = core::mem::take(&mut rest);
        let at = take.min(all.len());
        let (region, tail) = all.split_at_mut(at);
        rest = tail;
        let keep = len.min(region.len());
        &mut region[..keep]
    })
}

/// Runs every lane, each on its region of `bytes`: in parallel on the
/// rayon pool with the `threads` feature, else one after another (same
/// results). Returns the lowest-indexed failing item.
fn run_lanes(
    lanes: usize,
    stride: usize,
    len: usize,
    bytes: &mut [MaybeUninit<u8>],
    run_lane: &LaneFn<'_>,
) -> core::result::Result<(), (usize, Failure)> {
    #[cfg(feature = "threads")]
    {
        use rayon::prelude::*;
        let mut regions: heapless::Vec<&mut [MaybeUninit<u8>], MAX_LANES> = heapless::Vec::new();
        for region in lane_region(bytes, stride, len, lanes) {
            let _ = regions.push(region);
        }
        regions
            .as_mut_slice()
            .par_iter_mut()
            .enumerate()
            .filter_map(|(lane, region)| run_lane(lane, region).err())
            .min_by_key(|&(b, _)| b)
            .map_or(Ok(()), Err)
    }
    #[cfg(not(feature = "threads"))]
    {
        // Lanes run in order, so the first failure is the lowest index.
        let mut first = None;
        for (lane, region) in lane_region(bytes, stride, len, lanes).enumerate() {
            if let Err(e) = run_lane(lane, region) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}
