//! [`CompletionCheck`]: a full SVD's completion columns (u's beyond
//! min(m, n) when m > n, vh's rows beyond it when n > m) are an arbitrary
//! basis of a null space with no derivative. Reverse mode differentiates
//! the thin part and passes the completion block's cotangent through this
//! check first: zero is accepted, anything else is
//! `Error::NotDifferentiable` naming the block.

use crate::error::Result;
use crate::op::check::{float_matrix, out, outputs};
use crate::op::{OpSpec, Outputs};
use crate::tensor::TensorMeta;

/// Which completion block a [`CompletionCheck`] holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Completion {
    /// The columns of `u` beyond min(m, n).
    #[default]
    U,
    /// The rows of `vh` beyond min(m, n).
    Vh,
}

impl Completion {
    /// The output named in the error.
    pub fn output(self) -> &'static str {
        match self {
            Completion::U => "u",
            Completion::Vh => "vh",
        }
    }

    /// Why the error is raised.
    pub fn why(self) -> &'static str {
        match self {
            Completion::U => {
                "the loss reads its completion columns (beyond min(m, n)), an arbitrary basis of the \
                 left null space; only the thin part u[:, :min(m, n)] is differentiable"
            }
            Completion::Vh => {
                "the loss reads its completion rows (beyond min(m, n)), an arbitrary basis of the \
                 null space; only the thin part vh[:min(m, n), :] is differentiable"
            }
        }
    }
}

/// `g` (the completion block's cotangent) → `g`, or
/// `Error::NotDifferentiable { op: "svd_full", .. }` when any entry is
/// nonzero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CompletionCheck(pub Completion);

impl CompletionCheck {
    /// The op's name as used in messages.
    pub const NAME: &'static str = "completion_check";
    /// Input names, in order.
    pub const INPUTS: &'static [&'static str] = &["g"];
    /// Output names, in order.
    pub const OUTPUTS: &'static [&'static str] = &["g"];
}

impl OpSpec for CompletionCheck {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = CompletionCheck::NAME;
        let g = float_matrix(OP, "g", inputs[0])?;
        Ok(outputs([Some(out(OP, "g", g.dtype, &[g.rows, g.cols], g.batch)?)]))
    }
}
