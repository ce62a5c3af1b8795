//! General (non-Hermitian) eigendecomposition kernels: `Eig` (values and
//! right eigenvectors) and `EigVals` (values only), over faer's `evd_real` /
//! `evd_cplx`.
//!
//! Outputs are complex for every input: c32 for f32/c32, c64 for f64/c64.
//!
//! * Real input: `evd_real` returns real and imaginary parts of the
//!   eigenvalues and packed real eigenvectors. A complex-conjugate pair is
//!   adjacent, (j, j+1) with `s_im[j] > 0`: `v_j = U[:,j] + i·U[:,j+1]`
//!   belongs to `s_re[j] + i·s_im[j]` and its conjugate to `j+1`. These are
//!   unpacked into the complex outputs.
//! * Complex input: `evd_cplx`, whose eigenvectors are written straight into
//!   the output.
//! * Eigenvectors: each column is scaled to unit 2-norm (faer does not
//!   normalise), then its largest-magnitude entry (the first on ties) is made
//!   real and positive (`gauge::canonicalize_columns`).
//! * **Order:** eigenvalues are sorted by real part ascending, then imaginary
//!   part ascending, with the eigenvector columns permuted alike, so results
//!   do not depend on faer's Schur order. A conjugate pair of a real input
//!   has bit-identical real parts, so it comes out as (re − i·|im|,
//!   re + i·|im|). Eigenvalues whose real parts agree only up to rounding
//!   may come out in either order (e.g. between `Eig` and `EigVals`, which
//!   run different Schur paths).
//! * Errors: NaN/∞ in `a` → `NonFinite("a")` (checked here; faer would say
//!   "no convergence"). faer ignores non-convergence of its Schur iteration;
//!   a non-finite result is reported as `NonConvergence`.
//! * Scale-robust (`super::scaling`): when max|a| lies outside the safe
//!   range, faer runs on `a · 2^e` (a copy in the workspace) and the
//!   eigenvalues are scaled back; the eigenvectors are the scaled
//!   matrix's, which are `a`'s. The non-finite check's pass measures `a`.
//!   For real input that range is [2^−8, 2^8] (`Range::Unit`): faer 0.24's
//!   real eigenvectors (`evd_real`, the complex-conjugate pairs' back
//!   substitution from the real Schur form) are wrong once every entry is
//!   below about 2^−48 — residual ‖AV − VW‖ of order ‖A‖ for random 5×5
//!   matrices at 2^−50, 2^−100 and 2^−1000, ~1e−15·‖A‖ at 2^−48 and above
//!   (measured; its eigenvalues and its complex path are right at every
//!   scale, complex input keeps LAPACK's range).
//!
//! faer's real EVD needs `T: RealField`, which a generic `T: Field` cannot
//! show, so the kernels dispatch on the input dtype to code written once
//! over the real type `R` (f32 or f64): [`real_input`] for R, and
//! [`complex_input`] for `Complex<R>`. The dispatch only names types; no
//! memory is reinterpreted.
//!
//! Scratch: the scaled copy of `a` (n×n), the eigenvalues (n×1 complex);
//! for real input also their real and imaginary parts (n×1 each) and the
//! packed vectors (n×n real, with vectors only); and faer's scratch.

use super::columns::copy_mat;
use super::gauge::canonicalize_columns;
use super::range::check_range;
use super::scaling::{Range, Scaling};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::evd::{evd_cplx, evd_real, evd_scratch, ComputeEigenvectors};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{IntoConst, Reborrow, ReborrowMut};
use faer::traits::RealField;
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::{Eig, EigVals};
use lindiff_core::{DType, Element, RealScalar, Scalar};
use num_complex::Complex;

mod sealed {
    /// Seals [`super::EvdReal`].
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The real types faer's general EVD runs on (f32, f64): both lindiff's
/// and faer's real scalar at once.
trait EvdReal: sealed::Sealed + Field + RealScalar + RealField {}
impl EvdReal for f32 {}
impl EvdReal for f64 {}

fn compute_flag(vectors: bool) -> ComputeEigenvectors {
    if vectors {
        ComputeEigenvectors::Yes
    } else {
        ComputeEigenvectors::No
    }
}

/// Scratch of [`real_input`].
#[cfg_attr(not(any(feature = "f32", feature = "f64")), allow(dead_code))]
fn real_scratch<R: EvdReal>(n: usize, vectors: bool, par: Par) -> StackReq
where
    Complex<R>: Field + Scalar<Real = R>,
{
    StackReq::all_of(&[
        temp_mat_scratch::<R>(n, n),                           // a · 2^e
        temp_mat_scratch::<Complex<R>>(n, 1),                  // eigenvalues
        temp_mat_scratch::<R>(n, 1),                           // real parts
        temp_mat_scratch::<R>(n, 1),                           // imaginary parts
        temp_mat_scratch::<R>(n, if vectors { n } else { 0 }), // packed vectors
        evd_scratch::<R>(n, ComputeEigenvectors::No, compute_flag(vectors), par, Default::default()),
    ])
}

/// Scratch of [`complex_input`].
#[cfg_attr(not(any(feature = "c32", feature = "c64")), allow(dead_code))]
fn complex_scratch<R: EvdReal>(n: usize, vectors: bool, par: Par) -> StackReq
where
    Complex<R>: Field + Scalar<Real = R>,
{
    StackReq::all_of(&[
        temp_mat_scratch::<Complex<R>>(n, n), // a · 2^e
        temp_mat_scratch::<Complex<R>>(n, 1), // eigenvalues
        evd_scratch::<Complex<R>>(n, ComputeEigenvectors::No, compute_flag(vectors), par, Default::default()),
    ])
}

/// Eigendecomposition of a real item `a` (input 0, type `R`): eigenvalues
/// into output 0 and, when `vectors` and output 1 is present, eigenvectors
/// into output 1 (both `Complex<R>`).
#[cfg_attr(not(any(feature = "f32", feature = "f64")), allow(dead_code))]
fn real_input<R: EvdReal>(
    item: &mut Item<'_>,
    vectors: bool,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure>
where
    Complex<R>: Field + Scalar<Real = R>,
{
    let a = item.mat::<R>(0);
    let n = a.nrows();
    let scaling = check_range(a, "a", Range::Unit)?;
    // SAFETY: the copy is written in full before it is read, and only when
    // it is used (`scaled_input`).
    let (mut copy, stack) =
        unsafe { temp_mat_uninit::<R, _, _>(n, if scaling.is_none() { 0 } else { n }, stack) };
    let a = scaled_input(a, scaling, copy.as_mat_mut());
    let vectors = vectors && item.has_output(1);
    // SAFETY (all four temporaries): `w` is fully written by the unpacking
    // below, `s_re`, `s_im` and `u` by faer (without being read) before we
    // read them.
    let (mut w, stack) = unsafe { temp_mat_uninit::<Complex<R>, _, _>(n, 1, stack) };
    let (mut s_re, stack) = unsafe { temp_mat_uninit::<R, _, _>(n, 1, stack) };
    let (mut s_im, stack) = unsafe { temp_mat_uninit::<R, _, _>(n, 1, stack) };
    let (mut u, stack) = unsafe { temp_mat_uninit::<R, _, _>(n, if vectors { n } else { 0 }, stack) };
    let (mut w, mut s_re, mut s_im, mut u) =
        (w.as_mat_mut(), s_re.as_mat_mut(), s_im.as_mat_mut(), u.as_mat_mut());
    let u_right = if vectors { Some(u.rb_mut()) } else { None };
    evd_real(
        a,
        s_re.rb_mut().col_mut(0).as_diagonal_mut(),
        s_im.rb_mut().col_mut(0).as_diagonal_mut(),
        None,
        u_right,
        par,
        stack,
        Default::default(),
    )
    .map_err(|_| Failure::NonConvergence)?;
    let zero = <R as Scalar>::zero();
    let mut v = if vectors { Some(item.out_mat::<Complex<R>>(1)) } else { None };
    let mut j = 0;
    while j < n {
        let (re, im) = (s_re[(j, 0)], s_im[(j, 0)]);
        if im != zero && j + 1 < n {
            // A conjugate pair (faer puts the member with im > 0 first).
            w[(j, 0)] = Complex::new(re, im);
            w[(j + 1, 0)] = Complex::new(re, -im);
            if let Some(v) = v.as_mut() {
                for i in 0..n {
                    let (x, y) = (u[(i, j)], u[(i, j + 1)]);
                    v[(i, j)] = Complex::new(x, y);
                    v[(i, j + 1)] = Complex::new(x, -y);
                }
            }
            j += 2;
        } else {
            w[(j, 0)] = Complex::new(re, im);
            if let Some(v) = v.as_mut() {
                for i in 0..n {
                    v[(i, j)] = Complex::new(u[(i, j)], zero);
                }
            }
            j += 1;
        }
    }
    finish(w.rb_mut(), v)?;
    store(item, w.rb(), scaling);
    Ok(())
}

/// `a` itself when `scaling` is none, else `a · 2^e` written into `copy`
/// (n×n scratch).
fn scaled_input<'c, T: Field>(a: MatRef<'c, T>, scaling: Scaling, copy: MatMut<'c, T>) -> MatRef<'c, T> {
    if scaling.is_none() {
        return a;
    }
    let mut copy = copy;
    copy_mat(a, copy.rb_mut());
    scaling.apply_mat(copy.rb_mut());
    copy.into_const()
}

/// Eigendecomposition of a complex item `a` (input 0, type `Complex<R>`);
/// outputs as in [`real_input`].
#[cfg_attr(not(any(feature = "c32", feature = "c64")), allow(dead_code))]
fn complex_input<R: EvdReal>(
    item: &mut Item<'_>,
    vectors: bool,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure>
where
    Complex<R>: Field + Scalar<Real = R>,
{
    let a = item.mat::<Complex<R>>(0);
    let n = a.nrows();
    let scaling = check_range(a, "a", Range::Squares)?;
    // SAFETY: as in `real_input`.
    let (mut copy, stack) =
        unsafe { temp_mat_uninit::<Complex<R>, _, _>(n, if scaling.is_none() { 0 } else { n }, stack) };
    let a = scaled_input(a, scaling, copy.as_mat_mut());
    let vectors = vectors && item.has_output(1);
    // SAFETY: faer writes `w` without reading it.
    let (mut w, stack) = unsafe { temp_mat_uninit::<Complex<R>, _, _>(n, 1, stack) };
    let mut w = w.as_mat_mut();
    let mut v = if vectors { Some(item.out_mat::<Complex<R>>(1)) } else { None };
    // faer writes every element of `v` (with `Accum::Replace`) without reading it.
    let u_right = v.as_mut().map(|v| v.rb_mut());
    evd_cplx(a, w.rb_mut().col_mut(0).as_diagonal_mut(), None, u_right, par, stack, Default::default())
        .map_err(|_| Failure::NonConvergence)?;
    finish(w.rb_mut(), v)?;
    store(item, w.rb(), scaling);
    Ok(())
}

/// Checks the results, normalises and canonicalises the eigenvectors, and
/// sorts the eigenvalues (and vectors) by (real part, imaginary part).
fn finish<R: EvdReal>(
    mut w: MatMut<'_, Complex<R>>,
    mut v: Option<MatMut<'_, Complex<R>>>,
) -> Result<(), Failure>
where
    Complex<R>: Field + Scalar<Real = R>,
{
    let n = w.nrows();
    let finite = (0..n).all(|i| Scalar::is_finite(w[(i, 0)]))
        && v.as_ref().is_none_or(|v| (0..n).all(|j| (0..n).all(|i| Scalar::is_finite(v[(i, j)]))));
    if !finite {
        return Err(Failure::NonConvergence);
    }
    if let Some(v) = v.as_mut() {
        for j in 0..n {
            normalize_column(v.rb_mut(), j);
        }
        canonicalize_columns(v.rb_mut());
    }
    // Selection sort: O(n²) comparisons and at most n column swaps.
    for k in 0..n {
        let mut best = k;
        for i in k + 1..n {
            if before(w[(i, 0)], w[(best, 0)]) {
                best = i;
            }
        }
        if best != k {
            let t = w[(k, 0)];
            w[(k, 0)] = w[(best, 0)];
            w[(best, 0)] = t;
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
fn before<R: RealScalar>(x: Complex<R>, y: Complex<R>) -> bool {
    x.re < y.re || (x.re == y.re && x.im < y.im)
}

/// Scales column `j` of `v` to unit 2-norm (computed without overflow);
/// a zero column is left alone.
fn normalize_column<R: EvdReal>(mut v: MatMut<'_, Complex<R>>, j: usize)
where
    Complex<R>: Field + Scalar<Real = R>,
{
    let zero = <R as Scalar>::zero();
    let mut big = zero;
    for i in 0..v.nrows() {
        big = big.max_real(Scalar::abs(v[(i, j)]));
    }
    if big == zero {
        return;
    }
    let inv_big = <R as Scalar>::one() / big;
    let mut sum = zero;
    for i in 0..v.nrows() {
        sum += Scalar::abs2(Scalar::scale(v[(i, j)], inv_big));
    }
    let factor = <R as Scalar>::one() / (big * Scalar::sqrt(sum));
    for i in 0..v.nrows() {
        v[(i, j)] = Scalar::scale(v[(i, j)], factor);
    }
}

/// Writes the eigenvalues, scaled back by `scaling`, into output 0.
fn store<R: EvdReal>(item: &mut Item<'_>, w: faer::MatRef<'_, Complex<R>>, scaling: Scaling)
where
    Complex<R>: Field + Scalar<Real = R>,
{
    for i in 0..w.nrows() {
        item.set::<Complex<R>>(0, i, scaling.undo(w[(i, 0)]));
    }
}

/// Scratch of the kernel for input dtype `T`.
fn scratch<T: Field>(n: usize, vectors: bool, par: Par) -> StackReq {
    #[allow(unreachable_patterns)]
    match <T as Element>::DTYPE {
        #[cfg(feature = "f32")]
        DType::F32 => real_scratch::<f32>(n, vectors, par),
        #[cfg(feature = "f64")]
        DType::F64 => real_scratch::<f64>(n, vectors, par),
        #[cfg(feature = "c32")]
        DType::C32 => complex_scratch::<f32>(n, vectors, par),
        #[cfg(feature = "c64")]
        DType::C64 => complex_scratch::<f64>(n, vectors, par),
        // Not a float dtype this build has kernels for: never dispatched.
        _ => StackReq::EMPTY,
    }
}

/// Runs the kernel for input dtype `T`.
fn compute<T: Field>(
    item: &mut Item<'_>,
    vectors: bool,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    #[allow(unreachable_patterns)]
    match <T as Element>::DTYPE {
        #[cfg(feature = "f32")]
        DType::F32 => real_input::<f32>(item, vectors, par, stack),
        #[cfg(feature = "f64")]
        DType::F64 => real_input::<f64>(item, vectors, par, stack),
        #[cfg(feature = "c32")]
        DType::C32 => complex_input::<f32>(item, vectors, par, stack),
        #[cfg(feature = "c64")]
        DType::C64 => complex_input::<f64>(item, vectors, par, stack),
        // `with_field` only instantiates kernels for the float dtypes this
        // build has, each of which has an arm above.
        other => unreachable!("eig kernel dispatched for dtype {other:?}"),
    }
}

values_and_vectors!(Eig, EigVals);
