//! The linear program of one op's rule: [`LocalTape`] records what a JVP
//! rule emits through [`Cx::linear`] (primal arguments kept as constants),
//! and [`LocalTape::transpose`] replays it backwards through the transpose
//! rules. Reverse mode runs one op at a time — linearize, then transpose —
//! so the tape never grows with the program and both faces run exactly the
//! same ops in the same order.

use super::cx::{Arg, Cx, Tangent};
use super::transpose::{transpose, TArg};
use crate::error::{Error, Result};
use crate::face::Face;
use crate::op::MAX_INPUTS;
use crate::provider::Op;
use crate::seq::SmallSeq;
use crate::tensor::TensorMeta;

/// Most linear instructions one rule records without the `alloc` feature
/// (with it, any number).
pub const RULE_INSTRS: usize = 96;
/// Most constants (primal coefficients) one rule records without `alloc`.
const RULE_CONSTS: usize = 96;
/// Most tangent values of one rule (its inputs and every recorded output)
/// without `alloc`.
const RULE_VALUES: usize = RULE_INSTRS + MAX_INPUTS;

/// An argument of a recorded instruction.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A constant (index into the constants).
    Const(u32),
    /// A tangent value.
    Tan(u32),
}

#[derive(Clone, Debug)]
struct LinInstr {
    op: Op,
    args: heapless::Vec<Slot, MAX_INPUTS>,
    out: u32,
}

/// The linear map one rule recorded, over primal constants of type `P`.
pub struct LocalTape<P> {
    metas: SmallSeq<TensorMeta, RULE_VALUES>,
    instrs: SmallSeq<LinInstr, RULE_INSTRS>,
    consts: SmallSeq<P, RULE_CONSTS>,
}

impl<P: Clone> LocalTape<P> {
    /// An empty tape.
    pub fn new() -> Self {
        LocalTape { metas: SmallSeq::new(), instrs: SmallSeq::new(), consts: SmallSeq::new() }
    }

    /// A new tangent input of this meta (inputs come before any instruction).
    ///
    /// # Errors
    /// [`Error::Capacity`].
    pub fn input(&mut self, meta: TensorMeta) -> Result<u32> {
        self.value(meta)
    }

    fn value(&mut self, meta: TensorMeta) -> Result<u32> {
        let id = index(self.metas.len(), "rule tangent values")?;
        self.metas.push(meta, "rule tangent values")?;
        Ok(id)
    }

    /// Runs the tape backwards: given cotangents of some of its values
    /// (`seeds`), the cotangents of values `0..inputs` (its inputs), with
    /// every transposed op recorded through `cx`.
    ///
    /// # Errors
    /// The transpose rules' errors.
    pub fn transpose<C: Cx<P = P> + ?Sized>(
        &self,
        cx: &mut C,
        seeds: &[(u32, Tangent<C::T>)],
        inputs: usize,
    ) -> Result<heapless::Vec<Tangent<C::T>, MAX_INPUTS>> {
        let mut ct: SmallSeq<Tangent<C::T>, RULE_VALUES> = SmallSeq::new();
        for _ in 0..self.metas.len() {
            ct.push(Tangent::Zero, "rule tangent values")?;
        }
        for (v, seed) in seeds {
            let slot = &mut ct[as_index(*v)];
            *slot = super::Lin::add(cx, slot, seed)?;
        }
        for instr in self.instrs.iter().rev() {
            let out = core::mem::replace(&mut ct[as_index(instr.out)], Tangent::Zero);
            if out.is_zero() {
                continue;
            }
            let targs: heapless::Vec<TArg<'_, P>, MAX_INPUTS> = instr
                .args
                .iter()
                .map(|s| match *s {
                    Slot::Const(k) => TArg::P(&self.consts[as_index(k)]),
                    Slot::Tan(v) => TArg::T(&self.metas[as_index(v)]),
                })
                .collect();
            let cts = transpose(cx, &instr.op, &targs, &out)?;
            for (slot, c) in instr.args.iter().zip(cts) {
                if let Slot::Tan(v) = *slot {
                    let acc = &mut ct[as_index(v)];
                    *acc = super::Lin::add(cx, acc, &c)?;
                }
            }
        }
        Ok(ct.into_iter().take(inputs).collect())
    }
}

impl<P: Clone> Default for LocalTape<P> {
    fn default() -> Self {
        Self::new()
    }
}

/// Records a rule's linear ops on a [`LocalTape`]; primal work runs on `face`.
pub struct TapeCx<'a, F: Face> {
    /// Where primal values are computed.
    pub face: &'a mut F,
    /// Where linear ops are recorded.
    pub tape: &'a mut LocalTape<F::Tensor>,
}

impl<F: Face> Cx for TapeCx<'_, F> {
    type P = F::Tensor;
    type T = u32;

    fn primal(&mut self) -> &mut dyn Face<Tensor = F::Tensor> {
        self.face
    }

    fn tangent_meta(&self, t: &u32) -> TensorMeta {
        self.tape
            .metas
            .get(as_index(*t))
            .cloned()
            .unwrap_or_else(|| TensorMeta::new(crate::DType::I64, crate::Shape::scalar()))
    }

    fn linear(&mut self, op: Op, args: &[Arg<'_, F::Tensor, u32>]) -> Result<u32> {
        let outs = {
            let mut metas = heapless::Vec::<TensorMeta, MAX_INPUTS>::new();
            for a in args {
                let meta = match a {
                    Arg::P(p) => self.face.meta(p),
                    Arg::T(t) => self.tangent_meta(t),
                };
                metas.push(meta).map_err(|_| Error::Arity {
                    op: op.name(),
                    expected: op.input_names().len(),
                    got: args.len(),
                })?;
            }
            let refs: heapless::Vec<&TensorMeta, MAX_INPUTS> = metas.iter().collect();
            op.infer(&refs)?
        };
        let meta = outs
            .into_iter()
            .next()
            .flatten()
            .ok_or(Error::Program { why: "a linear op must have one output" })?;
        let mut slots = heapless::Vec::new();
        for a in args {
            let slot = match a {
                Arg::P(p) => {
                    let k = index(self.tape.consts.len(), "rule constants")?;
                    self.tape.consts.push((*p).clone(), "rule constants")?;
                    Slot::Const(k)
                }
                Arg::T(t) => Slot::Tan(**t),
            };
            let _ = slots.push(slot); // ≤ MAX_INPUTS: checked above
        }
        let out = self.tape.value(meta)?;
        self.tape.instrs.push(LinInstr { op, args: slots, out }, "rule instructions")?;
        Ok(out)
    }
}

/// A tape index as the `u32` slots store it.
fn index(len: usize, what: &'static str) -> Result<u32> {
    u32::try_from(len).map_err(|_| Error::Capacity { what, capacity: u32::MAX as usize })
}

/// A stored slot as an index.
fn as_index(slot: u32) -> usize {
    slot as usize
}
