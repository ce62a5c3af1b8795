//! [`Var`]: a tensor handle that carries its face, so a loss reads like the
//! math — `(&u2.matmul(&u2.h()) - &p).fro()` — in the eager face (where a
//! closure's handles are recorded on a tape) and in the builder (where
//! they are traced into a program) alike.
//!
//! Errors do not interrupt an expression: a handle holds its value or the
//! first error met while computing it (a shape mismatch, a non-finite
//! input, …), every op on an error handle passes it on without running,
//! and the call that consumes the result ([`Direct::value_and_grad`],
//! [`trace`], [`Var::value`]) returns it. No operator panics.
//!
//! Modules: `methods` (the op table's decompositions and solves as
//! methods, the composites), `array` (slices, reductions, elementwise
//! maps), `ops` (`+ − * /`, unary minus, scalar broadcasting), `grad`
//! (value-and-grad on the direct face, tracing, running programs).
//!
//! [`Direct::value_and_grad`]: crate::face::direct::Direct::value_and_grad

mod array;
mod grad;
mod methods;
mod ops;

pub use grad::{trace, trace_value_and_grad, ValueAndGrad};

use crate::error::{Error, Result};
use crate::face::Face;
use crate::provider::Op;
use crate::tensor::TensorMeta;
use alloc::rc::Rc;
use core::cell::RefCell;

/// A tensor of face `F` that knows its face: methods and operators run on
/// it directly. Cheap to clone (a reference count and the face's handle).
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let meta = TensorMeta::new(DType::F64, Shape::new(&[3, 2]).unwrap());
/// // Σ s² of the SVD, traced into a program.
/// let program = trace([meta], |[a]| a.svd().s.abs2().sum())?;
/// assert_eq!(program.results().len(), 1);
/// // A shape error surfaces when the result is asked for, naming op and shape.
/// let wide = TensorMeta::new(DType::F64, Shape::new(&[2, 3]).unwrap());
/// let err = trace([wide], |[a]| a.det()).unwrap_err();
/// assert_eq!(err.to_string(), "det: argument `a` must be square, got 2×3");
/// # Ok::<(), Error>(())
/// ```
pub struct Var<F: Face> {
    face: Rc<RefCell<F>>,
    value: core::result::Result<F::Tensor, Error>,
}

impl<F: Face> Clone for Var<F> {
    fn clone(&self) -> Self {
        Var { face: Rc::clone(&self.face), value: self.value.clone() }
    }
}

impl<F: Face> core::fmt::Debug for Var<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match &self.value {
            Ok(t) => write!(f, "Var({:?})", self.face.borrow().meta(t)),
            Err(e) => write!(f, "Var(error: {e})"),
        }
    }
}

impl<F: Face> Var<F> {
    /// A handle on `face` holding `value`.
    pub fn new(face: &Rc<RefCell<F>>, value: F::Tensor) -> Self {
        Var { face: Rc::clone(face), value: Ok(value) }
    }

    /// A handle on `face` holding an error.
    pub fn error(face: &Rc<RefCell<F>>, error: Error) -> Self {
        Var { face: Rc::clone(face), value: Err(error) }
    }

    /// The face's tensor.
    ///
    /// # Errors
    /// The first error met while computing this handle.
    pub fn value(&self) -> Result<&F::Tensor> {
        self.value.as_ref().map_err(Clone::clone)
    }

    /// The face's tensor, by value.
    ///
    /// # Errors
    /// As [`Var::value`].
    pub fn into_value(self) -> Result<F::Tensor> {
        self.value
    }

    /// Dtype and shape.
    ///
    /// # Errors
    /// As [`Var::value`].
    pub fn meta(&self) -> Result<TensorMeta> {
        let t = self.value()?;
        Ok(self.face.borrow().meta(t))
    }

    /// The dims (`[rows, cols, batch…]` for matrices).
    ///
    /// # Errors
    /// As [`Var::value`].
    pub fn dims(&self) -> Result<heapless::Vec<usize, { crate::MAX_RANK }>> {
        Ok(self.meta()?.shape.dims().iter().copied().collect())
    }

    /// The face this handle runs on.
    pub fn face(&self) -> &Rc<RefCell<F>> {
        &self.face
    }

    /// The same face's handle holding `result`.
    fn wrap(&self, result: Result<F::Tensor>) -> Var<F> {
        Var { face: Rc::clone(&self.face), value: result }
    }

    /// Runs `op` on this handle and then `others` (every one on this
    /// handle's face) and returns one handle per output (`None` where the
    /// op's options switch an output off); an error in any input, or the
    /// op's, is every output's.
    fn apply(&self, op: Op, others: &[&Var<F>]) -> heapless::Vec<Option<Var<F>>, { crate::op::MAX_OUTPUTS }> {
        let count = op.output_names().len();
        let everywhere = |e: Error| (0..count).map(|_| Some(self.wrap(Err(e.clone())))).collect();
        let mut values = heapless::Vec::<&F::Tensor, { crate::op::MAX_INPUTS }>::new();
        let inputs = core::iter::once(self).chain(others.iter().copied());
        let count_inputs = others.len() + 1;
        for v in inputs {
            if !Rc::ptr_eq(&v.face, &self.face) {
                return everywhere(Error::Program {
                    why: "a handle of another face is mixed into an expression",
                });
            }
            match &v.value {
                Ok(t) => {
                    if values.push(t).is_err() {
                        return everywhere(Error::Arity {
                            op: op.name(),
                            expected: op.input_names().len(),
                            got: count_inputs,
                        });
                    }
                }
                Err(e) => return everywhere(e.clone()),
            }
        }
        let applied = self.face.borrow_mut().apply(op, &values);
        match applied {
            Ok(outs) => outs.into_iter().map(|o| o.map(|t| self.wrap(Ok(t)))).collect(),
            Err(e) => everywhere(e),
        }
    }

    /// Runs a one-output `op` on this handle and then `others`.
    fn single(&self, op: Op, others: &[&Var<F>]) -> Var<F> {
        let name = op.name();
        match self.apply(op, others).into_iter().next().flatten() {
            Some(v) => v,
            None => self.wrap(Err(Error::Buffer {
                op: name,
                arg: "output",
                why: "was not produced by the face",
                needed: 1,
                got: 0,
            })),
        }
    }

    /// A value on this face computed by `f` from this handle's tensor (for
    /// composites written against the face).
    fn with_face(&self, f: impl FnOnce(&mut F, &F::Tensor) -> Result<F::Tensor>) -> Var<F> {
        match &self.value {
            Ok(t) => {
                let result = f(&mut self.face.borrow_mut(), t);
                self.wrap(result)
            }
            Err(e) => self.wrap(Err(e.clone())),
        }
    }
}
