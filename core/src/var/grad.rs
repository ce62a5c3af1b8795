//! Losses as closures: [`Direct::value_and_grad`] runs one on the eager
//! tape over a direct face and returns its value and gradients;
//! [`trace`] and [`trace_value_and_grad`] record one into a program (its
//! traced twin) that compiles for a provider and runs with
//! [`Direct::run`]. The eager and traced gradients are bit-identical (both
//! run the same rules in the same order).

use super::Var;
use crate::ad::{grad, Eager, Tracked};
use crate::error::{Error, Result};
use crate::face::direct::{Direct, Tensor};
use crate::ir::{Builder, Compiled, Program, ValueId};
use crate::memory::Host;
use crate::provider::{Input, Provider};
use crate::seq::SmallSeq;
use crate::tensor::TensorMeta;
use crate::Element;
use alloc::rc::Rc;
use core::cell::RefCell;

/// The value of a real scalar loss and its gradient with respect to each
/// input, in order.
#[derive(Clone, Debug)]
pub struct ValueAndGrad<const N: usize> {
    /// The loss.
    pub value: f64,
    /// ∂loss/∂input for each input (for complex inputs ∂L/∂Re + i ∂L/∂Im).
    pub grads: [Tensor; N],
}

/// The handles of the eager tape a loss closure sees.
type Tape<'d, P> = Eager<&'d mut Direct<P>>;

impl<P: Provider<Memory = Host>> Direct<P> {
    /// The value of the real scalar loss `f(xs)` and its gradient with
    /// respect to each of `xs`: `f` receives the inputs as handles on an
    /// eager tape and returns the loss handle.
    ///
    /// ```
    /// use lindiff_cpu::prelude::*;
    /// let mut la = Direct::new(Cpu::new());
    /// let a = la.tensor(&[2, 2], &[3.0, 0.0, 0.0, 2.0])?;
    /// // ‖A‖_F² = Σ s²: its gradient is 2A.
    /// let out = la.value_and_grad([&a], |[a]| a.svd().s.abs2().sum())?;
    /// assert!((out.value - 13.0).abs() < 1e-12);
    /// let g = out.grads[0].to_vec::<f64>()?;
    /// for (x, y) in g.iter().zip([6.0, 0.0, 0.0, 4.0]) {
    ///     assert!((x - y).abs() < 1e-12);
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// The first error the loss met (shapes, dtypes, a non-finite input); a
    /// loss that is not a real scalar; a derivative that does not exist or
    /// is not implemented (`NotDifferentiable`, `UnsupportedDerivative`,
    /// naming op and output, and the SVD and eigh gauge checks).
    pub fn value_and_grad<const N: usize>(
        &mut self,
        xs: [&Tensor; N],
        f: impl FnOnce([Var<Tape<'_, P>>; N]) -> Var<Tape<'_, P>>,
    ) -> Result<ValueAndGrad<N>> {
        let tape = Rc::new(RefCell::new(Eager::new(&mut *self)));
        let mut watched: SmallSeq<Tracked<Tensor>, 16> = SmallSeq::new();
        for x in xs {
            let v = tape.borrow_mut().watch(x.clone())?;
            watched.push(v, "value_and_grad inputs")?;
        }
        let handles: [Var<Tape<'_, P>>; N] = core::array::from_fn(|i| Var::new(&tape, watched[i].clone()));
        let loss = f(handles);
        if !Rc::ptr_eq(loss.face(), &tape) {
            return Err(Error::Program { why: "the loss must be computed from the closure's handles" });
        }
        loss.check_scalar_loss()?;
        let tracked = loss.into_value()?;
        let value = scalar_value(tracked.value())?;
        let wrt: SmallSeq<&Tracked<Tensor>, 16> = {
            let mut w = SmallSeq::new();
            for v in watched.iter() {
                w.push(v, "value_and_grad inputs")?;
            }
            w
        };
        let grads = tape.borrow_mut().backward(&tracked, &wrt)?;
        if grads.len() != N {
            return Err(Error::Program { why: "a gradient is missing" });
        }
        Ok(ValueAndGrad { value, grads: core::array::from_fn(|i| grads[i].clone()) })
    }

    /// Runs a compiled program on tensors of this face (one per
    /// parameter, laid out as compiled), taking its buffers from this
    /// face's pool; returns its results as tensors.
    ///
    /// # Errors
    /// As [`Compiled::run`].
    pub fn run<const I: usize, const V: usize>(
        &mut self,
        compiled: &Compiled<'_, P, I, V>,
        params: &[&Tensor],
    ) -> Result<SmallSeq<Tensor, { crate::ir::MAX_PARAMS }>> {
        let mut inputs: SmallSeq<Input<'_, Host>, { crate::ir::MAX_PARAMS }> = SmallSeq::new();
        for t in params {
            inputs.push(Input { desc: t.desc(), data: t.data() }, "program parameters")?;
        }
        self.run_with_pool(|alloc| compiled.run(alloc, &inputs))
    }
}

impl<P: Provider<Memory = Host>> Var<Tape<'_, P>> {
    /// A constant on this handle's tape: a tensor of the direct face the
    /// loss reads but is not differentiated with respect to.
    pub fn constant(&self, t: &Tensor) -> Self {
        Var::new(self.face(), Eager::<&mut Direct<P>>::constant(t.clone()))
    }
}

/// The one value of a real scalar tensor, as `f64`.
fn scalar_value(t: &Tensor) -> Result<f64> {
    match t.meta().dtype {
        crate::DType::F32 => Ok(f64::from(first::<f32>(t)?)),
        _ => first::<f64>(t),
    }
}

fn first<T: Element + Copy>(t: &Tensor) -> Result<T> {
    t.as_slice::<T>()?.first().copied().ok_or(Error::Program { why: "the loss has no value" })
}

/// Records the loss `f` of parameters shaped as `params` into a program
/// with one result (the loss). Compile its gradient with
/// [`ad::grad`](crate::ad::grad), or use [`trace_value_and_grad`].
///
/// # Errors
/// The first error the loss met while tracing (shapes, dtypes).
pub fn trace<const N: usize>(
    params: [TensorMeta; N],
    f: impl FnOnce([Var<Builder>; N]) -> Var<Builder>,
) -> Result<Program> {
    let builder = Rc::new(RefCell::new(Builder::new()));
    let mut ids: SmallSeq<ValueId, 16> = SmallSeq::new();
    for meta in params {
        let id = builder.borrow_mut().param(meta)?;
        ids.push(id, "program parameters")?;
    }
    let handles: [Var<Builder>; N] = core::array::from_fn(|i| Var::new(&builder, ids[i]));
    let loss = f(handles);
    if !Rc::ptr_eq(loss.face(), &builder) {
        return Err(Error::Program { why: "the loss must be computed from the closure's handles" });
    }
    let result = loss.into_value()?;
    // The closure's handles are gone; the builder is this function's alone.
    let builder = Rc::try_unwrap(builder)
        .map_err(|_| Error::Program { why: "a handle outlived the traced closure" })?
        .into_inner();
    builder.finish(&[&result])
}

/// The traced twin of [`Direct::value_and_grad`]: a program whose
/// parameters are shaped as `params` and whose results are the loss and its
/// gradient with respect to every parameter, ready to compile for a
/// provider and run with [`Direct::run`].
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let mut la = Direct::new(Cpu::new());
/// let a = la.tensor(&[2, 2], &[3.0, 0.0, 0.0, 2.0])?;
/// // Build → grad → compile → run.
/// let program = trace_value_and_grad([a.meta().clone()], |[a]| a.svd().s.sum())?;
/// let cpu = Cpu::new();
/// let compiled = program.compile(&cpu, &[a.desc()])?;
/// let outs = la.run(&compiled, &[&a])?; // [loss, ∂loss/∂a]
/// assert_eq!(outs[0].to_vec::<f64>()?, [5.0]);
/// assert_eq!(outs[1].to_vec::<f64>()?, [1.0, 0.0, 0.0, 1.0]); // U Vᴴ
/// # Ok::<(), Error>(())
/// ```
///
/// # Errors
/// As [`trace`]; a loss that is not a real scalar; a derivative that does
/// not exist or is not implemented, naming op and output.
pub fn trace_value_and_grad<const N: usize>(
    params: [TensorMeta; N],
    f: impl FnOnce([Var<Builder>; N]) -> Var<Builder>,
) -> Result<Program> {
    let program = trace(params, |xs| {
        let loss = f(xs);
        match loss.check_scalar_loss() {
            Ok(_) => loss,
            Err(e) => Var::error(loss.face(), e),
        }
    })?;
    let wrt: SmallSeq<usize, 16> = {
        let mut w = SmallSeq::new();
        for i in 0..N {
            w.push(i, "program parameters")?;
        }
        w
    };
    grad(&program, &wrt)
}

impl<P: Provider<Memory = Host>> Direct<P> {
    /// Runs `f` with this face's pool as an allocator and copies the
    /// buffers it returns into tensors of this face.
    fn run_with_pool<'s>(
        &'s mut self,
        f: impl FnOnce(&mut crate::face::direct::PoolAllocator<'s>) -> Result<crate::ir::Results<'s, Host>>,
    ) -> Result<SmallSeq<Tensor, { crate::ir::MAX_PARAMS }>> {
        let mut alloc = self.pool_mut().allocator();
        let results = f(&mut alloc)?;
        let mut out = SmallSeq::new();
        let mut failed = None;
        for (meta, buffer) in results {
            if failed.is_none() {
                match alloc.tensor_from(&meta, &buffer) {
                    Ok(t) => {
                        if let Err(e) = out.push(t, "program results") {
                            failed = Some(e);
                        }
                    }
                    Err(e) => failed = Some(e),
                }
            }
            crate::Allocator::<Host>::release(&mut alloc, buffer);
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}
