//! The SVD accuracy guard. faer's divide-and-conquer bidiagonal SVD (used for
//! min(m, n) ≥ 128 where lindiff's own does not serve) can return inaccurate
//! factors without an error (docs/faer-scratch-apis.md, §5, has a case);
//! lindiff's own (`super::bidiagonal_dc`) is checked the same way. Instead of
//! a full residual ‖A − U S Vᴴ‖ (one more O(mn·k) product), the guard checks
//! with a few fixed pseudo-random probe vectors — O(mn) work:
//!
//! * residual: ‖A x − U (s ∘ Vᴴ x)‖ ≤ τ·‖A‖_F·‖x‖ for two probes x;
//! * orthogonality: ‖Uᴴ U w − w‖ ≤ τ·‖w‖ and the same for V;
//! * s finite, non-negative and non-increasing,
//!
//! with τ = 32·√max(m, n)·ε. It is a randomized check (two residual probes,
//! one per orthogonality test), and ‖A‖_F makes the residual bound up to
//! √rank looser than one in ‖A‖₂. A backward-stable SVD passes (its residual
//! is O(√n·ε)‖A‖); an error of 1e-8·‖A‖ in any factor fails by orders of
//! magnitude. A factorization that fails is recomputed: faer's with faer's QR
//! algorithm, lindiff's own with the one-sided Jacobi SVD (`super::svd`).

use super::frobenius::frobenius_norm as norm;
use crate::field::Field;
use crate::gemm::matmul;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, ColRef, MatMut, MatRef, Par};
use lindiff_core::{RealScalar, Scalar};

type Real<T> = <T as Scalar>::Real;

/// Scratch of [`accepts`] for an m×n matrix.
pub fn scratch<T: Field>(m: usize, n: usize, _k: usize) -> StackReq {
    temp_mat_scratch::<T>(m.max(n), 3 * PROBES)
}

/// Residual probes: applied as one block, so A, U and V are each read once.
const PROBES: usize = 2;

/// Deterministic probe entries in [-1, 1) (xorshift64*), so a given matrix is
/// always judged the same way.
struct Probe(u64);

impl Probe {
    fn next<T: Field>(&mut self) -> T {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        T::from_f64(bits as f64 / (1u64 << 52) as f64 - 1.0)
    }

    /// Fills `x` column by column.
    fn fill<T: Field>(&mut self, mut x: MatMut<'_, T>) {
        for j in 0..x.ncols() {
            for i in 0..x.nrows() {
                x[(i, j)] = self.next::<T>();
            }
        }
    }
}

/// `true` when `q` has orthonormal columns to within `tol` on one probe:
/// ‖Qᴴ(Q w) − w‖ ≤ tol·‖w‖. `w`, `p`, `r` are scratch columns of at least
/// q.ncols(), q.nrows() and q.ncols() rows.
fn orthonormal<T: Field>(
    q: MatRef<'_, T>,
    probe: &mut Probe,
    tol: Real<T>,
    w: MatMut<'_, T>,
    p: MatMut<'_, T>,
    r: MatMut<'_, T>,
) -> bool {
    let (m, c) = (q.nrows(), q.ncols());
    let (mut w, mut p, mut r) = (w.subrows_mut(0, c), p.subrows_mut(0, m), r.subrows_mut(0, c));
    probe.fill(w.rb_mut());
    matmul(p.rb_mut(), Accum::Replace, q, w.rb(), T::one(), Par::Seq);
    r.copy_from(w.rb());
    matmul(r.rb_mut(), Accum::Add, q.adjoint(), p.rb(), -T::one(), Par::Seq);
    let error = norm(r.rb());
    error.is_finite_real() && error <= tol * norm(w.rb())
}

/// `true` when `u diag(s) vᴴ` is an accurate SVD of `a`: see the module docs.
/// `s` holds the singular values as `T` (imaginary parts zero); `u`, `v` are
/// thin or full, with any strides. Mismatched shapes, or a `stack` smaller
/// than [`scratch`]`(m, n, k)`, are rejected (`false`).
pub fn accepts<T: Field>(
    a: MatRef<'_, T>,
    s: ColRef<'_, T>,
    u: MatRef<'_, T>,
    v: MatRef<'_, T>,
    stack: &mut MemStack,
) -> bool {
    let (m, n) = (a.nrows(), a.ncols());
    let k = s.nrows();
    // Factors that do not fit `a`, or a stack too small for the probes, are
    // rejected rather than panicking.
    let fits = k == m.min(n) && u.nrows() == m && v.nrows() == n && u.ncols() >= k && v.ncols() >= k;
    if !fits || !stack.can_hold(scratch::<T>(m, n, k)) {
        return false;
    }
    let zero = Real::<T>::zero();
    let mut previous = Real::<T>::MAX;
    for i in 0..k {
        let x = s[i];
        let value = Scalar::re(x);
        if !Scalar::is_finite(x) || value < zero || value > previous {
            return false;
        }
        previous = value;
    }
    let tol = Real::<T>::from_usize(32) * Scalar::sqrt(Real::<T>::from_usize(m.max(n))) * Real::<T>::EPSILON;
    let norm_a = norm(a);
    // SAFETY: every element of the temporaries is written before it is read
    // (the probe fills, `matmul` with `Accum::Replace` and `copy_from` write
    // exactly the ranges later read).
    let (mut tmp, _) = unsafe { temp_mat_uninit::<T, _, _>(m.max(n), 3 * PROBES, stack) };
    let mut tmp = tmp.as_mat_mut();
    let mut probe = Probe(0x9E37_79B9_7F4A_7C15 ^ ((m as u64) << 32) ^ n as u64);
    {
        let (x, rest) = tmp.rb_mut().split_at_col_mut(PROBES);
        let (r, t) = rest.split_at_col_mut(PROBES);
        let (mut x, mut r, mut t) = (x.subrows_mut(0, n), r.subrows_mut(0, m), t.subrows_mut(0, k));
        let (uk, vk) = (u.subcols(0, k), v.subcols(0, k));
        // R = A X − U (s ∘ Vᴴ X), every probe at once.
        probe.fill(x.rb_mut());
        matmul(r.rb_mut(), Accum::Replace, a, x.rb(), T::one(), Par::Seq);
        matmul(t.rb_mut(), Accum::Replace, vk.adjoint(), x.rb(), T::one(), Par::Seq);
        for j in 0..PROBES {
            for i in 0..k {
                t[(i, j)] = t[(i, j)].scale(Scalar::re(s[i]));
            }
        }
        matmul(r.rb_mut(), Accum::Add, uk, t.rb(), -T::one(), Par::Seq);
        for j in 0..PROBES {
            let residual = norm(r.rb().col(j).as_mat());
            // A NaN residual must fail too, hence the finiteness test.
            if !residual.is_finite_real() || residual > tol * norm_a * norm(x.rb().col(j).as_mat()) {
                return false;
            }
        }
    }
    // Orthogonality: one probe each for U and V, in the first three columns.
    let (w, rest) = tmp.split_at_col_mut(1);
    let (p, rest) = rest.split_at_col_mut(1);
    let (mut w, mut p, mut r) = (w, p, rest.subcols_mut(0, 1));
    orthonormal(u, &mut probe, tol, w.rb_mut(), p.rb_mut(), r.rb_mut())
        && orthonormal(v, &mut probe, tol, w.rb_mut(), p.rb_mut(), r.rb_mut())
}

/// Test hook (feature `test-hooks`): while set, the guard rejects every
/// factorization it checks, so the fallback runs (faer's QR algorithm, or the
/// Jacobi SVD after lindiff's own divide and conquer).
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub static FORCE_REJECTION: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Test hook (feature `test-hooks`): how many times the fallback ran.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub static FALLBACKS: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Counts a fallback (test builds only).
pub(crate) fn note_fallback() {
    #[cfg(feature = "test-hooks")]
    FALLBACKS.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
}

/// `true` when the test hook forces a rejection.
pub(crate) fn forced_rejection() -> bool {
    #[cfg(feature = "test-hooks")]
    {
        FORCE_REJECTION.load(core::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(feature = "test-hooks"))]
    {
        false
    }
}
