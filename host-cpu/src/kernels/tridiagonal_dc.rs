//! lindiff's own divide-and-conquer eigensolver for a real symmetric
//! tridiagonal matrix, with eigenvectors (Cuppen's method in the form of
//! LAPACK's `?stedc`), for [`super::eigh`] from n = [`DC_FROM`] in `std`
//! builds: faer 0.24's tridiagonal divide and conquer takes 1.8–1.9× LAPACK's
//! time at n = 256 (`cargo xtask bench --peers`, the table of
//! faer's eigh step by step), while its reduction to tridiagonal form and
//! its back-transformation are as fast as LAPACK's; eigh keeps those two.
//!
//! T (diagonal d, off-diagonal e) is split at m = n/2 by a rank-one tear:
//! with β = e[m−1], T = diag(T₁, T₂) + |β| w wᵀ, where T₁ and T₂ are T's
//! leading and trailing blocks with |β| taken from d[m−1] and d[m], and
//! w = e_{m−1} + sign(β)·e_m. The halves are solved recursively (faer's
//! tridiagonal QR algorithm from [`LEAF`] rows down), T₁ = Q₁D₁Q₁ᵀ, T₂ = Q₂D₂Q₂ᵀ, so
//! T = Q (D + ρ z zᵀ) Qᵀ with Q = diag(Q₁, Q₂), z = Qᵀw/√2 (‖z‖ = 1) and
//! ρ = 2|β|. Then, as LAPACK's `?laed2`/`?laed3`/`?laed4`:
//!
//! * deflation: with tol = 8ε·max(max|D|, max|z|) on T scaled to max-norm 1,
//!   a pair whose ρ|zⱼ| ≤ tol is an eigenpair as it stands, and of two poles
//!   closer than tol/(|c·s|) (after the Givens rotation [c s] that zeroes
//!   one z entry) one becomes an eigenpair, rotated; the k that remain have
//!   poles dⱼ strictly increasing and every ρ|zⱼ| > tol;
//! * the secular equation f(λ) = 1 + ρ Σ zⱼ²/(dⱼ − λ) has one root in each
//!   (dᵢ, dᵢ₊₁) and one in (d_k, d_k + ρ‖z‖²). Each root is found relative to
//!   its nearer pole (so that every dⱼ − λ is accurate), by the two-pole
//!   rational model of f fitted to f and f′ (one pole for the last root),
//!   kept inside a shrinking bracket by bisection wherever the model's step
//!   leaves it;
//! * Gu and Eisenstat's ẑ: the z for which the computed roots are exact,
//!   ẑ_l² = −∏ᵢ(d_l − λᵢ)/(ρ∏_{j≠l}(d_l − d_j)), makes the eigenvectors
//!   vᵢ = (D − λᵢ)⁻¹ẑ numerically orthogonal even where roots cluster;
//! * the eigenvectors of T's block: Q's non-deflated columns times V (two
//!   products that skip diag(Q₁, Q₂)'s zero blocks), the deflated columns
//!   as they are, all sorted by eigenvalue.
//!
//! The result is backward stable like LAPACK's: T = Z Λ Zᵀ + E with
//! ‖E‖ = O(n ε ‖T‖) and ‖ZᵀZ − I‖ = O(n ε).

use super::scaling::max_abs;
use super::secular::{eigenvector, secular_root, weights_for_roots, Poles};
use crate::field::Field;
use crate::gemm::matmul;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch};
use faer::linalg::evd::{self_adjoint_evd_scratch, tridiagonal_self_adjoint_evd, ComputeEigenvectors};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Conj, MatMut, MatRef, Par};
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// Order from which [`super::eigh`] uses this solver for the tridiagonal
/// eigenproblem: faer's own divide and conquer starts there too (below it
/// faer runs its QR algorithm, which is faster than either at those sizes).
pub(super) const DC_FROM: usize = 128;

/// Largest block solved directly (faer's tridiagonal QR algorithm).
const LEAF: usize = 16;

/// Workspace of [`eigh_tridiagonal`] for order n: a leaf's solve or the
/// largest merge's temporaries, in the order [`merge`] takes them (each
/// request padded to its alignment as the stack pads it).
pub(super) fn scratch<T: Field>(n: usize, par: Par) -> StackReq {
    let leaf = LEAF.min(n);
    let real = StackReq::new::<Re<T>>(n);
    let index = StackReq::new::<usize>(n);
    let merge = StackReq::all_of(&[
        real,                          // z
        index.array(4),                // order, kept, gone, rows
        temp_mat_scratch::<T>(n, n),   // out
        real,                          // values
        real.array(3),                 // poles, weights, w2
        StackReq::new::<Re<T>>(n * n), // delta
        real,                          // zhat
        index,                         // slot
        temp_mat_scratch::<T>(n, n),   // v
        temp_mat_scratch::<T>(n, n),   // gathered
    ]);
    let leaf = StackReq::all_of(&[
        temp_mat_scratch::<T>(leaf, 1).array(3), // d, e, s as T
        // faer's tridiagonal solve takes less than its dense one.
        self_adjoint_evd_scratch::<T>(leaf, ComputeEigenvectors::Yes, par, Default::default()),
    ]);
    StackReq::any_of(&[merge, leaf])
}

/// Whether [`self_adjoint_evd`] serves an n×n `T` with eigenvectors: real
/// `T` from [`DC_FROM`] in `std` builds (firmware keeps faer's code alone).
pub(super) fn serves<T: Field>(n: usize) -> bool {
    super::SMALL_KERNELS && !<T as Scalar>::IS_COMPLEX && n >= DC_FROM
}

/// Workspace of [`self_adjoint_evd`] for order n.
pub(super) fn evd_scratch<T: Field>(n: usize, par: Par) -> StackReq {
    let bs = recommended_block_size::<T>(n, n);
    StackReq::all_of(&[
        temp_mat_scratch::<T>(n, n),
        temp_mat_scratch::<T>(bs, n.saturating_sub(1)),
        StackReq::any_of(&[
            tridiag_in_place_scratch::<T>(n, par, Default::default()),
            StackReq::all_of(&[StackReq::new::<Re<T>>(n).array(2), scratch::<T>(n, par)]),
            apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(n.saturating_sub(1), bs, n),
        ]),
    ])
}

/// The eigendecomposition of the real symmetric `a` (its lower triangle;
/// n ≥ 1) with eigenvectors, as faer's `self_adjoint_evd` computes it but
/// for the tridiagonal step: faer's reduction to tridiagonal form,
/// [`eigh_tridiagonal`], faer's back-transformation. Eigenvalues ascending
/// into `s` (n×1), eigenvectors into `v` (n×n). `Err(())` when a leaf's
/// QR algorithm does not converge or a result is not finite.
pub(super) fn self_adjoint_evd<T: Field>(
    a: MatRef<'_, T>,
    mut s: MatMut<'_, T>,
    mut v: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    let n = a.nrows();
    let bs = recommended_block_size::<T>(n, n);
    // SAFETY: `trid` is written (the lower triangle, which is all faer's
    // reduction reads) before it is read.
    let (mut trid, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
    let mut trid = trid.as_mat_mut();
    trid.copy_from_triangular_lower(a);
    // SAFETY: as above, the Householder block is written by faer's
    // reduction before the back-transformation reads it.
    let (mut householder, stack) = unsafe { temp_mat_uninit::<T, _, _>(bs, n - 1, stack) };
    let mut householder = householder.as_mat_mut();
    tridiag_in_place(trid.rb_mut(), householder.rb_mut(), par, stack, Default::default());
    {
        let (mut d, stack) = stack.make_with(n, |i| Scalar::re(trid[(i, i)]));
        let (mut e, stack) = stack.make_with(n - 1, |i| Scalar::re(trid[(i + 1, i)]));
        eigh_tridiagonal(&mut d, &mut e, v.rb_mut(), par, stack)?;
        // A backward-stable solve of finite input has finite results; the
        // check (O(n²) against the O(n³) solve) keeps any breakdown from
        // passing as eigenvectors, which the output range check skips.
        if !d.iter().all(|x| x.is_finite_real()) || !super::finite::all_finite(v.rb()) {
            return Err(());
        }
        for (i, &x) in d.iter().enumerate() {
            s[(i, 0)] = T::from_real(x);
        }
    }
    apply_block_householder_sequence_on_the_left_in_place_with_conj(
        trid.rb().submatrix(1, 0, n - 1, n - 1),
        householder.rb(),
        Conj::No,
        v.subrows_mut(1, n - 1),
        par,
        stack,
    );
    Ok(())
}

/// The eigendecomposition of the symmetric tridiagonal matrix with diagonal
/// `d` (n) and off-diagonal `e` (n − 1): on return `d` holds the eigenvalues
/// ascending and `q` (n×n, real `T`) the eigenvectors, column by column.
/// `e` is overwritten. `Err(())` when a leaf's QR algorithm or a root of
/// a secular equation does not converge.
pub(super) fn eigh_tridiagonal<T: Field>(
    d: &mut [Re<T>],
    e: &mut [Re<T>],
    mut q: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    debug_assert!(!<T as Scalar>::IS_COMPLEX, "real matrices only");
    let n = d.len();
    assert!(e.len() + 1 == n.max(1) && q.nrows() == n && q.ncols() == n, "d: n, e: n − 1, q: n×n");
    q.fill(T::zero());
    if n == 0 {
        return Ok(());
    }
    // Scale to max-norm 1: deflation compares the poles with z's unit-norm
    // entries.
    let zero = Re::<T>::zero();
    let Some(norm) = max_abs(d.iter().chain(e.iter()).copied()) else {
        return Err(());
    };
    if norm == zero {
        q.diagonal_mut().fill(T::one());
        return Ok(());
    }
    let inv = Re::<T>::one() / norm;
    d.iter_mut().chain(e.iter_mut()).for_each(|x| *x *= inv);
    solve(d, e, q, par, stack)?;
    d.iter_mut().for_each(|x| *x *= norm);
    Ok(())
}

/// The recursive solve of the (scaled) block: `q` is zero on entry.
fn solve<T: Field>(
    d: &mut [Re<T>],
    e: &mut [Re<T>],
    mut q: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    let n = d.len();
    if n <= LEAF {
        return leaf(d, e, q, par, stack);
    }
    let m = n / 2;
    let beta = e[m - 1];
    d[m - 1] -= beta.abs();
    d[m] -= beta.abs();
    {
        let (d1, d2) = d.split_at_mut(m);
        let (e1, e2) = e.split_at_mut(m - 1);
        let (q1, q2) = q.rb_mut().split_at_row_mut(m);
        solve::<T>(d1, e1, q1.subcols_mut(0, m), par, stack)?;
        solve::<T>(d2, &mut e2[1..], q2.subcols_mut(m, n - m), par, stack)?;
    }
    merge(d, q, m, beta, par, stack)
}

/// A block of at most [`LEAF`] rows: faer's tridiagonal QR algorithm.
fn leaf<T: Field>(
    d: &mut [Re<T>],
    e: &[Re<T>],
    q: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    let n = d.len();
    // SAFETY: `diag` and `sub` are written in full here before faer reads
    // them (`sub`'s last entry is never read); faer writes `s` before it is
    // read.
    let (mut diag, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    // SAFETY: as for `diag`.
    let (mut sub, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    // SAFETY: as for `diag`.
    let (mut s, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    let (mut diag, mut sub, mut s) = (diag.as_mat_mut(), sub.as_mat_mut(), s.as_mat_mut());
    for i in 0..n {
        diag[(i, 0)] = T::from_real(d[i]);
        sub[(i, 0)] = if i + 1 < n { T::from_real(e[i]) } else { T::zero() };
    }
    tridiagonal_self_adjoint_evd(
        diag.rb().col(0).as_diagonal(),
        sub.rb().col(0).as_diagonal(),
        s.rb_mut().col_mut(0).as_diagonal_mut(),
        Some(q),
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

/// Merges the solved halves: `d` holds D₁ (ascending) then D₂ (ascending),
/// `q` holds diag(Q₁, Q₂); on return `d` and `q` hold the eigenpairs of the
/// whole block, ascending. `beta` is the torn-off entry e[m − 1].
/// `Err(())` when a root of the secular equation does not converge.
fn merge<T: Field>(
    d: &mut [Re<T>],
    mut q: MatMut<'_, T>,
    m: usize,
    beta: Re<T>,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), ()> {
    let n = d.len();
    let (zero, one) = (Re::<T>::zero(), Re::<T>::one());
    let sqrt_half = Re::<T>::from_f64(core::f64::consts::FRAC_1_SQRT_2);
    // z = Qᵀw/√2 and ρ = 2|β| (w = e_{m−1} + sign(β)·e_m).
    let sign = if beta < zero { -one } else { one };
    let (mut z, stack) = stack.make_with(n, |j| {
        if j < m {
            Scalar::re(q[(m - 1, j)]) * sqrt_half
        } else {
            sign * Scalar::re(q[(m, j)]) * sqrt_half
        }
    });
    let z = &mut *z;
    let rho = (beta + beta).abs();
    // The poles in ascending order (a merge of the two sorted halves).
    let (mut order, stack) = stack.make_with(n, |_| 0usize);
    let order = &mut *order;
    let (mut a, mut b) = (0, m);
    for slot in order.iter_mut() {
        let upper = b >= n || (a < m && d[a] <= d[b]);
        *slot = if upper { a } else { b };
        if upper {
            a += 1;
        } else {
            b += 1;
        }
    }
    let dmax = max_abs(d.iter().copied()).unwrap_or(zero);
    let zmax = max_abs(z.iter().copied()).unwrap_or(zero);
    let tol = Re::<T>::from_f64(8.0) * Re::<T>::EPSILON * dmax.max_real(zmax);

    // Deflation, in pole order: `kept` collects the non-deflated poles'
    // columns (their d and z updated in place), `gone` the deflated ones.
    let (mut kept, stack) = stack.make_with(n, |_| 0usize);
    let kept = &mut *kept;
    let (mut gone, stack) = stack.make_with(n, |_| 0usize);
    let gone = &mut *gone;
    // Which rows of each column of Q may be non-zero: 0 for rows 0..m
    // (from Q₁), 1 for rows m..n (from Q₂), 2 for both (mixed by a
    // rotation), so that the product below skips the zero blocks.
    let (mut rows, stack) = stack.make_with(n, |c| usize::from(c >= m));
    let rows = &mut *rows;
    let (mut k, mut ng) = (0, 0);
    let mut prev: Option<usize> = None;
    for &j in order.iter() {
        if rho * z[j].abs() <= tol {
            gone[ng] = j;
            ng += 1;
            continue;
        }
        let Some(p) = prev else {
            prev = Some(j);
            continue;
        };
        // The rotation of (p, j) that zeroes z_p.
        let tau = z[p].hypot(z[j]);
        let (c, s) = (z[j] / tau, -z[p] / tau);
        if ((d[j] - d[p]) * c * s).abs() <= tol {
            // Deflate p: rotate columns p and j of Q, and their poles.
            z[j] = tau;
            z[p] = zero;
            let (ct, st) = (T::from_real(c), T::from_real(s));
            for r in 0..n {
                let (x, y) = (q[(r, p)], q[(r, j)]);
                q[(r, p)] = ct * x + st * y;
                q[(r, j)] = ct * y - st * x;
            }
            if rows[p] != rows[j] {
                rows[p] = 2;
                rows[j] = 2;
            }
            let (dp, dj) = (d[p], d[j]);
            d[p] = dp * c * c + dj * s * s;
            d[j] = dp * s * s + dj * c * c;
            gone[ng] = p;
            ng += 1;
        } else {
            kept[k] = p;
            k += 1;
        }
        prev = Some(j);
    }
    if let Some(p) = prev {
        kept[k] = p;
        k += 1;
    }
    debug_assert_eq!(k + ng, n);

    // The eigenvalues, and the merged columns in `out`, unsorted.
    // SAFETY: columns 0..k are written by the product, k..n by the copies of
    // the deflated columns, before `out` is read.
    let (mut out, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
    let mut out = out.as_mat_mut();
    let (mut values, stack) = stack.make_with(n, |_| zero);
    let values = &mut *values;
    if k > 0 {
        let (poles, stack) = stack.make_with(k, |i| d[kept[i]]);
        let (weights, stack) = stack.make_with(k, |i| z[kept[i]]);
        // ρwⱼ², and delta[l + k·i] = poles[l] − λᵢ.
        let (w2, stack) = stack.make_with(k, |j| rho * weights[j] * weights[j]);
        let (mut delta, stack) = stack.make_with(k * k, |_| zero);
        for (i, col) in delta.chunks_exact_mut(k).enumerate() {
            let (root, converged) = secular_root::<T>(Poles::Plain, i, &poles, &w2, col);
            if !converged {
                return Err(());
            }
            values[i] = root;
        }
        // Gu–Eisenstat: the ẑ for which these roots are exact (up to the
        // common factor √ρ, which the normalisation below removes):
        // ρẑ_l² = −(d_l − λ_l)·∏_{j≠l} (d_l − λⱼ)/(d_l − dⱼ).
        let (mut zhat, stack) = stack.make_with(k, |_| zero);
        weights_for_roots::<T>(Poles::Plain, &poles, &delta, &weights, &mut zhat);
        // The kept columns of Q grouped by their non-zero rows: Q₁'s, the
        // mixed, then Q₂'s (`slot[l]`: where kept column l goes).
        let (mut slot, stack) = stack.make_with(k, |_| 0usize);
        let mut next = 0;
        for kind in [0, 2, 1] {
            for (l, &c) in kept[..k].iter().enumerate() {
                if rows[c] == kind {
                    slot[l] = next;
                    next += 1;
                }
            }
        }
        let upper = kept[..k].iter().filter(|&&c| rows[c] != 1).count();
        let lower_from = kept[..k].iter().filter(|&&c| rows[c] == 0).count();
        // V: the eigenvectors of D + ρẑẑᵀ, column i ∝ (D − λᵢ)⁻¹ẑ, its rows
        // in the grouped order.
        // SAFETY: every entry of `v` is written here; of `gathered`, the
        // rows each product reads (0..m of the first `upper` columns, m..n
        // of the columns from `lower_from`), which hold Q's non-zero rows.
        let (mut v, stack) = unsafe { temp_mat_uninit::<T, _, _>(k, k, stack) };
        let mut v = v.as_mat_mut();
        for (i, col) in delta.chunks_exact_mut(k).enumerate() {
            let inv = one / eigenvector::<T>(&zhat, col);
            for (l, &y) in col.iter().enumerate() {
                v[(slot[l], i)] = T::from_real(y * inv);
            }
        }
        // SAFETY: see `v` above: the rows each product reads are copied here.
        let (mut gathered, _) = unsafe { temp_mat_uninit::<T, _, _>(n, k, stack) };
        let mut gathered = gathered.as_mat_mut();
        for (l, &c) in kept[..k].iter().enumerate() {
            let (from, to) = match rows[c] {
                0 => (0, m),
                1 => (m, n),
                _ => (0, n),
            };
            let src = q.rb().col(c).subrows(from, to - from);
            gathered.rb_mut().col_mut(slot[l]).subrows_mut(from, to - from).copy_from(src);
        }
        let (top, bottom) = (gathered.rb().subrows(0, m), gathered.rb().subrows(m, n - m));
        let (out_top, out_bottom) = out.rb_mut().subcols_mut(0, k).split_at_row_mut(m);
        let (v_top, v_bottom) = (v.rb().subrows(0, upper), v.rb().subrows(lower_from, k - lower_from));
        matmul(out_top, Accum::Replace, top.subcols(0, upper), v_top, T::one(), par);
        matmul(
            out_bottom,
            Accum::Replace,
            bottom.subcols(lower_from, k - lower_from),
            v_bottom,
            T::one(),
            par,
        );
    }
    for (g, &c) in gone[..ng].iter().enumerate() {
        values[k + g] = d[c];
        out.rb_mut().col_mut(k + g).copy_from(q.rb().col(c));
    }
    // Sorted by eigenvalue into `d` and `q`.
    for (i, slot) in order.iter_mut().enumerate() {
        *slot = i;
    }
    order.sort_unstable_by(|&x, &y| values[x].partial_cmp(&values[y]).unwrap_or(core::cmp::Ordering::Equal));
    for (pos, &src) in order.iter().enumerate() {
        d[pos] = values[src];
        q.rb_mut().col_mut(pos).copy_from(out.rb().col(src));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{eigh_tridiagonal, scratch};
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::{Mat, Par};

    /// Solves the tridiagonal (d, e) and checks T Z = Z Λ, ZᵀZ = I and the
    /// ascending order to 4nε, and the eigenvalues against `want` when known.
    fn check(d: &[f64], e: &[f64], want: Option<&[f64]>) {
        let n = d.len();
        let t = Mat::from_fn(n, n, |i, j| match i.abs_diff(j) {
            0 => d[i],
            1 => e[i.min(j)],
            _ => 0.0,
        });
        let (mut w, mut off, mut z) = (d.to_vec(), e.to_vec(), Mat::<f64>::zeros(n, n));
        let mut mem = MemBuffer::new(scratch::<f64>(n, Par::Seq));
        eigh_tridiagonal(&mut w, &mut off, z.as_mut(), Par::Seq, MemStack::new(&mut mem)).unwrap();
        let bound = 4.0 * n as f64 * f64::EPSILON;
        let norm = t.norm_l2().max(f64::MIN_POSITIVE);
        let lambda = Mat::from_fn(n, n, |i, j| if i == j { w[i] } else { 0.0 });
        let residual = (&t * &z - &z * &lambda).norm_l2() / norm;
        assert!(residual <= bound, "n = {n}: residual {residual:e}");
        let orth = (z.transpose() * &z - Mat::<f64>::identity(n, n)).norm_l2();
        assert!(orth <= bound, "n = {n}: ‖ZᵀZ − I‖ = {orth:e}");
        assert!(w.windows(2).all(|p| p[0] <= p[1]), "n = {n}: not ascending");
        if let Some(want) = want {
            let dev = w.iter().zip(want).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(dev <= bound * norm, "n = {n}: eigenvalues off by {dev:e}");
        }
    }

    #[test]
    fn tridiagonal_eigenpairs() {
        for n in [1, 2, 16, 17, 33, 64, 100] {
            // Second difference: eigenvalues 2 − 2cos(kπ/(n + 1)).
            let exact: Vec<f64> = (1..=n)
                .map(|k| 2.0 - 2.0 * (k as f64 * core::f64::consts::PI / (n as f64 + 1.0)).cos())
                .collect();
            check(&vec![2.0; n], &vec![-1.0; n.saturating_sub(1)], Some(&exact));
            // Pseudo-random entries, of both signs.
            let d: Vec<f64> = (0..n).map(|i| ((i * 7919) % 101) as f64 / 50.0 - 1.0).collect();
            let e: Vec<f64> = (1..n).map(|i| ((i * 104_729) % 89) as f64 / 44.0 - 1.0).collect();
            check(&d, &e, None);
            // Every coupling zero or tiny: everything deflates.
            check(&d, &vec![0.0; n.saturating_sub(1)], None);
            check(&vec![1.0; n], &vec![1e-300; n.saturating_sub(1)], Some(&vec![1.0; n]));
            // Repeated diagonal with unit couplings (Wilkinson-like).
            let w: Vec<f64> = (0..n).map(|i| (i % 5) as f64).collect();
            check(&w, &vec![1.0; n.saturating_sub(1)], None);
        }
        // All zero.
        check(&[0.0; 40], &[0.0; 39], Some(&[0.0; 40]));
    }
}
