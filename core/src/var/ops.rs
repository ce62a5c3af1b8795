//! `+ − * /` and unary minus on [`Var`]: elementwise, between handles (a
//! real one promoted to complex against a complex one, a scalar spread over
//! the other's shape) and with `f64` scalars. `*` is elementwise, as in
//! NumPy; the matrix product is [`Var::matmul`].

use super::Var;
use crate::face::Face;
use crate::prim::{BinaryOp, UnaryOp};
use core::ops::{Add, Div, Mul, Neg, Sub};

/// `impl $Trait` for every pairing of owned and borrowed handles, and with
/// `f64` on either side.
macro_rules! binary_operator {
    ($Trait:ident, $method:ident, $op:expr, scalar: |$x:ident, $c:ident| $with_scalar:expr, reversed: |$rc:ident, $ry:ident| $scalar_first:expr) => {
        impl<F: Face> $Trait<&Var<F>> for &Var<F> {
            type Output = Var<F>;
            fn $method(self, other: &Var<F>) -> Var<F> {
                self.zip($op, other)
            }
        }
        impl<F: Face> $Trait<Var<F>> for Var<F> {
            type Output = Var<F>;
            fn $method(self, other: Var<F>) -> Var<F> {
                self.zip($op, &other)
            }
        }
        impl<F: Face> $Trait<&Var<F>> for Var<F> {
            type Output = Var<F>;
            fn $method(self, other: &Var<F>) -> Var<F> {
                self.zip($op, other)
            }
        }
        impl<F: Face> $Trait<Var<F>> for &Var<F> {
            type Output = Var<F>;
            fn $method(self, other: Var<F>) -> Var<F> {
                self.zip($op, &other)
            }
        }
        impl<F: Face> $Trait<f64> for &Var<F> {
            type Output = Var<F>;
            fn $method(self, $c: f64) -> Var<F> {
                let $x = self;
                $with_scalar
            }
        }
        impl<F: Face> $Trait<f64> for Var<F> {
            type Output = Var<F>;
            fn $method(self, $c: f64) -> Var<F> {
                let $x = &self;
                $with_scalar
            }
        }
        impl<F: Face> $Trait<&Var<F>> for f64 {
            type Output = Var<F>;
            fn $method(self, $ry: &Var<F>) -> Var<F> {
                let $rc = self;
                $scalar_first
            }
        }
        impl<F: Face> $Trait<Var<F>> for f64 {
            type Output = Var<F>;
            fn $method(self, $ry: Var<F>) -> Var<F> {
                let $rc = self;
                let $ry = &$ry;
                $scalar_first
            }
        }
    };
}

binary_operator!(Add, add, BinaryOp::Add,
    scalar: |x, c| x.zip(BinaryOp::Add, &x.full_like(c)),
    reversed: |c, y| y.full_like(c).zip(BinaryOp::Add, y));
binary_operator!(Sub, sub, BinaryOp::Sub,
    scalar: |x, c| x.zip(BinaryOp::Sub, &x.full_like(c)),
    reversed: |c, y| y.full_like(c).zip(BinaryOp::Sub, y));
binary_operator!(Mul, mul, BinaryOp::Mul,
    scalar: |x, c| x.scaled(c),
    reversed: |c, y| y.scaled(c));
binary_operator!(Div, div, BinaryOp::Div,
    scalar: |x, c| x.scaled(1.0 / c),
    reversed: |c, y| y.full_like(c).zip(BinaryOp::Div, y));

impl<F: Face> Neg for &Var<F> {
    type Output = Var<F>;
    fn neg(self) -> Var<F> {
        self.map(UnaryOp::Neg)
    }
}

impl<F: Face> Neg for Var<F> {
    type Output = Var<F>;
    fn neg(self) -> Var<F> {
        self.map(UnaryOp::Neg)
    }
}
