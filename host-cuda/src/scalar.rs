//! [`CudaScalar`]: one trait maps each lindiff scalar to the CUDA library
//! routines of its type — the `cudaDataType` of the 64-bit generic
//! cuSOLVER/cuBLAS APIs (`cusolverDnX*`, `cublasGemmStridedBatchedEx`) and
//! the S/D/C/Z entry points that exist only typed (Jacobi SVD/eigh, orgqr/
//! ungqr, trsm). Kernels are written once, generic over it.

use core::ffi::{c_int, c_void};
use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as solver;
use lindiff_core::Element;
use num_complex::{Complex32, Complex64};

/// A scalar the CUDA provider computes in: `f32`, `f64`, `Complex32`,
/// `Complex64`. Pointer arguments are device addresses of elements of
/// `Self` (or of its real type where the routine says so: singular and
/// eigenvalues).
///
/// # Safety
/// Implementations must pass their arguments unchanged to the routine of
/// their own type.
pub unsafe trait CudaScalar: Element {
    /// Suffix of the NVRTC entry points (`"f64"`, …).
    const SUFFIX: &'static str;
    /// Suffix of the kernels over the real type.
    const REAL_SUFFIX: &'static str;
    /// The value 1 (gemm/trsm's alpha).
    const ONE: Self;
    /// The value 0 (gemm's beta).
    const ZERO: Self;
    /// cuSOLVER's data type of `Self`.
    const SOLVER_TYPE: solver::cudaDataType;
    /// cuSOLVER's data type of the real type (singular/eigen values).
    const SOLVER_REAL_TYPE: solver::cudaDataType;
    /// cuBLAS's data type of `Self`.
    const BLAS_TYPE: blas::cudaDataType;
    /// cuBLAS's compute type for `Self`.
    const BLAS_COMPUTE: blas::cublasComputeType_t;

    /// `?gesvdjBatched_bufferSize`.
    ///
    /// # Safety
    /// Valid handle, params, device pointers, sizes as cuSOLVER documents.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gesvdj_batched_size(
        h: solver::cusolverDnHandle_t,
        jobz: solver::cusolverEigMode_t,
        m: c_int,
        n: c_int,
        a: *const c_void,
        s: *const c_void,
        u: *const c_void,
        v: *const c_void,
        lwork: *mut c_int,
        params: solver::gesvdjInfo_t,
        batch: c_int,
    ) -> solver::cusolverStatus_t;
    /// `?gesvdjBatched` (`lda = m`, `ldu = m`, `ldv = n`).
    ///
    /// # Safety
    /// As [`CudaScalar::gesvdj_batched_size`], with `work` of `lwork` elements.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gesvdj_batched(
        h: solver::cusolverDnHandle_t,
        jobz: solver::cusolverEigMode_t,
        m: c_int,
        n: c_int,
        a: *mut c_void,
        s: *mut c_void,
        u: *mut c_void,
        v: *mut c_void,
        work: *mut c_void,
        lwork: c_int,
        info: *mut c_int,
        params: solver::gesvdjInfo_t,
        batch: c_int,
    ) -> solver::cusolverStatus_t;
    /// `?gesvdj_bufferSize` (`lda = m`, `ldu = m`, `ldv = n`).
    ///
    /// # Safety
    /// As [`CudaScalar::gesvdj_batched_size`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn gesvdj_size(
        h: solver::cusolverDnHandle_t,
        jobz: solver::cusolverEigMode_t,
        econ: c_int,
        m: c_int,
        n: c_int,
        a: *const c_void,
        s: *const c_void,
        u: *const c_void,
        v: *const c_void,
        lwork: *mut c_int,
        params: solver::gesvdjInfo_t,
    ) -> solver::cusolverStatus_t;
    /// `?gesvdj`.
    ///
    /// # Safety
    /// As [`CudaScalar::gesvdj_batched`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn gesvdj(
        h: solver::cusolverDnHandle_t,
        jobz: solver::cusolverEigMode_t,
        econ: c_int,
        m: c_int,
        n: c_int,
        a: *mut c_void,
        s: *mut c_void,
        u: *mut c_void,
        v: *mut c_void,
        work: *mut c_void,
        lwork: c_int,
        info: *mut c_int,
        params: solver::gesvdjInfo_t,
    ) -> solver::cusolverStatus_t;
    /// `?syevjBatched_bufferSize` / `?heevjBatched_bufferSize` (`lda = n`).
    ///
    /// # Safety
    /// As [`CudaScalar::gesvdj_batched_size`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn syevj_batched_size(
        h: solver::cusolverDnHandle_t,
        jobz: solver::cusolverEigMode_t,
        uplo: solver::cublasFillMode_t,
        n: c_int,
        a: *const c_void,
        w: *const c_void,
        lwork: *mut c_int,
        params: solver::syevjInfo_t,
        batch: c_int,
    ) -> solver::cusolverStatus_t;
    /// `?syevjBatched` / `?heevjBatched`.
    ///
    /// # Safety
    /// As [`CudaScalar::gesvdj_batched`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn syevj_batched(
        h: solver::cusolverDnHandle_t,
        jobz: solver::cusolverEigMode_t,
        uplo: solver::cublasFillMode_t,
        n: c_int,
        a: *mut c_void,
        w: *mut c_void,
        work: *mut c_void,
        lwork: c_int,
        info: *mut c_int,
        params: solver::syevjInfo_t,
        batch: c_int,
    ) -> solver::cusolverStatus_t;
    /// `?orgqr_bufferSize` / `?ungqr_bufferSize` (`lda = m`).
    ///
    /// # Safety
    /// As [`CudaScalar::gesvdj_batched_size`].
    unsafe fn orgqr_size(
        h: solver::cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        k: c_int,
        a: *const c_void,
        tau: *const c_void,
        lwork: *mut c_int,
    ) -> solver::cusolverStatus_t;
    /// `?orgqr` / `?ungqr`.
    ///
    /// # Safety
    /// As [`CudaScalar::gesvdj_batched`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn orgqr(
        h: solver::cusolverDnHandle_t,
        m: c_int,
        n: c_int,
        k: c_int,
        a: *mut c_void,
        tau: *const c_void,
        work: *mut c_void,
        lwork: c_int,
        info: *mut c_int,
    ) -> solver::cusolverStatus_t;
    /// cuBLAS `?trsm` (host-pointer alpha = 1).
    ///
    /// # Safety
    /// Valid handle; `a` (lda×…) and `b` (ldb×n) device matrices as cuBLAS
    /// documents.
    #[allow(clippy::too_many_arguments)]
    unsafe fn trsm(
        h: blas::cublasHandle_t,
        side: blas::cublasSideMode_t,
        uplo: blas::cublasFillMode_t,
        trans: blas::cublasOperation_t,
        diag: blas::cublasDiagType_t,
        m: c_int,
        n: c_int,
        a: *const c_void,
        lda: c_int,
        b: *mut c_void,
        ldb: c_int,
    ) -> blas::cublasStatus_t;
}

macro_rules! cuda_scalar {
    ($t:ty, $real:ty, $suffix:literal, $real_suffix:literal, $one:expr, $zero:expr,
     $st:ident, $sr:ident, $compute:ident, $elem:ty,
     $gjb_size:ident, $gjb:ident, $gj_size:ident, $gj:ident, $sjb_size:ident, $sjb:ident,
     $oq_size:ident, $oq:ident, $trsm:ident) => {
        // SAFETY: every method forwards its arguments unchanged to the
        // routine of this type, casting `c_void` pointers to the element
        // type the routine declares ($elem, or $real for values).
        unsafe impl CudaScalar for $t {
            const SUFFIX: &'static str = $suffix;
            const REAL_SUFFIX: &'static str = $real_suffix;
            const ONE: Self = $one;
            const ZERO: Self = $zero;
            const SOLVER_TYPE: solver::cudaDataType = solver::cudaDataType::$st;
            const SOLVER_REAL_TYPE: solver::cudaDataType = solver::cudaDataType::$sr;
            const BLAS_TYPE: blas::cudaDataType = blas::cudaDataType::$st;
            const BLAS_COMPUTE: blas::cublasComputeType_t = blas::cublasComputeType_t::$compute;

            unsafe fn gesvdj_batched_size(
                h: solver::cusolverDnHandle_t,
                jobz: solver::cusolverEigMode_t,
                m: c_int,
                n: c_int,
                a: *const c_void,
                s: *const c_void,
                u: *const c_void,
                v: *const c_void,
                lwork: *mut c_int,
                params: solver::gesvdjInfo_t,
                batch: c_int,
            ) -> solver::cusolverStatus_t {
                // SAFETY: forwarded (trait contract).
                unsafe {
                    solver::$gjb_size(
                        h,
                        jobz,
                        m,
                        n,
                        a.cast(),
                        m,
                        s.cast::<$real>(),
                        u.cast(),
                        m,
                        v.cast(),
                        n,
                        lwork,
                        params,
                        batch,
                    )
                }
            }
            unsafe fn gesvdj_batched(
                h: solver::cusolverDnHandle_t,
                jobz: solver::cusolverEigMode_t,
                m: c_int,
                n: c_int,
                a: *mut c_void,
                s: *mut c_void,
                u: *mut c_void,
                v: *mut c_void,
                work: *mut c_void,
                lwork: c_int,
                info: *mut c_int,
                params: solver::gesvdjInfo_t,
                batch: c_int,
            ) -> solver::cusolverStatus_t {
                // SAFETY: forwarded (trait contract).
                unsafe {
                    solver::$gjb(
                        h,
                        jobz,
                        m,
                        n,
                        a.cast::<$elem>(),
                        m,
                        s.cast::<$real>(),
                        u.cast::<$elem>(),
                        m,
                        v.cast::<$elem>(),
                        n,
                        work.cast::<$elem>(),
                        lwork,
                        info,
                        params,
                        batch,
                    )
                }
            }
            unsafe fn gesvdj_size(
                h: solver::cusolverDnHandle_t,
                jobz: solver::cusolverEigMode_t,
                econ: c_int,
                m: c_int,
                n: c_int,
                a: *const c_void,
                s: *const c_void,
                u: *const c_void,
                v: *const c_void,
                lwork: *mut c_int,
                params: solver::gesvdjInfo_t,
            ) -> solver::cusolverStatus_t {
                // SAFETY: forwarded (trait contract).
                unsafe {
                    solver::$gj_size(
                        h,
                        jobz,
                        econ,
                        m,
                        n,
                        a.cast(),
                        m,
                        s.cast::<$real>(),
                        u.cast(),
                        m,
                        v.cast(),
                        n,
                        lwork,
                        params,
                    )
                }
            }
            unsafe fn gesvdj(
                h: solver::cusolverDnHandle_t,
                jobz: solver::cusolverEigMode_t,
                econ: c_int,
                m: c_int,
                n: c_int,
                a: *mut c_void,
                s: *mut c_void,
                u: *mut c_void,
                v: *mut c_void,
                work: *mut c_void,
                lwork: c_int,
                info: *mut c_int,
                params: solver::gesvdjInfo_t,
            ) -> solver::cusolverStatus_t {
                // SAFETY: forwarded (trait contract).
                unsafe {
                    solver::$gj(
                        h,
                        jobz,
                        econ,
                        m,
                        n,
                        a.cast::<$elem>(),
                        m,
                        s.cast::<$real>(),
                        u.cast::<$elem>(),
                        m,
                        v.cast::<$elem>(),
                        n,
                        work.cast::<$elem>(),
                        lwork,
                        info,
                        params,
                    )
                }
            }
            unsafe fn syevj_batched_size(
                h: solver::cusolverDnHandle_t,
                jobz: solver::cusolverEigMode_t,
                uplo: solver::cublasFillMode_t,
                n: c_int,
                a: *const c_void,
                w: *const c_void,
                lwork: *mut c_int,
                params: solver::syevjInfo_t,
                batch: c_int,
            ) -> solver::cusolverStatus_t {
                // SAFETY: forwarded (trait contract).
                unsafe {
                    solver::$sjb_size(h, jobz, uplo, n, a.cast(), n, w.cast::<$real>(), lwork, params, batch)
                }
            }
            unsafe fn syevj_batched(
                h: solver::cusolverDnHandle_t,
                jobz: solver::cusolverEigMode_t,
                uplo: solver::cublasFillMode_t,
                n: c_int,
                a: *mut c_void,
                w: *mut c_void,
                work: *mut c_void,
                lwork: c_int,
                info: *mut c_int,
                params: solver::syevjInfo_t,
                batch: c_int,
            ) -> solver::cusolverStatus_t {
                // SAFETY: forwarded (trait contract).
                unsafe {
                    solver::$sjb(
                        h,
                        jobz,
                        uplo,
                        n,
                        a.cast::<$elem>(),
                        n,
                        w.cast::<$real>(),
                        work.cast::<$elem>(),
                        lwork,
                        info,
                        params,
                        batch,
                    )
                }
            }
            unsafe fn orgqr_size(
                h: solver::cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                k: c_int,
                a: *const c_void,
                tau: *const c_void,
                lwork: *mut c_int,
            ) -> solver::cusolverStatus_t {
                // SAFETY: forwarded (trait contract).
                unsafe { solver::$oq_size(h, m, n, k, a.cast(), m, tau.cast(), lwork) }
            }
            unsafe fn orgqr(
                h: solver::cusolverDnHandle_t,
                m: c_int,
                n: c_int,
                k: c_int,
                a: *mut c_void,
                tau: *const c_void,
                work: *mut c_void,
                lwork: c_int,
                info: *mut c_int,
            ) -> solver::cusolverStatus_t {
                // SAFETY: forwarded (trait contract).
                unsafe {
                    solver::$oq(
                        h,
                        m,
                        n,
                        k,
                        a.cast::<$elem>(),
                        m,
                        tau.cast::<$elem>(),
                        work.cast::<$elem>(),
                        lwork,
                        info,
                    )
                }
            }
            unsafe fn trsm(
                h: blas::cublasHandle_t,
                side: blas::cublasSideMode_t,
                uplo: blas::cublasFillMode_t,
                trans: blas::cublasOperation_t,
                diag: blas::cublasDiagType_t,
                m: c_int,
                n: c_int,
                a: *const c_void,
                lda: c_int,
                b: *mut c_void,
                ldb: c_int,
            ) -> blas::cublasStatus_t {
                let one: $t = $one;
                // SAFETY: forwarded (trait contract); alpha is a host value
                // (cuBLAS's default pointer mode).
                unsafe {
                    blas::$trsm(
                        h,
                        side,
                        uplo,
                        trans,
                        diag,
                        m,
                        n,
                        (&one as *const $t).cast(),
                        a.cast(),
                        lda,
                        b.cast(),
                        ldb,
                    )
                }
            }
        }
    };
}

cuda_scalar!(
    f32,
    f32,
    "f32",
    "f32",
    1.0,
    0.0,
    CUDA_R_32F,
    CUDA_R_32F,
    CUBLAS_COMPUTE_32F,
    f32,
    cusolverDnSgesvdjBatched_bufferSize,
    cusolverDnSgesvdjBatched,
    cusolverDnSgesvdj_bufferSize,
    cusolverDnSgesvdj,
    cusolverDnSsyevjBatched_bufferSize,
    cusolverDnSsyevjBatched,
    cusolverDnSorgqr_bufferSize,
    cusolverDnSorgqr,
    cublasStrsm_v2
);
cuda_scalar!(
    f64,
    f64,
    "f64",
    "f64",
    1.0,
    0.0,
    CUDA_R_64F,
    CUDA_R_64F,
    CUBLAS_COMPUTE_64F,
    f64,
    cusolverDnDgesvdjBatched_bufferSize,
    cusolverDnDgesvdjBatched,
    cusolverDnDgesvdj_bufferSize,
    cusolverDnDgesvdj,
    cusolverDnDsyevjBatched_bufferSize,
    cusolverDnDsyevjBatched,
    cusolverDnDorgqr_bufferSize,
    cusolverDnDorgqr,
    cublasDtrsm_v2
);
cuda_scalar!(
    Complex32,
    f32,
    "c32",
    "f32",
    Complex32::new(1.0, 0.0),
    Complex32::new(0.0, 0.0),
    CUDA_C_32F,
    CUDA_R_32F,
    CUBLAS_COMPUTE_32F,
    solver::cuComplex,
    cusolverDnCgesvdjBatched_bufferSize,
    cusolverDnCgesvdjBatched,
    cusolverDnCgesvdj_bufferSize,
    cusolverDnCgesvdj,
    cusolverDnCheevjBatched_bufferSize,
    cusolverDnCheevjBatched,
    cusolverDnCungqr_bufferSize,
    cusolverDnCungqr,
    cublasCtrsm_v2
);
cuda_scalar!(
    Complex64,
    f64,
    "c64",
    "f64",
    Complex64::new(1.0, 0.0),
    Complex64::new(0.0, 0.0),
    CUDA_C_64F,
    CUDA_R_64F,
    CUBLAS_COMPUTE_64F,
    solver::cuDoubleComplex,
    cusolverDnZgesvdjBatched_bufferSize,
    cusolverDnZgesvdjBatched,
    cusolverDnZgesvdj_bufferSize,
    cusolverDnZgesvdj,
    cusolverDnZheevjBatched_bufferSize,
    cusolverDnZheevjBatched,
    cusolverDnZungqr_bufferSize,
    cusolverDnZungqr,
    cublasZtrsm_v2
);
