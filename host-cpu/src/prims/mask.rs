//! Kernel of the rank mask (`lindiff_core::prim::RankMask`): per batch item,
//! read the i64 count once and write its k ones and zeros.

use super::strided::{self, View, Walk};
use lindiff_core::prim::RankMask;
use lindiff_core::{Host, Input, Output, Result, Scalar};

/// `y[i, b…] = 1` if `i < rank[b…]` else 0, in the output's type `T`.
pub(super) fn rank_mask<T: Scalar>(
    op: &RankMask,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "rank_mask";
    let desc = inputs[0].desc;
    let rank = strided::input::<i64>(NAME, "rank", &inputs[0])?;
    let k = op.k;
    let items = Walk::new(desc.meta.shape.dims(), [View::of(desc)]);
    let values = items.flat_map(|item| {
        let r = rank[item.offsets[0]];
        // A negative count keeps nothing.
        let kept = usize::try_from(r).unwrap_or(0);
        (0..k).map(move |i| if i < kept { T::one() } else { T::zero() })
    });
    strided::write_values(NAME, "y", out, values)
}
