//! **A test harness, not a host fallback.** [`CudaStaged`] lets the
//! host-memory conformance suites (`P: TestProvider`, i.e.
//! `Provider<Memory = Host>`) run on the CUDA provider: each call uploads
//! its inputs to device memory, runs `lindiff_cuda::Cuda` there (same op,
//! same descriptors, a device workspace of the size `Cuda::workspace`
//! asks for) and downloads the outputs into the caller's host buffers. The
//! library itself never copies to the host to compute; this adapter exists
//! only so that the same suites check the device results.
//!
//! The provider is one process-wide `Cuda` (a `OnceLock`), so
//! `CudaStaged` is `Copy + Default` like the host providers. Without a GPU
//! [`CudaStaged::available`] returns the reason and the `cuda` arm of
//! `providers!` prints `skipped: <reason>`.

use lindiff_core::{
    Allocator, Exec, Host, HostBuffer, Input, Memory, Op, Output, Provider, Result, TensorDesc, WorkspaceReq,
};
use lindiff_cuda::{Cuda, Device, DeviceArena, DeviceBuffer};
use std::sync::OnceLock;

static CUDA: OnceLock<core::result::Result<Cuda, String>> = OnceLock::new();

fn cuda() -> core::result::Result<&'static Cuda, String> {
    CUDA.get_or_init(|| Cuda::new().map_err(|e| e.to_string())).as_ref().map_err(Clone::clone)
}

/// The staging adapter (see the module docs). Every method fails with the
/// reason when there is no GPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct CudaStaged;

impl CudaStaged {
    /// The adapter when a GPU is usable, else why not.
    ///
    /// # Errors
    /// The `Cuda::new` message (e.g. "no CUDA driver library (libcuda.so)
    /// found").
    pub fn available() -> core::result::Result<CudaStaged, String> {
        cuda().map(|_| CudaStaged)
    }

    fn provider() -> Result<&'static Cuda> {
        cuda()
            .map_err(|_| lindiff_core::Error::ProviderUnavailable { provider: "cuda", why: "no usable GPU" })
    }
}

impl crate::TestProvider for CudaStaged {
    fn with_exec(_exec: Exec) -> Self {
        CudaStaged
    }
}

/// Bytes of a region rounded up so the next one starts 256-aligned.
fn slot(bytes: usize) -> usize {
    bytes.div_ceil(256) * 256 + 256
}

impl Provider for CudaStaged {
    type Memory = Host;

    fn name(&self) -> &'static str {
        "cuda"
    }

    fn exec(&self) -> Exec {
        Exec::serial()
    }

    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        // The host workspace is unused: the device one is sized again in
        // `run_into`. Ask the device provider so unsupported ops fail here.
        Self::provider()?.workspace(op, inputs).map(|_| WorkspaceReq::EMPTY)
    }

    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Host>],
        outputs: &mut [Option<Output<'_, 'm, Host>>],
        _workspace: &mut HostBuffer<'m>,
    ) -> Result<()> {
        let cuda = Self::provider()?;
        let descs: Vec<&TensorDesc> = inputs.iter().map(|i| i.desc).collect();
        let ws_req = cuda.workspace(op, &descs)?;
        let total: usize = inputs.iter().map(|i| slot(i.data.bytes().len())).sum::<usize>()
            + outputs.iter().flatten().map(|o| slot(o.buffer.len())).sum::<usize>()
            + slot(ws_req.bytes());
        let mut memory = cuda.alloc(total)?;
        let mut arena = DeviceArena::new(&mut memory);
        let mut device_inputs: Vec<DeviceBuffer<'_>> = Vec::new();
        for input in inputs {
            let bytes = input.data.bytes();
            let mut buf = arena.allocate(WorkspaceReq::new(bytes.len(), 256))?;
            cuda.upload_bytes(bytes, &mut buf)?;
            device_inputs.push(buf);
        }
        let mut device_outputs: Vec<Option<DeviceBuffer<'_>>> = Vec::new();
        for out in outputs.iter() {
            device_outputs.push(match out {
                Some(o) => Some(arena.allocate(WorkspaceReq::new(o.buffer.len(), 256))?),
                None => None,
            });
        }
        let mut ws = arena.allocate(ws_req)?;
        let ins: Vec<Input<'_, Device>> = inputs
            .iter()
            .zip(&device_inputs)
            .map(|(i, d)| Input { desc: i.desc, data: Device::data(d).expect("uploaded") })
            .collect();
        let mut outs: Vec<Option<Output<'_, '_, Device>>> = outputs
            .iter()
            .zip(device_outputs.iter_mut())
            .map(|(o, d)| match (o, d) {
                (Some(o), Some(d)) => Some(Output { meta: o.meta, buffer: d }),
                _ => None,
            })
            .collect();
        // SAFETY: the host call passed core's checks; the device buffers
        // have the host buffers' sizes at 256-byte alignment, the inputs
        // keep their descriptors over byte-identical copies, and the
        // workspace is what `Cuda::workspace` asked for.
        unsafe { cuda.run_into(op, &ins, &mut outs, &mut ws)? };
        drop(outs);
        for (out, dev) in outputs.iter_mut().zip(&device_outputs) {
            if let (Some(out), Some(dev)) = (out, dev) {
                let mut host = vec![0u8; out.buffer.len()];
                let data = Device::data(dev).ok_or(lindiff_core::Error::ProviderUnavailable {
                    provider: "cuda",
                    why: "the device provider left an output unwritten",
                })?;
                cuda.download_bytes(data, &mut host)?;
                // SAFETY: only initialised bytes are stored, and the whole
                // buffer is declared initialised after it is written.
                unsafe {
                    let dst = out.buffer.as_uninit_bytes_mut();
                    for (d, s) in dst.iter_mut().zip(&host) {
                        d.write(*s);
                    }
                    out.buffer.assume_init_prefix(host.len());
                }
            }
        }
        Ok(())
    }
}
