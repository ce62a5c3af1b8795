//! [`ApiError`]: what a call reports — the library's own [`Error`] (its
//! not-differentiable report included) or a bad argument of this API.

use lindiff_core::Error;

/// An error of the wasm API.
#[derive(Clone, Debug, PartialEq)]
pub enum ApiError {
    /// The library's error, unchanged (e.g. [`Error::NotDifferentiable`]
    /// naming op, output and why).
    Lindiff(Error),
    /// A bad argument of this API (shape, loss parameter, option).
    Argument {
        /// The function or type.
        op: &'static str,
        /// The argument.
        arg: &'static str,
        /// What is wrong, with the offending values.
        why: String,
    },
}

impl ApiError {
    pub(crate) fn argument(op: &'static str, arg: &'static str, why: String) -> ApiError {
        ApiError::Argument { op, arg, why }
    }

    /// `Some((op, output, why))` when this is the library's
    /// not-differentiable report.
    pub fn not_differentiable(&self) -> Option<(&'static str, &'static str, &'static str)> {
        match self {
            ApiError::Lindiff(Error::NotDifferentiable { op, output, why }) => Some((op, output, why)),
            _ => None,
        }
    }

    /// A short machine-readable kind: `NotDifferentiable`, `InvalidArgument`
    /// or `Lindiff` (any other library error).
    pub fn kind(&self) -> &'static str {
        match self {
            ApiError::Lindiff(Error::NotDifferentiable { .. }) => "NotDifferentiable",
            ApiError::Lindiff(_) => "Lindiff",
            ApiError::Argument { .. } => "InvalidArgument",
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
            ApiError::Argument { op, arg, why } => write!(f, "{op}: argument `{arg}`: {why}"),
        }
    }
}

impl std::error::Error for ApiError {}
