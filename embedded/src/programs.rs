//! The traced programs the checks run, one function each. A program lives
//! on the stack (fixed capacity, no heap), so its capacity is stack; each
//! builder is kept in a function of its own (`inline(never)`), so its frame
//! is gone before the program runs. Capacities are few: each is a separate
//! instance of the interpreter (8 KiB) and, for gradients, of the AD rules
//! (60 KiB), so all gradients share one.

use lindiff_core::ad::grad;
use lindiff_core::ir::{Builder, Program};
#[cfg(feature = "matfun")]
use lindiff_core::prim::BinaryOp;
use lindiff_core::prim::{ReduceOp, UnaryOp};
use lindiff_core::{Error, MatOp, Ops, RealScalar, Shape, TensorMeta};

/// The gradient programs' capacity: the projector-loss gradient has 35
/// instructions (37 while it is differentiated) and fewer than 96 values.
pub type Prog = Program<40, 96>;
/// The forward programs' capacity (one op each): the gradients' where they
/// run (one interpreter instance, 10 KiB less flash), four instructions on
/// the Cortex-M3 (35 KiB less stack).
#[cfg(feature = "mps2-an386")]
pub type Forward = Prog;
/// The forward programs' capacity (one op each): the gradients' where they
/// run (one interpreter instance, 10 KiB less flash), four instructions on
/// the Cortex-M3 (35 KiB less stack).
#[cfg(not(feature = "mps2-an386"))]
pub type Forward = Program<4, 8>;

/// The dtype and shape of a `dims` tensor of `T`.
pub fn meta<T: RealScalar>(dims: &[usize]) -> Result<TensorMeta, Error> {
    let shape = Shape::new(dims).map_err(|_| Error::Program { why: "a test shape has too many dims" })?;
    Ok(TensorMeta::new(T::DTYPE, shape))
}

/// `a ↦ (u, s, vh)`.
#[inline(never)]
pub fn svd<T: RealScalar>(n: usize) -> Result<Forward, Error> {
    let mut b = Builder::with_capacity();
    let a = b.param(meta::<T>(&[n, n])?)?;
    let f = b.svd(&a)?;
    b.finish(&[&f.u, &f.s, &f.vh])
}

/// `(a, b) ↦ a⁻¹ b` (b one column).
#[inline(never)]
pub fn solve<T: RealScalar>(n: usize) -> Result<Forward, Error> {
    let mut b = Builder::with_capacity();
    let a = b.param(meta::<T>(&[n, n])?)?;
    let v = b.param(meta::<T>(&[n, 1])?)?;
    let x = b.solve(&a, &v)?;
    b.finish(&[&x])
}

/// `m ↦ chol(m)`.
#[inline(never)]
pub fn cholesky<T: RealScalar>(n: usize) -> Result<Forward, Error> {
    let mut b = Builder::with_capacity();
    let m = b.param(meta::<T>(&[n, n])?)?;
    let l = b.cholesky(&m)?;
    b.finish(&[&l])
}

/// `a ↦ eig(a)`: an op whose family no firmware build links (tracing it
/// is `Error::Unsupported`).
#[inline(never)]
pub fn eig<T: RealScalar>(n: usize) -> Result<Forward, Error> {
    let mut b = Builder::with_capacity();
    let a = b.param(meta::<T>(&[n, n])?)?;
    let e = b.eig(&a)?;
    b.finish(&[&e.w, &e.v])
}

/// `a ↦ Σ s_i(a)`.
#[inline(never)]
fn nuclear_loss<T: RealScalar>(n: usize) -> Result<Prog, Error> {
    let mut b = Builder::with_capacity();
    let a = b.param(meta::<T>(&[n, n])?)?;
    let s = b.svd_vals(&a)?;
    let loss = b.reduce(ReduceOp::Sum, &s, 1)?;
    b.finish(&[&loss])
}

/// `a ↦ (Σ s_i, ∂/∂a)`.
#[inline(never)]
pub fn grad_nuclear<T: RealScalar>(n: usize) -> Result<Prog, Error> {
    grad(&nuclear_loss::<T>(n)?, &[0])
}

/// `a ↦ ‖U_k U_kᵀ a‖²` (U from a's SVD, k = n/2).
#[inline(never)]
fn projector_loss<T: RealScalar>(n: usize) -> Result<Prog, Error> {
    let k = n / 2;
    let mut b = Builder::with_capacity();
    let a = b.param(meta::<T>(&[n, n])?)?;
    let f = b.svd(&a)?;
    let uk = b.slice(&f.u, [0, 0], [n, k])?;
    let p = b.matmul_with(&uk, MatOp::Identity, &uk, MatOp::Transpose)?;
    let pa = b.matmul(&p, &a)?;
    let sq = b.unary(UnaryOp::Abs2, &pa)?;
    let loss = b.reduce(ReduceOp::Sum, &sq, 2)?;
    b.finish(&[&loss])
}

/// `a ↦ (‖U_k U_kᵀ a‖², ∂/∂a)`.
#[inline(never)]
pub fn grad_projector<T: RealScalar>(n: usize) -> Result<Prog, Error> {
    grad(&projector_loss::<T>(n)?, &[0])
}

/// `(a, b, c) ↦ ⟨c, a⁻¹ b⟩`.
#[inline(never)]
fn solve_loss<T: RealScalar>(n: usize) -> Result<Prog, Error> {
    let mut b = Builder::with_capacity();
    let a = b.param(meta::<T>(&[n, n])?)?;
    let v = b.param(meta::<T>(&[n, 1])?)?;
    let w = b.param(meta::<T>(&[n, 1])?)?;
    let x = b.solve(&a, &v)?;
    let cx = b.matmul_with(&w, MatOp::Transpose, &x, MatOp::Identity)?;
    let loss = b.reduce(ReduceOp::Sum, &cx, 2)?;
    b.finish(&[&loss])
}

/// `(a, b, c) ↦ (⟨c, a⁻¹ b⟩, ∂/∂a, ∂/∂b)`.
#[inline(never)]
pub fn grad_solve<T: RealScalar>(n: usize) -> Result<Prog, Error> {
    grad(&solve_loss::<T>(n)?, &[0, 1])
}

/// `a ↦ f(a)` for one matrix function `f` (`expm`, `expm_hermitian`,
/// `sqrtm_psd`, `sqrtm`, `logm`: the `matfun` feature's checks).
#[cfg(feature = "matfun")]
#[inline(never)]
pub fn matrix_function<T: RealScalar>(n: usize, f: MatrixFn) -> Result<Forward, Error> {
    let mut b = Builder::with_capacity();
    let a = b.param(meta::<T>(&[n, n])?)?;
    let fa = f.trace(&mut b, &a)?;
    b.finish(&[&fa])
}

/// The matrix functions the `matfun` checks trace.
#[cfg(feature = "matfun")]
#[derive(Clone, Copy)]
pub enum MatrixFn {
    /// `expm` (scaling and squaring with Padé; any square matrix).
    Expm,
    /// `expm_hermitian` (from the eigendecomposition).
    ExpmHermitian,
    /// `sqrtm_psd` (from the eigendecomposition).
    SqrtmPsd,
    /// `sqrtm` (from the Schur decomposition; any square matrix).
    Sqrtm,
    /// `logm` (from the Schur decomposition; any square matrix without
    /// eigenvalues on the closed negative real axis).
    Logm,
}

#[cfg(feature = "matfun")]
impl MatrixFn {
    fn trace<const I: usize, const V: usize>(
        self,
        b: &mut Builder<I, V>,
        a: &<Builder<I, V> as lindiff_core::Face>::Tensor,
    ) -> Result<<Builder<I, V> as lindiff_core::Face>::Tensor, Error> {
        match self {
            MatrixFn::Expm => b.expm(a),
            MatrixFn::ExpmHermitian => b.expm_hermitian(a),
            MatrixFn::SqrtmPsd => b.sqrtm_psd(a),
            MatrixFn::Sqrtm => b.sqrtm(a),
            MatrixFn::Logm => b.logm(a),
        }
    }
}

/// `(a, c) ↦ ⟨c, f(a)⟩`.
#[cfg(feature = "matfun")]
#[inline(never)]
fn matrix_function_loss<T: RealScalar>(n: usize, f: MatrixFn) -> Result<Prog, Error> {
    let mut b = Builder::with_capacity();
    let a = b.param(meta::<T>(&[n, n])?)?;
    let c = b.param(meta::<T>(&[n, n])?)?;
    let fa = f.trace(&mut b, &a)?;
    let cf = b.binary(BinaryOp::Mul, &c, &fa)?;
    let loss = b.reduce(ReduceOp::Sum, &cf, 2)?;
    b.finish(&[&loss])
}

/// `(a, c) ↦ (⟨c, f(a)⟩, ∂/∂a)`.
#[cfg(feature = "matfun")]
#[inline(never)]
pub fn grad_matrix_function<T: RealScalar>(n: usize, f: MatrixFn) -> Result<Prog, Error> {
    grad(&matrix_function_loss::<T>(n, f)?, &[0])
}
