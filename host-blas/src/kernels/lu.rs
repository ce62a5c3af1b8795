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
//! `NonFinite(arg)`, checked first.

use super::{
    carve, carve_int, check_finite, copy_in, fits, in_place, info_ok, int, ld, out_slice, req, span,
};
use crate::lapack::Lapack;
use faer::dyn_stack::{MemStack, StackReq};
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
            // The factor (in scratch for `lu`), IPIV, perm.
            LuKernel::Unpacked => StackReq::all_of(&[req::<T>(ld(m) * n), req::<i32>(k), req::<i64>(m)]),
            LuKernel::Factor | LuKernel::FactorSolve => StackReq::all_of(&[req::<i32>(k), req::<i64>(m)]),
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

/// Factors the m×n column-major `lu` (leading dimension max(1, m)) in place
/// with ?getrf, writing IPIV; returns `true` when some pivot is exactly zero.
fn getrf<T: Lapack>(lu: &mut [T], m: usize, n: usize, ipiv: &mut [i32]) -> bool {
    if m == 0 || n == 0 {
        return false;
    }
    fits(lu.len(), span(m, n, ld(m)));
    fits(ipiv.len(), m.min(n));
    // SAFETY: A is m×n with LDA = max(1, m), IPIV has min(m, n) elements
    // (both checked above).
    let info = unsafe { T::getrf(int(m), int(n), lu, int(ld(m)), ipiv) };
    info_ok("?getrf", info) > 0
}

/// Writes the row permutation of IPIV (swaps of rows i ↔ ipiv[i] − 1, in
/// order, applied to the identity of size `perm.len()`) into `perm`.
fn ipiv_to_perm(ipiv: &[i32], perm: &mut [i64]) {
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i as i64;
    }
    for (i, &p) in ipiv.iter().enumerate() {
        perm.swap(i, (p - 1) as usize);
    }
}

fn write_perm(item: &mut Item<'_>, out: usize, perm: &[i64]) {
    for (i, &p) in perm.iter().enumerate() {
        item.set::<i64>(out, i, p);
    }
}

fn unpacked<T: Lapack>(item: &mut Item<'_>, stack: &mut MemStack) -> Result<(), Failure> {
    let a = item.mat::<T>(0);
    check_finite(a, "a")?;
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let (mut lu, stack) = carve::<T>(stack, ld(m) * n);
    let (mut ipiv, stack) = carve_int(stack, k);
    let (mut perm, _) = stack.make_with::<i64>(m, |i| i as i64);
    copy_in(a, &mut lu, ld(m));
    getrf(&mut lu, m, n, &mut ipiv);
    ipiv_to_perm(&ipiv, &mut perm);
    write_perm(item, 0, &perm);
    let lu = MatRef::from_column_major_slice_with_stride(&lu[..span(m, n, ld(m))], m, n, ld(m));
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

/// Copies `a` into the contiguous output `lu` and factors it there; writes
/// IPIV and returns whether a pivot is exactly zero.
fn factor_into<T: Lapack>(a: MatRef<'_, T>, mut lu: MatMut<'_, T>, ipiv: &mut [i32]) -> bool {
    let (m, n) = (a.nrows(), a.ncols());
    lu.copy_from(a);
    // SAFETY: `copy_from` wrote every element of `lu`.
    let buf = unsafe { out_slice(&mut lu) };
    getrf(buf, m, n, ipiv)
}

fn factor_output<T: Lapack>(item: &mut Item<'_>, stack: &mut MemStack) -> Result<(), Failure> {
    let a = item.mat::<T>(0);
    check_finite(a, "a")?;
    let m = a.nrows();
    let (mut ipiv, stack) = carve_int(stack, m.min(a.ncols()));
    let (mut perm, _) = stack.make_with::<i64>(m, |i| i as i64);
    factor_into(a, item.out_mat::<T>(0), &mut ipiv);
    ipiv_to_perm(&ipiv, &mut perm);
    write_perm(item, 1, &perm);
    Ok(())
}

/// ?getrs on the column-major `x` (n×r, leading dimension max(1, n)).
fn getrs<T: Lapack>(trans: u8, lu: &[T], ldlu: usize, ipiv: &[i32], x: &mut [T], n: usize, r: usize) {
    if n == 0 || r == 0 {
        return;
    }
    fits(lu.len(), span(n, n, ldlu));
    fits(ipiv.len(), n);
    fits(x.len(), span(n, r, ld(n)));
    // SAFETY: LU is n×n with its leading dimension, IPIV n, B n×r with LDB
    // = n (all checked above).
    let info = unsafe { T::getrs(trans, int(n), int(r), lu, int(ldlu), ipiv, x, int(ld(n))) };
    info_ok("?getrs", info);
}

fn factor_solve<T: Lapack>(item: &mut Item<'_>, stack: &mut MemStack) -> Result<(), Failure> {
    let (a, b) = (item.mat::<T>(0), item.mat::<T>(1));
    check_finite(a, "a")?;
    check_finite(b, "b")?;
    let (n, r) = (a.nrows(), b.ncols());
    let (mut ipiv, stack) = carve_int(stack, n);
    let (mut perm, _) = stack.make_with::<i64>(n, |i| i as i64);
    {
        let (mut x, mut lu) = item.out_pair::<T, T>(0, 1);
        if factor_into(a, lu.as_mut(), &mut ipiv) {
            return Err(Failure::Singular("a"));
        }
        x.copy_from(b);
        // SAFETY: both were fully written (`copy_from`, ?getrf in place).
        let (lu, x) = unsafe { (out_slice(&mut lu), out_slice(&mut x)) };
        getrs(b'N', lu, ld(n), &ipiv, x, n, r);
    }
    ipiv_to_perm(&ipiv, &mut perm);
    write_perm(item, 2, &perm);
    Ok(())
}

fn solve_prepared<T: Lapack>(item: &mut Item<'_>, op: MatOp, stack: &mut MemStack) -> Result<(), Failure> {
    let (lu, b) = (item.mat::<T>(0), item.mat::<T>(2));
    let (n, r) = (lu.nrows(), b.ncols());
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
    check_finite(b, "b")?;
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
    let mut x = item.out_mat::<T>(0);
    x.copy_from(b);
    // SAFETY: `copy_from` wrote every element of `x`.
    let xs = unsafe { out_slice(&mut x) };
    match in_place(lu) {
        Some((slice, ldlu)) => getrs(trans, slice, ldlu, &ipiv, xs, n, r),
        None => {
            // Strided `lu`: LAPACK needs it column-major.
            let (mut copy, _) = carve::<T>(stack, n * n);
            copy_in(lu, &mut copy, ld(n));
            getrs(trans, &copy, ld(n), &ipiv, xs, n, r);
        }
    }
    Ok(())
}
