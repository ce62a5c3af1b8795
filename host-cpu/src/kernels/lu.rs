//! Partial-pivot LU kernels (`lu`, `lu_factor`, `lu_factor_solve`,
//! `lu_solve_prepared`) over faer's scratch APIs, and the factorization
//! helpers the determinant kernels share. Small real matrices (std builds)
//! are factored by lindiff's own unblocked kernel, `super::lu_small`, with
//! the same pivot rule and the same treatment of zero pivot columns.
//!
//! Convention: `P a = L U` with `(P a)[i, :] = a[perm[i], :]`, L unit lower
//! triangular, U upper triangular; permutations are `i64` vectors.
//!
//! Singular matrices factor without error. faer's blocked LU puts NaN in L
//! when a pivot column is exactly zero (it scales by `1 / 0`), so a factor
//! with a non-finite entry is redone by [`factor_unblocked`], a LAPACK-style
//! right-looking LU that leaves a zero pivot column as zeros (for example a
//! zero matrix gives `L = I`, `U = 0`). Only the solves report singularity:
//! an exactly zero pivot `U[k, k]` is [`Failure::Singular`], a matrix
//! singular to working precision by the op's `SolveOptions` test (by
//! default the pivot ratio, see `super::singular`) is
//! [`Failure::NearlySingular`].
//!
//! Scale-robust (`super::scaling`): `lu`, `lu_factor`, the determinants
//! and `lu_factor_solve` factor `a · 2^e` when max|a| lies outside the safe
//! range and scale U back; the solves scale `b` too and solve with the
//! scaled factors, x = x' · 2^(e_a − e_b). `lu`, `lu_factor` and the
//! determinants take the scaling from the non-finite check's pass;
//! `lu_factor_solve`, which skips that pass when its result is finite,
//! from its pivots (a pivot out of the safe range sends it to the exact
//! scan, and to a scaled factorization when `a` needs one), and
//! `lu_solve_prepared` scales a copy of `lu` when its pivots are out of
//! range.
//!
//! `lu_solve_prepared` validates its `perm` input: a vector that is not a
//! permutation of `0..n` (an entry out of range or repeated) selects rows
//! with a singular 0/1 matrix and is reported as `Singular("perm")`.

use super::columns::{copy_col, copy_mat, zero_col};
use super::finite::{all_finite, check_finite};
use super::lu_small;
use super::output_range::RESULT;
use super::range::check_range;
use super::scaling::{max_abs, scale_mat, Range, Scaling};
use super::singular::{estimate_len, estimate_scratch, factored_norm, one_norm, pivots, singular_test};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use crate::gemm::matmul;
use faer::dyn_stack::{DynArray, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::factor::{lu_in_place, lu_in_place_scratch};
use faer::linalg::lu::partial_pivoting::solve::{
    solve_in_place_scratch, solve_in_place_with_conj, solve_transpose_in_place_scratch,
    solve_transpose_in_place_with_conj,
};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::perm::PermRef;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Conj, MatMut, MatRef, Par};
use lindiff_core::op::{Lu, LuFactor, LuFactorSolve, LuSolvePrepared, MatOp};
use lindiff_core::{RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// `|re| + |im|`: the pivot score of faer and LAPACK.
pub(super) fn abs1<T: Field>(x: T) -> Re<T> {
    Scalar::abs(Scalar::re(x)) + Scalar::abs(Scalar::im(x))
}

/// `x / s` for a real `s`, part by part (no overflow for a subnormal `s`).
pub(super) fn div_real<T: Field>(x: T, s: Re<T>) -> T {
    T::from_parts(Scalar::re(x) / s, Scalar::im(x) / s)
}

/// Carves a forward and an inverse permutation array of length `n`.
pub(super) fn carve_perms(
    stack: &mut MemStack,
    n: usize,
) -> (DynArray<'_, usize>, DynArray<'_, usize>, &mut MemStack) {
    let (fwd, stack) = stack.make_with(n, |i| i);
    let (inv, stack) = stack.make_with(n, |i| i);
    (fwd, inv, stack)
}

/// Scratch of [`factor`] for an m×n matrix plus its two perm arrays (m
/// each, carved first with [`carve_perms`]).
pub(super) fn factor_scratch<T: Field>(m: usize, n: usize, par: Par) -> StackReq {
    perms_scratch(m).and(factor_only_scratch::<T>(m, n, par))
}

/// Scratch of [`carve_perms`].
pub(super) fn perms_scratch(n: usize) -> StackReq {
    StackReq::new::<usize>(n).array(2)
}

/// Scratch of [`factor`] itself (the stack it is handed).
fn factor_only_scratch<T: Field>(m: usize, n: usize, par: Par) -> StackReq {
    lu_in_place_scratch::<usize, T>(m, n, par, Default::default())
}

/// Factors `a · 2^e` (`a` m×n, e the exponent of `scaling`) into `lu` (m×n,
/// any contents; overwritten with the packed factors: strictly lower L, U
/// on and above the diagonal — U of the scaled matrix), writes the row
/// permutation into `fwd` and its inverse into `inv` (length m each), and
/// returns the number of row transpositions (the parity of `P`). Never
/// fails: singular input gives zero pivots, never NaN (for finite `a`).
pub(super) fn factor<T: Field>(
    a: MatRef<'_, T>,
    mut lu: MatMut<'_, T>,
    fwd: &mut [usize],
    inv: &mut [usize],
    scaling: Scaling,
    par: Par,
    stack: &mut MemStack,
) -> usize {
    copy_mat(a, lu.rb_mut());
    scaling.apply_mat(lu.rb_mut());
    if lu_small::serves::<T>(lu.nrows(), lu.ncols()) && lu.row_stride() == 1 {
        // Never NaN for finite input: a zero pivot column is skipped.
        let swaps = lu_small::factor(lu, fwd);
        for (i, &p) in fwd.iter().enumerate() {
            inv[p] = i;
        }
        return swaps;
    }
    let (info, _) = lu_in_place(lu.rb_mut(), &mut *fwd, &mut *inv, par, stack, Default::default());
    // faer scales a zero (or subnormal) pivot column by 1/0. In a square
    // factorization every such column feeds a later pivot, so a finite
    // diagonal proves a finite result; rectangular ones are scanned whole.
    let finite = if lu.nrows() == lu.ncols() { pivots(lu.rb()).finite } else { all_finite(lu.rb()) };
    if finite {
        return info.transposition_count;
    }
    // An exactly zero (or subnormal) pivot column: faer scaled it by 1/0.
    lu.copy_from(a);
    scaling.apply_mat(lu.rb_mut());
    let swaps = factor_unblocked(lu.rb_mut(), fwd);
    for (i, &p) in fwd.iter().enumerate() {
        inv[p] = i;
    }
    swaps
}

/// [`factor`] of `a` at the scale [`Range::Linear`] asks for, which it
/// returns. A square `a` is factored first as it is and scanned only when
/// the pivots call for it (the scan costs a pass over memory: as much as
/// 8 % of a large factorization, and as much as a small solve): with no
/// zero pivot, a non-finite entry always reaches U's diagonal (it is
/// chosen as a pivot, or its row turns non-finite through the trailing
/// updates, and every row is a pivot row once), and an `a` outside the
/// safe range has a pivot outside it (the first pivot is a largest entry
/// of its column, and |u_kk| ≥ σ_min/(n·‖L⁻¹‖)). A zero pivot skips its
/// step's updates, which could leave a NaN in its row of U alone, so a
/// singular `a` is scanned too. A rectangular `a` is scanned first.
///
/// # Errors
/// `NonFinite("a")` for a NaN or infinite entry.
pub(super) fn factor_in_range<T: Field>(
    a: MatRef<'_, T>,
    mut lu: MatMut<'_, T>,
    fwd: &mut [usize],
    inv: &mut [usize],
    par: Par,
    stack: &mut MemStack,
) -> Result<Scaling, Failure> {
    if a.nrows() == a.ncols() {
        factor(a, lu.rb_mut(), fwd, inv, Scaling::NONE, par, stack);
        let p = pivots(lu.rb());
        if p.in_range() && !p.zero {
            return Ok(Scaling::NONE);
        }
    }
    let scaling = check_range(a, "a", Range::Linear)?;
    if a.nrows() != a.ncols() || !scaling.is_none() {
        factor(a, lu, fwd, inv, scaling, par, stack);
    }
    Ok(scaling)
}

/// Right-looking partial-pivot LU of `lu` in place (LAPACK ?getf2 style): a
/// zero pivot column is skipped (its L column stays zero). Writes `perm`
/// (length m) and returns the number of row transpositions.
fn factor_unblocked<T: Field>(mut lu: MatMut<'_, T>, perm: &mut [usize]) -> usize {
    let (m, n) = (lu.nrows(), lu.ncols());
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    let mut swaps = 0;
    for j in 0..m.min(n) {
        let (mut piv, mut best) = (j, <Re<T> as Scalar>::zero());
        for i in j..m {
            let score = abs1(lu[(i, j)]);
            if score > best {
                (piv, best) = (i, score);
            }
        }
        if best == <Re<T> as Scalar>::zero() {
            // Nothing but zeros and NaNs: a NaN, if any, onto the diagonal,
            // where the callers' check of U's diagonal sees it.
            piv = (j..m).find(|&i| !Scalar::is_finite(lu[(i, j)])).unwrap_or(j);
        }
        if piv != j {
            for c in 0..n {
                let t = lu[(j, c)];
                lu[(j, c)] = lu[(piv, c)];
                lu[(piv, c)] = t;
            }
            perm.swap(j, piv);
            swaps += 1;
        }
        if best == <Re<T> as Scalar>::zero() {
            continue;
        }
        // Divide by the pivot scaled by its largest part s (p's parts ≤ 1,
        // |p| ≥ 1): safe for subnormal pivots and for complex ones whose
        // abs1 overflows, where s does not (so L stays finite where U is);
        // every entry has abs1 ≤ abs1(pivot) ≤ 2s, so the quotients are ≤ 2.
        let pivot = lu[(j, j)];
        let s = Scalar::abs(Scalar::re(pivot)).max_real(Scalar::abs(Scalar::im(pivot)));
        let p = div_real(pivot, s);
        for i in j + 1..m {
            lu[(i, j)] = div_real(lu[(i, j)], s) / p;
        }
        // Rank-1 update of the trailing block (faer's allocation-free kernel).
        let (_, top_right, bottom_left, trailing) = lu.rb_mut().split_at_mut(j + 1, j + 1);
        matmul(
            trailing,
            Accum::Add,
            bottom_left.rb().col(j).as_mat(),
            top_right.rb().row(j).as_mat(),
            -<T as Scalar>::one(),
            Par::Seq,
        );
    }
    swaps
}

/// Writes the m×k unit lower factor of the packed `lu` (explicit ones on the
/// diagonal, zeros above) into `l`, column by column with slice copies and
/// fills (an indexed loop over every entry cost more than faer's factor at
/// n ≤ 128).
pub(super) fn write_l<T: Field>(lu: MatRef<'_, T>, mut l: MatMut<'_, T>) {
    let m = l.nrows();
    for j in 0..l.ncols() {
        let mut col = l.rb_mut().col_mut(j);
        let top = j.min(m);
        zero_col(col.rb_mut().subrows_mut(0, top));
        if j < m {
            col[j] = T::one();
            copy_col(lu.col(j).subrows(j + 1, m - j - 1), col.subrows_mut(j + 1, m - j - 1));
        }
    }
}

/// Writes the k×n upper factor of the packed `lu` (zeros below), scaled
/// back by `scaling`, into `u`, column by column like [`write_l`].
pub(super) fn write_u<T: Field>(lu: MatRef<'_, T>, mut u: MatMut<'_, T>, scaling: Scaling) {
    let k = u.nrows();
    for j in 0..u.ncols() {
        let mut col = u.rb_mut().col_mut(j);
        let top = (j + 1).min(k);
        copy_col(lu.col(j).subrows(0, top), col.rb_mut().subrows_mut(0, top));
        zero_col(col.rb_mut().subrows_mut(top, k - top));
    }
    undo_upper(u, scaling);
}

/// Splits the packed m×n factor `lu` (m ≥ n): U into `u` (n×n, zeros below
/// the diagonal, scaled back by `scaling`) and L left in place (ones on the
/// diagonal, zeros above it), one column of both at a time, so each column
/// of `lu` is read and cleared while it is in cache.
fn split_tall<T: Field>(mut lu: MatMut<'_, T>, mut u: MatMut<'_, T>, scaling: Scaling) {
    let n = u.nrows();
    for j in 0..n {
        let (mut src, mut dst) = (lu.rb_mut().col_mut(j), u.rb_mut().col_mut(j));
        copy_col(src.rb().subrows(0, j + 1), dst.rb_mut().subrows_mut(0, j + 1));
        zero_col(dst.subrows_mut(j + 1, n - j - 1));
        zero_col(src.rb_mut().subrows_mut(0, j));
        src[j] = T::one();
    }
    undo_upper(u, scaling);
}

/// Turns the packed m×n factor `lu` (m < n) into U in place: zeros below
/// the diagonal, U scaled back by `scaling`.
fn keep_u<T: Field>(mut lu: MatMut<'_, T>, scaling: Scaling) {
    let m = lu.nrows();
    for j in 0..m {
        zero_col(lu.rb_mut().col_mut(j).subrows_mut(j + 1, m - j - 1));
    }
    undo_upper(lu, scaling);
}

/// Scales the upper triangle of the packed factor `lu` (U, on and above
/// the diagonal) back by `scaling`; L is scale-free.
pub(super) fn undo_upper<T: Field>(mut lu: MatMut<'_, T>, scaling: Scaling) {
    if scaling.is_none() {
        return;
    }
    for j in 0..lu.ncols() {
        for i in 0..lu.nrows().min(j + 1) {
            lu[(i, j)] = scaling.undo(lu[(i, j)]);
        }
    }
}

/// `Ok` when U, the upper triangle of the packed factor `lu` (or U itself)
/// as the kernel returns it — scaled back by `scaling` — is finite. The
/// partial-pivot kernels check their own U this way, and
/// `super::output_range` leaves it alone: in an m×n factor with m ≥ n,
/// made at the input's own scale with no zero pivot, a non-finite entry
/// reaches U's diagonal (the argument of `factor_in_range`: an entry of
/// U's row p in column k ≥ p enters every later row's column k through
/// the updates, 0·∞ being NaN, and the diagonal entry of column k is one
/// of them), so the diagonal is enough. Otherwise — U scaled back by
/// 2^e (which may overflow an entry alone), a zero pivot (whose skipped
/// updates stop that spread), or m < n (the columns past m have no
/// diagonal) — the whole triangle is scanned.
///
/// # Errors
/// `OutOfRange("a")` for a NaN or infinity in U: a value the dtype
/// cannot hold (pivot growth or the scaling back overflowed).
pub fn upper_finite<T: Field>(lu: MatRef<'_, T>, scaling: Scaling) -> Result<(), Failure> {
    let (m, n) = (lu.nrows(), lu.ncols());
    let diagonal = || {
        (0..n).all(|k| {
            let d = lu[(k, k)];
            Scalar::is_finite(d) && d != T::zero()
        })
    };
    let whole = || (0..n).all(|j| all_finite(lu.col(j).subrows(0, m.min(j + 1)).as_mat()));
    if (scaling.is_none() && m >= n && diagonal()) || whole() {
        Ok(())
    } else {
        Err(Failure::OutOfRange { arg: "a", why: RESULT })
    }
}

/// The scaling that brings the upper triangle of the packed `lu` (U) into
/// the safe range (`None` for a NaN or ∞ there).
pub(super) fn upper_range<T: Field>(lu: MatRef<'_, T>) -> Option<Scaling> {
    let mut max = <Re<T> as Scalar>::zero();
    for j in 0..lu.ncols() {
        let k = lu.nrows().min(j + 1);
        max = max.max_real(max_abs(lu.col(j).subrows(0, k).iter().copied())?);
    }
    Some(Scaling::of_max(max, Range::Linear))
}

/// `x = b · 2^e` (same shape; `x` any contents).
pub(super) fn copy_scaled<T: Field>(b: MatRef<'_, T>, mut x: MatMut<'_, T>, scaling: Scaling) {
    copy_mat(b, x.rb_mut());
    scaling.apply_mat(x);
}

/// Writes a permutation into the i64 vector output `out`.
pub(super) fn write_perm(item: &mut Item<'_>, out: usize, perm: &[usize]) {
    let dst = item.out_slice::<i64>(out);
    assert_eq!(dst.len(), perm.len(), "a permutation output has one entry per row");
    for (d, &p) in dst.iter_mut().zip(perm) {
        d.write(p as i64);
    }
}

/// Reads the i64 vector input `input` (length n) into `fwd` and its inverse
/// into `inv`; `Err(Singular(arg))` unless it is a permutation of `0..n`.
pub(super) fn read_perm(
    item: &Item<'_>,
    input: usize,
    arg: &'static str,
    fwd: &mut [usize],
    inv: &mut [usize],
) -> Result<(), Failure> {
    let n = fwd.len();
    inv.fill(usize::MAX);
    for (i, f) in fwd.iter_mut().enumerate() {
        let p = item.get::<i64>(input, i);
        let p = usize::try_from(p).ok().filter(|&p| p < n).ok_or(Failure::Singular(arg))?;
        if inv[p] != usize::MAX {
            return Err(Failure::Singular(arg));
        }
        *f = p;
        inv[p] = i;
    }
    Ok(())
}

/// The `Conj` flag and whether to use the transposed solve for `op`.
pub(super) fn solve_mode(op: MatOp) -> (bool, Conj) {
    match op {
        MatOp::Identity => (false, Conj::No),
        MatOp::Transpose => (true, Conj::No),
        MatOp::Adjoint => (true, Conj::Yes),
    }
}

impl<T: Field> Kernel<T> for Lu {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        factor_scratch::<T>(m, n, par)
    }

    /// Factors in whichever output has `a`'s shape (L, m×k, when m ≥ n;
    /// else U, k×n), writes the other from it and then clears the packed
    /// factor's other triangle in place: one pass over memory less than
    /// factoring in a temporary and writing both.
    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let (mut fwd, mut inv, stack) = carve_perms(stack, a.nrows());
        if a.nrows() >= a.ncols() {
            let (mut l, mut u) = item.out_pair::<T, T>(1, 2);
            let scaling = factor_in_range(a, l.rb_mut(), &mut fwd, &mut inv, par, stack)?;
            split_tall(l, u.rb_mut(), scaling);
            upper_finite(u.rb(), scaling)?;
        } else {
            let (l, mut u) = item.out_pair::<T, T>(1, 2);
            let scaling = factor_in_range(a, u.rb_mut(), &mut fwd, &mut inv, par, stack)?;
            write_l(u.rb(), l);
            keep_u(u.rb_mut(), scaling);
            upper_finite(u.rb(), scaling)?;
        }
        write_perm(item, 0, &fwd);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for LuFactor {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        factor_scratch::<T>(m, n, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let (mut fwd, mut inv, stack) = carve_perms(stack, a.nrows());
        let mut lu = item.out_mat::<T>(0);
        let scaling = factor_in_range(a, lu.rb_mut(), &mut fwd, &mut inv, par, stack)?;
        undo_upper(lu.rb_mut(), scaling);
        upper_finite(lu.rb(), scaling)?;
        write_perm(item, 1, &fwd);
        Ok(())
    }
}

/// Scratch of faer's solves of one right-hand side, plain and adjoint (the
/// condition estimate's).
fn vector_solves_scratch<T: Field>(n: usize, par: Par) -> StackReq {
    solve_in_place_scratch::<usize, T>(n, 1, par).or(solve_transpose_in_place_scratch::<usize, T>(n, 1, par))
}

/// The condition estimate's solve with partial-pivot factors.
fn vector_solve<'a, T: Field>(
    lu: MatRef<'a, T>,
    perm: PermRef<'a, usize>,
    par: Par,
) -> impl FnMut(bool, &mut [T], &mut MemStack) + 'a {
    move |adjoint, v, stack| {
        let n = v.len();
        let x = MatMut::from_column_major_slice_mut(v, n, 1);
        if adjoint {
            solve_transpose_in_place_with_conj(lu, lu, perm, Conj::Yes, x, par, stack);
        } else {
            solve_in_place_with_conj(lu, lu, perm, Conj::No, x, par, stack);
        }
    }
}

impl<T: Field> Kernel<T> for LuFactorSolve {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let (_, r) = shapes.input(1);
        StackReq::all_of(&[
            perms_scratch(n),
            StackReq::any_of(&[
                factor_only_scratch::<T>(n, n, par),
                solve_in_place_scratch::<usize, T>(n, r, par),
                estimate_scratch::<T>(n).and(vector_solves_scratch::<T>(n, par)),
            ]),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
        let n = a.nrows();
        let check = self.0.check;
        let (mut fwd, mut inv, stack) = carve_perms(stack, n);
        {
            // Factor straight into the `lu` output, then solve into `x`.
            let (mut x, mut lu) = item.out_pair::<T, T>(0, 1);
            // The inputs are scanned for NaN/∞ (and for their scale) only
            // when a result calls for it (the scans would cost as much as
            // the small solves): `a` as `factor_in_range` says, and a
            // non-finite entry of `b` reaches `x`.
            let scaling = factor_in_range(a, lu.rb_mut(), &mut fwd, &mut inv, par, stack)?;
            let piv = pivots(lu.rb());
            if piv.zero {
                check_finite(b, "b")?;
            }
            // SAFETY: `factor` wrote `fwd` as a permutation of 0..n and `inv`
            // as its inverse (faer's, `lu_small`'s or `factor_unblocked`'s
            // swaps).
            let perm = unsafe { PermRef::new_unchecked(&fwd, &inv, n) };
            let anorm = |_: &mut [T], _: &mut [T]| one_norm(a, scaling);
            singular_test(&piv, n, check, anorm, vector_solve(lu.rb(), perm, par), "a", stack)?;
            // `b` is scaled along with a scaled `a`, and after a result
            // that is not finite (an overflow in the solve, or NaN/∞ in b).
            let mut b_scaling =
                if scaling.is_none() { Scaling::NONE } else { check_range(b, "b", Range::Linear)? };
            copy_scaled(b, x.rb_mut(), b_scaling);
            solve_in_place_with_conj(lu.rb(), lu.rb(), perm, Conj::No, x.rb_mut(), par, stack);
            if !all_finite(x.rb()) && b_scaling.is_none() {
                b_scaling = check_range(b, "b", Range::Linear)?;
                if !b_scaling.is_none() {
                    copy_scaled(b, x.rb_mut(), b_scaling);
                    solve_in_place_with_conj(lu.rb(), lu.rb(), perm, Conj::No, x.rb_mut(), par, stack);
                }
            }
            // a' x' = b' with a' = a·2^ea, b' = b·2^eb: x = x'·2^(ea − eb).
            scale_mat(x, scaling.exponent() - b_scaling.exponent());
            undo_upper(lu.rb_mut(), scaling);
            upper_finite(lu.rb(), scaling)?;
        }
        write_perm(item, 2, &fwd);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for LuSolvePrepared {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        let (_, r) = shapes.input(2);
        StackReq::all_of(&[
            perms_scratch(n),
            temp_mat_scratch::<T>(n, n), // `lu` with U scaled into range
            StackReq::new::<T>(n),       // the condition estimate's permutation vector
            StackReq::any_of(&[
                solve_in_place_scratch::<usize, T>(n, r, par),
                solve_transpose_in_place_scratch::<usize, T>(n, r, par),
                estimate_scratch::<T>(n).and(vector_solves_scratch::<T>(n, par)),
            ]),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (lu, b) = (item.mat::<T>(0), item.mat::<T>(2));
        let n = lu.nrows();
        let (mut fwd, mut inv, stack) = carve_perms(stack, n);
        read_perm(item, 1, "perm", &mut fwd, &mut inv)?;
        check_finite(lu, "lu")?;
        let b_range = check_range(b, "b", Range::Linear)?;
        let perm = PermRef::new_checked(&fwd, &inv, n);
        // A copy of `lu` with U scaled into the safe range when its pivots
        // lie outside it (factors of a matrix far from O(1)).
        // SAFETY: the copy is written in full (`copy_mat`) before it is
        // read, and only when it is used.
        let (mut copy, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
        let mut copy = copy.as_mat_mut();
        let mut piv = pivots(lu);
        let mut scaling = Scaling::NONE;
        if !piv.in_range() {
            // `lu` is finite (checked above), so `upper_range` is `Some`.
            scaling = upper_range(lu).unwrap_or(Scaling::NONE);
        }
        let factors = if scaling.is_none() {
            lu
        } else {
            copy_mat(lu, copy.rb_mut());
            for j in 0..n {
                for i in 0..=j {
                    copy[(i, j)] = scaling.apply(copy[(i, j)]);
                }
            }
            piv = pivots(copy.rb());
            copy.rb()
        };
        // ‖a‖₁ for the condition estimate from the factors, a = Pᵀ L U.
        let (mut tmp, stack) = stack.make_with(estimate_len(self.1.check, n), |_| T::zero());
        let anorm = |v: &mut [T], xi: &mut [T]| factored_norm(factors, &fwd, None, (v, xi), &mut tmp);
        singular_test(&piv, n, self.1.check, anorm, vector_solve(factors, perm, par), "lu", stack)?;
        // b is scaled when it lies outside the safe range.
        let b_scaling = b_range;
        let mut x = item.out_mat::<T>(0);
        copy_scaled(b, x.rb_mut(), b_scaling);
        match solve_mode(self.0) {
            (false, conj) => solve_in_place_with_conj(factors, factors, perm, conj, x.rb_mut(), par, stack),
            (true, conj) => {
                solve_transpose_in_place_with_conj(factors, factors, perm, conj, x.rb_mut(), par, stack)
            }
        }
        scale_mat(x, scaling.exponent() - b_scaling.exponent());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use lindiff_core::RealScalar;

    #[test]
    fn unblocked_lu_of_zero_column_has_no_nan() {
        let a = Mat::<f64>::from_fn(3, 3, |i, j| if j == 0 { 0.0 } else { (i + 2 * j) as f64 });
        let mut lu = a.clone();
        let mut perm = [0usize; 3];
        let _ = factor_unblocked(lu.as_mut(), &mut perm);
        assert!(all_finite(lu.as_ref()));
        assert_eq!(lu[(0, 0)], 0.0);
    }

    #[test]
    fn abs1_is_sum_of_parts() {
        let z = num_complex::Complex::new(-3.0f64, 4.0);
        assert_eq!(abs1(z), 7.0);
        assert_eq!(<f64 as RealScalar>::to_f64(abs1(-2.5f64)), 2.5);
    }
}
