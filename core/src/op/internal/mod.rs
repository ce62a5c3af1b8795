//! Internal ops: what reverse mode records and every provider runs, but no
//! user calls — the checks that let reverse mode report instead of guess.
//! They are not in [`LinalgOp`](super::LinalgOp): no face method; their
//! derivative passes the checked values through (second order sees them
//! as identities).
//!
//! * [`SvdGaugeCheck`], [`EighGaugeCheck`], [`EigGaugeCheck`] (`gauge.rs`):
//!   the output cotangents of a spectral op before its rule is
//!   transposed;
//! * [`ValuesCheck`] (`values.rs`): the cotangent of a spectral op's values
//!   when its vectors have none (the values' rule divides by no gap);
//! * [`TieCheck`] (`tie.rs`): the input cotangent after it, against the
//!   error bound the gauge check found;
//! * [`CompletionCheck`] (`completion.rs`): the cotangent of a full SVD's
//!   completion columns, which must be zero;
//! * [`TangentTieCheck`] (`tangent_tie.rs`), forward mode's: the tangent
//!   coupling of a spectral op's rule at its tied pairs, which must be zero;
//! * [`Chain`] (`chain.rs`), not a check: elementwise steps that a compiled
//!   plan runs as one pass. No face records it and it has no derivative.

mod chain;
mod completion;
mod gauge;
mod tangent_tie;
mod tie;
mod values;

pub use chain::{Chain, Link, LinkOp, Operand, MAX_LINKS, MAX_SCALES};
pub use completion::{Completion, CompletionCheck};
pub use gauge::{why, EigGaugeCheck, EighGaugeCheck, GaugeOf, SvdGaugeCheck, Values};
pub use tangent_tie::{Cut, Part, TangentTieCheck};
pub use tie::TieCheck;
pub use values::ValuesCheck;

use super::check::out;
use super::{OpSpec, Outputs};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::TensorMeta;

/// Why a gauge check's `bound` has no derivative.
pub const BOUND_WHY: &str = "it is an error estimate (a maximum over pairs), not a value of the loss";

/// Entries of a gauge check's `bound`: the estimated error of ∂L/∂A, the
/// gradient's natural scale, the worst pair (i, j) and its gap.
pub const BOUND_LEN: usize = 5;

/// The `bound` output of a gauge check: `[BOUND_LEN, batch…]` reals of
/// `dtype`'s precision.
fn bound_meta(op: &'static str, dtype: DType, batch: &[usize]) -> Result<TensorMeta> {
    out(op, "bound", dtype.real(), &[BOUND_LEN], batch)
}

/// Declares [`InternalOp`] and its accessors over the payload types.
macro_rules! internal_ops {
    ($($(#[$doc:meta])* $V:ident,)*) => {
        /// Every internal op.
        #[derive(Clone, Debug, PartialEq)]
        pub enum InternalOp {
            $( $(#[$doc])* $V($V), )*
        }

        impl InternalOp {
            /// The op's name as used in messages.
            pub fn name(&self) -> &'static str {
                match self { $( InternalOp::$V(_) => $V::NAME, )* }
            }

            /// Input names, in order.
            pub fn input_names(&self) -> &'static [&'static str] {
                match self { $( InternalOp::$V(op) => op.input_names(), )* }
            }

            /// Output names, in order.
            pub fn output_names(&self) -> &'static [&'static str] {
                match self { $( InternalOp::$V(_) => $V::OUTPUTS, )* }
            }

            /// Output dtypes and shapes for these inputs.
            ///
            /// # Errors
            /// [`Error::Arity`] for a wrong input count; the op's typed
            /// shape/dtype error.
            pub fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
                let expected = self.input_names().len();
                if inputs.len() != expected {
                    return Err(Error::Arity { op: self.name(), expected, got: inputs.len() });
                }
                match self { $( InternalOp::$V(op) => op.infer(inputs), )* }
            }
        }

    };
}

/// The internal ops, each with its doc, for a macro `$cb` to expand
/// (`InternalOp` here, the conversions into `provider::Op` there).
macro_rules! internal_table {
    ($cb:ident) => {
        $cb! {
            /// Reverse mode's check of SVD cotangents: `u`, `s`, `vh`, `gu`, `gs`,
            /// `gvh` → `gu`, `gs`, `gvh`, `bound`.
            SvdGaugeCheck,
            /// Reverse mode's check of eigh cotangents: `v`, `w`, `gw`, `gv` → `gw`,
            /// `gv`, `bound`.
            EighGaugeCheck,
            /// Reverse mode's check of eig cotangents: `v`, `w`, `gw`, `gv` → `gw`,
            /// `gv`, `bound`.
            EigGaugeCheck,
            /// Reverse mode's check of a spectral op's values cotangent when
            /// its vectors have none: `x`, `g` → `g`.
            ValuesCheck,
            /// The input cotangent of a spectral op against its error bound:
            /// `ga`, `bound` → `ga`.
            TieCheck,
            /// A full SVD's completion cotangent, which must be zero: `g` → `g`.
            CompletionCheck,
            /// Forward mode's check of a spectral rule's coupling at its tied
            /// pairs: `x`, `c` → `c`.
            TangentTieCheck,
            /// Elementwise steps run as one pass by a compiled plan: `x0`, …
            /// → `y`.
            Chain,
        }
    };
}
pub(crate) use internal_table;

internal_table!(internal_ops);

/// The input names of the ops with a fixed arity (a [`Chain`]'s depend on
/// the chain).
macro_rules! fixed_inputs {
    ($($V:ident),*) => {
        $(
            impl $V {
                /// Input names, in order.
                pub fn input_names(&self) -> &'static [&'static str] {
                    Self::INPUTS
                }
            }
        )*
    };
}
fixed_inputs!(
    SvdGaugeCheck,
    EighGaugeCheck,
    EigGaugeCheck,
    ValuesCheck,
    TieCheck,
    CompletionCheck,
    TangentTieCheck
);
