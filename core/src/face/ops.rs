//! [`Ops`]: every op of the op table (`op/table.rs`) and every array
//! primitive as a method, implemented once for every [`Face`].

use super::factors::{
    EigFactors, EighFactors, FullPivLuFactors, HouseholderQr, LuFactors, QrFactors, RankRevealingQrFactors,
    SvdFactors, SvdTruncatedFactors,
};
use super::{single, take_named, Face};
use crate::dtype::DType;
use crate::error::Result;
// The op table names payloads, options and factors: every op type in scope.
use crate::op::*;
use crate::prim::{
    Adjoint, Binary, BinaryOp, DiagEmbed, DiagPart, ExtremeMask, Eye, Fill, Matmul, PairInv, PivotPhase,
    PrimOp, RankMask, Reduce, ReduceOp, Reshape, Scale, ScaleCols, ScaleRows, Slice, Unary, UnaryOp,
};
use crate::provider::Op;
use crate::tensor::TensorMeta;

/// The face methods of each op table entry: for every `fn` line of its
/// `methods`, a method taking the op's inputs (in order) and the line's
/// extra arguments, running the payload the line builds, and returning the
/// outputs it names.
macro_rules! op_methods {
    ($(
        $(#[$doc:meta])*
        $V:ident {
            name: $name:literal, family: $family:literal, dtypes: $dtypes:tt,
            inputs: [$($input:ident),*], outputs: $outputs:tt, rule: $rule:ident,
            support: |$op:ident| $support:expr,
            methods: { $($methods:tt)* },
        }
    )*) => {
        $( op_methods!(@each $V [$($input),*] $($methods)*); )*
    };
    (@each $V:ident $inputs:tt) => {};
    // `-> (a, b)`: a tuple of outputs.
    (@each $V:ident [$($input:ident),*]
        $(#[$doc:meta])* fn $method:ident $(($($arg:ident: $ty:ty),*))? -> ($($out:ident),+)
        $(= $payload:expr)?; $($rest:tt)*
    ) => {
        $(#[$doc])*
        fn $method(&mut self, $($input: &Self::Tensor,)* $($($arg: $ty),*)?) -> Result<($(op_methods!(@tensor $out),)+)> {
            let mut outs = self.apply(Op::Linalg(LinalgOp::$V(op_methods!(@payload $V $($payload)?))), &[$($input),*])?;
            Ok(($(take_named(&mut outs, $V::NAME, $V::OUTPUTS, stringify!($out))?,)+))
        }
        op_methods!(@each $V [$($input),*] $($rest)*);
    };
    // `-> Factors { a, b }`: a struct whose fields are named as the outputs.
    (@each $V:ident [$($input:ident),*]
        $(#[$doc:meta])* fn $method:ident $(($($arg:ident: $ty:ty),*))? -> $S:ident { $($out:ident),+ }
        $(= $payload:expr)?; $($rest:tt)*
    ) => {
        $(#[$doc])*
        fn $method(&mut self, $($input: &Self::Tensor,)* $($($arg: $ty),*)?) -> Result<$S<Self::Tensor>> {
            let mut outs = self.apply(Op::Linalg(LinalgOp::$V(op_methods!(@payload $V $($payload)?))), &[$($input),*])?;
            Ok($S { $($out: take_named(&mut outs, $V::NAME, $V::OUTPUTS, stringify!($out))?,)+ })
        }
        op_methods!(@each $V [$($input),*] $($rest)*);
    };
    // `-> x`: one output.
    (@each $V:ident [$($input:ident),*]
        $(#[$doc:meta])* fn $method:ident $(($($arg:ident: $ty:ty),*))? -> $out:ident
        $(= $payload:expr)?; $($rest:tt)*
    ) => {
        $(#[$doc])*
        fn $method(&mut self, $($input: &Self::Tensor,)* $($($arg: $ty),*)?) -> Result<Self::Tensor> {
            let mut outs = self.apply(Op::Linalg(LinalgOp::$V(op_methods!(@payload $V $($payload)?))), &[$($input),*])?;
            take_named(&mut outs, $V::NAME, $V::OUTPUTS, stringify!($out))
        }
        op_methods!(@each $V [$($input),*] $($rest)*);
    };
    (@tensor $out:ident) => { Self::Tensor };
    (@payload $V:ident) => { <$V as Default>::default() };
    (@payload $V:ident $payload:expr) => { $payload };
}

/// Every op and array primitive as a method, for every face.
///
/// The decompositions and solves (one op each) come from the op table; the
/// array helpers below run one primitive each. Composites built from them
/// are in [`Linalg`](super::Linalg).
pub trait Ops: Face {
    /// Runs an op with exactly one output and returns it.
    ///
    /// # Errors
    /// The op's and the face's.
    fn single(&mut self, op: Op, inputs: &[&Self::Tensor]) -> Result<Self::Tensor> {
        single(self, op, inputs)
    }

    crate::op::op_table!(op_methods);

    // ---- array helpers (one primitive each) ----

    /// `op_a(a) · op_b(b)`, batched. NaN and ∞ propagate as IEEE arithmetic
    /// does (no check: ∞·0 is NaN, a NaN entry reaches its row and column of
    /// the product; complex products are formed from the parts, so a
    /// complex ∞ may come out with a NaN part); an empty inner dimension
    /// gives zeros.
    ///
    /// # Errors
    /// Mismatched dims.
    fn matmul_with(
        &mut self,
        a: &Self::Tensor,
        op_a: MatOp,
        b: &Self::Tensor,
        op_b: MatOp,
    ) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Matmul(Matmul::new(op_a, op_b))), &[a, b])
    }

    /// `a · b`, batched (NaN and ∞ as in [`Ops::matmul_with`]).
    ///
    /// # Errors
    /// Mismatched dims.
    fn matmul(&mut self, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        self.matmul_with(a, MatOp::Identity, b, MatOp::Identity)
    }

    /// An elementwise map.
    ///
    /// # Errors
    /// Dtype errors (e.g. `exp` of a complex tensor).
    fn unary(&mut self, op: UnaryOp, x: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Unary(Unary(op))), &[x])
    }

    /// Elementwise arithmetic on equal shapes.
    ///
    /// # Errors
    /// Mismatched shapes or dtypes.
    fn binary(&mut self, op: BinaryOp, x: &Self::Tensor, y: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Binary(Binary(op))), &[x, y])
    }

    /// `factor · x`.
    ///
    /// # Errors
    /// A non-finite factor.
    fn scale(&mut self, x: &Self::Tensor, factor: f64) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Scale(Scale(factor))), &[x])
    }

    /// `op(x)` of each matrix (transpose or adjoint).
    ///
    /// # Errors
    /// A non-matrix `x`.
    fn adjoint(&mut self, x: &Self::Tensor, how: MatOp) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Adjoint(Adjoint(how))), &[x])
    }

    /// Sum, max or min over the first `core_rank` dims.
    ///
    /// # Errors
    /// Too few dims; max/min of complex values.
    fn reduce(&mut self, how: ReduceOp, x: &Self::Tensor, core_rank: usize) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Reduce(Reduce { op: how, core_rank })), &[x])
    }

    /// The same elements under new dims.
    ///
    /// # Errors
    /// A different element count; too many dims.
    fn reshape(&mut self, x: &Self::Tensor, dims: &[usize]) -> Result<Self::Tensor> {
        let dims = heapless::Vec::from_slice(dims).map_err(|_| crate::Error::TooManyDims {
            op: "reshape",
            arg: "dims",
            rank: dims.len(),
        })?;
        self.single(Op::Prim(PrimOp::Reshape(Reshape { dims })), &[x])
    }

    /// A block of each matrix.
    ///
    /// # Errors
    /// A block outside the matrix.
    fn slice(&mut self, x: &Self::Tensor, start: [usize; 2], size: [usize; 2]) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Slice(Slice { start, size })), &[x])
    }

    /// Main diagonals.
    ///
    /// # Errors
    /// A non-matrix `x`.
    fn diag_part(&mut self, x: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::DiagPart(DiagPart)), &[x])
    }

    /// Square matrices with diagonals `d`.
    ///
    /// # Errors
    /// A non-vector `d`.
    fn diag_embed(&mut self, d: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::DiagEmbed(DiagEmbed)), &[d])
    }

    /// Pairwise inverse gaps of a spectrum `x` (see [`PairInv`]).
    ///
    /// # Errors
    /// A non-vector or non-float `x`; an invalid regularization.
    fn pair_inv(&mut self, x: &Self::Tensor, how: PairInv) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::PairInv(how)), &[x])
    }

    /// The reciprocal of each column's pivot entry (see [`PivotPhase`]).
    ///
    /// # Errors
    /// A non-matrix or non-float `u`.
    fn pivot_phase(&mut self, u: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::PivotPhase(PivotPhase)), &[u])
    }

    /// The 0/1 vector `[k, batch…]` of `dtype` that is 1 at `i < rank` (see
    /// [`RankMask`]); `rank` is an i64 tensor `[batch…]`.
    ///
    /// # Errors
    /// A non-i64 `rank`, a non-float `dtype`; too many dims.
    fn rank_mask(&mut self, rank: &Self::Tensor, k: usize, dtype: DType) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::RankMask(RankMask { k, dtype })), &[rank])
    }

    /// 1 where the max (or min) over the first `core_rank` dims of `x` is
    /// attained, 0 elsewhere (see [`ExtremeMask`]).
    ///
    /// # Errors
    /// A complex `x`; a `Sum`; at run time, a tied extreme
    /// (`NotDifferentiable`) or NaN (`NonFinite`).
    fn extreme_mask(&mut self, x: &Self::Tensor, how: ReduceOp, core_rank: usize) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::ExtremeMask(ExtremeMask { op: how, core_rank })), &[x])
    }

    /// `1` where `x ≠ 0`, `0` where `x = 0`, in `x`'s real dtype (see
    /// [`UnaryOp::NonzeroMask`]; derivative 0, also at the jump at 0).
    ///
    /// # Errors
    /// A non-float `x`.
    fn nonzero_mask(&mut self, x: &Self::Tensor) -> Result<Self::Tensor> {
        self.unary(UnaryOp::NonzeroMask, x)
    }

    /// `a · diag(v)`.
    ///
    /// # Errors
    /// Mismatched lengths or dtypes.
    fn scale_cols(&mut self, a: &Self::Tensor, v: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::ScaleCols(ScaleCols)), &[a, v])
    }

    /// `diag(v) · a`.
    ///
    /// # Errors
    /// Mismatched lengths or dtypes.
    fn scale_rows(&mut self, a: &Self::Tensor, v: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::ScaleRows(ScaleRows)), &[a, v])
    }

    /// Identity matrices `[n, n, batch…]`.
    ///
    /// # Errors
    /// A non-float dtype; too many dims.
    fn eye(&mut self, dtype: DType, n: usize, batch: &[usize]) -> Result<Self::Tensor> {
        let batch = heapless::Vec::from_slice(batch).map_err(|_| crate::Error::TooManyDims {
            op: "eye",
            arg: "batch",
            rank: batch.len() + 2,
        })?;
        self.single(Op::Prim(PrimOp::Eye(Eye { dtype, n, batch })), &[])
    }

    /// A tensor of `meta`'s shape filled with `value`.
    ///
    /// # Errors
    /// A non-finite value or non-float dtype.
    fn fill(&mut self, meta: TensorMeta, value: f64) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Fill(Fill { meta, value })), &[])
    }
}

impl<F: Face + ?Sized> Ops for F {}
