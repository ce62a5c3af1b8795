//! The complex Schur decomposition A = Q T Qᴴ (T upper triangular, Q
//! unitary) that `logm` and `sqrtm` work on: a Householder reduction to
//! Hessenberg form (faer's with std; without std, an unblocked one here,
//! since faer's products would allocate), then the single-shift QR
//! algorithm with Givens
//! rotations (Golub and Van Loan, *Matrix Computations*, §7.4–7.5):
//! Wilkinson shifts, an exceptional shift every tenth sweep on one
//! eigenvalue, deflation where |t_{l,l−1}| ≤ ε(|t_{l−1,l−1}| + |t_{ll}|)
//! (in |re| + |im|), at most 30·max(n, 10) sweeps in all before
//! `NonConvergence`. A is scaled by a power of two first, so that the
//! squares the reflections and shifts form stay in range. faer 0.24 does
//! not export its own Schur form.
//!
//! The sweeps are unblocked, O(n³) with a constant of about 10 (a blocked
//! multishift QR with aggressive early deflation, as in LAPACK, would be
//! several times faster at large n); they run on columns as slices, compiled
//! for AVX2 where the CPU has it.

use super::scaling::{max_abs_mat, Range, Scaling};
use crate::batch::Failure;
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
#[cfg(feature = "std")]
use faer::linalg::evd::hessenberg::{hessenberg_in_place, hessenberg_in_place_scratch};
#[cfg(feature = "std")]
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_right_in_place_scratch,
    apply_block_householder_sequence_on_the_right_in_place_with_conj,
};
#[cfg(feature = "std")]
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::reborrow::{Reborrow, ReborrowMut};
#[cfg(feature = "std")]
use faer::Conj;
use faer::{MatMut, Par};
use lindiff_core::{RealScalar, Scalar};

type Re<C> = <C as Scalar>::Real;

/// |re| + |im|: the size LAPACK's deflation test uses.
#[inline(always)]
fn abs1<C: Field>(x: C) -> Re<C> {
    Scalar::abs(Scalar::re(x)) + Scalar::abs(Scalar::im(x))
}

/// Overwrites `t` (n×n, holding A) with T and `q` (n×n, any contents)
/// with Q, so that A = Q T Qᴴ. Both are column-major with column stride n
/// (the kernels' pool matrices). `v` is scratch of length 2n (used
/// without std), `stack` holds [`schur_scratch`]. `C` must be
/// a complex type: a real one has no complex shifts, and would not
/// converge on complex eigenvalues.
///
/// # Errors
/// `NonConvergence` when the QR sweeps run out.
pub(crate) fn schur<C: Field>(
    mut t: MatMut<'_, C>,
    mut q: MatMut<'_, C>,
    v: &mut [C],
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    let n = t.nrows();
    // The reflections and the shift square entries: run on A·2^e with its
    // largest entry where squares neither underflow nor overflow, and
    // scale T back (exact; Q is the same).
    let largest = max_abs_mat(t.rb()).ok_or(Failure::NonFinite("a"))?;
    let scaling = Scaling::of_max(largest, Range::Squares);
    scaling.apply_mat(t.rb_mut());
    q.fill(C::zero());
    q.rb_mut().diagonal_mut().fill(C::one());
    #[cfg(feature = "std")]
    {
        let _ = v;
        // The sweeps' row rotations walk T across its columns: with a
        // column stride of a power of two bytes (n = 256 c64: 4 KiB) every
        // step lands in one cache set. T runs in a copy whose column stride
        // is an odd number of cache lines.
        let ld = padded_stride::<C>(n);
        let (mut padded, stack) = stack.make_with(ld * n, |_| C::zero());
        let mut h = MatMut::from_column_major_slice_with_stride_mut(&mut padded, n, n, ld);
        h.copy_from(t.rb());
        hessenberg_by_faer(h, q.rb_mut(), par, stack);
        sweeps(Columns { data: &mut padded, ld }, columns(q.rb_mut()), n)?;
        t.copy_from_triangular_upper(faer::MatRef::from_column_major_slice_with_stride(&padded, n, n, ld));
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = (par, stack);
        let (v, w) = v.split_at_mut(n);
        let (mut tc, mut qc) = (columns(t.rb_mut()), columns(q.rb_mut()));
        hessenberg(&mut tc, &mut qc, n, v, w);
        sweeps(tc, qc, n)?;
    }
    for j in 0..n {
        t.rb_mut().col_mut(j).subrows_mut(j + 1, n - j - 1).fill(C::zero());
    }
    scaling.undo_mat(t.rb_mut());
    Ok(())
}

/// A column stride for n rows of `C` that is an odd number of 64-byte
/// cache lines (at least n).
#[cfg(feature = "std")]
fn padded_stride<C>(n: usize) -> usize {
    let size = core::mem::size_of::<C>().max(1);
    let per_line = (64 / size).max(1);
    let lines = n.div_ceil(per_line);
    (lines | 1) * per_line
}

/// Scratch [`schur`] takes from its `stack` at size n: T's padded copy and
/// faer's Hessenberg reduction's, with its block of reflector factors
/// (none without std).
#[cfg_attr(not(feature = "std"), allow(clippy::extra_unused_type_parameters))]
pub(crate) fn schur_scratch<C: Field>(n: usize, par: Par) -> StackReq {
    #[cfg(feature = "std")]
    {
        let padded = StackReq::new::<C>(padded_stride::<C>(n) * n);
        if n < 3 {
            return padded;
        }
        let block = recommended_block_size::<C>(n - 1, n - 1);
        StackReq::all_of(&[
            padded,
            StackReq::new::<C>(block * (n - 1)),
            StackReq::any_of(&[
                hessenberg_in_place_scratch::<C>(n, block, par, Default::default()),
                apply_block_householder_sequence_on_the_right_in_place_scratch::<C>(n - 1, block, n - 1),
            ]),
        ])
    }
    #[cfg(not(feature = "std"))]
    {
        let _ = (n, par);
        StackReq::EMPTY
    }
}

/// `t` ← its upper Hessenberg form H and `q` (holding I) ← Q with
/// A = Q H Qᴴ, by faer's (blocked) Householder reduction: allocation-free
/// with std, where faer's products are.
#[cfg(feature = "std")]
fn hessenberg_by_faer<C: Field>(mut t: MatMut<'_, C>, q: MatMut<'_, C>, par: Par, stack: &mut MemStack) {
    let n = t.nrows();
    if n < 3 {
        return;
    }
    let block = recommended_block_size::<C>(n - 1, n - 1);
    let (mut factors, stack) = stack.make_with(block * (n - 1), |_| C::zero());
    let mut factors = MatMut::from_column_major_slice_mut(&mut factors, block, n - 1);
    hessenberg_in_place(t.rb_mut(), factors.rb_mut(), par, stack, Default::default());
    apply_block_householder_sequence_on_the_right_in_place_with_conj(
        t.rb().submatrix(1, 0, n - 1, n - 1),
        factors.rb(),
        Conj::No,
        q.submatrix_mut(1, 1, n - 1, n - 1),
        par,
        stack,
    );
    for j in 0..n {
        t.rb_mut().col_mut(j).subrows_mut((j + 2).min(n), n - (j + 2).min(n)).fill(C::zero());
    }
}

/// The n×n `m`, column-major with column stride n (the kernels' pool
/// matrices), as one slice. A matrix of another layout is a caller's bug,
/// and panics before any write.
fn columns<'a, C>(m: MatMut<'a, C>) -> Columns<'a, C> {
    let n = m.nrows();
    assert!(
        m.ncols() == n && (n == 0 || (m.row_stride() == 1 && m.col_stride() == n as isize)),
        "schur: t and q must be column-major with column stride n"
    );
    if n == 0 {
        return Columns { data: &mut [], ld: 0 };
    }
    // SAFETY: `m` is n×n with row stride 1 and column stride n (checked
    // above), so its n² entries are contiguous from its first and it owns
    // each of them (no gaps between columns that another view could own);
    // `m` is consumed, so the slice is the only access for 'a.
    let data = unsafe { core::slice::from_raw_parts_mut(m.as_ptr_mut(), n * n) };
    Columns { data, ld: n }
}

/// A column-major matrix as a slice and its column stride.
struct Columns<'a, C> {
    data: &'a mut [C],
    ld: usize,
}

/// [`qr_sweeps`] on `t` and `q` (n×n).
fn sweeps<C: Field>(t: Columns<'_, C>, q: Columns<'_, C>, n: usize) -> Result<(), Failure> {
    sweeps_strided(t.data, t.ld, q.data, q.ld, n)
}

with_avx2! {
    /// [`qr_sweeps`] (AVX2 code when the CPU has it).
    fn sweeps_strided<T: Field>(t: &mut [T], ldt: usize, q: &mut [T], ldq: usize, n: usize) -> Result<(), Failure> => qr_sweeps
}

/// Householder reduction of `t` to upper Hessenberg form, accumulated into
/// `q`; `v` and `w` are scratch of length n. Without std, where faer's
/// blocked reduction would allocate in its products.
#[cfg(not(feature = "std"))]
fn hessenberg<C: Field>(t: &mut Columns<'_, C>, q: &mut Columns<'_, C>, n: usize, v: &mut [C], w: &mut [C]) {
    let ld = t.ld;
    for k in 0..n.saturating_sub(2) {
        let len = n - k - 1;
        let x = &t.data[k * ld + k + 1..k * ld + n];
        let norm2 = x.iter().fold(Re::<C>::zero(), |s, z| s + z.abs2());
        if norm2 == Re::<C>::zero() {
            continue;
        }
        let alpha = norm2.sqrt();
        let x0 = x[0];
        let phase = if x0.abs() == Re::<C>::zero() { C::one() } else { x0.scale(Re::<C>::one() / x0.abs()) };
        // v = x + phase·α·e₁, H = I − 2vvᴴ/(vᴴv): H x = −phase·α·e₁.
        let v = &mut v[..len];
        v.copy_from_slice(x);
        v[0] = x0 + phase.scale(alpha);
        let vv = v.iter().fold(Re::<C>::zero(), |s, z| s + z.abs2());
        let beta = Re::<C>::from_f64(2.0) / vv;
        // Left: rows k+1.. of columns k.. (column k becomes −phase·α·e₁).
        for col in t.data[(k + 1) * ld..].chunks_mut(ld) {
            let col = &mut col[k + 1..n];
            let s = col.iter().zip(v.iter()).fold(C::zero(), |s, (&c, &vi)| s + vi.conj() * c).scale(beta);
            for (c, &vi) in col.iter_mut().zip(v.iter()) {
                *c -= vi * s;
            }
        }
        let col = &mut t.data[k * ld..k * ld + n];
        col[k + 1] = -phase.scale(alpha);
        col[k + 2..].fill(C::zero());
        // Right: columns k+1.. of every row, and of Q.
        reflect_columns(t, n, k + 1, v, beta, w);
        reflect_columns(q, n, k + 1, v, beta, w);
    }
}

/// m ← m·H on columns `first..` of the n×n `m`, H = I − β v vᴴ:
/// w = β·m[:, first..]·v, then m[:, first + l] −= w·v̄_l, column by column.
#[cfg(not(feature = "std"))]
fn reflect_columns<C: Field>(
    m: &mut Columns<'_, C>,
    n: usize,
    first: usize,
    v: &[C],
    beta: Re<C>,
    w: &mut [C],
) {
    let w = &mut w[..n];
    w.fill(C::zero());
    let cols = &mut m.data[first * m.ld..];
    for (col, &vl) in cols.chunks(m.ld).zip(v) {
        for (wi, &c) in w.iter_mut().zip(&col[..n]) {
            *wi += c * vl;
        }
    }
    for wi in w.iter_mut() {
        *wi = wi.scale(beta);
    }
    for (col, &vl) in cols.chunks_mut(m.ld).zip(v) {
        let vc = vl.conj();
        for (c, &wi) in col[..n].iter_mut().zip(w.iter()) {
            *c -= wi * vc;
        }
    }
}

/// Rows `..rows` of columns k, k+1 of `m` (column stride `ld`) ← m·Gᴴ,
/// G = [[c, s], [−s̄, c]].
#[inline(always)]
fn rotate_columns<C: Field>(m: &mut [C], ld: usize, k: usize, rows: usize, c: Re<C>, s: C) {
    let sc = s.conj();
    let (left, right) = m.split_at_mut((k + 1) * ld);
    let left = &mut left[k * ld..k * ld + rows];
    for (a, b) in left.iter_mut().zip(&mut right[..rows]) {
        let (x, y) = (*a, *b);
        *a = x.scale(c) + y * sc;
        *b = y.scale(c) - x * s;
    }
}

/// The rotation G = [[c, s], [−s̄, c]] (c real) with G·[x; y] = [ρ; 0].
#[inline(always)]
fn givens<C: Field>(x: C, y: C) -> (Re<C>, C) {
    let (ax, ay) = (x.abs(), y.abs());
    if ay == Re::<C>::zero() {
        return (Re::<C>::one(), C::zero());
    }
    if ax == Re::<C>::zero() {
        return (Re::<C>::zero(), y.conj().scale(Re::<C>::one() / ay));
    }
    let r = ax.hypot(ay);
    let phase = x.scale(Re::<C>::one() / ax);
    (ax / r, (phase * y.conj()).scale(Re::<C>::one() / r))
}

/// The eigenvalue of [[a, b], [c, d]] nearer to d (the Wilkinson shift).
#[inline(always)]
fn wilkinson<C: Field>(a: C, b: C, c: C, d: C) -> C {
    let half = Re::<C>::from_f64(0.5);
    let p = (a - d).scale(half);
    let bc = b * c;
    let disc = (p * p + bc).sqrt();
    // d + p ∓ disc, the root nearer d, as d − bc/(p ± disc) without cancellation.
    let (plus, minus) = (p + disc, p - disc);
    let den = if plus.abs() >= minus.abs() { plus } else { minus };
    if den.abs() == Re::<C>::zero() {
        d
    } else {
        d - bc * (C::one() / den)
    }
}

/// Shifted QR sweeps on the Hessenberg `t` (column stride `ldt`) until it
/// is triangular, with the rotations accumulated into `q` (stride `ldq`).
#[inline(always)]
fn qr_sweeps<C: Field>(t: &mut [C], ldt: usize, q: &mut [C], ldq: usize, n: usize) -> Result<(), Failure> {
    let at = |i: usize, j: usize| i + j * ldt;
    let eps = Re::<C>::EPSILON;
    let mut budget = 30 * n.max(10);
    let mut hi = n; // the active block is lo..hi
    let mut stalled = 0usize;
    while hi > 1 {
        let mut lo = hi - 1;
        while lo > 0 {
            let sub = abs1(t[at(lo, lo - 1)]);
            let diag = abs1(t[at(lo, lo)]) + abs1(t[at(lo - 1, lo - 1)]);
            if sub <= eps * diag || sub < Re::<C>::MIN_POSITIVE {
                t[at(lo, lo - 1)] = C::zero();
                break;
            }
            lo -= 1;
        }
        if lo == hi - 1 {
            hi -= 1;
            stalled = 0;
            continue;
        }
        if budget == 0 {
            return Err(Failure::NonConvergence);
        }
        budget -= 1;
        stalled += 1;
        let (i, j) = (hi - 2, hi - 1);
        let shift = if stalled.is_multiple_of(10) {
            // An exceptional shift breaks a cycle (LAPACK's zlahqr; |re| + |im|,
            // since the subdiagonal is complex here, unlike zlahqr's).
            t[at(j, j)] + C::from_real(abs1(t[at(j, i)]).scale(Re::<C>::from_f64(0.75)))
        } else {
            wilkinson(t[at(i, i)], t[at(i, j)], t[at(j, i)], t[at(j, j)])
        };
        let (mut x, mut y) = (t[at(lo, lo)] - shift, t[at(lo + 1, lo)]);
        for k in lo..hi - 1 {
            let (c, s) = givens(x, y);
            let sc = s.conj();
            let first = if k > lo { k - 1 } else { k };
            for col in t[first * ldt..].chunks_mut(ldt) {
                let (a, b) = (col[k], col[k + 1]);
                col[k] = a.scale(c) + s * b;
                col[k + 1] = b.scale(c) - sc * a;
            }
            if k > lo {
                t[at(k + 1, k - 1)] = C::zero();
            }
            rotate_columns(t, ldt, k, (k + 3).min(hi), c, s);
            rotate_columns(q, ldq, k, n, c, s);
            if k + 2 < hi {
                x = t[at(k + 1, k)];
                y = t[at(k + 2, k)];
            }
        }
    }
    Ok(())
}
