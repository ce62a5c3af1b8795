//! # lindiff-wasm
//!
//! lindiff in the browser: a [wasm-bindgen] API over the faer provider
//! ([`lindiff_cpu::Cpu`]) for `wasm32-unknown-unknown` with `+simd128`.
//!
//! * Matrices go in and out as [`Matrix`]: a `Float64Array` with explicit
//!   rows, cols and [`Layout`] (row-major input accepted, since JS arrays are
//!   row-major).
//! * Decompositions: [`svd`], [`eigh`], [`qr`], [`solve`], [`det`].
//! * Vector–Jacobian products for a loss written in JS ([`vjp()`], JS
//!   `vjp(op, inputs)` in `js_vjp.rs`): svd, eigh, qr, cholesky, solve, det,
//!   inv, matmul, expm, logm, sqrtm, expm_hermitian, logm_pd, sqrtm_psd in f32 or f64; the
//!   pullback takes one cotangent per output
//!   and runs the library's own reverse mode on the recorded tape.
//! * Gradients of spectral losses ([`Loss`], one concept per file under
//!   `loss/`) by lindiff's reverse mode ([`gradient`]), next to central finite
//!   differences ([`finite_difference`]). Where a loss has no derivative the
//!   library's report passes through: in Rust as [`ApiError`], in JS as a
//!   thrown `LindiffError` (a subclass of `Error`, exported) with `kind`
//!   (`"NotDifferentiable"`, `"NearTie"`, `"InvalidArgument"`, the
//!   library's other error kinds), `op`, `argument`, `shape`, `output`, `why`.
//! * `threads` feature: batch work ([`gradient_batch`]) on a rayon pool —
//!   in the browser through wasm-bindgen-rayon (`initThreadPool(n)`), when
//!   the page is `crossOriginIsolated`.
//!
//! Every function here is plain Rust first (usable and tested natively);
//! the `js_*` wrappers only convert errors into JS values. Modules import
//! downward only: `error` at the bottom; `js_error` (the thrown class,
//! which the JS constructors of the types below use); `matrix`, `options`,
//! `provider`; the computations (`decomp`, `loss`, `grad`,
//! `finite_difference`, `vjp`); and the JS edge (`js`, `js_vjp`: the
//! conversions to and from JS values), which nothing imports.
//!
//! ```
//! use lindiff_wasm::{gradient, GradientOptions, Layout, Loss, Matrix};
//! let a = Matrix::new(vec![3.0, 0.0, 0.0, 0.0, 2.0, 0.0], 2, 3, Layout::RowMajor)?;
//! let g = gradient(&a, &Loss::nuclear(), &GradientOptions::new())?;
//! assert!((g.value - 5.0).abs() < 1e-12);          // Σ s = 3 + 2
//! assert!((g.grad().get(0, 0) - 1.0).abs() < 1e-12); // ∂Σs/∂A = U Vᵀ
//! # Ok::<(), lindiff_wasm::ApiError>(())
//! ```
//!
//! [wasm-bindgen]: https://docs.rs/wasm-bindgen
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod decomp;
mod error;
mod finite_difference;
mod grad;
pub mod js;
mod js_error;
pub mod js_vjp;
pub mod loss;
mod matrix;
mod options;
mod provider;
mod vjp;

pub use decomp::{det, eigh, qr, solve, svd, Eigh, Qr, Svd};
pub use error::ApiError;
pub use finite_difference::finite_difference;
pub use grad::{gradient, gradient_batch, BatchItem, Gradient};
pub use js_error::LindiffError;
pub use loss::Loss;
pub use matrix::{Layout, Matrix};
pub use options::GradientOptions;
pub use provider::{set_threads, threads};
pub use vjp::{vjp, OutputKind, Precision, Value, Vjp, VjpOp};
