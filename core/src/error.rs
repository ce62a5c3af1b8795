//! The one error type of lindiff. Every message names the op, the argument and
//! the offending shape or value, e.g. ``det: argument `a` must be square, got
//! 2×3``.

use crate::dtype::DType;
use crate::shape::{Shape, TooManyDims};
use core::fmt;

/// Result alias used throughout lindiff.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// Which dim of an argument a [`Error::DimMismatch`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Dim 0 of a matrix.
    Rows,
    /// Dim 1 of a matrix.
    Cols,
    /// Dim 0 of a vector.
    Len,
}

impl Dim {
    fn noun(self) -> &'static str {
        match self {
            Dim::Rows => "rows",
            Dim::Cols => "columns",
            Dim::Len => "elements",
        }
    }
}

/// What kind of argument an op expected (for [`Error::Rank`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// Core dims `[rows, cols]`.
    Matrix,
    /// Core dims `[len]`.
    Vector,
    /// No core dims.
    Scalar,
}

impl ArgKind {
    /// Number of core dims.
    pub const fn core_rank(self) -> usize {
        match self {
            ArgKind::Matrix => 2,
            ArgKind::Vector => 1,
            ArgKind::Scalar => 0,
        }
    }
}

/// Which dtypes an argument accepts (for [`Error::DType`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DTypeReq {
    /// f32, f64, c32 or c64.
    Float,
    /// Exactly this dtype (e.g. the dtype of another argument).
    Exactly(DType),
}

/// Every way a lindiff call can fail.
///
/// Bad input is always one of these — never a panic, never undefined
/// behaviour. New variants may be added (`#[non_exhaustive]`).
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The op got the wrong number of inputs.
    Arity {
        /// Op name.
        op: &'static str,
        /// Number of inputs the op takes.
        expected: usize,
        /// Number given.
        got: usize,
    },
    /// An argument has fewer dims than its kind needs, e.g. a vector where a
    /// matrix is required.
    Rank {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// What the argument must be.
        expected: ArgKind,
        /// The shape given.
        shape: Shape,
    },
    /// A square matrix was required.
    NotSquare {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// The shape given.
        shape: Shape,
    },
    /// A dim of `arg` does not match what another argument implies.
    DimMismatch {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// Which dim.
        dim: Dim,
        /// The size that was required.
        expected: usize,
        /// The argument that fixes the required size.
        because_of: &'static str,
        /// The shape given.
        shape: Shape,
    },
    /// Two arguments have different batch dims (there is no broadcasting).
    BatchMismatch {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// Its shape.
        shape: Shape,
        /// The argument it was compared with.
        other: &'static str,
        /// That argument's shape.
        other_shape: Shape,
    },
    /// Two arguments of an elementwise op have different shapes.
    ShapeMismatch {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// Its shape.
        shape: Shape,
        /// The argument it must match.
        other: &'static str,
        /// That argument's shape.
        other_shape: Shape,
    },
    /// A block (slice or padding) does not fit inside a matrix.
    OutOfBounds {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// The matrix shape.
        shape: Shape,
        /// Top-left corner of the block (row, column).
        start: [usize; 2],
        /// Block size (rows, columns).
        size: [usize; 2],
    },
    /// An argument has the wrong dtype.
    DType {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// What was required.
        expected: DTypeReq,
        /// What was given.
        got: DType,
    },
    /// An argument may not be empty here.
    Empty {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// The shape given.
        shape: Shape,
        /// Why it may not be empty.
        why: &'static str,
    },
    /// An element count or byte size overflows `usize`.
    Overflow {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// The shape whose size overflows.
        shape: Shape,
    },
    /// A shape would need more than [`MAX_RANK`](crate::MAX_RANK) dims.
    TooManyDims {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// The rank that was needed.
        rank: usize,
    },
    /// An option has a value the op cannot use.
    InvalidOption {
        /// Op name.
        op: &'static str,
        /// Option name.
        option: &'static str,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A buffer or view does not fit what the call needs.
    Buffer {
        /// Op name.
        op: &'static str,
        /// Argument name (`"workspace"` for the workspace).
        arg: &'static str,
        /// What is wrong.
        why: &'static str,
        /// Bytes or elements needed.
        needed: usize,
        /// Bytes or elements present.
        got: usize,
    },
    /// The caller's allocator could not satisfy a request.
    OutOfMemory {
        /// Bytes requested.
        bytes: usize,
        /// Alignment requested.
        align: usize,
        /// Bytes that were still available, if the allocator knows.
        available: usize,
    },
    /// An input contains NaN or infinity.
    NonFinite {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// Lowest-indexed batch item where it was found.
        batch_index: usize,
    },
    /// A Cholesky factorization met a non-positive pivot.
    NotPositiveDefinite {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// Lowest-indexed failing batch item.
        batch_index: usize,
    },
    /// An input outside the domain of a real function: a real matrix with
    /// an eigenvalue on the negative real axis has no real principal
    /// logarithm or square root.
    OutsideDomain {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// Lowest-indexed failing batch item.
        batch_index: usize,
    },
    /// The answer, or a quantity the algorithm must form on the way, lies
    /// outside what the dtype represents accurately: computing it would
    /// overflow or lose every digit. `why` says which quantity and what
    /// to do instead (for example a wider dtype). On the host providers
    /// every linear-algebra op whose output would hold an infinity or NaN
    /// for finite input (a singular value, a determinant, a solution beyond
    /// the largest finite value) reports this, naming its first argument.
    OutOfRange {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// Lowest-indexed failing batch item.
        batch_index: usize,
        /// What is out of range, and what to do instead.
        why: &'static str,
    },
    /// A solve met a matrix singular to working precision (see
    /// [`SolveOptions`](crate::op::SolveOptions)), or an exactly singular
    /// one, or a permutation input that is not a permutation.
    Singular {
        /// Op name.
        op: &'static str,
        /// Argument name.
        arg: &'static str,
        /// Lowest-indexed failing batch item.
        batch_index: usize,
        /// The measure the matrix failed on, below n·ε: the pivot ratio
        /// min |u_kk| / max |u_kk|, or the estimated reciprocal condition
        /// number 1/(‖a‖₁‖a⁻¹‖₁) of
        /// [`SingularCheck::ConditionEstimate`](crate::op::SingularCheck);
        /// 0 for an exactly zero pivot (or a bad permutation).
        rcond: f64,
    },
    /// An iterative algorithm did not converge.
    NonConvergence {
        /// Op name.
        op: &'static str,
        /// Lowest-indexed failing batch item.
        batch_index: usize,
    },
    /// The provider does not implement this op (or this dtype of it).
    Unsupported {
        /// Op name.
        op: &'static str,
        /// Provider name.
        provider: &'static str,
        /// Why, and what to use instead.
        why: &'static str,
    },
    /// The provider cannot run at all (e.g. no CUDA driver or device).
    ProviderUnavailable {
        /// Provider name.
        provider: &'static str,
        /// Why.
        why: &'static str,
    },
    /// A program, tape or value table is full (its capacity is a const
    /// parameter chosen by the caller).
    Capacity {
        /// What is full (`"program instructions"`, …).
        what: &'static str,
        /// The capacity.
        capacity: usize,
    },
    /// A program was given a value it does not own or arguments that do
    /// not match its parameters.
    Program {
        /// What is wrong.
        why: &'static str,
    },
    /// The derivative of this output is not implemented.
    UnsupportedDerivative {
        /// Op name.
        op: &'static str,
        /// Output name.
        output: &'static str,
    },
    /// The function is not differentiable at this point or for this output
    /// (discontinuous outputs, integer outputs, a gauge-dependent loss at a
    /// degenerate spectrum, a kink).
    NotDifferentiable {
        /// Op name.
        op: &'static str,
        /// Output name.
        output: &'static str,
        /// Why.
        why: &'static str,
    },
    /// Two singular values or eigenvalues are tied or nearly so, and the
    /// cotangent couples their vectors: the derivative there is either not
    /// determined by the decomposition's cotangents (an exact tie) or would
    /// lose too many digits to cancellation (a near tie). The loss may well
    /// be differentiable; an op that forms the recombination itself
    /// computes it stably.
    NearTie {
        /// The decomposition ("svd", "eigh", "eig", …).
        op: &'static str,
        /// The pair of values (0-based, in the op's order).
        pair: (usize, usize),
        /// Their gap |x_i − x_j| (0 within the tie cutoff).
        gap: f64,
        /// The estimated error of the gradient relative to its norm (∞ at an
        /// exact tie).
        estimate: f64,
        /// What to use instead.
        suggestion: &'static str,
    },
}

impl Error {
    /// The variant's name (`"NonFinite"`, `"Unsupported"`, …): with
    /// [`Error::op`], a report of the error that needs no `core::fmt`
    /// (firmware that prints `&str` pieces does not link the message
    /// formatting of [`fmt::Display`], nor core's integer printing).
    pub const fn kind(&self) -> &'static str {
        match self {
            Error::Arity { .. } => "Arity",
            Error::Rank { .. } => "Rank",
            Error::NotSquare { .. } => "NotSquare",
            Error::DimMismatch { .. } => "DimMismatch",
            Error::BatchMismatch { .. } => "BatchMismatch",
            Error::ShapeMismatch { .. } => "ShapeMismatch",
            Error::OutOfBounds { .. } => "OutOfBounds",
            Error::DType { .. } => "DType",
            Error::Empty { .. } => "Empty",
            Error::Overflow { .. } => "Overflow",
            Error::TooManyDims { .. } => "TooManyDims",
            Error::InvalidOption { .. } => "InvalidOption",
            Error::Buffer { .. } => "Buffer",
            Error::OutOfMemory { .. } => "OutOfMemory",
            Error::NonFinite { .. } => "NonFinite",
            Error::NotPositiveDefinite { .. } => "NotPositiveDefinite",
            Error::OutsideDomain { .. } => "OutsideDomain",
            Error::OutOfRange { .. } => "OutOfRange",
            Error::Singular { .. } => "Singular",
            Error::NonConvergence { .. } => "NonConvergence",
            Error::Unsupported { .. } => "Unsupported",
            Error::ProviderUnavailable { .. } => "ProviderUnavailable",
            Error::Capacity { .. } => "Capacity",
            Error::Program { .. } => "Program",
            Error::UnsupportedDerivative { .. } => "UnsupportedDerivative",
            Error::NotDifferentiable { .. } => "NotDifferentiable",
            Error::NearTie { .. } => "NearTie",
        }
    }

    /// The op the error names (`None` for the errors that name none: an
    /// allocator's, a provider's, a program's, a full capacity).
    pub const fn op(&self) -> Option<&'static str> {
        match self {
            Error::Arity { op, .. }
            | Error::Rank { op, .. }
            | Error::NotSquare { op, .. }
            | Error::DimMismatch { op, .. }
            | Error::BatchMismatch { op, .. }
            | Error::ShapeMismatch { op, .. }
            | Error::OutOfBounds { op, .. }
            | Error::DType { op, .. }
            | Error::Empty { op, .. }
            | Error::Overflow { op, .. }
            | Error::TooManyDims { op, .. }
            | Error::InvalidOption { op, .. }
            | Error::Buffer { op, .. }
            | Error::NonFinite { op, .. }
            | Error::NotPositiveDefinite { op, .. }
            | Error::OutsideDomain { op, .. }
            | Error::OutOfRange { op, .. }
            | Error::Singular { op, .. }
            | Error::NonConvergence { op, .. }
            | Error::Unsupported { op, .. }
            | Error::UnsupportedDerivative { op, .. }
            | Error::NotDifferentiable { op, .. }
            | Error::NearTie { op, .. } => Some(op),
            Error::OutOfMemory { .. }
            | Error::ProviderUnavailable { .. }
            | Error::Capacity { .. }
            | Error::Program { .. } => None,
        }
    }
}

/// The op whose derivative rule ran an op: a value error that op raises
/// (a singular or non-positive-definite matrix, a result out of range, an
/// iteration that did not converge, an input outside a function's domain)
/// is reported as this op's, whose derivative does not exist or cannot be
/// represented there: `qr`, not the `triangular_solve` its rule runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Origin {
    op: &'static str,
    inputs: &'static [&'static str],
}

impl Origin {
    /// The op named `op`, whose arguments are `inputs` (`Op::origin`).
    pub(crate) const fn new(op: &'static str, inputs: &'static [&'static str]) -> Origin {
        Origin { op, inputs }
    }

    /// `arg` when the origin op has an argument of that name, else its
    /// first.
    fn arg(self, arg: &'static str) -> &'static str {
        if self.inputs.contains(&arg) {
            arg
        } else {
            self.inputs.first().copied().unwrap_or(arg)
        }
    }
}

impl Error {
    /// This error as `origin`'s derivative rule reports it (see [`Origin`]);
    /// errors that are not about values (shapes, dtypes, capacity, the
    /// derivative checks, which name their op already) are unchanged.
    pub(crate) fn in_rule_of(self, origin: Origin) -> Error {
        let op = origin.op;
        match self {
            Error::Singular { arg, batch_index, rcond, .. } => {
                Error::Singular { op, arg: origin.arg(arg), batch_index, rcond }
            }
            Error::OutOfRange { arg, batch_index, why, .. } => {
                Error::OutOfRange { op, arg: origin.arg(arg), batch_index, why }
            }
            Error::NotPositiveDefinite { arg, batch_index, .. } => {
                Error::NotPositiveDefinite { op, arg: origin.arg(arg), batch_index }
            }
            Error::OutsideDomain { arg, batch_index, .. } => {
                Error::OutsideDomain { op, arg: origin.arg(arg), batch_index }
            }
            Error::NonConvergence { batch_index, .. } => Error::NonConvergence { op, batch_index },
            other => other,
        }
    }
}

impl From<TooManyDims> for Error {
    fn from(e: TooManyDims) -> Error {
        Error::TooManyDims { op: "shape", arg: "dims", rank: e.rank }
    }
}

impl fmt::Display for DTypeReq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DTypeReq::Float => f.write_str("a float dtype (f32, f64, c32 or c64)"),
            DTypeReq::Exactly(d) => write!(f, "dtype {d}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Arity { op, expected, got } => {
                let noun = if *expected == 1 { "input" } else { "inputs" };
                write!(f, "{op}: takes {expected} {noun}, got {got}")
            }
            Error::Rank { op, arg, expected, shape } => {
                let (what, dims) = match expected {
                    ArgKind::Matrix => ("a matrix", "[rows, cols, batch…]"),
                    ArgKind::Vector => ("a vector", "[len, batch…]"),
                    ArgKind::Scalar => ("a scalar", "[batch…]"),
                };
                write!(f, "{op}: argument `{arg}` must be {what} with dims {dims}, got shape {shape}")
            }
            Error::NotSquare { op, arg, shape } => {
                write!(f, "{op}: argument `{arg}` must be square, got {shape}")
            }
            Error::DimMismatch { op, arg, dim, expected, because_of, shape } => write!(
                f,
                "{op}: argument `{arg}` must have {expected} {} to match `{because_of}`, got {shape}",
                dim.noun()
            ),
            Error::BatchMismatch { op, arg, shape, other, other_shape } => write!(
                f,
                "{op}: argument `{arg}` ({shape}) and `{other}` ({other_shape}) have different batch dims (no broadcasting)"
            ),
            Error::ShapeMismatch { op, arg, shape, other, other_shape } => write!(
                f,
                "{op}: argument `{arg}` must have the shape of `{other}` ({other_shape}), got {shape}"
            ),
            Error::OutOfBounds { op, arg, shape, start, size } => write!(
                f,
                "{op}: a {}×{} block at ({}, {}) does not fit in argument `{arg}` of shape {shape}",
                size[0], size[1], start[0], start[1]
            ),
            Error::DType { op, arg, expected, got } => {
                write!(f, "{op}: argument `{arg}` must have {expected}, got {got}")
            }
            Error::Empty { op, arg, shape, why } => {
                write!(f, "{op}: argument `{arg}` must not be empty ({why}), got {shape}")
            }
            Error::Overflow { op, arg, shape } => {
                write!(f, "{op}: argument `{arg}` of shape {shape} has more elements or bytes than fit in usize")
            }
            Error::TooManyDims { op, arg, rank } => write!(
                f,
                "{op}: argument `{arg}` would need {rank} dims; lindiff supports at most {}",
                crate::shape::MAX_RANK
            ),
            Error::InvalidOption { op, option, why } => {
                write!(f, "{op}: option `{option}` {why}")
            }
            Error::Buffer { op, arg, why, needed, got } => {
                write!(f, "{op}: buffer for `{arg}` {why}: needs {needed}, got {got}")
            }
            Error::OutOfMemory { bytes, align, available } => write!(
                f,
                "allocator: cannot provide {bytes} bytes aligned to {align} ({available} bytes available)"
            ),
            Error::NonFinite { op, arg, batch_index } => write!(
                f,
                "{op}: argument `{arg}` contains NaN or infinity (batch item {batch_index})"
            ),
            Error::NotPositiveDefinite { op, arg, batch_index } => write!(
                f,
                "{op}: argument `{arg}` is not positive definite (batch item {batch_index})"
            ),
            Error::OutsideDomain { op, arg, batch_index } => write!(
                f,
                "{op}: argument `{arg}` is real with an eigenvalue on the negative real axis, where the \
                 function has no real value (batch item {batch_index}); pass it as a complex matrix"
            ),
            Error::OutOfRange { op, arg, batch_index, why } => {
                write!(f, "{op}: argument `{arg}` is out of this dtype's range: {why} (batch item {batch_index})")
            }
            Error::Singular { op, arg, batch_index, rcond } => {
                if *rcond > 0.0 {
                    write!(
                        f,
                        "{op}: argument `{arg}` is singular to working precision \
                         (rcond {rcond:.1e} < n·ε, batch item {batch_index})"
                    )
                } else {
                    write!(f, "{op}: argument `{arg}` is singular (batch item {batch_index})")
                }
            }
            Error::NonConvergence { op, batch_index } => {
                write!(f, "{op}: the algorithm did not converge (batch item {batch_index})")
            }
            Error::Unsupported { op, provider, why } => {
                write!(f, "{op}: not supported by provider {provider}: {why}")
            }
            Error::ProviderUnavailable { provider, why } => {
                write!(f, "provider {provider} is unavailable: {why}")
            }
            Error::Capacity { what, capacity } => {
                write!(f, "{what}: capacity {capacity} exceeded (raise the const capacity parameter)")
            }
            Error::Program { why } => write!(f, "program: {why}"),
            Error::UnsupportedDerivative { op, output } => {
                write!(f, "{op}: the derivative of output `{output}` is not implemented")
            }
            Error::NotDifferentiable { op, output, why } => {
                write!(f, "{op}: output `{output}` is not differentiable here: {why}")
            }
            Error::NearTie { op, pair: (i, j), gap, estimate, suggestion } if estimate.is_infinite() => write!(
                f,
                "{op}: values {i} and {j} are tied (gap {gap:.1e}) and the cotangent couples their vectors: \
                 the derivative there is not determined by the {op} factors' cotangents; {suggestion}"
            ),
            Error::NearTie { op, pair: (i, j), gap, estimate, suggestion } => write!(
                f,
                "{op}: values {i} and {j} are {gap:.1e} apart and the cotangent couples their vectors: \
                 the gradient through the {op} factors would carry an estimated relative error of {estimate:.1e}; \
                 {suggestion}"
            ),
        }
    }
}

impl core::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn rule_errors_name_the_differentiated_op() {
        let qr = Origin::new("qr", &["a"]);
        let solve = Origin::new("triangular_solve", &["a", "b"]);
        let e = Error::Singular { op: "triangular_solve", arg: "a", batch_index: 1, rcond: 0.5 };
        assert_eq!(e.in_rule_of(qr), Error::Singular { op: "qr", arg: "a", batch_index: 1, rcond: 0.5 });
        // An argument the origin lacks becomes its first.
        let e = Error::OutOfRange { op: "triangular_solve", arg: "b", batch_index: 0, why: "w" };
        assert_eq!(e.in_rule_of(qr), Error::OutOfRange { op: "qr", arg: "a", batch_index: 0, why: "w" });
        let e = Error::OutOfRange { op: "qr", arg: "a", batch_index: 0, why: "w" };
        assert_eq!(
            e.in_rule_of(solve),
            Error::OutOfRange { op: "triangular_solve", arg: "a", batch_index: 0, why: "w" }
        );
        // Errors not about values keep the op that raised them.
        let e = Error::NonFinite { op: "triangular_solve", arg: "b", batch_index: 0 };
        assert_eq!(e.clone().in_rule_of(qr), e);
        let e = Error::NotDifferentiable { op: "svd", output: "u", why: "w" };
        assert_eq!(e.clone().in_rule_of(qr), e);
    }

    #[test]
    fn kind_and_op_name_the_variant_and_its_op() {
        let e = Error::NonConvergence { op: "svd", batch_index: 2 };
        assert_eq!((e.kind(), e.op()), ("NonConvergence", Some("svd")));
        let e = Error::Unsupported { op: "eigh", provider: "cpu", why: "off" };
        assert_eq!((e.kind(), e.op()), ("Unsupported", Some("eigh")));
        let e = Error::Capacity { what: "program instructions", capacity: 4 };
        assert_eq!((e.kind(), e.op()), ("Capacity", None));
        // The kind is the variant's name, as `Debug` writes it.
        for e in [
            Error::Program { why: "x" },
            Error::OutOfMemory { bytes: 1, align: 1, available: 0 },
            Error::NotDifferentiable { op: "svd", output: "u", why: "w" },
            Error::Singular { op: "solve", arg: "a", batch_index: 0, rcond: 0.0 },
            Error::OutOfRange { op: "expm", arg: "a", batch_index: 0, why: "w" },
        ] {
            assert!(format!("{e:?}").starts_with(e.kind()), "{e:?}");
        }
    }
}
