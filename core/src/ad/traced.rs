//! The traced face's transformations: [`grad`], [`vjp`] and [`jvp`] turn a
//! [`Program`] into a new program (compile once, run many). Reverse mode
//! replays the forward program, then walks it backwards running each op's
//! rule — linearize, then transpose (`vjp.rs`) — into the same program: the
//! very steps the eager face takes at `backward`, so both faces give
//! bit-identical gradients. The result is cleaned by
//! [`passes::optimize`](crate::ir::passes::optimize) (dead code, pruning).

use super::cx::Tangent;
use super::rules::{jvp as rule_jvp, Primals};
use super::vjp::vjp_op;
use super::{Forward, Lin};
use crate::error::{Error, Result};
use crate::face::{Applied, Face};
use crate::ir::{passes, Builder, Program, ValueId, MAX_PARAMS};
use crate::op::{MAX_INPUTS, MAX_OUTPUTS};
use crate::prim::UnaryOp;
use crate::provider::Op;
use crate::seq::Seq;
use crate::Ops;

/// The forward program replayed into a fresh builder: where each old value
/// went, which values depend on the differentiated parameters, and (reverse
/// mode) the instructions replayed as a wider op.
struct Replay<const I: usize, const V: usize> {
    builder: Builder<I, V>,
    map: Seq<Option<ValueId>, V>,
    depends: Seq<bool, V>,
    mode: Mode,
    wide: Seq<Option<Wide>, I>,
}

/// Which derivative the replay is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Forward mode ([`jvp`]): every instruction replayed as it is.
    Tangents,
    /// Reverse mode ([`grad`], [`vjp`]): a values-only decomposition of a
    /// differentiated value runs with its vectors
    /// ([`LinalgOp::with_vectors`](crate::op::LinalgOp::with_vectors)).
    Cotangents,
}

/// A values-only instruction replayed as the decomposition with vectors:
/// that op, its new outputs, and which of them is the old op's values.
#[derive(Clone)]
struct Wide {
    op: Op,
    outputs: Applied<ValueId>,
    values: usize,
}

fn wrt_params<const I: usize, const V: usize>(
    program: &Program<I, V>,
    wrt: &[usize],
) -> Result<Seq<ValueId, MAX_PARAMS>> {
    let mut params = Seq::new();
    for &i in wrt {
        let p = program
            .params()
            .get(i)
            .copied()
            .ok_or(Error::Program { why: "`wrt` names a parameter the program does not have" })?;
        params.push(p, "program parameters")?;
    }
    Ok(params)
}

/// Copies `program`'s parameters into a new builder.
fn start<const I: usize, const V: usize>(
    program: &Program<I, V>,
    wrt: &[usize],
    mode: Mode,
) -> Result<Replay<I, V>> {
    let mut replay = Replay {
        builder: Builder::with_capacity(),
        map: Seq::filled(program.values.len(), None, "program values")?,
        depends: Seq::filled(program.values.len(), false, "program values")?,
        mode,
        wide: Seq::filled(program.instrs().len(), None, "program instructions")?,
    };
    for &p in program.params() {
        replay.map[p.index()] = Some(replay.builder.param(program.meta(p)?.clone())?);
    }
    for p in wrt_params(program, wrt)? {
        replay.depends[p.index()] = true;
    }
    Ok(replay)
}

impl<const I: usize, const V: usize> Replay<I, V> {
    fn get(&self, v: ValueId) -> Result<ValueId> {
        self.map[v.index()].ok_or(Error::Program { why: "a value is read before it is written" })
    }

    /// Replays every instruction forward, calling `each` after each one
    /// with (instr index, new inputs, new outputs).
    fn forward(
        &mut self,
        program: &Program<I, V>,
        mut each: impl FnMut(&mut Self, usize, &[ValueId], &[Option<ValueId>]) -> Result<()>,
    ) -> Result<()> {
        for (k, instr) in program.instrs().iter().enumerate() {
            let inputs: heapless::Vec<ValueId, MAX_INPUTS> =
                instr.inputs.iter().map(|&v| self.get(v)).collect::<Result<_>>()?;
            let refs: heapless::Vec<&ValueId, MAX_INPUTS> = inputs.iter().collect();
            let depends = instr.inputs.iter().any(|v| self.depends[v.index()]);
            self.builder.set_origin(instr.origin);
            let wider = match &instr.op {
                Op::Linalg(op) if depends && self.mode == Mode::Cotangents => op.with_vectors(),
                _ => None,
            };
            if let Some((op, values)) = wider {
                let op = Op::Linalg(op);
                let outputs = self.builder.apply(op.clone(), &refs)?;
                let out = outputs.get(values).copied().flatten();
                if let Some(Some(old)) = instr.outputs.first() {
                    self.map[old.index()] = out;
                    self.depends[old.index()] = depends;
                }
                self.wide[k] = Some(Wide { op, outputs, values });
                each(self, k, &inputs, &[out])?;
                continue;
            }
            let outs = self.builder.apply(instr.op.clone(), &refs)?;
            let mut new_outs = heapless::Vec::<Option<ValueId>, MAX_OUTPUTS>::new();
            for (slot, out) in instr.outputs.iter().zip(outs) {
                if let Some(old) = slot {
                    self.map[old.index()] = out;
                    self.depends[old.index()] = depends;
                }
                let _ = new_outs.push(out); // ≤ MAX_OUTPUTS
            }
            each(self, k, &inputs, &new_outs)?;
        }
        self.builder.set_origin(None);
        Ok(())
    }

    /// The backward walk: cotangents of the `wrt` parameters given seeds
    /// for some values (in the old program's numbering).
    fn backward(
        &mut self,
        program: &Program<I, V>,
        seeds: &[(ValueId, ValueId)],
        wrt: &[ValueId],
    ) -> Result<Seq<ValueId, MAX_PARAMS>> {
        let mut ct: Seq<Tangent<ValueId>, V> =
            Seq::filled(program.values.len(), Tangent::Zero, "program values")?;
        for &(old, seed) in seeds {
            let slot = &mut ct[old.index()];
            *slot = Forward::new(&mut self.builder).add(slot, &Tangent::Value(seed))?;
        }
        for (k, instr) in program.instrs().iter().enumerate().rev() {
            let out_cts: heapless::Vec<Tangent<ValueId>, MAX_OUTPUTS> = instr
                .outputs
                .iter()
                .map(|o| o.map_or(Tangent::Zero, |v| core::mem::replace(&mut ct[v.index()], Tangent::Zero)))
                .collect();
            if !instr.inputs.iter().any(|v| self.depends[v.index()]) || out_cts.iter().all(Tangent::is_zero) {
                continue;
            }
            let inputs: heapless::Vec<ValueId, MAX_INPUTS> =
                instr.inputs.iter().map(|&v| self.get(v)).collect::<Result<_>>()?;
            let refs: heapless::Vec<&ValueId, MAX_INPUTS> = inputs.iter().collect();
            let wanted: heapless::Vec<bool, MAX_INPUTS> =
                instr.inputs.iter().map(|v| self.depends[v.index()]).collect();
            self.builder.set_origin(Some(instr.origin.unwrap_or_else(|| instr.op.origin())));
            let cts = match self.wide[k].take() {
                // The values' cotangent at its place among the wider op's outputs.
                Some(Wide { op, outputs, values }) => {
                    let mut wide_cts: heapless::Vec<Tangent<ValueId>, MAX_OUTPUTS> =
                        outputs.iter().map(|_| Tangent::Zero).collect();
                    if let (Some(slot), Some(ct)) = (wide_cts.get_mut(values), out_cts.into_iter().next()) {
                        *slot = ct;
                    }
                    let primals = Primals::new(&refs, &outputs);
                    vjp_op(&mut self.builder, &op, &primals, &wanted, &wide_cts)?
                }
                None => {
                    let outputs: heapless::Vec<Option<ValueId>, MAX_OUTPUTS> =
                        instr.outputs.iter().map(|o| o.and_then(|v| self.map[v.index()])).collect();
                    let primals = Primals::new(&refs, &outputs);
                    vjp_op(&mut self.builder, &instr.op, &primals, &wanted, &out_cts)?
                }
            };
            for (v, c) in instr.inputs.iter().zip(cts) {
                if self.depends[v.index()] {
                    let slot = &mut ct[v.index()];
                    *slot = Forward::new(&mut self.builder).add(slot, &c)?;
                }
            }
        }
        self.builder.set_origin(None);
        let mut grads = Seq::new();
        for &p in wrt {
            let g = match core::mem::replace(&mut ct[p.index()], Tangent::Zero) {
                Tangent::Value(g) => g,
                Tangent::Zero => {
                    let meta = program.meta(p)?.clone();
                    self.builder.fill(meta, 0.0)?
                }
                Tangent::Undefined(e) => return Err(e),
            };
            grads.push(g, "gradients")?;
        }
        Ok(grads)
    }

    fn finish(mut self, program: &Program<I, V>, extra: &[ValueId]) -> Result<Program<I, V>> {
        let mut results = Seq::<ValueId, MAX_PARAMS>::new();
        for &r in program.results() {
            results.push(self.get(r)?, "program results")?;
        }
        for &e in extra {
            results.push(e, "program results")?;
        }
        // A derivative that passes a parameter through (the tangent of
        // x + c, the cotangent of conj(x) for real x) is returned as a copy:
        // a program's result is computed, never one of its parameters.
        for r in results.iter_mut() {
            if self.builder.program().params().contains(r) {
                *r = self.builder.unary(UnaryOp::Copy, r)?;
            }
        }
        let mut refs = Seq::<&ValueId, MAX_PARAMS>::new();
        for r in results.iter() {
            refs.push(r, "program results")?;
        }
        let mut out = self.builder.finish(&refs)?;
        passes::optimize(&mut out)?;
        Ok(out)
    }
}

/// The gradient program of a real scalar-valued `program` (one result,
/// summed over its elements) with respect to the parameters `wrt`:
/// same parameters; results `[loss, ∂loss/∂param for each of wrt]`.
///
/// # Errors
/// [`Error::Program`] for a program with other than one real result or a
/// bad `wrt`; the error of any op whose needed derivative is unsupported
/// or does not exist, naming op and output; capacity.
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let mut b: Builder = Builder::new();
/// let a = b.param(TensorMeta::new(DType::F64, Shape::new(&[3, 3])?))?;
/// let l = b.cholesky(&a)?;
/// let sq = b.unary(UnaryOp::Abs2, &l)?;
/// let loss = b.reduce(ReduceOp::Sum, &sq, 2)?;
/// let g = grad(&b.finish(&[&loss])?, &[0])?;
/// assert_eq!(g.results().len(), 2); // loss, gradient
/// # Ok::<(), Error>(())
/// ```
pub fn grad<const I: usize, const V: usize>(program: &Program<I, V>, wrt: &[usize]) -> Result<Program<I, V>> {
    let [loss] = program.results() else {
        return Err(Error::Program { why: "grad needs a program with exactly one result" });
    };
    let meta = program.meta(*loss)?.clone();
    if !meta.dtype.is_float() || meta.dtype.is_complex() {
        return Err(Error::Program { why: "the loss must be real-valued" });
    }
    let targets = wrt_params(program, wrt)?;
    let mut replay = start(program, wrt, Mode::Cotangents)?;
    replay.forward(program, |_, _, _, _| Ok(()))?;
    let seed = replay.builder.fill(meta, 1.0)?;
    let grads = replay.backward(program, &[(*loss, seed)], &targets)?;
    replay.finish(program, &grads)
}

/// The vector-Jacobian-product program: parameters `[params…, one
/// cotangent per result]`; results `[results…, cotangent of each of wrt]`.
///
/// # Errors
/// As [`grad`].
pub fn vjp<const I: usize, const V: usize>(program: &Program<I, V>, wrt: &[usize]) -> Result<Program<I, V>> {
    let targets = wrt_params(program, wrt)?;
    let mut replay = start(program, wrt, Mode::Cotangents)?;
    let mut seeds = Seq::<(ValueId, ValueId), MAX_PARAMS>::new();
    for &r in program.results() {
        let ct = replay.builder.param(program.meta(r)?.clone())?;
        seeds.push((r, ct), "program results")?;
    }
    replay.forward(program, |_, _, _, _| Ok(()))?;
    let grads = replay.backward(program, &seeds, &targets)?;
    replay.finish(program, &grads)
}

/// The Hessian-vector-product program of a loss: forward over reverse,
/// [`jvp`] of [`grad`]. Parameters `[params…, one direction per wrt]`;
/// results `[loss, gradient of each wrt, its directional derivative,
/// H·direction for each wrt]` (docs/ad-rules.md#second-order).
///
/// ```
/// use lindiff_core::face::direct::Pool;
/// use lindiff_core::{Host, HostData, Input, Memory};
/// use lindiff_cpu::prelude::*;
/// // L = Σ (x_i x_j)² over a 2×1 x: H·d at x = (1, 2), d = (1, 0).
/// let mut b: Builder = Builder::new();
/// let shape = Shape::new(&[2, 1]).map_err(|_| "more dims than MAX_RANK")?;
/// let x = b.param(TensorMeta::new(DType::F64, shape.clone()))?;
/// let outer = b.matmul_with(&x, MatOp::Identity, &x, MatOp::Transpose)?;
/// let sq = b.unary(UnaryOp::Abs2, &outer)?;
/// let loss = b.reduce(ReduceOp::Sum, &sq, 2)?;
/// let h = hvp(&b.finish(&[&loss])?, &[0])?;
/// let meta = TensorMeta::new(DType::F64, shape);
/// let desc = TensorDesc::contiguous(meta).ok_or("strides overflow")?;
/// let cpu = Cpu::new();
/// let compiled = h.compile(&cpu, &[&desc, &desc])?;
/// let (x, d) = ([1.0f64, 2.0], [1.0f64, 0.0]);
/// let inputs = [&x, &d].map(|v| Input { desc: &desc, data: HostData::from_slice(v) });
/// let mut pool = Pool::new();
/// let mut alloc = pool.allocator();
/// let results = compiled.run(&mut alloc, &inputs)?;
/// let hd = Host::data(&results[3].1).ok_or("H·d not written")?;
/// let hd = hd.typed::<f64>().ok_or("H·d not f64")?;
/// // L = (Σ x_i²)², H = 4(Σx²) I + 8 x xᵀ: H·e₁ = (20 + 8, 16).
/// assert_eq!(hd[..2], [28.0, 16.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// As [`grad`]; a derivative the gradient program needs and second order
/// lacks ([`ad_support_second_order`](super::ad_support_second_order)).
pub fn hvp<const I: usize, const V: usize>(program: &Program<I, V>, wrt: &[usize]) -> Result<Program<I, V>> {
    jvp(&grad(program, wrt)?, wrt)
}

/// The Jacobian-vector-product program (forward mode): parameters
/// `[params…, one tangent per wrt]`; results `[results…, tangent of each
/// result]`.
///
/// # Errors
/// As [`grad`].
pub fn jvp<const I: usize, const V: usize>(program: &Program<I, V>, wrt: &[usize]) -> Result<Program<I, V>> {
    let targets = wrt_params(program, wrt)?;
    let mut replay = start(program, wrt, Mode::Tangents)?;
    let mut tangents: Seq<Tangent<ValueId>, V> =
        Seq::filled(program.values.len(), Tangent::Zero, "program values")?;
    for &p in targets.iter() {
        tangents[p.index()] = Tangent::Value(replay.builder.param(program.meta(p)?.clone())?);
    }
    replay.forward(program, |replay, k, inputs, outputs| {
        let instr = &program.instrs()[k];
        let dx: heapless::Vec<Tangent<ValueId>, MAX_INPUTS> = instr
            .inputs
            .iter()
            .zip(inputs)
            .map(|(v, new)| {
                let float = replay.builder.meta(new).dtype.is_float();
                if float {
                    tangents[v.index()].clone()
                } else {
                    Tangent::Zero
                }
            })
            .collect();
        if dx.iter().all(Tangent::is_zero) {
            return Ok(());
        }
        let refs: heapless::Vec<&ValueId, MAX_INPUTS> = inputs.iter().collect();
        let primals = Primals::new(&refs, outputs);
        replay.builder.set_origin(Some(instr.origin.unwrap_or_else(|| instr.op.origin())));
        let dy = rule_jvp(&mut Forward::new(&mut replay.builder), &instr.op, &primals, &dx)?;
        for (slot, t) in instr.outputs.iter().zip(dy) {
            if let Some(v) = slot {
                tangents[v.index()] = t;
            }
        }
        Ok(())
    })?;
    replay.builder.set_origin(None);
    let mut outs = Seq::<ValueId, MAX_PARAMS>::new();
    for &r in program.results() {
        let t = match core::mem::replace(&mut tangents[r.index()], Tangent::Zero) {
            Tangent::Value(t) => t,
            Tangent::Zero => {
                let meta = program.meta(r)?.clone();
                replay.builder.fill(meta, 0.0)?
            }
            Tangent::Undefined(e) => return Err(e),
        };
        outs.push(t, "program results")?;
    }
    replay.finish(program, &outs)
}
