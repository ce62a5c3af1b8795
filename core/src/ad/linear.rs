//! [`Lin`]: the tangent-side vocabulary rules are written in. Every helper
//! takes and returns [`Tangent`]s, so zeros cost nothing (no instruction is
//! recorded) and undefined derivatives flow through to whoever asks for them.

use super::cx::{Arg, Cx, Tangent};
use crate::error::{Error, Result};
use crate::op::internal::InternalOp;
use crate::op::{
    FullPivLuSolvePrepared, HouseholderQrApply, LinalgOp, LuSolvePrepared, MatOp, SolveOptions, Triangle,
    TriangularSolve, TriangularSolveOptions,
};
use crate::prim::{
    Adjoint, Binary, BinaryOp, DiagEmbed, DiagPart, Matmul, Pad, PrimOp, Reduce, ReduceOp, Reshape, Scale,
    ScaleCols, ScaleRows, Slice, Spread, TriMask, Unary, UnaryOp,
};
use crate::provider::Op;
use crate::MAX_RANK;

/// An argument of a tangent-side op: a primal coefficient or a tangent.
pub type LinArg<'a, C> = Arg<'a, <C as Cx>::P, Tangent<<C as Cx>::T>>;

/// Shorthand for a primal argument.
pub fn p<P, T>(x: &P) -> Arg<'_, P, T> {
    Arg::P(x)
}

/// Shorthand for a tangent argument.
pub fn t<P, T>(x: &T) -> Arg<'_, P, T> {
    Arg::T(x)
}

/// Helpers over [`Cx::linear`] for every linear primitive and every op
/// linear in one input, with zero and undefined tangents handled once here.
pub trait Lin: Cx {
    /// Records `op`, linear in its single tangent argument.
    ///
    /// A zero tangent gives a zero result and an undefined one an undefined
    /// result, without recording anything.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn lin(&mut self, op: Op, args: &[LinArg<'_, Self>]) -> Result<Tangent<Self::T>> {
        // An undefined tangent anywhere wins over a zero one elsewhere.
        for a in args {
            if let Arg::T(Tangent::Undefined(e)) = a {
                return Ok(Tangent::Undefined(e.clone()));
            }
        }
        let mut plain = heapless::Vec::<Arg<'_, Self::P, Self::T>, { crate::op::MAX_INPUTS }>::new();
        for a in args {
            let arg = match a {
                Arg::P(x) => Arg::P(*x),
                Arg::T(Tangent::Value(x)) => Arg::T(x),
                Arg::T(Tangent::Zero) => return Ok(Tangent::Zero),
                Arg::T(Tangent::Undefined(e)) => return Ok(Tangent::Undefined(e.clone())),
            };
            plain.push(arg).map_err(|_| Error::Arity {
                op: op.name(),
                expected: op.input_names().len(),
                got: args.len(),
            })?;
        }
        let guards = matches!(op, Op::Internal(InternalOp::TangentTieCheck(_)));
        match self.linear(op, &plain) {
            // Forward mode's tie check, run at once (`Dual`): its verdict
            // belongs to the tangent it guards, an error only where that
            // tangent is read.
            Err(e @ Error::NotDifferentiable { .. }) if guards => Ok(Tangent::Undefined(e)),
            result => result.map(Tangent::Value),
        }
    }

    /// A primitive applied to one tangent.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn lin_prim(&mut self, op: PrimOp, x: &Tangent<Self::T>) -> Result<Tangent<Self::T>> {
        self.lin(Op::Prim(op), &[Arg::T(x)])
    }

    /// `x + y`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn add(&mut self, x: &Tangent<Self::T>, y: &Tangent<Self::T>) -> Result<Tangent<Self::T>> {
        self.combine(BinaryOp::Add, x, y)
    }

    /// `x − y`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn sub(&mut self, x: &Tangent<Self::T>, y: &Tangent<Self::T>) -> Result<Tangent<Self::T>> {
        self.combine(BinaryOp::Sub, x, y)
    }

    /// `x ± y` with zeros and undefined tangents short-circuited.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    #[doc(hidden)]
    fn combine(
        &mut self,
        how: BinaryOp,
        x: &Tangent<Self::T>,
        y: &Tangent<Self::T>,
    ) -> Result<Tangent<Self::T>> {
        match (x, y) {
            (Tangent::Undefined(e), _) | (_, Tangent::Undefined(e)) => Ok(Tangent::Undefined(e.clone())),
            (_, Tangent::Zero) => Ok(x.clone()),
            (Tangent::Zero, _) if how == BinaryOp::Add => Ok(y.clone()),
            (Tangent::Zero, _) => self.neg(y),
            (Tangent::Value(a), Tangent::Value(b)) => self
                .linear(Op::Prim(PrimOp::Binary(Binary(how))), &[Arg::T(a), Arg::T(b)])
                .map(Tangent::Value),
        }
    }

    /// `−x`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn neg(&mut self, x: &Tangent<Self::T>) -> Result<Tangent<Self::T>> {
        self.unary(UnaryOp::Neg, x)
    }

    /// A linear elementwise map (`Neg`, `Conj`, `Real`, `Imag`, `ToComplex`,
    /// `MulI`, `Copy`).
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn unary(&mut self, how: UnaryOp, x: &Tangent<Self::T>) -> Result<Tangent<Self::T>> {
        if let (UnaryOp::Conj, Tangent::Value(t)) = (how, x) {
            if self.tangent_meta(t).dtype.is_real_float() {
                // conj of a real tangent is that tangent: no copy.
                return Ok(x.clone());
            }
        }
        self.lin_prim(PrimOp::Unary(Unary(how)), x)
    }

    /// `factor · x` (real factor).
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn scale(&mut self, x: &Tangent<Self::T>, factor: f64) -> Result<Tangent<Self::T>> {
        self.lin_prim(PrimOp::Scale(Scale(factor)), x)
    }

    /// `op(x)` of each matrix.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn adjoint(&mut self, x: &Tangent<Self::T>, how: MatOp) -> Result<Tangent<Self::T>> {
        self.lin_prim(PrimOp::Adjoint(Adjoint(how)), x)
    }

    /// `op_a(a) · op_b(b)` where exactly one of `a`, `b` is a tangent.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn matmul(
        &mut self,
        a: LinArg<'_, Self>,
        op_a: MatOp,
        b: LinArg<'_, Self>,
        op_b: MatOp,
    ) -> Result<Tangent<Self::T>> {
        self.lin(Op::Prim(PrimOp::Matmul(Matmul { a: op_a, b: op_b })), &[a, b])
    }

    /// `p ∘ x` elementwise (`p` primal, same dtype and shape as `x`).
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn mul(&mut self, coef: &Self::P, x: &Tangent<Self::T>) -> Result<Tangent<Self::T>> {
        self.lin(Op::Prim(PrimOp::Binary(Binary(BinaryOp::Mul))), &[Arg::P(coef), Arg::T(x)])
    }

    /// `x ∘ 1/p` elementwise.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn div(&mut self, x: &Tangent<Self::T>, coef: &Self::P) -> Result<Tangent<Self::T>> {
        self.lin(Op::Prim(PrimOp::Binary(Binary(BinaryOp::Div))), &[Arg::T(x), Arg::P(coef)])
    }

    /// The main diagonal of each matrix.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn diag_part(&mut self, x: &Tangent<Self::T>) -> Result<Tangent<Self::T>> {
        self.lin_prim(PrimOp::DiagPart(DiagPart), x)
    }

    /// Square matrices with diagonals `d`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn diag_embed(&mut self, d: &Tangent<Self::T>) -> Result<Tangent<Self::T>> {
        self.lin_prim(PrimOp::DiagEmbed(DiagEmbed), d)
    }

    /// One triangle of each matrix with its diagonal times `diagonal`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn tri_mask(
        &mut self,
        x: &Tangent<Self::T>,
        triangle: Triangle,
        diagonal: f64,
    ) -> Result<Tangent<Self::T>> {
        self.lin_prim(PrimOp::TriMask(TriMask { triangle, diagonal }), x)
    }

    /// `x · diag(v)` (`v` primal).
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn scale_cols(&mut self, x: &Tangent<Self::T>, v: &Self::P) -> Result<Tangent<Self::T>> {
        self.lin(Op::Prim(PrimOp::ScaleCols(ScaleCols)), &[Arg::T(x), Arg::P(v)])
    }

    /// `diag(v) · x` (`v` primal).
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn scale_rows(&mut self, x: &Tangent<Self::T>, v: &Self::P) -> Result<Tangent<Self::T>> {
        self.lin(Op::Prim(PrimOp::ScaleRows(ScaleRows)), &[Arg::T(x), Arg::P(v)])
    }

    /// Sum over the first `core_rank` dims.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn sum(&mut self, x: &Tangent<Self::T>, core_rank: usize) -> Result<Tangent<Self::T>> {
        self.lin_prim(PrimOp::Reduce(Reduce { op: ReduceOp::Sum, core_rank }), x)
    }

    /// Broadcast over new leading dims `core` (the transpose of [`Lin::sum`]).
    ///
    /// # Errors
    /// As [`Cx::linear`]; more than [`MAX_RANK`] dims.
    fn spread(&mut self, x: &Tangent<Self::T>, core: &[usize]) -> Result<Tangent<Self::T>> {
        let core = heapless::Vec::from_slice(core).map_err(|_| Error::TooManyDims {
            op: "spread",
            arg: "core",
            rank: core.len(),
        })?;
        self.lin_prim(PrimOp::Spread(Spread { core }), x)
    }

    /// The same elements under new dims.
    ///
    /// # Errors
    /// As [`Cx::linear`]; more than [`MAX_RANK`] dims.
    fn reshape(&mut self, x: &Tangent<Self::T>, dims: &[usize]) -> Result<Tangent<Self::T>> {
        let dims = heapless::Vec::<usize, MAX_RANK>::from_slice(dims).map_err(|_| Error::TooManyDims {
            op: "reshape",
            arg: "dims",
            rank: dims.len(),
        })?;
        self.lin_prim(PrimOp::Reshape(Reshape { dims }), x)
    }

    /// The block at `start` of `size` (rows, cols) of each matrix.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn slice(
        &mut self,
        x: &Tangent<Self::T>,
        start: [usize; 2],
        size: [usize; 2],
    ) -> Result<Tangent<Self::T>> {
        self.lin_prim(PrimOp::Slice(Slice { start, size }), x)
    }

    /// `x` placed at `start` in zero matrices of `size`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn pad(&mut self, x: &Tangent<Self::T>, start: [usize; 2], size: [usize; 2]) -> Result<Tangent<Self::T>> {
        self.lin_prim(PrimOp::Pad(Pad { start, size }), x)
    }

    /// `op(a)⁻¹ b` (or `b op(a)⁻¹`) for a primal triangular `a`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn tri_solve(
        &mut self,
        a: &Self::P,
        b: &Tangent<Self::T>,
        options: TriangularSolveOptions,
    ) -> Result<Tangent<Self::T>> {
        let op = Op::Linalg(LinalgOp::TriangularSolve(TriangularSolve(options)));
        self.lin(op, &[Arg::P(a), Arg::T(b)])
    }

    /// `op(A)⁻¹ b` with A's saved partial-pivot LU factors and the
    /// singularity test of `options`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn lu_solve(
        &mut self,
        lu: &Self::P,
        perm: &Self::P,
        b: &Tangent<Self::T>,
        how: MatOp,
        options: SolveOptions,
    ) -> Result<Tangent<Self::T>> {
        let op = Op::Linalg(LinalgOp::LuSolvePrepared(LuSolvePrepared(how, options)));
        self.lin(op, &[Arg::P(lu), Arg::P(perm), Arg::T(b)])
    }

    /// `op(A)⁻¹ b` with A's saved full-pivot LU factors and the
    /// singularity test of `options`.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn full_piv_lu_solve(
        &mut self,
        lu: &Self::P,
        row_perm: &Self::P,
        col_perm: &Self::P,
        b: &Tangent<Self::T>,
        how: MatOp,
        options: SolveOptions,
    ) -> Result<Tangent<Self::T>> {
        let op = Op::Linalg(LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared(how, options)));
        self.lin(op, &[Arg::P(lu), Arg::P(row_perm), Arg::P(col_perm), Arg::T(b)])
    }

    /// `op(Q_h) b` with stored reflectors.
    ///
    /// # Errors
    /// As [`Cx::linear`].
    fn householder_apply(
        &mut self,
        h: &Self::P,
        tau: &Self::P,
        b: &Tangent<Self::T>,
        how: MatOp,
    ) -> Result<Tangent<Self::T>> {
        let op = Op::Linalg(LinalgOp::HouseholderQrApply(HouseholderQrApply(how)));
        self.lin(op, &[Arg::P(h), Arg::P(tau), Arg::T(b)])
    }
}

impl<C: Cx + ?Sized> Lin for C {}
