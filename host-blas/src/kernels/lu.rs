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

use super::{
    carve, carve_int, carve_uninit, check_finite, copy_finite, copy_in, fits, in_place, info_ok,
    init_out_slice, int, ld, mat_ptr, req, span, uninit_ptr, uninit_view, written,
};
use crate::lapack::Lapack;
use core::mem::MaybeUninit;
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::MatOp;
use lindiff_core::LinalgOp;
use lindiff_cpu::kernel_api::{Failure, Item, Kernel, Shapes};

/// One LU op on LAPACK.
pub(super) enum LuKernel {
    /// `lu`: `perm`, `l`, `u`.
    Unpacked,
    /// `lu_factor`: `lu`, `perm`.
    Factor,
    /// `lu_factor_solve`: `x`, `lu`, `perm`.
    FactorSolve,
    /// `lu_solve_prepared`: `x` with `op(a) x = b`.
    SolvePrepared(MatOp),
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find(op: &LinalgOp) -> Option<LuKernel> {
    match op {
        LinalgOp::Lu(_) => Some(LuKernel::Unpacked),
        LinalgOp::LuFactor(_) => Some(LuKernel::Factor),
        LinalgOp::LuFactorSolve(_) => Some(LuKernel::FactorSolve),
        LinalgOp::LuSolvePrepared(k) => Some(LuKernel::SolvePrepared(k.0)),
        _ => None,
    }
}

impl<T: Lapack> Kernel<T> for LuKernel {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let k = m.min(n);
        match self {
            // The factor (in scratch for `lu`) and IPIV (`perm` is formed
            // in its output).
            LuKernel::Unpacked => StackReq::all_of(&[req::<T>(ld(m) * n), req::<i32>(k)]),
            LuKernel::Factor | LuKernel::FactorSolve => req::<i32>(k),
            // IPIV, the permutation, its inverse, the swap bookkeeping, and
            // a column-major copy of `lu` (used when it is strided).
            LuKernel::SolvePrepared(_) => {
                StackReq::all_of(&[req::<i32>(n), req::<usize>(n).array(3), req::<T>(n * n)])
            }
        }
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        match self {
            LuKernel::Unpacked => unpacked::<T>(item, stack),
            LuKernel::Factor => factor_output::<T>(item, stack),
            LuKernel::FactorSolve => factor_solve::<T>(item, stack),
            LuKernel::SolvePrepared(op) => solve_prepared::<T>(item, *op, stack),
        }
    }
}

/// Copies `a` into `lu` (same shape, LAPACK's layout) and factors it there
/// ([`getrf`]); `NonFinite("a")` (before ?getrf) for NaN/∞ in `a`.
fn factor_into<T: Lapack>(
    a: MatRef<'_, T>,
    mut lu: MatMut<'_, T>,
    ipiv: &mut [MaybeUninit<i32>],
) -> Result<bool, Failure> {
    copy_finite(a, lu.rb_mut(), "a")?;
    Ok(getrf(lu, ipiv))
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
    factor_into(a, lu.rb_mut(), ipiv)?;
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
            u[(i, j)] = if i <= j { lu[(i, j)] } else { T::zero() };
        }
    }
    Ok(())
}

fn factor_output<T: Lapack>(item: &mut Item<'_>, stack: &mut MemStack) -> Result<(), Failure> {
    let a = item.mat::<T>(0);
    let k = a.nrows().min(a.ncols());
    let (ipiv, _) = carve_uninit::<i32>(stack, k);
    factor_into(a, item.out_mat::<T>(0), ipiv)?;
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

fn factor_solve<T: Lapack>(item: &mut Item<'_>, stack: &mut MemStack) -> Result<(), Failure> {
    let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
    let n = a.nrows();
    let (ipiv, _) = carve_uninit::<i32>(stack, n);
    {
        let (mut x, mut lu) = item.out_pair::<T, T>(0, 1);
        // Both inputs are checked (a, then b) before ?getrf can report a
        // singular `a`.
        copy_finite(a, lu.rb_mut(), "a")?;
        copy_finite(b, x.rb_mut(), "b")?;
        if getrf(lu.rb_mut(), ipiv) {
            return Err(Failure::Singular("a"));
        }
        // SAFETY: ?getrf wrote the n pivots and factored `lu` in place.
        let (lu, piv) = unsafe { (init_out_slice(&mut lu), written(ipiv, n)) };
        getrs(b'N', lu, ld(n), piv, x);
    }
    write_perm(item, 2, ipiv, n);
    Ok(())
}

fn solve_prepared<T: Lapack>(item: &mut Item<'_>, op: MatOp, stack: &mut MemStack) -> Result<(), Failure> {
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
    copy_finite(b, x.rb_mut(), "b")?;
    if (0..n).any(|k| lu[(k, k)] == T::zero()) {
        return Err(Failure::Singular("lu"));
    }
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
    match in_place(lu) {
        Some((slice, ldlu)) => getrs(trans, slice, ldlu, &ipiv, x),
        None => {
            // Strided `lu`: LAPACK needs it column-major.
            let (mut copy, _) = carve::<T>(stack, n * n);
            copy_in(lu, &mut copy, ld(n));
            getrs(trans, &copy, ld(n), &ipiv, x);
        }
    }
    Ok(())
}
