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

with_avx2! {
    /// [`largest`] for real entries: the same result from two passes that
    /// compile to packed code (the strided and non-thin cases of the
    /// canonical signs; packed matrices take [`canonicalize_real_packed`]
    /// and [`pairs_real_packed`]).
    fn largest_real<T: Field>(xs: &[T]) -> (<T as Scalar>::Real, T) => largest_real_passes
}

with_avx2! {
    /// [`canonicalize_columns`] for a real matrix stored as one slice of
    /// `rows`-long columns (rows ≥ 1): every column in one call, not a
    /// dispatched search per column.
    fn canonicalize_real_packed<T: Field>(data: &mut [T], rows: usize) => canonical_real_columns
}

/// [`canonicalize_real_packed`]: each column through [`flip_real_column`].
#[inline(always)]
fn canonical_real_columns<T: Field>(data: &mut [T], rows: usize) {
    for col in data.chunks_exact_mut(rows) {
        flip_real_column(col);
    }
}

/// Negates the real column `col` when its largest-magnitude entry (the
/// first on ties) is negative, and says whether it did: [`column_phase`]
/// and [`scale_column`] for real columns, with the same bits (the column is
/// multiplied by −1; a zero column is left alone).
#[inline(always)]
fn flip_real_column<T: Field>(col: &mut [T]) -> bool {
    let zero = <T as Scalar>::Real::zero();
    let (best, pivot) = largest_real_passes(col);
    let flip = best != zero && Scalar::re(pivot) < zero;
    if flip {
        let minus_one = -T::one();
        col.iter_mut().for_each(|x| *x *= minus_one);
    }
    flip
}

/// Lanes of [`largest_real_passes`]: one AVX2 register of f64, so that
/// short columns (8, 16 entries) still run packed.
const LANES: usize = 4;

/// The maximum |x| in [`LANES`] independent lanes (packed max operations
/// over fixed-size blocks), then the first entry that has it: each block's
/// hits as a bit mask (one packed compare), the first block with a hit and
/// its lowest set bit; the tail after the last whole block entry by entry.
/// Fixed-size blocks (`as_chunks`) compile to straight packed code for short
/// columns, where a loop over run-time-sized chunks spent more on its own
/// control than on the search.
#[inline(always)]
fn largest_real_passes<T: Field>(xs: &[T]) -> (<T as Scalar>::Real, T) {
    let (blocks, rest) = xs.as_chunks::<LANES>();
    if blocks.is_empty() {
        // Shorter than one block: the one-pass search is cheapest.
        return largest(xs.iter().copied());
    }
    let zero = <T as Scalar>::Real::zero();
    let max = |b: <T as Scalar>::Real, x: T| {
        let m = Scalar::abs(x);
        if m > b {
            m
        } else {
            b
        }
    };
    let mut lanes = [zero; LANES];
    for block in blocks {
        for (b, &x) in lanes.iter_mut().zip(block) {
            *b = max(*b, x);
        }
    }
    let rest_max = rest.iter().fold(zero, |b, &x| max(b, x));
    let larger = |a: <T as Scalar>::Real, b: <T as Scalar>::Real| if b > a { b } else { a };
    let best = larger(larger(larger(lanes[0], lanes[2]), larger(lanes[1], lanes[3])), rest_max);
    if best == zero {
        // All zero (or NaN): the one-pass search's (0, +0), not a −0 entry.
        return (zero, T::zero());
    }
    let hit = |x: T| Scalar::abs(x) == best;
    // The first block holding `best`, from a bit mask of its lanes (one
    // packed compare per block), then the lane from the mask.
    let mut found = None;
    for block in blocks {
        let mask = block.iter().enumerate().fold(0u32, |mask, (i, &x)| mask | (u32::from(hit(x)) << i));
        if mask != 0 {
            found = Some(block[mask.trailing_zeros() as usize]);
            break;
        }
    }
    let pivot = found.or_else(|| rest.iter().copied().find(|&x| hit(x))).unwrap_or(T::zero());
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
    mut u: MatMut<'_, T>,
    v: MatRef<'_, T>,
    mut vh: MatMut<'_, T>,
    k: usize,
    phases: ColMut<'_, T>,
) {
    if !<T as Scalar>::IS_COMPLEX && (u.ncols(), v.ncols(), vh.nrows()) == (k, k, k) {
        let (m, n) = (u.nrows(), v.nrows());
        if let (Some(u), Some(v), Some(vh)) = (packed_mut(u.rb_mut()), packed(v), packed_mut(vh.rb_mut())) {
            pairs_real_packed(u, v, vh, (m, n, k));
            return;
        }
    }
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

with_avx2! {
    /// [`canonicalize_pairs_into_adjoint`] for real packed U (m×k), V (n×k)
    /// and Vᴴ (k×n), k pairs: the same bits, in one call per matrix instead
    /// of a dispatched search, a phase and a scaled copy per column.
    fn pairs_real_packed<T: Field>(u: &mut [T], v: &[T], vh: &mut [T], mnk: (usize, usize, usize)) => real_pairs
}

/// Column j of U (m×k) is negated when its largest-magnitude entry (the
/// first on ties) is negative, and row j of Vᴴ (k×n) is column j of V (n×k)
/// times the same sign.
#[inline(always)]
fn real_pairs<T: Field>(u: &mut [T], v: &[T], vh: &mut [T], (m, n, k): (usize, usize, usize)) {
    if k == 0 {
        return;
    }
    // Thin pairs: k ≤ m, n, so the columns are never empty.
    assert!(k <= m && k <= n, "thin pairs have k ≤ m, n");
    assert!(u.len() == m * k && v.len() == n * k && vh.len() == k * n, "U is m×k, V n×k, Vᴴ k×n");
    // ×1 keeps every bit (−0 too), as the general path's copy does.
    let sign = |ucol: &mut [T]| if flip_real_column(ucol) { -T::one() } else { T::one() };
    // Four columns of V at a time become four adjacent entries of each
    // column of Vᴴ: one short contiguous store per column of Vᴴ instead of
    // four scattered ones (half the time at 16×16).
    let whole = k - k % 4;
    for j in (0..whole).step_by(4) {
        let signs: [T; 4] = core::array::from_fn(|t| sign(&mut u[(j + t) * m..(j + t + 1) * m]));
        let cols: [&[T]; 4] = core::array::from_fn(|t| &v[(j + t) * n..(j + t + 1) * n]);
        for (c, vh_col) in vh.chunks_exact_mut(k).enumerate() {
            let dst = &mut vh_col[j..j + 4];
            for t in 0..4 {
                dst[t] = cols[t][c] * signs[t];
            }
        }
    }
    for j in whole..k {
        let s = sign(&mut u[j * m..(j + 1) * m]);
        let vcol = &v[j * n..(j + 1) * n];
        for (vh_col, &y) in vh.chunks_exact_mut(k).zip(vcol) {
            vh_col[j] = y * s;
        }
    }
}

/// Canonicalizes every column of `v` by its own phase.
pub fn canonicalize_columns<T: Field>(mut v: MatMut<'_, T>) {
    let rows = v.nrows();
    if !<T as Scalar>::IS_COMPLEX {
        if let Some(data) = packed_mut(v.rb_mut()) {
            canonicalize_real_packed(data, rows);
            return;
        }
    }
    for j in 0..v.ncols() {
        let c = column_phase(v.rb(), j);
        scale_column(&mut v, j, c);
    }
}

#[cfg(test)]
mod tests {
    use super::{
        canonicalize_columns, column_phase, largest, largest_real, largest_real_passes, scale_column,
    };
    use crate::field::Field;
    use faer::reborrow::Reborrow;
    use faer::Mat;
    use lindiff_core::{RealScalar, Scalar};

    /// The packed search gives the one-pass search's entry, sign and all, at
    /// every length to 40, with the largest magnitude at every position and
    /// tied there by its negation at every later one.
    fn same_as_one_pass<T: Field>(value: impl Fn(f64) -> T) {
        for len in 0..=40 {
            let base: Vec<T> = (0..len).map(|i| value(((i * 7919) % 23) as f64 / 23.0 - 0.5)).collect();
            let check = |xs: &[T]| {
                let want = largest(xs.iter().copied());
                assert_eq!(largest_real(xs), want, "len {len}: {xs:?}");
                assert_eq!(largest_real_passes(xs), want, "len {len}: {xs:?}");
            };
            check(&base);
            check(&vec![T::zero(); len]);
            for at in 0..len {
                for big in [-2.0, 2.0] {
                    let mut xs = base.clone();
                    xs[at] = value(big);
                    check(&xs);
                    for tie in at + 1..len {
                        let mut tied = xs.clone();
                        tied[tie] = value(-big);
                        check(&tied);
                    }
                }
            }
        }
    }

    #[test]
    fn packed_search_finds_the_first_largest_entry() {
        same_as_one_pass(|x| x);
        same_as_one_pass(|x| x as f32);
        // NaN entries are skipped, as in the one-pass search: a NaN column
        // has no largest entry, and NaNs around the largest one (in the lane
        // passes, from length 4 on) do not hide it.
        assert_eq!(largest_real(&[f64::NAN; 20]), largest([f64::NAN; 20].into_iter()));
        // A −0 entry is not the pivot of a zero column (bits, not ==).
        let (best, pivot) = largest_real(&[-0.0f64; 9]);
        assert_eq!((best.to_bits(), pivot.to_bits()), (0, 0));
        assert_eq!(largest_real(&[f64::NAN, 3.0, -3.0]), (3.0, 3.0));
        for len in 4..=20 {
            for at in 0..len {
                let mut xs: Vec<f64> = (0..len).map(|i| if i % 3 == 0 { f64::NAN } else { 0.25 }).collect();
                xs[at] = -2.0;
                assert_eq!(largest_real(&xs), (2.0, -2.0), "len {len}, at {at}");
                assert_eq!(largest_real(&xs), largest(xs.iter().copied()));
            }
        }
    }

    /// The packed real path of `canonicalize_columns` gives the bits of the
    /// column-by-column rule (phase, then scale), ties and zero columns too.
    fn packed_matches_columns<T: Field>(value: impl Fn(f64) -> T) {
        for rows in [1, 3, 16, 17, 32, 40] {
            let cols = 7;
            let mut m = Mat::<T>::from_fn(rows, cols, |i, j| {
                value((((i + 3) * (j + 5) * 7919) % 31) as f64 / 31.0 - 0.5)
            });
            m[(rows - 1, 1)] = value(-3.0); // negative largest entry, last
            m[(0, 2)] = value(3.0);
            m[(rows - 1, 2)] = value(-3.0); // tie: the first (positive) wins
            m[(0, 3)] = value(-3.0);
            m[(rows - 1, 3)] = value(3.0); // tie: the first (negative) wins
            for i in 0..rows {
                m[(i, 4)] = T::zero();
                m[(i, 5)] = -T::zero(); // −0 entries stay −0
            }
            let mut want = m.clone();
            for j in 0..cols {
                let c = column_phase(want.as_ref(), j);
                scale_column(&mut want.as_mut(), j, c);
            }
            let mut got = m.clone();
            canonicalize_columns(got.as_mut());
            for j in 0..cols {
                for i in 0..rows {
                    let (g, w) = (got[(i, j)], want[(i, j)]);
                    let bits = |x: T| Scalar::re(x).to_f64().to_bits();
                    assert_eq!(bits(g), bits(w), "{rows}x{cols} at ({i}, {j})");
                }
            }
            assert!(
                Scalar::re(got.rb()[(0, 3)]) > Scalar::re(T::zero()) && got.rb()[(rows - 1, 1)] == value(3.0)
            );
        }
    }

    #[test]
    fn packed_real_canonicalization_has_the_column_rule_bits() {
        packed_matches_columns(|x| x);
        packed_matches_columns(|x| x as f32);
    }

    /// The packed real pair path gives the bits of the general one (run on
    /// a strided copy of U), tall, square and wide.
    fn pairs_match<T: Field>(value: impl Fn(f64) -> T) {
        use super::canonicalize_pairs_into_adjoint;
        for (m, n) in [(1, 1), (3, 5), (5, 3), (8, 8), (20, 7), (7, 20), (33, 33)] {
            let k = m.min(n);
            let entry =
                |i: usize, j: usize, s: usize| value((((i + s) * (j + 3) * 7919) % 29) as f64 / 29.0 - 0.5);
            let mut u = Mat::<T>::from_fn(m, k, |i, j| entry(i, j, 1));
            u[(m - 1, 0)] = value(-2.0); // a negative largest entry
            if k > 2 {
                u[(0, 1)] = value(-2.0); // a tie: the first (negative) wins
                u[(m - 1, 1)] = value(2.0);
                for i in 0..m {
                    u[(i, 2)] = -T::zero(); // a zero column is left alone
                }
            }
            let v = Mat::<T>::from_fn(n, k, |i, j| entry(i, j, 2));
            let mut phases = Mat::<T>::zeros(k, 1);
            let (mut u_fast, mut vh_fast) = (u.clone(), Mat::<T>::zeros(k, n));
            canonicalize_pairs_into_adjoint(
                u_fast.as_mut(),
                v.as_ref(),
                vh_fast.as_mut(),
                k,
                phases.as_mut().col_mut(0),
            );
            let mut wide = Mat::<T>::zeros(m + 1, k);
            wide.as_mut().subrows_mut(0, m).copy_from(&u);
            let mut vh = Mat::<T>::zeros(k, n);
            canonicalize_pairs_into_adjoint(
                wide.as_mut().subrows_mut(0, m),
                v.as_ref(),
                vh.as_mut(),
                k,
                phases.as_mut().col_mut(0),
            );
            let bits = |x: T| Scalar::re(x).to_f64().to_bits();
            for j in 0..k {
                for i in 0..m {
                    assert_eq!(bits(u_fast[(i, j)]), bits(wide[(i, j)]), "U {m}x{n} ({i}, {j})");
                }
                for l in 0..n {
                    assert_eq!(bits(vh_fast[(j, l)]), bits(vh[(j, l)]), "Vh {m}x{n} ({j}, {l})");
                }
            }
            assert!(Scalar::re(u_fast[(m - 1, 0)]) > Scalar::re(T::zero()));
        }
    }

    #[test]
    fn packed_real_pairs_have_the_general_bits() {
        pairs_match(|x| x);
        pairs_match(|x| x as f32);
    }
}
