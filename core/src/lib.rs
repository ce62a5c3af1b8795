//! # lindiff-core
//!
//! The `no_std` heart of lindiff: what every linear-algebra operation *means* —
//! its shapes ([`LinalgOp::infer`]), its workspace contract ([`Provider`],
//! [`WorkspaceReq`], [`Allocator`], [`Arena`]) and its derivative rules —
//! independent of where it runs. Host crates (`lindiff-cpu` over faer,
//! `lindiff-blas` over LAPACK, `lindiff-cuda` over cuSOLVER) implement
//! [`Provider`]; nothing here knows which one runs a call.
//!
//! The crate builds without `alloc`: memory comes from the caller's
//! [`Allocator`] (for example an [`Arena`] over a static buffer), never from a
//! global heap, and programs, builders and tapes have fixed capacities. With
//! the `alloc` feature (which the host crates' `std` turns on) those grow as
//! needed (running out of memory is a typed error), and the operator-style
//! handles of `var` exist; kernels' buffers still come from the caller.
//!
//! Errors are values: a call that fails (a matrix not positive definite, a
//! singular system, NaN in the input, an iteration that did not converge)
//! returns a typed [`Error`]. After an `Err`, the output
//! buffers of [`call::run_into`] (and [`Provider::run_into`]) hold
//! unspecified values — possibly partial results, as LAPACK's — so read
//! none of them; the inputs are never modified, on `Ok` or `Err`.
//!
//! ```
//! use lindiff_core::{call, op::LuFactorSolve, DType, LinalgOp, Op, Shape, TensorDesc, TensorMeta};
//! let desc = |rows, cols| {
//!     TensorDesc::contiguous(TensorMeta::new(DType::F64, Shape::new(&[rows, cols]).unwrap())).unwrap()
//! };
//! let solve = Op::Linalg(LinalgOp::LuFactorSolve(LuFactorSolve::default()));
//! let outs = call::infer(&solve, &[&desc(3, 3), &desc(3, 2)]).unwrap();
//! assert_eq!(outs[0].as_ref().unwrap().shape.dims(), &[3, 2]);
//! let err = call::infer(&solve, &[&desc(0, 2), &desc(0, 1)]).unwrap_err();
//! assert_eq!(err.to_string(), "lu_factor_solve: argument `a` must be square, got 0×2");
//! ```
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod ad;
pub mod call;
pub mod dtype;
pub mod error;
pub mod exec;
pub mod face;
pub mod ir;
pub mod memory;
pub mod op;
pub mod prim;
pub mod provider;
pub mod scalar;
pub mod seq;
pub mod shape;
pub mod tensor;
#[cfg(feature = "alloc")]
pub mod var;
pub mod workspace;

pub use dtype::{DType, Element};
pub use error::{ArgKind, DTypeReq, Dim, Error, Result};
pub use exec::{BatchPolicy, Exec, LanePlan};
pub use face::{Face, Linalg, Ops};
pub use memory::{Host, HostBuffer, HostData, Memory};
pub use op::{LinalgOp, Live, MatOp, Outputs};
pub use prim::PrimOp;
pub use provider::{Input, Op, Output, Provider};
pub use scalar::{RealScalar, Scalar};
pub use shape::{Shape, MAX_RANK};
pub use tensor::{TensorDesc, TensorMeta};
pub use workspace::{Allocator, Arena, WorkspaceReq};
