//! Partial-pivot LU kernels (`lu`, `lu_factor`, `lu_factor_solve`,
//! `lu_solve_prepared`) over ?getrf and ?getrs.
//!
//! Convention: `P a = L U` with `(P a)[i, :] = a[perm[i], :]`; LAPACK's IPIV
//! (a sequence of row swaps, 1-based) is turned into `perm` by applying the
//! swaps to the identity, and `lu_solve_prepared` turns `perm` back into a
//! swap sequence. Singular matrices factor without error (?getrf only
//! reports the first exactly zero pivot in `info`, and does not divide by
//! it); the solves report an exactly zero pivot as `Singular("a")` /
//! `Singular("lu")`, and a `perm` input that is not a permutation of 0..n
//! as `Singular("perm")`, as on host-cpu. NaN/∞ in an input is
//! `NonFinite(arg)`, checked before LAPACK runs: in the pass that copies the
//! input where it is copied anyway (`a` into the factor, `b` into `x`).
//!
//! As on host-cpu, the solves test the factorization with the op's
//! `SolveOptions` (by default the pivot ratio; the condition estimate
//! solves with ?getrs), and the kernels are scale-robust: an `a` (or `b`)
//! outside the elimination's safe range, found by the same pass, is
//! factored (solved) as `a · 2^e`, U and x scaled back; the prepared solve
//! scales a copy of `lu` whose pivots lie outside the range.

use super::{
    carve, carve_int, carve_uninit, check_finite, copy_in, fits, in_place, info_ok, init_out_slice, int, ld,
    mat_ptr, req, span, uninit_ptr, uninit_view, view_mut, written,
};
use crate::lapack::{Lapack, Re};
use core::mem::MaybeUninit;
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::{MatOp, SolveOptions};
use lindiff_core::{RealScalar, Scalar};
use lindiff_cpu::kernel_api::{
    copy_range, estimate_len, estimate_scratch, factored_norm, one_norm, pivots, scale_mat, singular_test,
    upper_finite, Failure, Item, Kernel, Range, Scaling, Shapes,
};

/// One LU op on LAPACK.
pub(super) enum LuKernel {
    /// `lu`: `perm`, `l`, `u`.
    Unpacked,
    /// `lu_factor`: `lu`, `perm`.
    Factor,
    /// `lu_factor_solve`: `x`, `lu`, `perm`.
    FactorSolve(SolveOptions),
    /// `lu_solve_prepared`: `x` with `op(a) x = b`.
    SolvePrepared(MatOp, SolveOptions),
}

impl<T: Lapack> Kernel<T> for LuKernel {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let k = m.min(n);
        match self {
            // The factor (in scratch for `lu`) and IPIV (`perm` is formed
            // in its output).
            LuKernel::Unpacked => StackReq::all_of(&[req::<T>(ld(m) * n), req::<i32>(k)]),
            LuKernel::Factor => req::<i32>(k),
            // IPIV and the condition estimate's vectors.
            LuKernel::FactorSolve(_) => req::<i32>(k).and(estimate_scratch::<T>(n)),
            // IPIV, the permutation, its inverse, the swap bookkeeping, a
            // column-major copy of `lu` (used when it is strided or its U
            // is scaled), and the condition estimate's vectors.
            LuKernel::SolvePrepared(..) => StackReq::all_of(&[
                req::<i32>(n),
                req::<usize>(n).array(3),
                req::<T>(n * n),
                req::<T>(n),
                estimate_scratch::<T>(n),
            ]),
        }
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        match self {
            LuKernel::Unpacked => unpacked::<T>(item, stack),
            LuKernel::Factor => factor_output::<T>(item, stack),
            LuKernel::FactorSolve(options) => factor_solve::<T>(item, *options, stack),
            LuKernel::SolvePrepared(op, options) => solve_prepared::<T>(item, *op, *options, stack),
        }
    }
}

/// Copies `a` into `lu` (same shape, LAPACK's layout), scaled into the
/// elimination's safe range when it lies outside, and factors it there
/// ([`getrf`]); `NonFinite("a")` (before ?getrf) for NaN/∞ in `a`. Returns
/// the scaling (U is the scaled matrix's).
fn factor_into<T: Lapack>(
    a: MatRef<'_, T>,
    mut lu: MatMut<'_, T>,
    ipiv: &mut [MaybeUninit<i32>],
) -> Result<Scaling, Failure> {
    let scaling = copy_range(a, lu.rb_mut(), "a", Range::Linear)?;
    scaling.apply_mat(lu.rb_mut());
    getrf(lu, ipiv);
    Ok(scaling)
}

/// Multiplies the upper triangle (U) of the packed `lu` by 2^e.
fn scale_upper<T: Lapack>(mut lu: MatMut<'_, T>, e: i32) {
    if e == 0 {
        return;
    }
    let factor = Scaling::from_exponent(e);
    for j in 0..lu.ncols() {
        for i in 0..lu.nrows().min(j + 1) {
            lu[(i, j)] = factor.apply(lu[(i, j)]);
        }
    }
}

/// Scales the upper triangle (U) of the packed `lu` back by `scaling`.
fn undo_upper<T: Lapack>(lu: MatMut<'_, T>, scaling: Scaling) {
    scale_upper(lu, -scaling.exponent());
}

/// Factors the m×n `lu` (initialised, LAPACK's layout) in place with
/// ?getrf, writing IPIV (min(m, n) entries); `true` when some pivot is
/// exactly zero.
fn getrf<T: Lapack>(mut lu: MatMut<'_, T>, ipiv: &mut [MaybeUninit<i32>]) -> bool {
    let (m, n) = (lu.nrows(), lu.ncols());
    if m == 0 || n == 0 {
        return false;
    }
    fits(ipiv.len(), m.min(n));
    let plu = mat_ptr(&mut lu, ld(m));
    // SAFETY: A is m×n with LDA = max(1, m) (layout checked by `mat_ptr`,
    // initialised by the caller), IPIV has min(m, n) elements (checked
    // above) and is only written.
    let info = unsafe { T::getrf(int(m), int(n), plu, int(ld(m)), uninit_ptr(ipiv)) };
    info_ok("?getrf", info) > 0
}

/// The scaling that brings U (the upper triangle of the finite packed
/// `lu`) into the elimination's safe range.
fn upper_scaling<T: Lapack>(lu: MatRef<'_, T>) -> Scaling {
    let mut max = <Re<T> as Scalar>::zero();
    for j in 0..lu.ncols() {
        for i in 0..lu.nrows().min(j + 1) {
            let x = lu[(i, j)];
            let part = Scalar::abs(Scalar::re(x)).max_real(Scalar::abs(Scalar::im(x)));
            max = max.max_real(part);
        }
    }
    Scaling::of_max(max, Range::Linear)
}

/// Writes the row permutation of IPIV (swaps of rows i ↔ ipiv[i] − 1, in
/// order, applied to the identity of size `perm.len()`) into `perm`.
fn ipiv_to_perm(ipiv: &[i32], perm: &mut [MaybeUninit<i64>]) {
    for (i, p) in perm.iter_mut().enumerate() {
        p.write(i as i64);
    }
    for (i, &p) in ipiv.iter().enumerate() {
        perm.swap(i, (p - 1) as usize);
    }
}

/// Writes IPIV's permutation (see [`ipiv_to_perm`]) straight into output
/// `out` (a vector of m entries). `ipiv_buf` holds what ?getrf wrote, its
/// first k = min(m, n) entries.
fn write_perm(item: &mut Item<'_>, out: usize, ipiv_buf: &[MaybeUninit<i32>], k: usize) {
    // SAFETY: ?getrf wrote the first k pivots (it always completes;
    // `info > 0` only reports a zero pivot).
    ipiv_to_perm(unsafe { written(ipiv_buf, k) }, item.out_slice::<i64>(out));
}

fn unpacked<T: Lapack>(item: &mut Item<'_>, stack: &mut MemStack) -> Result<(), Failure> {
    let a = item.mat::<T>(0);
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let (lu, stack) = carve_uninit::<T>(stack, ld(m) * n);
    let (ipiv, _) = carve_uninit::<i32>(stack, k);
    let mut lu = uninit_view(lu, m, n, ld(m));
    let scaling = factor_into(a, lu.rb_mut(), ipiv)?;
    write_perm(item, 0, ipiv, k);
    let lu = lu.rb();
    let mut l = item.out_mat::<T>(1);
    for j in 0..k {
        for i in 0..m {
            l[(i, j)] = match i.cmp(&j) {
                core::cmp::Ordering::Greater => lu[(i, j)],
                core::cmp::Ordering::Equal => T::one(),
                core::cmp::Ordering::Less => T::zero(),
            };
        }
    }
    let mut u = item.out_mat::<T>(2);
    for j in 0..n {
        for i in 0..k {
            u[(i, j)] = if i <= j { scaling.undo(lu[(i, j)]) } else { T::zero() };
        }
    }
    upper_finite(u.rb(), scaling)
}

fn factor_output<T: Lapack>(item: &mut Item<'_>, stack: &mut MemStack) -> Result<(), Failure> {
    let a = item.mat::<T>(0);
    let k = a.nrows().min(a.ncols());
    let (ipiv, _) = carve_uninit::<i32>(stack, k);
    let mut lu = item.out_mat::<T>(0);
    let scaling = factor_into(a, lu.rb_mut(), ipiv)?;
    undo_upper(lu.rb_mut(), scaling);
    upper_finite(lu.rb(), scaling)?;
    write_perm(item, 1, ipiv, k);
    Ok(())
}

/// ?getrs on `x` (n×r in LAPACK's layout, LDB = max(1, n)) with the n×n
/// factor `lu` (leading dimension `ldlu`) and its `n` pivots.
fn getrs<T: Lapack>(trans: u8, lu: &[T], ldlu: usize, ipiv: &[i32], mut x: MatMut<'_, T>) {
    let (n, r) = (x.nrows(), x.ncols());
    if n == 0 || r == 0 {
        return;
    }
    fits(lu.len(), span(n, n, ldlu));
    fits(ipiv.len(), n);
    let px = mat_ptr(&mut x, ld(n));
    // SAFETY: LU is n×n with its leading dimension, IPIV n (both checked
    // above), B n×r with LDB = n (layout checked by `mat_ptr`, initialised
    // by the caller).
    let info =
        unsafe { T::getrs(trans, int(n), int(r), lu.as_ptr(), int(ldlu), ipiv.as_ptr(), px, int(ld(n))) };
    info_ok("?getrs", info);
}

fn factor_solve<T: Lapack>(
    item: &mut Item<'_>,
    options: SolveOptions,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
    let n = a.nrows();
    let (ipiv, stack) = carve_uninit::<i32>(stack, n);
    {
        let (mut x, mut lu) = item.out_pair::<T, T>(0, 1);
        // Both inputs are checked (a, then b) before ?getrf can report a
        // singular `a`; each is scaled into the safe range when outside.
        let a_scaling = copy_range(a, lu.rb_mut(), "a", Range::Linear)?;
        let b_scaling = copy_range(b, x.rb_mut(), "b", Range::Linear)?;
        a_scaling.apply_mat(lu.rb_mut());
        b_scaling.apply_mat(x.rb_mut());
        getrf(lu.rb_mut(), ipiv);
        {
            // SAFETY: ?getrf wrote the n pivots and factored `lu` in place.
            let (lus, piv) = unsafe { (&*init_out_slice(&mut lu), written(ipiv, n)) };
            let factors = MatRef::from_column_major_slice_with_stride(lus, n, n, ld(n));
            let anorm = |_: &mut [T], _: &mut [T]| one_norm(a, a_scaling);
            let solve = |adjoint: bool, v: &mut [T], _: &mut MemStack| {
                let len = v.len();
                getrs(
                    if adjoint { b'C' } else { b'N' },
                    lus,
                    ld(n),
                    piv,
                    MatMut::from_column_major_slice_mut(v, len, 1),
                );
            };
            singular_test(&pivots(factors), n, options.check, anorm, solve, "a", stack)?;
            getrs(b'N', lus, ld(n), piv, x.rb_mut());
        }
        // a' x' = b' with a' = a·2^ea, b' = b·2^eb: x = x'·2^(ea − eb).
        scale_mat(x, a_scaling.exponent() - b_scaling.exponent());
        undo_upper(lu.rb_mut(), a_scaling);
        upper_finite(lu.rb(), a_scaling)?;
    }
    write_perm(item, 2, ipiv, n);
    Ok(())
}

fn solve_prepared<T: Lapack>(
    item: &mut Item<'_>,
    op: MatOp,
    options: SolveOptions,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    let (lu, b) = (item.mat::<T>(0), item.mat::<T>(2));
    let n = lu.nrows();
    let (mut ipiv, stack) = carve_int(stack, n);
    let (mut fwd, stack) = stack.make_with::<usize>(n, |i| i);
    let (mut pos, stack) = stack.make_with::<usize>(n, |_| usize::MAX);
    let (mut where_, stack) = stack.make_with::<usize>(n, |i| i);
    // Validate `perm` (a permutation of 0..n), as host-cpu does.
    for (i, f) in fwd.iter_mut().enumerate() {
        let p = item.get::<i64>(1, i);
        let p = usize::try_from(p).ok().filter(|&p| p < n).ok_or(Failure::Singular("perm"))?;
        if pos[p] != usize::MAX {
            return Err(Failure::Singular("perm"));
        }
        *f = p;
        pos[p] = i;
    }
    check_finite(lu, "lu")?;
    let mut x = item.out_mat::<T>(0);
    let b_scaling = copy_range(b, x.rb_mut(), "b", Range::Linear)?;
    b_scaling.apply_mat(x.rb_mut());
    // U scaled into the safe range when its pivots lie outside it (the
    // factors of a matrix far from O(1)).
    let scaling = if pivots(lu).in_range() { Scaling::NONE } else { upper_scaling(lu) };
    // The swap sequence that builds `perm`: `cur[p]` is the row now at
    // position p and `whr[row]` its position; position i takes row fwd[i]
    // from wherever it now is (at or after i).
    let (cur, whr) = (&mut *pos, &mut *where_);
    for i in 0..n {
        cur[i] = i;
        whr[i] = i;
    }
    for i in 0..n {
        let row = fwd[i];
        let j = whr[row];
        let displaced = cur[i];
        cur[i] = row;
        cur[j] = displaced;
        whr[row] = i;
        whr[displaced] = j;
        ipiv[i] = int(j + 1);
    }
    let trans = match op {
        MatOp::Identity => b'N',
        MatOp::Transpose => b'T',
        MatOp::Adjoint => b'C',
    };
    let (mut copy, stack) = carve::<T>(stack, n * n);
    let (factors, ldlu): (&[T], usize) = match in_place(lu) {
        Some(found) if scaling.is_none() => found,
        _ => {
            // Strided or scaled `lu`: LAPACK needs it column-major.
            copy_in(lu, &mut copy, ld(n));
            scale_upper(view_mut(&mut copy, n, n, ld(n)), scaling.exponent());
            (&copy, ld(n))
        }
    };
    let factored = MatRef::from_column_major_slice_with_stride(factors, n, n, ldlu);
    let (mut tmp, stack) = carve::<T>(stack, estimate_len(options.check, n));
    let anorm = |v: &mut [T], xi: &mut [T]| factored_norm(factored, &fwd, None, (v, xi), &mut tmp);
    let solve = |adjoint: bool, v: &mut [T], _: &mut MemStack| {
        let len = v.len();
        getrs(
            if adjoint { b'C' } else { b'N' },
            factors,
            ldlu,
            &ipiv,
            MatMut::from_column_major_slice_mut(v, len, 1),
        );
    };
    singular_test(&pivots(factored), n, options.check, anorm, solve, "lu", stack)?;
    getrs(trans, factors, ldlu, &ipiv, x.rb_mut());
    scale_mat(x, scaling.exponent() - b_scaling.exponent());
    Ok(())
}
