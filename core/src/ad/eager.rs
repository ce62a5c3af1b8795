//! The eager face: ops run at once on an inner face (usually
//! [`Direct`](crate::face::direct::Direct)); those that depend on a watched
//! tensor are recorded on a tape of (op, inputs, outputs). [`Eager::backward`]
//! walks the tape in reverse and runs each op's rule — linearize, then
//! transpose (`vjp.rs`) — on the inner face.
//!
//! Recording costs a few handle clones per op; the rules run only when a
//! gradient is asked for. With the `alloc` feature the tape grows as
//! needed (a loop that [`Eager::clear`]s it reuses its storage); without
//! it, it holds at most `N` ops and `V` tracked values, so firmware never
//! touches a heap.

use super::cx::Tangent;
use super::rules::Primals;
use super::vjp::vjp_op;
use super::{Forward, Lin};
use crate::error::{Error, Result};
use crate::face::{Applied, Face};
use crate::ir::MAX_PARAMS;
use crate::op::{MAX_INPUTS, MAX_OUTPUTS};
use crate::provider::Op;
use crate::seq::{Seq, SmallSeq};

/// The gradients [`Eager::backward`] returns, one per `wrt`, in order (in
/// place up to [`MAX_PARAMS`], on the heap past them with `alloc`).
pub type Gradients<T> = SmallSeq<T, MAX_PARAMS>;
use crate::tensor::TensorMeta;
use crate::Ops;

/// A tensor of the eager face: a value and, when it depends on a watched
/// tensor, its place on the tape.
#[derive(Clone, Debug)]
pub struct Tracked<T> {
    value: T,
    id: Option<Id>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Id {
    index: u32,
    generation: u32,
    watched: bool,
}

impl<T> Tracked<T> {
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
/// use lindiff_cpu::prelude::*;
/// let mut tape = Eager::new(Direct::new(Cpu::new()));
/// let a = tape.inner().tensor_row_major(2, 2, &[4.0, 2.0, 2.0, 5.0])?;
/// let a = tape.watch(a)?;
/// let l = tape.cholesky(&a)?;
/// let loss = tape.reduce(ReduceOp::Sum, &l, 2)?;
/// // d(Σ L)/dA, on the lower triangle (Cholesky reads it alone).
/// let g = tape.backward(&loss, &[&a])?;
/// assert_eq!(g[0].dims(), [2, 2]);
/// # Ok::<(), Error>(())
/// ```
pub struct Eager<F: Face, const N: usize = 128, const V: usize = 512> {
    inner: F,
    records: Seq<Record<F::Tensor>, N>,
    /// The cotangent of each tracked value during `backward` (kept between
    /// calls, empty, so a steady loop reuses its storage).
    cotangents: Seq<Tangent<F::Tensor>, V>,
    next: u32,
    generation: u32,
}

impl<F: Face> Eager<F> {
    /// An empty tape over `inner` (storage that grows with `alloc`; the
    /// default capacities without it).
    pub fn new(inner: F) -> Self {
        Eager::with_capacity(inner)
    }
}

impl<F: Face, const N: usize, const V: usize> Eager<F, N, V> {
    /// An empty tape over `inner` of capacities `N` ops and `V` tracked
    /// values (they bind only without `alloc`).
    pub fn with_capacity(inner: F) -> Self {
        Eager { inner, records: Seq::new(), cotangents: Seq::new(), next: 0, generation: 0 }
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
        let full = if cfg!(feature = "alloc") { u32::MAX as usize } else { V };
        if self.next as usize >= full {
            return Err(Error::Capacity { what: "eager tape values", capacity: full });
        }
        self.next += 1;
        Ok(Id { index: self.next - 1, generation: self.generation, watched })
    }

    /// A tensor gradients can be taken with respect to.
    ///
    /// # Errors
    /// [`Error::Capacity`] when the tape's value table is full.
    pub fn watch(&mut self, t: F::Tensor) -> Result<Tracked<F::Tensor>> {
        Ok(Tracked { value: t, id: Some(self.fresh(true)?) })
    }

    /// A constant (no gradient flows into it).
    pub fn constant(t: F::Tensor) -> Tracked<F::Tensor> {
        Tracked { value: t, id: None }
    }

    /// The tape index of `v` if it belongs to the current tape.
    fn index(&self, v: &Tracked<F::Tensor>) -> Option<u32> {
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
        loss: &Tracked<F::Tensor>,
        wrt: &[&Tracked<F::Tensor>],
    ) -> Result<Gradients<F::Tensor>> {
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
        let mut ct = core::mem::take(&mut self.cotangents);
        ct.clear();
        ct.reserve(self.next as usize, "eager tape values")?;
        for _ in 0..self.next {
            ct.push(Tangent::Zero, "eager tape values")?;
        }
        let grads = self.walk_back(loss, meta, wrt, &mut ct);
        ct.clear();
        self.cotangents = ct;
        grads
    }

    /// The backward walk of [`Eager::backward`] with its cotangent table.
    fn walk_back(
        &mut self,
        loss: &Tracked<F::Tensor>,
        meta: TensorMeta,
        wrt: &[&Tracked<F::Tensor>],
        ct: &mut Seq<Tangent<F::Tensor>, V>,
    ) -> Result<Gradients<F::Tensor>> {
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
            let primals = Primals::new(&primal_in, &outputs);
            let cts = vjp_op(&mut self.inner, &record.op, &primals, &wanted, &out_cts)
                .map_err(|e| e.in_rule_of(record.op.origin()))?;
            for ((_, i), c) in record.inputs.iter().zip(cts) {
                if let Some(i) = i {
                    let slot = &mut ct[*i as usize];
                    *slot = Forward::new(&mut self.inner).add(slot, &c)?;
                }
            }
        }
        let mut grads = Gradients::new();
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
            grads.push(g, "gradients")?;
        }
        Ok(grads)
    }
}

impl<F: Face, const N: usize, const V: usize> Face for Eager<F, N, V> {
    type Tensor = Tracked<F::Tensor>;

    fn meta(&self, t: &Self::Tensor) -> TensorMeta {
        self.inner.meta(&t.value)
    }

    fn apply(&mut self, op: Op, inputs: &[&Self::Tensor]) -> Result<Applied<Self::Tensor>> {
        let values: heapless::Vec<&F::Tensor, MAX_INPUTS> = inputs.iter().map(|v| &v.value).collect();
        let ids: heapless::Vec<Option<u32>, MAX_INPUTS> = inputs.iter().map(|v| self.index(v)).collect();
        if ids.iter().all(Option::is_none) {
            let outs = self.inner.apply(op, &values)?;
            return Ok(outs.into_iter().map(|o| o.map(|value| Tracked { value, id: None })).collect());
        }
        // A values-only decomposition of a tracked input runs with its
        // vectors, which its rule needs (`LinalgOp::with_vectors`); the
        // caller gets the values alone.
        let (op, pick) = match &op {
            Op::Linalg(l) => l.with_vectors().map_or((op, None), |(wide, at)| (Op::Linalg(wide), Some(at))),
            _ => (op, None),
        };
        let outs = self.inner.apply(op.clone(), &values)?;
        self.records.reserve(1, "eager tape ops")?;
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
                    Some(Tracked { value, id: Some(id) })
                }
                None => {
                    let _ = record.outputs.push(None);
                    None
                }
            };
            let _ = result.push(var); // ≤ MAX_OUTPUTS
        }
        self.records.push(record, "eager tape ops")?;
        if let Some(at) = pick {
            let values = result.into_iter().nth(at).flatten();
            return Ok(core::iter::once(values).collect());
        }
        Ok(result)
    }
}
