//! The second-order harness: Hessian-vector products by forward over
//! reverse on both faces — the eager tape over a forward-mode face, and
//! [`hvp`] of the traced program — and by central differences of the gradient.

use crate::ad::{eager_grad, run_program, trace, Input, Loss};
use crate::dense::Re;
use lindiff_core::ad::{grad, hvp, Dual, DualTensor, Eager, Tangent};
use lindiff_core::face::direct::Direct;
use lindiff_core::{Element, Host, Provider, RealScalar, Result, Scalar, TensorDesc};

/// H·d for every input (the derivative of the gradient along `ds`) by the
/// eager face over [`Dual`]: the tape's backward pass runs on tensors that
/// carry tangents, so every op of the gradient propagates them.
///
/// # Errors
/// The loss's or a rule's error (an undefined second derivative included).
pub fn eager_hvp<T: Scalar + Element, P: Provider<Memory = Host>, L: Loss>(
    provider: P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
) -> Result<Vec<Vec<T>>> {
    let mut face: Eager<Dual<Direct<P>>> = Eager::new(Dual::new(Direct::new(provider)));
    let mut vars = Vec::new();
    for (x, d) in xs.iter().zip(ds) {
        let primal = face.inner().inner().tensor(&x.dims, &x.data)?;
        let tangent = face.inner().inner().tensor(&d.dims, &d.data)?;
        vars.push(face.watch(DualTensor { primal, tangent: Tangent::Value(tangent) })?);
    }
    let l = loss.eval(&mut face, &vars)?;
    let refs: Vec<_> = vars.iter().collect();
    let grads = face.backward(&l, &refs)?;
    grads
        .iter()
        .zip(xs)
        .map(|(g, x)| match &g.tangent {
            Tangent::Value(t) => t.to_vec::<T>(),
            Tangent::Zero => Ok(vec![T::zero(); x.data.len()]),
            Tangent::Undefined(e) => Err(e.clone()),
        })
        .collect()
}

/// H·d for every input by the traced face: [`hvp`] (`jvp` of `grad`), compiled
/// and run on a pool allocator.
///
/// # Errors
/// As [`eager_hvp`]; the interpreter's.
pub fn traced_hvp<T: Scalar + Element, P: Provider<Memory = Host>, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
) -> Result<Vec<Vec<T>>> {
    let (program, mut descs) = trace(loss, xs)?;
    let wrt: Vec<usize> = (0..xs.len()).collect();
    let h = hvp(&program, &wrt)?;
    descs.extend(descs.clone());
    let all: Vec<Input<T>> = xs.iter().chain(ds).cloned().collect();
    let outs = run_program(provider, &h, &descs, &all)?;
    // Results: the loss, its gradients, then the tangent of each.
    Ok(outs[outs.len() - xs.len()..].to_vec())
}

/// The derivative of the gradient along `ds` by central differences with
/// one Richardson step: D(h) = (∇L(x + h·d) − ∇L(x − h·d)) / 2h has error
/// c₂h² + O(h⁴), so (4·D(h/2) − D(h)) / 3 has O(h⁴); the gradients by the
/// eager face.
///
/// # Panics
/// When the gradient fails at any point.
pub fn fd_hvp<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
    h: f64,
) -> Vec<Vec<T>> {
    let at = |step: f64| {
        let moved: Vec<Input<T>> = xs.iter().zip(ds).map(|(x, d)| x.axpy(step, d)).collect();
        eager_grad(provider.clone(), loss, &moved).unwrap_or_else(|e| panic!("{}: {e}", loss.name()))
    };
    let central = |h: f64| -> Vec<Vec<T>> {
        let (plus, minus) = (at(h), at(-h));
        let half = Re::<T>::from_f64(0.5 / h);
        plus.iter()
            .zip(&minus)
            .map(|(p, m)| p.iter().zip(m).map(|(&a, &b)| (a - b).scale(half)).collect())
            .collect()
    };
    let (coarse, fine) = (central(h), central(h / 2.0));
    let (four, third) = (Re::<T>::from_f64(4.0), Re::<T>::from_f64(1.0 / 3.0));
    fine.iter()
        .zip(&coarse)
        .map(|(f, c)| f.iter().zip(c).map(|(&a, &b)| (a.scale(four) - b).scale(third)).collect())
        .collect()
}

/// max over inputs of ‖x_i − y_i‖∞ / max over inputs of ‖y_i‖∞.
pub fn relative_error<T: Scalar>(x: &[Vec<T>], y: &[Vec<T>]) -> f64 {
    let inf = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0f64, f64::max);
    let diff =
        inf(&mut x.iter().zip(y).flat_map(|(a, b)| a.iter().zip(b).map(|(&p, &q)| (p - q).abs().to_f64())));
    let scale = inf(&mut y.iter().flatten().map(|v| v.abs().to_f64()));
    diff / scale.max(f64::MIN_POSITIVE)
}

/// Asserts that both faces give the same bits.
///
/// # Panics
/// On the first element that differs.
pub fn assert_same_bits<T: Scalar>(name: &str, eager: &[Vec<T>], traced: &[Vec<T>]) {
    for (i, (e, t)) in eager.iter().zip(traced).enumerate() {
        for (k, (a, b)) in e.iter().zip(t).enumerate() {
            assert_eq!(
                crate::ad::bits(a),
                crate::ad::bits(b),
                "{name}: input {i}, element {k}: eager {a:?}, traced {b:?}"
            );
        }
    }
}

/// H·d for every input by reverse over reverse: the VJP program of the
/// gradient program, with cotangent 0 for the loss and `ds` for the
/// gradients (H is symmetric under ⟨X, Y⟩ = Re tr(XᴴY), so Hᵀd = Hd).
///
/// # Errors
/// As [`traced_hvp`].
pub fn reverse_hvp<T: Scalar + Element, P: Provider<Memory = Host>, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
) -> Result<Vec<Vec<T>>> {
    let (program, mut descs) = trace(loss, xs)?;
    let wrt: Vec<usize> = (0..xs.len()).collect();
    let g = lindiff_core::ad::vjp(&grad(&program, &wrt)?, &wrt)?;
    let loss_meta = program.meta(program.results()[0])?.clone();
    let zero = Input { dims: vec![], data: vec![T::zero()] };
    descs.push(TensorDesc::contiguous(loss_meta).expect("a scalar"));
    descs.extend(descs[..xs.len()].to_vec());
    let all: Vec<Input<T>> = xs.iter().cloned().chain([zero]).chain(ds.iter().cloned()).collect();
    let outs = run_program(provider, &g, &descs, &all)?;
    Ok(outs[outs.len() - xs.len()..].to_vec())
}
