//! A provider whose buffers are integer handles into storage it owns, like
//! device memory. Core cannot look inside a [`Handle`]; only this provider
//! (through its [`HandleStore`]) can.
//!
//! It implements `det` and the fused solve `lu_factor_solve` for `f64` with a
//! textbook partial-pivot elimination — enough to run valid calls through the
//! whole contract — and answers every other op with `Error::Unsupported`.

use lindiff_core::{
    Allocator, DType, Error, Exec, Input, LinalgOp, Memory, Op, Output, Provider, Result, TensorDesc,
    WorkspaceReq,
};
use std::cell::RefCell;
use std::rc::Rc;

/// A buffer: an index into a [`HandleStore`] plus its size and whether it
/// has been written. Deliberately not `Clone`: it is owned like memory.
#[derive(Debug)]
pub struct Handle {
    id: usize,
    bytes: usize,
    written: bool,
}

/// A read-only view of a written [`Handle`].
#[derive(Clone, Copy, Debug)]
pub struct DataHandle {
    id: usize,
    bytes: usize,
}

/// The memory space of [`HandleProvider`].
#[derive(Debug)]
pub struct HandleMemory;

impl Memory for HandleMemory {
    type Buffer<'m> = Handle;
    type Data<'a> = DataHandle;

    fn usable_bytes(buffer: &Handle, _align: usize) -> usize {
        buffer.bytes // the store aligns every slot for f64
    }

    fn data_bytes(data: &DataHandle) -> usize {
        data.bytes
    }

    fn data_is_aligned(_data: &DataHandle, _align: usize) -> bool {
        true // every slot is a Vec<f64>
    }

    fn buffer_is_aligned(_buffer: &Handle, _align: usize) -> bool {
        true
    }

    fn data<'a, 'm: 'a>(buffer: &'a Handle) -> Option<DataHandle> {
        buffer.written.then_some(DataHandle { id: buffer.id, bytes: buffer.bytes })
    }

    fn shorten<'s, 'a: 's>(data: DataHandle) -> DataHandle {
        data
    }
}

/// The storage behind the handles: one `f64` vector per slot.
#[derive(Clone, Debug, Default)]
pub struct HandleStore {
    slots: Rc<RefCell<Vec<Vec<f64>>>>,
}

impl HandleStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uploads `values` and returns a written handle to them.
    pub fn upload(&self, values: &[f64]) -> Handle {
        let mut slots = self.slots.borrow_mut();
        slots.push(values.to_vec());
        Handle { id: slots.len() - 1, bytes: values.len() * 8, written: true }
    }

    /// A handle claiming `bytes` bytes without storage behind it (for
    /// shape-error tests whose inputs are never read).
    pub fn phantom(&self, bytes: usize) -> Handle {
        Handle { id: usize::MAX, bytes, written: true }
    }

    /// Copies a written buffer back.
    pub fn download(&self, handle: &Handle) -> Option<Vec<f64>> {
        handle.written.then(|| self.slots.borrow()[handle.id].clone())
    }

    /// The number of slots ever allocated.
    pub fn slot_count(&self) -> usize {
        self.slots.borrow().len()
    }

    fn read(&self, data: DataHandle) -> Result<Vec<f64>> {
        self.slots
            .borrow()
            .get(data.id)
            .cloned()
            .ok_or(Error::ProviderUnavailable { provider: "handles", why: "a phantom handle was read" })
    }
}

impl<'m> Allocator<'m, HandleMemory> for HandleStore {
    fn allocate(&mut self, req: WorkspaceReq) -> Result<Handle> {
        if !req.is_satisfiable() || req.bytes() > (1 << 30) {
            return Err(Error::OutOfMemory { bytes: req.bytes(), align: req.align(), available: 1 << 30 });
        }
        let mut slots = self.slots.borrow_mut();
        slots.push(vec![0.0; req.bytes().div_ceil(8)]);
        Ok(Handle { id: slots.len() - 1, bytes: req.bytes(), written: false })
    }

    fn release(&mut self, buffer: Handle) {
        if let Some(slot) = self.slots.borrow_mut().get_mut(buffer.id) {
            *slot = Vec::new();
        }
    }
}

/// The provider. Serial; `f64` only; `det` and `lu_factor_solve` only.
#[derive(Clone, Debug, Default)]
pub struct HandleProvider {
    store: HandleStore,
}

impl HandleProvider {
    /// A provider over `store`.
    pub fn new(store: HandleStore) -> Self {
        HandleProvider { store }
    }
}

fn unsupported(op: &Op) -> Error {
    Error::Unsupported {
        op: op.name(),
        provider: "handles",
        why: "the handle test provider runs det and lu_factor_solve in f64 only",
    }
}

/// Gathers a strided input into column-major order for batch item `b`.
fn gather(desc: &TensorDesc, data: &[f64], b: usize) -> Vec<f64> {
    let dims = desc.meta.shape.dims();
    let (rows, cols) = (dims[0], dims[1]);
    // Batch offset: decompose `b` over the batch dims.
    let mut offset = desc.offset;
    let mut rest = b;
    for (k, &d) in dims.iter().enumerate().skip(2) {
        offset += (rest % d) * desc.strides[k];
        rest /= d;
    }
    let mut out = Vec::with_capacity(rows * cols);
    for j in 0..cols {
        for i in 0..rows {
            out.push(data[offset + i * desc.strides[0] + j * desc.strides[1]]);
        }
    }
    out
}

/// In-place partial-pivot LU of a column-major n×n matrix; returns the
/// determinant's sign flips and whether a pivot was exactly zero.
fn lu_in_place(a: &mut [f64], n: usize, perm: &mut [usize]) -> (f64, bool) {
    let mut sign = 1.0;
    let mut singular = false;
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    for k in 0..n {
        let p = (k..n).max_by(|&x, &y| a[x + k * n].abs().total_cmp(&a[y + k * n].abs())).unwrap_or(k);
        if p != k {
            for j in 0..n {
                a.swap(k + j * n, p + j * n);
            }
            perm.swap(k, p);
            sign = -sign;
        }
        let pivot = a[k + k * n];
        if pivot == 0.0 {
            singular = true;
            continue;
        }
        for i in k + 1..n {
            a[i + k * n] /= pivot;
            let l = a[i + k * n];
            for j in k + 1..n {
                a[i + j * n] -= l * a[k + j * n];
            }
        }
    }
    (sign, singular)
}

impl Provider for HandleProvider {
    type Memory = HandleMemory;

    fn name(&self) -> &'static str {
        "handles"
    }

    fn exec(&self) -> Exec {
        Exec::serial()
    }

    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        let Op::Linalg(linalg) = op else {
            return Err(unsupported(op));
        };
        if inputs[0].meta.dtype != DType::F64 {
            return Err(unsupported(op));
        }
        match linalg {
            // One n×n copy of `a` to eliminate in (scratch lives in the
            // workspace handle, as on a device).
            LinalgOp::Det(_) | LinalgOp::LuFactorSolve(_) => {
                let n = inputs[0].meta.shape.dims()[0];
                Ok(WorkspaceReq::of::<f64>(n * n))
            }
            _ => Err(unsupported(op)),
        }
    }

    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, HandleMemory>],
        outputs: &mut [Option<Output<'_, 'm, HandleMemory>>],
        workspace: &mut Handle,
    ) -> Result<()> {
        let Op::Linalg(linalg) = op else {
            return Err(unsupported(op));
        };
        let a_desc = inputs[0].desc;
        let a_data = self.store.read(inputs[0].data)?;
        let b_data = match inputs.get(1) {
            Some(b) => self.store.read(b.data)?,
            None => Vec::new(),
        };
        let dims = a_desc.meta.shape.dims();
        let n = dims[0];
        let batch = a_desc.meta.shape.batch_count(2).unwrap_or(0);
        let mut slots = self.store.slots.borrow_mut();
        for b in 0..batch {
            let mut a = gather(a_desc, &a_data, b);
            slots[workspace.id][..n * n].copy_from_slice(&a);
            let mut perm = vec![0usize; n];
            let (sign, singular) = lu_in_place(&mut a, n, &mut perm);
            match linalg {
                LinalgOp::Det(_) => {
                    let det = (0..n).fold(sign, |d, i| d * a[i + i * n]);
                    let out = outputs[0].as_mut().ok_or_else(|| unsupported(op))?;
                    slots[out.buffer.id][b] = det;
                }
                LinalgOp::LuFactorSolve(_) => {
                    if singular {
                        return Err(Error::Singular { op: op.name(), arg: "a", batch_index: b, rcond: 0.0 });
                    }
                    let b_desc = inputs[1].desc;
                    let rhs = gather(b_desc, &b_data, b);
                    let r = b_desc.meta.shape.dims()[1];
                    let mut x = vec![0.0; n * r];
                    for c in 0..r {
                        let col = &mut x[c * n..(c + 1) * n];
                        for i in 0..n {
                            col[i] = rhs[perm[i] + c * n];
                        }
                        for i in 0..n {
                            for k in 0..i {
                                col[i] -= a[i + k * n] * col[k];
                            }
                        }
                        for i in (0..n).rev() {
                            for k in i + 1..n {
                                col[i] -= a[i + k * n] * col[k];
                            }
                            col[i] /= a[i + i * n];
                        }
                    }
                    let [Some(xo), Some(luo), Some(po)] = outputs else {
                        return Err(unsupported(op));
                    };
                    slots[xo.buffer.id][b * n * r..(b + 1) * n * r].copy_from_slice(&x);
                    slots[luo.buffer.id][b * n * n..(b + 1) * n * n].copy_from_slice(&a);
                    // i64 permutation stored as f64 values in this f64-only store.
                    for (i, &p) in perm.iter().enumerate() {
                        slots[po.buffer.id][b * n + i] = p as f64;
                    }
                }
                _ => return Err(unsupported(op)),
            }
        }
        for out in outputs.iter_mut().flatten() {
            out.buffer.written = true;
        }
        Ok(())
    }
}

/// A face over [`HandleProvider`]: tensors are shared handles, so the
/// composites of `lindiff_core::Linalg` (inv, norm, …) run on opaque memory
/// too.
#[derive(Debug, Default)]
pub struct HandleFace {
    /// The provider.
    pub provider: HandleProvider,
    /// Its storage.
    pub store: HandleStore,
}

/// A tensor of [`HandleFace`].
#[derive(Clone, Debug)]
pub struct HandleTensor {
    /// Layout.
    pub desc: TensorDesc,
    /// Storage.
    pub handle: Rc<Handle>,
}

impl HandleFace {
    /// A face with its own store.
    pub fn new() -> Self {
        let store = HandleStore::new();
        HandleFace { provider: HandleProvider::new(store.clone()), store }
    }

    /// Uploads a contiguous f64 tensor.
    pub fn tensor(&self, dims: &[usize], data: &[f64]) -> HandleTensor {
        let meta = lindiff_core::TensorMeta::new(DType::F64, lindiff_core::Shape::new(dims).expect("rank"));
        HandleTensor {
            desc: TensorDesc::contiguous(meta).expect("size"),
            handle: Rc::new(self.store.upload(data)),
        }
    }
}

impl lindiff_core::Face for HandleFace {
    type Tensor = HandleTensor;

    fn meta(&self, t: &HandleTensor) -> lindiff_core::TensorMeta {
        t.desc.meta.clone()
    }

    fn apply(
        &mut self,
        op: Op,
        inputs: &[&HandleTensor],
    ) -> Result<lindiff_core::face::Applied<HandleTensor>> {
        let descs: Vec<&TensorDesc> = inputs.iter().map(|t| &t.desc).collect();
        let metas = lindiff_core::call::infer(&op, &descs)?;
        let req = lindiff_core::call::workspace(&self.provider, &op, &descs)?;
        let mut ws = Allocator::<HandleMemory>::allocate(&mut self.store, req)?;
        let mut outs: Vec<Option<Handle>> = Vec::new();
        for m in &metas {
            outs.push(match m {
                Some(m) => Some(Allocator::<HandleMemory>::allocate(
                    &mut self.store,
                    WorkspaceReq::of_dtype(m.dtype, m.shape.numel().unwrap_or(0)),
                )?),
                None => None,
            });
        }
        let ins: Vec<Input<'_, HandleMemory>> = inputs
            .iter()
            .map(|t| Input { desc: &t.desc, data: HandleMemory::data(&t.handle).expect("written") })
            .collect();
        let mut refs: Vec<Option<&mut Handle>> = outs.iter_mut().map(Option::as_mut).collect();
        lindiff_core::call::run_into(&self.provider, &op, &ins, &mut refs, &mut ws)?;
        Ok(metas
            .into_iter()
            .zip(outs)
            .map(|(m, h)| match (m, h) {
                (Some(m), Some(h)) => {
                    Some(HandleTensor { desc: TensorDesc::contiguous(m).expect("size"), handle: Rc::new(h) })
                }
                _ => None,
            })
            .collect())
    }
}
