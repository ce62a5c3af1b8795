//! Everything a user of lindiff-cpu needs, in one import:
//!
//! ```
//! use lindiff_cpu::prelude::*;
//!
//! let mut la = Direct::new(Cpu::new());
//! let a = la.tensor_row_major(2, 2, &[4.0, 1.0, 1.0, 3.0])?;
//! let s = la.svd(&a)?.s.to_vec::<f64>()?;
//! assert!((s[0] * s[1] - 11.0).abs() < 1e-12); // |det A|
//! // The gradient of the nuclear norm Σ s: U Vᴴ.
//! let out = la.value_and_grad([&a], |[a]| a.svd().s.sum())?;
//! assert!((out.value - (s[0] + s[1])).abs() < 1e-12);
//! # Ok::<(), lindiff_cpu::prelude::Error>(())
//! ```
//!
//! It holds the provider ([`Cpu`]), the direct face and its tensors, the
//! face traits ([`Ops`]: every op and primitive; [`Linalg`]: the
//! composites), the handles losses are written with ([`Var`]) and the calls
//! that differentiate them ([`Direct::value_and_grad`], [`trace`],
//! [`trace_value_and_grad`], [`grad`]), every op's options and factors,
//! and the error type.

pub use crate::Cpu;
pub use lindiff_core::ad::{
    ad_support, ad_support_second_order, ad_support_table, grad, hvp, jvp, vjp, Dual, DualTensor, Eager,
    Support, Tangent,
};
pub use lindiff_core::face::direct::{Direct, Tensor};
pub use lindiff_core::face::{
    EigFactors, EighFactors, Face, FullPivLuFactors, HouseholderQr, Linalg, LuFactors, Norm, Ops, QrFactors,
    RankRevealingQrFactors, SvdFactors, SvdTruncatedFactors, VanderOrder,
};
pub use lindiff_core::ir::{Builder, Compiled, Program};
pub use lindiff_core::op::{
    Diagonal, EighOptions, LstsqOptions, MatOp, PinvOptions, PivotCheck, QrMode, QrOptions,
    RankRevealingQrOptions, Side, SingularCheck, SolveOptions, SvdDriver, SvdOptions, SvdVectors, Triangle,
    TriangularSolveOptions, Truncation,
};
pub use lindiff_core::prim::{BinaryOp, ReduceOp, UnaryOp};
pub use lindiff_core::var::{trace, trace_value_and_grad, ValueAndGrad, Var};
pub use lindiff_core::{op, prim};
pub use lindiff_core::{DType, Error, Exec, LinalgOp, Op, Provider, Result, Shape, TensorDesc, TensorMeta};
pub use num_complex::{Complex32, Complex64};
