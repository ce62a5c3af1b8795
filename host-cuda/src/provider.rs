//! `impl Provider for Cuda`: both calls take the device lock, dispatch on
//! the op ([`crate::ops`]) and, for `run_into`, finish with a stream
//! synchronisation (so host scratch of the 64-bit cuSOLVER API and info
//! words are settled before the call returns).

use crate::context::Cuda;
use crate::memory::{Device, DeviceBuffer};
use crate::ops;
use lindiff_core::{Exec, Input, Op, Output, Provider, Result, TensorDesc, WorkspaceReq};

impl Provider for Cuda {
    type Memory = Device;

    fn name(&self) -> &'static str {
        crate::error::PROVIDER
    }

    /// One device stream: the exec's team width does not apply.
    fn exec(&self) -> Exec {
        Exec::serial()
    }

    /// # Errors
    /// `Unsupported` (see the table in the crate docs) or a cuSOLVER
    /// failure of a `*_bufferSize` query.
    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        if let ops::Runs::Unsupported(why) = ops::runs(op) {
            return Err(crate::error::unsupported(op.name(), why));
        }
        let gpu = self.lock()?;
        ops::workspace(&gpu, op, inputs)
    }

    /// # Errors
    /// The op's typed error for the lowest failing batch item
    /// (`NotPositiveDefinite`, `Singular`, `NonConvergence`), `Unsupported`,
    /// or `ProviderUnavailable` when a CUDA library call fails.
    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Device>],
        outputs: &mut [Option<Output<'_, 'm, Device>>],
        workspace: &mut DeviceBuffer<'m>,
    ) -> Result<()> {
        let gpu = self.lock()?;
        let result = ops::run(&gpu, op, inputs, outputs, workspace);
        let synced = gpu.sync();
        result.and(synced)
    }
}
