//! How many singular triplets a kernel keeps: by a [`Truncation`]
//! (`svd_truncated`, `low_rank_approx`) or by the pinv/lstsq rank
//! thresholds, from the descending values `s` of the thin SVD, and the
//! kept count as a rank output. Below both the SVD kernels (`svd.rs`) and
//! the recombinations (`recombine.rs`).

use super::scaling::Scaling;
use crate::batch::Item;
use crate::field::Field;
use faer::MatRef;
use lindiff_core::op::{PinvOptions, Truncation};
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Singular value `i` (stored as `T` with zero imaginary part) as `f64`.
fn value<T: Field>(s: MatRef<'_, T>, i: usize) -> f64 {
    RealScalar::to_f64(Scalar::re(s[(i, 0)]))
}

/// The largest singular value, 0 for an empty matrix.
fn largest<T: Field>(s: MatRef<'_, T>) -> f64 {
    if s.nrows() == 0 {
        0.0
    } else {
        value(s, 0)
    }
}

/// Number of leading (descending) singular values s_i (of `a · 2^e`, e of
/// `scaling`) with s_i > rtol·s₀ and s_i·2^−e > atol: s_i > max(atol,
/// rtol·s₀) for `a`'s values, each test where it is scale-free or exact.
fn count_above<T: Field>(s: MatRef<'_, T>, atol: f64, rtol: f64, scaling: Scaling) -> usize {
    let relative = rtol * largest(s);
    (0..s.nrows()).take_while(|&i| value(s, i) > relative && scaling.undo(value(s, i)) > atol).count()
}

/// How many triplets `truncation` keeps for the values `s` of `a · 2^e`.
pub(super) fn kept_by_truncation<T: Field>(
    truncation: &Truncation,
    s: MatRef<'_, T>,
    scaling: Scaling,
) -> usize {
    match *truncation {
        Truncation::Count(p) => p.min(s.nrows()),
        Truncation::Tolerance { atol, rtol } => count_above(s, atol, rtol, scaling),
    }
}

/// Numerical rank under the pinv/lstsq thresholds: s_i > max(atol, rtol·s₀),
/// rtol defaulting to max(m, n)·ε of the dtype (`s` of `a · 2^e`).
pub(super) fn kept_by_pinv<T: Field>(
    opts: &PinvOptions,
    m: usize,
    n: usize,
    s: MatRef<'_, T>,
    scaling: Scaling,
) -> usize {
    let eps = RealScalar::to_f64(<Re<T> as RealScalar>::EPSILON);
    let rtol = opts.rtol.unwrap_or(m.max(n) as f64 * eps);
    count_above(s, opts.atol, rtol, scaling)
}

/// Writes the kept count `rank` into the i64 scalar output `i`, if asked for.
pub(super) fn set_rank(item: &mut Item<'_>, i: usize, rank: usize) {
    if item.has_output(i) {
        item.set::<i64>(i, 0, rank as i64);
    }
}
