//! [`Builder`]: the traced face. Every face method records an instruction
//! instead of running it, with the op's shape and dtype checks applied at
//! once; [`Builder::finish`] returns the [`Program`].

use super::{Program, ValueId};
use crate::error::Result;
use crate::face::{Applied, Face};
use crate::op::MAX_INPUTS;
use crate::provider::Op;
use crate::tensor::TensorMeta;

/// A value being traced: its id in the builder's program.
pub type Value = ValueId;

/// Records a program through the [`Face`] methods.
///
/// ```
/// use lindiff_core::ir::Builder;
/// use lindiff_core::{DType, Linalg, Shape, TensorMeta};
/// let mut b: Builder = Builder::new();
/// let a = b.param(TensorMeta::new(DType::F64, Shape::new(&[4, 3]).unwrap())).unwrap();
/// let s = b.svd_vals(&a).unwrap();
/// let program = b.finish(&[&s]).unwrap();
/// assert_eq!(program.instrs().len(), 1);
/// assert_eq!(program.meta(s).unwrap().shape.dims(), &[3]);
/// // Shape errors surface while tracing, naming the op:
/// let mut b: Builder = Builder::new();
/// let a = b.param(TensorMeta::new(DType::F64, Shape::new(&[4, 3]).unwrap())).unwrap();
/// assert_eq!(b.det(&a).unwrap_err().to_string(), "det: argument `a` must be square, got 4×3");
/// ```
#[derive(Clone, Debug, Default)]
pub struct Builder<const I: usize = { super::DEFAULT_INSTRS }, const V: usize = { super::DEFAULT_VALUES }> {
    program: Program<I, V>,
}

impl<const I: usize, const V: usize> Builder<I, V> {
    /// An empty program.
    pub fn new() -> Self {
        Builder { program: Program::default() }
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
        let ids: heapless::Vec<ValueId, { super::MAX_PARAMS }> = results.iter().map(|v| **v).collect();
        self.program.set_results(&ids)?;
        Ok(self.program)
    }

    /// Continues building on `program` (its results are dropped).
    pub fn from_program(program: Program<I, V>) -> Self {
        Builder { program }
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
        Ok(self.program.push_op(op, &ids)?.into_iter().collect())
    }
}
