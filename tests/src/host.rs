//! A minimal way to run any host-memory provider from tests: owned, aligned
//! tensors and one function that allocates outputs and workspace and calls
//! `lindiff_core::call::run_into`.

use core::mem::MaybeUninit;
use lindiff_core::{
    call, Element, Error, Host, HostBuffer, HostData, Input, Op, Provider, Result, Shape, TensorDesc,
    TensorMeta,
};

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([MaybeUninit<u8>; 64]);

/// Heap bytes aligned to 64 (enough for every dtype and for faer's scratch).
pub struct AlignedBytes {
    blocks: Vec<Block>,
    len: usize,
}

impl AlignedBytes {
    /// `len` uninitialised bytes.
    pub fn new(len: usize) -> Self {
        AlignedBytes { blocks: vec![Block([MaybeUninit::uninit(); 64]); len.div_ceil(64)], len }
    }

    /// The bytes.
    pub fn as_uninit_mut(&mut self) -> &mut [MaybeUninit<u8>] {
        // SAFETY: `blocks` is `len.div_ceil(64) * 64 ≥ len` contiguous bytes
        // (`Block` is repr(C) of 64 bytes); we borrow them uniquely.
        unsafe {
            core::slice::from_raw_parts_mut(self.blocks.as_mut_ptr().cast::<MaybeUninit<u8>>(), self.len)
        }
    }
}

/// An owned host tensor: a layout and its bytes.
pub struct HostTensor {
    /// Layout (contiguous for outputs; any strides for inputs).
    pub desc: TensorDesc,
    bytes: AlignedBytes,
    written: bool,
}

impl HostTensor {
    /// A contiguous column-major tensor with the given dims and elements.
    pub fn new<T: Element>(dims: &[usize], data: &[T]) -> HostTensor {
        let meta = TensorMeta::new(T::DTYPE, Shape::new(dims).expect("rank"));
        let desc = TensorDesc::contiguous(meta).expect("size");
        assert_eq!(desc.span(), Some(data.len()), "data length for {dims:?}");
        Self::with_desc(desc, data)
    }

    /// A tensor laid out by `desc` over `data` (e.g. a row-major view).
    pub fn with_desc<T: Element>(desc: TensorDesc, data: &[T]) -> HostTensor {
        let bytes_len = core::mem::size_of_val(data);
        let mut bytes = AlignedBytes::new(bytes_len);
        let src = HostData::from_slice(data);
        for (d, s) in bytes.as_uninit_mut().iter_mut().zip(src.bytes()) {
            *d = MaybeUninit::new(*s);
        }
        HostTensor { desc, bytes, written: true }
    }

    /// The shape.
    pub fn dims(&self) -> &[usize] {
        self.desc.meta.shape.dims()
    }

    /// The elements in buffer order (column-major for outputs).
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        assert_eq!(T::DTYPE, self.desc.meta.dtype, "dtype");
        let data = self.data();
        data.typed::<T>().expect("aligned").to_vec()
    }

    /// The buffer's bytes (for bit-for-bit comparisons).
    pub fn raw_bytes(&self) -> &[u8] {
        self.data().bytes()
    }

    fn data(&self) -> HostData<'_> {
        assert!(self.written);
        // SAFETY: `written` means every byte was initialised (copied in, or
        // written by a provider whose call returned Ok).
        let bytes =
            unsafe { core::slice::from_raw_parts(self.bytes.blocks.as_ptr().cast::<u8>(), self.bytes.len) };
        HostData::from_bytes(bytes)
    }
}

/// Runs `op` on `provider`, allocating outputs and workspace on the heap.
///
/// # Errors
/// Whatever the checks or the provider report.
pub fn run<P: Provider<Memory = Host>>(
    provider: &P,
    op: impl Into<Op>,
    inputs: &[&HostTensor],
) -> Result<Vec<Option<HostTensor>>> {
    run_filled(provider, op, inputs, None)
}

/// [`run`] with every byte of the outputs and the workspace set to `fill`
/// before the call (`None`: left as allocated). Output memory is
/// uninitialised by contract, and freshly allocated pages are often zero:
/// running twice with different fills and comparing the results bit for bit
/// shows a provider that reads memory it has not written.
///
/// # Errors
/// Whatever the checks or the provider report.
pub fn run_filled<P: Provider<Memory = Host>>(
    provider: &P,
    op: impl Into<Op>,
    inputs: &[&HostTensor],
    fill: Option<u8>,
) -> Result<Vec<Option<HostTensor>>> {
    let op = op.into();
    let descs: Vec<&TensorDesc> = inputs.iter().map(|t| &t.desc).collect();
    let metas = call::infer(&op, &descs)?;
    let req = call::workspace(provider, &op, &descs)?;
    let mut workspace = AlignedBytes::new(req.bytes());
    let mut outs: Vec<Option<(TensorDesc, AlignedBytes)>> = metas
        .iter()
        .map(|m| {
            m.as_ref().map(|m| {
                let desc = TensorDesc::contiguous(m.clone()).expect("size");
                let bytes = AlignedBytes::new(m.bytes().expect("size"));
                (desc, bytes)
            })
        })
        .collect();
    if let Some(fill) = fill {
        let buffers = outs.iter_mut().flatten().map(|(_, b)| b).chain([&mut workspace]);
        for bytes in buffers {
            bytes.as_uninit_mut().fill(MaybeUninit::new(fill));
        }
    }
    {
        let ins: Vec<Input<'_, Host>> =
            inputs.iter().map(|t| Input { desc: &t.desc, data: t.data() }).collect();
        let mut buffers: Vec<Option<HostBuffer<'_>>> = outs
            .iter_mut()
            .map(|o| o.as_mut().map(|(_, b)| HostBuffer::from_uninit(b.as_uninit_mut())))
            .collect();
        let mut refs: Vec<Option<&mut HostBuffer<'_>>> = buffers.iter_mut().map(|b| b.as_mut()).collect();
        let mut ws = HostBuffer::from_uninit(workspace.as_uninit_mut());
        call::run_into(provider, &op, &ins, &mut refs, &mut ws)?;
        for b in buffers.iter().flatten() {
            if !b.is_initialized() {
                return Err(Error::Buffer {
                    op: op.name(),
                    arg: "output",
                    why: "was not marked written",
                    needed: 1,
                    got: 0,
                });
            }
        }
    }
    Ok(outs.into_iter().map(|o| o.map(|(desc, bytes)| HostTensor { desc, bytes, written: true })).collect())
}

impl HostTensor {
    /// A 2-D tensor from a test-side matrix.
    pub fn from_dense<T: Element>(m: &crate::dense::Dense<T>) -> HostTensor {
        HostTensor::new(&[m.rows, m.cols], &m.data)
    }

    /// A batch `[rows, cols, count]` from equally sized matrices.
    pub fn batch<T: Element>(ms: &[crate::dense::Dense<T>]) -> HostTensor {
        let (r, c) = (ms[0].rows, ms[0].cols);
        let data: Vec<T> = ms.iter().flat_map(|m| m.data.iter().copied()).collect();
        HostTensor::new(&[r, c, ms.len()], &data)
    }

    /// Matrix `b` of a contiguous `[rows, cols, batch…]` tensor (vectors are
    /// len×1, scalars 1×1).
    pub fn matrix<T: Element>(&self, b: usize) -> crate::dense::Dense<T> {
        let dims = self.dims();
        let (r, c) = match dims.len() {
            0 => (1, 1),
            1 => (dims[0], 1),
            _ => (dims[0], dims[1]),
        };
        let all = self.to_vec::<T>();
        crate::dense::Dense { rows: r, cols: c, data: all[b * r * c..(b + 1) * r * c].to_vec() }
    }

    /// A contiguous tensor of `[rows, cols, batch…]` seen as `[core…, batch…]`
    /// with `core_rank` core dims: matrix `b` of it.
    pub fn item<T: Element>(&self, core_rank: usize, b: usize) -> Vec<T> {
        let dims = self.dims();
        let per: usize = dims[..core_rank].iter().product();
        self.to_vec::<T>()[b * per..(b + 1) * per].to_vec()
    }
}
