//! Host-memory kernels of the array primitives (`lindiff_core::prim`).
//! Written against host memory only, so any host-memory provider (the LAPACK
//! one, wasm, firmware) can share them.

use lindiff_core::{Error, Exec, Host, HostBuffer, Input, Output, PrimOp, Result, TensorDesc, WorkspaceReq};

/// The workspace `run` needs for `op`.
pub fn workspace(op: &PrimOp, _inputs: &[&TensorDesc], _exec: Exec) -> Result<WorkspaceReq> {
    Err(Error::Unsupported { op: op.name(), provider: "cpu", why: "no CPU kernel for this primitive" })
}

/// Runs `op`, writing every present output.
pub fn run(
    op: &PrimOp,
    _inputs: &[Input<'_, Host>],
    _outputs: &mut [Option<Output<'_, '_, Host>>],
    _workspace: &mut HostBuffer<'_>,
    _exec: Exec,
) -> Result<()> {
    Err(Error::Unsupported { op: op.name(), provider: "cpu", why: "no CPU kernel for this primitive" })
}
