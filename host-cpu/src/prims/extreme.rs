//! The extreme mask: 1 where each batch item's max (or min) over its core
//! dims is attained, 0 elsewhere; a tied extreme has no derivative and is
//! an error.

use super::strided::{self, View, Walk};
use lindiff_core::prim::{ExtremeMask, ReduceOp};
use lindiff_core::{Error, Host, Input, Output, Result, Scalar};

/// The mask of `x` (see [`ExtremeMask`]).
pub(super) fn extreme_mask<T: Scalar + lindiff_core::Element>(
    op: &ExtremeMask,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "extreme_mask";
    let desc = inputs[0].desc;
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let r = op.core_rank;
    let (core, core_strides) = (&desc.meta.shape.dims()[..r], &desc.strides[..r]);
    let batch = &desc.meta.shape.dims()[r..];
    let items = || Walk::new(batch, [View::new(&[&desc.strides[r..]], desc.offset)]);
    let elements =
        |base: usize| Walk::new(core, [View::new(&[core_strides], base)]).map(|p| x[p.offsets[0]].re());
    let better = |v: T::Real, best: T::Real| match op.op {
        ReduceOp::Min => v < best,
        ReduceOp::Max | ReduceOp::Sum => v > best,
    };
    let extreme = |base: usize| -> Result<T::Real> {
        let mut best: Option<T::Real> = None;
        let mut ties = 0usize;
        for v in elements(base) {
            #[allow(clippy::eq_op)]
            if v != v {
                return Err(Error::NonFinite { op: NAME, arg: "x", batch_index: 0 });
            }
            match best {
                Some(b) if v == b => ties += 1,
                Some(b) if !better(v, b) => {}
                _ => {
                    best = Some(v);
                    ties = 0;
                }
            }
        }
        if ties > 0 {
            let reduce = if op.op == ReduceOp::Min { "min" } else { "max" };
            return Err(Error::NotDifferentiable { op: reduce, output: "y", why: ExtremeMask::TIED });
        }
        Ok(best.unwrap_or_else(T::Real::zero))
    };
    for p in items() {
        extreme(p.offsets[0])?;
    }
    let one = T::one();
    let values = items().flat_map(|p| {
        let best = extreme(p.offsets[0]).unwrap_or_else(|_| T::Real::zero());
        elements(p.offsets[0]).map(move |v| if v == best { one } else { T::zero() })
    });
    strided::write_values(NAME, "mask", out, values)
}
