//! The arena model behind [`Compiled::peak_bytes`] and
//! [`Compiled::live_at_peak`]: the plan replays a run's allocations
//! (each instruction's outputs, then its workspace, given back at once;
//! each value given back after its last use) on a bump allocator that
//! reclaims at the top only, exactly [`Arena`](crate::Arena)'s policy.

use super::interp::input_descs;
use super::{Compiled, ValueId};
use crate::call;
use crate::error::Result;
use crate::op::{MAX_INPUTS, MAX_OUTPUTS};
use crate::provider::Provider;
use crate::seq::Seq;
use crate::tensor::{TensorDesc, TensorMeta};
use crate::workspace::{BumpStack, WorkspaceReq};

/// A buffer that is live when a run reaches its peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Live {
    /// The instruction that took it (its index in the program).
    pub instr: usize,
    /// The value it holds (`None` for the workspace, and for an output
    /// the program gives no value).
    pub value: Option<ValueId>,
    /// `true` for the instruction's workspace, `false` for an output.
    pub workspace: bool,
    /// Its size in bytes.
    pub bytes: usize,
    /// Where the arena places it: `[begin, end)` in bytes.
    pub offset: usize,
}

/// A region the model placed: `[begin, end)`, the instruction that took it
/// and whether it is that instruction's workspace.
#[derive(Clone, Copy)]
struct Region {
    begin: usize,
    end: usize,
    instr: usize,
    workspace: bool,
}

/// The arena model and the values it holds, instruction by instruction.
pub(super) struct Planner<const V: usize> {
    stack: BumpStack,
    values: Seq<Option<Region>, V>,
    /// Allocations so far, and the one after which the peak last grew.
    events: usize,
    peak_event: usize,
    /// The allocation to take the snapshot at, and the snapshot.
    watch: Option<usize>,
    snapshot: Seq<Live, V>,
}

impl<const V: usize> Planner<V> {
    /// A model for a program of `values` values; `watch` takes the live
    /// set right after that allocation.
    pub(super) fn new(values: usize, watch: Option<usize>) -> Result<Self> {
        Ok(Planner {
            stack: BumpStack::default(),
            values: Seq::filled(values, None, "program values")?,
            events: 0,
            peak_event: 0,
            watch,
            snapshot: Seq::new(),
        })
    }

    /// Places `req` for instruction `k` (saturating: an impossible request
    /// takes everything): an output that becomes `value`, or (`None`,
    /// `workspace`) its workspace. `fresh` are the regions the instruction
    /// holds besides the values (its outputs so far).
    fn allocate(
        &mut self,
        k: usize,
        req: WorkspaceReq,
        (value, workspace): (Option<ValueId>, bool),
        fresh: &[(Option<ValueId>, Region)],
    ) -> Result<Region> {
        let (begin, end) = self.stack.place(0, req).unwrap_or((usize::MAX, usize::MAX));
        let before = self.stack.peak();
        self.stack.commit(begin, end);
        self.events += 1;
        if self.stack.peak() > before {
            self.peak_event = self.events;
        }
        let region = Region { begin, end, instr: k, workspace };
        if self.watch == Some(self.events) {
            let held =
                self.values.iter().enumerate().filter_map(|(v, r)| r.map(|r| (Some(ValueId(v as u32)), r)));
            let current = fresh.iter().copied().chain(core::iter::once((value, region)));
            for (value, r) in held.chain(current) {
                let (bytes, offset) = (r.end - r.begin, r.begin);
                let live = Live { instr: r.instr, value, workspace: r.workspace, bytes, offset };
                self.snapshot.push(live, "live buffers")?;
            }
        }
        Ok(region)
    }

    /// One instruction: its outputs (`metas`, each with the value it
    /// becomes), its workspace, then the values whose last use it is.
    pub(super) fn instr(
        &mut self,
        k: usize,
        outputs: &[(Option<ValueId>, &TensorMeta)],
        workspace: WorkspaceReq,
        inputs: &[ValueId],
        last: &[usize],
    ) -> Result<()> {
        let mut fresh = heapless::Vec::<(Option<ValueId>, Region), MAX_OUTPUTS>::new();
        for &(slot, meta) in outputs {
            let region = self.allocate(k, output_req(meta), (slot, false), &fresh)?;
            let _ = fresh.push((slot, region)); // ≤ MAX_OUTPUTS
        }
        // The workspace is given back at once: a last-placed region.
        let ws = self.allocate(k, workspace, (None, true), &fresh)?;
        self.stack.release(ws.begin, ws.end);
        for &(slot, region) in fresh.iter().rev() {
            match slot {
                Some(v) if last[v.index()] > k => self.values[v.index()] = Some(region),
                _ => self.stack.release(region.begin, region.end),
            }
        }
        for v in inputs {
            if last[v.index()] == k {
                if let Some(r) = self.values[v.index()].take() {
                    self.stack.release(r.begin, r.end);
                }
            }
        }
        Ok(())
    }

    /// The arena size the run needs, and the allocation that reached it.
    pub(super) fn peak(&self) -> (usize, usize) {
        (self.stack.peak(), self.peak_event)
    }
}

/// The buffer an output of `meta` takes.
pub(super) fn output_req(meta: &TensorMeta) -> WorkspaceReq {
    WorkspaceReq::of_dtype(meta.dtype, meta.shape.numel().unwrap_or(usize::MAX))
}

impl<P: Provider, const I: usize, const V: usize> Compiled<'_, P, I, V> {
    /// The buffers live when a run of this program reaches
    /// [`peak_bytes`](Compiled::peak_bytes) on an [`Arena`](crate::Arena):
    /// the values kept for later instructions (in value order), then the
    /// outputs and the workspace of the instruction that reaches the peak
    /// (the last of them ends at the peak). Bytes that none covers are
    /// holes the arena cannot reuse (it reclaims at the top only).
    ///
    /// ```
    /// use lindiff_cpu::prelude::*;
    /// use lindiff_core::var::trace_value_and_grad;
    /// let meta = TensorMeta::new(DType::F64, Shape::new(&[8, 8])?);
    /// let program = trace_value_and_grad([meta.clone()], |[a]| a.svd_vals().sum())?;
    /// let cpu = Cpu::new();
    /// let desc = TensorDesc::contiguous(meta).unwrap();
    /// let compiled = program.compile(&cpu, &[&desc])?;
    /// let live = compiled.live_at_peak()?;
    /// let top = live.iter().map(|b| b.offset + b.bytes).max().unwrap_or(0);
    /// assert_eq!(top, compiled.peak_bytes());
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::OutOfMemory`](crate::Error::OutOfMemory) when the list cannot grow; the ops' errors
    /// (as when the program was compiled).
    pub fn live_at_peak(&self) -> Result<Seq<Live, V>> {
        let program = self.program;
        let mut planner = Planner::<V>::new(program.values.len(), Some(self.peak_event))?;
        for (k, (op, ins, outs)) in self.fusion.steps(program) {
            let descs = input_descs(program, &self.params, ins)?;
            let refs: heapless::Vec<&TensorDesc, MAX_INPUTS> = descs.iter().collect();
            let metas = call::infer(op, &refs)?;
            let outputs: heapless::Vec<(Option<ValueId>, &TensorMeta), MAX_OUTPUTS> = metas
                .iter()
                .enumerate()
                .filter_map(|(i, m)| m.as_ref().map(|m| (outs.get(i).copied().flatten(), m)))
                .collect();
            planner.instr(k, &outputs, self.workspaces[k], ins, &self.last)?;
        }
        Ok(planner.snapshot)
    }
}
