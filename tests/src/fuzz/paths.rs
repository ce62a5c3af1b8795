//! The three ways the fuzz runs a case — the direct face, `call::run_into`
//! with caller buffers, the eager face's gradient — each under
//! `catch_unwind`, with the inputs compared bit for bit afterwards.

use super::cases::{Arg, ArgData, Case, Composite, Target};
use super::check::{check, gradient_checked, Out, OutData, C};
use super::Outcome;
use crate::host::{run_filled, HostTensor};
use crate::TestProvider;
use lindiff_core::ad::Eager;
use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::face::{Face, Ops};
use lindiff_core::prim::UnaryOp;
use lindiff_core::{DType, Element, Linalg, RealScalar, Result, Scalar};
use num_complex::Complex;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `case` through every path that applies: all three for an op or
/// primitive, the direct and eager faces for a composite.
pub fn run_all<T: Scalar + Element, P: TestProvider>(
    provider: P,
    case: &Case<T>,
) -> Vec<(&'static str, Outcome)>
where
    <T as Scalar>::Real: Element,
{
    let mut all = vec![("direct", guarded(|| direct(provider, case)))];
    if matches!(case.target, Target::Op(_)) {
        all.push(("run_into", guarded(|| run_into(provider, case))));
    }
    all.push(("gradient", guarded(|| gradient(provider, case))));
    all
}

/// `f()`, or the panic's message.
fn guarded(f: impl FnOnce() -> Outcome) -> Outcome {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let msg = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "(non-string panic)".into());
        Outcome::Panic(msg)
    })
}

/// The bytes of a float argument's elements (NaN-exact comparisons). As
/// stored, not widened: a NaN's payload after an f32 → f64 conversion is
/// not specified by Rust (Miri picks it at random, and reported unchanged
/// f32 NaN inputs as modified).
fn bits<T: Element>(data: &[T]) -> Vec<u8> {
    lindiff_core::HostData::from_slice(data).bytes().to_vec()
}

/// A direct-face tensor of `arg`.
fn tensor<T: Element, P: TestProvider>(face: &mut Direct<P>, arg: &Arg<T>) -> Result<Tensor> {
    match &arg.data {
        ArgData::Float(d) => face.tensor(&arg.dims, d),
        ArgData::Int(d) => face.tensor(&arg.dims, d),
    }
}

/// `true` when `t` still holds `arg`'s elements, bit for bit.
fn unchanged<T: Scalar + Element>(t: &Tensor, arg: &Arg<T>) -> bool {
    match &arg.data {
        ArgData::Float(d) => t.to_vec::<T>().is_ok_and(|v| bits(&v) == bits(d)),
        ArgData::Int(d) => t.to_vec::<i64>().is_ok_and(|v| &v == d),
    }
}

/// An output widened for the checks, by its dtype.
fn widen(dims: &[usize], dtype: DType, f32s: impl FnOnce(DType) -> Option<OutData>) -> Option<Out> {
    Some(Out { dims: dims.to_vec(), data: f32s(dtype)? })
}

fn out_of_tensor(t: &Tensor) -> Option<Out> {
    widen(t.dims(), t.meta().dtype, |dtype| {
        Some(match dtype {
            DType::F32 => {
                OutData::Float(t.to_vec::<f32>().ok()?.iter().map(|&x| C::new(f64::from(x), 0.0)).collect())
            }
            DType::F64 => OutData::Float(t.to_vec::<f64>().ok()?.iter().map(|&x| C::new(x, 0.0)).collect()),
            DType::C32 => OutData::Float(
                t.to_vec::<Complex<f32>>()
                    .ok()?
                    .iter()
                    .map(|x| C::new(f64::from(x.re), f64::from(x.im)))
                    .collect(),
            ),
            DType::C64 => OutData::Float(t.to_vec::<Complex<f64>>().ok()?),
            DType::I64 => OutData::Int(t.to_vec::<i64>().ok()?),
        })
    })
}

fn out_of_host(t: &HostTensor) -> Option<Out> {
    widen(t.dims(), t.desc.meta.dtype, |dtype| {
        Some(match dtype {
            DType::F32 => {
                OutData::Float(t.to_vec::<f32>().iter().map(|&x| C::new(f64::from(x), 0.0)).collect())
            }
            DType::F64 => OutData::Float(t.to_vec::<f64>().iter().map(|&x| C::new(x, 0.0)).collect()),
            DType::C32 => OutData::Float(
                t.to_vec::<Complex<f32>>().iter().map(|x| C::new(f64::from(x.re), f64::from(x.im))).collect(),
            ),
            DType::C64 => OutData::Float(t.to_vec::<Complex<f64>>()),
            DType::I64 => OutData::Int(t.to_vec::<i64>()),
        })
    })
}

/// A composite on any face.
fn composite<F: Linalg + ?Sized>(f: &mut F, comp: Composite, x: &[&F::Tensor]) -> Result<F::Tensor> {
    match comp {
        Composite::Norm(kind) => f.norm(x[0], kind),
        Composite::Cond(kind) => f.cond(x[0], kind),
        Composite::Inv(options) => f.inv_with_options(x[0], options),
        Composite::Solve(options) => f.solve_with_options(x[0], x[1], options),
        Composite::MatrixPower(k) => f.matrix_power(x[0], k),
        Composite::Vecdot => f.vecdot(x[0], x[1]),
    }
}

/// The outcome of a result whose inputs came back `same`.
fn verdict<T: Scalar>(case: &Case<T>, same: bool, result: Result<Vec<Option<Out>>>) -> Outcome {
    if !same {
        return Outcome::Violation("an input was modified".into());
    }
    match result {
        Ok(outs) => match check(case, &outs) {
            Ok(()) => Outcome::Ok,
            Err(what) => Outcome::Violation(what),
        },
        Err(e) => Outcome::Error(e.kind()),
    }
}

fn direct<T: Scalar + Element, P: TestProvider>(provider: P, case: &Case<T>) -> Outcome {
    let mut face = Direct::new(provider);
    let tensors: Result<Vec<Tensor>> = case.args.iter().map(|a| tensor(&mut face, a)).collect();
    let tensors = match tensors {
        Ok(t) => t,
        Err(e) => return Outcome::Error(e.kind()),
    };
    let refs: Vec<&Tensor> = tensors.iter().collect();
    let result = match &case.target {
        Target::Op(op) => face
            .apply(op.clone(), &refs)
            .map(|outs| outs.iter().map(|o| o.as_ref().and_then(out_of_tensor)).collect()),
        Target::Composite(c) => composite(&mut face, *c, &refs).map(|t| vec![out_of_tensor(&t)]),
    };
    let same = tensors.iter().zip(&case.args).all(|(t, a)| unchanged(t, a));
    verdict(case, same, result)
}

fn run_into<T: Scalar + Element, P: TestProvider>(provider: P, case: &Case<T>) -> Outcome {
    let Target::Op(op) = &case.target else { return Outcome::Ok };
    let inputs: Vec<HostTensor> = case
        .args
        .iter()
        .map(|a| match &a.data {
            ArgData::Float(d) => HostTensor::new(&a.dims, d),
            ArgData::Int(d) => HostTensor::new(&a.dims, d),
        })
        .collect();
    let before: Vec<Vec<u8>> = inputs.iter().map(|t| t.raw_bytes().to_vec()).collect();
    let refs: Vec<&HostTensor> = inputs.iter().collect();
    let result = run_filled(&provider, op.clone(), &refs, Some(0xA5))
        .map(|outs| outs.iter().map(|o| o.as_ref().and_then(out_of_host)).collect());
    let same = inputs.iter().zip(&before).all(|(t, b)| t.raw_bytes() == b.as_slice());
    verdict(case, same, result)
}

/// The gradient of Σ Re(first float output) with respect to every float
/// input, on the eager face over the direct one: no panic, a typed error or
/// gradients — never NaN for a finite loss at finite inputs where the
/// gradient is representable ([`gradient_checked`]).
fn gradient<T: Scalar + Element, P: TestProvider>(provider: P, case: &Case<T>) -> Outcome
where
    <T as Scalar>::Real: Element,
{
    let mut face: Eager<Direct<P>> = Eager::new(Direct::new(provider));
    let mut vars = Vec::new();
    let mut watched = Vec::new();
    for arg in &case.args {
        let t = match tensor(face.inner(), arg) {
            Ok(t) => t,
            Err(e) => return Outcome::Error(e.kind()),
        };
        let v = if matches!(arg.data, ArgData::Float(_)) {
            match face.watch(t) {
                Ok(v) => {
                    watched.push(v.clone());
                    v
                }
                Err(e) => return Outcome::Error(e.kind()),
            }
        } else {
            Eager::<Direct<P>>::constant(t)
        };
        vars.push(v);
    }
    let refs: Vec<_> = vars.iter().collect();
    let outputs = match &case.target {
        Target::Op(op) => face.apply(op.clone(), &refs).map(|o| o.into_iter().collect::<Vec<_>>()),
        Target::Composite(c) => composite(&mut face, *c, &refs).map(|t| vec![Some(t)]),
    };
    let outputs = match outputs {
        Ok(o) => o,
        Err(e) => return Outcome::Error(e.kind()),
    };
    let Some(first) = outputs.iter().flatten().find(|v| {
        let meta = face.meta(v);
        meta.dtype.is_float()
    }) else {
        return Outcome::Ok;
    };
    let loss = if face.meta(first).dtype.is_complex() {
        face.unary(UnaryOp::Real, first)
    } else {
        Ok(first.clone())
    };
    let loss = match loss {
        Ok(l) => l,
        Err(e) => return Outcome::Error(e.kind()),
    };
    if watched.is_empty() || !loss.is_tracked() {
        return Outcome::Ok;
    }
    let wrt: Vec<_> = watched.iter().collect();
    match face.backward(&loss, &wrt) {
        Ok(grads) => {
            let loss_finite =
                loss.value().to_vec::<<T as Scalar>::Real>().is_ok_and(|v| v.iter().all(|x| x.is_finite()));
            let nan = grads.iter().any(|g| {
                g.to_vec::<T>()
                    .is_ok_and(|v| v.iter().any(|x| x.re().to_f64().is_nan() || x.im().to_f64().is_nan()))
            });
            let inputs_finite = case.args.iter().all(|a| match &a.data {
                ArgData::Float(d) => d.iter().all(|x| x.is_finite()),
                ArgData::Int(_) => true,
            });
            if inputs_finite && loss_finite && nan && gradient_checked(case) {
                Outcome::Violation("a NaN gradient of a finite loss at finite inputs".into())
            } else {
                Outcome::Ok
            }
        }
        Err(e) => Outcome::Error(e.kind()),
    }
}
