//! Programs: straight-line sequences of ops over values with static dtypes
//! and shapes. A [`Builder`] records one through the ordinary face methods
//! (it is a [`Face`](crate::Face)); [`passes`] drop dead code and prune ops
//! to the outputs that are used; [`Program::eval`] replays a program on any
//! face, and [`Compiled`] runs it on a provider with every buffer taken from
//! the caller's [`Allocator`](crate::Allocator) and given back after its
//! last use.
//!
//! Storage is a [`Seq`]: with the `alloc` feature it grows
//! as needed; without it, it holds at most `I` instructions and `V` values
//! (the const parameters, which the default types fill in), so building and
//! running a program never needs a global heap on firmware.

mod builder;
mod eval;
mod fuse;
mod interp;
pub mod passes;
mod peak;

pub use builder::{Builder, Value};
pub use interp::{Compiled, Results};
pub use peak::Live;

use crate::error::{Error, Origin, Result};
use crate::op::{MAX_INPUTS, MAX_OUTPUTS};
use crate::provider::Op;
use crate::seq::Seq;
use crate::tensor::TensorMeta;

/// Most parameters or results a program has without the `alloc` feature
/// (with it, any number).
pub const MAX_PARAMS: usize = 16;

/// Default instruction capacity without the `alloc` feature.
pub const DEFAULT_INSTRS: usize = 256;
/// Default value capacity without the `alloc` feature.
pub const DEFAULT_VALUES: usize = 640;

/// A value of a program (its index in the value table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId(pub(crate) u32);

impl ValueId {
    /// The index in the value table.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One op applied to values.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    /// The op.
    pub op: Op,
    /// Its inputs, in the op's order.
    pub inputs: heapless::Vec<ValueId, MAX_INPUTS>,
    /// Its outputs, in the op's order (`None`: switched off or unused).
    pub outputs: heapless::Vec<Option<ValueId>, MAX_OUTPUTS>,
    /// The op whose derivative rule emitted it (`None` for an op traced
    /// as written): its value errors at run time name that op.
    pub(crate) origin: Option<Origin>,
}

impl Instr {
    /// `e`, raised by this instruction, as its origin's error
    /// ([`Error::in_rule_of`]).
    pub(crate) fn as_origin_error(&self, e: Error) -> Error {
        match self.origin {
            Some(origin) => e.in_rule_of(origin),
            None => e,
        }
    }
}

/// A straight-line program. Values `0..params.len()` need not be the
/// parameters; [`Program::params`] lists them.
#[derive(Clone, Debug)]
pub struct Program<const I: usize = DEFAULT_INSTRS, const V: usize = DEFAULT_VALUES> {
    pub(crate) values: Seq<TensorMeta, V>,
    pub(crate) instrs: Seq<Instr, I>,
    pub(crate) params: Seq<ValueId, MAX_PARAMS>,
    pub(crate) results: Seq<ValueId, MAX_PARAMS>,
}

impl<const I: usize, const V: usize> Default for Program<I, V> {
    fn default() -> Self {
        Program { values: Seq::new(), instrs: Seq::new(), params: Seq::new(), results: Seq::new() }
    }
}

impl<const I: usize, const V: usize> Program<I, V> {
    /// The instructions, in execution order.
    pub fn instrs(&self) -> &[Instr] {
        &self.instrs
    }

    /// The parameters, in call order.
    pub fn params(&self) -> &[ValueId] {
        &self.params
    }

    /// The results, in order.
    pub fn results(&self) -> &[ValueId] {
        &self.results
    }

    /// Dtype and shape of a value.
    ///
    /// # Errors
    /// [`Error::Program`] for a value of another program.
    pub fn meta(&self, v: ValueId) -> Result<&TensorMeta> {
        self.values.get(v.index()).ok_or(Error::Program { why: "a value does not belong to this program" })
    }

    /// A new value of this dtype and shape.
    pub(crate) fn push_value(&mut self, meta: TensorMeta) -> Result<ValueId> {
        let id = ValueId(
            u32::try_from(self.values.len())
                .map_err(|_| Error::Capacity { what: "program values", capacity: u32::MAX as usize })?,
        );
        self.values.push(meta, "program values")?;
        Ok(id)
    }

    /// A new parameter.
    pub(crate) fn push_param(&mut self, meta: TensorMeta) -> Result<ValueId> {
        let id = self.push_value(meta)?;
        self.params.push(id, "program parameters")?;
        Ok(id)
    }

    /// Appends `op` on `inputs` after checking it (shapes and dtypes), and
    /// returns its output values.
    ///
    /// # Errors
    /// The op's typed errors; capacity.
    pub(crate) fn push_op(
        &mut self,
        op: Op,
        inputs: &[ValueId],
        origin: Option<Origin>,
    ) -> Result<heapless::Vec<Option<ValueId>, MAX_OUTPUTS>> {
        let outs = {
            let mut metas = heapless::Vec::<&TensorMeta, MAX_INPUTS>::new();
            for &v in inputs {
                metas.push(self.meta(v)?).map_err(|_| Error::Arity {
                    op: op.name(),
                    expected: op.input_names().len(),
                    got: inputs.len(),
                })?;
            }
            op.infer(&metas)?
        };
        self.instrs.reserve(1, "program instructions")?;
        let mut ids = heapless::Vec::new();
        for meta in outs {
            let id = match meta {
                Some(m) => Some(self.push_value(m)?),
                None => None,
            };
            let _ = ids.push(id); // ≤ MAX_OUTPUTS, as the op's outputs
        }
        let instr = Instr { op, inputs: inputs.iter().copied().collect(), outputs: ids.clone(), origin };
        self.instrs.push(instr, "program instructions")?;
        Ok(ids)
    }

    /// Marks `values` as the results.
    pub(crate) fn set_results(&mut self, values: &[ValueId]) -> Result<()> {
        for &v in values {
            self.meta(v)?;
        }
        let mut results = Seq::new();
        for &v in values {
            results.push(v, "program results")?;
        }
        self.results = results;
        Ok(())
    }
}
