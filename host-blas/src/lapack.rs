//! The scalar trait that maps one generic kernel to LAPACK's s/d/c/z
//! routines, so every kernel is written once over `T: Lapack`.
//!
//! The methods take one uniform argument list per routine for real and
//! complex types: arguments that only the complex routine has (`rwork`)
//! are ignored by the real ones, and ?geev's real-only outputs (`wr`, `wi`)
//! and complex-only output (`w`) are ignored by the other kind. Real types
//! map `ungqr` to ?orgqr and `heevd` to ?syevd. Each returns LAPACK's `info`.
//!
//! Arrays are raw pointers, passed to the Fortran routine as they are (as
//! the `lapack` crate does with a slice's pointer), so that an array LAPACK
//! only writes (work arrays, outputs) may be uninitialised memory: the
//! kernels carve those from their scratch without zeroing them.
//!
//! # Safety
//! Every method is a raw LAPACK call: the caller guarantees that every
//! pointer is valid for as many elements as LAPACK reads or writes for the
//! given sizes and leading dimensions (the kernels check each length with
//! `kernels::fits` first), that what LAPACK reads is initialised, that
//! leading dimensions are ≥ max(1, rows), and that `lwork`/`lrwork`/`liwork`
//! do not exceed the arrays. Arrays a routine does not reference for the
//! given job may be dangling (e.g. `NonNull::dangling()`), never null.

use core::ffi::c_char;
use lapack_sys as ffi;
use lindiff_core::{Element, Scalar};
use lindiff_cpu::kernel_api::Field;
use num_complex::Complex;

/// The real type of `T`.
pub type Re<T> = <T as Scalar>::Real;

/// A dtype LAPACK computes with: f32, f64, `Complex<f32>`, `Complex<f64>`.
///
/// ```
/// use lindiff_blas::Lapack;
/// // A 2×2 Cholesky through the generic method (column-major, lower).
/// let mut a = [4.0f64, 2.0, 2.0, 5.0];
/// // SAFETY: `a` holds the 2×2 matrix with leading dimension 2.
/// let info = unsafe { f64::potrf(2, a.as_mut_ptr(), 2) };
/// assert_eq!((info, a[0], a[1], a[3]), (0, 2.0, 1.0, 2.0));
/// ```
#[allow(clippy::too_many_arguments)]
pub trait Lapack: Field + Element {
    /// The complex type with the same real type (eigenvalues of ?geev).
    type Complex: Field + Element + Scalar<Real = Re<Self>>;

    /// ?gesdd: divide-and-conquer SVD.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn gesdd(
        jobz: u8,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        s: *mut Re<Self>,
        u: *mut Self,
        ldu: i32,
        vt: *mut Self,
        ldvt: i32,
        work: *mut Self,
        lwork: i32,
        rwork: *mut Re<Self>,
        iwork: *mut i32,
    ) -> i32;
    /// ?gesvd: SVD by bidiagonal QR iteration.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn gesvd(
        jobu: u8,
        jobvt: u8,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        s: *mut Re<Self>,
        u: *mut Self,
        ldu: i32,
        vt: *mut Self,
        ldvt: i32,
        work: *mut Self,
        lwork: i32,
        rwork: *mut Re<Self>,
    ) -> i32;
    /// ?geqrf: Householder QR.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn geqrf(
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        tau: *mut Self,
        work: *mut Self,
        lwork: i32,
    ) -> i32;
    /// ?orgqr / ?ungqr: the explicit Q from ?geqrf's reflectors.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn ungqr(
        m: i32,
        n: i32,
        k: i32,
        a: *mut Self,
        lda: i32,
        tau: *const Self,
        work: *mut Self,
        lwork: i32,
    ) -> i32;
    /// ?geqp3: column-pivoted QR.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn geqp3(
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        jpvt: *mut i32,
        tau: *mut Self,
        work: *mut Self,
        lwork: i32,
        rwork: *mut Re<Self>,
    ) -> i32;
    /// ?syevd / ?heevd: Hermitian eigendecomposition (divide and conquer).
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn heevd(
        jobz: u8,
        uplo: u8,
        n: i32,
        a: *mut Self,
        lda: i32,
        w: *mut Re<Self>,
        work: *mut Self,
        lwork: i32,
        rwork: *mut Re<Self>,
        lrwork: i32,
        iwork: *mut i32,
        liwork: i32,
    ) -> i32;
    /// ?geev: general eigendecomposition, right vectors only.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn geev(
        jobvr: u8,
        n: i32,
        a: *mut Self,
        lda: i32,
        wr: *mut Re<Self>,
        wi: *mut Re<Self>,
        w: *mut Self,
        vr: *mut Self,
        ldvr: i32,
        work: *mut Self,
        lwork: i32,
        rwork: *mut Re<Self>,
    ) -> i32;
    /// ?potrf: Cholesky.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn potrf(n: i32, a: *mut Self, lda: i32) -> i32;
    /// ?getrf: partial-pivot LU.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn getrf(m: i32, n: i32, a: *mut Self, lda: i32, ipiv: *mut i32) -> i32;
    /// ?getrs: solve with ?getrf's factors.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn getrs(
        trans: u8,
        n: i32,
        nrhs: i32,
        a: *const Self,
        lda: i32,
        ipiv: *const i32,
        b: *mut Self,
        ldb: i32,
    ) -> i32;
    /// ?trtrs: triangular solve (refuses an exactly zero diagonal).
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn trtrs(
        uplo: u8,
        trans: u8,
        diag: u8,
        n: i32,
        nrhs: i32,
        a: *const Self,
        lda: i32,
        b: *mut Self,
        ldb: i32,
    ) -> i32;
}

/// `jobz`-style option as Fortran's CHARACTER*1.
fn ch(c: u8) -> c_char {
    c as c_char
}

/// Calls `$f` with the arguments of kind `$kind` (`real` or `complex`):
/// every plain argument, those in `real[…]` only for a real type and those
/// in `complex[…]` only for a complex one (the other kind's are left out,
/// unevaluated: each method names its arguments of both kinds in a
/// `let _`). Each argument ends with a comma.
macro_rules! call {
    ($kind:ident $f:path [$($done:expr,)*]) => {
        $f($($done),*)
    };
    (real $f:path [$($done:expr,)*] real[$($x:expr,)*] $($rest:tt)*) => {
        call!(real $f [$($done,)* $($x,)*] $($rest)*)
    };
    (complex $f:path [$($done:expr,)*] complex[$($x:expr,)*] $($rest:tt)*) => {
        call!(complex $f [$($done,)* $($x,)*] $($rest)*)
    };
    ($kind:ident $f:path [$($done:expr,)*] $other:ident[$($x:expr,)*] $($rest:tt)*) => {
        call!($kind $f [$($done,)*] $($rest)*)
    };
    ($kind:ident $f:path [$($done:expr,)*] $x:expr, $($rest:tt)*) => {
        call!($kind $f [$($done,)* $x,] $($rest)*)
    };
}

/// Implements [`Lapack`] for `$t` (`real` or `complex`, with real type
/// `$re`) from its routine names, one argument list for both kinds (see
/// `call!`). Pointers go through `.cast()`: a no-op for real types, and
/// for complex ones a cast to lapack-sys's complex type, which has the
/// same layout (`#[repr(C)] { re, im }`) as `num_complex::Complex`.
macro_rules! lapack {
    ($t:ty, $kind:ident, $re:ty, $gesdd:ident, $gesvd:ident, $geqrf:ident, $ungqr:ident, $geqp3:ident,
     $heevd:ident, $geev:ident, $potrf:ident, $getrf:ident, $getrs:ident, $trtrs:ident) => {
        impl Lapack for $t {
            type Complex = Complex<$re>;
            unsafe fn gesdd(
                jobz: u8,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                s: *mut $re,
                u: *mut Self,
                ldu: i32,
                vt: *mut Self,
                ldvt: i32,
                work: *mut Self,
                lwork: i32,
                rwork: *mut $re,
                iwork: *mut i32,
            ) -> i32 {
                let _ = (rwork,);
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    call!($kind ffi::$gesdd [] &ch(jobz), &m, &n, a.cast(), &lda, s, u.cast(), &ldu,
                        vt.cast(), &ldvt, work.cast(), &lwork, complex[rwork,] iwork, &mut info,)
                };
                info
            }
            unsafe fn gesvd(
                jobu: u8,
                jobvt: u8,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                s: *mut $re,
                u: *mut Self,
                ldu: i32,
                vt: *mut Self,
                ldvt: i32,
                work: *mut Self,
                lwork: i32,
                rwork: *mut $re,
            ) -> i32 {
                let _ = (rwork,);
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    call!($kind ffi::$gesvd [] &ch(jobu), &ch(jobvt), &m, &n, a.cast(), &lda, s, u.cast(),
                        &ldu, vt.cast(), &ldvt, work.cast(), &lwork, complex[rwork,] &mut info,)
                };
                info
            }
            unsafe fn geqrf(
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                tau: *mut Self,
                work: *mut Self,
                lwork: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { ffi::$geqrf(&m, &n, a.cast(), &lda, tau.cast(), work.cast(), &lwork, &mut info) };
                info
            }
            unsafe fn ungqr(
                m: i32,
                n: i32,
                k: i32,
                a: *mut Self,
                lda: i32,
                tau: *const Self,
                work: *mut Self,
                lwork: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    ffi::$ungqr(&m, &n, &k, a.cast(), &lda, tau.cast(), work.cast(), &lwork, &mut info)
                };
                info
            }
            unsafe fn geqp3(
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                jpvt: *mut i32,
                tau: *mut Self,
                work: *mut Self,
                lwork: i32,
                rwork: *mut $re,
            ) -> i32 {
                let _ = (rwork,);
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    call!($kind ffi::$geqp3 [] &m, &n, a.cast(), &lda, jpvt, tau.cast(), work.cast(), &lwork,
                        complex[rwork,] &mut info,)
                };
                info
            }
            unsafe fn heevd(
                jobz: u8,
                uplo: u8,
                n: i32,
                a: *mut Self,
                lda: i32,
                w: *mut $re,
                work: *mut Self,
                lwork: i32,
                rwork: *mut $re,
                lrwork: i32,
                iwork: *mut i32,
                liwork: i32,
            ) -> i32 {
                let _ = (rwork, lrwork);
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    call!($kind ffi::$heevd [] &ch(jobz), &ch(uplo), &n, a.cast(), &lda, w, work.cast(),
                        &lwork, complex[rwork, &lrwork,] iwork, &liwork, &mut info,)
                };
                info
            }
            unsafe fn geev(
                jobvr: u8,
                n: i32,
                a: *mut Self,
                lda: i32,
                wr: *mut $re,
                wi: *mut $re,
                w: *mut Self,
                vr: *mut Self,
                ldvr: i32,
                work: *mut Self,
                lwork: i32,
                rwork: *mut $re,
            ) -> i32 {
                let _ = (wr, wi, w, rwork);
                let mut info = 0;
                let mut vl = [<Self as Scalar>::zero(); 1];
                // SAFETY: the caller's contract (module docs); VL is not
                // referenced with JOBVL = 'N' and LDVL = 1.
                unsafe {
                    call!($kind ffi::$geev [] &ch(b'N'), &ch(jobvr), &n, a.cast(), &lda, real[wr, wi,]
                        complex[w.cast(),] vl.as_mut_ptr().cast(), &1, vr.cast(), &ldvr, work.cast(), &lwork,
                        complex[rwork,] &mut info,)
                };
                info
            }
            unsafe fn potrf(n: i32, a: *mut Self, lda: i32) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { ffi::$potrf(&ch(b'L'), &n, a.cast(), &lda, &mut info) };
                info
            }
            unsafe fn getrf(m: i32, n: i32, a: *mut Self, lda: i32, ipiv: *mut i32) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { ffi::$getrf(&m, &n, a.cast(), &lda, ipiv, &mut info) };
                info
            }
            unsafe fn getrs(
                trans: u8,
                n: i32,
                nrhs: i32,
                a: *const Self,
                lda: i32,
                ipiv: *const i32,
                b: *mut Self,
                ldb: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    ffi::$getrs(&ch(trans), &n, &nrhs, a.cast(), &lda, ipiv, b.cast(), &ldb, &mut info)
                };
                info
            }
            unsafe fn trtrs(
                uplo: u8,
                trans: u8,
                diag: u8,
                n: i32,
                nrhs: i32,
                a: *const Self,
                lda: i32,
                b: *mut Self,
                ldb: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    ffi::$trtrs(
                        &ch(uplo),
                        &ch(trans),
                        &ch(diag),
                        &n,
                        &nrhs,
                        a.cast(),
                        &lda,
                        b.cast(),
                        &ldb,
                        &mut info,
                    )
                };
                info
            }
        }
    };
}

// Real types map `ungqr` to ?orgqr and `heevd` to ?syevd.
lapack!(
    f32, real, f32, sgesdd_, sgesvd_, sgeqrf_, sorgqr_, sgeqp3_, ssyevd_, sgeev_, spotrf_, sgetrf_, sgetrs_,
    strtrs_
);
lapack!(
    f64, real, f64, dgesdd_, dgesvd_, dgeqrf_, dorgqr_, dgeqp3_, dsyevd_, dgeev_, dpotrf_, dgetrf_, dgetrs_,
    dtrtrs_
);
lapack!(
    Complex<f32>,
    complex,
    f32,
    cgesdd_,
    cgesvd_,
    cgeqrf_,
    cungqr_,
    cgeqp3_,
    cheevd_,
    cgeev_,
    cpotrf_,
    cgetrf_,
    cgetrs_,
    ctrtrs_
);
lapack!(
    Complex<f64>,
    complex,
    f64,
    zgesdd_,
    zgesvd_,
    zgeqrf_,
    zungqr_,
    zgeqp3_,
    zheevd_,
    zgeev_,
    zpotrf_,
    zgetrf_,
    zgetrs_,
    ztrtrs_
);
