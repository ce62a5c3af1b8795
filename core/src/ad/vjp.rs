//! One op's reverse step, shared by the eager and traced faces: linearize
//! the op with its rule onto a [`LocalTape`], then transpose that tape. Both
//! faces call this for the same ops in the same order, which is why their
//! gradients are bit-identical. SVD and eigh cotangents pass their gauge
//! check first ([`gauge`]): a loss that is not differentiable at the point
//! is reported, not answered.

mod gauge;

use super::cx::Tangent;
use super::local::{LocalTape, TapeCx};
use super::rules::{jvp, Primals};
use super::{Forward, Tangents};
use crate::error::Result;
use crate::face::Face;
use crate::op::internal::TieCheck;
use crate::op::MAX_INPUTS;
use crate::provider::Op;

/// Cotangents of `op`'s inputs (only those with `wanted[i]`; the others
/// are zero) given cotangents of its outputs.
///
/// # Errors
/// The rule's and transpose rules' errors; an output with a nonzero
/// cotangent whose derivative is undefined reports that output's error; a
/// gauge check's `NotDifferentiable` or `NearTie` (SVD, eigh, eig).
pub(crate) fn vjp_op<F: Face>(
    face: &mut F,
    op: &Op,
    primals: &Primals<'_, F::Tensor>,
    wanted: &[bool],
    out_cts: &[Tangent<F::Tensor>],
) -> Result<heapless::Vec<Tangent<F::Tensor>, MAX_INPUTS>> {
    // A full SVD with completion columns: its thin part, once the
    // completion's cotangent passed its check.
    if let Some((thin, outputs, cts)) = gauge::thin_full_svd(face, op, primals, out_cts)? {
        let primals = Primals::new(primals.inputs, &outputs);
        return vjp_op(face, &thin, &primals, wanted, &cts);
    }
    let checked = gauge::check(face, op, primals, out_cts)?;
    let out_cts = checked.cts.as_deref().unwrap_or(out_cts);
    let mut tape = LocalTape::new();
    let mut tangents: heapless::Vec<Tangent<u32>, MAX_INPUTS> = heapless::Vec::new();
    for (x, &want) in primals.inputs.iter().zip(wanted) {
        // Integer inputs (permutations) carry no tangent.
        let meta = face.meta(x);
        let t = if want && meta.dtype.is_float() { Tangent::Value(tape.input(meta)?) } else { Tangent::Zero };
        let _ = tangents.push(t); // one per input: ≤ MAX_INPUTS
    }
    let inputs = tangents.iter().filter(|t| !t.is_zero()).count();
    // The rule may skip the tangents of outputs no cotangent reads.
    let read: heapless::Vec<bool, { crate::op::MAX_OUTPUTS }> =
        out_cts.iter().map(|c| !c.is_zero()).collect();
    let primals = Primals { read: &read, ..*primals };
    let dy: Tangents<u32> = jvp(&mut TapeCx { face: &mut *face, tape: &mut tape }, op, &primals, &tangents)?;
    let mut seeds = heapless::Vec::<(u32, Tangent<F::Tensor>), { crate::op::MAX_OUTPUTS }>::new();
    for (t, ct) in dy.iter().zip(out_cts) {
        if ct.is_zero() {
            continue;
        }
        match t {
            Tangent::Zero => {}
            Tangent::Undefined(e) => return Err(e.clone()),
            Tangent::Value(v) => {
                let _ = seeds.push((*v, ct.clone())); // one per output
            }
        }
    }
    let mut cts = tape.transpose(&mut Forward::new(face), &seeds, inputs)?;
    // The rule divided by gaps: hold ∂L/∂A to the error bound the check found.
    if let (Some((bound, of)), Some(Tangent::Value(ga))) = (checked.bound, cts.first_mut()) {
        let held = face.apply(TieCheck(of).into(), &[ga, &bound])?;
        if let Some(Some(g)) = held.into_iter().next() {
            *ga = g;
        }
    }
    // Spread the tape inputs' cotangents back over the op's inputs.
    let mut cts = cts.into_iter();
    Ok(tangents
        .iter()
        .map(|t| if t.is_zero() { Tangent::Zero } else { cts.next().unwrap_or(Tangent::Zero) })
        .collect())
}
