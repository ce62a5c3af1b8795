//! Kernels of the spectral helper primitives (`lindiff_core::prim::PairInv`,
//! `PivotPhase`) and of the internal `ValuesCheck`. All work per batch item:
//! a pass over the item's input (the largest |x_i|, each column's pivot row,
//! the check), then one over its output.

use super::strided::{self, View, Walk};
use crate::kernels::gauge_check::{check_values, threshold};
use lindiff_core::op::internal::{Cut, Part, TangentTieCheck, ValuesCheck};
use lindiff_core::prim::{Pair, PairInv, Regularize};
use lindiff_core::{Host, Input, Output, RealScalar, Result, Scalar};

/// `y[i, j] = g(x_j ∓ x_i)` per batch item.
pub(super) fn pair_inv<T: Scalar>(
    op: &PairInv,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "pair_inv";
    let desc = inputs[0].desc;
    let x = strided::input::<T>(NAME, "x", &inputs[0])?;
    let k = desc.meta.shape.dims()[0];
    let s0 = desc.strides[0];
    let batch = Walk::new(&desc.meta.shape.dims()[1..], [View::new(&[&desc.strides[1..]], desc.offset)]);
    let slot = strided::output::<T>(NAME, "y", out)?;
    if k > 0 {
        // One k×k block per batch item, column by column: y[.., j] from x_j
        // and the whole of x.
        for (block, item) in slot.chunks_exact_mut(k * k).zip(batch) {
            let base = item.offsets[0];
            let at = |i: usize| x[base + i * s0];
            let largest = (0..k).map(|i| at(i).abs()).fold(T::Real::zero(), |m, a| m.max_real(a));
            let delta = match op.regularize {
                Regularize::Cutoff { relative } => largest * T::Real::from_f64(relative),
                Regularize::Lorentzian { .. } => T::Real::zero(),
            };
            // With `std`, a unit-stride x is read as a slice, so the column
            // loops vectorize (the division dominates); firmware keeps the
            // one generic loop (.text counts there).
            let xs = (cfg!(feature = "std") && s0 == 1).then(|| &x[base..base + k]);
            for (j, column) in block.chunks_exact_mut(k).enumerate() {
                let xj = at(j);
                let g = |xi: T| {
                    let z = match op.pair {
                        Pair::Diff => xj - xi,
                        Pair::Sum => xi + xj,
                    };
                    match op.regularize {
                        Regularize::Cutoff { .. } => cutoff(z, delta),
                        Regularize::Lorentzian { eps } => {
                            let eps = T::Real::from_f64(eps);
                            z.conj().scale(T::Real::one() / (z.abs2() + eps * eps))
                        }
                    }
                };
                match (xs, op.pair, op.regularize) {
                    // The common cases get a loop each, with the pair and
                    // the regularization fixed inside it.
                    (Some(xs), Pair::Diff, Regularize::Cutoff { .. }) => {
                        fill(column, xs, |xi| cutoff(xj - xi, delta))
                    }
                    (Some(xs), Pair::Sum, Regularize::Cutoff { .. }) => {
                        fill(column, xs, |xi| cutoff(xi + xj, delta))
                    }
                    (Some(xs), ..) => fill(column, xs, g),
                    (None, ..) => {
                        for (i, y) in column.iter_mut().enumerate() {
                            y.write(g(at(i)));
                        }
                    }
                }
                if op.pair == Pair::Diff {
                    // The diagonal is zero whatever the regularization.
                    column[j].write(T::zero());
                }
            }
        }
    }
    // SAFETY: the k×k blocks, one per batch item (the walk over the batch
    // dims), cover every element of the slot.
    unsafe { strided::finish::<T>(out) };
    Ok(())
}

/// `column[i] = f(xs[i])`.
#[inline(always)]
fn fill<T: Scalar>(column: &mut [core::mem::MaybeUninit<T>], xs: &[T], f: impl Fn(T) -> T) {
    for (y, &xi) in column.iter_mut().zip(xs) {
        y.write(f(xi));
    }
}

/// 1/z where |z| > δ, 0 otherwise (PairInv's cutoff).
#[inline(always)]
fn cutoff<T: Scalar>(z: T, delta: T::Real) -> T {
    if z.abs() > delta {
        T::one() / z
    } else {
        T::zero()
    }
}

/// [`ValuesCheck`] per batch item: the check of `x` and `g` (both real
/// `[k, batch…]`), then `g` copied to the output.
pub(super) fn values_check<T: Scalar>(
    op: &ValuesCheck,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = ValuesCheck::NAME;
    let (dx, dg) = (inputs[0].desc, inputs[1].desc);
    let x = strided::input::<T::Real>(NAME, "x", &inputs[0])?;
    let g = strided::input::<T::Real>(NAME, "g", &inputs[1])?;
    let k = dx.meta.shape.dims()[0];
    let (sx, sg) = (dx.strides[0], dg.strides[0]);
    let views = [View::new(&[&dx.strides[1..]], dx.offset), View::new(&[&dg.strides[1..]], dg.offset)];
    for item in Walk::new(&dx.meta.shape.dims()[1..], views) {
        let [bx, bg] = item.offsets;
        check_values(op, |i| x[bx + i * sx], |i| g[bg + i * sg], k)?;
    }
    strided::write_walk(NAME, "g", out, [View::of(dg)], |p| g[p.offsets[0]])
}

/// [`TangentTieCheck`] per batch item: `c` (`[k, k, batch…]`) against the
/// pairs of `x` (`[k, batch…]`, real or complex) the cutoff cuts, then `c`
/// copied to the output.
pub(super) fn tangent_tie_check<T: Scalar>(
    op: &TangentTieCheck,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = TangentTieCheck::NAME;
    let (dx, dc) = (inputs[0].desc, inputs[1].desc);
    // The spectrum as T: real values widened, complex ones (eig) as they are.
    let (real, complex) = if dx.meta.dtype.is_complex() {
        (None, Some(strided::input::<T>(NAME, "x", &inputs[0])?))
    } else {
        (Some(strided::input::<T::Real>(NAME, "x", &inputs[0])?), None)
    };
    let x = |p: usize| match (real, complex) {
        (Some(r), _) => T::from_real(r[p]),
        (_, Some(c)) => c[p],
        _ => T::zero(),
    };
    let c = strided::input::<T>(NAME, "c", &inputs[1])?;
    let k = dx.meta.shape.dims()[0];
    let (sx, sr, sc) = (dx.strides[0], dc.strides[0], dc.strides[1]);
    let views = [View::new(&[&dx.strides[1..]], dx.offset), View::new(&[&dc.strides[2..]], dc.offset)];
    for item in Walk::new(&dx.meta.shape.dims()[1..], views) {
        let [bx, bc] = item.offsets;
        let at = |i: usize| x(bx + i * sx);
        let entry = |i: usize, j: usize| c[bc + i * sr + j * sc];
        let coupling = |i: usize, j: usize| match op.part {
            Part::Whole => entry(i, j).abs(),
            Part::Hermitian => (entry(i, j) + entry(j, i).conj()).abs(),
            Part::AntiHermitian => (entry(i, j) - entry(j, i).conj()).abs(),
        };
        let largest = (0..k).map(|i| at(i).abs()).fold(T::Real::zero(), |m, a| m.max_real(a));
        let delta = largest * T::Real::from_f64(op.relative);
        // Measured against ‖C‖_F, whatever the part: a part that is all
        // rounding of a larger C is zero, and so is rounding that grows
        // with k (a product UᴴdAV rounds in proportion to ‖dA‖). Formed
        // only once a pair falls under the cutoff (most spectra have none).
        let frobenius = || {
            let entries = || (0..k).flat_map(|j| (0..k).map(move |i| entry(i, j).abs()));
            let biggest = entries().fold(T::Real::zero(), |m, a| m.max_real(a));
            if biggest > T::Real::zero() {
                biggest * entries().fold(T::Real::zero(), |sum, a| sum + (a / biggest).abs2()).sqrt()
            } else {
                biggest
            }
        };
        let mut limit = None;
        for j in 0..k {
            for i in 0..k {
                let z = match op.cut {
                    Cut::Tie if i == j => continue,
                    Cut::Tie => at(j) - at(i),
                    Cut::Zero => at(i) + at(j),
                };
                if z.abs() <= delta && coupling(i, j) > *limit.get_or_insert_with(|| threshold(frobenius())) {
                    return Err(op.error());
                }
            }
        }
    }
    strided::write_walk(NAME, "c", out, [View::of(dc)], |p| c[p.offsets[0]])
}

/// `y[r_j, j] = 1/u[r_j, j]` at each column's first largest-magnitude entry.
pub(super) fn pivot_phase<T: Scalar>(
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
) -> Result<()> {
    const NAME: &str = "pivot_phase";
    let desc = inputs[0].desc;
    let u = strided::input::<T>(NAME, "u", &inputs[0])?;
    let dims = desc.meta.shape.dims();
    let (m, s) = (dims[0], &desc.strides);
    // Walk the columns of every batch item; each yields its m outputs.
    let columns = Walk::new(&dims[1..], [View::new(&[&s[1..]], desc.offset)]);
    let values = columns.flat_map(|col| {
        let base = col.offsets[0];
        let at = move |i: usize| u[base + i * s[0]];
        let mut pivot = None;
        let mut best = T::Real::zero();
        for i in 0..m {
            let mag = at(i).abs();
            if mag > best {
                best = mag;
                pivot = Some(i);
            }
        }
        (0..m).map(move |i| if Some(i) == pivot { T::one() / at(i) } else { T::zero() })
    });
    strided::write_values(NAME, "y", out, values)
}
