//! `LowRankApprox`: a_p = U_K diag(s_K) V_Kᴴ, the kept set K the first p
//! triplets of the thin SVD A = U diag(s) Vᴴ (k = min(m, n)), p the op's
//! `rank` output, D the discarded rest (docs/ad-rules.md#recombinations).
//!
//! With dP = Uᴴ dA V (k×k):
//! dA_p = U M Vᴴ + P_U dA V_K V_Kᴴ + U_K U_Kᴴ dA P_V, where M_KK = dP_KK,
//! M_DD = 0, and across the cut (i ∈ K, j ∈ D)
//! M_ij = α_ij dP_ij + β_ij conj(dP_ji), M_ji = α_ij dP_ji + β_ij conj(dP_ij),
//! α_ij = s_i²/(s_i² − s_j²), β_ij = s_i s_j/(s_i² − s_j²).
//! Only gaps across the cut appear, so ties inside K (or inside D) cost no
//! precision. The coefficients are formed by partial fractions, without
//! squares: α = ½ diag(s)(F⁺ − F⁻), β = −½ diag(s)(F⁺ + F⁻) with
//! F⁻_ij = inv_δ(s_j − s_i), F⁺_ij = inv_δ(s_i + s_j) (`PairInv`,
//! δ = 10·k·eps·s_max), bounded by O(s_i/gap).
//!
//! p is a run-time value (on the traced face a symbolic one), so K is
//! selected by masks: κ = `rank_mask(rank)` (1 on K), the block masks
//! κκᵀ and C = κ(1 − κ)ᵀ as outer products, and
//! M = (κκᵀ + C∘α + (C∘α)ᵀ)∘dP + (C∘β + (C∘β)ᵀ)∘dPᴴ.
//! The projector terms are (dA V − U dP) diag(κ) Vᴴ when m > k and
//! U diag(κ)(Uᴴ dA − dP Vᴴ) when n > k (the other projector is zero).
//! The rule recomputes the thin SVD on the primal side (the forward's
//! driver, so the same s and the same p-ordering); a_p is gauge-invariant,
//! so no phase correction is needed.
//!
//! Not differentiable where a kept value ties a discarded one (s_p = s_{p+1})
//! or, for `Truncation::Tolerance`, where a value sits at the threshold (p
//! jumps). The rule cannot read values to report it: at a tie within δ the
//! cut-off F⁻ leaves α = ¼, β = −¼ on that pair — a finite tangent with no
//! meaning; at a gap just above δ it is the (huge, correct) derivative.
//! `rank` is integer-valued: no tangent.
//!
//! [`Thin`] and [`Thin::recombine`] are shared with the polar rule.

use super::super::{integer_output, tangents, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::op::{LowRankApprox, MatOp};
use crate::prim::{BinaryOp, Pair, PairInv, Regularize, UnaryOp};
use crate::provider::Op;
use crate::{Ops, MAX_RANK};

/// The thin SVD of A on the primal side and the tangent pieces the
/// recombination rules share.
pub(super) struct Thin<P, T> {
    /// U (m×k).
    pub u: P,
    /// s (k, real, descending).
    pub s: P,
    /// Vᴴ (k×n).
    pub vh: P,
    /// Rows of A.
    pub m: usize,
    /// Columns of A.
    pub n: usize,
    /// min(m, n).
    pub k: usize,
    /// A's dtype.
    pub dtype: DType,
    /// dA V (m×k).
    pub dav: Tangent<T>,
    /// dP = Uᴴ dA V (k×k).
    pub dp: Tangent<T>,
}

impl<P: Clone, T: Clone> Thin<P, T> {
    /// Runs the thin SVD of `a` and forms dA V and dP.
    ///
    /// # Errors
    /// The SVD's errors; those of the recorded products.
    pub fn new<C: Cx<P = P, T = T> + ?Sized>(cx: &mut C, a: &P, da: &Tangent<T>) -> Result<Self> {
        let meta = cx.primal().meta(a);
        let dims = meta.shape.dims();
        let dim = |i: usize| dims.get(i).copied().unwrap_or(0);
        let (m, n) = (dim(0), dim(1));
        let f = cx.primal().svd(a)?;
        let dav = cx.matmul(t(da), MatOp::Identity, p(&f.vh), MatOp::Adjoint)?;
        let dp = cx.matmul(p(&f.u), MatOp::Adjoint, t(&dav), MatOp::Identity)?;
        Ok(Thin { u: f.u, s: f.s, vh: f.vh, m, n, k: m.min(n), dtype: meta.dtype, dav, dp })
    }

    /// The tie cutoff relative to s_max: 10·k·eps
    /// (`docs/ad-rules.md#partial-fractions-and-the-tie-cutoff`).
    pub fn relative_cutoff(&self) -> f64 {
        let eps = match self.dtype.real() {
            DType::F32 => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        };
        10.0 * self.k as f64 * eps
    }

    /// `inv_δ` of pairwise differences or sums of s (real k×k).
    ///
    /// # Errors
    /// Those of `pair_inv`.
    pub fn pair_inv<C: Cx<P = P, T = T> + ?Sized>(&self, cx: &mut C, pair: Pair, relative: f64) -> Result<P> {
        cx.primal().pair_inv(&self.s, PairInv { pair, regularize: Regularize::Cutoff { relative } })
    }

    /// A real primal coefficient in A's dtype (so it can multiply tangents).
    ///
    /// # Errors
    /// Those of the conversion.
    pub fn like_a<C: Cx<P = P, T = T> + ?Sized>(&self, cx: &mut C, x: P) -> Result<P> {
        if self.dtype.is_complex() {
            cx.primal().unary(UnaryOp::ToComplex, &x)
        } else {
            Ok(x)
        }
    }

    /// `U core Vᴴ + (dA V − U dP) diag(w) Vᴴ [m > k] + U diag(w)(Uᴴ dA − dP Vᴴ) [n > k]`
    /// for a k×k tangent `core` and a real k-vector `w`: the shape of both
    /// recombination rules (w = κ for the low-rank approximation, σ⁺ for the
    /// polar factor). At most one projector term is nonzero.
    ///
    /// # Errors
    /// Those of the recorded products.
    pub fn recombine<C: Cx<P = P, T = T> + ?Sized>(
        &self,
        cx: &mut C,
        core: &Tangent<T>,
        w: &P,
        da: &Tangent<T>,
    ) -> Result<Tangent<T>> {
        let id = MatOp::Identity;
        if self.n > self.k {
            // U (core Vᴴ + diag(w)(Uᴴ dA − dP Vᴴ)).
            let core_vh = cx.matmul(t(core), id, p(&self.vh), id)?;
            let uh_da = cx.matmul(p(&self.u), MatOp::Adjoint, t(da), id)?;
            let dp_vh = cx.matmul(t(&self.dp), id, p(&self.vh), id)?;
            let rect = cx.sub(&uh_da, &dp_vh)?;
            let rect = cx.scale_rows(&rect, w)?;
            let right = cx.add(&core_vh, &rect)?;
            return cx.matmul(p(&self.u), id, t(&right), id);
        }
        // (U core + (dA V − U dP) diag(w)) Vᴴ.
        let mut left = cx.matmul(p(&self.u), id, t(core), id)?;
        if self.m > self.k {
            let u_dp = cx.matmul(p(&self.u), id, t(&self.dp), id)?;
            let rect = cx.sub(&self.dav, &u_dp)?;
            let rect = cx.scale_cols(&rect, w)?;
            left = cx.add(&left, &rect)?;
        }
        cx.matmul(t(&left), id, p(&self.vh), id)
    }
}

/// Output tangents `[d a_p, rank (integer)]` (see the module docs).
pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    _o: &LowRankApprox,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let a = primals.input(0);
    let da = dx.first().ok_or(Error::Arity { op: op.name(), expected: 1, got: 0 })?;
    let rank = primals.output(op, 1)?;
    let th = Thin::new(cx, a, da)?;
    let kappa = cx.primal().rank_mask(rank, th.k, th.dtype.real())?;
    let (e, y) = coefficients(cx, &th, &kappa)?;
    let dph = cx.adjoint(&th.dp, MatOp::Adjoint)?;
    let e_dp = cx.mul(&e, &th.dp)?;
    let y_dph = cx.mul(&y, &dph)?;
    let core = cx.add(&e_dp, &y_dph)?;
    let dap = th.recombine(cx, &core, &kappa, da)?;
    Ok(tangents([dap, integer_output(op, "rank")]))
}

/// The coefficient matrices of M = E∘dP + Y∘dPᴴ in A's dtype:
/// E = κκᵀ + C∘α + (C∘α)ᵀ, Y = C∘β + (C∘β)ᵀ with C = κ(1 − κ)ᵀ.
fn coefficients<C: Cx + ?Sized>(cx: &mut C, th: &Thin<C::P, C::T>, kappa: &C::P) -> Result<(C::P, C::P)> {
    let relative = th.relative_cutoff();
    let f_minus = th.pair_inv(cx, Pair::Diff, relative)?;
    let f_plus = th.pair_inv(cx, Pair::Sum, relative)?;
    let f = cx.primal();
    // α = ½ diag(s)(F⁺ − F⁻), β = −½ diag(s)(F⁺ + F⁻).
    let diff = f.binary(BinaryOp::Sub, &f_plus, &f_minus)?;
    let alpha = f.scale_rows(&diff, &th.s)?;
    let alpha = f.scale(&alpha, 0.5)?;
    let sum = f.binary(BinaryOp::Add, &f_plus, &f_minus)?;
    let beta = f.scale_rows(&sum, &th.s)?;
    let beta = f.scale(&beta, -0.5)?;
    // The block masks κκᵀ and C = κ(1 − κ)ᵀ.
    let meta = f.meta(kappa);
    let ones = f.fill(meta, 1.0)?;
    let dropped = f.binary(BinaryOp::Sub, &ones, kappa)?;
    let kept = outer(f, kappa, kappa)?;
    let cross = outer(f, kappa, &dropped)?;
    let e = symmetrized(f, &cross, &alpha)?;
    let e = f.binary(BinaryOp::Add, &kept, &e)?;
    let y = symmetrized(f, &cross, &beta)?;
    Ok((th.like_a(cx, e)?, th.like_a(cx, y)?))
}

/// `x yᵀ` for vectors `[k, batch…]`: `[k, k, batch…]`.
fn outer<P: Clone>(f: &mut dyn crate::Face<Tensor = P>, x: &P, y: &P) -> Result<P> {
    let meta = f.meta(x);
    let dims = meta.shape.dims();
    let (k, batch) = dims.split_first().map_or((0, &[][..]), |(&k, batch)| (k, batch));
    let too_many = |_| Error::TooManyDims { op: "reshape", arg: "dims", rank: dims.len() + 1 };
    let mut col = heapless::Vec::<usize, MAX_RANK>::new();
    let mut row = heapless::Vec::<usize, MAX_RANK>::new();
    col.extend_from_slice(&[k, 1]).map_err(too_many)?;
    row.extend_from_slice(&[1, k]).map_err(too_many)?;
    col.extend_from_slice(batch).map_err(too_many)?;
    row.extend_from_slice(batch).map_err(too_many)?;
    let x = f.reshape(x, &col)?;
    let y = f.reshape(y, &row)?;
    f.matmul(&x, &y)
}

/// `c∘x + (c∘x)ᵀ` (real k×k).
fn symmetrized<P: Clone>(f: &mut dyn crate::Face<Tensor = P>, c: &P, x: &P) -> Result<P> {
    let cx = f.binary(BinaryOp::Mul, c, x)?;
    let cxt = f.adjoint(&cx, MatOp::Transpose)?;
    f.binary(BinaryOp::Add, &cx, &cxt)
}
