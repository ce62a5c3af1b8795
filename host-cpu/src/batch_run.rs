//! One [`Kernel`] over a call's batch: the workspace it needs
//! ([`workspace_kernel`]) and the run ([`run_kernel`]) that splits the batch
//! into lanes (`batch.rs`) and marks the outputs written. host-cpu's own
//! kernels (`kernels/mod.rs`) and other providers (through `kernel_api.rs`)
//! both go through it.

use crate::batch::{self, BatchPlan, Kernel, Shapes};
use lindiff_core::{Exec, Host, HostBuffer, Input, Output, Result, TensorDesc, WorkspaceReq};

/// Batch dims of a linalg call: everything after input 0's matrix dims.
pub fn batch_rank(inputs: &[&TensorDesc]) -> usize {
    batch_rank_of(inputs.first().copied())
}

/// [`batch_rank`] from input 0's layout alone.
pub(crate) fn batch_rank_of(first: Option<&TensorDesc>) -> usize {
    first.map_or(0, |d| d.meta.shape.rank().saturating_sub(2))
}

/// The workspace [`run_kernel`] needs for `kernel` over these inputs with
/// `exec`: one scratch region per batch lane.
pub fn workspace_kernel<T>(kernel: &dyn Kernel<T>, inputs: &[&TensorDesc], exec: Exec) -> WorkspaceReq {
    let shapes = Shapes::new(inputs, batch_rank(inputs));
    batch::workspace::<T>(kernel, &shapes, exec)
}

/// Runs `kernel` for every batch item of `op` (lanes in parallel when `exec`
/// says so, with the `threads` feature) and marks the outputs written.
///
/// # Errors
/// The lowest-indexed item's [`Failure`](crate::kernel_api::Failure) as an
/// `Error` naming `op` and the batch index (`NonFinite`,
/// `NotPositiveDefinite`, `OutsideDomain`, `Singular`, `NonConvergence`).
///
/// # Safety
/// - The arguments must have passed `lindiff_core::call`'s checks for
///   `op`, as for [`Provider::run_into`](lindiff_core::Provider::run_into):
///   every input view inside its data and aligned; every argument's batch
///   dims (after its matrix dims) equal to input 0's; each output's meta the
///   one `call::infer` made (so its batch count is input 0's) and its buffer
///   aligned and large enough for that contiguous layout; the workspace at
///   least [`workspace_kernel`]'s requirement for `kernel` and `exec`,
///   counted from its first aligned byte. The kernels get raw views built
///   from them.
/// - `kernel` must honour the [`Kernel`] contract: on `Ok`, every element
///   of every present output of its item has been written, and no output
///   element is read before it is written (outputs start uninitialised;
///   this function marks them initialised after the last item).
pub unsafe fn run_kernel<T>(
    op: &'static str,
    kernel: &dyn Kernel<T>,
    inputs: &[Input<'_, Host>],
    outputs: &mut [Option<Output<'_, '_, Host>>],
    workspace: &mut HostBuffer<'_>,
    exec: Exec,
) -> Result<()> {
    let rank = batch_rank_of(inputs.first().map(|i| i.desc));
    let written = BatchPlan::run_with(inputs, outputs, rank, |plan| {
        batch::run::<T>(op, kernel, plan, exec, workspace).map(|()| plan.output_bytes())
    })?;
    for (out, written) in outputs.iter_mut().zip(written) {
        if let Some(out) = out {
            // SAFETY: `batch::run` returned Ok, so every kernel call
            // succeeded, and the kernel wrote every element of every present
            // output of its batch item (this function's contract); the
            // items cover the output's `written` bytes.
            unsafe { out.buffer.assume_init_prefix(written) };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{run_kernel, workspace_kernel};
    use crate::batch::{Failure, Item, Kernel, Shapes};
    use core::mem::MaybeUninit;
    use faer::dyn_stack::{MemStack, StackReq};
    use faer::Par;
    use lindiff_core::op::Cholesky;
    use lindiff_core::{
        DType, Exec, Host, HostBuffer, HostData, Input, LinalgOp, Memory, Output, Shape, TensorDesc,
        TensorMeta,
    };

    /// Takes 8 bytes of scratch, then `bytes` at alignment `align` (so the
    /// second carve's padding depends on where the region starts; dyn-stack
    /// panics if the region is too small), and copies input 0 to output 0.
    struct Scratchy {
        bytes: usize,
        align: usize,
    }

    impl Kernel<f64> for Scratchy {
        fn scratch(&self, _: &Shapes, _: Par) -> StackReq {
            StackReq::new::<u64>(1).and(StackReq::new_aligned::<u8>(self.bytes, self.align))
        }

        fn run(&self, item: &mut Item<'_>, _: Par, stack: &mut MemStack) -> Result<(), Failure> {
            let (_, stack) = stack.make_uninit::<u64>(1);
            let (scratch, _) = stack.make_aligned_uninit::<u8>(self.bytes, self.align);
            assert_eq!(scratch.as_ptr() as usize % self.align, 0);
            scratch.fill(MaybeUninit::new(7));
            let a = item.mat::<f64>(0);
            item.out_mat::<f64>(0).copy_from(a);
            Ok(())
        }
    }

    /// Every lane gets its scratch, aligned, from the smallest workspace
    /// `call` accepts (`usable_bytes(ws, req.align()) ≥ req.bytes()`), at
    /// any start address: kernel alignments below, at and above the lanes'
    /// 64 bytes, one lane (padded to 64 bytes only, no `scratch` call in
    /// `run`) and several.
    #[test]
    fn every_lane_gets_its_scratch_from_the_smallest_workspace() {
        let meta = TensorMeta::new(DType::F64, Shape::new(&[2, 2, 4]).unwrap());
        let desc = TensorDesc::contiguous(meta.clone()).unwrap();
        let data: Vec<f64> = (0..16).map(f64::from).collect();
        let op = LinalgOp::Cholesky(Cholesky);
        for align in [8, 64, 128, 256] {
            for threads in [1, 2] {
                let exec = Exec::with_threads(threads);
                let kernel = Scratchy { bytes: 200, align };
                let req = workspace_kernel::<f64>(&kernel, &[&desc], exec);
                for start in (0..=align + 8).step_by(8) {
                    let mut store = vec![MaybeUninit::<u8>::uninit(); req.bytes() + 2 * req.align() + 512];
                    let at = (store.as_ptr() as usize).wrapping_neg() % 512 + start;
                    let pad = (store[at..].as_ptr() as usize).wrapping_neg() % req.align();
                    let mut ws = HostBuffer::from_uninit(&mut store[at..at + pad + req.bytes()]);
                    assert!(Host::usable_bytes(&ws, req.align()) >= req.bytes());
                    let mut out = vec![0.0f64; 16];
                    let mut buffer = HostBuffer::from_slice_mut(&mut out);
                    let inputs = [Input { desc: &desc, data: HostData::from_slice(&data) }];
                    {
                        let mut outputs = [Some(Output { meta: &meta, buffer: &mut buffer })];
                        // SAFETY: the four 2×2 input views lie in `data`, the
                        // output holds their 16 f64, the workspace is `req`
                        // from its first aligned byte (asserted above);
                        // `Scratchy` writes its whole output and reads none
                        // of it.
                        unsafe {
                            run_kernel::<f64>(op.name(), &kernel, &inputs, &mut outputs, &mut ws, exec)
                        }
                        .unwrap();
                    }
                    assert_eq!(out, data, "align {align}, {threads} threads, start {start}");
                }
            }
        }
    }
}
