//! Kernel launches: the grid of a launch over `n` work items and the
//! `launch!` macro, which loads a kernel from the provider's module
//! (`context.rs`) and launches it on the provider's stream. Above both the
//! provider value and the NVRTC source (`nvrtc.rs`); the ops use it.

use crate::context::Gpu;
use crate::error::driver;
use cudarc::driver::{CudaFunction, LaunchConfig};
use lindiff_core::Result;

/// Threads per block of every launch.
const BLOCK: u32 = 256;
/// Most blocks of a launch (the kernels loop over the rest).
const MAX_BLOCKS: u64 = 65_535;

/// A grid covering `n` work items (the kernels stride over any remainder).
pub(crate) fn config(n: u64) -> LaunchConfig {
    let blocks = n.div_ceil(BLOCK as u64).clamp(1, MAX_BLOCKS) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

/// Loads kernel `name` from the provider's module.
pub(crate) fn function(gpu: &Gpu, name: &str) -> Result<CudaFunction> {
    gpu.module.load_function(name).map_err(driver)
}

/// Launches kernel `$name` over `$n` work items with the listed arguments
/// (each a value whose type matches the kernel parameter: `i32`, `i64`,
/// `f64`, `u64` device addresses, [`Walk`](crate::nvrtc::Walk),
/// [`View`](crate::nvrtc::View)). Nothing is launched for `$n == 0`.
macro_rules! launch {
    ($gpu:expr, $name:expr, $n:expr, [$($arg:expr),* $(,)?]) => {{
        let n: u64 = $n as u64;
        if n == 0 {
            Ok(())
        } else {
            let func = $crate::launch::function($gpu, &$name)?;
            use cudarc::driver::PushKernelArg as _;
            let mut builder = $gpu.stream.launch_builder(&func);
            $(let arg = $arg; builder.arg(&arg);)*
            // SAFETY: the argument list matches the kernel's parameters
            // (types and order, see kernels/lindiff.cu), every address is
            // device memory of this context inside the buffers the caller
            // checked, and the grid-stride loop stays below `n`.
            unsafe { builder.launch($crate::launch::config(n)) }.map(|_| ()).map_err($crate::error::driver)
        }
    }};
}
pub(crate) use launch;

#[cfg(test)]
mod tests {
    use super::config;

    #[test]
    fn the_grid_covers_the_work_within_the_block_limit() {
        assert_eq!(config(0).grid_dim.0, 1);
        assert_eq!(config(257).grid_dim.0, 2);
        assert_eq!(config(u64::MAX / 2).grid_dim.0, 65_535);
    }
}
