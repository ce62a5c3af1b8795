//! [`Linalg`]: the composites, methods built from ops and primitives only
//! (`composite.rs`), so their derivatives come from their parts.

use super::composite::{self, Norm, VanderOrder};
use super::ops::Ops;
use crate::error::Result;
use crate::op::SolveOptions;

/// The composites, for every face: inverse, norms, condition numbers,
/// matrix powers, chained products, vector dots, Vandermonde matrices and
/// tensor inverses/solves. Every op and primitive is a method of [`Ops`],
/// its supertrait.
pub trait Linalg: Ops {
    /// Inverse, as the fused solve against the identity.
    ///
    /// ```
    /// use lindiff_cpu::prelude::*;
    /// let mut la = Direct::new(Cpu::new());
    /// let a = la.tensor_row_major(2, 2, &[4.0, 7.0, 2.0, 6.0])?;
    /// let inv = la.inv(&a)?.to_vec::<f64>()?; // [[0.6, -0.7], [-0.2, 0.4]]
    /// for (x, y) in inv.iter().zip([0.6, -0.2, -0.7, 0.4]) {
    ///     assert!((x - y).abs() < 1e-15);
    /// }
    /// # Ok::<(), Error>(())
    /// ```
    ///
    /// # Errors
    /// ``inv: argument `a` must be square``; `a` singular to working
    /// precision (as [`Ops::solve`]).
    fn inv(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        composite::inv(self, a, SolveOptions::default())
    }

    /// [`Linalg::inv`] with the singularity test of `options`.
    ///
    /// # Errors
    /// As [`Linalg::inv`], with `options`' test.
    fn inv_with_options(&mut self, a: &Self::Tensor, options: SolveOptions) -> Result<Self::Tensor> {
        composite::inv(self, a, options)
    }

    /// Matrix or vector norm (see [`Norm`](Norm): 0 for an empty matrix or
    /// vector; which norms reject NaN/∞ and which propagate them).
    ///
    /// # Errors
    /// Shape errors naming `norm`; NaN/∞ input to a norm built on the
    /// singular values.
    fn norm(&mut self, a: &Self::Tensor, kind: Norm) -> Result<Self::Tensor> {
        composite::norm(self, a, kind)
    }

    /// Condition number in the given matrix norm (`Two`: s_max/s_min; the
    /// others ‖a‖·‖a⁻¹‖). A singular matrix has condition number +∞ (as
    /// NumPy's): an exactly singular one in the 2-norms (s_min = 0, the zero
    /// matrix included), one singular to working precision (the default
    /// test of [`Ops::solve`]) in the norms that need the inverse — for a
    /// batch, item by item.
    ///
    /// # Errors
    /// Non-square input (except for `Two`/`NegTwo`); an empty matrix; NaN/∞
    /// input (`NonFinite`).
    fn cond(&mut self, a: &Self::Tensor, kind: Norm) -> Result<Self::Tensor> {
        composite::cond(self, a, kind)
    }

    /// `a^k` for square `a` (negative k through the inverse).
    ///
    /// # Errors
    /// Non-square input; for k < 0, `a` singular to working precision (as
    /// [`Linalg::inv`]).
    fn matrix_power(&mut self, a: &Self::Tensor, k: i64) -> Result<Self::Tensor> {
        composite::matrix_power(self, a, k)
    }

    /// The product of a chain of matrices in the cheapest order.
    ///
    /// # Errors
    /// An empty chain; mismatched inner dims.
    fn multi_dot(&mut self, chain: &[&Self::Tensor]) -> Result<Self::Tensor> {
        composite::multi_dot(self, chain)
    }

    /// `Σᵢ conj(xᵢ) yᵢ` over the first dim of vectors `[n, batch…]`.
    ///
    /// # Errors
    /// Mismatched shapes or dtypes.
    fn vecdot(&mut self, x: &Self::Tensor, y: &Self::Tensor) -> Result<Self::Tensor> {
        composite::vecdot(self, x, y)
    }

    /// Vandermonde matrix of `x` (`[len, batch…]`) with `n` columns.
    ///
    /// # Errors
    /// A non-vector `x`.
    fn vander(&mut self, x: &Self::Tensor, n: usize, order: VanderOrder) -> Result<Self::Tensor> {
        composite::vander(self, x, n, order)
    }

    /// Inverse of a tensor seen as a matrix whose rows are its first `ind`
    /// dims (column-major flattening); the result has dims
    /// `[dims[ind..]…, dims[..ind]…]`.
    ///
    /// # Errors
    /// Row and column products that differ; singular input.
    fn tensorinv(&mut self, a: &Self::Tensor, ind: usize) -> Result<Self::Tensor> {
        composite::tensorinv(self, a, ind)
    }

    /// `x` with `tensordot(a, x) = b`: `a` has dims `[b.dims…, x.dims…]`.
    ///
    /// # Errors
    /// Shapes that do not split that way; singular input.
    fn tensorsolve(&mut self, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        composite::tensorsolve(self, a, b)
    }
}

impl<F: Ops + ?Sized> Linalg for F {}
