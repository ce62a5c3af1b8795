//! Which derivatives exist: a runtime query, per op and output, of what the
//! rules in [`rules`](super::rules) give — supported (with the conditions
//! under which the tangent is finite and exact), not differentiable (the
//! mathematics has no derivative there: integer outputs, pivot choices,
//! gauge-dependent completions), or not implemented yet.
//!
//! The table is derived from the rules by hand and kept next to them: every
//! match here names every variant (no wildcard), so a new op or primitive
//! does not compile until it has an entry. Where a rule's answer depends on
//! the op's options (`SvdOptions::vectors`, `QrMode`, a derivative ε) the
//! entry does too; where it depends on the shapes of the inputs (a full SVD
//! or a complete QR of a tall matrix), which options alone do not know, the
//! output is [`Support::Supported`] with a caveat naming the condition under
//! which asking for the derivative is an error.
//!
//! Asking for a derivative that is not [`Support::Supported`] is always an
//! error naming op and output ([`Error::NotDifferentiable`] or
//! [`Error::UnsupportedDerivative`]), never a zero gradient.
//!
//! [`Error::NotDifferentiable`]: crate::Error::NotDifferentiable
//! [`Error::UnsupportedDerivative`]: crate::Error::UnsupportedDerivative

use super::rules::{NO_SECOND_ORDER, SECOND_ORDER};
use crate::dtype::DType;
use crate::op::internal::{InternalOp, BOUND_WHY};
use crate::op::{
    FunmHermitian, FunmHermitianFactors, FunmHermitianFrechet, LinalgOp, MatrixFunction, QrMode, Svd,
    SvdFull, SvdOptions, SvdVectors, Triangle, MAX_OUTPUTS, NO_SECOND_DERIVATIVE,
};
use crate::prim::{
    Adjoint, Binary, BinaryOp, DiagEmbed, DiagPart, ExtremeMask, Eye, Fill, Matmul, Pad, Pair, PairInv,
    PivotPhase, PrimOp, RankMask, Reduce, ReduceOp, Regularize, Reshape, Scale, ScaleCols, ScaleRows, Slice,
    Spread, TriMask, Unary, UnaryOp,
};
use crate::provider::Op;
use crate::shape::Shape;
use crate::tensor::TensorMeta;

/// Whether one output of one op has a derivative.
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let s = Support::Supported { caveat: None };
/// assert!(s.is_supported());
/// assert_eq!(s.to_string(), "supported");
/// let s = Support::NotDifferentiable { why: "it is integer-valued" };
/// assert_eq!(s.to_string(), "not differentiable: it is integer-valued");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Support {
    /// The rule gives this output's derivative.
    Supported {
        /// Where the derivative is not finite or not exact, or which
        /// input shapes make it an error; `None` when it holds everywhere.
        caveat: Option<&'static str>,
    },
    /// The output has no derivative (integer-valued, discontinuous, or a
    /// gauge choice); asking for one is [`Error::NotDifferentiable`]
    /// with this `why`.
    ///
    /// [`Error::NotDifferentiable`]: crate::Error::NotDifferentiable
    NotDifferentiable {
        /// Why, as the error states it.
        why: &'static str,
    },
    /// The derivative exists mathematically but no rule computes it yet;
    /// asking for one is [`Error::UnsupportedDerivative`].
    ///
    /// [`Error::UnsupportedDerivative`]: crate::Error::UnsupportedDerivative
    Unsupported {
        /// Why, or what is planned.
        why: &'static str,
    },
}

impl Support {
    /// `true` for [`Support::Supported`].
    pub const fn is_supported(&self) -> bool {
        matches!(self, Support::Supported { .. })
    }

    /// The caveat of a supported output, the reason otherwise.
    pub const fn note(&self) -> Option<&'static str> {
        match *self {
            Support::Supported { caveat } => caveat,
            Support::NotDifferentiable { why } | Support::Unsupported { why } => Some(why),
        }
    }
}

impl core::fmt::Display for Support {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Support::Supported { caveat: None } => f.write_str("supported"),
            Support::Supported { caveat: Some(c) } => write!(f, "supported; caveat: {c}"),
            Support::NotDifferentiable { why } => write!(f, "not differentiable: {why}"),
            Support::Unsupported { why } => write!(f, "unsupported: {why}"),
        }
    }
}

/// The support of each output of `op`, in the op's output order, named as
/// in [`Op::output_names`]. Depends on the op's options where the rules do;
/// conditions on input shapes or values are stated in the caveats.
///
/// An op whose family's cargo feature (`op-svd`, `op-lu`, …) is off in
/// this build has every output [`Support::Unsupported`].
///
/// A gradient (or tangent) that depends on an output not marked
/// [`Support::Supported`] is an error naming op and output, never a zero;
/// so is a supported output under the shape condition its caveat names
/// (e.g. `u` of a full SVD of a tall matrix).
///
/// ```
/// use lindiff_cpu::prelude::*;
/// use op::{RankRevealingQr, Svd};
///
/// let svd = ad_support(&Op::Linalg(LinalgOp::Svd(Svd::default())));
/// let names: Vec<&str> = svd.iter().map(|(name, _)| *name).collect();
/// assert_eq!(names, ["u", "s", "vh"]);
/// assert!(svd.iter().all(|(_, s)| s.is_supported()));
///
/// // An SVD asked for U only has no Vᴴ to differentiate.
/// let left = Svd(SvdOptions::default().vectors(SvdVectors::Left));
/// let left = ad_support(&Op::Linalg(LinalgOp::Svd(left)));
/// assert!(!left[2].1.is_supported());
///
/// // Pivots and ranks are not differentiable.
/// let rrqr = ad_support(&Op::Linalg(LinalgOp::RankRevealingQr(RankRevealingQr::default())));
/// assert_eq!(rrqr[3], ("rank", Support::NotDifferentiable { why: "it is integer-valued" }));
/// assert!(rrqr.iter().all(|(_, s)| !s.is_supported()));
/// ```
pub fn ad_support(op: &Op) -> heapless::Vec<(&'static str, Support), MAX_OUTPUTS> {
    let supports = match op {
        Op::Linalg(l) => match l.family() {
            // lindiff-core's feature of the op's family is off: no rules.
            f if !f.built => op.output_names().iter().map(|_| Support::Unsupported { why: f.why }).collect(),
            _ => linalg(l),
        },
        Op::Prim(p) => {
            let mut one = heapless::Vec::new();
            let _ = one.push(prim(p)); // every primitive has one output
            one
        }
        Op::Internal(InternalOp::Chain(_)) => op.output_names().iter().map(|_| CHAIN).collect(),
        Op::Internal(_) if !SECOND_ORDER => {
            op.output_names().iter().map(|_| Support::Unsupported { why: NO_SECOND_ORDER }).collect()
        }
        Op::Internal(_) => {
            op.output_names()
                .iter()
                .map(|&name| {
                    if name == "bound" {
                        Support::NotDifferentiable { why: BOUND_WHY }
                    } else {
                        ok(CHECKED)
                    }
                })
                .collect()
        }
    };
    op.output_names().iter().copied().zip(supports).collect()
}

/// One default instance of every [`LinalgOp`] variant, then of every
/// [`PrimOp`] variant (each elementwise map and each reduction separately,
/// as their support differs), in declaration order, with default options
/// (for the constants, an empty shape): they name the op for the table.
pub fn ad_support_ops() -> impl Iterator<Item = Op> {
    LinalgOp::all().map(Op::Linalg).chain(core::iter::successors(pr(PrimOp::Matmul(Matmul::PLAIN)), next))
}

/// `(op name, output name, support)` for every output of every op of
/// [`ad_support_ops`], e.g. to print the table:
///
/// ```
/// use lindiff_cpu::prelude::*;
/// for (op, output, support) in ad_support_table() {
///     println!("{op:<28} {output:<10} {support}");
/// }
/// let pivots = ad_support_table().find(|(op, out, _)| *op == "lu" && *out == "perm");
/// assert!(matches!(pivots, Some((_, _, Support::NotDifferentiable { .. }))));
/// ```
pub fn ad_support_table() -> impl Iterator<Item = (&'static str, &'static str, Support)> {
    ad_support_ops().flat_map(|op| {
        let name = op.name();
        ad_support(&op).into_iter().map(move |(output, support)| (name, output, support))
    })
}

/// Whether second derivatives go through `op`: a Hessian-vector product
/// by forward over reverse (the JVP of a gradient program, or the eager
/// tape over [`Dual`](super::Dual)) or by reverse over reverse. Every rule
/// is written with ops that have rules of their own, so this is the
/// first-order support of the op's differentiable outputs, with the
/// caveats second order adds (docs/ad-rules.md#second-order): for the
/// spectral ops and the composites built on them, ties and the
/// broadened rules. An op none of whose outputs is differentiable answers
/// its first output's support.
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let adjugate = Op::Linalg(LinalgOp::Adjugate(op::Adjugate));
/// assert!(ad_support_second_order(&adjugate).note().is_some_and(|n| n.contains("tied")));
/// assert!(ad_support_second_order(&Op::Linalg(LinalgOp::Det(op::Det))).is_supported());
/// let svd = ad_support_second_order(&Op::Linalg(LinalgOp::Svd(op::Svd::default())));
/// assert!(svd.note().is_some_and(|n| n.contains("tie")));
/// ```
pub fn ad_support_second_order(op: &Op) -> Support {
    let first = ad_support(op);
    let supported = first.iter().find_map(|(_, s)| match s {
        Support::Supported { caveat } => Some(*caveat),
        _ => None,
    });
    match (supported, op) {
        _ if !SECOND_ORDER => Support::Unsupported { why: NO_SECOND_ORDER },
        (None, _) => first.first().map_or(Support::Unsupported { why: "the op has no outputs" }, |(_, s)| *s),
        (Some(_), Op::Linalg(LinalgOp::FunmHermitianSecond(_))) => Support::Unsupported { why: THIRD_FUNM },
        (Some(_), Op::Linalg(LinalgOp::Adjugate(_))) => ok(SECOND_ADJUGATE),
        (Some(_), Op::Linalg(LinalgOp::Det(_))) => ok(SECOND_DET),
        (
            Some(_),
            Op::Linalg(
                LinalgOp::FunmHermitian(FunmHermitian(f))
                | LinalgOp::FunmHermitianFactors(FunmHermitianFactors(f))
                | LinalgOp::FunmHermitianFrechet(FunmHermitianFrechet(f)),
            ),
        ) => match f {
            MatrixFunction::Custom(s) if s.d2f.is_none() => {
                Support::Unsupported { why: NO_SECOND_DERIVATIVE }
            }
            _ => ok(SECOND_FUNM),
        },
        (Some(_), Op::Linalg(l))
            if matches!(l.family().feature, "op-svd" | "op-eigh" | "op-eig" | "op-recombine") =>
        {
            ok(SECOND_SPECTRAL)
        }
        (Some(caveat), _) => Support::Supported { caveat },
    }
}

// ------------------------------------------------------------ caveats ----
//
// Shared phrases are macros so that `concat!` can join them into one
// `&'static str` per combination.

macro_rules! integer {
    () => {
        "it is integer-valued"
    };
}
macro_rules! lower {
    () => {
        "reads the lower triangle; the gradient lives on the lower triangle with a real diagonal"
    };
}
macro_rules! s_values {
    () => {
        "a singular value is not differentiable where it is zero or tied with another \
         (symmetric functions of a tied group are); reverse mode reports (NotDifferentiable) a \
         cotangent that is nonzero at a zero value or unequal inside a tied group"
    };
}
macro_rules! svd_vectors {
    () => {
        "the forward fixes the gauge (largest-magnitude entry of each column of u real and positive) \
         and forward mode follows it, reporting (NotDifferentiable) a direction that couples tied \
         vectors or zero values; reverse mode checks the cotangent and reports (NotDifferentiable) \
         one that depends on the basis inside a tied group, on a complex phase or on null-space \
         vectors; gauge-invariant losses are exact at ties in reverse mode (e.g. projectors onto \
         whole tied groups)"
    };
}
macro_rules! svd_eps {
    () => {
        "SvdOptions::derivative_eps: the Lorentzian-broadened rule, biased near ties and \
         non-finite at a zero singular value of a rectangular input"
    };
}
macro_rules! recompute {
    () => {
        "; the other factor was not computed, so the rule runs one more thin SVD"
    };
}
macro_rules! completion_u {
    () => {
        "completion columns beyond k = min(m, n) are not differentiable: a tall input (m > n) reports an \
         error for u; otherwise "
    };
}
macro_rules! completion_vh {
    () => {
        "completion columns beyond k = min(m, n) are not differentiable: a wide input (m < n) reports an \
         error for vh; otherwise "
    };
}
macro_rules! qr_full_rank {
    () => {
        "full-rank region: valid where the leading min(m, n) columns have full rank; a rank-deficient \
         input gives non-finite tangents"
    };
}
macro_rules! householder {
    () => {
        "full-rank region with every reflector nontrivial: at an already-reduced column (e.g. an upper \
         triangular input) the state jumps and the tangent is non-finite (qr is differentiable there); \
         assumes the CPU provider's state conventions (real tau, tau = 0 for an empty tail)"
    };
}
macro_rules! eig_w {
    () => {
        "eigenvalues are sorted by (real part, imaginary part): not differentiable at a repeated \
         eigenvalue or where real parts tied up to rounding reorder them; complex even for real input"
    };
}
macro_rules! singular {
    () => {
        "not differentiable at a singular matrix (the tangent is non-finite there)"
    };
}
macro_rules! at_zero {
    () => {
        "not differentiable at 0 (the tangent is non-finite there)"
    };
}

const INTEGER: &str = integer!();
/// The reason `rules/qr.rs` gives for rank-revealing QR.
const PIVOTED: &str = "pivot selection and the numerical rank are discontinuous";
/// `NotDifferentiable` because pivoted.
const PIVOT: Support = Support::NotDifferentiable { why: PIVOTED };
/// The reason `rules/svd.rs` gives for an output its options switched off.
const ABSENT: &str = "the forward did not compute it (SvdOptions::vectors)";

const S_VALUES: &str = s_values!();
const S_VALS: &str = concat!(s_values!(), "; the rule runs one thin SVD with vectors");
const SVD_VECTORS: &str = svd_vectors!();
const SVD_EPS: &str = svd_eps!();
const SVD_VECTORS_RECOMPUTE: &str = concat!(svd_vectors!(), recompute!());
const SVD_EPS_RECOMPUTE: &str = concat!(svd_eps!(), recompute!());
const FULL_U: &str = concat!(completion_u!(), svd_vectors!());
const FULL_U_EPS: &str = concat!(completion_u!(), svd_eps!());
const FULL_VH: &str = concat!(completion_vh!(), svd_vectors!());
const FULL_VH_EPS: &str = concat!(completion_vh!(), svd_eps!());
const TRUNCATED_S: &str = concat!(
    "the thin SVD's values with the discarded ones zeroed (a zero tangent there); the rank must be locally \
     constant (kept values separated from the discarded ones); ",
    s_values!()
);
const TRUNCATED_VECTORS: &str = concat!(
    "the thin rule with zero cotangents on the discarded triplets (their columns are zeroed, and so is \
     their tangent); the rank must be locally constant (kept values separated from the discarded ones); \
     the rule runs one more thin SVD; ",
    svd_vectors!()
);

const QR: &str = qr_full_rank!();
const QR_COMPLETE_Q: &str = concat!(
    "complete mode: the columns of q beyond min(m, n) depend on the reflector convention (a \
     completion basis): a tall input (m > n) reports an error for q (use the reduced QR); otherwise ",
    qr_full_rank!()
);
const HOUSEHOLDER: &str = householder!();
const HOUSEHOLDER_QR: &str = concat!(
    "full-rank region: not differentiable where a diagonal entry of h is zero (its phase normalises the \
     factor); ",
    "assumes the CPU provider's state conventions (real tau, tau = 0 for an empty tail)"
);
const HOUSEHOLDER_APPLY: &str = "linear in b; its derivative in (h, tau) assumes the CPU provider's state \
                                 conventions (real tau, tau = 0 for an empty tail)";

const EIGH_W: &str = concat!(
    lower!(),
    "; an eigenvalue is not differentiable where it is tied with another (symmetric functions of a tied \
     group are; reverse mode reports a cotangent unequal inside a tied group)"
);
const EIGH_VALS_W: &str = concat!(
    lower!(),
    "; an eigenvalue is not differentiable where it is tied with another (symmetric functions of a tied \
     group are; reverse mode reports a cotangent unequal inside a tied group); the rule recomputes the eigenvectors with a full eigh"
);
const EIGH_V: &str = concat!(
    lower!(),
    "; the forward fixes the gauge (largest-magnitude entry of each column real and positive) and \
     forward mode follows it, reporting (NotDifferentiable) a direction that couples tied vectors; \
     reverse mode checks the cotangent and reports (NotDifferentiable) one that depends on the basis \
     inside a tied group or on a complex phase; gauge-invariant losses are exact at ties in reverse \
     mode (e.g. projectors onto whole tied groups)"
);
const EIGH_V_EPS: &str =
    concat!(lower!(), "; EighOptions::derivative_eps: Lorentzian-broadened coupling, biased near ties");
const EIG_W: &str = eig_w!();
const EIG_VALS_W: &str = concat!(
    eig_w!(),
    "; the rule recomputes the eigenvectors with a full eig and assumes eig and eig_vals order the \
     spectrum alike"
);
const EIG_V: &str = "unit-norm columns with the largest-magnitude entry real and positive (the forward's \
                     gauge, which the tangent follows); not differentiable at a repeated eigenvalue";
const CHOLESKY: &str = concat!(lower!(), "; needs a positive-definite input");

const LU: &str = "pivoting is locally constant; finite and exact at a square or wide input whose only \
                  zero pivot is the last; non-finite at other singular inputs";
const FULL_PIV_LU: &str = "pivoting is locally constant; finite and exact at a square input of corank 1; \
                           non-finite at corank ≥ 2 or at a rank-deficient tall input";
const FUSED_SOLVE: &str = "needs a nonsingular a (the forward fails otherwise); reverse mode reuses the \
                           saved factors, so a is factored once";
const PREPARED_SOLVE: &str = "differentiable in b and in the packed lu (its tangent read as the factors' \
                              dL, dU); the integer permutation inputs carry no tangent";
const TRIANGULAR: &str = "reads one triangle of a (not its diagonal when unit): the gradient of a lives \
                          on that triangle; a zero diagonal entry gives infinities, as in the forward pass";
const DET: &str = "adjugate rule: finite and exact at singular matrices (zero at corank ≥ 2)";
const SIGN: &str = concat!("locally constant for real input (a zero tangent); complex input: ", singular!());
const LOGABSDET: &str = singular!();
const LOW_RANK: &str = "needs the kept values separated from the discarded ones (s_p > s_{p+1}, and no \
                        value at a tolerance threshold); exact with ties inside the kept block; at a tie \
                        across the cut (within 10·k·eps·s_max) reverse mode reports NotDifferentiable \
                        (forward mode's tangent there is finite but meaningless: the cross coupling is \
                        cut off); a Count(p) cut inside a group of zero values is not reported";
const FUNM: &str = concat!(
    lower!(),
    "; exact at tied and nearly tied eigenvalues (Daleckii–Krein: f′ where values tie, stable \
     divided differences where they nearly do); log needs a positive definite input and sqrt a \
     positive semidefinite one, whose derivative is not finite at a zero eigenvalue"
);
const LOGM: &str = "the Fréchet derivative by the block identity log [[A, E], [0, A]] (a logm at \
                    twice the size; as accurate as logm, a few ε times the condition number); not \
                    differentiable on the branch cut (an eigenvalue on the negative real axis); \
                    second order by the same identity at four times the size";
const SQRTM: &str = "the Fréchet derivative as the solution of S L + L S = dA in the Schur basis; \
                     not differentiable at a zero eigenvalue or on the branch cut; second order by \
                     the block identity at twice the size";
const EXPM: &str = "the Fréchet derivative by the Padé approximant's own derivative, at the same \
                    scaling as the forward (as accurate as expm itself: a few ε times the \
                    condition number); second order by the block identity at twice the size";
const FUNM_FRECHET: &str = "linear in e (its own adjoint); its derivative in a is the second-order \
                            Daleckii–Krein formula (funm_hermitian_second), exact at ties";
const FUNM_SECOND: &str = "linear in d; second divided differences f[λ_i, λ_k, λ_j], f″/2 where three \
                           values tie; a caller's f needs its f″; no third derivative";
/// The scaling-and-squaring terms `expm_factors` returns for its rule (its
/// `piv` is integer-valued).
const EXPM_DATA: Support =
    Support::Unsupported { why: "data for expm's rule (intermediate terms of the scaling and squaring)" };
/// The decomposition and divided differences `funm_hermitian_factors` returns
/// for its rule.
const RULE_DATA: Support = Support::Unsupported {
    why: "data for funm_hermitian's rule (use eigh for a differentiable decomposition)",
};
const POLAR: &str = "needs a of full rank; exact with tied singular values; at a zero singular value the \
                     tangent is finite (1/s cut off) but meaningless";
const PINV: &str = "constant-rank derivative: exact where the dropped singular values are zero (full \
                    rank, or exactly rank-deficient); off by O(s_{r+1}/s_r) where they are small but \
                    nonzero; not differentiable where the rank changes";

const AT_ZERO: &str = at_zero!();
const SQRT: &str =
    concat!(at_zero!(), "; complex input: the principal branch, discontinuous across the negative real axis");
const LOG: &str = concat!("real input only; ", at_zero!());
const DIV: &str = "not differentiable where the divisor is 0 (the tangent is non-finite there)";
const CONSTANT: &str = "a constant (no inputs): its tangent is zero";
const MAX_MIN: &str = "d max = dx at the argmax: not differentiable where the extreme value is attained \
                       twice (reported as NotDifferentiable when a derivative is asked for there)";
const EXTREME_MASK: &str = "a 0/1 mask of the extreme (piecewise constant): derivative 0; a tied extreme \
                            fails on the primal side";
const PAIR_INV: &str = "entries cut off (|z| ≤ δ) stay 0: their tangent is 0, which is exact only where \
                        the pair's own tangent vanishes there; the spectral rules check that before a \
                        tangent reaches them";
const PIVOT_PHASE: &str = "the pivot row (largest |u| of each column, the first on ties) is locally \
                           constant: not differentiable where two entries tie for it";
const RANK_MASK: &str = "a 0/1 mask of an integer rank (piecewise constant): derivative 0";
const CHECKED: &str = "the identity on the values the check lets through (the check is not repeated \
                       on their tangents)";
const SECOND_FUNM: &str = "the second-order Daleckii–Krein formula (second divided differences, exact \
                           at tied eigenvalues); a caller's f needs its f″ \
                           (MatrixFunction::with_second_derivative)";
const THIRD_FUNM: &str = "the second derivative of a Hermitian matrix function has no rule of its own: \
                          third derivatives are not implemented";
const SECOND_ADJUGATE: &str = "the rule runs on an SVD of a, and second order differentiates that SVD: at \
                               tied singular values (a = c·I included) forward mode reports a tangent that \
                               splits the tie, although adj(a) is a polynomial in a; exact elsewhere, \
                               singular a included";
const SECOND_DET: &str = "the Hessian comes through the adjugate: exact at singular a (corank 1 and 2 \
                          tested, where it is nonzero although the gradient is zero at corank 2) and at \
                          tied singular values";
const SECOND_SPECTRAL: &str = "the first-order conditions (ad_support) hold as well; forward over reverse \
                               through the rules: at an exact tie (or a zero singular \
                               value) forward mode reports a tangent that splits it; near a tie the \
                               error of the second derivative grows as 1/gap²; a broadened rule \
                               (derivative_eps) differentiates its own broadened first derivative; \
                               svd_full of a rectangular input stops at its completion columns";
const INDICATOR: &str = "a 0/1 indicator (piecewise constant): derivative 0 away from x = 0; at x = 0, \
                         where it jumps, the rule also gives 0 (cond uses it only where its other terms \
                         are not differentiable either)";

// ------------------------------------------------------------- tables ----

/// Supports in output order.
type Supports = heapless::Vec<Support, MAX_OUTPUTS>;

/// `Supported` with a caveat.
const fn ok(caveat: &'static str) -> Support {
    Support::Supported { caveat: Some(caveat) }
}

/// `Supported` everywhere.
const OK: Support = Support::Supported { caveat: None };

/// A compiled plan's elementwise chains are made after differentiation.
const CHAIN: Support =
    Support::Unsupported { why: "an elementwise chain of a compiled plan is never differentiated" };

/// `NotDifferentiable` because integer-valued.
const INT: Support = Support::NotDifferentiable { why: INTEGER };

/// The supports listed, in output order.
fn list(supports: &[Support]) -> Supports {
    supports.iter().copied().take(MAX_OUTPUTS).collect()
}

/// Caveats of the vector outputs of an SVD with these options.
fn svd_vector_caveat(options: &SvdOptions, recompute: bool) -> &'static str {
    match (options.derivative_eps.is_some(), recompute) {
        (false, false) => SVD_VECTORS,
        (false, true) => SVD_VECTORS_RECOMPUTE,
        (true, false) => SVD_EPS,
        (true, true) => SVD_EPS_RECOMPUTE,
    }
}

/// The supports of a `Svd` with these options.
fn svd_supports(op: &Svd) -> Supports {
    let o = &op.0;
    let absent = Support::NotDifferentiable { why: ABSENT };
    match o.vectors {
        SvdVectors::Both => {
            let v = ok(svd_vector_caveat(o, false));
            list(&[v, ok(S_VALUES), v])
        }
        SvdVectors::Left => list(&[ok(svd_vector_caveat(o, true)), ok(S_VALUES), absent]),
        SvdVectors::Right => list(&[absent, ok(S_VALUES), ok(svd_vector_caveat(o, true))]),
    }
}

/// The supports of a `SvdFull` with these options.
fn svd_full_supports(op: &SvdFull) -> Supports {
    let eps = op.0.derivative_eps.is_some();
    let u = if eps { FULL_U_EPS } else { FULL_U };
    let vh = if eps { FULL_VH_EPS } else { FULL_VH };
    list(&[ok(u), ok(S_VALUES), ok(vh)])
}

/// The supports of each linear-algebra op, as its entry in the op table
/// (`op/table.rs`) declares them.
macro_rules! linalg_supports {
    ($(
        $(#[$doc:meta])*
        $V:ident {
            name: $name:literal, family: $family:literal, dtypes: $dtypes:tt,
            inputs: $inputs:tt, outputs: $outputs:tt, rule: $rule:ident,
            support: |$op:ident| $support:expr,
            methods: $methods:tt,
        }
    )*) => {
        /// The supports of a linear-algebra op (see `rules/*.rs`).
        fn linalg(l: &LinalgOp) -> Supports {
            match l {
                $( LinalgOp::$V($op) => $support, )*
            }
        }
    };
}

crate::op::op_table!(linalg_supports);

/// The support of a primitive's one output (see `rules/prim.rs`).
fn prim(p: &PrimOp) -> Support {
    match p {
        PrimOp::Unary(Unary(u)) => match u {
            UnaryOp::Neg
            | UnaryOp::Conj
            | UnaryOp::Real
            | UnaryOp::Imag
            | UnaryOp::ToComplex
            | UnaryOp::MulI
            | UnaryOp::Copy
            | UnaryOp::Abs2
            | UnaryOp::Exp => OK,
            UnaryOp::Abs | UnaryOp::Recip => ok(AT_ZERO),
            UnaryOp::Sqrt => ok(SQRT),
            UnaryOp::Log => ok(LOG),
            UnaryOp::NonzeroMask => ok(INDICATOR),
        },
        PrimOp::Binary(Binary(b)) => match b {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => OK,
            BinaryOp::Div => ok(DIV),
        },
        PrimOp::Reduce(r) => match r.op {
            ReduceOp::Sum => OK,
            ReduceOp::Max | ReduceOp::Min => ok(MAX_MIN),
        },
        PrimOp::Matmul(_)
        | PrimOp::Scale(_)
        | PrimOp::Adjoint(_)
        | PrimOp::DiagPart(_)
        | PrimOp::DiagEmbed(_)
        | PrimOp::TriMask(_)
        | PrimOp::ScaleCols(_)
        | PrimOp::ScaleRows(_)
        | PrimOp::Reshape(_)
        | PrimOp::Spread(_)
        | PrimOp::Slice(_)
        | PrimOp::Pad(_) => OK,
        PrimOp::Fill(_) | PrimOp::Eye(_) => ok(CONSTANT),
        PrimOp::PairInv(_) | PrimOp::PivotPhase(_) if !SECOND_ORDER => {
            Support::Unsupported { why: NO_SECOND_ORDER }
        }
        PrimOp::PairInv(_) => ok(PAIR_INV),
        PrimOp::PivotPhase(_) => ok(PIVOT_PHASE),
        PrimOp::RankMask(_) => ok(RANK_MASK),
        PrimOp::ExtremeMask(_) => ok(EXTREME_MASK),
    }
}

// ----------------------------------------------------- the op list ----

/// A primitive.
fn pr(p: PrimOp) -> Option<Op> {
    Some(Op::Prim(p))
}

/// A unary primitive.
fn un(u: UnaryOp) -> Option<Op> {
    pr(PrimOp::Unary(Unary(u)))
}

/// A binary primitive.
fn bin(b: BinaryOp) -> Option<Op> {
    pr(PrimOp::Binary(Binary(b)))
}

/// A reduction over the matrix dims.
fn red(op: ReduceOp) -> Option<Op> {
    pr(PrimOp::Reduce(Reduce { op, core_rank: 2 }))
}

/// The primitive after `op` in [`ad_support_ops`]. Every variant has an arm
/// (no wildcard): a new primitive must be given a place in the chain.
fn next(op: &Op) -> Option<Op> {
    match op {
        Op::Prim(p) => match p {
            PrimOp::Matmul(_) => un(UnaryOp::Neg),
            PrimOp::Unary(Unary(u)) => match u {
                UnaryOp::Neg => un(UnaryOp::Conj),
                UnaryOp::Conj => un(UnaryOp::Real),
                UnaryOp::Real => un(UnaryOp::Imag),
                UnaryOp::Imag => un(UnaryOp::ToComplex),
                UnaryOp::ToComplex => un(UnaryOp::MulI),
                UnaryOp::MulI => un(UnaryOp::Abs),
                UnaryOp::Abs => un(UnaryOp::Abs2),
                UnaryOp::Abs2 => un(UnaryOp::Sqrt),
                UnaryOp::Sqrt => un(UnaryOp::Recip),
                UnaryOp::Recip => un(UnaryOp::Exp),
                UnaryOp::Exp => un(UnaryOp::Log),
                UnaryOp::Log => un(UnaryOp::Copy),
                UnaryOp::Copy => un(UnaryOp::NonzeroMask),
                UnaryOp::NonzeroMask => bin(BinaryOp::Add),
            },
            PrimOp::Binary(Binary(b)) => match b {
                BinaryOp::Add => bin(BinaryOp::Sub),
                BinaryOp::Sub => bin(BinaryOp::Mul),
                BinaryOp::Mul => bin(BinaryOp::Div),
                BinaryOp::Div => pr(PrimOp::Scale(Scale(1.0))),
            },
            PrimOp::Scale(_) => pr(PrimOp::Adjoint(Adjoint::default())),
            PrimOp::Adjoint(_) => pr(PrimOp::DiagPart(DiagPart)),
            PrimOp::DiagPart(_) => pr(PrimOp::DiagEmbed(DiagEmbed)),
            PrimOp::DiagEmbed(_) => pr(PrimOp::TriMask(TriMask { triangle: Triangle::Lower, diagonal: 1.0 })),
            PrimOp::TriMask(_) => pr(PrimOp::ScaleCols(ScaleCols)),
            PrimOp::ScaleCols(_) => pr(PrimOp::ScaleRows(ScaleRows)),
            PrimOp::ScaleRows(_) => red(ReduceOp::Sum),
            PrimOp::Reduce(r) => match r.op {
                ReduceOp::Sum => red(ReduceOp::Max),
                ReduceOp::Max => red(ReduceOp::Min),
                ReduceOp::Min => pr(PrimOp::Reshape(Reshape { dims: heapless::Vec::new() })),
            },
            PrimOp::Reshape(_) => pr(PrimOp::Spread(Spread { core: heapless::Vec::new() })),
            PrimOp::Spread(_) => pr(PrimOp::Slice(Slice { start: [0, 0], size: [0, 0] })),
            PrimOp::Slice(_) => pr(PrimOp::Pad(Pad { start: [0, 0], size: [0, 0] })),
            PrimOp::Pad(_) => {
                pr(PrimOp::Fill(Fill { meta: TensorMeta::new(DType::F64, Shape::scalar()), value: 0.0 }))
            }
            PrimOp::Fill(_) => pr(PrimOp::Eye(Eye { dtype: DType::F64, n: 0, batch: heapless::Vec::new() })),
            PrimOp::Eye(_) => pr(PrimOp::PairInv(PairInv {
                pair: Pair::Diff,
                regularize: Regularize::Cutoff { relative: 0.0 },
            })),
            PrimOp::PairInv(_) => pr(PrimOp::PivotPhase(PivotPhase)),
            PrimOp::PivotPhase(_) => pr(PrimOp::RankMask(RankMask { k: 0, dtype: DType::F64 })),
            PrimOp::RankMask(_) => pr(PrimOp::ExtremeMask(ExtremeMask { op: ReduceOp::Max, core_rank: 1 })),
            PrimOp::ExtremeMask(_) => None,
        },
        Op::Linalg(_) | Op::Internal(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_entry_matches_the_op_outputs() {
        let mut names = BTreeSet::new();
        let mut count = 0;
        for op in ad_support_ops() {
            let support = ad_support(&op);
            assert_eq!(support.len(), op.output_names().len(), "{}", op.name());
            for ((name, _), expected) in support.iter().zip(op.output_names()) {
                assert_eq!(name, expected);
            }
            assert!(names.insert(op.name()), "{} listed twice", op.name());
            count += 1;
        }
        // Every linear-algebra op; 21 primitives with 14 unary maps, 4
        // binary maps and 3 reductions listed separately.
        assert_eq!(count, LinalgOp::all().count() + (21 - 3) + 14 + 4 + 3);
    }
}
