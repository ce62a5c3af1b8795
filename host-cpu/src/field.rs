//! The scalar bound of every kernel: lindiff's [`Scalar`] and faer's
//! `ComplexField` at once, so one generic kernel serves f32, f64, c32 and c64.

use faer::traits::ComplexField;
use lindiff_core::{DType, Error, Scalar};

/// A dtype faer computes with and lindiff stores.
pub trait Field: Scalar + ComplexField {}
impl<T: Scalar + ComplexField> Field for T {}

/// The error for a dtype this build has no kernels for.
pub(crate) fn dtype_not_built(op: &'static str, dtype: DType) -> Error {
    Error::Unsupported {
        op,
        provider: "cpu",
        why: match dtype {
            DType::I64 => "integer matrices have no kernels",
            DType::F32 => "this build has no f32 kernels (enable feature `f32`)",
            DType::F64 => "this build has no f64 kernels (enable feature `f64`)",
            DType::C32 => "this build has no c32 kernels (enable feature `c32`)",
            DType::C64 => "this build has no c64 kernels (enable feature `c64`)",
        },
    }
}

/// Runs `$body` with the type alias `$T` set to the Rust type of `$dtype`
/// (one arm per dtype feature); other dtypes give `Error::Unsupported`.
macro_rules! with_field {
    ($op:expr, $dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            #[cfg(feature = "f32")]
            lindiff_core::DType::F32 => {
                type $T = f32;
                $body
            }
            #[cfg(feature = "f64")]
            lindiff_core::DType::F64 => {
                type $T = f64;
                $body
            }
            #[cfg(feature = "c32")]
            lindiff_core::DType::C32 => {
                type $T = num_complex::Complex<f32>;
                $body
            }
            #[cfg(feature = "c64")]
            lindiff_core::DType::C64 => {
                type $T = num_complex::Complex<f64>;
                $body
            }
            #[allow(unreachable_patterns)]
            other => Err($crate::field::dtype_not_built($op, other)),
        }
    };
}
pub(crate) use with_field;
