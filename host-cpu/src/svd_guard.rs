//! The SVD accuracy guard. faer's divide-and-conquer bidiagonal SVD (used for
//! min(m, n) ≥ 128) can return inaccurate factors without an error. Instead of
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
//! magnitude. A factorization that fails is recomputed with the QR algorithm.

use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::matmul::matmul;
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, ColRef, MatMut, MatRef, Par};
use lindiff_core::{RealScalar, Scalar};

type Real<T> = <T as Scalar>::Real;

/// Scratch of [`accepts`] for an m×n matrix.
pub fn scratch<T: Field>(m: usize, n: usize, _k: usize) -> StackReq {
    temp_mat_scratch::<T>(m.max(n), 4)
}

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
}

fn norm<T: Field>(x: MatRef<'_, T>) -> Real<T> {
    // Scaled so that huge or tiny entries neither overflow nor underflow.
    let mut scale = Real::<T>::zero();
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            scale = scale.max_real(Scalar::abs(x[(i, j)]));
        }
    }
    if scale == Real::<T>::zero() || !scale.is_finite_real() {
        return scale;
    }
    let mut sum = Real::<T>::zero();
    for j in 0..x.ncols() {
        for i in 0..x.nrows() {
            sum += Scalar::abs2(x[(i, j)].scale(Real::<T>::one() / scale));
        }
    }
    scale * Scalar::sqrt(sum)
}

/// `out = op · x` for a plain or adjoint `op` (faer's matrix-vector
/// kernels: SIMD, no allocation).
fn apply<T: Field>(op: MatRef<'_, T>, adjoint: bool, x: MatRef<'_, T>, out: MatMut<'_, T>) {
    if adjoint {
        matmul(out, Accum::Replace, op.adjoint(), x, T::one(), Par::Seq);
    } else {
        matmul(out, Accum::Replace, op, x, T::one(), Par::Seq);
    }
}

/// `true` when `q` has orthonormal columns to within `tol` on one probe.
fn orthonormal<T: Field>(
    q: MatRef<'_, T>,
    probe: &mut Probe,
    tol: Real<T>,
    mut w: MatMut<'_, T>,
    mut p: MatMut<'_, T>,
    mut r: MatMut<'_, T>,
) -> bool {
    let c = q.ncols();
    for i in 0..c {
        w[(i, 0)] = probe.next::<T>();
    }
    let w = w.rb().subrows(0, c);
    apply(q, false, w, p.rb_mut().subrows_mut(0, q.nrows()));
    apply(q, true, p.rb().subrows(0, q.nrows()), r.rb_mut().subrows_mut(0, c));
    for i in 0..c {
        r[(i, 0)] -= w[(i, 0)];
    }
    let error = norm(r.rb().subrows(0, c));
    error.is_finite_real() && error <= tol * norm(w)
}

/// `true` when `u diag(s) vᴴ` is an accurate SVD of `a`: see the module docs.
/// `s` holds the singular values as `T` (imaginary parts zero); `u`, `v` are
/// thin or full. Mismatched shapes, or a `stack` smaller than
/// [`scratch`]`(m, n, k)`, are rejected (`false`).
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
    // (`apply` and the probe loops fill exactly the ranges they later read).
    let (mut tmp, _) = unsafe { temp_mat_uninit::<T, _, _>(m.max(n), 4, stack) };
    let mut tmp = tmp.as_mat_mut();
    let (x, rest) = tmp.rb_mut().split_at_col_mut(1);
    let (ax, rest) = rest.split_at_col_mut(1);
    let (t, y) = rest.split_at_col_mut(1);
    let (mut x, mut ax, mut t, mut y) = (x, ax, t, y);
    let mut probe = Probe(0x9E37_79B9_7F4A_7C15 ^ ((m as u64) << 32) ^ n as u64);
    let (uk, vk) = (u.subcols(0, k), v.subcols(0, k));
    for _ in 0..2 {
        for i in 0..n {
            x[(i, 0)] = probe.next::<T>();
        }
        let xs = x.rb().subrows(0, n);
        apply(a, false, xs, ax.rb_mut().subrows_mut(0, m));
        apply(vk, true, xs, t.rb_mut().subrows_mut(0, k));
        for i in 0..k {
            t[(i, 0)] = t[(i, 0)].scale(Scalar::re(s[i]));
        }
        apply(uk, false, t.rb().subrows(0, k), y.rb_mut().subrows_mut(0, m));
        for i in 0..m {
            y[(i, 0)] = ax[(i, 0)] - y[(i, 0)];
        }
        let residual = norm(y.rb().subrows(0, m));
        // A NaN residual must fail too, hence the finiteness test.
        if !residual.is_finite_real() || residual > tol * norm_a * norm(xs) {
            return false;
        }
    }
    orthonormal(u, &mut probe, tol, x.rb_mut(), ax.rb_mut(), t.rb_mut())
        && orthonormal(v, &mut probe, tol, x.rb_mut(), ax.rb_mut(), t.rb_mut())
}

/// Test hook (feature `test-hooks`): while set, the guard rejects every
/// factorization it checks, so the QR-algorithm fallback runs.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub static FORCE_REJECTION: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// Test hook (feature `test-hooks`): how many times the QR fallback ran.
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
