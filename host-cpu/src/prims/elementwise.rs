//! Elementwise primitives: one-input maps (some change the dtype between
//! real and complex), two-input arithmetic and scaling by a real constant.
//! Every one is a walk over the output with the inputs' strided views.

use super::strided::{self, View};
use lindiff_core::prim::{BinaryOp, UnaryOp};
use lindiff_core::{Host, Input, Output, RealScalar, Result, Scalar};
use num_complex::Complex;

/// The complex dtype of the same precision (`ToComplex`'s output).
pub(super) trait Complexify: Scalar {
    /// `Complex<Self::Real>`.
    type Complex: Scalar<Real = Self::Real>;
}

impl Complexify for f32 {
    type Complex = Complex<f32>;
}
impl Complexify for f64 {
    type Complex = Complex<f64>;
}
impl Complexify for Complex<f32> {
    type Complex = Complex<f32>;
}
impl Complexify for Complex<f64> {
    type Complex = Complex<f64>;
}

/// `y[i] = f(x[i])` over the whole tensor, any rank and layout.
fn map<T: Scalar, U: Scalar>(
    op: &'static str,
    input: &Input<'_, Host>,
    out: &mut Output<'_, '_, Host>,
    f: impl Fn(T) -> U,
) -> Result<()> {
    let x = strided::input::<T>(op, "x", input)?;
    strided::write_walk(op, "y", out, [View::of(input.desc)], |p| f(x[p.offsets[0]]))
}

/// A one-input map; `T` is the input's type (the output's follows from the
/// map: real parts and moduli are `T::Real`, `ToComplex` gives the complex
/// type). `Exp`/`Log` are real-only (checked by core), so `x.re()` is `x`.
pub(super) fn unary<T: Complexify>(
    op: UnaryOp,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    let (name, x) = (op.name(), &inputs[0]);
    match op {
        UnaryOp::Neg => map(name, x, out, |v: T| -v),
        UnaryOp::Conj => map(name, x, out, |v: T| Scalar::conj(v)),
        UnaryOp::Real => map(name, x, out, |v: T| v.re()),
        UnaryOp::Imag => map(name, x, out, |v: T| v.im()),
        UnaryOp::ToComplex => map(name, x, out, |v: T| T::Complex::from_parts(v.re(), v.im())),
        UnaryOp::MulI => map(name, x, out, |v: T| T::from_parts(-v.im(), v.re())),
        UnaryOp::Abs => map(name, x, out, |v: T| Scalar::abs(v)),
        UnaryOp::Abs2 => map(name, x, out, |v: T| v.abs2()),
        UnaryOp::Sqrt => map(name, x, out, |v: T| Scalar::sqrt(v)),
        UnaryOp::Recip => map(name, x, out, |v: T| T::one() / v),
        UnaryOp::Exp => map(name, x, out, |v: T| T::from_real(RealScalar::exp(v.re()))),
        UnaryOp::Log => map(name, x, out, |v: T| T::from_real(RealScalar::ln(v.re()))),
        UnaryOp::Copy => map(name, x, out, |v: T| v),
    }
}

/// `z[i] = x[i] ∘ y[i]` (same shape and dtype, any layouts).
pub(super) fn binary<T: Scalar>(
    op: BinaryOp,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    let name = op.name();
    let x = strided::input::<T>(name, "x", &inputs[0])?;
    let y = strided::input::<T>(name, "y", &inputs[1])?;
    let f: fn(T, T) -> T = match op {
        BinaryOp::Add => |a, b| a + b,
        BinaryOp::Sub => |a, b| a - b,
        BinaryOp::Mul => |a, b| a * b,
        BinaryOp::Div => |a, b| a / b,
    };
    let views = [View::of(inputs[0].desc), View::of(inputs[1].desc)];
    strided::write_walk(name, "z", out, views, |p| f(x[p.offsets[0]], y[p.offsets[1]]))
}

/// `y = factor · x` (the factor rounded to `T`'s precision).
pub(super) fn scale<T: Scalar>(
    factor: f64,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    let factor = T::Real::from_f64(factor);
    map("scale", &inputs[0], out, |v: T| v.scale(factor))
}
