//! Reporting instead of guessing (`docs/ad-rules.md`, "Gauge check"): before an
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
//!   With a cotangent on s alone (a loss of the values; its rule then
//!   divides by no gap), the values are checked as for `SvdVals`, with no
//!   bound; likewise `Eigh` with one on w alone.
//! * `SvdVals`: the values alone, through [`ValuesCheck`] (kinks, and
//!   unequal ∂L/∂s inside a tied group; no vectors, no bound).
//! * `SvdFull`: the thin part (the first k columns of u, rows of vh). A
//!   nonzero cotangent on a factor with completion columns is already an
//!   error of the rule, which is left to say so.
//! * `SvdTruncated`: the whole thin SVD (recomputed, as its rule does) with
//!   the cotangents of the discarded triplets masked off, so a cut through a
//!   tied group is reported.
//! * `LowRankApprox`: the SVD cotangents equivalent to its a_p's on the
//!   recomputed thin SVD (a cut through a tied group is reported as
//!   `low_rank_approx`/`a_p`).
//! * `Eigh`: likewise with w, v; `EighVals` through [`ValuesCheck`].
//! * Options with a derivative broadening ε (`derivative_eps`) reproduce
//!   the Lorentzian-broadened rule, which does not check: no check there.
//!
//! A zero cotangent is materialized (a `fill` of zeros) only when another
//! cotangent of the same op is nonzero; with all zero, nothing runs.

use crate::ad::cx::Tangent;
use crate::ad::rules::{kept_mask, Primals};
use crate::error::{Error, Result};
use crate::face::Face;
use crate::op::internal::{
    Completion, CompletionCheck, EigGaugeCheck, EighGaugeCheck, GaugeOf, SvdGaugeCheck, Values, ValuesCheck,
};
use crate::op::{Eigh, EighVals, LinalgOp, MatOp, Svd, SvdFull, SvdVals, SvdVectors, MAX_OUTPUTS};
use crate::prim::{BinaryOp, ReduceOp, UnaryOp};
use crate::provider::Op;
use crate::shape::Shape;
use crate::tensor::TensorMeta;
use crate::Ops;

/// Whether the rules (and so the checks) of a family are in this build
/// (lindiff-core's `op-*` features): a family that is off has no rule to
/// check for, and its check is not linked.
const SVD: bool = cfg!(feature = "op-svd");
const EIGH: bool = cfg!(feature = "op-eigh");
const EIG: bool = cfg!(feature = "op-eig");

/// Output cotangents of an op, in its output order.
pub(super) type Cts<T> = heapless::Vec<Tangent<T>, MAX_OUTPUTS>;

/// The thin SVD standing in for a full one: its op, outputs, cotangents.
pub(super) type ThinSvd<T> = (Op, heapless::Vec<Option<T>, MAX_OUTPUTS>, Cts<T>);

/// Checked cotangents of `N` outputs and the check's bound.
type CheckedCts<T, const N: usize> = ([Tangent<T>; N], T);

/// What the check of one op's cotangents gives reverse mode: the
/// cotangents to transpose (`None`: the op's own), and the error bound to
/// hold the input cotangent to afterwards ([`TieCheck`]).
pub(super) struct Checked<T> {
    /// The checked output cotangents.
    pub cts: Option<Cts<T>>,
    /// The gauge check's bound and the op it reports as.
    pub bound: Option<(T, GaugeOf)>,
}

impl<T> Checked<T> {
    fn none() -> Self {
        Checked { cts: None, bound: None }
    }
}

/// `out_cts` after `op`'s gauge check, or `None` when `op` has none (or
/// every cotangent is zero, or a derivative broadening is set).
///
/// # Errors
/// `Error::NotDifferentiable` or `Error::NearTie` from the check (eager
/// face), and the errors of the ops it records.
pub(super) fn check<F: Face>(
    face: &mut F,
    op: &Op,
    primals: &Primals<'_, F::Tensor>,
    out_cts: &[Tangent<F::Tensor>],
) -> Result<Checked<F::Tensor>> {
    let Op::Linalg(l) = op else { return Ok(Checked::none()) };
    if !out_cts.iter().any(|c| matches!(c, Tangent::Value(_))) {
        return Ok(Checked::none());
    }
    let ct = |i: usize| out_cts.get(i).cloned().unwrap_or(Tangent::Zero);
    let out = |i: usize| primals.outputs.get(i).cloned().flatten();
    let a = primals.input(0);
    let checked = |cts: Cts<F::Tensor>, bound: Option<F::Tensor>, of: GaugeOf| Checked {
        cts: Some(cts),
        bound: bound.map(|b| (b, of)),
    };
    match l {
        LinalgOp::Svd(Svd(o)) | LinalgOp::SvdFull(SvdFull(o))
            if SVD && o.derivative_eps.is_none() && ct(0).is_zero() && ct(2).is_zero() =>
        {
            // Only s is read: the rule forms ds alone, as for `SvdVals`,
            // dividing by no gap. Check the values, no bound.
            let gs = values(face, GaugeOf::Svd, out(1), ct(1))?;
            Ok(checked([ct(0), gs, ct(2)].into_iter().collect(), None, GaugeOf::Svd))
        }
        LinalgOp::Svd(Svd(o)) if SVD && o.derivative_eps.is_none() => {
            let (cts, bound) = svd(face, GaugeOf::Svd, a, [out(0), out(1), out(2)], [ct(0), ct(1), ct(2)])?;
            Ok(checked(cts.into_iter().collect(), Some(bound), GaugeOf::Svd))
        }
        LinalgOp::SvdVals(SvdVals(o)) if SVD && o.derivative_eps.is_none() => {
            // Values alone divide by no gap: the check, no bound.
            let gs = values(face, GaugeOf::Svd, out(0), ct(0))?;
            Ok(checked([gs].into_iter().collect(), None, GaugeOf::Svd))
        }
        LinalgOp::SvdFull(SvdFull(o)) if SVD && o.derivative_eps.is_none() => {
            // Square only: a full SVD with completion columns goes through
            // its thin part first (`thin_full_svd`).
            let (cts, bound) = svd(face, GaugeOf::Svd, a, [out(0), out(1), out(2)], [ct(0), ct(1), ct(2)])?;
            Ok(checked(cts.into_iter().collect(), Some(bound), GaugeOf::Svd))
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
            let ([gu, gs, gvh], bound) = svd(face, GaugeOf::SvdTruncated, a, factors, masked)?;
            Ok(checked([gu, gs, gvh, ct(3)].into_iter().collect(), Some(bound), GaugeOf::SvdTruncated))
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
            let Tangent::Value(g) = ct(0) else { return Ok(Checked::none()) };
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
            // Its rule divides by no gap inside the kept block: no bound.
            svd(face, GaugeOf::LowRankApprox, a, factors, cts)?;
            Ok(Checked::none())
        }
        LinalgOp::Eigh(Eigh(o)) if EIGH && o.derivative_eps.is_none() && ct(1).is_zero() => {
            // Only w is read: the rule forms dw alone, dividing by no gap.
            let gw = values(face, GaugeOf::Eigh, out(0), ct(0))?;
            Ok(checked([gw, Tangent::Zero].into_iter().collect(), None, GaugeOf::Eigh))
        }
        LinalgOp::Eigh(Eigh(o)) if EIGH && o.derivative_eps.is_none() => {
            let (cts, bound) = eigh(face, [out(0), out(1)], [ct(0), ct(1)])?;
            Ok(checked(cts.into_iter().collect(), Some(bound), GaugeOf::Eigh))
        }
        LinalgOp::EighVals(EighVals(o)) if EIGH && o.derivative_eps.is_none() => {
            let gw = values(face, GaugeOf::Eigh, out(0), ct(0))?;
            Ok(checked([gw].into_iter().collect(), None, GaugeOf::Eigh))
        }
        LinalgOp::Eig(_) if EIG => {
            let (w, v) = (out(0).ok_or_else(|| missing("w"))?, out(1).ok_or_else(|| missing("v"))?);
            let gw = value_or_zeros(face, &ct(0), &w, None)?;
            let gv = value_or_zeros(face, &ct(1), &v, None)?;
            let both = match (&ct(0), &ct(1)) {
                (Tangent::Value(_), Tangent::Value(_)) => Values::Read,
                _ => Values::Unread,
            };
            let outs = face.apply(EigGaugeCheck(both).into(), &[&v, &w, &gw, &gv])?;
            let bound = outs.get(2).cloned().flatten().ok_or_else(|| missing("bound"))?;
            let cts = rejoin([ct(0), ct(1)], outs)?;
            Ok(checked(cts.into_iter().collect(), Some(bound), GaugeOf::Eig))
        }
        LinalgOp::EigVals(_) if EIG => {
            // Values alone: the check of the rule's own eigenvectors (a
            // full eig, as the rule computes them), with no vector
            // cotangent — unequal ∂L/∂λ inside a repeated eigenvalue and a
            // defective one are errors; no bound (dλ divides by no gap).
            let w = out(0).ok_or_else(|| missing("w"))?;
            let full = face.eig(a)?;
            let gw = value_or_zeros(face, &ct(0), &w, None)?;
            let gv = value_or_zeros(face, &Tangent::Zero, &full.v, None)?;
            let outs = face.apply(EigGaugeCheck(Values::Unread).into(), &[&full.v, &w, &gw, &gv])?;
            let [gw, _] = rejoin([ct(0), Tangent::Zero], outs)?;
            Ok(checked([gw].into_iter().collect(), None, GaugeOf::Eig))
        }
        _ => Ok(Checked::none()),
    }
}

/// The thin part of a full SVD factor (`keep` = its rows × cols) and of
/// its cotangent, the rest of which (`whole` = the factor's rows × cols)
/// must pass the [`CompletionCheck`] when `completed`.
fn thin_factor<F: Face>(
    face: &mut F,
    full: &F::Tensor,
    ct: &Tangent<F::Tensor>,
    completed: bool,
    completion: Completion,
    keep: [usize; 2],
    whole: [usize; 2],
) -> Result<(F::Tensor, Tangent<F::Tensor>)> {
    if !completed {
        return Ok((full.clone(), ct.clone()));
    }
    let thin = face.slice(full, [0, 0], keep)?;
    let ct = match ct {
        Tangent::Value(g) => {
            // The completion block: u's columns from k on, vh's rows from k on.
            let (start, size) = match completion {
                Completion::U => ([0, keep[1]], [whole[0], whole[1] - keep[1]]),
                Completion::Vh => ([keep[0], 0], [whole[0] - keep[0], whole[1]]),
            };
            let block = face.slice(g, start, size)?;
            face.apply(CompletionCheck(completion).into(), &[&block])?;
            Tangent::Value(face.slice(g, [0, 0], keep)?)
        }
        other => other.clone(),
    };
    Ok((thin, ct))
}

/// The thin SVD that stands in for a full SVD with completion columns (a
/// tall `u` or a wide `vh`) in reverse mode: its op, outputs and
/// cotangents, after each completion block's cotangent passed its
/// [`CompletionCheck`] (zero, or `NotDifferentiable` naming the block).
/// `None` for any other op, or a full SVD without completion columns.
///
/// # Errors
/// The completion check's, and the errors of the slices it records.
pub(super) fn thin_full_svd<F: Face>(
    face: &mut F,
    op: &Op,
    primals: &Primals<'_, F::Tensor>,
    out_cts: &[Tangent<F::Tensor>],
) -> Result<Option<ThinSvd<F::Tensor>>> {
    let Op::Linalg(LinalgOp::SvdFull(SvdFull(options))) = op else { return Ok(None) };
    let (m, n) = rows_cols(face, primals.input(0));
    let k = m.min(n);
    if !SVD || (m == k && n == k) {
        return Ok(None);
    }
    // u (output 0) keeps its first k columns, vh (output 2) its first k rows.
    let u = thin_factor(face, primals.output(op, 0)?, &out_cts[0], m > k, Completion::U, [m, k], [m, m])?;
    let vh = thin_factor(face, primals.output(op, 2)?, &out_cts[2], n > k, Completion::Vh, [k, n], [n, n])?;
    let s = primals.outputs.get(1).cloned().flatten();
    let ct_s = out_cts.get(1).cloned().unwrap_or(Tangent::Zero);
    let outputs = [Some(u.0), s, Some(vh.0)].into_iter().collect();
    let cts = [u.1, ct_s, vh.1].into_iter().collect();
    let thin = Op::Linalg(LinalgOp::Svd(Svd(options.vectors(SvdVectors::Both))));
    Ok(Some((thin, outputs, cts)))
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
/// (a missing factor as zeros) and cotangents `[gu, gs, gvh]`: the checked
/// cotangents and the bound.
fn svd<F: Face>(
    face: &mut F,
    of: GaugeOf,
    a: &F::Tensor,
    [u, s, vh]: [Option<F::Tensor>; 3],
    cts: [Tangent<F::Tensor>; 3],
) -> Result<CheckedCts<F::Tensor, 3>> {
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
    let check = SvdGaugeCheck(of, values_read(&cts[1])).into();
    let outs = face.apply(check, &[&u, &s, &vh, &gu, &gs, &gvh])?;
    let bound = outs.get(3).cloned().flatten().ok_or_else(|| missing("bound"))?;
    Ok((rejoin(cts, outs)?, bound))
}

/// The values `x` of a decomposition and their cotangent through
/// [`ValuesCheck`] (a zero cotangent needs none).
fn values<F: Face>(
    face: &mut F,
    of: GaugeOf,
    x: Option<F::Tensor>,
    ct: Tangent<F::Tensor>,
) -> Result<Tangent<F::Tensor>> {
    let Tangent::Value(g) = &ct else { return Ok(ct) };
    let check = ValuesCheck(of);
    let x = x.ok_or_else(|| missing(check.output()))?;
    let outs = face.apply(check.into(), &[&x, g])?;
    outs.into_iter().next().flatten().map(Tangent::Value).ok_or_else(|| missing("g"))
}

/// Whether a values cotangent is on the tape (see [`Values`]).
fn values_read<T>(ct: &Tangent<T>) -> Values {
    match ct {
        Tangent::Value(_) => Values::Read,
        _ => Values::Unread,
    }
}

/// Runs `EighGaugeCheck` on `[w, v]` and cotangents `[gw, gv]`: the
/// checked cotangents and the bound.
fn eigh<F: Face>(
    face: &mut F,
    [w, v]: [Option<F::Tensor>; 2],
    cts: [Tangent<F::Tensor>; 2],
) -> Result<CheckedCts<F::Tensor, 2>> {
    let w = w.ok_or_else(|| missing("w"))?;
    let v = v.ok_or_else(|| missing("v"))?;
    let gw = value_or_zeros(face, &cts[0], &w, None)?;
    let gv = value_or_zeros(face, &cts[1], &v, None)?;
    let check = EighGaugeCheck(values_read(&cts[0])).into();
    let outs = face.apply(check, &[&v, &w, &gw, &gv])?;
    let bound = outs.get(2).cloned().flatten().ok_or_else(|| missing("bound"))?;
    Ok((rejoin(cts, outs)?, bound))
}
