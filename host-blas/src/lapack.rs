//! The scalar trait that maps one generic kernel to LAPACK's s/d/c/z
//! routines, so every kernel is written once over `T: Lapack`.
//!
//! The methods take one uniform argument list per routine for real and
//! complex types: arguments that only the complex routine has (`rwork`)
//! are ignored by the real ones, and ?geev's real-only outputs (`wr`, `wi`)
//! and complex-only output (`w`) are ignored by the other kind. Real types
//! map `ungqr` to ?orgqr and `heevd` to ?syevd. Each returns LAPACK's `info`.
//!
//! # Safety
//! Every method is a raw LAPACK call: the caller guarantees that every slice
//! is at least as long as LAPACK reads or writes for the given sizes and
//! leading dimensions (the kernels check each length with
//! `kernels::fits` first), that leading dimensions are ≥ max(1,
//! rows), and that `lwork`/`lrwork`/`liwork` do not exceed the slices.

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
/// let info = unsafe { f64::potrf(2, &mut a, 2) };
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
        a: &mut [Self],
        lda: i32,
        s: &mut [Re<Self>],
        u: &mut [Self],
        ldu: i32,
        vt: &mut [Self],
        ldvt: i32,
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Re<Self>],
        iwork: &mut [i32],
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
        a: &mut [Self],
        lda: i32,
        s: &mut [Re<Self>],
        u: &mut [Self],
        ldu: i32,
        vt: &mut [Self],
        ldvt: i32,
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Re<Self>],
    ) -> i32;
    /// ?geqrf: Householder QR.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn geqrf(
        m: i32,
        n: i32,
        a: &mut [Self],
        lda: i32,
        tau: &mut [Self],
        work: &mut [Self],
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
        a: &mut [Self],
        lda: i32,
        tau: &[Self],
        work: &mut [Self],
        lwork: i32,
    ) -> i32;
    /// ?geqp3: column-pivoted QR.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn geqp3(
        m: i32,
        n: i32,
        a: &mut [Self],
        lda: i32,
        jpvt: &mut [i32],
        tau: &mut [Self],
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Re<Self>],
    ) -> i32;
    /// ?syevd / ?heevd: Hermitian eigendecomposition (divide and conquer).
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn heevd(
        jobz: u8,
        uplo: u8,
        n: i32,
        a: &mut [Self],
        lda: i32,
        w: &mut [Re<Self>],
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Re<Self>],
        lrwork: i32,
        iwork: &mut [i32],
        liwork: i32,
    ) -> i32;
    /// ?geev: general eigendecomposition, right vectors only.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn geev(
        jobvr: u8,
        n: i32,
        a: &mut [Self],
        lda: i32,
        wr: &mut [Re<Self>],
        wi: &mut [Re<Self>],
        w: &mut [Self],
        vr: &mut [Self],
        ldvr: i32,
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Re<Self>],
    ) -> i32;
    /// ?potrf: Cholesky.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn potrf(n: i32, a: &mut [Self], lda: i32) -> i32;
    /// ?getrf: partial-pivot LU.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn getrf(m: i32, n: i32, a: &mut [Self], lda: i32, ipiv: &mut [i32]) -> i32;
    /// ?getrs: solve with ?getrf's factors.
    ///
    /// # Safety
    /// Slices and sizes as the module docs say.
    unsafe fn getrs(
        trans: u8,
        n: i32,
        nrhs: i32,
        a: &[Self],
        lda: i32,
        ipiv: &[i32],
        b: &mut [Self],
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
        a: &[Self],
        lda: i32,
        b: &mut [Self],
        ldb: i32,
    ) -> i32;
}

/// Implements [`Lapack`] for a real type from its routine names.
macro_rules! real {
    ($t:ty, $gesdd:ident, $gesvd:ident, $geqrf:ident, $orgqr:ident, $geqp3:ident, $syevd:ident,
     $geev:ident, $potrf:ident, $getrf:ident, $getrs:ident, $trtrs:ident) => {
        impl Lapack for $t {
            type Complex = Complex<$t>;
            unsafe fn gesdd(
                jobz: u8,
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                s: &mut [$t],
                u: &mut [Self],
                ldu: i32,
                vt: &mut [Self],
                ldvt: i32,
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [$t],
                iwork: &mut [i32],
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    lapack::$gesdd(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, &mut info)
                };
                info
            }
            unsafe fn gesvd(
                jobu: u8,
                jobvt: u8,
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                s: &mut [$t],
                u: &mut [Self],
                ldu: i32,
                vt: &mut [Self],
                ldvt: i32,
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [$t],
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    lapack::$gesvd(jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, &mut info)
                };
                info
            }
            unsafe fn geqrf(
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                tau: &mut [Self],
                work: &mut [Self],
                lwork: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$geqrf(m, n, a, lda, tau, work, lwork, &mut info) };
                info
            }
            unsafe fn ungqr(
                m: i32,
                n: i32,
                k: i32,
                a: &mut [Self],
                lda: i32,
                tau: &[Self],
                work: &mut [Self],
                lwork: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$orgqr(m, n, k, a, lda, tau, work, lwork, &mut info) };
                info
            }
            unsafe fn geqp3(
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                jpvt: &mut [i32],
                tau: &mut [Self],
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [$t],
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$geqp3(m, n, a, lda, jpvt, tau, work, lwork, &mut info) };
                info
            }
            unsafe fn heevd(
                jobz: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                w: &mut [$t],
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [$t],
                _lrwork: i32,
                iwork: &mut [i32],
                liwork: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$syevd(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, &mut info) };
                info
            }
            unsafe fn geev(
                jobvr: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                wr: &mut [$t],
                wi: &mut [$t],
                _w: &mut [Self],
                vr: &mut [Self],
                ldvr: i32,
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [$t],
            ) -> i32 {
                let mut info = 0;
                let mut vl = [0.0 as $t; 1];
                // SAFETY: the caller's contract (module docs); VL is not
                // referenced with JOBVL = 'N' and LDVL = 1.
                unsafe {
                    lapack::$geev(
                        b'N', jobvr, n, a, lda, wr, wi, &mut vl, 1, vr, ldvr, work, lwork, &mut info,
                    )
                };
                info
            }
            unsafe fn potrf(n: i32, a: &mut [Self], lda: i32) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$potrf(b'L', n, a, lda, &mut info) };
                info
            }
            unsafe fn getrf(m: i32, n: i32, a: &mut [Self], lda: i32, ipiv: &mut [i32]) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$getrf(m, n, a, lda, ipiv, &mut info) };
                info
            }
            unsafe fn getrs(
                trans: u8,
                n: i32,
                nrhs: i32,
                a: &[Self],
                lda: i32,
                ipiv: &[i32],
                b: &mut [Self],
                ldb: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$getrs(trans, n, nrhs, a, lda, ipiv, b, ldb, &mut info) };
                info
            }
            unsafe fn trtrs(
                uplo: u8,
                trans: u8,
                diag: u8,
                n: i32,
                nrhs: i32,
                a: &[Self],
                lda: i32,
                b: &mut [Self],
                ldb: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$trtrs(uplo, trans, diag, n, nrhs, a, lda, b, ldb, &mut info) };
                info
            }
        }
    };
}

/// Implements [`Lapack`] for a complex type from its routine names.
macro_rules! complex {
    ($r:ty, $gesdd:ident, $gesvd:ident, $geqrf:ident, $ungqr:ident, $geqp3:ident, $heevd:ident,
     $geev:ident, $potrf:ident, $getrf:ident, $getrs:ident, $trtrs:ident) => {
        impl Lapack for Complex<$r> {
            type Complex = Complex<$r>;
            unsafe fn gesdd(
                jobz: u8,
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                s: &mut [$r],
                u: &mut [Self],
                ldu: i32,
                vt: &mut [Self],
                ldvt: i32,
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [$r],
                iwork: &mut [i32],
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    lapack::$gesdd(
                        jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, &mut info,
                    )
                };
                info
            }
            unsafe fn gesvd(
                jobu: u8,
                jobvt: u8,
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                s: &mut [$r],
                u: &mut [Self],
                ldu: i32,
                vt: &mut [Self],
                ldvt: i32,
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [$r],
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    lapack::$gesvd(
                        jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, &mut info,
                    )
                };
                info
            }
            unsafe fn geqrf(
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                tau: &mut [Self],
                work: &mut [Self],
                lwork: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$geqrf(m, n, a, lda, tau, work, lwork, &mut info) };
                info
            }
            unsafe fn ungqr(
                m: i32,
                n: i32,
                k: i32,
                a: &mut [Self],
                lda: i32,
                tau: &[Self],
                work: &mut [Self],
                lwork: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$ungqr(m, n, k, a, lda, tau, work, lwork, &mut info) };
                info
            }
            unsafe fn geqp3(
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                jpvt: &mut [i32],
                tau: &mut [Self],
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [$r],
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$geqp3(m, n, a, lda, jpvt, tau, work, lwork, rwork, &mut info) };
                info
            }
            unsafe fn heevd(
                jobz: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                w: &mut [$r],
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [$r],
                lrwork: i32,
                iwork: &mut [i32],
                liwork: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe {
                    lapack::$heevd(
                        jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, &mut info,
                    )
                };
                info
            }
            unsafe fn geev(
                jobvr: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                _wr: &mut [$r],
                _wi: &mut [$r],
                w: &mut [Self],
                vr: &mut [Self],
                ldvr: i32,
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [$r],
            ) -> i32 {
                let mut info = 0;
                let mut vl = [Complex::new(0.0 as $r, 0.0); 1];
                // SAFETY: the caller's contract (module docs); VL is not
                // referenced with JOBVL = 'N' and LDVL = 1.
                unsafe {
                    lapack::$geev(
                        b'N', jobvr, n, a, lda, w, &mut vl, 1, vr, ldvr, work, lwork, rwork, &mut info,
                    )
                };
                info
            }
            unsafe fn potrf(n: i32, a: &mut [Self], lda: i32) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$potrf(b'L', n, a, lda, &mut info) };
                info
            }
            unsafe fn getrf(m: i32, n: i32, a: &mut [Self], lda: i32, ipiv: &mut [i32]) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$getrf(m, n, a, lda, ipiv, &mut info) };
                info
            }
            unsafe fn getrs(
                trans: u8,
                n: i32,
                nrhs: i32,
                a: &[Self],
                lda: i32,
                ipiv: &[i32],
                b: &mut [Self],
                ldb: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$getrs(trans, n, nrhs, a, lda, ipiv, b, ldb, &mut info) };
                info
            }
            unsafe fn trtrs(
                uplo: u8,
                trans: u8,
                diag: u8,
                n: i32,
                nrhs: i32,
                a: &[Self],
                lda: i32,
                b: &mut [Self],
                ldb: i32,
            ) -> i32 {
                let mut info = 0;
                // SAFETY: the caller's contract (module docs).
                unsafe { lapack::$trtrs(uplo, trans, diag, n, nrhs, a, lda, b, ldb, &mut info) };
                info
            }
        }
    };
}

real!(f32, sgesdd, sgesvd, sgeqrf, sorgqr, sgeqp3, ssyevd, sgeev, spotrf, sgetrf, sgetrs, strtrs);
real!(f64, dgesdd, dgesvd, dgeqrf, dorgqr, dgeqp3, dsyevd, dgeev, dpotrf, dgetrf, dgetrs, dtrtrs);
complex!(f32, cgesdd, cgesvd, cgeqrf, cungqr, cgeqp3, cheevd, cgeev, cpotrf, cgetrf, cgetrs, ctrtrs);
complex!(f64, zgesdd, zgesvd, zgeqrf, zungqr, zgeqp3, zheevd, zgeev, zpotrf, zgetrf, zgetrs, ztrtrs);
