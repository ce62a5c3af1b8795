//! Test-side dense algebra: the fixed matrices the checks start from and
//! the closed-form answers they expect, computed with plain loops (never
//! with lindiff, whose results they judge).
//!
//! Everything is built from exactly orthogonal factors with chosen
//! singular values: Q is a product of Givens rotations with fixed angles,
//! R a product of Householder reflectors with fixed vectors, so
//! A = Q diag(s) Rᵀ has singular values s, singular vectors ±Q and ±R,
//! inverse R diag(1/s) Qᵀ, nuclear-norm gradient Q Rᵀ, and so on, without
//! running any decomposition.

use lindiff_core::RealScalar;

/// A column-major square matrix of order `n ≤ CAP_N`, held inline.
#[derive(Clone, Copy)]
pub struct Mat<T, const CAP: usize> {
    n: usize,
    data: [T; CAP],
}

impl<T: RealScalar, const CAP: usize> Mat<T, CAP> {
    /// The n×n zero matrix (`n² ≤ CAP`).
    pub fn zeros(n: usize) -> Self {
        assert!(n * n <= CAP, "dense: order {n} exceeds the capacity");
        Mat { n, data: [T::zero(); CAP] }
    }

    /// The n×n identity.
    pub fn eye(n: usize) -> Self {
        let mut m = Self::zeros(n);
        for i in 0..n {
            m.set(i, i, T::one());
        }
        m
    }

    /// Entry (i, j).
    pub fn at(&self, i: usize, j: usize) -> T {
        self.data[i + j * self.n]
    }

    /// Sets entry (i, j).
    pub fn set(&mut self, i: usize, j: usize, v: T) {
        self.data[i + j * self.n] = v;
    }

    /// The n² entries, column-major.
    pub fn as_slice(&self) -> &[T] {
        &self.data[..self.n * self.n]
    }

    /// self · other.
    pub fn mul(&self, other: &Self) -> Self {
        let n = self.n;
        let mut c = Self::zeros(n);
        for j in 0..n {
            for i in 0..n {
                let mut acc = T::zero();
                for k in 0..n {
                    acc += self.at(i, k) * other.at(k, j);
                }
                c.set(i, j, acc);
            }
        }
        c
    }

    /// selfᵀ.
    pub fn transpose(&self) -> Self {
        let mut t = Self::zeros(self.n);
        for j in 0..self.n {
            for i in 0..self.n {
                t.set(j, i, self.at(i, j));
            }
        }
        t
    }

    /// self · diag(d) (column j scaled by d[j]).
    pub fn scale_cols(&self, d: &[T]) -> Self {
        let mut c = *self;
        for (j, &dj) in d.iter().enumerate().take(self.n) {
            for i in 0..self.n {
                c.set(i, j, self.at(i, j) * dj);
            }
        }
        c
    }

    /// self · x for a vector x of length n.
    pub fn apply(&self, x: &[T], y: &mut [T]) {
        for (i, yi) in y.iter_mut().enumerate().take(self.n) {
            let mut acc = T::zero();
            for (k, &xk) in x.iter().enumerate().take(self.n) {
                acc += self.at(i, k) * xk;
            }
            *yi = acc;
        }
    }

    /// Rotates rows i and i+1 by the angle θ = 2·atan(t) (left-multiplies by
    /// a Givens rotation with cos θ = (1 − t²)/(1 + t²), sin θ = 2t/(1 + t²)):
    /// exactly orthogonal up to the rounding of those two quotients. (The
    /// rational form keeps libm's sin and cos, with their f64 argument
    /// reduction, out of the f32 firmware: 3 KiB of flash.)
    fn rotate_rows(&mut self, i: usize, t: T) {
        let (one, t2) = (T::one(), t * t);
        let (c, s) = ((one - t2) / (one + t2), (t + t) / (one + t2));
        for j in 0..self.n {
            let (x, y) = (self.at(i, j), self.at(i + 1, j));
            self.set(i, j, c * x - s * y);
            self.set(i + 1, j, s * x + c * y);
        }
    }

    /// Left-multiplies by the reflector I − 2 v vᵀ / (vᵀ v).
    fn reflect_rows(&mut self, v: &[T]) {
        let mut vv = T::zero();
        for &x in &v[..self.n] {
            vv += x * x;
        }
        let two = T::from_f64(2.0);
        for j in 0..self.n {
            let mut dot = T::zero();
            for (i, &vi) in v.iter().enumerate().take(self.n) {
                dot += vi * self.at(i, j);
            }
            let f = two * dot / vv;
            for (i, &vi) in v.iter().enumerate().take(self.n) {
                self.set(i, j, self.at(i, j) - f * vi);
            }
        }
    }
}

/// Q: two sweeps of Givens rotations on neighbouring rows with fixed,
/// distinct angles (given by t = tan(θ/2)).
pub fn givens_q<T: RealScalar, const CAP: usize>(n: usize) -> Mat<T, CAP> {
    let mut q = Mat::eye(n);
    for sweep in 0..2 {
        for i in 0..n.saturating_sub(1) {
            let t = 0.2 + 0.15 * i as f64 + 0.35 * sweep as f64;
            q.rotate_rows(i, T::from_f64(t));
        }
    }
    q
}

/// R: the product of three Householder reflectors with fixed integer
/// vectors.
pub fn householder_r<T: RealScalar, const CAP: usize>(n: usize) -> Mat<T, CAP> {
    let mut r = Mat::eye(n);
    let mut v = [T::zero(); 64];
    for (step, pattern) in [[1.0, 2.0, 0.0], [1.0, -1.0, 3.0], [0.0, 2.0, -1.0]].iter().enumerate() {
        for (i, vi) in v.iter_mut().enumerate().take(n) {
            *vi = T::from_f64(pattern[(i + step) % 3] + 0.5 * (i % 2) as f64);
        }
        r.reflect_rows(&v);
    }
    r
}

/// The chosen singular values s_i = n − i (descending, gaps of 1).
pub fn singular_values<T: RealScalar>(n: usize, s: &mut [T]) {
    for (i, si) in s.iter_mut().enumerate().take(n) {
        *si = T::from_usize(n - i);
    }
}

/// A fixed lower-triangular Cholesky factor with positive diagonal:
/// L_ii = 2 + i/4, L_ij = (−1)^(i+j) / (1 + i + j) below the diagonal.
pub fn cholesky_factor<T: RealScalar, const CAP: usize>(n: usize) -> Mat<T, CAP> {
    let mut l = Mat::zeros(n);
    // In T, not f64 (soft-float division in the f32 build); every value is
    // exact or one correctly rounded quotient, as through f64.
    for j in 0..n {
        l.set(j, j, T::from_usize(8 + j) / T::from_usize(4));
        for i in j + 1..n {
            let sign = if (i + j) % 2 == 0 { T::one() } else { -T::one() };
            l.set(i, j, sign / T::from_usize(1 + i + j));
        }
    }
    l
}

/// A fixed vector: v_i = f(i) for a few simple patterns.
/// In T, not f64, like [`cholesky_factor`].
pub fn vector<T: RealScalar>(n: usize, pattern: usize, v: &mut [T]) {
    let (one, i_over) = (T::one(), |i: usize, d: usize| T::from_usize(i) / T::from_usize(d));
    for (i, vi) in v.iter_mut().enumerate().take(n) {
        *vi = match pattern {
            0 => one - i_over(i, 4),
            1 => (if i % 2 == 0 { i_over(1, 2) } else { -i_over(3, 2) }) + i_over(i, 8),
            _ => one / T::from_usize(1 + i),
        };
    }
}

/// max |got_i − want_i|; NaN when any difference is NaN (a NaN result must
/// fail its check: `max_real` would drop it).
pub fn max_abs_diff<T: RealScalar>(got: &[T], want: &[T]) -> T {
    got.iter().zip(want).map(|(g, w)| (*g - *w).abs()).fold(T::zero(), |m, d| if d <= m { m } else { d })
}
