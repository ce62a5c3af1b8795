//! Pseudo-inverse and minimum-norm least squares
//! (docs/ad-rules.md#recombinations).
//!
//! * `pinv` (Golub–Pereyra), with P = A⁺ the forward's output:
//!   dP = −P dA P + P Pᴴ dAᴴ (I − A P) + (I − P A) dAᴴ Pᴴ P.
//!   Regrouped so that every product costs m·n·min(m, n) (the square
//!   matrices formed are the small ones):
//!   - n ≤ m: with E = P dA, K = Aᴴ dA, N = I − P A, H = P Pᴴ (n×n),
//!     dP = (N Eᴴ − E − H Kᴴ) P + H dAᴴ;
//!   - m < n: with E = dA P, K = dA Aᴴ, N = I − A P, H = Pᴴ P (m×m),
//!     dP = P (Eᴴ N − E − Kᴴ H) + dAᴴ H.
//! * `lstsq`, x = P b: dx = dP b + P db, without forming dP. With the
//!   residual ρ = b − A x and z = dAᴴ Pᴴ x (using P b = x, A P b = A x):
//!   dx = −P dA x + P Pᴴ dAᴴ ρ + (I − P A) z + P db,
//!   recorded as dx = P (db − dA x + Pᴴ dAᴴ ρ − A z) + z, every product
//!   m·n·r (r columns of b). P is computed on the primal side by the `pinv`
//!   op with the forward's options: the same SVD kernel and thresholds, so
//!   the same kept singular values. `rank` is integer-valued.
//!
//! What is differentiated: with the rank r chosen by the thresholds, the
//! ops compute the truncated pseudo-inverse (A_r)⁺ of the best rank-r
//! approximation A_r, smooth where s_r > threshold ≥ s_{r+1}. The rule is
//! its exact derivative where the discarded singular values are zero:
//! full-rank matrices, and rank-deficient ones along every direction (at
//! s_{r+1} = 0 the gap terms of d(A_r) vanish and P annihilates the rest of
//! dA), which is also the derivative on the manifold of rank-r matrices.
//! Where a discarded value is small but nonzero, the gap terms are dropped:
//! a relative error O(s_{r+1}/s_r) (measured 2e-2·δ to 3e-1·δ at
//! s = (2, 1, δ)). Across a rank change A⁺ jumps: not differentiable.

use super::super::{integer_output, tangents, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::error::Result;
use crate::op::{LinalgOp, Lstsq, MatOp, Pinv};
use crate::prim::BinaryOp;
use crate::provider::Op;
use crate::Ops;

/// A factor as is, in a product.
const ID: MatOp = MatOp::Identity;
/// A factor's adjoint, in a product.
const ADJ: MatOp = MatOp::Adjoint;

/// JVP of `pinv`: the Golub–Pereyra formula (see the module docs).
pub(super) fn pinv<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    _o: &Pinv,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let da = &dx[0];
    if !matches!(da, Tangent::Value(_)) {
        // Undefined (the all-zero case never reaches a rule): no primal work.
        return Ok(tangents([da.clone()]));
    }
    let a = primals.input(0);
    let pa = primals.output(op, 0)?;
    Ok(tangents([golub_pereyra(cx, a, pa, da)?]))
}

/// dP for A (m×n, batched), its pseudo-inverse P and the tangent dA.
///
/// # Errors
/// The primal face's and [`Cx::linear`]'s.
fn golub_pereyra<C: Cx + ?Sized>(
    cx: &mut C,
    a: &C::P,
    pa: &C::P,
    da: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let meta = cx.primal().meta(a);
    let dims = meta.shape.dims();
    let (m, n, batch) = (dims[0], dims[1], &dims[2..]);
    if n <= m {
        // N = I − P A, H = P Pᴴ (n×n); E = P dA, K = Aᴴ dA.
        let pa_a = cx.primal().matmul(pa, a)?;
        let eye = cx.primal().eye(meta.dtype, n, batch)?;
        let nn = cx.primal().binary(BinaryOp::Sub, &eye, &pa_a)?;
        let h = cx.primal().matmul_with(pa, ID, pa, ADJ)?;
        let e = cx.matmul(p(pa), ID, t(da), ID)?;
        let k = cx.matmul(p(a), ADJ, t(da), ID)?;
        let ne = cx.matmul(p(&nn), ID, t(&e), ADJ)?;
        let hk = cx.matmul(p(&h), ID, t(&k), ADJ)?;
        let inner = cx.sub(&ne, &e)?;
        let inner = cx.sub(&inner, &hk)?;
        let left = cx.matmul(t(&inner), ID, p(pa), ID)?;
        let right = cx.matmul(p(&h), ID, t(da), ADJ)?;
        cx.add(&left, &right)
    } else {
        // N = I − A P, H = Pᴴ P (m×m); E = dA P, K = dA Aᴴ.
        let a_pa = cx.primal().matmul(a, pa)?;
        let eye = cx.primal().eye(meta.dtype, m, batch)?;
        let nn = cx.primal().binary(BinaryOp::Sub, &eye, &a_pa)?;
        let h = cx.primal().matmul_with(pa, ADJ, pa, ID)?;
        let e = cx.matmul(t(da), ID, p(pa), ID)?;
        let k = cx.matmul(t(da), ID, p(a), ADJ)?;
        let en = cx.matmul(t(&e), ADJ, p(&nn), ID)?;
        let kh = cx.matmul(t(&k), ADJ, p(&h), ID)?;
        let inner = cx.sub(&en, &e)?;
        let inner = cx.sub(&inner, &kh)?;
        let left = cx.matmul(p(pa), ID, t(&inner), ID)?;
        let right = cx.matmul(t(da), ADJ, p(&h), ID)?;
        cx.add(&left, &right)
    }
}

/// JVP of `lstsq`: dx = P (db − dA x + Pᴴ dAᴴ ρ − A z) + z (see the module
/// docs); `rank` has no derivative.
pub(super) fn lstsq<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    o: &Lstsq,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let (da, db) = (&dx[0], &dx[1]);
    let rank = integer_output(op, "rank");
    if let Tangent::Undefined(_) = da {
        return Ok(tangents([da.clone(), rank]));
    }
    if let Tangent::Undefined(_) = db {
        return Ok(tangents([db.clone(), rank]));
    }
    let (a, b) = (primals.input(0), primals.input(1));
    // The same thresholds as the forward: the same kept singular values.
    let pa = cx.primal().single(Op::Linalg(LinalgOp::Pinv(Pinv(o.0))), &[a])?;
    let (inner, z) = match da {
        Tangent::Value(_) => {
            let x = primals.output(op, 0)?;
            let ax = cx.primal().matmul(a, x)?;
            let rho = cx.primal().binary(BinaryOp::Sub, b, &ax)?;
            let y = cx.primal().matmul_with(&pa, ADJ, x, ID)?;
            // z = dAᴴ (Pᴴ x); the bracket db − dA x + Pᴴ (dAᴴ ρ) − A z.
            let z = cx.matmul(t(da), ADJ, p(&y), ID)?;
            let dax = cx.matmul(t(da), ID, p(x), ID)?;
            let dar = cx.matmul(t(da), ADJ, p(&rho), ID)?;
            let pdar = cx.matmul(p(&pa), ADJ, t(&dar), ID)?;
            let az = cx.matmul(p(a), ID, t(&z), ID)?;
            let inner = cx.sub(db, &dax)?;
            let inner = cx.add(&inner, &pdar)?;
            (cx.sub(&inner, &az)?, z)
        }
        _ => (db.clone(), Tangent::Zero),
    };
    let left = cx.matmul(p(&pa), ID, t(&inner), ID)?;
    Ok(tangents([cx.add(&left, &z)?, rank]))
}
