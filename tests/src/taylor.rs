//! The matrix exponential by the textbook method, as a reference that
//! shares no code with the kernels: scale A by 2^-s until ‖A/2^s‖_F ≤ ½,
//! sum 30 terms of the Taylor series, square s times. Its error is a small
//! multiple of ε·‖A‖ times the conditioning of e^A: a reference for
//! well-conditioned inputs, not for stiff ones.

use crate::dense::{Dense, Re};
use lindiff_core::Scalar;

/// `a` times the real `s`.
pub fn scaled<T: Scalar>(a: &Dense<T>, s: f64) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |i, j| a[(i, j)].scale(Re::<T>::from_f64(s)))
}

/// `a + b`.
pub fn plus<T: Scalar>(a: &Dense<T>, b: &Dense<T>) -> Dense<T> {
    Dense::from_fn(a.rows, a.cols, |i, j| a[(i, j)] + b[(i, j)])
}

/// ‖got − want‖_F / ‖want‖_F.
pub fn relative<T: Scalar>(got: &Dense<T>, want: &Dense<T>) -> f64 {
    got.sub(want).norm() / want.norm()
}

/// e^A by scaling and squaring a 30-term Taylor series.
pub fn expm_taylor<T: Scalar>(a: &Dense<T>) -> Dense<T> {
    let norm = a.norm();
    let s = if norm > 0.5 { (norm / 0.5).log2().ceil() as i32 } else { 0 };
    let x = scaled(a, 0.5f64.powi(s));
    let mut term = Dense::<T>::eye(a.rows, a.cols);
    let mut sum = term.clone();
    for k in 1..30 {
        term = scaled(&term.matmul(&x), 1.0 / k as f64);
        sum = plus(&sum, &term);
    }
    for _ in 0..s {
        sum = sum.matmul(&sum);
    }
    sum
}

/// L(A, E), the Fréchet derivative of the exponential, as the top-right
/// block of exp([[A, E], [0, A]]) by [`expm_taylor`].
pub fn expm_frechet_taylor<T: Scalar>(a: &Dense<T>, e: &Dense<T>) -> Dense<T> {
    let n = a.rows;
    let block = Dense::from_fn(2 * n, 2 * n, |i, j| match (i < n, j < n) {
        (true, true) => a[(i, j)],
        (true, false) => e[(i, j - n)],
        (false, false) => a[(i - n, j - n)],
        (false, true) => T::zero(),
    });
    let big = expm_taylor(&block);
    Dense::from_fn(n, n, |i, j| big[(i, j + n)])
}

/// S and S⁻¹ for a non-normal, well-conditioned S = Q (I + N): Q a random
/// unitary and N strictly upper triangular with entries of size ½, so that
/// S⁻¹ = (I − N + N² − …) Qᴴ holds exactly in exact arithmetic (N is
/// nilpotent; in floating point to rounding). A = S diag(d) S⁻¹ then has
/// f(A) = S diag(f(d)) S⁻¹ for every primary function f.
pub fn similarity<T: Scalar>(n: usize, seed: u64) -> (Dense<T>, Dense<T>) {
    let q = crate::dense::Rng::new(seed).unitary::<T>(n);
    let r = crate::dense::Rng::new(seed + 1).matrix::<T>(n, n);
    let upper =
        Dense::from_fn(n, n, |i, j| if j > i { r[(i, j)].scale(Re::<T>::from_f64(0.5)) } else { T::zero() });
    let eye = Dense::<T>::eye(n, n);
    let mut inverse = eye.clone();
    let mut power = eye.clone();
    for k in 1..n {
        power = power.matmul(&upper);
        inverse = plus(&inverse, &scaled(&power, if k % 2 == 1 { -1.0 } else { 1.0 }));
    }
    (q.matmul(&plus(&eye, &upper)), inverse.matmul(&q.adjoint()))
}

/// S diag(d) S⁻¹ with S from [`similarity`] (seed `seed`): eigenvalues `d`,
/// non-normal.
pub fn with_eigenvalues<T: Scalar>(d: &[f64], seed: u64) -> Dense<T> {
    let (s, s_inv) = similarity::<T>(d.len(), seed);
    let d: Vec<Re<T>> = d.iter().map(|&x| Re::<T>::from_f64(x)).collect();
    s.scale_cols(&d).matmul(&s_inv)
}

/// λI + N with N random on the superdiagonal only: one Jordan block, the
/// eigenvalue λ defective.
pub fn jordan_block<T: Scalar>(n: usize, lambda: f64, seed: u64) -> Dense<T> {
    let r = crate::dense::Rng::new(seed).matrix::<T>(n, n);
    Dense::from_fn(n, n, |i, j| match j as isize - i as isize {
        0 => T::from_real(Re::<T>::from_f64(lambda)),
        1 => r[(i, j)],
        _ => T::zero(),
    })
}
