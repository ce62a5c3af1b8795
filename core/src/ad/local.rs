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
use crate::tensor::TensorMeta;

/// Most linear instructions one rule records.
pub const RULE_INSTRS: usize = 96;
/// Most constants (primal coefficients) one rule records.
const RULE_CONSTS: usize = 96;
/// Most tangent values of one rule (its inputs and every recorded output).
const RULE_VALUES: usize = RULE_INSTRS + MAX_INPUTS;

/// An argument of a recorded instruction.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// A constant (index into the constants).
    Const(u16),
    /// A tangent value.
    Tan(u16),
}

#[derive(Clone, Debug)]
struct LinInstr {
    op: Op,
    args: heapless::Vec<Slot, MAX_INPUTS>,
    out: u16,
}

/// The linear map one rule recorded, over primal constants of type `P`.
pub struct LocalTape<P> {
    metas: heapless::Vec<TensorMeta, RULE_VALUES>,
    instrs: heapless::Vec<LinInstr, RULE_INSTRS>,
    consts: heapless::Vec<P, RULE_CONSTS>,
}

impl<P: Clone> LocalTape<P> {
    /// An empty tape.
    pub fn new() -> Self {
        LocalTape { metas: heapless::Vec::new(), instrs: heapless::Vec::new(), consts: heapless::Vec::new() }
    }

    /// A new tangent input of this meta (inputs come before any instruction).
    ///
    /// # Errors
    /// [`Error::Capacity`].
    pub fn input(&mut self, meta: TensorMeta) -> Result<u16> {
        self.value(meta)
    }

    fn value(&mut self, meta: TensorMeta) -> Result<u16> {
        let id = self.metas.len() as u16;
        self.metas
            .push(meta)
            .map_err(|_| Error::Capacity { what: "rule tangent values", capacity: RULE_VALUES })?;
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
        seeds: &[(u16, Tangent<C::T>)],
        inputs: usize,
    ) -> Result<heapless::Vec<Tangent<C::T>, MAX_INPUTS>> {
        let mut ct: heapless::Vec<Tangent<C::T>, RULE_VALUES> =
            (0..self.metas.len()).map(|_| Tangent::Zero).collect();
        for (v, seed) in seeds {
            let slot = &mut ct[usize::from(*v)];
            *slot = super::Lin::add(cx, slot, seed)?;
        }
        for instr in self.instrs.iter().rev() {
            let out = core::mem::replace(&mut ct[usize::from(instr.out)], Tangent::Zero);
            if out.is_zero() {
                continue;
            }
            let targs: heapless::Vec<TArg<'_, P>, MAX_INPUTS> = instr
                .args
                .iter()
                .map(|s| match *s {
                    Slot::Const(k) => TArg::P(&self.consts[usize::from(k)]),
                    Slot::Tan(v) => TArg::T(&self.metas[usize::from(v)]),
                })
                .collect();
            let cts = transpose(cx, &instr.op, &targs, &out)?;
            for (slot, c) in instr.args.iter().zip(cts) {
                if let Slot::Tan(v) = *slot {
                    let acc = &mut ct[usize::from(v)];
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
    type T = u16;

    fn primal(&mut self) -> &mut dyn Face<Tensor = F::Tensor> {
        self.face
    }

    fn tangent_meta(&self, t: &u16) -> TensorMeta {
        self.tape
            .metas
            .get(usize::from(*t))
            .cloned()
            .unwrap_or_else(|| TensorMeta::new(crate::DType::I64, crate::Shape::scalar()))
    }

    fn linear(&mut self, op: Op, args: &[Arg<'_, F::Tensor, u16>]) -> Result<u16> {
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
        if self.tape.instrs.is_full() {
            return Err(Error::Capacity { what: "rule instructions", capacity: RULE_INSTRS });
        }
        let mut slots = heapless::Vec::new();
        for a in args {
            let slot = match a {
                Arg::P(p) => {
                    let k = self.tape.consts.len() as u16;
                    self.tape
                        .consts
                        .push((*p).clone())
                        .map_err(|_| Error::Capacity { what: "rule constants", capacity: RULE_CONSTS })?;
                    Slot::Const(k)
                }
                Arg::T(t) => Slot::Tan(**t),
            };
            let _ = slots.push(slot); // ≤ MAX_INPUTS: checked above
        }
        let out = self.tape.value(meta)?;
        let _ = self.tape.instrs.push(LinInstr { op, args: slots, out }); // not full: checked
        Ok(out)
    }
}
