//! [`Builder`]: the traced face. Every face method records an instruction
//! instead of running it, with the op's shape and dtype checks applied at
//! once; [`Builder::finish`] returns the [`Program`].

use super::{Program, ValueId};
use crate::error::{Origin, Result};
use crate::face::{Applied, Face};
use crate::op::MAX_INPUTS;
use crate::provider::Op;
use crate::seq::Seq;
use crate::tensor::TensorMeta;

/// A value being traced: its id in the builder's program.
pub type Value = ValueId;

/// Records a program through the [`Face`] methods.
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let mut b: Builder = Builder::new();
/// let a = b.param(TensorMeta::new(DType::F64, Shape::new(&[4, 3])?))?;
/// let s = b.svd_vals(&a)?;
/// let program = b.finish(&[&s])?;
/// assert_eq!(program.instrs().len(), 1);
/// assert_eq!(program.meta(s)?.shape.dims(), &[3]);
/// // Shape errors surface while tracing, naming the op:
/// let mut b: Builder = Builder::new();
/// let a = b.param(TensorMeta::new(DType::F64, Shape::new(&[4, 3])?))?;
/// let err = b.det(&a).expect_err("a 4×3 matrix has no determinant");
/// assert_eq!(err.to_string(), "det: argument `a` must be square, got 4×3");
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builder<const I: usize = { super::DEFAULT_INSTRS }, const V: usize = { super::DEFAULT_VALUES }> {
    program: Program<I, V>,
    /// The origin recorded with each instruction pushed (`Instr::origin`).
    origin: Option<Origin>,
}

impl Builder {
    /// An empty program (storage that grows with `alloc`; the default
    /// capacities without it).
    pub fn new() -> Self {
        Builder::with_capacity()
    }
}

impl<const I: usize, const V: usize> Builder<I, V> {
    /// An empty program of capacities `I` instructions and `V` values (they
    /// bind only without `alloc`): `Builder::<40, 96>::with_capacity()` on
    /// firmware.
    pub fn with_capacity() -> Self {
        Builder { program: Program::default(), origin: None }
    }

    /// A new parameter of this dtype and shape.
    ///
    /// # Errors
    /// [`Error::Capacity`](crate::Error::Capacity) past the parameter or
    /// value capacity.
    pub fn param(&mut self, meta: TensorMeta) -> Result<Value> {
        self.program.push_param(meta)
    }

    /// The program so far.
    pub fn program(&self) -> &Program<I, V> {
        &self.program
    }

    /// The program with `results` as its results.
    ///
    /// # Errors
    /// [`Error::Program`](crate::Error::Program) for a value of another
    /// builder; capacity.
    pub fn finish(mut self, results: &[&Value]) -> Result<Program<I, V>> {
        let mut ids: Seq<ValueId, { super::MAX_PARAMS }> = Seq::new();
        for v in results {
            ids.push(**v, "program results")?;
        }
        self.program.set_results(&ids)?;
        Ok(self.program)
    }

    /// Records `origin` with the instructions pushed from now on: the op
    /// whose derivative rule they belong to (the AD transforms set it).
    pub(crate) fn set_origin(&mut self, origin: Option<Origin>) {
        self.origin = origin;
    }

    /// Continues building on `program` (its results are dropped).
    pub fn from_program(program: Program<I, V>) -> Self {
        Builder { program, origin: None }
    }
}

impl<const I: usize, const V: usize> Face for Builder<I, V> {
    type Tensor = Value;

    fn meta(&self, t: &Value) -> TensorMeta {
        // A foreign value has no meta here; an empty one makes the next op
        // fail its checks, and `push_op` reports the foreign value.
        self.program
            .values
            .get(t.index())
            .cloned()
            .unwrap_or_else(|| TensorMeta::new(crate::DType::I64, crate::Shape::scalar()))
    }

    fn apply(&mut self, op: Op, inputs: &[&Value]) -> Result<Applied<Value>> {
        let ids: heapless::Vec<ValueId, MAX_INPUTS> = inputs.iter().map(|v| **v).collect();
        if ids.len() != inputs.len() {
            return Err(crate::Error::Arity {
                op: op.name(),
                expected: op.input_names().len(),
                got: inputs.len(),
            });
        }
        Ok(self.program.push_op(op, &ids, self.origin)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::Builder;
    use crate::prim::UnaryOp;
    use crate::{DType, Ops, Shape, TensorMeta};
    use std::string::ToString;

    /// Without `alloc` a full program names the capacity to raise; with it,
    /// the program grows.
    #[test]
    fn a_full_program_says_which_capacity_to_raise() {
        let mut b = Builder::<2, 16>::with_capacity();
        let a = b.param(TensorMeta::new(DType::F64, Shape::new(&[3, 3]).unwrap())).unwrap();
        let x = b.unary(UnaryOp::Neg, &a).unwrap();
        let y = b.unary(UnaryOp::Neg, &x).unwrap();
        let third = b.unary(UnaryOp::Neg, &y);
        if cfg!(feature = "alloc") {
            assert!(third.is_ok());
        } else {
            let err = third.unwrap_err().to_string();
            assert_eq!(err, "program instructions: capacity 2 exceeded (raise the const capacity parameter)");
        }
    }
}
