//! [`ApiError`]: what a call reports — the library's own [`Error`] (its
//! not-differentiable and near-tie reports included) or a bad argument of
//! this API — and the structured fields JS sees on a thrown `LindiffError`
//! ([`ApiError::kind`], [`ApiError::op`], [`ApiError::argument`],
//! [`ApiError::shape`]).

use lindiff_core::Error;

/// An error of the wasm API.
#[derive(Clone, Debug, PartialEq)]
pub enum ApiError {
    /// The library's error, unchanged (e.g. [`Error::NotDifferentiable`]
    /// naming op, output and why).
    Lindiff(Error),
    /// A bad argument of this API (shape, loss parameter, option, a
    /// cotangent that does not fit its output).
    Argument {
        /// The function or type.
        op: &'static str,
        /// The argument.
        arg: &'static str,
        /// The offending shape, when the argument has one.
        shape: Option<Vec<usize>>,
        /// What is wrong, with the offending values.
        why: String,
    },
}

impl ApiError {
    pub(crate) fn argument(op: &'static str, arg: &'static str, why: String) -> ApiError {
        ApiError::Argument { op, arg, shape: None, why }
    }

    /// An argument error that names the argument's offending shape.
    pub(crate) fn argument_shape(
        op: &'static str,
        arg: &'static str,
        shape: &[usize],
        why: String,
    ) -> ApiError {
        ApiError::Argument { op, arg, shape: Some(shape.to_vec()), why }
    }

    /// `Some((op, output, why))` when this is the library's
    /// not-differentiable report.
    pub fn not_differentiable(&self) -> Option<(&'static str, &'static str, &'static str)> {
        match self {
            ApiError::Lindiff(Error::NotDifferentiable { op, output, why }) => Some((op, output, why)),
            _ => None,
        }
    }

    /// `true` for the library's reports about one point rather than about
    /// the call: not differentiable here, or too near a tie for the
    /// factors' gradient (a batch redoes its matrices one by one on these).
    pub fn is_report(&self) -> bool {
        matches!(self, ApiError::Lindiff(Error::NotDifferentiable { .. } | Error::NearTie { .. }))
    }

    /// A short machine-readable kind: `InvalidArgument` for this API's
    /// argument errors, else the library's variant name
    /// ([`Error::kind`]: `NotDifferentiable`, `NearTie`, `NotSquare`,
    /// `DimMismatch`, `NonFinite`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            ApiError::Lindiff(e) => e.kind(),
            ApiError::Argument { .. } => "InvalidArgument",
        }
    }

    /// The op (or API function) the error names, `""` when it names none.
    pub fn op(&self) -> &'static str {
        match self {
            ApiError::Lindiff(e) => e.op().unwrap_or(""),
            ApiError::Argument { op, .. } => op,
        }
    }

    /// The argument the error names, if any.
    pub fn argument_name(&self) -> Option<&'static str> {
        match self {
            ApiError::Argument { arg, .. } => Some(arg),
            ApiError::Lindiff(e) => match e {
                Error::Rank { arg, .. }
                | Error::NotSquare { arg, .. }
                | Error::DimMismatch { arg, .. }
                | Error::BatchMismatch { arg, .. }
                | Error::ShapeMismatch { arg, .. }
                | Error::OutOfBounds { arg, .. }
                | Error::DType { arg, .. }
                | Error::Empty { arg, .. }
                | Error::Overflow { arg, .. }
                | Error::TooManyDims { arg, .. }
                | Error::Buffer { arg, .. }
                | Error::NonFinite { arg, .. }
                | Error::NotPositiveDefinite { arg, .. }
                | Error::OutsideDomain { arg, .. }
                | Error::OutOfRange { arg, .. }
                | Error::Singular { arg, .. } => Some(arg),
                _ => None,
            },
        }
    }

    /// The offending shape the error names, if any (dims, rows first).
    pub fn shape(&self) -> Option<Vec<usize>> {
        match self {
            ApiError::Argument { shape, .. } => shape.clone(),
            ApiError::Lindiff(e) => match e {
                Error::Rank { shape, .. }
                | Error::NotSquare { shape, .. }
                | Error::DimMismatch { shape, .. }
                | Error::BatchMismatch { shape, .. }
                | Error::ShapeMismatch { shape, .. }
                | Error::OutOfBounds { shape, .. }
                | Error::Empty { shape, .. }
                | Error::Overflow { shape, .. } => Some(shape.dims().to_vec()),
                _ => None,
            },
        }
    }

    /// The output the error names (a not-differentiable report's), if any.
    pub fn output(&self) -> Option<&'static str> {
        match self {
            ApiError::Lindiff(Error::NotDifferentiable { output, .. })
            | ApiError::Lindiff(Error::UnsupportedDerivative { output, .. }) => Some(output),
            _ => None,
        }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> ApiError {
        ApiError::Lindiff(e)
    }
}

impl core::fmt::Display for ApiError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ApiError::Lindiff(e) => write!(f, "{e}"),
            ApiError::Argument { op, arg, why, .. } => write!(f, "{op}: argument `{arg}`: {why}"),
        }
    }
}

impl std::error::Error for ApiError {}
