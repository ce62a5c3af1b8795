//! The canonical sign/phase of singular vectors and eigenvectors: the
//! largest-magnitude entry of each column (the first one on ties) is made real
//! and positive. Every provider applies the same rule, so results agree up to
//! rounding.

use crate::field::Field;
use faer::MatMut;
use lindiff_core::Scalar;

/// The unit factor `c` with `c·x` real and positive for the largest-magnitude
/// entry `x` of column `j` (1 for a zero column).
fn column_phase<T: Field>(m: &MatMut<'_, T>, j: usize) -> T {
    let mut best = <T as Scalar>::Real::zero();
    let mut pivot = T::zero();
    for i in 0..m.nrows() {
        let x = m[(i, j)];
        let mag = Scalar::abs(x);
        if mag > best {
            best = mag;
            pivot = x;
        }
    }
    if best == <T as Scalar>::Real::zero() {
        T::one()
    } else {
        Scalar::conj(pivot).scale(<T as Scalar>::Real::one() / best)
    }
}

fn scale_column<T: Field>(m: &mut MatMut<'_, T>, j: usize, c: T) {
    for i in 0..m.nrows() {
        m[(i, j)] *= c;
    }
}

/// Canonicalizes the first `k` column pairs of (U, V) by U's phase (keeping
/// U diag(s) Vᴴ unchanged), and any further columns of either by their own.
pub fn canonicalize_pairs<T: Field>(mut u: MatMut<'_, T>, mut v: MatMut<'_, T>, k: usize) {
    for j in 0..u.ncols() {
        let c = column_phase(&u, j);
        scale_column(&mut u, j, c);
        if j < k && j < v.ncols() {
            scale_column(&mut v, j, c);
        }
    }
    for j in k..v.ncols() {
        let c = column_phase(&v, j);
        scale_column(&mut v, j, c);
    }
}

/// Canonicalizes every column of `v` by its own phase.
pub fn canonicalize_columns<T: Field>(mut v: MatMut<'_, T>) {
    for j in 0..v.ncols() {
        let c = column_phase(&v, j);
        scale_column(&mut v, j, c);
    }
}
