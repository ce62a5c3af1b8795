//! lindiff-cuda (docs written below)
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod arena;
pub mod carve;
mod context;
mod error;
mod memory;
pub mod nvrtc;
mod scalar;

pub use arena::{DeviceArena, DeviceMemory};
pub use context::{Cuda, CudaOptions};
pub use memory::{Device, DeviceBuffer, DeviceData};
pub use nvrtc::compile_log;
pub use scalar::CudaScalar;
