//! Element types: the [`DType`] tag that shapes and errors talk about, and the
//! [`Element`] marker for the Rust types whose bytes may be read as those tags.

use core::fmt;
use num_complex::Complex;

/// The element type of a tensor.
///
/// Floating-point dtypes carry matrices; `I64` carries pivots, permutations and
/// ranks, which are never differentiable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit IEEE float.
    F32,
    /// 64-bit IEEE float.
    F64,
    /// Complex number with `f32` parts (`num_complex::Complex<f32>`).
    C32,
    /// Complex number with `f64` parts (`num_complex::Complex<f64>`).
    C64,
    /// 64-bit signed integer (pivots, permutations, ranks).
    I64,
}

impl DType {
    /// Bytes per element.
    pub const fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 | DType::C32 | DType::I64 => 8,
            DType::C64 => 16,
        }
    }

    /// Required alignment of one element, in bytes.
    pub const fn align(self) -> usize {
        match self {
            DType::F32 | DType::C32 => 4,
            DType::F64 | DType::C64 | DType::I64 => 8,
        }
    }

    /// `true` for `C32` and `C64`.
    pub const fn is_complex(self) -> bool {
        matches!(self, DType::C32 | DType::C64)
    }

    /// `true` for the four floating-point dtypes (real or complex).
    pub const fn is_float(self) -> bool {
        !matches!(self, DType::I64)
    }

    /// `true` for `F32` and `F64`: the dtypes whose conjugate is the value
    /// itself.
    pub const fn is_real_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// The real dtype of the same precision: `C64 → F64`, `C32 → F32`; real
    /// dtypes and `I64` map to themselves.
    pub const fn real(self) -> DType {
        match self {
            DType::C32 => DType::F32,
            DType::C64 => DType::F64,
            other => other,
        }
    }

    /// The complex dtype of the same precision: `F64 → C64`, `F32 → C32`;
    /// complex dtypes and `I64` map to themselves.
    pub const fn complex(self) -> DType {
        match self {
            DType::F32 => DType::C32,
            DType::F64 => DType::C64,
            other => other,
        }
    }

    /// Lower-case name as used in messages (`"f64"`, `"c32"`, …).
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C32 => "c32",
            DType::C64 => "c64",
            DType::I64 => "i64",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Rust type whose values are stored as the elements of a tensor of
/// dtype [`Element::DTYPE`].
///
/// # Safety
/// Implementors must be plain data: no padding bytes, no invalid bit
/// patterns, `size_of::<Self>() == DTYPE.size()` and
/// `align_of::<Self>() == DTYPE.align()`. Host memory code reinterprets byte
/// buffers as slices of `Self` relying on this.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The dtype tag of this type.
    const DTYPE: DType;
}

// SAFETY: IEEE floats and i64 have no padding and every bit pattern is valid.
unsafe impl Element for f32 {
    const DTYPE: DType = DType::F32;
}
// SAFETY: as above.
unsafe impl Element for f64 {
    const DTYPE: DType = DType::F64;
}
// SAFETY: as above.
unsafe impl Element for i64 {
    const DTYPE: DType = DType::I64;
}
// SAFETY: `Complex<T>` is `#[repr(C)] { re: T, im: T }`: two floats, no padding.
unsafe impl Element for Complex<f32> {
    const DTYPE: DType = DType::C32;
}
// SAFETY: as above.
unsafe impl Element for Complex<f64> {
    const DTYPE: DType = DType::C64;
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, size_of};

    fn layout_matches<T: Element>() {
        assert_eq!(size_of::<T>(), T::DTYPE.size());
        assert_eq!(align_of::<T>(), T::DTYPE.align());
    }

    #[test]
    fn element_layouts_match_their_dtype() {
        layout_matches::<f32>();
        layout_matches::<f64>();
        layout_matches::<i64>();
        layout_matches::<Complex<f32>>();
        layout_matches::<Complex<f64>>();
    }

    #[test]
    fn real_and_complex_counterparts() {
        assert_eq!(DType::C64.real(), DType::F64);
        assert_eq!(DType::F32.complex(), DType::C32);
        assert_eq!(DType::I64.real(), DType::I64);
        assert!(!DType::I64.is_float());
    }
}
