//! [`Chain`]: a chain of elementwise arithmetic that a compiled plan runs
//! as one pass (`ir/fuse.rs`). A rule's tangent or cotangent is built from
//! many small steps (sums, differences, products with coefficient
//! matrices, negations, scalings); run one by one, each reads and writes
//! whole matrices, and at the sizes where the backward matters they come
//! from and go to memory, not cache. A chain computes the same steps
//! element by element: every step rounds exactly as the op it replaces, so
//! a plan that fuses gives the bits of one that does not.
//!
//! Never recorded by a face or differentiated: the plan makes it from
//! instructions whose derivatives were already taken.

use crate::error::{Error, Result};
use crate::op::check::{dtype, float_tensor, outputs};
use crate::op::{OpSpec, Outputs, MAX_INPUTS};
use crate::tensor::TensorMeta;

/// Most links in one chain.
pub const MAX_LINKS: usize = 8;

/// What one link computes from its operands (`a`; `a` and `b` for the
/// binary ones), exactly as the primitive of the same name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinkOp {
    /// −a.
    Neg,
    /// conj(a).
    Conj,
    /// a + b.
    Add,
    /// a − b.
    Sub,
    /// a · b.
    Mul,
    /// a / b.
    Div,
    /// factor · a (the factor rounded to the dtype's precision).
    Scale(f64),
}

impl LinkOp {
    /// Whether the op reads `b`.
    pub fn binary(self) -> bool {
        matches!(self, LinkOp::Add | LinkOp::Sub | LinkOp::Mul | LinkOp::Div)
    }
}

/// Where a link's operand comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// The chain's input of this index.
    Input(u8),
    /// The value of an earlier link.
    Link(u8),
}

/// One step of a chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// The arithmetic.
    pub op: LinkOp,
    /// First operand.
    pub a: Operand,
    /// Second operand (read by binary ops only).
    pub b: Operand,
}

/// Most scalings in one chain (their factors are kept beside the links).
pub const MAX_SCALES: usize = 2;

/// A link as the chain stores it: the scale factor by its index, so that a
/// chain (and every [`Op`](crate::Op), which may hold one) stays small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Packed {
    code: Code,
    a: Operand,
    b: Operand,
}

/// [`LinkOp`] with the factor of `Scale` replaced by its index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Code {
    #[default]
    Neg,
    Conj,
    Add,
    Sub,
    Mul,
    Div,
    Scale(u8),
}

impl Default for Operand {
    fn default() -> Self {
        Operand::Input(0)
    }
}

/// Inputs `x0`, … (equal dtype and shape) → `y`, the value of the last of
/// at most [`MAX_LINKS`] links (at most [`MAX_SCALES`] of them scalings),
/// each over the inputs and earlier links.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chain {
    links: [Packed; MAX_LINKS],
    factors: [f64; MAX_SCALES],
    len: u8,
    scales: u8,
    inputs: u8,
}

impl Chain {
    /// The op's name as used in messages.
    pub const NAME: &'static str = "elementwise_chain";
    /// Names of the inputs a chain may have, in order.
    const ALL_INPUTS: [&'static str; MAX_INPUTS] = ["x0", "x1", "x2", "x3", "x4", "x5"];
    /// Output names, in order.
    pub const OUTPUTS: &'static [&'static str] = &["y"];

    /// A chain of no links over `inputs` inputs (at most [`MAX_INPUTS`]).
    pub fn new(inputs: usize) -> Chain {
        Chain { inputs: inputs.min(MAX_INPUTS) as u8, ..Chain::default() }
    }

    /// Appends `link` and returns its operand, or `None` when the chain
    /// has no room for it (links, or scale factors).
    pub fn push(&mut self, link: Link) -> Option<Operand> {
        let at = usize::from(self.len);
        if at == MAX_LINKS {
            return None;
        }
        let code = match link.op {
            LinkOp::Neg => Code::Neg,
            LinkOp::Conj => Code::Conj,
            LinkOp::Add => Code::Add,
            LinkOp::Sub => Code::Sub,
            LinkOp::Mul => Code::Mul,
            LinkOp::Div => Code::Div,
            LinkOp::Scale(f) => {
                let k = usize::from(self.scales);
                *self.factors.get_mut(k)? = f;
                self.scales += 1;
                Code::Scale(k as u8)
            }
        };
        self.links[at] = Packed { code, a: link.a, b: link.b };
        self.len += 1;
        Some(Operand::Link(at as u8))
    }

    /// Number of links.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// `true` for a chain of no links (which no plan runs).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Link `k` (`k < len()`).
    pub fn link(&self, k: usize) -> Link {
        let Packed { code, a, b } = self.links[k];
        let op = match code {
            Code::Neg => LinkOp::Neg,
            Code::Conj => LinkOp::Conj,
            Code::Add => LinkOp::Add,
            Code::Sub => LinkOp::Sub,
            Code::Mul => LinkOp::Mul,
            Code::Div => LinkOp::Div,
            Code::Scale(i) => LinkOp::Scale(self.factors[usize::from(i)]),
        };
        Link { op, a, b }
    }

    /// The links, in order.
    pub fn links(&self) -> impl Iterator<Item = Link> + '_ {
        (0..self.len()).map(|k| self.link(k))
    }

    /// Input names, in order (one per input of this chain).
    pub fn input_names(&self) -> &'static [&'static str] {
        &Self::ALL_INPUTS[..usize::from(self.inputs)]
    }
}

impl OpSpec for Chain {
    fn infer(&self, inputs: &[&TensorMeta]) -> Result<Outputs> {
        const OP: &str = Chain::NAME;
        let invalid = |why| Error::InvalidOption { op: OP, option: "links", why };
        let Some(&x) = inputs.first() else { return Err(Error::Arity { op: OP, expected: 1, got: 0 }) };
        float_tensor(OP, "x0", x)?;
        for (name, y) in Self::ALL_INPUTS.iter().zip(inputs).skip(1) {
            dtype(OP, name, y, x.dtype)?;
            if y.shape != x.shape {
                return Err(Error::ShapeMismatch {
                    op: OP,
                    arg: name,
                    shape: y.shape.clone(),
                    other: "x0",
                    other_shape: x.shape.clone(),
                });
            }
        }
        if self.is_empty() {
            return Err(invalid("must not be empty"));
        }
        for (k, link) in self.links().enumerate() {
            let operands = if link.op.binary() { &[link.a, link.b][..] } else { &[link.a][..] };
            for operand in operands {
                let known = match *operand {
                    Operand::Input(i) => usize::from(i) < inputs.len(),
                    Operand::Link(j) => usize::from(j) < k,
                };
                if !known {
                    return Err(invalid("must read only the chain's inputs and earlier links"));
                }
            }
            if let LinkOp::Scale(f) = link.op {
                if !f.is_finite() {
                    return Err(invalid("must scale by finite factors"));
                }
            }
        }
        Ok(outputs([Some(x.clone())]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_round_trip_within_the_capacities() {
        let mut chain = Chain::new(2);
        let scale = |f, a| Link { op: LinkOp::Scale(f), a, b: a };
        let first = chain.push(Link { op: LinkOp::Add, a: Operand::Input(0), b: Operand::Input(1) }).unwrap();
        let half = chain.push(scale(0.5, first)).unwrap();
        let third = chain.push(scale(1.0 / 3.0, half)).unwrap();
        // A third scaling does not fit; the chain is unchanged.
        assert_eq!(chain.push(scale(2.0, third)), None);
        assert_eq!(chain.len(), 3);
        assert_eq!(chain.link(1), scale(0.5, first));
        assert_eq!(chain.link(2), scale(1.0 / 3.0, half));
        let mut last = third;
        while chain.len() < MAX_LINKS {
            last = chain.push(Link { op: LinkOp::Neg, a: last, b: last }).unwrap();
        }
        assert_eq!(chain.push(Link { op: LinkOp::Neg, a: last, b: last }), None);
        assert_eq!(chain.input_names(), ["x0", "x1"]);
        assert_eq!(chain.links().count(), MAX_LINKS);
    }
}
