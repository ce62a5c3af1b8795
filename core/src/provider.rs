//! The provider contract: `workspace` says what a call needs, `run_into`
//! writes the outputs into caller memory and takes every scratch region from
//! the workspace. A provider carries its [`Exec`], so both see the same plan.
//!
//! Call providers through [`crate::call`], which runs every shape, dtype and
//! buffer check first: a provider never re-implements a check.

use crate::error::Result;
use crate::exec::Exec;
use crate::memory::Memory;
use crate::op::internal::InternalOp;
use crate::op::LinalgOp;
use crate::prim::PrimOp;
use crate::tensor::{TensorDesc, TensorMeta};
use crate::workspace::WorkspaceReq;

/// Anything a provider runs. Providers match it (and [`LinalgOp`],
/// [`PrimOp`], [`InternalOp`]) without wildcard arms, so a new op does not
/// compile until every provider says how it runs it (or that it does not).
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A linear-algebra op.
    Linalg(LinalgOp),
    /// An array primitive.
    Prim(PrimOp),
    /// An op only reverse mode records (the gauge checks).
    Internal(InternalOp),
}

/// `From` each op of the op table into [`Op::Linalg`] (the table's
/// callback form, as in `op/table.rs`).
macro_rules! linalg_into_op {
    ($(
        $(#[$doc:meta])*
        $V:ident {
            name: $name:literal, family: $family:literal, dtypes: $dtypes:tt,
            inputs: $inputs:tt, outputs: $outputs:tt, rule: $rule:ident,
            support: |$op:ident| $support:expr,
            methods: $methods:tt,
        }
    )*) => {
        $(
            impl From<crate::op::$V> for Op {
                fn from(op: crate::op::$V) -> Op {
                    Op::Linalg(LinalgOp::$V(op))
                }
            }
        )*
    };
}
crate::op::op_table!(linalg_into_op);

/// `From` each internal op into [`Op::Internal`].
macro_rules! internal_into_op {
    ($($(#[$doc:meta])* $V:ident,)*) => {
        $(
            impl From<crate::op::internal::$V> for Op {
                fn from(op: crate::op::internal::$V) -> Op {
                    Op::Internal(InternalOp::$V(op))
                }
            }
        )*
    };
}
crate::op::internal::internal_table!(internal_into_op);

impl Op {
    /// Whether the op is a check of reverse mode (an internal op): an
    /// assertion that program passes never remove. Forward mode's
    /// [`TangentTieCheck`](crate::op::internal::TangentTieCheck) is not one:
    /// it guards the tangent it passes through, so it goes when nothing
    /// reads that tangent (a forward-mode loss of the values alone).
    pub fn is_check(&self) -> bool {
        matches!(self, Op::Internal(i) if !matches!(i, crate::op::internal::InternalOp::TangentTieCheck(_)))
    }

    /// The op's name as used in messages.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Linalg(op) => op.name(),
            Op::Prim(op) => op.name(),
            Op::Internal(op) => op.name(),
        }
    }

    /// Input names, in order.
    pub fn input_names(&self) -> &'static [&'static str] {
        match self {
            Op::Linalg(op) => op.input_names(),
            Op::Prim(op) => op.input_names(),
            Op::Internal(op) => op.input_names(),
        }
    }

    /// The op as the origin of a derivative rule's instructions
    /// ([`Error::in_rule_of`](crate::Error)).
    pub(crate) fn origin(&self) -> crate::error::Origin {
        crate::error::Origin::new(self.name(), self.input_names())
    }

    /// Output names, in order.
    pub fn output_names(&self) -> &'static [&'static str] {
        match self {
            Op::Linalg(op) => op.output_names(),
            Op::Prim(op) => op.output_names(),
            Op::Internal(op) => op.output_names(),
        }
    }

    /// Output dtypes and shapes (see [`LinalgOp::infer`]).
    ///
    /// # Errors
    /// The op's typed shape/dtype error.
    pub fn infer(&self, inputs: &[&TensorMeta]) -> Result<crate::op::Outputs> {
        match self {
            Op::Linalg(op) => op.infer(inputs),
            Op::Prim(op) => op.infer(inputs),
            Op::Internal(op) => op.infer(inputs),
        }
    }
}

impl From<PrimOp> for Op {
    fn from(op: PrimOp) -> Op {
        Op::Prim(op)
    }
}

impl From<LinalgOp> for Op {
    fn from(op: LinalgOp) -> Op {
        Op::Linalg(op)
    }
}

/// An input: its layout and a read-only view of its memory.
pub struct Input<'a, M: Memory> {
    /// Dtype, shape, strides and offset.
    pub desc: &'a TensorDesc,
    /// The data.
    pub data: M::Data<'a>,
}

impl<M: Memory> Clone for Input<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<M: Memory> Copy for Input<'_, M> {}

/// An output slot: what it will hold and the buffer to write it into
/// (contiguous, column-major, uninitialised on entry).
pub struct Output<'a, 'm, M: Memory> {
    /// Dtype and shape to write.
    pub meta: &'a TensorMeta,
    /// Where to write it.
    pub buffer: &'a mut M::Buffer<'m>,
}

/// A backend that runs ops in one memory space.
///
/// Implementations may assume the checks of [`crate::call`] have passed:
/// input arity, shapes, dtypes, strides within their buffers, every output
/// buffer present and large enough, and a workspace of at least
/// `workspace(op, inputs)` bytes at its alignment. On `Ok`, every present
/// output has been fully written. Failures in a batch report the
/// lowest-indexed failing matrix.
pub trait Provider {
    /// The memory space of this provider's buffers.
    type Memory: Memory;

    /// Short name for messages (`"cpu"`, `"blas"`, `"cuda"`).
    fn name(&self) -> &'static str;

    /// The execution token both calls use.
    fn exec(&self) -> Exec;

    /// Workspace bytes `run_into` will need for `op` on these inputs.
    ///
    /// A function of `op` and the layouts alone, for this provider's
    /// [`name`](Provider::name) and [`exec`](Provider::exec):
    /// [`call::prepare`](crate::call::prepare) and the direct face compute it
    /// once per (op, layouts) and reuse it, and
    /// [`call::run_prepared`](crate::call::run_prepared) runs a plan only on
    /// a provider with the name and exec it was prepared on.
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) for an op or dtype
    /// the provider does not implement.
    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq>;

    /// Runs `op`, writing each present output into its buffer and taking all
    /// scratch from `workspace`. Call it through [`crate::call::run_into`].
    ///
    /// # Errors
    /// Numerical failures ([`Error::NotPositiveDefinite`](crate::Error),
    /// [`Error::NonConvergence`](crate::Error), …) and
    /// [`Error::Unsupported`](crate::Error::Unsupported).
    ///
    /// After an `Err`, the output buffers and the workspace hold
    /// unspecified values (possibly partial results, as LAPACK's); the
    /// inputs are never modified, on `Ok` or `Err` (an implementation
    /// whose kernel works in place copies the input into an output or the
    /// workspace first). Callers read no output of a failed call.
    ///
    /// # Safety
    /// The arguments must have passed the checks of [`crate::call::run_into`]
    /// (shapes, dtypes, every input view inside its data and aligned, output
    /// buffers present, aligned and large enough, the workspace at least
    /// `workspace(op, inputs)`): implementations build raw views from them.
    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Self::Memory>],
        outputs: &mut [Option<Output<'_, 'm, Self::Memory>>],
        workspace: &mut <Self::Memory as Memory>::Buffer<'m>,
    ) -> Result<()>;
}
