//! The `matfun` feature's checks: matrix functions and their gradients at
//! the firmware's order, with no heap (the allocator refuses every request,
//! so a product that reached for it would end the run).
//!
//! The test matrix is the symmetric A = Q diag(λ) Qᵀ (Q the suite's
//! orthogonal Q, λ evenly spaced over [−4, 4]), so every expectation is a
//! closed form in Q and λ:
//! * `expm`, `expm_hermitian`: e^A = Q diag(e^λ) Qᵀ.
//! * `sqrtm_psd`, `sqrtm`: √(Q diag(μ²) Qᵀ) = Q diag(μ) Qᵀ with
//!   μ_i = 1 + i/4; `logm`: log(Q diag(μ²) Qᵀ) = Q diag(2 ln μ) Qᵀ.
//! * `grad ⟨C, f(A)⟩` for f = exp through both routes: the Daleckii–Krein
//!   formula Q (Γ ∘ (Qᵀ C Q)) Qᵀ, Γ_ij = (e^λi − e^λj)/(λi − λj) off the
//!   diagonal and e^λi on it (C = the suite's orthogonal R, a dense
//!   matrix, so every entry of Γ counts). `expm_hermitian` reads A's lower
//!   triangle, so its gradient is that one folded onto the lower triangle:
//!   G_ij + G_ji below the diagonal, zero above.

use super::{execute, Suite, MAX_N};
use crate::dense::Mat;
use crate::programs::{self, MatrixFn};
use crate::sink::Sink;
use lindiff_core::{Error, RealScalar};

impl<T: RealScalar, const CAP: usize, S: Sink> Suite<'_, T, CAP, S> {
    /// Runs the matrix-function checks.
    pub(super) fn matrix_functions(&mut self) -> Result<(), super::Failed> {
        self.measured("expm", |s| s.forward("expm: e^A = Q e^L Q^T", MatrixFn::Expm))?;
        self.measured("expm_hermitian", |s| {
            s.forward("expm_hermitian: e^A = Q e^L Q^T", MatrixFn::ExpmHermitian)
        })?;
        self.measured("sqrtm_psd", |s| {
            s.forward("sqrtm_psd: sqrt(Q M^2 Q^T) = Q M Q^T", MatrixFn::SqrtmPsd)
        })?;
        self.measured("sqrtm", |s| s.forward("sqrtm: sqrt(Q M^2 Q^T) = Q M Q^T", MatrixFn::Sqrtm))?;
        self.measured("logm", |s| s.forward("logm: log(Q M^2 Q^T) = Q 2 log(M) Q^T", MatrixFn::Logm))?;
        self.measured("grad expm", |s| s.gradient("grad <C, expm(A)>: Daleckii-Krein", MatrixFn::Expm))?;
        self.measured("grad expm_hermitian", |s| {
            s.gradient("grad <C, expm_hermitian(A)>: Daleckii-Krein", MatrixFn::ExpmHermitian)
        })
    }

    /// λ_i = −4 + 8i/(n − 1).
    fn spectrum(&self) -> [T; MAX_N] {
        let n = self.n;
        let mut lambda = [T::zero(); MAX_N];
        for (i, l) in lambda.iter_mut().enumerate().take(n) {
            *l = T::from_f64(-4.0) + T::from_usize(8 * i) / T::from_usize(n.max(2) - 1);
        }
        lambda
    }

    /// Q diag(d) Qᵀ.
    fn spectral(&self, d: &[T]) -> Mat<T, CAP> {
        self.q.scale_cols(d).mul(&self.q.transpose())
    }

    /// f(A) for the function's input A (λ, or μ² for the square root)
    /// against Q diag(f) Qᵀ.
    fn forward(&mut self, name: &'static str, f: MatrixFn) -> Result<(), Error> {
        let n = self.n;
        let lambda = self.spectrum();
        let (mut input, mut want) = ([T::zero(); MAX_N], [T::zero(); MAX_N]);
        for i in 0..n {
            (input[i], want[i]) = match f {
                MatrixFn::Expm | MatrixFn::ExpmHermitian => (lambda[i], lambda[i].exp()),
                MatrixFn::SqrtmPsd | MatrixFn::Sqrtm => {
                    let mu = T::one() + T::from_usize(i) / T::from_usize(4);
                    (mu * mu, mu)
                }
                MatrixFn::Logm => {
                    let mu = T::one() + T::from_usize(i) / T::from_usize(4);
                    (mu * mu, T::from_f64(2.0) * mu.ln())
                }
            };
        }
        let a = self.spectral(&input[..n]);
        let want = self.spectral(&want[..n]);
        let program = programs::matrix_function::<T>(n, f)?;
        let Suite { arena, report, .. } = self;
        execute(arena, report, name, &program, &[(a.as_slice(), &[n, n])], &mut |rep, got| {
            rep.compare(name, got[0], want.as_slice());
        })
    }

    /// ∂⟨C, e^A⟩/∂A = Q (Γ ∘ (Qᵀ C Q)) Qᵀ, and the loss ⟨C, e^A⟩.
    fn gradient(&mut self, name: &'static str, f: MatrixFn) -> Result<(), Error> {
        let n = self.n;
        let lambda = self.spectrum();
        let mut exp = [T::zero(); MAX_N];
        for (e, l) in exp.iter_mut().zip(&lambda).take(n) {
            *e = l.exp();
        }
        let a = self.spectral(&lambda[..n]);
        let c = self.r;
        let mut inner = self.q.transpose().mul(&c).mul(&self.q);
        for j in 0..n {
            for i in 0..n {
                let gamma = if i == j { exp[i] } else { (exp[i] - exp[j]) / (lambda[i] - lambda[j]) };
                inner.set(i, j, gamma * inner.at(i, j));
            }
        }
        let mut want_g = self.q.mul(&inner).mul(&self.q.transpose());
        if let MatrixFn::ExpmHermitian = f {
            // It reads A's lower triangle: an entry below the diagonal
            // stands for itself and its mirror, one above it for nothing.
            for j in 0..n {
                for i in 0..j {
                    want_g.set(j, i, want_g.at(j, i) + want_g.at(i, j));
                    want_g.set(i, j, T::zero());
                }
            }
        }
        let ea = self.spectral(&exp[..n]);
        let want_loss = [(0..n * n).fold(T::zero(), |acc, k| acc + c.as_slice()[k] * ea.as_slice()[k])];
        let program = programs::grad_matrix_function::<T>(n, f)?;
        let Suite { arena, report, .. } = self;
        let params = [(a.as_slice(), &[n, n][..]), (c.as_slice(), &[n, n][..])];
        execute(arena, report, name, &program, &params, &mut |rep, got| {
            rep.compare("  loss <C, e^A>", got[0], &want_loss);
            rep.compare(name, got[1], want_g.as_slice());
        })
    }
}
