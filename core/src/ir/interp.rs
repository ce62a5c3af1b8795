//! [`Compiled`]: a program checked and planned for one provider and one set
//! of parameter layouts, run with every buffer from the caller's
//! [`Allocator`]. Each instruction takes its outputs and workspace from the
//! allocator, runs through [`call::run_into`] (all checks included), gives
//! the workspace back at once and each value back after its last use. The
//! plan replays that sequence on an arena model (`peak.rs`), so
//! [`Compiled::peak_bytes`] is the exact size of an [`Arena`](crate::Arena)
//! that runs the program, known before it runs, and
//! [`Compiled::live_at_peak`] lists what it holds there. With `alloc`, the
//! plan runs chains of elementwise steps as one instruction each where the
//! provider can (`fuse.rs`, [`Compiled::ops`]); everything above holds
//! for the instructions as the plan runs them.

use super::fuse::Fusion;
use super::peak::{output_req, Planner};
use super::{Program, ValueId, MAX_PARAMS};
use crate::call;
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::op::{MAX_INPUTS, MAX_OUTPUTS};
use crate::provider::{Input, Op, Provider};
use crate::seq::{Seq, SmallSeq};
use crate::tensor::{TensorDesc, TensorMeta};
use crate::workspace::{Allocator, WorkspaceReq};

/// A program planned for a provider and parameter layouts.
pub struct Compiled<'p, P, const I: usize, const V: usize> {
    provider: &'p P,
    pub(super) program: &'p Program<I, V>,
    /// How each instruction runs: as written, or fused into a chain.
    pub(super) fusion: Fusion<I>,
    pub(super) params: Seq<TensorDesc, MAX_PARAMS>,
    pub(super) workspaces: Seq<WorkspaceReq, I>,
    pub(super) last: Seq<usize, V>,
    peak: usize,
    /// The allocation of the plan that reached `peak` ([`Compiled::live_at_peak`]).
    pub(super) peak_event: usize,
    align: usize,
}

/// The buffers of a run's results, in order, with their dtypes and shapes
/// (contiguous, column-major). Give them back to the allocator when done.
pub type Results<'m, M> = SmallSeq<(TensorMeta, <M as Memory>::Buffer<'m>), MAX_PARAMS>;

impl<'p, P: Provider, const I: usize, const V: usize> Compiled<'p, P, I, V> {
    /// Checks every instruction for `provider` with parameters laid out as
    /// `params`, and plans the run.
    ///
    /// # Errors
    /// [`Error::Program`] for a wrong parameter count or layout, a result
    /// that is a parameter; the ops' typed errors; the provider's
    /// [`Error::Unsupported`].
    pub fn new(provider: &'p P, program: &'p Program<I, V>, params: &[&TensorDesc]) -> Result<Self> {
        if params.len() != program.params.len() {
            return Err(Error::Program { why: "wrong number of parameters" });
        }
        for (&p, d) in program.params.iter().zip(params) {
            if program.meta(p)? != &d.meta {
                return Err(Error::Program {
                    why: "a parameter's dtype or shape differs from the traced one",
                });
            }
            if program.results.contains(&p) {
                return Err(Error::Program { why: "a result is a parameter (nothing to compute)" });
            }
        }
        let mut planned = Seq::new();
        for d in params {
            planned.push((*d).clone(), "program parameters")?;
        }
        let fusion = Fusion::plan(provider, program, &planned)?;
        let last = fusion.last_uses(program)?;
        let mut planner = Planner::<V>::new(program.values.len(), None)?;
        let mut align = 1;
        // One per instruction (an absorbed one's is never used).
        let mut workspaces = Seq::filled(program.instrs.len(), WorkspaceReq::EMPTY, "program instructions")?;
        for (k, (op, ins, outs)) in fusion.steps(program) {
            let inputs = input_descs(program, &planned, ins)?;
            let refs: heapless::Vec<&TensorDesc, MAX_INPUTS> = inputs.iter().collect();
            let prepared = call::prepare(provider, op, &refs)?;
            let ws = prepared.workspace();
            let mut outputs = heapless::Vec::<(Option<ValueId>, &TensorMeta), MAX_OUTPUTS>::new();
            for (i, meta) in prepared.outputs().iter().enumerate() {
                if let Some(meta) = meta {
                    align = align.max(output_req(meta).align());
                    // ≤ MAX_OUTPUTS
                    let _ = outputs.push((outs.get(i).copied().flatten(), meta));
                }
            }
            align = align.max(ws.align());
            planner.instr(k, &outputs, ws, ins, &last)?;
            workspaces[k] = ws;
        }
        let (peak, peak_event) = planner.peak();
        Ok(Compiled { provider, program, fusion, params: planned, workspaces, last, peak, peak_event, align })
    }

    /// Bytes an [`Arena`](crate::Arena) whose start is aligned to
    /// [`Compiled::alignment`] needs to run the program, results included.
    /// Other allocators may need less (they reuse freed holes).
    pub fn peak_bytes(&self) -> usize {
        self.peak
    }

    /// The largest alignment any buffer of the run asks for.
    pub fn alignment(&self) -> usize {
        self.align
    }

    /// The ops a run calls, in order: the program's, except that chains of
    /// elementwise arithmetic whose intermediate values nothing else reads
    /// run as one `elementwise_chain` each, where the provider runs those
    /// (`lindiff-cpu` in `std` builds). The results are the same bits.
    ///
    /// ```
    /// use lindiff_cpu::prelude::*;
    /// use lindiff_core::var::trace_value_and_grad;
    /// let meta = TensorMeta::new(DType::F64, Shape::new(&[4, 4])?);
    /// // (2a − a)·a, summed: three elementwise steps in a row.
    /// let program = trace_value_and_grad([meta.clone()], |[a]| ((&a * 2.0 - &a) * &a).sum())?;
    /// let cpu = Cpu::new();
    /// let desc = TensorDesc::contiguous(meta).unwrap();
    /// let compiled = program.compile(&cpu, &[&desc])?;
    /// assert!(compiled.ops().any(|op| op.name() == "elementwise_chain"));
    /// assert!(compiled.ops().count() < program.instrs().len());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn ops(&self) -> impl Iterator<Item = &Op> + '_ {
        self.fusion.steps(self.program).map(|(_, (op, _, _))| op)
    }

    /// Runs the program on `params` (laid out as planned), taking every
    /// buffer from `alloc`; intermediate values go back to `alloc` after
    /// their last use, results are returned.
    ///
    /// # Errors
    /// [`Error::Program`] for parameters laid out differently from the plan;
    /// the allocator's [`Error::OutOfMemory`]; the ops' and the provider's
    /// errors. On error every buffer taken so far is given back.
    pub fn run<'m, A: Allocator<'m, P::Memory> + ?Sized>(
        &self,
        alloc: &mut A,
        params: &[Input<'_, P::Memory>],
    ) -> Result<Results<'m, P::Memory>> {
        if params.len() != self.params.len() || params.iter().zip(&self.params).any(|(p, d)| p.desc != d) {
            return Err(Error::Program {
                why: "parameters differ from the layouts the program was compiled for",
            });
        }
        // In place for programs of up to `V` values: a steady loop of runs
        // allocates nothing.
        let mut values: SmallSeq<Option<<P::Memory as Memory>::Buffer<'m>>, V> = SmallSeq::new();
        for _ in 0..self.program.values.len() {
            values.push(None, "program values")?;
        }
        let mut outcome = self.run_into(alloc, params, &mut values);
        let mut results = Results::<'m, P::Memory>::new();
        if outcome.is_ok() {
            for &r in self.program.results.iter() {
                if let (Some(buffer), Ok(meta)) = (values[r.index()].take(), self.program.meta(r)) {
                    if let Err(e) = results.push((meta.clone(), buffer), "program results") {
                        outcome = Err(e);
                        break;
                    }
                }
            }
        }
        for b in values.into_iter().flatten() {
            alloc.release(b);
        }
        outcome.map(|()| results)
    }

    fn run_into<'m, A: Allocator<'m, P::Memory> + ?Sized>(
        &self,
        alloc: &mut A,
        params: &[Input<'_, P::Memory>],
        values: &mut SmallSeq<Option<<P::Memory as Memory>::Buffer<'m>>, V>,
    ) -> Result<()> {
        let program = self.program;
        for (k, (op, ins, outputs)) in self.fusion.steps(program) {
            let descs = input_descs(program, &self.params, ins)?;
            let outs = {
                let refs: heapless::Vec<&TensorDesc, MAX_INPUTS> = descs.iter().collect();
                call::infer(op, &refs)?
            };
            let mut buffers = heapless::Vec::<Option<<P::Memory as Memory>::Buffer<'m>>, MAX_OUTPUTS>::new();
            for meta in &outs {
                let b = match meta {
                    Some(m) => Some(alloc.allocate(output_req(m))?),
                    None => None,
                };
                let _ = buffers.push(b); // ≤ MAX_OUTPUTS
            }
            let mut workspace = alloc.allocate(self.workspaces[k])?;
            let ran = {
                let mut inputs = heapless::Vec::<Input<'_, P::Memory>, MAX_INPUTS>::new();
                for (&v, desc) in ins.iter().zip(&descs) {
                    let data = match program.params.iter().position(|&p| p == v) {
                        Some(i) => <P::Memory as Memory>::shorten(params[i].data),
                        None => values[v.index()]
                            .as_ref()
                            .and_then(P::Memory::data)
                            .ok_or(Error::Program { why: "a value is read before it is written" })?,
                    };
                    let _ = inputs.push(Input { desc, data }); // ≤ MAX_INPUTS
                }
                let mut refs: heapless::Vec<Option<&mut <P::Memory as Memory>::Buffer<'m>>, MAX_OUTPUTS> =
                    buffers.iter_mut().map(Option::as_mut).collect();
                call::run_into(self.provider, op, &inputs, &mut refs, &mut workspace)
            };
            alloc.release(workspace);
            // Keep the outputs that are read later or returned; give back the rest.
            let mut keep = heapless::Vec::<(usize, <P::Memory as Memory>::Buffer<'m>), MAX_OUTPUTS>::new();
            let mut spare = heapless::Vec::<<P::Memory as Memory>::Buffer<'m>, MAX_OUTPUTS>::new();
            for (i, b) in buffers.into_iter().enumerate() {
                let Some(b) = b else { continue };
                match outputs.get(i).copied().flatten() {
                    Some(v) if ran.is_ok() && self.last[v.index()] > k => {
                        let _ = keep.push((v.index(), b));
                    }
                    _ => {
                        let _ = spare.push(b);
                    }
                }
            }
            while let Some(b) = spare.pop() {
                alloc.release(b);
            }
            ran.map_err(|e| program.instrs[k].as_origin_error(e))?;
            for (v, b) in keep {
                values[v] = Some(b);
            }
            for v in ins {
                if self.last[v.index()] == k {
                    if let Some(b) = values[v.index()].take() {
                        alloc.release(b);
                    }
                }
            }
        }
        Ok(())
    }
}

/// The layouts of the values `inputs` in a run of `program` with
/// parameters laid out as `params`: a parameter's own layout, contiguous for
/// a computed value.
///
/// # Errors
/// [`Error::Overflow`] for a value whose size overflows.
pub(super) fn input_descs<const I: usize, const V: usize>(
    program: &Program<I, V>,
    params: &[TensorDesc],
    inputs: &[ValueId],
) -> Result<heapless::Vec<TensorDesc, MAX_INPUTS>> {
    let mut descs = heapless::Vec::new();
    for &v in inputs {
        let desc = match program.params.iter().position(|&p| p == v) {
            Some(i) => params[i].clone(),
            None => {
                let meta = program.meta(v)?.clone();
                let shape = meta.shape.clone();
                TensorDesc::contiguous(meta).ok_or(Error::Overflow { op: "program", arg: "value", shape })?
            }
        };
        let _ = descs.push(desc); // one per input: ≤ MAX_INPUTS
    }
    Ok(descs)
}

impl<const I: usize, const V: usize> Program<I, V> {
    /// Plans this program for `provider` with parameters laid out as
    /// `params` (see [`Compiled`]).
    ///
    /// # Errors
    /// As [`Compiled::new`].
    pub fn compile<'p, P: Provider>(
        &'p self,
        provider: &'p P,
        params: &[&TensorDesc],
    ) -> Result<Compiled<'p, P, I, V>> {
        Compiled::new(provider, self, params)
    }
}
