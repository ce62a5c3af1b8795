//! General eigendecomposition kernels (`eig`, `eig_vals`) over ?geev (right
//! eigenvectors only). Outputs are complex for every input.
//!
//! * Real input: ?geev returns WR, WI and packed real vectors; a conjugate
//!   pair is adjacent, (j, j+1) with WI[j] > 0, v_j = VR[:,j] + i·VR[:,j+1]
//!   and v_{j+1} its conjugate. These are unpacked into the complex outputs.
//!   Complex input: W and VR are copied across.
//! * As on host-cpu: each eigenvector is scaled to unit 2-norm, given the
//!   canonical phase (`canonicalize_columns`), and the eigenvalues (with
//!   their vectors) are sorted by real part, then imaginary part.
//! * NaN/∞ input → `NonFinite("a")` (checked first); `info > 0` or a
//!   non-finite result → `NonConvergence`.

use super::query_cache::{self, cached};
use super::{carve, check_finite, copy_in, fits, info_ok, int, ld, queried_work, req, span};
use crate::lapack::{Lapack, Re};
use faer::dyn_stack::{MemStack, StackReq};
use faer::{MatMut, Par};
use lindiff_core::{RealScalar, Scalar};
use lindiff_cpu::kernel_api::{canonicalize_columns, Failure, Item, Kernel, Shapes};

/// `eig` (`vectors`) or `eig_vals` on LAPACK.
pub(super) struct EigKernel {
    /// Eigenvectors too (`eig`), or values only (`eig_vals`).
    pub(super) vectors: bool,
}

/// Element counts of the arrays of one n×n ?geev.
struct Sizes {
    /// WR and WI (real input).
    re_im: usize,
    /// W (complex input).
    w: usize,
    /// VR (n×n with vectors, else one element).
    vr: usize,
    work: usize,
    rwork: usize,
}

fn sizes<T: Lapack>(n: usize, vectors: bool) -> Sizes {
    let complex = <T as Scalar>::IS_COMPLEX;
    let mut s = Sizes {
        re_im: if complex { 0 } else { n },
        w: if complex { n } else { 0 },
        vr: if vectors { n * n } else { 1 },
        work: 0,
        rwork: if complex { 2 * n } else { 0 },
    };
    if n == 0 {
        return s;
    }
    s.work = cached::<T>(query_cache::EIG | u32::from(vectors), n, n, || [query::<T>(n, vectors), 0, 0])[0];
    s
}

/// ?geev's optimal LWORK for an n×n input (n > 0).
fn query<T: Lapack>(n: usize, vectors: bool) -> usize {
    let (mut a, mut wr, mut wi, mut w) =
        ([T::zero(); 1], [Re::<T>::zero(); 1], [Re::<T>::zero(); 1], [T::zero(); 1]);
    let (mut vr, mut work, mut rwork) = ([T::zero(); 1], [T::zero(); 1], [Re::<T>::zero(); 1]);
    let jobvr = if vectors { b'V' } else { b'N' };
    let ldvr = if vectors { n } else { 1 };
    // SAFETY: a workspace query (LWORK = -1) only writes WORK(1); the
    // leading dimensions are valid for n.
    let info = unsafe {
        T::geev(
            jobvr,
            int(n),
            a.as_mut_ptr(),
            int(n),
            wr.as_mut_ptr(),
            wi.as_mut_ptr(),
            w.as_mut_ptr(),
            vr.as_mut_ptr(),
            int(ldvr),
            work.as_mut_ptr(),
            -1,
            rwork.as_mut_ptr(),
        )
    };
    info_ok("?geev workspace query", info);
    queried_work(work[0], 1)
}

impl Sizes {
    fn req<T: Lapack>(&self, n: usize) -> StackReq {
        StackReq::all_of(&[
            req::<T>(n * n),          // a
            req::<Re<T>>(self.re_im), // wr
            req::<Re<T>>(self.re_im), // wi
            req::<T>(self.w),         // w
            req::<T>(self.vr),        // vr
            req::<T>(self.work),
            req::<Re<T>>(self.rwork),
            req::<T::Complex>(n), // the eigenvalues, complex
        ])
    }
}

impl<T: Lapack> Kernel<T> for EigKernel {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (n, _) = shapes.input(0);
        sizes::<T>(n, self.vectors).req::<T>(n)
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        check_finite(a, "a")?;
        if n == 0 {
            return Ok(());
        }
        let z = sizes::<T>(n, self.vectors);
        let (mut abuf, stack) = carve::<T>(stack, n * n);
        let (mut wr, stack) = carve::<Re<T>>(stack, z.re_im);
        let (mut wi, stack) = carve::<Re<T>>(stack, z.re_im);
        let (mut w, stack) = carve::<T>(stack, z.w);
        let (mut vr, stack) = carve::<T>(stack, z.vr);
        let (mut work, stack) = carve::<T>(stack, z.work);
        let (mut rwork, stack) = carve::<Re<T>>(stack, z.rwork);
        let (mut values, _) = carve::<T::Complex>(stack, n);
        copy_in(a, &mut abuf, ld(n));
        let complex = <T as Scalar>::IS_COMPLEX;
        fits(abuf.len(), span(n, n, n));
        fits(wr.len().min(wi.len()), if complex { 0 } else { n });
        fits(w.len(), if complex { n } else { 0 });
        fits(vr.len(), if self.vectors { span(n, n, n) } else { 1 });
        fits(rwork.len(), if complex { 2 * n } else { 0 });
        let (jobvr, ldvr) = if self.vectors { (b'V', n) } else { (b'N', 1) };
        let lwork_i = int(work.len());
        // SAFETY: every array holds what ?geev accesses for this n (checked
        // above; WR/WI only for real, W/RWORK only for complex types); LWORK
        // is WORK's length.
        let info = unsafe {
            T::geev(
                jobvr,
                int(n),
                abuf.as_mut_ptr(),
                int(n),
                wr.as_mut_ptr(),
                wi.as_mut_ptr(),
                w.as_mut_ptr(),
                vr.as_mut_ptr(),
                int(ldvr),
                work.as_mut_ptr(),
                lwork_i,
                rwork.as_mut_ptr(),
            )
        };
        if info_ok("?geev", info) > 0 {
            return Err(Failure::NonConvergence);
        }
        let cplx = |re: Re<T>, im: Re<T>| <T::Complex as Scalar>::from_parts(re, im);
        let mut v = if self.vectors { Some(item.out_mat::<T::Complex>(1)) } else { None };
        if complex {
            for j in 0..n {
                values[j] = cplx(Scalar::re(w[j]), Scalar::im(w[j]));
                if let Some(v) = v.as_mut() {
                    for i in 0..n {
                        let x = vr[i + j * n];
                        v[(i, j)] = cplx(Scalar::re(x), Scalar::im(x));
                    }
                }
            }
        } else {
            let zero = Re::<T>::zero();
            let mut j = 0;
            while j < n {
                let (re, im) = (wr[j], wi[j]);
                if im != zero && j + 1 < n {
                    values[j] = cplx(re, im);
                    values[j + 1] = cplx(re, -im);
                    if let Some(v) = v.as_mut() {
                        for i in 0..n {
                            let (x, y) = (Scalar::re(vr[i + j * n]), Scalar::re(vr[i + (j + 1) * n]));
                            v[(i, j)] = cplx(x, y);
                            v[(i, j + 1)] = cplx(x, -y);
                        }
                    }
                    j += 2;
                } else {
                    values[j] = cplx(re, im);
                    if let Some(v) = v.as_mut() {
                        for i in 0..n {
                            v[(i, j)] = cplx(Scalar::re(vr[i + j * n]), zero);
                        }
                    }
                    j += 1;
                }
            }
        }
        finish(&mut values, v)?;
        for (i, &x) in values.iter().enumerate() {
            item.set::<T::Complex>(0, i, x);
        }
        Ok(())
    }
}

/// Checks the results, normalises and canonicalises the eigenvectors, and
/// sorts the eigenvalues (and vectors) by (real part, imaginary part).
fn finish<C: lindiff_cpu::kernel_api::Field>(
    w: &mut [C],
    mut v: Option<MatMut<'_, C>>,
) -> Result<(), Failure> {
    type R<C> = <C as Scalar>::Real;
    let n = w.len();
    let finite = w.iter().all(|x| Scalar::is_finite(*x))
        && v.as_ref().is_none_or(|v| (0..n).all(|j| (0..n).all(|i| Scalar::is_finite(v[(i, j)]))));
    if !finite {
        return Err(Failure::NonConvergence);
    }
    if let Some(v) = v.as_mut() {
        for j in 0..n {
            normalize_column(v, j);
        }
        canonicalize_columns(v.as_mut());
    }
    // A real or imaginary part at rounding level relative to the spectrum
    // (≤ 16·n·ε·max|w|) is exactly zero: ?geev on a complex matrix leaves
    // e.g. 3e-17 + i and 0 − i for ±i where host-cpu gets exact zeros, and
    // the sort below would order such a pair by rounding noise.
    let scale = w.iter().fold(0.0f64, |m, x| m.max(Scalar::abs(*x).to_f64()));
    let tol = 16.0 * n as f64 * <R<C> as RealScalar>::EPSILON.to_f64() * scale;
    for x in w.iter_mut() {
        let (re, im) = (x.re(), x.im());
        let snap = |p: R<C>| if p.to_f64().abs() <= tol { <R<C> as Scalar>::zero() } else { p };
        *x = C::from_parts(snap(re), snap(im));
    }
    // Selection sort: O(n²) comparisons and at most n column swaps.
    for k in 0..n {
        let mut best = k;
        for i in k + 1..n {
            if before(w[i], w[best]) {
                best = i;
            }
        }
        if best != k {
            w.swap(k, best);
            if let Some(v) = v.as_mut() {
                for i in 0..n {
                    let t = v[(i, k)];
                    v[(i, k)] = v[(i, best)];
                    v[(i, best)] = t;
                }
            }
        }
    }
    Ok(())
}

/// The sort order: real part ascending, then imaginary part ascending.
fn before<C: Scalar>(x: C, y: C) -> bool {
    x.re() < y.re() || (x.re() == y.re() && x.im() < y.im())
}

/// Scales column `j` of `v` to unit 2-norm (without overflow); a zero
/// column is left alone.
fn normalize_column<C: lindiff_cpu::kernel_api::Field>(v: &mut MatMut<'_, C>, j: usize) {
    type R<C> = <C as Scalar>::Real;
    let zero = <R<C> as Scalar>::zero();
    let mut big = zero;
    for i in 0..v.nrows() {
        big = big.max_real(Scalar::abs(v[(i, j)]));
    }
    if big == zero {
        return;
    }
    let inv_big = <R<C> as Scalar>::one() / big;
    let mut sum = zero;
    for i in 0..v.nrows() {
        sum += Scalar::abs2(Scalar::scale(v[(i, j)], inv_big));
    }
    let factor = <R<C> as Scalar>::one() / (big * Scalar::sqrt(sum));
    for i in 0..v.nrows() {
        v[(i, j)] = Scalar::scale(v[(i, j)], factor);
    }
}
