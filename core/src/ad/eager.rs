//! The eager face: ops run at once on an inner face (usually
//! [`Direct`](crate::face::direct::Direct)); those that depend on a watched
//! tensor are recorded on a tape of (op, inputs, outputs). [`Eager::backward`]
//! walks the tape in reverse and runs each op's rule — linearize, then
//! transpose (`vjp.rs`) — on the inner face.
//!
//! Recording costs a few handle clones per op; the rules run only when a
//! gradient is asked for. The tape is fixed capacity (`N` ops, `V` tracked
//! values), so a training loop allocates nothing once the inner face's
//! memory has warmed up.

use super::cx::Tangent;
use super::rules::Primals;
use super::vjp::vjp_op;
use super::{Forward, Lin};
use crate::error::{Error, Result};
use crate::face::{Applied, Face};
use crate::ir::MAX_PARAMS;
use crate::op::{MAX_INPUTS, MAX_OUTPUTS};
use crate::provider::Op;
use crate::tensor::TensorMeta;
use crate::Linalg;

/// A tensor of the eager face: a value and, when it depends on a watched
/// tensor, its place on the tape.
#[derive(Clone, Debug)]
pub struct Var<T> {
    value: T,
    id: Option<Id>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Id {
    index: u32,
    generation: u32,
    watched: bool,
}

impl<T> Var<T> {
    /// The value.
    pub fn value(&self) -> &T {
        &self.value
    }

    /// `true` when the value depends on a watched tensor.
    pub fn is_tracked(&self) -> bool {
        self.id.is_some()
    }
}

struct Record<T> {
    op: Op,
    inputs: heapless::Vec<(T, Option<u32>), MAX_INPUTS>,
    outputs: heapless::Vec<Option<(T, u32)>, MAX_OUTPUTS>,
}

/// Eager reverse-mode face over `F`.
///
/// ```
/// use lindiff_core::ad::Eager;
/// use lindiff_core::{DType, Linalg, Shape, TensorMeta};
/// # use lindiff_core::ir::Builder;
/// // Any face can be wrapped; a program would use `Direct` over a provider.
/// let mut face: Eager<Builder> = Eager::new(Builder::new());
/// let a = face.inner().param(TensorMeta::new(DType::F64, Shape::new(&[3, 3]).unwrap())).unwrap();
/// let a = face.watch(a).unwrap();
/// let l = face.cholesky(&a).unwrap();
/// assert!(l.is_tracked());
/// ```
pub struct Eager<F: Face, const N: usize = 128, const V: usize = 512> {
    inner: F,
    records: heapless::Vec<Record<F::Tensor>, N>,
    next: u32,
    generation: u32,
}

impl<F: Face, const N: usize, const V: usize> Eager<F, N, V> {
    /// An empty tape over `inner`.
    pub fn new(inner: F) -> Self {
        Eager { inner, records: heapless::Vec::new(), next: 0, generation: 0 }
    }

    /// The inner face (to make tensors, read results).
    pub fn inner(&mut self) -> &mut F {
        &mut self.inner
    }

    /// Number of recorded ops.
    pub fn recorded(&self) -> usize {
        self.records.len()
    }

    /// Forgets the tape (tensors watched or computed before are no longer
    /// tracked). Keeps its storage: no allocation.
    pub fn clear(&mut self) {
        self.records.clear();
        self.next = 0;
        self.generation = self.generation.wrapping_add(1);
    }

    fn fresh(&mut self, watched: bool) -> Result<Id> {
        if self.next as usize >= V {
            return Err(Error::Capacity { what: "eager tape values", capacity: V });
        }
        self.next += 1;
        Ok(Id { index: self.next - 1, generation: self.generation, watched })
    }

    /// A tensor gradients can be taken with respect to.
    ///
    /// # Errors
    /// [`Error::Capacity`] when the tape's value table is full.
    pub fn watch(&mut self, t: F::Tensor) -> Result<Var<F::Tensor>> {
        Ok(Var { value: t, id: Some(self.fresh(true)?) })
    }

    /// A constant (no gradient flows into it).
    pub fn constant(t: F::Tensor) -> Var<F::Tensor> {
        Var { value: t, id: None }
    }

    /// The tape index of `v` if it belongs to the current tape.
    fn index(&self, v: &Var<F::Tensor>) -> Option<u32> {
        v.id.filter(|id| id.generation == self.generation).map(|id| id.index)
    }

    /// Gradients of the real `loss` (summed over its elements) with respect
    /// to each of `wrt`, which must be watched tensors of the current tape.
    ///
    /// # Errors
    /// [`Error::Program`] for a `wrt` that is not watched on this tape or a
    /// non-real loss; an op's error naming the output whose derivative is
    /// not implemented or does not exist; the inner face's errors.
    pub fn backward(
        &mut self,
        loss: &Var<F::Tensor>,
        wrt: &[&Var<F::Tensor>],
    ) -> Result<heapless::Vec<F::Tensor, MAX_PARAMS>> {
        let meta = self.inner.meta(&loss.value);
        if !meta.dtype.is_float() || meta.dtype.is_complex() {
            return Err(Error::Program { why: "the loss must be real-valued" });
        }
        for w in wrt {
            if !w.id.is_some_and(|id| id.watched && id.generation == self.generation) {
                return Err(Error::Program {
                    why: "gradients are taken with respect to watched tensors of this tape",
                });
            }
        }
        let mut ct: heapless::Vec<Tangent<F::Tensor>, V> = (0..self.next).map(|_| Tangent::Zero).collect();
        if let Some(i) = self.index(loss) {
            ct[i as usize] = Tangent::Value(self.inner.fill(meta, 1.0)?);
        }
        let mut primal_in = heapless::Vec::<&F::Tensor, MAX_INPUTS>::new();
        for record in self.records.iter().rev() {
            let out_cts: heapless::Vec<Tangent<F::Tensor>, MAX_OUTPUTS> = record
                .outputs
                .iter()
                .map(|o| {
                    o.as_ref().map_or(Tangent::Zero, |(_, i)| {
                        core::mem::replace(&mut ct[*i as usize], Tangent::Zero)
                    })
                })
                .collect();
            if out_cts.iter().all(Tangent::is_zero) {
                continue;
            }
            primal_in.clear();
            primal_in.extend(record.inputs.iter().map(|(t, _)| t));
            let outputs: heapless::Vec<Option<F::Tensor>, MAX_OUTPUTS> =
                record.outputs.iter().map(|o| o.as_ref().map(|(t, _)| t.clone())).collect();
            let wanted: heapless::Vec<bool, MAX_INPUTS> =
                record.inputs.iter().map(|(_, i)| i.is_some()).collect();
            let primals = Primals { inputs: &primal_in, outputs: &outputs };
            let cts = vjp_op(&mut self.inner, &record.op, &primals, &wanted, &out_cts)?;
            for ((_, i), c) in record.inputs.iter().zip(cts) {
                if let Some(i) = i {
                    let slot = &mut ct[*i as usize];
                    *slot = Forward::new(&mut self.inner).add(slot, &c)?;
                }
            }
        }
        let mut grads = heapless::Vec::new();
        for w in wrt {
            let i = self.index(w).map_or(0, |i| i as usize);
            let g = match core::mem::replace(&mut ct[i], Tangent::Zero) {
                Tangent::Value(g) => g,
                Tangent::Zero => {
                    let meta: TensorMeta = self.inner.meta(&w.value);
                    self.inner.fill(meta, 0.0)?
                }
                Tangent::Undefined(e) => return Err(e),
            };
            grads.push(g).map_err(|_| Error::Capacity { what: "gradients", capacity: MAX_PARAMS })?;
        }
        Ok(grads)
    }
}

impl<F: Face, const N: usize, const V: usize> Face for Eager<F, N, V> {
    type Tensor = Var<F::Tensor>;

    fn meta(&self, t: &Self::Tensor) -> TensorMeta {
        self.inner.meta(&t.value)
    }

    fn apply(&mut self, op: Op, inputs: &[&Self::Tensor]) -> Result<Applied<Self::Tensor>> {
        let values: heapless::Vec<&F::Tensor, MAX_INPUTS> = inputs.iter().map(|v| &v.value).collect();
        let outs = self.inner.apply(op.clone(), &values)?;
        let ids: heapless::Vec<Option<u32>, MAX_INPUTS> = inputs.iter().map(|v| self.index(v)).collect();
        if ids.iter().all(Option::is_none) {
            return Ok(outs.into_iter().map(|o| o.map(|value| Var { value, id: None })).collect());
        }
        if self.records.is_full() {
            return Err(Error::Capacity { what: "eager tape ops", capacity: N });
        }
        let mut record = Record { op, inputs: heapless::Vec::new(), outputs: heapless::Vec::new() };
        for (v, i) in inputs.iter().zip(&ids) {
            let _ = record.inputs.push((v.value.clone(), *i)); // ≤ MAX_INPUTS
        }
        let mut result = Applied::new();
        for o in outs {
            let var = match o {
                Some(value) => {
                    let id = self.fresh(false)?;
                    let _ = record.outputs.push(Some((value.clone(), id.index)));
                    Some(Var { value, id: Some(id) })
                }
                None => {
                    let _ = record.outputs.push(None);
                    None
                }
            };
            let _ = result.push(var); // ≤ MAX_OUTPUTS
        }
        let _ = self.records.push(record); // not full: checked above
        Ok(result)
    }
}
