//! The canonical sign/phase of singular vectors and eigenvectors: the
//! largest-magnitude entry of each column (the first one on ties) is made real
//! and positive. Every provider applies the same rule, so results agree up to
//! rounding.

use super::columns::{packed, packed_mut};
use super::householder::real_sign;
use crate::field::Field;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{unzip, zip, ColMut, MatMut, MatRef};
use lindiff_core::Scalar;

/// The unit factor `c` with `c·x` real and positive for the largest-magnitude
/// entry `x` of column `j` (1 for a zero column).
fn column_phase<T: Field>(m: MatRef<'_, T>, j: usize) -> T {
    let col = m.col(j);
    let (best, pivot) = match col.try_as_col_major() {
        Some(c) if !<T as Scalar>::IS_COMPLEX => largest_real(c.as_slice()),
        Some(c) => largest(c.as_slice().iter().copied()),
        None => largest(col.iter().copied()),
    };
    if best == <T as Scalar>::Real::zero() {
        T::one()
    } else if !<T as Scalar>::IS_COMPLEX {
        // Exactly ±1: pivot·(1/|pivot|) is 0.9999999999999999 for about one
        // pivot in seven, which would rescale the whole column.
        real_sign(pivot)
    } else {
        Scalar::conj(pivot).scale(<T as Scalar>::Real::one() / best)
    }
}

/// The largest magnitude and the first entry that has it (`(0, 0)` when
/// empty or all zero).
fn largest<T: Field>(xs: impl Iterator<Item = T>) -> (<T as Scalar>::Real, T) {
    let mut best = <T as Scalar>::Real::zero();
    let mut pivot = T::zero();
    for x in xs {
        let mag = Scalar::abs(x);
        if mag > best {
            best = mag;
            pivot = x;
        }
    }
    (best, pivot)
}

/// [`largest`] for real entries in two passes that compile to tight loops
/// (the maximum |x| in eight independent lanes, which become packed
/// max operations, then the first entry that has it): the same result, at a
/// fraction of the cost of the one-pass search.
fn largest_real<T: Field>(xs: &[T]) -> (<T as Scalar>::Real, T) {
    let zero = <T as Scalar>::Real::zero();
    let max = |b: <T as Scalar>::Real, x: T| {
        let m = Scalar::abs(x);
        if m > b {
            m
        } else {
            b
        }
    };
    let mut lanes = [zero; 8];
    let mut chunks = xs.chunks_exact(8);
    for c in &mut chunks {
        for (b, &x) in lanes.iter_mut().zip(c) {
            *b = max(*b, x);
        }
    }
    let best =
        lanes
            .iter()
            .fold(chunks.remainder().iter().fold(zero, |b, &x| max(b, x)), |b, &l| if l > b { l } else { b });
    let pivot = xs.iter().copied().find(|&x| Scalar::abs(x) == best).unwrap_or(T::zero());
    (best, pivot)
}

/// Multiplies column `j` of `m` by `c`; nothing when `c` is exactly 1 (so a
/// −0 part stays −0).
pub fn scale_column<T: Field>(m: &mut MatMut<'_, T>, j: usize, c: T) {
    if c == T::one() {
        return; // already canonical (always so for a real column with a positive pivot)
    }
    let mut col = m.rb_mut().col_mut(j);
    match col.rb_mut().try_as_col_major_mut() {
        Some(c_) => c_.as_slice_mut().iter_mut().for_each(|x| *x *= c),
        None => col.iter_mut().for_each(|x| *x *= c),
    }
}

/// Canonicalizes the first `k` column pairs of (U, V) by U's phase (keeping
/// U diag(s) Vᴴ unchanged), and any further columns of either by their own.
pub fn canonicalize_pairs<T: Field>(mut u: MatMut<'_, T>, mut v: MatMut<'_, T>, k: usize) {
    for j in 0..u.ncols() {
        let c = column_phase(u.rb(), j);
        scale_column(&mut u, j, c);
        if j < k && j < v.ncols() {
            scale_column(&mut v, j, c);
        }
    }
    for j in k..v.ncols() {
        let c = column_phase(v.rb(), j);
        scale_column(&mut v, j, c);
    }
}

/// The phases of V's columns for [`canonicalize_pairs`], with U made
/// canonical on the way: `phases[j]` is U's phase for the first `k` pairs
/// and V's own (read from `v`) beyond; `phases` has V's column count.
fn pair_phases<T: Field>(mut u: MatMut<'_, T>, v: MatRef<'_, T>, k: usize, mut phases: ColMut<'_, T>) {
    for j in 0..u.ncols() {
        let c = column_phase(u.rb(), j);
        scale_column(&mut u, j, c);
        if j < k && j < phases.nrows() {
            phases[j] = c;
        }
    }
    for j in k..phases.nrows() {
        phases[j] = column_phase(v, j);
    }
}

/// conj(x·c), with x left unmultiplied when c is exactly 1 (as
/// `scale_column` skips it), so that a −0 part of x stays −0.
fn conj_times<T: Field>(x: T, c: T) -> T {
    Scalar::conj(if c == T::one() { x } else { x * c })
}

/// [`canonicalize_pairs`] for factors computed straight into the outputs:
/// `vh`'s transpose holds V (not yet conjugated), as faer wrote it through
/// `vh.transpose_mut()`. Afterwards U is canonical and `vh` holds the
/// canonical Vᴴ. The phases go through `phases` (at least `vh.nrows()`
/// rows) so that Vᴴ is rewritten in one pass down its contiguous columns
/// instead of scaling its strided rows one by one.
pub fn canonicalize_pairs_adjoint<T: Field>(
    u: MatMut<'_, T>,
    mut vh: MatMut<'_, T>,
    k: usize,
    phases: ColMut<'_, T>,
) {
    let mut phases = phases.subrows_mut(0, vh.nrows());
    pair_phases(u, vh.rb().transpose(), k, phases.rb_mut());
    // Vᴴ[i, l] = conj(V[l, i] · c_i); a real Vᴴ with every c_i = 1 is done.
    if <T as Scalar>::IS_COMPLEX || phases.rb().iter().any(|&c| c != T::one()) {
        for l in 0..vh.ncols() {
            zip!(vh.rb_mut().col_mut(l), phases.rb()).for_each(|unzip!(x, c)| *x = conj_times(*x, *c));
        }
    }
}

/// [`canonicalize_pairs`] with V in its own (column-major) memory, writing
/// the canonical Vᴴ into `vh` in the same pass that transposes it:
/// Vᴴ[i, l] = conj(V[l, i] · c_i), down `vh`'s contiguous columns. `phases`
/// has at least `vh.nrows()` rows.
pub fn canonicalize_pairs_into_adjoint<T: Field>(
    u: MatMut<'_, T>,
    v: MatRef<'_, T>,
    mut vh: MatMut<'_, T>,
    k: usize,
    phases: ColMut<'_, T>,
) {
    let mut phases = phases.subrows_mut(0, vh.nrows());
    pair_phases(u, v, k, phases.rb_mut());
    let (n, rows) = (v.nrows(), vh.nrows());
    debug_assert_eq!((v.ncols(), vh.ncols()), (rows, n), "V is Vᴴ's shape transposed");
    if let (Some(v), Some(vh)) = (packed(v), packed_mut(vh.rb_mut())) {
        // Column i of V (contiguous) becomes row i of Vᴴ: plain slice
        // loops with one phase test per column (for small matrices a zip
        // per column of Vᴴ cost more than the copy itself).
        for (i, (col, &c)) in v.chunks_exact(n).zip(phases.iter()).enumerate() {
            let dst = vh.iter_mut().skip(i).step_by(rows);
            if c == T::one() {
                dst.zip(col).for_each(|(x, &y)| *x = Scalar::conj(y));
            } else {
                dst.zip(col).for_each(|(x, &y)| *x = Scalar::conj(y * c));
            }
        }
        return;
    }
    for l in 0..vh.ncols() {
        let row = v.row(l).transpose();
        zip!(vh.rb_mut().col_mut(l), row, phases.rb()).for_each(|unzip!(x, y, c)| *x = conj_times(*y, *c));
    }
}

/// Canonicalizes every column of `v` by its own phase.
pub fn canonicalize_columns<T: Field>(mut v: MatMut<'_, T>) {
    for j in 0..v.ncols() {
        let c = column_phase(v.rb(), j);
        scale_column(&mut v, j, c);
    }
}
