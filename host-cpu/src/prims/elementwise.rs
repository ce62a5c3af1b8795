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
    #[cfg(feature = "std")]
    return map_body(op, input, out, &f);
    #[cfg(not(feature = "std"))]
    return map_body::<T, U, dyn Fn(T) -> U>(op, input, out, &f);
}

/// [`map`]'s body; see [`strided::write_walk`] for why no-std builds call
/// it with a `dyn` map.
#[cfg_attr(feature = "std", inline(always))]
#[cfg_attr(not(feature = "std"), inline(never))]
fn map_body<T: Scalar, U: Scalar, F: Fn(T) -> U + ?Sized>(
    op: &'static str,
    input: &Input<'_, Host>,
    out: &mut Output<'_, '_, Host>,
    f: &F,
) -> Result<()> {
    let x = strided::input::<T>(op, "x", input)?;
    if let Some(xs) = strided::contiguous(input.desc, x) {
        return strided::write_map(op, "y", out, xs, f);
    }
    strided::write_walk(op, "y", out, [View::of(input.desc)], |p| f(x[p.offsets[0]]))
}

/// A one-input map; `T` is the input's type (the output's follows from the
/// map: real parts, moduli and the nonzero mask are `T::Real`, `ToComplex`
/// gives the complex type). `Exp`/`Log` are real-only (checked by core), so `x.re()` is `x`.
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
        UnaryOp::NonzeroMask => map(name, x, out, |v: T| {
            // Compare the parts, not |v|², which underflows to 0 for tiny v.
            let zero = <T::Real as Scalar>::zero();
            if v.re() == zero && v.im() == zero {
                zero
            } else {
                <T::Real as Scalar>::one()
            }
        }),
    }
}

/// `z[i] = x[i] ∘ y[i]` (same shape and dtype, any layouts).
pub(super) fn binary<T: Scalar>(
    op: BinaryOp,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    match op {
        BinaryOp::Add => zip_with(op.name(), inputs, out, |a: T, b| a + b),
        BinaryOp::Sub => zip_with(op.name(), inputs, out, |a: T, b| a - b),
        BinaryOp::Mul => zip_with(op.name(), inputs, out, |a: T, b| a * b),
        BinaryOp::Div => zip_with(op.name(), inputs, out, |a: T, b| a / b),
    }
}

/// `z[i] = f(x[i], y[i])`: a slice loop when both inputs are contiguous, a
/// strided walk otherwise (with `std`, each map is inlined into both).
fn zip_with<T: Scalar>(
    name: &'static str,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
    f: impl Fn(T, T) -> T,
) -> Result<()> {
    #[cfg(feature = "std")]
    return zip_body(name, inputs, out, &f);
    #[cfg(not(feature = "std"))]
    return zip_body::<T, dyn Fn(T, T) -> T>(name, inputs, out, &f);
}

/// [`zip_with`]'s body; see [`strided::write_walk`] for why no-std builds
/// call it with a `dyn` map.
#[cfg_attr(feature = "std", inline(always))]
#[cfg_attr(not(feature = "std"), inline(never))]
fn zip_body<T: Scalar, F: Fn(T, T) -> T + ?Sized>(
    name: &'static str,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
    f: &F,
) -> Result<()> {
    let x = strided::input::<T>(name, "x", &inputs[0])?;
    let y = strided::input::<T>(name, "y", &inputs[1])?;
    let fast = strided::contiguous(inputs[0].desc, x).zip(strided::contiguous(inputs[1].desc, y));
    if let Some((xs, ys)) = fast {
        return strided::write_zip(name, "z", out, (xs, ys), f);
    }
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
    map("scale", &inputs[0], out, move |v: T| v.scale(factor))
}
