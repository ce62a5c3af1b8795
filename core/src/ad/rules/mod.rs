//! JVP (linearize) rules, one file per op family. Each rule maps input
//! tangents to output tangents through a [`Cx`]: nonlinear work on primal
//! values through `cx.primal()`, tangent work through [`Lin`].
//! Reverse mode transposes what the rule recorded (`ad::transpose`), so no
//! op has a hand-written VJP.
//!
//! Conventions (see `docs/ad-rules.md` and the op docs): the real inner product
//! ⟨X, Y⟩ = Re tr(XᴴY); complex gradients G = ∂L/∂Re A + i ∂L/∂Im A;
//! tangents match the gauge the forward returns.

mod cholesky;
mod det;
mod eig;
mod eigh;
mod matfun;
pub(crate) use matfun::frechet_of;
mod full_piv_lu;
mod funm;
mod householder;
mod internal;
mod lu;
mod prim;
mod qr;
mod recombine;
mod svd;
mod svd_truncated;
pub(crate) use svd_truncated::kept_mask;
mod triangular_solve;

use super::cx::{Cx, Tangent};
use super::linear::{p, t};
use super::Lin;
use crate::error::{Error, Result};
use crate::op::internal::{InternalOp, TangentTieCheck};
use crate::op::{LinalgOp, MAX_OUTPUTS};

use crate::provider::Op;

/// One tangent per output of an op.
pub type Tangents<T> = heapless::Vec<Tangent<T>, MAX_OUTPUTS>;

/// The primal side of one application of an op: its inputs and the outputs
/// it produced (`None` where the op's options switched an output off).
pub struct Primals<'a, P> {
    /// The inputs, in the op's order.
    pub inputs: &'a [&'a P],
    /// The outputs, in the op's order.
    pub outputs: &'a [Option<P>],
    /// Which outputs' tangents the caller reads, in the op's order; empty:
    /// all of them. A rule may answer `Tangent::Zero` for the others and
    /// skip their work (reverse mode reads only the outputs with a nonzero
    /// cotangent: an SVD whose loss reads s alone needs no coupling
    /// matrices).
    pub read: &'a [bool],
}

impl<'a, P> Primals<'a, P> {
    /// The primal side of an op whose every output tangent is read.
    pub fn new(inputs: &'a [&'a P], outputs: &'a [Option<P>]) -> Self {
        Primals { inputs, outputs, read: &[] }
    }

    /// Whether the caller reads output `i`'s tangent ([`Primals::read`]).
    pub fn reads(&self, i: usize) -> bool {
        self.read.is_empty() || self.read.get(i).copied().unwrap_or(false)
    }

    /// Input `i`.
    pub fn input(&self, i: usize) -> &P {
        self.inputs[i]
    }

    /// Output `i`, which the rule needs and the op must have produced.
    ///
    /// # Errors
    /// [`Error::UnsupportedDerivative`] naming the output when the op's
    /// options switched it off.
    pub fn output(&self, op: &Op, i: usize) -> Result<&P> {
        self.outputs.get(i).and_then(Option::as_ref).ok_or(Error::UnsupportedDerivative {
            op: op.name(),
            output: op.output_names().get(i).copied().unwrap_or("?"),
        })
    }
}

/// `$rule` when lindiff-core's cargo feature `$feature` (the [`Family`] of
/// the linalg op `$l`) is on; otherwise every output of `$op` is undefined
/// with [`Error::Unsupported`] naming the op and the feature (a program
/// cannot hold such an op — its shapes are unsupported too — but a rule is
/// never assumed). The literal `cfg!` keeps the rule compiled and
/// type-checked in every build but unreachable where the family is off, so
/// the linker drops it; debug builds check that it names `$l`'s family.
///
/// [`Family`]: crate::op::Family
macro_rules! gated {
    ($feature:literal, $op:expr, $l:expr, $rule:expr) => {{
        debug_assert_eq!($l.family().feature, $feature);
        if cfg!(feature = $feature) {
            $rule
        } else {
            Ok(left_out($op, $l.family().why))
        }
    }};
}

/// Whether this build differentiates the ops only gradients record (the
/// spectral helpers and the checks): with `alloc`. Firmware, without a
/// heap, takes first derivatives only and leaves their rules out of its
/// flash.
pub(crate) const SECOND_ORDER: bool = cfg!(feature = "alloc");

/// Why an op only gradients record has no rule in this build.
pub(crate) const NO_SECOND_ORDER: &str =
    "second derivatives need lindiff-core's `alloc` feature (a no-heap build takes first derivatives only)";

/// Every output of `op` undefined because the rules of its family are not
/// in this build (`why` says which feature builds them).
pub(crate) fn left_out<T>(op: &Op, why: &'static str) -> Tangents<T> {
    all_undefined(op, |_| Error::Unsupported { op: op.name(), provider: "lindiff-core", why })
}

/// Output tangents of `op` given its primals and input tangents.
///
/// All-zero input tangents give all-zero output tangents without running the
/// rule. An op without a rule gives [`Tangent::Undefined`] outputs (an error
/// only when a derivative depends on them), never zeros; so does an op whose
/// family's cargo feature (`op-svd`, `op-lu`, …) is off, with
/// [`Error::Unsupported`] naming the op and the feature.
///
/// # Errors
/// The errors of the ops the rule records.
pub fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    primals: &Primals<'_, C::P>,
    tangents: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let count = op.output_names().len();
    if tangents.iter().all(Tangent::is_zero) {
        return Ok((0..count).map(|_| Tangent::Zero).collect());
    }
    match op {
        Op::Prim(p) => prim::jvp(cx, op, p, primals, tangents),
        Op::Linalg(l) => linalg_jvp(cx, op, l, primals, tangents),
        Op::Internal(_) if !SECOND_ORDER => Ok(left_out(op, NO_SECOND_ORDER)),
        Op::Internal(i) => Ok(internal::jvp(op, i, primals, tangents)),
    }
}

/// The rule of each linear-algebra op, as the op table (`op/table.rs`)
/// names it, behind its family's feature.
macro_rules! linalg_rules {
    ($(
        $(#[$doc:meta])*
        $V:ident {
            name: $name:literal, family: $family:literal, dtypes: $dtypes:tt,
            inputs: $inputs:tt, outputs: $outputs:tt, rule: $rule:ident,
            support: |$op:ident| $support:expr,
            methods: $methods:tt,
        }
    )*) => {
        /// Output tangents of the linear-algebra op `l` (`op` is `Op::Linalg(l)`).
        fn linalg_jvp<C: Cx + ?Sized>(
            cx: &mut C,
            op: &Op,
            l: &LinalgOp,
            primals: &Primals<'_, C::P>,
            tangents: &[Tangent<C::T>],
        ) -> Result<Tangents<C::T>> {
            match l {
                $( LinalgOp::$V(_) => gated!($family, op, l, $rule::jvp(cx, op, l, primals, tangents)), )*
            }
        }
    };
}

crate::op::op_table!(linalg_rules);

/// `c` through forward mode's `check`: the coupling a spectral rule
/// multiplies (in the check's part) by the pair inverse of `x`, undefined
/// (an error where it is read) when that part is not zero at a pair the
/// cutoff cuts.
///
/// # Errors
/// As [`Cx::linear`].
pub(crate) fn tie_checked<C: Cx + ?Sized>(
    cx: &mut C,
    check: TangentTieCheck,
    x: &C::P,
    c: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    cx.lin(Op::Internal(InternalOp::TangentTieCheck(check)), &[p(x), t(c)])
}

/// Every output of `op` undefined with the same error.
pub(crate) fn all_undefined<T>(op: &Op, error: impl Fn(&'static str) -> Error) -> Tangents<T> {
    op.output_names().iter().map(|&name| Tangent::Undefined(error(name))).collect()
}

/// Every output of `op` marked "derivative not implemented".
pub(crate) fn unsupported<T>(op: &Op) -> Tangents<T> {
    let name = op.name();
    all_undefined(op, |output| Error::UnsupportedDerivative { op: name, output })
}

/// Every output undefined when a factor input moves while `a` does not.
/// The factors are data that `a` determines, and the rules follow `a`'s
/// tangent in their place (wherever the factors come from the factors op,
/// `a` moves whenever they do). Factors that move on their own — a caller
/// differentiating them as inputs of their own — have no rule.
pub(crate) fn factors_alone<T>(op: &Op, a: &Tangent<T>, factors: &[Tangent<T>]) -> Option<Tangents<T>> {
    (a.is_zero() && factors.iter().any(|t| matches!(t, Tangent::Value(_)))).then(|| unsupported(op))
}

/// The tangent of an integer output (permutations, ranks): undefined.
pub(crate) fn integer_output<T>(op: &Op, output: &'static str) -> Tangent<T> {
    Tangent::Undefined(Error::NotDifferentiable { op: op.name(), output, why: "it is integer-valued" })
}

/// Collects output tangents in order.
pub(crate) fn tangents<T, const N: usize>(outs: [Tangent<T>; N]) -> Tangents<T> {
    outs.into_iter().collect()
}

#[cfg(test)]
mod family_tests;
