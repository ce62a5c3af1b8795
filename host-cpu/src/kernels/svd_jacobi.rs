//! A one-sided Jacobi SVD (Hestenes) for small matrices: the SVD of builds
//! with the `svd-jacobi` feature, in place of faer's (see the feature's
//! notes in the crate docs), and of `std` builds up to 8×8 and for
//! `SvdDriver::Jacobi` (`super::svd::jacobi`).
//!
//! The columns of W = A (Aᴴ when A is wide, so that W is tall, mm × nn with
//! mm ≥ nn) are made pairwise orthogonal by plane rotations applied from the
//! right, W ← W J, in sweeps over the pairs (p, q) in round-robin order; the
//! rotations accumulate into V = J when the right factor is wanted. A pair is
//! left alone when |⟨w_p, w_q⟩| ≤ tol·‖w_p‖‖w_q‖ with tol = √mm·ε, and the
//! iteration has converged when a whole sweep leaves every pair alone. Then
//! σ_j = ‖w_j‖, sorted descending, and u_j = w_j / σ_j; the left factor is
//! completed to an orthonormal set where σ_j is (numerically) zero and where
//! a full factor asks for more columns than A has. Complex pairs use the
//! complex rotation [[c, s·e^{iφ}], [−s·e^{−iφ}, c]] with e^{iφ} the phase of
//! ⟨w_p, w_q⟩, so the real and complex cases are one code path.
//!
//! Cost: O(mm·nn²) per sweep, with 6–12 sweeps ([`MAX_SWEEPS`] has the
//! slow cases): meant for small matrices (firmware; natively up to 8×8,
//! where it takes 0.55–0.63 of faer's time), where it is accurate (high
//! relative accuracy) and its code is a fraction of faer's
//! bidiagonalisation, QR iteration and (always linked) divide and conquer. Everything lives in the caller's
//! workspace ([`scratch`]); nothing allocates.

use super::scaling::Scaling;
use crate::batch::Failure;
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{ColMut, MatMut, MatRef};
use lindiff_core::{RealScalar, Scalar};

type Re<T> = <T as Scalar>::Real;

/// Sweeps before giving up with `NonConvergence`. Convergence is quadratic
/// only once the columns are nearly orthogonal; before that it is linear,
/// and slowest for singular values spread down to the rounding level
/// (columns that small are disturbed again by every rotation with a large
/// one): values graded over 15 decades took 20 sweeps at 32×32, 27 at
/// 64×64, 34 at 128×128, 37 at 200×130 and 45 at 256×256 (f64), where a
/// cap of 30 (LAPACK's `?gesvj`'s, this kernel's before) failed from
/// 128×128 on. A well-conditioned matrix takes 6–12. The count grows with
/// the size, so a larger matrix of that kind can pass the cap: it is then
/// `NonConvergence`, never a result.
const MAX_SWEEPS: usize = 80;

/// The extra workspace of [`svd`] for an m×n `a` whose U has `ucols` and V
/// `vcols` columns: a tall working copy when the factor that holds it (U
/// for m ≥ n, V otherwise) is not asked for (an empty one otherwise, which
/// still takes its alignment).
pub(super) fn scratch<T: Field>(m: usize, n: usize, ucols: usize, vcols: usize) -> StackReq {
    let (mm, nn, left_cols) = if m >= n { (m, n, ucols) } else { (n, m, vcols) };
    temp_mat_scratch::<T>(mm, if left_cols == 0 { nn } else { 0 })
}

/// The SVD of `a · 2^e` (m×n, k = min(m, n), e the exponent of `scaling`;
/// `a` finite): the singular values, descending, into `s` (k entries, real
/// values stored as `T`), U into `u` and V (not Vᴴ) into `v` — each with 0
/// columns (not computed), k (thin) or m / n (full) columns. Phases are
/// left as they come (the caller canonicalises).
pub(super) fn svd<T: Field>(
    a: MatRef<'_, T>,
    scaling: Scaling,
    mut s: ColMut<'_, T>,
    u: MatMut<'_, T>,
    v: MatMut<'_, T>,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    let (m, n) = (a.nrows(), a.ncols());
    let tall = m >= n;
    // The tall problem W = A or Aᴴ: its left factor ("left") holds W and
    // becomes U (or V), its right factor ("right") accumulates the rotations.
    let (mm, nn) = if tall { (m, n) } else { (n, m) };
    let (left_out, mut right) = if tall { (u, v) } else { (v, u) };
    let work_cols = if left_out.ncols() == 0 { nn } else { 0 };
    // SAFETY: the first nn columns are written (the copy of A) before they
    // are read; a working copy has no others.
    let (mut work, _) = unsafe { temp_mat_uninit::<T, _, _>(mm, work_cols, stack) };
    let mut left = if work_cols > 0 { work.as_mat_mut() } else { left_out };
    if tall {
        left.rb_mut().get_mut(.., ..nn).copy_from(a);
    } else {
        left.rb_mut().get_mut(.., ..nn).copy_from(a.adjoint());
    }
    scaling.apply_mat(left.rb_mut().get_mut(.., ..nn));
    let max = scale_to_unit(left.rb_mut().get_mut(.., ..nn));
    let with_right = right.ncols() > 0;
    if with_right {
        right.fill(T::zero());
        right.rb_mut().diagonal_mut().fill(T::one());
    }
    if !sweeps(left.rb_mut().get_mut(.., ..nn), right.rb_mut(), with_right) {
        return Err(Failure::NonConvergence);
    }
    let one = Re::<T>::one();
    let tiny = tiny::<T>();
    // σ (of the scaled W), sorted descending with the columns they belong to.
    for j in 0..nn {
        s[j] = T::from_real(norm2(contiguous(left.rb_mut().col_mut(j))).sqrt());
    }
    for j in 0..nn {
        let mut best = j;
        for i in j + 1..nn {
            if Scalar::re(s[i]) > Scalar::re(s[best]) {
                best = i;
            }
        }
        if best != j {
            let (x, y) = (s[j], s[best]);
            s[j] = y;
            s[best] = x;
            swap_cols(left.rb_mut(), j, best);
            if with_right {
                swap_cols(right.rb_mut(), j, best);
            }
        }
    }
    // u_j = w_j / σ_j for the nonzero σ_j; then the completion.
    let mut rank = 0;
    while rank < nn && Scalar::re(s[rank]) >= tiny {
        let r = one / Scalar::re(s[rank]);
        contiguous(left.rb_mut().col_mut(rank)).iter_mut().for_each(|x| *x = x.scale(r));
        rank += 1;
    }
    for j in rank..left.ncols() {
        complete(left.rb_mut(), j);
    }
    for j in 0..nn {
        s[j] = T::from_real(Scalar::re(s[j]) * max);
    }
    Ok(())
}

/// Columns shorter than this are taken as zero: never rotated (their
/// squared norms would lose precision to underflow) and replaced in U by
/// the completion. Relative to the largest entry, 1 after
/// [`scale_to_unit`], that is below 3e-16 in f32 and 1e-146 in f64, far
/// under the rounding error of A.
fn tiny<T: Field>() -> Re<T> {
    (Re::<T>::MIN_POSITIVE / Re::<T>::EPSILON).sqrt()
}

with_avx2! {
    /// The Jacobi sweeps over the columns of `w` (rotations accumulated
    /// into `v` when `with_v`), until a whole sweep leaves every pair
    /// alone: `false` when [`MAX_SWEEPS`] did not get there.
    fn sweeps<T: Field>(w: MatMut<'_, T>, v: MatMut<'_, T>, with_v: bool) -> bool => sweeps_body
}

/// [`sweeps`]. A sweep visits the pairs round-robin (the "tournament"
/// ordering): each round pairs every column with another, so consecutive
/// pairs touch different columns and their rotations (square roots and
/// divisions, the latency of a pair) overlap in the CPU instead of waiting
/// for each other as the cyclic (p, p+1), (p, p+2), … ordering's do. Both
/// orderings converge (ultimately quadratically, each a permutation of the
/// pairs per sweep).
#[inline(always)]
fn sweeps_body<T: Field>(mut w: MatMut<'_, T>, mut v: MatMut<'_, T>, with_v: bool) -> bool {
    let nn = w.ncols();
    let mm = w.nrows();
    let one = Re::<T>::one();
    let tol = Re::<T>::from_usize(mm).sqrt() * Re::<T>::EPSILON;
    let tiny = tiny::<T>();
    // From here on √(1 + ζ²) rounds to |ζ| (1 is under half an ulp of ζ²),
    // and ζ² may overflow: take |ζ| itself.
    let big = (Re::<T>::from_usize(2) / Re::<T>::EPSILON).sqrt();
    // Round-robin over an even count of slots; slot `nn` (odd nn) is a bye.
    let slots = nn + nn % 2;
    for _ in 0..MAX_SWEEPS {
        let mut rotated = false;
        for round in 0..slots.saturating_sub(1) {
            for i in 0..slots / 2 {
                let (p, q) = tournament_pair(slots, round, i);
                let (p, q) = (p.min(q), p.max(q));
                if q >= nn {
                    continue;
                }
                let (wp, wq) = w.rb_mut().two_cols_mut(p, q);
                let (wp, wq) = (contiguous(wp), contiguous(wq));
                let (alpha, beta, gamma) = pair_sums(wp, wq);
                let (sa, sb, g) = (alpha.sqrt(), beta.sqrt(), Scalar::abs(gamma));
                if sa < tiny || sb < tiny || g <= tol * sa * sb {
                    continue;
                }
                rotated = true;
                // tan θ: the smaller root of t² + 2ζt − 1 = 0.
                let zeta = (beta - alpha) / (g + g);
                let az = Scalar::abs(zeta);
                let root = if az < big { (one + zeta * zeta).sqrt() } else { az };
                let t = one / (az + root);
                let t = if zeta < Re::<T>::zero() { -t } else { t };
                let c = one / (one + t * t).sqrt();
                // s·e^{iφ}, with e^{iφ} = γ/|γ| (±1 for real pairs).
                let e = gamma.scale(c * t / g);
                rotate(wp, wq, c, e);
                if with_v {
                    let (vp, vq) = v.rb_mut().two_cols_mut(p, q);
                    rotate(contiguous(vp), contiguous(vq), c, e);
                }
            }
        }
        if !rotated {
            return true;
        }
    }
    false
}

/// Pair `i` of round `round` in the round-robin over `slots` (even)
/// slots: slot 0 stays, the others turn one place per round, and the
/// slots are paired first with last inward; every pair of slots meets
/// exactly once in `slots − 1` rounds.
#[inline(always)]
fn tournament_pair(slots: usize, round: usize, i: usize) -> (usize, usize) {
    let turn = |x: usize| if x == 0 { 0 } else { 1 + (x - 1 + round) % (slots - 1) };
    (turn(i), turn(slots - 1 - i))
}

/// (Σ |x_i|², Σ |y_i|², ⟨x, y⟩ = Σ conj(x_i)·y_i) in one pass, four
/// partial sums each (so the additions vectorize and overlap).
#[inline(always)]
fn pair_sums<T: Field>(x: &[T], y: &[T]) -> (Re<T>, Re<T>, T) {
    let zero = Re::<T>::zero();
    let (mut a, mut b, mut g) = ([zero; 4], [zero; 4], [T::zero(); 4]);
    let (xs, ys) = (x.chunks_exact(4), y.chunks_exact(4));
    let (xr, yr) = (xs.remainder(), ys.remainder());
    for (xc, yc) in xs.zip(ys) {
        for l in 0..4 {
            a[l] += Scalar::abs2(xc[l]);
            b[l] += Scalar::abs2(yc[l]);
            g[l] += Scalar::conj(xc[l]) * yc[l];
        }
    }
    for (l, (&xv, &yv)) in xr.iter().zip(yr).enumerate() {
        a[l] += Scalar::abs2(xv);
        b[l] += Scalar::abs2(yv);
        g[l] += Scalar::conj(xv) * yv;
    }
    ((a[0] + a[1]) + (a[2] + a[3]), (b[0] + b[1]) + (b[2] + b[3]), (g[0] + g[1]) + (g[2] + g[3]))
}

/// The contiguous slice of a column of one of the temporaries (faer's
/// temporaries and lindiff's outputs are column-major).
fn contiguous<T: Field>(c: ColMut<'_, T>) -> &mut [T] {
    c.try_as_col_major_mut().expect("SVD temporaries are column-major").as_slice_mut()
}

/// Σ |x_i|².
fn norm2<T: Field>(x: &[T]) -> Re<T> {
    x.iter().fold(Re::<T>::zero(), |acc, &v| acc + Scalar::abs2(v))
}

/// ⟨x, y⟩ = Σ conj(x_i)·y_i.
fn dot<T: Field>(x: &[T], y: &[T]) -> T {
    x.iter().zip(y).fold(T::zero(), |acc, (&a, &b)| acc + Scalar::conj(a) * b)
}

/// (x, y) ← (c·x − conj(e)·y, e·x + c·y): the rotation with cosine `c` and
/// `e` = sine · phase.
fn rotate<T: Field>(x: &mut [T], y: &mut [T], c: Re<T>, e: T) {
    let ec = Scalar::conj(e);
    for (a, b) in x.iter_mut().zip(y.iter_mut()) {
        let (xa, yb) = (*a, *b);
        *a = xa.scale(c) - ec * yb;
        *b = e * xa + yb.scale(c);
    }
}

/// Swaps columns i ≠ j.
fn swap_cols<T: Field>(m: MatMut<'_, T>, i: usize, j: usize) {
    let (x, y) = m.two_cols_mut(i, j);
    contiguous(x).swap_with_slice(contiguous(y));
}

/// Scales `w` so that its largest |entry| is 1 (sums of squares then
/// neither overflow nor, for the entries that matter, underflow) and
/// returns the factor that undoes it: that largest |entry| (0 for a zero
/// matrix, left as it is).
fn scale_to_unit<T: Field>(mut w: MatMut<'_, T>) -> Re<T> {
    let zero = Re::<T>::zero();
    let mut max = zero;
    for j in 0..w.ncols() {
        for &x in contiguous(w.rb_mut().col_mut(j)).iter() {
            max = max.max_real(Scalar::abs(x));
        }
    }
    if max == zero {
        return max;
    }
    // 1/max overflows for a subnormal max: first scale by 1/ε (a power of
    // two, exact), which lifts the smallest subnormal to the smallest normal.
    let lift = if max < Re::<T>::MIN_POSITIVE { Re::<T>::one() / Re::<T>::EPSILON } else { Re::<T>::one() };
    let f = Re::<T>::one() / (max * lift);
    for j in 0..w.ncols() {
        contiguous(w.rb_mut().col_mut(j)).iter_mut().for_each(|x| *x = x.scale(lift).scale(f));
    }
    max
}

/// Makes column `j` of `q` a unit vector orthogonal to its columns 0..j
/// (which are orthonormal): the standard basis vector e_i with the largest
/// component outside their span — the row i where Σ_l |q_il|² is smallest,
/// so that component has squared norm 1 − Σ_l |q_il|² ≥ (rows − j)/rows —
/// projected on their complement twice (the second pass restores
/// orthogonality to rounding), then normalised.
fn complete<T: Field>(q: MatMut<'_, T>, j: usize) {
    let rows = q.nrows();
    let (prev, rest) = q.split_at_col_mut(j);
    let x = contiguous(rest.col_mut(0));
    let mut best = (0, Re::<T>::MAX);
    for i in 0..rows {
        let weight = (0..j).fold(Re::<T>::zero(), |acc, l| acc + Scalar::abs2(prev[(i, l)]));
        if weight < best.1 {
            best = (i, weight);
        }
    }
    x.fill(T::zero());
    x[best.0] = T::one();
    for _ in 0..2 {
        for l in 0..j {
            let col = prev.rb().col(l);
            let col = col.try_as_col_major().expect("SVD temporaries are column-major").as_slice();
            let h = dot(col, x);
            x.iter_mut().zip(col).for_each(|(xi, &ci)| *xi -= ci * h);
        }
    }
    let r = Re::<T>::one() / norm2(x).sqrt();
    x.iter_mut().for_each(|xi| *xi = xi.scale(r));
}

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;
    use faer::dyn_stack::MemBuffer;
    use faer::Mat;
    use num_complex::Complex;

    /// A deterministic pseudo-random entry in [−1, 1).
    fn entry(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn random<T: Field>(m: usize, n: usize, seed: &mut u64) -> Mat<T> {
        Mat::from_fn(m, n, |_, _| {
            let re = entry(seed);
            let im = entry(seed);
            T::from_parts(Re::<T>::from_f64(re), Re::<T>::from_f64(im))
        })
    }

    /// U, s, V.
    type Factors<T> = (Mat<T>, Vec<f64>, Mat<T>);

    /// Runs [`svd`] with both factors full or thin, as `svd::factor`
    /// does: on `a` scaled into the safe range, with the values scaled back.
    fn run<T: Field>(a: MatRef<'_, T>, full: bool) -> Result<Factors<T>, Failure> {
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let (uc, vc) = if full { (m, n) } else { (k, k) };
        let mut u = Mat::<T>::zeros(m, uc);
        let mut v = Mat::<T>::zeros(n, vc);
        let mut s = Mat::<T>::zeros(k, 1);
        let mut mem = MemBuffer::new(scratch::<T>(m, n, uc, vc));
        let scaling = crate::kernels::range::check_range(a, "a", crate::kernels::scaling::Range::Squares)?;
        svd(a, scaling, s.col_mut(0), u.as_mut(), v.as_mut(), MemStack::new(&mut mem))?;
        Ok((u, (0..k).map(|i| scaling.undo(Scalar::re(s[(i, 0)])).to_f64()).collect(), v))
    }

    /// ‖QᴴQ − I‖_max.
    fn orthonormality<T: Field>(q: MatRef<'_, T>) -> f64 {
        let mut worst = 0.0f64;
        for i in 0..q.ncols() {
            for j in 0..q.ncols() {
                let d = dot(
                    q.col(i).try_as_col_major().unwrap().as_slice(),
                    q.col(j).try_as_col_major().unwrap().as_slice(),
                );
                let want = if i == j { T::one() } else { T::zero() };
                worst = worst.max(Scalar::abs(d - want).to_f64());
            }
        }
        worst
    }

    /// max |A − U_k diag(s) V_kᴴ|.
    fn residual<T: Field>(a: MatRef<'_, T>, u: &Mat<T>, s: &[f64], v: &Mat<T>) -> f64 {
        let mut worst = 0.0f64;
        for i in 0..a.nrows() {
            for j in 0..a.ncols() {
                let mut x = T::zero();
                for (l, &sl) in s.iter().enumerate() {
                    x += u[(i, l)] * Scalar::conj(v[(j, l)]).scale(Re::<T>::from_f64(sl));
                }
                worst = worst.max(Scalar::abs(a[(i, j)] - x).to_f64());
            }
        }
        worst
    }

    fn check<T: Field>(a: MatRef<'_, T>, full: bool) {
        let (m, n) = (a.nrows(), a.ncols());
        let (u, s, v) = run(a, full).unwrap();
        let eps = Re::<T>::EPSILON.to_f64();
        let norm = (0..n).map(|j| (0..m).map(|i| Scalar::abs2(a[(i, j)]).to_f64()).sum::<f64>()).sum::<f64>();
        let tol = 20.0 * (m.max(n) as f64) * eps;
        assert!(s.windows(2).all(|w| w[0] >= w[1]), "{m}×{n}: s not descending: {s:?}");
        assert!(orthonormality(u.as_ref()) <= tol, "{m}×{n} U: {}", orthonormality(u.as_ref()));
        assert!(orthonormality(v.as_ref()) <= tol, "{m}×{n} V: {}", orthonormality(v.as_ref()));
        let r = residual(a, &u, &s, &v);
        assert!(r <= tol * norm.sqrt().max(f64::MIN_POSITIVE), "{m}×{n}: residual {r}");
    }

    fn all_sizes<T: Field>(seed: u64) {
        let mut seed = seed;
        for m in 0..9 {
            for n in 0..9 {
                let a = random::<T>(m, n, &mut seed);
                check(a.as_ref(), false);
                check(a.as_ref(), true);
            }
        }
        for (m, n) in [(40, 3), (3, 40), (24, 24)] {
            let a = random::<T>(m, n, &mut seed);
            check(a.as_ref(), false);
        }
    }

    /// One sweep of the round-robin order pairs every two columns exactly
    /// once, each round's pairs disjoint, for even and odd column counts.
    #[test]
    fn tournament_visits_every_pair_once() {
        for nn in 0..40usize {
            let slots = nn + nn % 2;
            let mut seen = vec![0u32; nn * nn];
            for round in 0..slots.saturating_sub(1) {
                let mut used = vec![false; slots];
                for i in 0..slots / 2 {
                    let (p, q) = super::tournament_pair(slots, round, i);
                    assert!(p != q && !used[p] && !used[q], "nn = {nn}: round {round} reuses a column");
                    used[p] = true;
                    used[q] = true;
                    let (p, q) = (p.min(q), p.max(q));
                    if q < nn {
                        seen[p * nn + q] += 1;
                    }
                }
            }
            for p in 0..nn {
                for q in p + 1..nn {
                    assert_eq!(seen[p * nn + q], 1, "nn = {nn}: pair ({p}, {q})");
                }
            }
        }
    }

    #[test]
    fn random_matrices_every_dtype() {
        all_sizes::<f32>(1);
        all_sizes::<f64>(2);
        all_sizes::<Complex<f32>>(3);
        all_sizes::<Complex<f64>>(4);
    }

    #[test]
    fn rank_deficient_and_zero() {
        // Rank 2 in 6×5: three zero singular values, U still orthonormal.
        let mut seed = 7;
        let x = random::<f64>(6, 2, &mut seed);
        let y = random::<f64>(5, 2, &mut seed);
        let a = &x * y.transpose();
        check(a.as_ref(), true);
        let (_, s, _) = run(a.as_ref(), false).unwrap();
        assert!(s[2..].iter().all(|&x| x <= 1e-14), "{s:?}");
        let z = Mat::<Complex<f32>>::zeros(4, 3);
        check(z.as_ref(), true);
        let (_, s, _) = run(z.as_ref(), false).unwrap();
        assert_eq!(s, vec![0.0; 3]);
    }

    #[test]
    fn known_values_over_the_range() {
        // diag(3, 2, 1)·10^e with rows swapped: exact singular values at
        // both ends of the f32 range (subnormal included) and in between.
        for e in [-44, -40, -30, 0, 30, 37] {
            let f = 10f32.powi(e);
            let mut a = Mat::<f32>::zeros(4, 3);
            a[(1, 0)] = 3.0 * f;
            a[(0, 1)] = 2.0 * f;
            a[(3, 2)] = f;
            let (u, s, v) = run(a.as_ref(), false).unwrap();
            let want = [3.0 * f, 2.0 * f, f];
            for i in 0..3 {
                assert!((s[i] - want[i] as f64).abs() <= 1e-6 * want[i] as f64, "10^{e}: {s:?}");
            }
            assert!(orthonormality(u.as_ref()) <= 1e-6 && orthonormality(v.as_ref()) <= 1e-6);
        }
    }

    /// I − 2 w wᴴ / wᴴw, an exactly unitary reflector (n×n).
    fn reflector<T: Field>(n: usize, seed: &mut u64) -> Mat<T> {
        let w = random::<T>(n, 1, seed);
        let ww = (0..n).map(|i| Scalar::abs2(w[(i, 0)]).to_f64()).sum::<f64>();
        Mat::from_fn(n, n, |i, j| {
            let id = if i == j { T::one() } else { T::zero() };
            id - (w[(i, 0)] * Scalar::conj(w[(j, 0)])).scale(Re::<T>::from_f64(2.0 / ww))
        })
    }

    /// H₁ diag(s) H₂ with reflectors H₁ (m×m), H₂ (n×n): singular values s.
    fn with_values<T: Field>(m: usize, n: usize, s: &[f64], seed: &mut u64) -> Mat<T> {
        let (h1, h2) = (reflector::<T>(m, seed), reflector::<T>(n, seed));
        let d = Mat::<T>::from_fn(m, n, |i, j| {
            if i == j {
                T::from_parts(Re::<T>::from_f64(s[i]), Re::<T>::from_f64(0.0))
            } else {
                T::zero()
            }
        });
        &(&h1 * &d) * &h2
    }

    fn ties<T: Field>(seed: u64) {
        let mut seed = seed;
        let tol = 50.0 * Re::<T>::EPSILON.to_f64();
        for (m, n, want) in
            [(5, 4, [2.0, 2.0, 2.0, 1.0]), (4, 6, [3.0, 1.0, 1.0, 1.0]), (4, 4, [2.0, 2.0, 0.5, 0.5])]
        {
            let a = with_values::<T>(m, n, &want, &mut seed);
            check(a.as_ref(), false);
            check(a.as_ref(), true);
            let (_, s, _) = run(a.as_ref(), false).unwrap();
            for (got, want) in s.iter().zip(want) {
                assert!((got - want).abs() <= tol * 3.0, "{m}×{n}: {s:?}");
            }
        }
    }

    #[test]
    fn tied_nonzero_values() {
        // Tied groups of nonzero values (a tie inside the kept spectrum):
        // any orthonormal basis of a tied group is right, so the checks are
        // the exact values, orthonormality and the reconstruction.
        ties::<f64>(11);
        ties::<Complex<f64>>(12);
        ties::<f32>(13);
        ties::<Complex<f32>>(14);
    }

    #[test]
    fn graded_matrix_small_values_to_full_relative_accuracy() {
        // A = B·D with B well conditioned and D = diag(1, 1e-10): one-sided
        // Jacobi gets the tiny singular value to a few ulps relative, where
        // an error of ε·σ_max (bidiagonal methods' bound) would be 1e-6 of
        // it. Checked through σ_1 σ_2 = |det A| = 1e-10.
        let a = Mat::<f64>::from_fn(2, 2, |i, j| [[1.0, 0.0], [0.5, 1e-10]][i][j]);
        let (_, s, _) = run(a.as_ref(), false).unwrap();
        let det = 1e-10;
        assert!((s[0] * s[1] - det).abs() <= 4.0 * f64::EPSILON * det, "{s:?}");
    }

    #[test]
    fn non_finite_is_named() {
        let mut a = Mat::<f64>::zeros(3, 3);
        a[(1, 2)] = f64::NAN;
        assert!(matches!(run(a.as_ref(), false), Err(Failure::NonFinite("a"))));
        a[(1, 2)] = f64::INFINITY;
        assert!(matches!(run(a.as_ref(), true), Err(Failure::NonFinite("a"))));
    }
}
