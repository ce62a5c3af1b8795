//! lindiff's own divide-and-conquer SVD of a real upper bidiagonal matrix
//! (Gu and Eisenstat's method in the form of LAPACK's `?bdsdc`/`?lasd0`–
//! `?lasd4`), and the SVD of a real dense matrix built on it for
//! [`super::svd`] from min(m, n) = [`DC_FROM`] in `std` builds: faer's
//! reduction to bidiagonal form, this solver, faer's back-transformation.
//! faer 0.24's own bidiagonal divide and conquer is about half of its SVD's
//! time at n = 256, and its workspace (four (n+1)² matrices besides its
//! (n+1)² and n² results) most of the SVD's memory.
//!
//! A block B of N rows and M = N + sqre columns (sqre ∈ {0, 1}; diagonal d,
//! superdiagonal e) is split by removing its middle row k = N/2:
//! B₁ (rows 0..k, columns 0..=k, so one column more than rows) and B₂
//! (the rows and columns after). With their SVDs Bᵢ = Uᵢ [Sᵢ 0] Vᵢᵀ,
//!
//! B = diag(U₁, 1, U₂) · M̃ · diag(V₁, V₂)ᵀ,
//!
//! where M̃ is diag(S₁, S₂) with the row k = (α·V₁'s last row, β·V₂'s first
//! row) inserted (α = `d[k]`, β = `e[k]`). V₁'s last column (and V₂'s, when
//! sqre = 1) is a null vector; a rotation of the two null columns makes
//! the row's entry in one of them zero, so that column is B's null vector
//! and the rest of M̃ is the square broken-arrow matrix
//! M = [z₀ z₁ … ; 0 D] with poles 0 = d₀ and D. Its singular values are the
//! square roots of the eigenvalues of D² + z zᵀ (MᵀM, since d₀ = 0): the
//! roots σ of 1 + Σⱼ zⱼ²/(dⱼ² − σ²) ([`super::secular`], poles dⱼ²), its
//! right singular vectors yᵢ ∝ (D² − σᵢ²)⁻¹ẑ and its left ones
//! xᵢ ∝ (−1, d₁y₁, d₂y₂, …), with Gu and Eisenstat's ẑ. Before that, as
//! LAPACK's `?lasd2`, with tol = 8ε on the merge's block scaled to max-norm
//! 1 (by max(|α|, |β|, max D), as `?lasd1` scales it):
//!
//! * a pole whose |zⱼ| ≤ tol is a singular triplet as it stands, and of two
//!   poles closer than tol one is, after the rotation of both vector pairs
//!   that zeroes its z entry;
//! * z₀ is raised to tol when smaller, and the smallest non-zero pole to
//!   tol/2, so the poles that remain are strictly increasing from 0 —
//!   perturbations of B's size tol, backward stable.
//!
//! The merged vectors are U's and V's kept columns times Y (one matrix
//! serves both sides: X's rows are Y's scaled by the poles, with U's zero-
//! pole column ê_k handled as its own row), as two products each that skip
//! the zero blocks of diag(U₁, 1, U₂) and diag(V₁, V₂). Blocks of at most
//! [`LEAF`] rows are solved by faer's dense SVD. The result is backward
//! stable like LAPACK's: B = U Σ Vᵀ + E with ‖E‖ = O(n ε ‖B‖) and U, V
//! orthogonal to O(n ε).

use super::scaling::{max_abs, Scaling};
use super::secular::{eigenvector, secular_root, weights_for_roots, Poles};
use crate::field::Field;
use crate::gemm::matmul;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::svd::bidiag::{bidiag_in_place, bidiag_in_place_scratch};
use faer::linalg::svd::{svd as dense_svd, svd_scratch as dense_svd_scratch, ComputeSvdVectors};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Conj, MatMut, MatRef, Par};
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Smallest min(m, n) for which [`super::svd`] uses this solver: faer's
/// own divide and conquer starts there too (below it faer runs its QR
/// algorithm).
pub(super) const DC_FROM: usize = 128;

/// Largest block solved directly (faer's dense SVD of the block).
const LEAF: usize = 16;

/// Whether [`svd`] serves an m×n `T` with singular vectors: real `T` with
/// min(m, n) from [`DC_FROM`] in `std` builds (firmware keeps faer's code
/// alone).
pub(super) fn serves<T: Field>(m: usize, n: usize) -> bool {
    super::SMALL_KERNELS && !<T as Scalar>::IS_COMPLEX && m.min(n) >= DC_FROM
}

/// Workspace of [`svd`] for an m×n matrix, with full U and V (`full`) or
/// thin ones (besides the caller's working matrix).
pub(super) fn svd_scratch<T: Field>(m: usize, n: usize, full: bool, par: Par) -> StackReq {
    let (m, n) = (m.max(n), m.min(n));
    let bs = recommended_block_size::<T>(m, n);
    StackReq::all_of(&[
        temp_mat_scratch::<T>(bs, n),                   // left Householder factors
        temp_mat_scratch::<T>(bs, n.saturating_sub(1)), // right Householder factors
        StackReq::any_of(&[
            bidiag_in_place_scratch::<T>(m, n, par, Default::default()),
            StackReq::all_of(&[StackReq::new::<Re<T>>(n).array(2), scratch::<T>(n, par)]),
            apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
                m,
                bs,
                if full { m } else { n },
            ),
            apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(n.saturating_sub(1), bs, n),
        ]),
    ])
}

/// The SVD A = U Σ Vᵀ of the real `a · 2^e` (any shape; e of `scaling`):
/// singular values descending into `s` (min(m, n)×1), U into `u` (m×k, or
/// m×m) and V into `v` (n×k, or n×n), k = min(m, n); full when `u` and
/// `v` are square. `work` (max(m, n)×min(m, n)) holds A or Aᵀ scaled and
/// reduced to bidiagonal form: its contents are unspecified on return.
/// Phases are not canonical. `Err(())` when a leaf's QR algorithm or a
/// secular root does not converge, or a result is not finite.
pub(super) fn svd<T: Field>(
    a: MatRef<'_, T>,
    scaling: Scaling,
    work: MatMut<'_, T>,
    (s, u, v): (MatMut<'_, T>, MatMut<'_, T>, MatMut<'_, T>),
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    if a.nrows() < a.ncols() {
        // Aᵀ = V Σ Uᵀ.
        tall(a.transpose(), scaling, work, (s, v, u), par, stack)
    } else {
        tall(a, scaling, work, (s, u, v), par, stack)
    }
}

/// [`svd`] for m ≥ n.
fn tall<T: Field>(
    a: MatRef<'_, T>,
    scaling: Scaling,
    mut bid: MatMut<'_, T>,
    (mut s, mut u, mut v): (MatMut<'_, T>, MatMut<'_, T>, MatMut<'_, T>),
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    let (m, n) = (a.nrows(), a.ncols());
    let bs = recommended_block_size::<T>(m, n);
    bid.copy_from(a);
    scaling.apply_mat(bid.rb_mut());
    // SAFETY: the Householder factors are written by faer's reduction
    // before the back-transformations read them.
    let (mut left, stack) = unsafe { temp_mat_uninit::<T, _, _>(bs, n, stack) };
    // SAFETY: as for `left`.
    let (mut right, stack) = unsafe { temp_mat_uninit::<T, _, _>(bs, n.saturating_sub(1), stack) };
    let (mut left, mut right) = (left.as_mat_mut(), right.as_mat_mut());
    bidiag_in_place(bid.rb_mut(), left.rb_mut(), right.rb_mut(), par, stack, Default::default());
    // U_B's block is written by the solver; the rest of U is [0; 0 I].
    let ucols = u.ncols();
    u.rb_mut().subrows_mut(n, m - n).fill(T::zero());
    u.rb_mut().submatrix_mut(0, n, n, ucols - n).fill(T::zero());
    {
        let (mut d, stack) = stack.make_with(n, |i| Scalar::re(bid[(i, i)]));
        let (mut e, stack) = stack.make_with(n.saturating_sub(1), |i| Scalar::re(bid[(i, i + 1)]));
        let ub = u.rb_mut().submatrix_mut(0, 0, n, n);
        bidiagonal_svd(&mut d, &mut e, ub, v.rb_mut(), par, stack)?;
        // A backward-stable solve of finite input has finite results; the
        // check (O(n²) against the O(n³) solve) keeps any breakdown from
        // passing as singular vectors, which the output range check skips.
        let finite = d.iter().all(|x| x.is_finite_real())
            && super::finite::all_finite(u.rb().submatrix(0, 0, n, n))
            && super::finite::all_finite(v.rb());
        if !finite {
            return Err(());
        }
        for (i, &x) in d.iter().enumerate() {
            s[(i, 0)] = T::from_real(x);
        }
    }
    // U = Q_L · [U_B 0; 0 I] (the identity only for a full U).
    u.rb_mut().submatrix_mut(n, n, m - n, ucols - n).diagonal_mut().fill(T::one());
    apply_block_householder_sequence_on_the_left_in_place_with_conj(
        bid.rb(),
        left.rb(),
        Conj::No,
        u,
        par,
        stack,
    );
    // V = Q_R · V_B: faer keeps Q_R's reflectors in the rows above the
    // superdiagonal; mirrored below the diagonal they read as columns.
    for j in 1..n {
        for i in 0..j {
            bid[(j, i)] = bid[(i, j)];
        }
    }
    apply_block_householder_sequence_on_the_left_in_place_with_conj(
        bid.rb().submatrix(1, 0, n - 1, n - 1),
        right.rb(),
        Conj::Yes,
        v.subrows_mut(1, n - 1),
        par,
        stack,
    );
    Ok(())
}

/// Workspace of [`bidiagonal_svd`] for n rows: a leaf's solve, the largest
/// merge's temporaries in the order [`merge`] takes them, or the final
/// ordering's.
pub(super) fn scratch<T: Field>(n: usize, par: Par) -> StackReq {
    let leaf = LEAF.min(n);
    let m = n + 1;
    let real = StackReq::new::<Re<T>>(n);
    let index = StackReq::new::<usize>(n);
    let merge = StackReq::all_of(&[
        StackReq::new::<Re<T>>(m),     // z
        index.array(4),                // kind, order, kept, gone
        real,                          // values
        real.array(3),                 // poles, weights, w2
        StackReq::new::<Re<T>>(n * n), // delta, then Y
        real,                          // zhat
        index.array(2),                // slot, dest
        real.array(3),                 // nx, ny, column
        StackReq::new::<T>(m * n),     // gathered
    ]);
    let leaf = StackReq::all_of(&[
        temp_mat_scratch::<T>(leaf, leaf + 1),
        temp_mat_scratch::<T>(leaf, 1),
        dense_svd_scratch::<T>(
            leaf,
            leaf + 1,
            ComputeSvdVectors::Full,
            ComputeSvdVectors::Full,
            par,
            Default::default(),
        ),
    ]);
    let order = StackReq::all_of(&[index, StackReq::new::<bool>(n), temp_mat_scratch::<T>(n, 1)]);
    StackReq::any_of(&[merge, leaf, order])
}

/// The SVD B = U Σ Vᵀ of the n×n upper bidiagonal matrix with diagonal `d`
/// (n) and superdiagonal `e` (n − 1): on return `d` holds the singular
/// values descending, `u` and `v` (n×n, real `T`) the singular vectors.
/// `e` is overwritten. `Err(())` when a leaf's QR algorithm or a secular
/// root does not converge.
pub(super) fn bidiagonal_svd<T: Field>(
    d: &mut [Re<T>],
    e: &mut [Re<T>],
    mut u: MatMut<'_, T>,
    mut v: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    debug_assert!(!<T as Scalar>::IS_COMPLEX, "real matrices only");
    let n = d.len();
    assert!(
        e.len() + 1 == n.max(1) && u.nrows() == n && u.ncols() == n && v.nrows() == n && v.ncols() == n,
        "d: n, e: n − 1, u and v: n×n"
    );
    u.fill(T::zero());
    v.fill(T::zero());
    if n == 0 {
        return Ok(());
    }
    // No scaling here: each merge scales its own block to max-norm 1
    // (`merge`), and the leaves' dense SVD takes any scale. NaN is
    // rejected up front; a zero matrix needs no solve.
    let Some(norm) = max_abs(d.iter().chain(e.iter()).copied()) else {
        return Err(());
    };
    if norm == Re::<T>::zero() {
        u.diagonal_mut().fill(T::one());
        v.diagonal_mut().fill(T::one());
        return Ok(());
    }
    solve(d, e, u.rb_mut(), v.rb_mut(), par, stack)?;
    descending(d, u, v, stack);
    Ok(())
}

/// The recursive solve of the block of `d.len()` rows and
/// `v.nrows()` (one more, or as many) columns: `u` and `v` are zero on
/// entry. On return the pairs (column c of `u`, column c of `v`) with
/// value `d[c]` are its singular triplets in no particular order; with one
/// column more, `v`'s last column is its null vector.
fn solve<T: Field>(
    d: &mut [Re<T>],
    e: &mut [Re<T>],
    mut u: MatMut<'_, T>,
    mut v: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    let (n, m) = (d.len(), v.nrows());
    if n <= LEAF {
        return leaf(d, e, u, v, par, stack);
    }
    let k = n / 2;
    let (alpha, beta) = (d[k], e[k]);
    {
        let (d1, d2) = d.split_at_mut(k);
        let (e1, e2) = e.split_at_mut(k);
        let (u1, u2) = u.rb_mut().split_at_row_mut(k);
        let (v1, v2) = v.rb_mut().split_at_row_mut(k + 1);
        solve::<T>(d1, e1, u1.submatrix_mut(0, 0, k, k), v1.submatrix_mut(0, 0, k + 1, k + 1), par, stack)?;
        let (rows, cols) = (n - k - 1, m - k - 1);
        solve::<T>(
            &mut d2[1..],
            &mut e2[1..],
            u2.submatrix_mut(1, k + 1, rows, rows),
            v2.submatrix_mut(0, k + 1, cols, cols),
            par,
            stack,
        )?;
    }
    u[(k, k)] = T::one();
    merge(d, u, v, k, (alpha, beta), par, stack)
}

/// A block of at most [`LEAF`] rows: faer's dense SVD of it (U and V full).
fn leaf<T: Field>(
    d: &mut [Re<T>],
    e: &[Re<T>],
    mut u: MatMut<'_, T>,
    mut v: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    let (n, m) = (d.len(), v.nrows());
    // SAFETY: `b` is filled before it is read; faer writes `s` before it is
    // read.
    let (mut b, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, m, stack) };
    // SAFETY: as for `b`.
    let (mut s, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    let (mut b, mut s) = (b.as_mat_mut(), s.as_mat_mut());
    b.fill(T::zero());
    for (i, &x) in d.iter().enumerate() {
        b[(i, i)] = T::from_real(x);
    }
    for (i, &x) in e.iter().enumerate() {
        b[(i, i + 1)] = T::from_real(x);
    }
    // faer reads part of a full U or V before writing it.
    u.fill(T::zero());
    v.fill(T::zero());
    dense_svd(
        b.rb(),
        s.rb_mut().col_mut(0).as_diagonal_mut(),
        Some(u),
        Some(v),
        par,
        stack,
        Default::default(),
    )
    .map_err(|_| ())?;
    for (i, x) in d.iter_mut().enumerate() {
        *x = Scalar::re(s[(i, 0)]);
    }
    Ok(())
}

/// `x` as a slice of `T`: for a real `T` (the only kind this solver
/// takes), `Re<T>` is `T` itself (lindiff-core's contract for
/// `Scalar::Real`), so the cast only renames the type.
fn as_field<T: Field>(x: &[Re<T>]) -> &[T] {
    assert!(
        !<T as Scalar>::IS_COMPLEX
            && core::mem::size_of::<T>() == core::mem::size_of::<Re<T>>()
            && core::mem::align_of::<T>() == core::mem::align_of::<Re<T>>(),
        "real matrices only"
    );
    // SAFETY: `T` is real (checked above), so `Re<T>` is `T`: same size,
    // alignment and bit validity; the new slice borrows `x` for its
    // lifetime and covers exactly its elements.
    unsafe { core::slice::from_raw_parts(x.as_ptr().cast::<T>(), x.len()) }
}

/// Merges the solved halves of a block of n rows and m columns: `d` holds
/// S₁ (entries 0..k) and S₂ (k+1..n), `u` holds diag(U₁, 1, U₂) and `v`
/// diag(V₁, V₂); (α, β) = (`d[k]`, `e[k]`) of the block, the removed row's.
/// On return, the pairs of the block as [`solve`] describes them.
fn merge<T: Field>(
    d: &mut [Re<T>],
    mut u: MatMut<'_, T>,
    mut v: MatMut<'_, T>,
    k: usize,
    (alpha, beta): (Re<T>, Re<T>),
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    let (n, m) = (d.len(), v.nrows());
    let (zero, one) = (Re::<T>::zero(), Re::<T>::one());
    let two = one + one;
    let re = |x: T| Scalar::re(x);
    // The block scaled to max-norm 1 (as LAPACK's ?lasd1): the secular
    // equation squares the poles and weights, which must neither underflow
    // nor lose their gaps in a block far smaller than the whole matrix.
    let Some(scale) = max_abs(d.iter().copied().chain([alpha, beta])) else {
        return Err(());
    };
    if scale == zero {
        // A zero block: every pair as it stands, with value 0 (U's column k
        // is ê_k, V's column k V₁'s null vector).
        d[k] = zero;
        return Ok(());
    }
    d.iter_mut().for_each(|x| *x = *x / scale);
    let (alpha, beta) = (alpha / scale, beta / scale);
    // The removed row in V's basis: α·(V₁'s last row, row k of v) and
    // β·(V₂'s first row, row k + 1); each is zero in the other's columns.
    let (mut z, stack) = stack.make_with(m, |c| alpha * re(v[(k, c)]) + beta * re(v[(k + 1, c)]));
    let z = &mut *z;
    // ε here is 2⁻⁵² for f64, twice LAPACK's unit roundoff.
    let tol = Re::<T>::from_f64(8.0) * Re::<T>::EPSILON;
    // The zero pole: V₁'s null column (k), rotated with V₂'s (m − 1) when
    // the block has a column more than rows, so that the row's entry in
    // the other is zero: that one is the block's null vector.
    let z0 = if m > n {
        let r = z[k].hypot(z[m - 1]);
        if r > tol {
            let (c, s) = (T::from_real(z[k] / r), T::from_real(z[m - 1] / r));
            for row in 0..m {
                let (x, y) = (v[(row, k)], v[(row, m - 1)]);
                v[(row, k)] = c * x + s * y;
                v[(row, m - 1)] = c * y - s * x;
            }
            r
        } else {
            tol
        }
    } else if z[k].abs() > tol {
        z[k]
    } else {
        tol
    };
    z[k] = z0;
    d[k] = zero;
    // Which rows of each column pair may be non-zero: 0 for the first
    // block's, 1 for the second's, 2 for both (the zero pole's V column,
    // and pairs mixed by a deflating rotation).
    let (mut kind, stack) = stack.make_with(n, |c| match c.cmp(&k) {
        core::cmp::Ordering::Less => 0,
        core::cmp::Ordering::Greater => 1,
        core::cmp::Ordering::Equal => 2,
    });
    let kind = &mut *kind;
    // The poles ascending, the zero pole first.
    let (mut order, stack) = stack.make_with(n, |c| c);
    let order = &mut *order;
    order.sort_unstable_by(|&a, &b| {
        d[a].partial_cmp(&d[b]).unwrap_or(core::cmp::Ordering::Equal).then((a != k).cmp(&(b != k)))
    });
    debug_assert_eq!(order[0], k);

    // Deflation, in pole order: `kept` collects the poles that stay in the
    // secular equation (the zero pole first), `gone` the deflated ones.
    let (mut kept, stack) = stack.make_with(n, |_| 0usize);
    let kept = &mut *kept;
    let (mut gone, stack) = stack.make_with(n, |_| 0usize);
    let gone = &mut *gone;
    kept[0] = k;
    let (mut nk, mut ng) = (1, 0);
    let mut prev: Option<usize> = None;
    for &c in order[1..].iter() {
        if z[c].abs() <= tol {
            gone[ng] = c;
            ng += 1;
            continue;
        }
        let Some(p) = prev else {
            prev = Some(c);
            continue;
        };
        if (d[c] - d[p]).abs() <= tol {
            // Deflate p: the rotation of both pairs that zeroes z_p.
            let r = z[p].hypot(z[c]);
            let (cs, sn) = (z[c] / r, -z[p] / r);
            z[c] = r;
            z[p] = zero;
            let (ct, st) = (T::from_real(cs), T::from_real(sn));
            for mut w in [u.rb_mut(), v.rb_mut()] {
                for row in 0..w.nrows() {
                    let (x, y) = (w[(row, p)], w[(row, c)]);
                    w[(row, p)] = ct * x + st * y;
                    w[(row, c)] = ct * y - st * x;
                }
            }
            if kind[p] != kind[c] {
                kind[p] = 2;
                kind[c] = 2;
            }
            gone[ng] = p;
            ng += 1;
        } else {
            kept[nk] = p;
            nk += 1;
        }
        prev = Some(c);
    }
    if let Some(p) = prev {
        kept[nk] = p;
        nk += 1;
    }
    debug_assert_eq!(nk + ng, n);
    let nk = nk;

    // The singular values of M, at positions 0..nk; the deflated ones go
    // to positions nk..n.
    let (mut values, stack) = stack.make_with(n, |_| zero);
    let values = &mut *values;
    let (mut poles, stack) = stack.make_with(nk, |i| d[kept[i]]);
    let poles = &mut *poles;
    if nk > 1 && poles[1] <= tol / two {
        poles[1] = tol / two;
    }
    let (weights, stack) = stack.make_with(nk, |i| z[kept[i]]);
    let (w2, stack) = stack.make_with(nk, |i| weights[i] * weights[i]);
    // delta[l + nk·i] = poles[l]² − σᵢ².
    let (mut delta, stack) = stack.make_with(nk * nk, |_| zero);
    for (i, col) in delta.chunks_exact_mut(nk).enumerate() {
        let (root, converged) = secular_root::<T>(Poles::Squared, i, poles, &w2, col);
        if !converged {
            return Err(());
        }
        values[i] = root;
    }
    let (mut zhat, stack) = stack.make_with(nk, |_| zero);
    weights_for_roots::<T>(Poles::Squared, poles, &delta, &weights, &mut zhat);

    // The kept pairs grouped by their non-zero rows: the first block's, the
    // zero pole, the mixed, the second block's (`slot[l]`: where kept pair
    // l goes), so each product below reads one contiguous range.
    let group = |l: usize| match kind[kept[l]] {
        _ if kept[l] == k => 1,
        0 => 0,
        2 => 2,
        _ => 3,
    };
    let (mut slot, stack) = stack.make_with(nk, |_| 0usize);
    let slot = &mut *slot;
    let mut next = 0;
    for g in 0..4 {
        for (l, s) in slot.iter_mut().enumerate() {
            if group(l) == g {
                *s = next;
                next += 1;
            }
        }
    }
    let upper = (0..nk).filter(|&l| group(l) != 3).count();
    let lower_from = (0..nk).filter(|&l| group(l) == 0).count();
    // Where each deflated pair goes: positions nk..n, the deflated pairs
    // already there staying.
    let (mut dest, stack) = stack.make_with(ng, |_| 0usize);
    let dest = &mut *dest;
    {
        let mut free = kept[..nk].iter().copied().filter(|&c| c >= nk);
        for (g, &c) in gone[..ng].iter().enumerate() {
            dest[g] = if c >= nk { c } else { free.next().unwrap_or(c) };
            values[dest[g]] = d[c];
        }
    }

    // Y: column i ∝ (P² − σᵢ²)⁻¹ẑ, rows in slot order, unnormalised; its
    // norm ny[i], and nx[i], the norm of M's left vector (−1, p₁y₁, …).
    let (mut nx, stack) = stack.make_with(nk, |_| zero);
    let (mut ny, stack) = stack.make_with(nk, |_| zero);
    let (mut column, stack) = stack.make_with(nk, |_| zero);
    for (i, col) in delta.chunks_exact_mut(nk).enumerate() {
        ny[i] = eigenvector::<T>(&zhat, col);
        let sum = poles.iter().zip(col.iter()).fold(one, |s, (&p, &y)| s + (p * y) * (p * y));
        nx[i] = sum.sqrt();
        column.copy_from_slice(col);
        for (l, &y) in column.iter().enumerate() {
            col[slot[l]] = y;
        }
    }
    let y = MatRef::from_column_major_slice(as_field::<T>(&delta), nk, nk);

    // The gathered columns, laid out as the side's matrix is (V may be
    // row-major: written into Vᴴ's memory), so both the copies in and the
    // products' reads run along contiguous memory.
    let (mut buffer, _) = stack.make_with(m * nk, |_| T::zero());
    // U: rows 0..k and k+1..n; kept column c scaled by its pole (X's rows
    // are Y's scaled by the poles; the zero pole's row of X, −1, is U's
    // row k).
    // V: rows 0..=k and k+1..m.
    for (side, top) in [(0, k), (1, k + 1)] {
        let mut w = if side == 0 { u.rb_mut() } else { v.rb_mut() };
        let (rows, bottom) = (w.nrows(), k + 1);
        let by_rows = w.row_stride() != 1;
        let mut gathered = if by_rows {
            MatMut::from_row_major_slice_mut(&mut buffer[..rows * nk], rows, nk)
        } else {
            MatMut::from_column_major_slice_mut(&mut buffer[..rows * nk], rows, nk)
        };
        let scale_of = |l: usize| if side == 0 { T::from_real(poles[l]) } else { T::one() };
        // Row r of kept column l is copied where the products read it.
        let wanted = |r: usize, l: usize| if r < top { group(l) != 3 } else { r >= bottom && group(l) != 0 };
        if by_rows {
            for r in 0..rows {
                for (l, &c) in kept[..nk].iter().enumerate() {
                    if wanted(r, l) {
                        gathered[(r, slot[l])] = w[(r, c)] * scale_of(l);
                    }
                }
                for (g, &c) in gone[..ng].iter().enumerate() {
                    w[(r, dest[g])] = w[(r, c)];
                }
            }
        } else {
            for (l, &c) in kept[..nk].iter().enumerate() {
                let scale = scale_of(l);
                for r in (0..rows).filter(|&r| wanted(r, l)) {
                    gathered[(r, slot[l])] = w[(r, c)] * scale;
                }
            }
            for (g, &c) in gone[..ng].iter().enumerate() {
                if dest[g] != c {
                    for r in 0..rows {
                        w[(r, dest[g])] = w[(r, c)];
                    }
                }
            }
        }
        let (w_top, w_rest) = w.rb_mut().subcols_mut(0, nk).split_at_row_mut(top);
        matmul(
            w_top,
            Accum::Replace,
            gathered.rb().subrows(0, top).subcols(0, upper),
            y.subrows(0, upper),
            T::one(),
            par,
        );
        let skip = bottom - top;
        matmul(
            w_rest.subrows_mut(skip, rows - bottom),
            Accum::Replace,
            gathered.rb().subrows(bottom, rows - bottom).subcols(lower_from, nk - lower_from),
            y.subrows(lower_from, nk - lower_from),
            T::one(),
            par,
        );
        // Normalised: U's row k is −1 (X's zero-pole row) before scaling.
        let norms = if side == 0 { &nx } else { &ny };
        for (inv, &norm) in column.iter_mut().zip(norms.iter()) {
            *inv = one / norm;
        }
        if side == 0 {
            w.rb_mut().row_mut(k).subcols_mut(0, nk).fill(-T::one());
        }
        if by_rows {
            for r in 0..rows {
                for (i, &inv) in column.iter().enumerate() {
                    w[(r, i)] *= T::from_real(inv);
                }
            }
        } else {
            for (i, &inv) in column.iter().enumerate() {
                let inv = T::from_real(inv);
                w.rb_mut().col_mut(i).iter_mut().for_each(|x| *x *= inv);
            }
        }
    }
    for (x, &y) in d.iter_mut().zip(values.iter()) {
        *x = y * scale;
    }
    Ok(())
}

/// Puts the pairs in descending order of `d` (a permutation of the columns
/// of `u` and `v`: cycle by cycle through one temporary column for a
/// column-major factor, row by row through a temporary row for a
/// row-major one).
fn descending<T: Field>(d: &mut [Re<T>], mut u: MatMut<'_, T>, mut v: MatMut<'_, T>, stack: &mut MemStack) {
    let n = d.len();
    let (mut order, stack) = stack.make_with(n, |c| c);
    let order = &mut *order;
    order.sort_unstable_by(|&a, &b| d[b].partial_cmp(&d[a]).unwrap_or(core::cmp::Ordering::Equal));
    let (mut done, stack) = stack.make_with(n, |_| false);
    let done = &mut *done;
    // SAFETY: each use writes the column before reading it.
    let (mut tmp, _) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    let mut tmp = tmp.as_mat_mut();
    let mut tmp = tmp.rb_mut().col_mut(0);
    for start in 0..n {
        if done[start] || order[start] == start {
            done[start] = true;
            continue;
        }
        // Position p receives the pair at order[p] (a row-major factor is
        // permuted row by row below).
        for mut w in [u.rb_mut(), v.rb_mut()].into_iter().filter(|w| w.row_stride() == 1) {
            tmp.copy_from(w.rb().col(start));
            let mut p = start;
            loop {
                let src = order[p];
                if src == start {
                    w.rb_mut().col_mut(p).copy_from(tmp.rb());
                    break;
                }
                let (mut to, from) = w.rb_mut().two_cols_mut(p, src);
                to.copy_from(from.rb());
                p = src;
            }
        }
        let first = d[start];
        let mut p = start;
        loop {
            done[p] = true;
            let src = order[p];
            if src == start {
                d[p] = first;
                break;
            }
            d[p] = d[src];
            p = src;
        }
    }
    for mut w in [u, v].into_iter().filter(|w| w.row_stride() != 1) {
        for r in 0..w.nrows() {
            for (p, &src) in order.iter().enumerate() {
                tmp[p] = w[(r, src)];
            }
            for p in 0..n {
                w[(r, p)] = tmp[p];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{bidiagonal_svd, scratch, svd, svd_scratch};
    use crate::kernels::scaling::Scaling;
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::{Mat, Par};

    /// Singular values of `a` by faer's QR-iteration SVD (another algorithm).
    fn reference(a: &Mat<f64>) -> Vec<f64> {
        let mut s = a.singular_values().unwrap();
        s.sort_by(|x, y| y.partial_cmp(x).unwrap());
        s
    }

    /// Checks A = U Σ Vᵀ, UᵀU = I, VᵀV = I to `c`·max(m, n)·ε, the
    /// descending order, and the values against faer's.
    fn check_factors(a: &Mat<f64>, s: &[f64], u: &Mat<f64>, v: &Mat<f64>, c: f64, what: &str) {
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let bound = c * m.max(n) as f64 * f64::EPSILON;
        let norm = a.norm_l2().max(f64::MIN_POSITIVE);
        let sigma = Mat::from_fn(u.ncols(), v.ncols(), |i, j| if i == j && i < k { s[i] } else { 0.0 });
        let residual = (a - u * &sigma * v.transpose()).norm_l2() / norm;
        assert!(residual <= bound, "{what}: residual {residual:e}");
        let ou = (u.transpose() * u - Mat::<f64>::identity(u.ncols(), u.ncols())).norm_l2();
        let ov = (v.transpose() * v - Mat::<f64>::identity(v.ncols(), v.ncols())).norm_l2();
        assert!(ou <= bound && ov <= bound, "{what}: ‖UᵀU − I‖ = {ou:e}, ‖VᵀV − I‖ = {ov:e}");
        assert!(s.windows(2).all(|p| p[0] >= p[1]) && s.iter().all(|&x| x >= 0.0), "{what}: order");
        let want = reference(a);
        let dev = s.iter().zip(&want).fold(0.0f64, |x, (p, q)| x.max((p - q).abs()));
        assert!(dev <= bound * norm, "{what}: values off by {dev:e}");
    }

    fn check_bidiagonal(d: &[f64], e: &[f64], what: &str) {
        let n = d.len();
        let b = Mat::from_fn(n, n, |i, j| {
            if i == j {
                d[i]
            } else if j == i + 1 {
                e[i]
            } else {
                0.0
            }
        });
        let (mut s, mut off) = (d.to_vec(), e.to_vec());
        let (mut u, mut v) = (Mat::<f64>::zeros(n, n), Mat::<f64>::zeros(n, n));
        let mut mem = MemBuffer::new(scratch::<f64>(n, Par::Seq));
        bidiagonal_svd(&mut s, &mut off, u.as_mut(), v.as_mut(), Par::Seq, MemStack::new(&mut mem)).unwrap();
        check_factors(&b, &s, &u, &v, 4.0, &format!("{what}, n = {n}"));
    }

    /// Deterministic entries in [−1, 1).
    fn noise(seed: usize, len: usize) -> Vec<f64> {
        (0..len).map(|i| (((i + 1) * 7919 + seed * 104_729) % 1009) as f64 / 504.5 - 1.0).collect()
    }

    #[test]
    fn bidiagonal_triplets() {
        for n in [1, 2, 16, 17, 18, 33, 64, 100, 200] {
            let e_len = n - 1;
            check_bidiagonal(&noise(1, n), &noise(2, e_len), "pseudo-random");
            check_bidiagonal(&vec![1.0; n], &vec![1.0; e_len], "ones");
            check_bidiagonal(&noise(3, n), &vec![0.0; e_len], "diagonal");
            check_bidiagonal(&vec![1.0; n], &vec![1e-300; e_len], "tiny couplings");
            // Repeated values and exact zeros on the diagonal (singular).
            let w: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
            check_bidiagonal(&w, &vec![0.5; e_len], "zeros on the diagonal");
            // Graded over many decades.
            let g: Vec<f64> = (0..n).map(|i| 10f64.powi(-((i % 40) as i32))).collect();
            check_bidiagonal(&g, &noise(4, e_len), "graded");
        }
        check_bidiagonal(&[0.0; 40], &[0.0; 39], "zero");
        // A half 1e−200 of the other: squared poles and weights of its
        // merges would underflow without each merge's own scaling.
        for n in [40, 100] {
            let mixed: Vec<f64> = (0..n).map(|i| if i < n / 2 { 1.0 } else { 1e-200 }).collect();
            check_bidiagonal(&mixed, &mixed[1..], "a half 1e−200 of the other");
            let graded: Vec<f64> = (0..n).map(|i| 10f64.powi(-i * 300 / n)).collect();
            check_bidiagonal(&graded, &graded[1..], "graded over 300 decades");
        }
    }

    #[test]
    fn dense_svd_factors() {
        for (m, n, full) in
            [(128, 128, false), (150, 130, false), (130, 150, false), (140, 128, true), (128, 141, true)]
        {
            let a = Mat::from_fn(m, n, |i, j| noise(i * 131 + j, 1)[0] + if i == j { 0.5 } else { 0.0 });
            let k = m.min(n);
            let (uc, vc) = if full { (m, n) } else { (k, k) };
            let (mut s, mut u, mut v) =
                (Mat::<f64>::zeros(k, 1), Mat::<f64>::zeros(m, uc), Mat::<f64>::zeros(n, vc));
            let mut mem = MemBuffer::new(svd_scratch::<f64>(m, n, full, Par::Seq));
            let mut work = Mat::<f64>::zeros(m.max(n), k);
            svd(
                a.as_ref(),
                Scaling::NONE,
                work.as_mut(),
                (s.as_mut(), u.as_mut(), v.as_mut()),
                Par::Seq,
                MemStack::new(&mut mem),
            )
            .unwrap();
            let sv: Vec<f64> = (0..k).map(|i| s[(i, 0)]).collect();
            check_factors(&a, &sv, &u, &v, 4.0, &format!("{m}×{n}, full = {full}"));
            // V row-major (as svd.rs writes a thin V into Vᴴ's memory; the
            // products round differently on that layout).
            let mut vt = Mat::<f64>::zeros(vc, n);
            let mut u2 = Mat::<f64>::zeros(m, uc);
            svd(
                a.as_ref(),
                Scaling::NONE,
                work.as_mut(),
                (s.as_mut(), u2.as_mut(), vt.as_mut().transpose_mut()),
                Par::Seq,
                MemStack::new(&mut mem),
            )
            .unwrap();
            let sv: Vec<f64> = (0..k).map(|i| s[(i, 0)]).collect();
            check_factors(&a, &sv, &u2, &vt.transpose().to_owned(), 4.0, &format!("{m}×{n}, V row-major"));
        }
    }
}
