//! Reporting instead of guessing (AD-RULES.md "Gauge check"): before an
//! SVD's or eigh's rule is transposed, its output cotangents pass through
//! the gauge-check op of its family ([`SvdGaugeCheck`], [`EighGaugeCheck`]),
//! which returns them unchanged or fails with `Error::NotDifferentiable`
//! (op "svd" or "eigh", the output at fault, why) when the loss is not
//! differentiable at the point: a cotangent that depends on the basis
//! inside a tied group, on a complex phase or on a null-space vector, or a
//! kink (∂L/∂s_i ≠ 0 at s_i = 0). The op runs on the primal face, so the
//! eager face reports at `backward` and the traced face when the gradient
//! program runs (the values are known only then); both feed the op's
//! outputs to the transpose, so the traced check is never pruned away.
//!
//! * `Svd`: u, s, vh and their cotangents; a factor the options switched
//!   off enters as zeros (with a zero cotangent, which the check ignores).
//! * `SvdVals`: zeros for both factors, so only the values are checked
//!   (kinks, and unequal ∂L/∂s inside a tied group).
//! * `SvdFull`: the thin part (the first k columns of u, rows of vh). A
//!   nonzero cotangent on a factor with completion columns is already an
//!   error of the rule, which is left to say so.
//! * `SvdTruncated`: the whole thin SVD (recomputed, as its rule does) with
//!   the cotangents of the discarded triplets masked off, so a cut through a
//!   tied group is reported.
//! * `LowRankApprox`: the SVD cotangents equivalent to its a_p's on the
//!   recomputed thin SVD (a cut through a tied group is reported as
//!   `low_rank_approx`/`a_p`).
//! * `Eigh`, `EighVals`: likewise with w, v (zeros for `EighVals`).
//! * Options with a derivative broadening ε (`derivative_eps`) reproduce
//!   the reference's rule, which does not check: no check there.
//!
//! A zero cotangent is materialized (a `fill` of zeros) only when another
//! cotangent of the same op is nonzero; with all zero, nothing runs.

use crate::ad::cx::Tangent;
use crate::ad::rules::{kept_mask, Primals};
use crate::error::{Error, Result};
use crate::face::Face;
use crate::op::{
    Eigh, EighGaugeCheck, EighVals, GaugeOf, LinalgOp, MatOp, Svd, SvdFull, SvdGaugeCheck, SvdVals,
    MAX_OUTPUTS,
};
use crate::prim::{BinaryOp, ReduceOp, UnaryOp};
use crate::provider::Op;
use crate::shape::Shape;
use crate::tensor::TensorMeta;
use crate::Linalg;

/// Whether the rules (and so the checks) of a family are in this build
/// (lindiff-core's `op-*` features): a family that is off has no rule to
/// check for, and its check is not linked.
const SVD: bool = cfg!(feature = "op-svd");
const EIGH: bool = cfg!(feature = "op-eigh");

/// Output cotangents of an op, in its output order.
pub(super) type Cts<T> = heapless::Vec<Tangent<T>, MAX_OUTPUTS>;

/// `out_cts` after `op`'s gauge check, or `None` when `op` has none (or
/// every cotangent is zero, or a derivative broadening is set).
///
/// # Errors
/// `Error::NotDifferentiable` from the check (eager face), and the errors
/// of the ops it records.
pub(super) fn check<F: Face>(
    face: &mut F,
    op: &Op,
    primals: &Primals<'_, F::Tensor>,
    out_cts: &[Tangent<F::Tensor>],
) -> Result<Option<Cts<F::Tensor>>> {
    let Op::Linalg(l) = op else { return Ok(None) };
    if !out_cts.iter().any(|c| matches!(c, Tangent::Value(_))) {
        return Ok(None);
    }
    let ct = |i: usize| out_cts.get(i).cloned().unwrap_or(Tangent::Zero);
    let out = |i: usize| primals.outputs.get(i).cloned().flatten();
    let a = primals.input(0);
    match l {
        LinalgOp::Svd(Svd(o)) if SVD && o.derivative_eps.is_none() => {
            let checked = svd(face, GaugeOf::Svd, a, [out(0), out(1), out(2)], [ct(0), ct(1), ct(2)])?;
            Ok(Some(checked.into_iter().collect()))
        }
        LinalgOp::SvdVals(SvdVals(o)) if SVD && o.derivative_eps.is_none() => {
            let [_, gs, _] =
                svd(face, GaugeOf::Svd, a, [None, out(0), None], [Tangent::Zero, ct(0), Tangent::Zero])?;
            Ok(Some([gs].into_iter().collect()))
        }
        LinalgOp::SvdFull(SvdFull(o)) if SVD && o.derivative_eps.is_none() => {
            let (m, n) = rows_cols(face, a);
            let k = m.min(n);
            let (completion_u, completion_vh) = (m > k, n > k);
            if (completion_u && !ct(0).is_zero()) || (completion_vh && !ct(2).is_zero()) {
                return Ok(None); // the rule reports the completion columns
            }
            let mut u = out(0);
            if let (true, Some(full)) = (completion_u, &u) {
                u = Some(face.slice(full, [0, 0], [m, k])?);
            }
            let mut vh = out(2);
            if let (true, Some(full)) = (completion_vh, &vh) {
                vh = Some(face.slice(full, [0, 0], [k, n])?);
            }
            let checked = svd(face, GaugeOf::Svd, a, [u, out(1), vh], [ct(0), ct(1), ct(2)])?;
            Ok(Some(checked.into_iter().collect()))
        }
        LinalgOp::SvdTruncated(_) if SVD => {
            // The rule is the thin rule on the whole thin SVD with the
            // discarded cotangents masked off: check exactly that, so a cut
            // through a tied group is reported and cotangents on discarded
            // triplets (which the rule ignores) are not.
            let full = face.svd(a)?;
            let u_kept = out(0).ok_or_else(|| missing("u"))?;
            let mask = kept_mask(face, &u_kept)?;
            let mut masked = [ct(0), ct(1), ct(2)];
            for (i, c) in masked.iter_mut().enumerate() {
                if let Tangent::Value(v) = c {
                    *v = match i {
                        0 => face.scale_cols(v, &mask)?,
                        1 => face.binary(BinaryOp::Mul, &mask, v)?,
                        _ => face.scale_rows(v, &mask)?,
                    };
                }
            }
            let factors = [Some(full.u), Some(full.s), Some(full.vh)];
            let [gu, gs, gvh] = svd(face, GaugeOf::SvdTruncated, a, factors, masked)?;
            Ok(Some([gu, gs, gvh, ct(3)].into_iter().collect()))
        }
        LinalgOp::LowRankApprox(_) if cfg!(feature = "op-recombine") => {
            // a_p = U diag(κ∘s) Vᴴ (κ the kept mask): its cotangent G is
            // the SVD cotangent gU = G V diag(κ∘s), gVᴴ = diag(κ∘s) Uᴴ G.
            // gs = κ∘Re diag(Uᴴ G V) is left out on purpose: the check would
            // read it as unequal inside a kept tie, or as a kink at a kept
            // zero, where a_p is differentiable. Its slot carries the scale
            // instead (`scale_carrier`): when G is orthogonal to the kept
            // vectors (G = −2 (A − A_p) for ‖A − A_p‖²), gU and gVᴴ are
            // rounding noise, and measured against their own size they
            // would read as a violation. A cut through a tied group
            // makes a_U + a_V nonzero on the pair across it. (A cut inside
            // a group of zero values has d = κ∘s = 0 on both sides and is
            // not seen: a documented gap.) The check's outputs are not needed
            // downstream: the program passes keep check ops (`ir/passes.rs`).
            let Tangent::Value(g) = ct(0) else { return Ok(None) };
            let rank = out(1).ok_or_else(|| missing("rank"))?;
            let full = face.svd(a)?;
            let k = rows_cols(face, a).0.min(rows_cols(face, a).1);
            let real = face.meta(&full.s).dtype;
            let kappa = face.rank_mask(&rank, k, real)?;
            let ks = face.binary(BinaryOp::Mul, &kappa, &full.s)?;
            let gv = face.matmul_with(&g, MatOp::Identity, &full.vh, MatOp::Adjoint)?;
            let gu = face.scale_cols(&gv, &ks)?;
            let ug = face.matmul_with(&full.u, MatOp::Adjoint, &g, MatOp::Identity)?;
            let gvh = face.scale_rows(&ug, &ks)?;
            let gs = scale_carrier(face, &g, &ks)?;
            let factors = [Some(full.u), Some(full.s), Some(full.vh)];
            let cts = [Tangent::Value(gu), Tangent::Value(gs), Tangent::Value(gvh)];
            svd(face, GaugeOf::LowRankApprox, a, factors, cts)?;
            Ok(None)
        }
        LinalgOp::Eigh(Eigh(o)) if EIGH && o.derivative_eps.is_none() => {
            let checked = eigh(face, a, [out(0), out(1)], [ct(0), ct(1)])?;
            Ok(Some(checked.into_iter().collect()))
        }
        LinalgOp::EighVals(EighVals(o)) if EIGH && o.derivative_eps.is_none() => {
            let [gw, _] = eigh(face, a, [out(0), None], [ct(0), Tangent::Zero])?;
            Ok(Some([gw].into_iter().collect()))
        }
        _ => Ok(None),
    }
}

/// max|G| · κ∘s for each batch item: the size gU and gVᴴ of a low-rank
/// approximation would have if G were not orthogonal to the kept vectors,
/// as a cotangent of the singular values that the check never flags (equal
/// inside a kept tie, zero at a zero value, unequal only across a cut
/// through a tie, which gU and gVᴴ report anyway), so the check's
/// tolerance scales with G rather than with rounding noise.
fn scale_carrier<F: Face>(face: &mut F, g: &F::Tensor, ks: &F::Tensor) -> Result<F::Tensor> {
    let ks_dims = face.meta(ks).shape.clone();
    let (k, batch) = (ks_dims.dims()[0], &ks_dims.dims()[1..]);
    let abs = face.unary(UnaryOp::Abs, g)?;
    let g_max = face.reduce(ReduceOp::Max, &abs, 2)?;
    let column = Shape::from_parts(&[k, 1], batch);
    let row = Shape::from_parts(&[1], batch);
    let (Ok(column), Ok(row)) = (column, row) else {
        return Err(Error::TooManyDims { op: "gauge_check", arg: "s", rank: ks_dims.rank() + 1 });
    };
    let ks_column = face.reshape(ks, column.dims())?;
    let g_max_row = face.reshape(&g_max, row.dims())?;
    let scaled = face.scale_cols(&ks_column, &g_max_row)?;
    face.reshape(&scaled, ks_dims.dims())
}

/// Rows and columns of a matrix (0 for a missing dim; the op's own shape
/// checks have run).
fn rows_cols<F: Face>(face: &F, a: &F::Tensor) -> (usize, usize) {
    let meta = face.meta(a);
    let dim = |i: usize| meta.shape.dims().get(i).copied().unwrap_or(0);
    (dim(0), dim(1))
}

/// A missing output (the op produced it, so unreachable in practice).
fn missing(output: &'static str) -> Error {
    Error::Buffer { op: "gauge_check", arg: output, why: "was not produced by the op", needed: 1, got: 0 }
}

/// A tensor of zeros with `a`'s dtype, `core` dims and `a`'s batch dims.
fn zeros<F: Face>(face: &mut F, a: &F::Tensor, core: &[usize]) -> Result<F::Tensor> {
    let meta = face.meta(a);
    let batch = meta.shape.dims().get(2..).unwrap_or(&[]);
    let shape = Shape::from_parts(core, batch).map_err(|e| Error::TooManyDims {
        op: "gauge_check",
        arg: "zeros",
        rank: e.rank,
    })?;
    face.fill(TensorMeta::new(meta.dtype, shape), 0.0)
}

/// The cotangent's value, or zeros shaped like `like` (`zero` when given,
/// a fresh fill otherwise).
fn value_or_zeros<F: Face>(
    face: &mut F,
    ct: &Tangent<F::Tensor>,
    like: &F::Tensor,
    zero: Option<&F::Tensor>,
) -> Result<F::Tensor> {
    match (ct, zero) {
        (Tangent::Value(v), _) => Ok(v.clone()),
        (_, Some(z)) => Ok(z.clone()),
        _ => {
            let meta = face.meta(like);
            face.fill(meta, 0.0)
        }
    }
}

/// The checked cotangents: the check's output where the cotangent was a
/// value, the cotangent itself (zero) elsewhere.
fn rejoin<T: Clone, const N: usize>(
    cts: [Tangent<T>; N],
    mut outs: crate::face::Applied<T>,
) -> Result<[Tangent<T>; N]> {
    let mut i = 0;
    Ok(cts.map(|ct| {
        let out = outs.get_mut(i).and_then(Option::take);
        i += 1;
        match (ct, out) {
            (Tangent::Value(_), Some(v)) => Tangent::Value(v),
            (ct, _) => ct,
        }
    }))
}

/// Runs `SvdGaugeCheck` (reporting as `of`) on thin factors `[u, s, vh]`
/// (a missing factor as zeros) and cotangents `[gu, gs, gvh]`.
fn svd<F: Face>(
    face: &mut F,
    of: GaugeOf,
    a: &F::Tensor,
    [u, s, vh]: [Option<F::Tensor>; 3],
    cts: [Tangent<F::Tensor>; 3],
) -> Result<[Tangent<F::Tensor>; 3]> {
    let s = s.ok_or_else(|| missing("s"))?;
    let (m, n) = rows_cols(face, a);
    let k = m.min(n);
    let (u, zero_u) = match u {
        Some(u) => (u, None),
        None => {
            let z = zeros(face, a, &[m, k])?;
            (z.clone(), Some(z))
        }
    };
    let (vh, zero_vh) = match vh {
        Some(vh) => (vh, None),
        None => {
            let z = zeros(face, a, &[k, n])?;
            (z.clone(), Some(z))
        }
    };
    let gu = value_or_zeros(face, &cts[0], &u, zero_u.as_ref())?;
    let gs = value_or_zeros(face, &cts[1], &s, None)?;
    let gvh = value_or_zeros(face, &cts[2], &vh, zero_vh.as_ref())?;
    let check = Op::Linalg(LinalgOp::SvdGaugeCheck(SvdGaugeCheck(of)));
    let outs = face.apply(check, &[&u, &s, &vh, &gu, &gs, &gvh])?;
    rejoin(cts, outs)
}

/// Runs `EighGaugeCheck` on `[w, v]` (a missing v as zeros) and
/// cotangents `[gw, gv]`.
fn eigh<F: Face>(
    face: &mut F,
    a: &F::Tensor,
    [w, v]: [Option<F::Tensor>; 2],
    cts: [Tangent<F::Tensor>; 2],
) -> Result<[Tangent<F::Tensor>; 2]> {
    let w = w.ok_or_else(|| missing("w"))?;
    let n = rows_cols(face, a).0;
    let (v, zero_v) = match v {
        Some(v) => (v, None),
        None => {
            let z = zeros(face, a, &[n, n])?;
            (z.clone(), Some(z))
        }
    };
    let gw = value_or_zeros(face, &cts[0], &w, None)?;
    let gv = value_or_zeros(face, &cts[1], &v, zero_v.as_ref())?;
    let check = Op::Linalg(LinalgOp::EighGaugeCheck(EighGaugeCheck));
    let outs = face.apply(check, &[&v, &w, &gw, &gv])?;
    rejoin(cts, outs)
}
