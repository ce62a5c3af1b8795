//! Test-side dense linear algebra on plain column-major `Vec`s: naive,
//! independent of every provider, used to build inputs with known properties
//! and to check results (reconstructions, orthogonality, residuals).

use lindiff_core::{RealScalar, Scalar};

/// A column-major matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Dense<T> {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Column-major elements.
    pub data: Vec<T>,
}

/// The real type of `T`.
pub type Re<T> = <T as Scalar>::Real;

impl<T: Scalar> Dense<T> {
    /// Zeros.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Dense { rows, cols, data: vec![T::zero(); rows * cols] }
    }

    /// The identity (rectangular: ones on the main diagonal).
    pub fn eye(rows: usize, cols: usize) -> Self {
        let mut m = Self::zeros(rows, cols);
        for i in 0..rows.min(cols) {
            m[(i, i)] = T::one();
        }
        m
    }

    /// From column-major data.
    pub fn from_col_major(rows: usize, cols: usize, data: Vec<T>) -> Self {
        assert_eq!(data.len(), rows * cols);
        Dense { rows, cols, data }
    }

    /// From a function of (row, col).
    pub fn from_fn(rows: usize, cols: usize, mut f: impl FnMut(usize, usize) -> T) -> Self {
        let mut m = Self::zeros(rows, cols);
        for j in 0..cols {
            for i in 0..rows {
                m[(i, j)] = f(i, j);
            }
        }
        m
    }

    /// Conjugate transpose.
    pub fn adjoint(&self) -> Self {
        Self::from_fn(self.cols, self.rows, |i, j| self[(j, i)].conj())
    }

    /// Transpose.
    pub fn transpose(&self) -> Self {
        Self::from_fn(self.cols, self.rows, |i, j| self[(j, i)])
    }

    /// `self · other`.
    pub fn matmul(&self, other: &Self) -> Self {
        assert_eq!(self.cols, other.rows, "inner dims");
        let mut c = Self::zeros(self.rows, other.cols);
        for j in 0..other.cols {
            for k in 0..self.cols {
                let b = other[(k, j)];
                for i in 0..self.rows {
                    c[(i, j)] += self[(i, k)] * b;
                }
            }
        }
        c
    }

    /// `self + other`.
    pub fn add(&self, other: &Self) -> Self {
        assert_eq!((self.rows, self.cols), (other.rows, other.cols));
        Dense::from_col_major(
            self.rows,
            self.cols,
            self.data.iter().zip(&other.data).map(|(&a, &b)| a + b).collect(),
        )
    }

    /// `self − other`.
    pub fn sub(&self, other: &Self) -> Self {
        assert_eq!((self.rows, self.cols), (other.rows, other.cols));
        Dense::from_col_major(
            self.rows,
            self.cols,
            self.data.iter().zip(&other.data).map(|(&a, &b)| a - b).collect(),
        )
    }

    /// Columns `start..start + count`.
    pub fn cols_range(&self, start: usize, count: usize) -> Self {
        Self::from_fn(self.rows, count, |i, j| self[(i, start + j)])
    }

    /// Rows `start..start + count`.
    pub fn rows_range(&self, start: usize, count: usize) -> Self {
        Self::from_fn(count, self.cols, |i, j| self[(start + i, j)])
    }

    /// `self · diag(d)`.
    pub fn scale_cols(&self, d: &[Re<T>]) -> Self {
        Self::from_fn(self.rows, self.cols, |i, j| self[(i, j)].scale(d[j]))
    }

    /// Frobenius norm (as f64).
    pub fn norm(&self) -> f64 {
        self.data.iter().map(|x| x.abs().to_f64().powi(2)).sum::<f64>().sqrt()
    }

    /// Largest modulus (as f64).
    pub fn max_abs(&self) -> f64 {
        self.data.iter().map(|x| x.abs().to_f64()).fold(0.0, f64::max)
    }

    /// ‖selfᴴ self − I‖_F: zero for orthonormal columns.
    pub fn orthonormality_error(&self) -> f64 {
        self.adjoint().matmul(self).sub(&Self::eye(self.cols, self.cols)).norm()
    }

    /// The first column (if any) that breaks the canonical phase: its first
    /// largest-magnitude entry is not real (|im| > tol) and positive.
    pub fn first_non_canonical_column(&self, tol: f64) -> Option<usize> {
        (0..self.cols).find(|&j| {
            let (mut best, mut at) = (0.0, 0);
            for i in 0..self.rows {
                if self[(i, j)].abs().to_f64() > best {
                    best = self[(i, j)].abs().to_f64();
                    at = i;
                }
            }
            !(self[(at, j)].re().to_f64() > 0.0 && self[(at, j)].im().to_f64().abs() <= tol)
        })
    }
}

impl<T> core::ops::Index<(usize, usize)> for Dense<T> {
    type Output = T;
    fn index(&self, (i, j): (usize, usize)) -> &T {
        assert!(i < self.rows && j < self.cols);
        &self.data[i + j * self.rows]
    }
}

impl<T> core::ops::IndexMut<(usize, usize)> for Dense<T> {
    fn index_mut(&mut self, (i, j): (usize, usize)) -> &mut T {
        assert!(i < self.rows && j < self.cols);
        &mut self.data[i + j * self.rows]
    }
}

/// A deterministic xorshift64* generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is remapped).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [-0.5, 0.5) — the seed's timing matrices.
    pub fn centered(&mut self) -> f64 {
        self.uniform() - 0.5
    }

    /// A scalar with parts uniform in [-1, 1) (imaginary part only for complex `T`).
    pub fn scalar<T: Scalar>(&mut self) -> T {
        let re = 2.0 * self.uniform() - 1.0;
        let im = 2.0 * self.uniform() - 1.0;
        T::from_parts(Re::<T>::from_f64_lossy(re), Re::<T>::from_f64_lossy(im))
    }

    /// A matrix of [`Rng::scalar`] entries.
    pub fn matrix<T: Scalar>(&mut self, rows: usize, cols: usize) -> Dense<T> {
        Dense::from_fn(rows, cols, |_, _| self.scalar())
    }

    /// A random unitary n×n matrix (product of n Householder reflectors).
    pub fn unitary<T: Scalar>(&mut self, n: usize) -> Dense<T> {
        let mut q = Dense::<T>::eye(n, n);
        for _ in 0..n {
            let v: Vec<T> = (0..n).map(|_| self.scalar()).collect();
            let vv: f64 = v.iter().map(|x| x.abs2().to_f64()).sum();
            if vv == 0.0 {
                continue;
            }
            let tau = Re::<T>::from_f64_lossy(2.0 / vv);
            // q ← q (I − τ v vᴴ)
            for i in 0..n {
                let mut dot = T::zero();
                for k in 0..n {
                    dot += q[(i, k)] * v[k];
                }
                for k in 0..n {
                    q[(i, k)] -= (dot * v[k].conj()).scale(tau);
                }
            }
        }
        q
    }

    /// An m×n matrix `Q[:, :k] diag(s) R[:, :k]ᴴ` with random unitary Q, R:
    /// its singular values are exactly `s` (k = s.len() ≤ min(m, n)).
    pub fn with_spectrum<T: Scalar>(&mut self, m: usize, n: usize, s: &[f64]) -> Dense<T> {
        let k = s.len();
        let q = self.unitary::<T>(m).cols_range(0, k);
        let r = self.unitary::<T>(n).cols_range(0, k);
        let s: Vec<Re<T>> = s.iter().map(|&x| Re::<T>::from_f64_lossy(x)).collect();
        q.scale_cols(&s).matmul(&r.adjoint())
    }
}

/// Conversion from `f64` on the real types, named so it cannot clash.
pub trait FromF64Lossy {
    /// Rounds `x` to `Self`.
    fn from_f64_lossy(x: f64) -> Self;
}

impl<R: RealScalar> FromF64Lossy for R {
    fn from_f64_lossy(x: f64) -> Self {
        <R as Scalar>::from_f64(x)
    }
}

/// Machine epsilon of `T` (as f64).
pub fn eps<T: Scalar>() -> f64 {
    Re::<T>::EPSILON.to_f64()
}
