//! Replaying a program on a face: each instruction becomes one
//! [`Face::apply`], and each value is dropped after its last use. On the
//! direct face this runs the program; on another [`Builder`](super::Builder)
//! it inlines it.

use super::{Program, MAX_PARAMS};
use crate::error::{Error, Result};
use crate::face::Face;
use crate::op::MAX_INPUTS;
use crate::seq::{Seq, SmallSeq};

impl<const I: usize, const V: usize> Program<I, V> {
    /// For each value, the index of the last instruction reading it
    /// (`usize::MAX` for results and values never read).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] (`alloc`); capacity otherwise.
    pub(crate) fn last_uses(&self) -> Result<Seq<usize, V>> {
        let mut last: Seq<usize, V> = Seq::filled(self.values.len(), 0, "program values")?;
        for (i, instr) in self.instrs.iter().enumerate() {
            for v in &instr.inputs {
                last[v.index()] = i;
            }
        }
        for v in &self.results {
            last[v.index()] = usize::MAX;
        }
        Ok(last)
    }

    /// Runs the program on `face` with `params` (one per parameter, in
    /// order) and returns its results.
    ///
    /// # Errors
    /// [`Error::Program`] for the wrong number of parameters; the ops' and
    /// the face's errors (a parameter whose dtype or shape differs from the
    /// traced one fails the first op's checks).
    pub fn eval<F: Face + ?Sized>(
        &self,
        face: &mut F,
        params: &[&F::Tensor],
    ) -> Result<SmallSeq<F::Tensor, MAX_PARAMS>> {
        if params.len() != self.params.len() {
            return Err(Error::Program { why: "wrong number of parameters" });
        }
        let last = self.last_uses()?;
        let mut values: SmallSeq<Option<F::Tensor>, V> = SmallSeq::new();
        for _ in 0..self.values.len() {
            values.push(None, "program values")?;
        }
        for (&id, &t) in self.params.iter().zip(params) {
            values[id.index()] = Some(t.clone());
        }
        for (i, instr) in self.instrs.iter().enumerate() {
            let outs = {
                let mut inputs = heapless::Vec::<&F::Tensor, MAX_INPUTS>::new();
                for v in &instr.inputs {
                    let t = values[v.index()]
                        .as_ref()
                        .ok_or(Error::Program { why: "a value is read before it is written" })?;
                    let _ = inputs.push(t); // ≤ MAX_INPUTS by construction
                }
                face.apply(instr.op.clone(), &inputs).map_err(|e| instr.as_origin_error(e))?
            };
            for (slot, t) in instr.outputs.iter().zip(outs) {
                if let Some(id) = slot {
                    values[id.index()] = t;
                }
            }
            for v in &instr.inputs {
                if last[v.index()] == i {
                    values[v.index()] = None;
                }
            }
        }
        let mut results = SmallSeq::new();
        for v in self.results.iter() {
            let t = values[v.index()].clone().ok_or(Error::Program { why: "a result was never computed" })?;
            results.push(t, "program results")?;
        }
        Ok(results)
    }
}
