//! The provider value: [`Cuda`] owns a CUDA context on one device, a
//! stream, cuBLAS and cuSOLVER handles and the loaded NVRTC module.
//! [`Cuda::new`] checks for the driver library *before* touching the
//! driver (cudarc panics when it is missing), so a machine without CUDA
//! gets an `Err`, never a panic.

use crate::arena::{alloc_error, DeviceMemory};
use crate::error::{cublas, cusolver, driver, unavailable};
use crate::memory::{DeviceBuffer, DeviceData};
use crate::nvrtc;
use cudarc::cublas::CudaBlas;
use cudarc::cusolver::{result as solver_result, sys as solver, DnHandle};
use cudarc::driver::{CudaContext, CudaModule, CudaStream};
use lindiff_core::{Element, Error, Result};
use std::sync::{Arc, Mutex, MutexGuard};

/// Options of [`Cuda::with_options`].
///
/// ```
/// use lindiff_cuda::CudaOptions;
/// assert_eq!(CudaOptions::default().ordinal(1).device_ordinal, 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CudaOptions {
    /// Which device (0 = the first).
    pub device_ordinal: usize,
}

impl CudaOptions {
    /// Sets the device ordinal.
    pub fn ordinal(mut self, ordinal: usize) -> Self {
        self.device_ordinal = ordinal;
        self
    }
}

/// cuSOLVER's opaque parameter objects, created once per provider.
struct SolverObjects {
    params: solver::cusolverDnParams_t,
    gesvdj: solver::gesvdjInfo_t,
    syevj: solver::syevjInfo_t,
}

// SAFETY: the objects are plain configuration records owned by this
// provider; every call that uses them runs under the provider's lock.
unsafe impl Send for SolverObjects {}
// SAFETY: as above — shared access only happens under the lock.
unsafe impl Sync for SolverObjects {}

impl Drop for SolverObjects {
    fn drop(&mut self) {
        // SAFETY: each object was created by the matching Create call and
        // is destroyed once, here. Statuses are ignored: nothing to do on
        // failure while dropping.
        unsafe {
            let _ = solver::cusolverDnDestroyParams(self.params);
            let _ = solver::cusolverDnDestroyGesvdjInfo(self.gesvdj);
            let _ = solver::cusolverDnDestroySyevjInfo(self.syevj);
        }
    }
}

/// What one provider owns on its device. Field order is drop order:
/// library handles before the stream and context.
pub(crate) struct Gpu {
    objects: SolverObjects,
    pub(crate) blas: CudaBlas,
    pub(crate) solver: DnHandle,
    pub(crate) module: Arc<CudaModule>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) ctx: Arc<CudaContext>,
}

impl Gpu {
    pub(crate) fn params(&self) -> solver::cusolverDnParams_t {
        self.objects.params
    }
    pub(crate) fn gesvdj_info(&self) -> solver::gesvdjInfo_t {
        self.objects.gesvdj
    }
    pub(crate) fn syevj_info(&self) -> solver::syevjInfo_t {
        self.objects.syevj
    }
    pub(crate) fn solver(&self) -> solver::cusolverDnHandle_t {
        self.solver.cu()
    }
    pub(crate) fn blas(&self) -> cudarc::cublas::sys::cublasHandle_t {
        *self.blas.handle()
    }

    /// Waits for everything queued on the provider's stream.
    pub(crate) fn sync(&self) -> Result<()> {
        self.stream.synchronize().map_err(driver)
    }
}

/// The cuSOLVER/cuBLAS/NVRTC provider (name `"cuda"`). Cheap to clone (a
/// shared handle); calls from several threads are serialised on its one
/// stream.
///
/// Without a CUDA driver library or device every constructor returns an
/// `Err` saying which:
///
/// ```
/// match lindiff_cuda::Cuda::new() {
///     Ok(cuda) => println!("running on {}", cuda.device_name()),
///     Err(e) => println!("skipped: {e}"), // e.g. "no CUDA driver library (libcuda.so) found"
/// }
/// ```
#[derive(Clone)]
pub struct Cuda {
    gpu: Arc<Mutex<Gpu>>,
    name: Arc<str>,
}

impl core::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cuda").field("device", &self.name).finish()
    }
}

/// `true` when the dynamic library cudarc would load is present.
fn present(check: unsafe fn() -> bool) -> bool {
    // SAFETY: the `is_culib_present` functions only try to open the
    // library by name (dlopen) and close it again.
    unsafe { check() }
}

impl Cuda {
    /// The provider on device 0.
    ///
    /// # Errors
    /// [`Error::ProviderUnavailable`] with "no CUDA driver library
    /// (libcuda.so) found", "no CUDA device", a missing cuBLAS / cuSOLVER /
    /// NVRTC library, or a failure creating the context or compiling the
    /// kernels.
    pub fn new() -> Result<Cuda> {
        Cuda::with_options(CudaOptions::default())
    }

    /// The provider on the device `options` names.
    ///
    /// # Errors
    /// As [`Cuda::new`].
    pub fn with_options(options: CudaOptions) -> Result<Cuda> {
        if !present(cudarc::driver::sys::is_culib_present) {
            return Err(unavailable("no CUDA driver library (libcuda.so) found"));
        }
        let count = CudaContext::device_count().map_err(|_| unavailable("no CUDA device (cuInit failed)"))?;
        if count <= 0 {
            return Err(unavailable("no CUDA device"));
        }
        if options.device_ordinal >= count as usize {
            return Err(unavailable("no CUDA device with the requested ordinal"));
        }
        if !present(cudarc::cublas::sys::is_culib_present) {
            return Err(unavailable("no cuBLAS library (libcublas.so) found"));
        }
        if !present(cudarc::cusolver::sys::is_culib_present) {
            return Err(unavailable("no cuSOLVER library (libcusolver.so) found"));
        }
        if !present(cudarc::nvrtc::sys::is_culib_present) {
            return Err(unavailable("no NVRTC library (libnvrtc.so) found"));
        }
        let ctx = CudaContext::new(options.device_ordinal).map_err(driver)?;
        let name: Arc<str> = ctx.name().map_err(driver)?.into();
        let stream = ctx.new_stream().map_err(driver)?;
        let blas = CudaBlas::new(stream.clone()).map_err(cublas)?;
        let solver = DnHandle::new(stream.clone()).map_err(cusolver)?;
        let params = solver_result::dn_create_params().map_err(cusolver)?;
        let mut gesvdj = core::ptr::null_mut();
        let mut syevj = core::ptr::null_mut();
        // SAFETY: out-pointers to locals; the objects are destroyed by
        // `SolverObjects::drop`.
        unsafe {
            crate::error::solver_status(solver::cusolverDnCreateGesvdjInfo(&mut gesvdj))?;
            crate::error::solver_status(solver::cusolverDnCreateSyevjInfo(&mut syevj))?;
        }
        let objects = SolverObjects { params, gesvdj, syevj };
        let module = ctx.load_module(nvrtc::ptx()?).map_err(driver)?;
        let gpu = Gpu { objects, blas, solver, module, stream, ctx };
        Ok(Cuda { gpu: Arc::new(Mutex::new(gpu)), name })
    }

    /// The device's name (e.g. "NVIDIA H200").
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// Exclusive use of the device for one call.
    pub(crate) fn lock(&self) -> Result<MutexGuard<'_, Gpu>> {
        let gpu =
            self.gpu.lock().map_err(|_| unavailable("a previous call panicked while holding the device"))?;
        // Raw driver and library calls use the thread's current context.
        gpu.ctx.bind_to_thread().map_err(driver)?;
        Ok(gpu)
    }

    /// Allocates `bytes` of device memory for a [`DeviceArena`](crate::DeviceArena)
    /// (the only device allocation this crate makes, at the caller's request).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] when the device has no room.
    pub fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let gpu = self.lock()?;
        let slice = gpu.stream.alloc_zeros::<u8>(bytes.max(1)).map_err(|e| alloc_error(bytes, e))?;
        DeviceMemory::new(slice)
    }

    /// Copies `src` into the start of `dst` and marks `dst` written.
    ///
    /// # Errors
    /// [`Error::Buffer`] when `dst` is too small; a driver failure.
    pub fn upload<T: Element>(&self, src: &[T], dst: &mut DeviceBuffer<'_>) -> Result<()> {
        self.upload_bytes(lindiff_core::HostData::from_slice(src).bytes(), dst)
    }

    /// [`Cuda::upload`] of raw bytes (e.g. a tensor's whole storage).
    ///
    /// # Errors
    /// As [`Cuda::upload`].
    pub fn upload_bytes(&self, src: &[u8], dst: &mut DeviceBuffer<'_>) -> Result<()> {
        if src.len() > dst.len() {
            return Err(Error::Buffer {
                op: "upload",
                arg: "dst",
                why: "too small",
                needed: src.len(),
                got: dst.len(),
            });
        }
        let gpu = self.lock()?;
        // SAFETY: `dst` owns at least `src.len()` device bytes for its
        // lifetime (checked above); the copy completes before `sync`
        // returns, while `src` is still borrowed.
        unsafe {
            cudarc::driver::result::memcpy_htod_async(dst.device_ptr(), src, gpu.stream.cu_stream())
                .map_err(driver)?;
        }
        gpu.sync()?;
        dst.mark_written();
        Ok(())
    }

    /// Copies the first `dst.len()` elements of `src` to the host.
    ///
    /// # Errors
    /// [`Error::Buffer`] when `src` is shorter than `dst`; a driver failure.
    pub fn download<T: Element>(&self, src: DeviceData<'_>, dst: &mut [T]) -> Result<()> {
        let len = core::mem::size_of_val(dst);
        // SAFETY: `T: Element` is plain data without padding, and every bit
        // pattern is a valid `T`, so its storage may be written as bytes.
        let bytes = unsafe { core::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), len) };
        self.download_bytes(src, bytes)
    }

    /// [`Cuda::download`] into raw bytes.
    ///
    /// # Errors
    /// As [`Cuda::download`].
    pub fn download_bytes(&self, src: DeviceData<'_>, dst: &mut [u8]) -> Result<()> {
        if dst.len() > src.len() {
            return Err(Error::Buffer {
                op: "download",
                arg: "src",
                why: "too small",
                needed: dst.len(),
                got: src.len(),
            });
        }
        let gpu = self.lock()?;
        // SAFETY: `src` views at least `dst.len()` written device bytes; the
        // copy completes before `sync` returns, while `dst` is borrowed.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(dst, src.device_ptr(), gpu.stream.cu_stream())
                .map_err(driver)?;
        }
        gpu.sync()
    }

    /// Waits until every queued call has finished (for timing).
    ///
    /// # Errors
    /// A driver failure (e.g. a kernel fault reported late).
    pub fn synchronize(&self) -> Result<()> {
        self.lock()?.sync()
    }
}
