//! How failures of the CUDA libraries become lindiff errors: every one is
//! [`Error::ProviderUnavailable`] naming the library that failed (the core's
//! error carries `&'static str`s, so the library's own code is not kept).

use lindiff_core::Error;

/// The provider's name in messages.
pub(crate) const PROVIDER: &str = "cuda";

/// A provider-level failure with a fixed reason.
pub(crate) fn unavailable(why: &'static str) -> Error {
    Error::ProviderUnavailable { provider: PROVIDER, why }
}

/// A CUDA driver call failed (allocation, copy, launch, synchronisation).
pub(crate) fn driver(_: cudarc::driver::DriverError) -> Error {
    unavailable("a CUDA driver call failed (allocation, copy, kernel launch or synchronisation)")
}

/// A cuBLAS call failed.
pub(crate) fn cublas(_: cudarc::cublas::result::CublasError) -> Error {
    unavailable("a cuBLAS call failed")
}

/// A cuSOLVER call returned a status other than success.
pub(crate) fn cusolver(_: cudarc::cusolver::result::CusolverError) -> Error {
    unavailable("a cuSOLVER call failed")
}

/// `op` has no CUDA implementation here.
pub(crate) fn unsupported(op: &'static str, why: &'static str) -> Error {
    Error::Unsupported { op, provider: PROVIDER, why }
}

/// Turns a raw cuSOLVER status into a result.
pub(crate) fn solver_status(status: cudarc::cusolver::sys::cusolverStatus_t) -> lindiff_core::Result<()> {
    status.result().map_err(cusolver)
}

/// Turns a raw cuBLAS status into a result.
pub(crate) fn blas_status(status: cudarc::cublas::sys::cublasStatus_t) -> lindiff_core::Result<()> {
    status.result().map_err(cublas)
}
