//! Forward mode on any face: [`Dual`] carries a tangent with every tensor
//! and runs each op's JVP rule right after the op. Useful on its own (a
//! directional derivative without building a program) and as the simplest
//! [`Cx`]: every linear op runs at once on the inner face.

use super::cx::{Arg, Cx, Tangent};
use super::rules::{jvp, Primals};
use crate::error::{Error, Result};
use crate::face::{Applied, Face};
use crate::op::MAX_INPUTS;
use crate::provider::Op;
use crate::tensor::TensorMeta;

/// The evaluator rules record into in forward mode: both primal and linear
/// ops run at once on `face`.
pub struct Forward<'f, F: ?Sized> {
    face: &'f mut F,
}

impl<'f, F: Face + ?Sized> Forward<'f, F> {
    /// Forward mode over `face`.
    pub fn new(face: &'f mut F) -> Self {
        Forward { face }
    }
}

impl<F: Face> Cx for Forward<'_, F> {
    type P = F::Tensor;
    type T = F::Tensor;

    fn primal(&mut self) -> &mut dyn Face<Tensor = F::Tensor> {
        self.face
    }

    fn tangent_meta(&self, t: &F::Tensor) -> TensorMeta {
        self.face.meta(t)
    }

    fn linear(&mut self, op: Op, args: &[Arg<'_, F::Tensor, F::Tensor>]) -> Result<F::Tensor> {
        let inputs: heapless::Vec<&F::Tensor, MAX_INPUTS> = args
            .iter()
            .map(|a| match a {
                Arg::P(x) | Arg::T(x) => *x,
            })
            .collect();
        let name = op.name();
        let mut outs = self.face.apply(op, &inputs)?;
        outs.get_mut(0).and_then(Option::take).ok_or(Error::Buffer {
            op: name,
            arg: "output",
            why: "was not produced by the face",
            needed: 1,
            got: 0,
        })
    }
}

/// A tensor of the [`Dual`] face: a primal value and its tangent.
#[derive(Clone, Debug)]
pub struct DualTensor<T> {
    /// The value.
    pub primal: T,
    /// Its derivative along the chosen direction.
    pub tangent: Tangent<T>,
}

/// Forward-mode face: every op also propagates tangents through its rule.
///
/// ```
/// use lindiff_cpu::prelude::*;
/// let mut dual = Dual::new(Direct::new(Cpu::new()));
/// let a = dual.inner().tensor(&[2, 2], &[4.0, 0.0, 0.0, 9.0])?;
/// let da = dual.inner().tensor(&[2, 2], &[1.0, 0.0, 0.0, 0.0])?;
/// let x = DualTensor { primal: a, tangent: Tangent::Value(da) };
/// // L = chol(A) = diag(2, 3); dL = diag(1/4, 0) along dA = e₁e₁ᵀ.
/// let l = dual.cholesky(&x)?;
/// assert!(matches!(l.tangent.value(), Some(t) if t.to_vec::<f64>()? == [0.25, 0.0, 0.0, 0.0]));
/// # Ok::<(), Error>(())
/// ```
pub struct Dual<F> {
    inner: F,
}

impl<F: Face> Dual<F> {
    /// Forward mode over `inner`.
    pub fn new(inner: F) -> Self {
        Dual { inner }
    }

    /// The inner face.
    pub fn inner(&mut self) -> &mut F {
        &mut self.inner
    }

    /// A constant (zero tangent).
    pub fn constant(t: F::Tensor) -> DualTensor<F::Tensor> {
        DualTensor { primal: t, tangent: Tangent::Zero }
    }
}

impl<F: Face> Face for Dual<F> {
    type Tensor = DualTensor<F::Tensor>;

    fn meta(&self, t: &Self::Tensor) -> TensorMeta {
        self.inner.meta(&t.primal)
    }

    fn apply(&mut self, op: Op, inputs: &[&Self::Tensor]) -> Result<Applied<Self::Tensor>> {
        let primal_in: heapless::Vec<&F::Tensor, MAX_INPUTS> = inputs.iter().map(|x| &x.primal).collect();
        let outs = self.inner.apply(op.clone(), &primal_in)?;
        let tangents_in: heapless::Vec<Tangent<F::Tensor>, MAX_INPUTS> =
            inputs.iter().map(|x| x.tangent.clone()).collect();
        let primals = Primals::new(&primal_in, &outs);
        let dy = jvp(&mut Forward::new(&mut self.inner), &op, &primals, &tangents_in)
            .map_err(|e| e.in_rule_of(op.origin()))?;
        Ok(outs
            .iter()
            .zip(dy)
            .map(|(y, tangent)| y.clone().map(|primal| DualTensor { primal, tangent }))
            .collect())
    }
}
