//! How failures of the CUDA libraries become lindiff errors: every one is
//! [`Error::ProviderUnavailable`] naming the library and its status code,
//! e.g. "a cuSOLVER call failed: CUSOLVER_STATUS_INVALID_VALUE". The core's
//! error carries `&'static str`s, so the message is picked from the static
//! tables of [`crate::codes`] (one `concat!`ed string per code); nothing is
//! formatted or leaked.

use crate::codes;
use lindiff_core::Error;

/// The provider's name in messages.
pub(crate) const PROVIDER: &str = "cuda";

/// A provider-level failure with a fixed reason.
pub(crate) fn unavailable(why: &'static str) -> Error {
    Error::ProviderUnavailable { provider: PROVIDER, why }
}

/// The message of `code` in `table`, `unlisted` for a code it lacks.
fn message(table: &'static [(u32, &'static str)], code: u32, unlisted: &'static str) -> &'static str {
    table.iter().find(|(c, _)| *c == code).map_or(unlisted, |(_, m)| m)
}

/// The status-code name an error of this crate carries ("CUDA_ERROR_…",
/// "CUBLAS_STATUS_…", "CUSOLVER_STATUS_…", "NVRTC_ERROR_…"), `None` for
/// every other error.
pub fn code_name(error: &Error) -> Option<&'static str> {
    let Error::ProviderUnavailable { provider: PROVIDER, why } = error else { return None };
    [codes::DRIVER_PREFIX, codes::CUBLAS_PREFIX, codes::CUSOLVER_PREFIX, codes::NVRTC_PREFIX]
        .into_iter()
        .find_map(|p| why.strip_prefix(p))
}

/// A CUDA driver call failed (allocation, copy, launch, synchronisation).
pub(crate) fn driver(e: cudarc::driver::DriverError) -> Error {
    unavailable(message(codes::DRIVER, e.0 as u32, "a CUDA driver call failed: unlisted CUresult"))
}

/// A cuBLAS call failed.
pub(crate) fn cublas(e: cudarc::cublas::result::CublasError) -> Error {
    unavailable(message(codes::CUBLAS, e.0 as u32, "a cuBLAS call failed: unlisted cublasStatus_t"))
}

/// A cuSOLVER call returned a status other than success.
pub(crate) fn cusolver(e: cudarc::cusolver::result::CusolverError) -> Error {
    unavailable(message(codes::CUSOLVER, e.0 as u32, "a cuSOLVER call failed: unlisted cusolverStatus_t"))
}

/// An NVRTC call failed (the kernels' compilation: the log is in
/// [`crate::compile_log`]).
pub(crate) fn nvrtc(e: cudarc::nvrtc::result::NvrtcError) -> Error {
    unavailable(message(codes::NVRTC, e.0 as u32, "NVRTC failed: unlisted nvrtcResult"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::cublas::sys::cublasStatus_t;
    use cudarc::cusolver::sys::cusolverStatus_t;
    use cudarc::driver::sys::CUresult;
    use cudarc::nvrtc::sys::nvrtcResult;

    #[test]
    fn failures_name_their_status_code() {
        let e = driver(cudarc::driver::DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert_eq!(
            e.to_string(),
            "provider cuda is unavailable: a CUDA driver call failed: CUDA_ERROR_OUT_OF_MEMORY"
        );
        assert_eq!(code_name(&e), Some("CUDA_ERROR_OUT_OF_MEMORY"));
        let e = solver_status(cusolverStatus_t::CUSOLVER_STATUS_INVALID_VALUE).unwrap_err();
        assert_eq!(code_name(&e), Some("CUSOLVER_STATUS_INVALID_VALUE"));
        let e = blas_status(cublasStatus_t::CUBLAS_STATUS_EXECUTION_FAILED).unwrap_err();
        assert_eq!(code_name(&e), Some("CUBLAS_STATUS_EXECUTION_FAILED"));
        let e = nvrtc(cudarc::nvrtc::result::NvrtcError(nvrtcResult::NVRTC_ERROR_COMPILATION));
        assert_eq!(code_name(&e), Some("NVRTC_ERROR_COMPILATION"));
        assert_eq!(code_name(&unsupported("x", "y")), None);
        assert_eq!(code_name(&unavailable("no CUDA device")), None);
    }

    #[test]
    fn the_tables_match_the_bindings() {
        // Every name is the Debug of its enum value (the bindings' own names).
        for &(code, msg) in codes::CUSOLVER {
            // SAFETY: the table lists cusolverStatus_t's discriminants only
            // (generated from the same bindings; checked by the Debug below).
            let status: cusolverStatus_t = unsafe { core::mem::transmute::<u32, cusolverStatus_t>(code) };
            assert_eq!(msg.strip_prefix(codes::CUSOLVER_PREFIX), Some(format!("{status:?}").as_str()));
        }
        for &(code, msg) in codes::CUBLAS {
            // SAFETY: as above, for cublasStatus_t.
            let status: cublasStatus_t = unsafe { core::mem::transmute::<u32, cublasStatus_t>(code) };
            assert_eq!(msg.strip_prefix(codes::CUBLAS_PREFIX), Some(format!("{status:?}").as_str()));
        }
        for &(code, msg) in codes::DRIVER {
            // SAFETY: as above, for CUresult.
            let status: CUresult = unsafe { core::mem::transmute::<u32, CUresult>(code) };
            assert_eq!(msg.strip_prefix(codes::DRIVER_PREFIX), Some(format!("{status:?}").as_str()));
        }
        for &(code, msg) in codes::NVRTC {
            // SAFETY: as above, for nvrtcResult.
            let status: nvrtcResult = unsafe { core::mem::transmute::<u32, nvrtcResult>(code) };
            assert_eq!(msg.strip_prefix(codes::NVRTC_PREFIX), Some(format!("{status:?}").as_str()));
        }
    }
}
