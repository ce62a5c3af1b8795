//! The check kernels of reverse mode (`SvdGaugeCheck`, `EighGaugeCheck`,
//! `EigGaugeCheck`, `TieCheck`, `CompletionCheck`, and [`check_values`]
//! for `ValuesCheck`, which `prims::spectral` runs over a batch of
//! vectors; the math is in
//! lindiff-core's `op/internal/` and `docs/ad-rules.md`, "Ties and gauge
//! checks"). A gauge check measures Δ, the largest part of the cotangents
//! the rule cannot transpose exactly, fails with
//! [`Failure::NotDifferentiable`] when Δ > eps^{3/4}·‖cotangents‖ (or
//! [`Failure::NearTie`] at a coupled tie), and otherwise copies the
//! cotangents to its outputs with the error bound of the pairs that are
//! not tied.
//!
//! Only what the check needs is formed: the tie groups come from the
//! spectrum (O(k²) comparisons of scalars), then one entry of
//! ah(Uᴴ gU) costs two dot products of length m, and only tied pairs, the
//! pairs whose bound from the column norms matters, the diagonal (complex
//! input) and the zero singular values are visited. The
//! projection P_U gU_i = gU_i − U (Uᴴ gU_i) is formed explicitly (never as
//! ‖gU_i‖² − ‖Uᴴ gU_i‖², whose cancellation would cost half the digits).
//!
//! For the right factor the kernel works with Vᴴ and its cotangent
//! directly: with A = (Vᴴ)ᵀ and B = (gVᴴ)ᵀ (columns: the rows of vh and
//! gvh), Vᴴ gV = conj(Aᴴ B), so ah(Vᴴ gV) = conj(ah(Aᴴ B)) entrywise and
//! ‖P_V gV_i‖ = ‖(I − A Aᴴ) b_i‖: the same helpers serve both sides.
//!
//! Scratch: for the SVD check k×4 scalars (the coefficients Uᴴ gU_i of one
//! projection, the norms of gU's columns and of gVᴴ's rows, the values),
//! for eigh n×2 (the norms of gV's columns, the values), for eig n×1.

use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::ReborrowMut;
use faer::{ColRef, MatMut, MatRef, Par};
use lindiff_core::op::internal::why::{
    EIGH_PHASE, EIGH_TIE, EIGH_VALUES, EIG_DEFECTIVE, EIG_TIE, EIG_VALUES, SVD_KINK, SVD_NULL, SVD_PHASE,
    SVD_TIE, SVD_VALUES,
};
use lindiff_core::op::internal::{
    CompletionCheck, EigGaugeCheck, EighGaugeCheck, GaugeOf, SvdGaugeCheck, TieCheck, Values, ValuesCheck,
};
use lindiff_core::{Element, RealScalar, Scalar};

/// The real type of `T`.
type Re<T> = <T as Scalar>::Real;

/// The largest violation seen so far: its size, the output blamed, why.
struct Worst<R> {
    size: R,
    output: &'static str,
    why: &'static str,
}

impl<R: RealScalar> Worst<R> {
    fn new() -> Self {
        Worst { size: R::zero(), output: "", why: "" }
    }

    /// The verdict on what was seen before a coupled tie ends the check (a
    /// gauge-dependent cotangent is the stronger finding).
    fn verdict_first(&self, op: &'static str, norm: R) -> Result<(), Failure> {
        Worst { size: self.size, output: self.output, why: self.why }.verdict(op, norm)
    }

    /// Keeps (size, output, why) if it is the largest so far.
    fn note(&mut self, size: R, output: &'static str, why: &'static str) {
        if size > self.size {
            *self = Worst { size, output, why };
        }
    }

    /// `Err` when the largest violation exceeds eps^{3/4}·`norm`.
    fn verdict(self, op: &'static str, norm: R) -> Result<(), Failure> {
        if self.size > threshold(norm) {
            return Err(Failure::NotDifferentiable { op, output: self.output, why: self.why });
        }
        Ok(())
    }
}

/// eps^{3/4}·`norm`: the size above which a part of a cotangent is not
/// rounding.
pub(crate) fn threshold<R: RealScalar>(norm: R) -> R {
    (R::EPSILON.ln() * R::from_f64(0.75)).exp() * norm
}

/// The error bound of the pairs that are not tied: Σ estimate², the worst
/// pair with its gap, and the gradient's natural scale (its floor in the
/// relative comparison: a gradient that vanishes has no relative error).
struct Bound {
    sum_sq: f64,
    worst: f64,
    pair: (usize, usize),
    gap: f64,
    scale: f64,
}

impl Bound {
    /// An empty bound for a gradient of natural size `scale`.
    fn new(scale: f64) -> Self {
        Bound { sum_sq: 0.0, worst: 0.0, pair: (0, 0), gap: 0.0, scale }
    }

    /// An empty bound for the gradient of a decomposition whose values'
    /// cotangent has norm `values` and whose vectors' cotangents have norm
    /// `vectors`: ∂L/∂A is of the size of the first and of the second over
    /// the `largest` value.
    fn of_spectrum<R: RealScalar>(values: R, vectors: R, largest: R) -> Self {
        let per_value = if largest > R::zero() { vectors / largest } else { R::zero() };
        Bound::new((values + per_value).to_f64())
    }

    /// Adds the error `estimate` a pair (i, j) at `gap` contributes.
    fn add(&mut self, estimate: f64, pair: (usize, usize), gap: f64) {
        self.sum_sq += estimate * estimate;
        if estimate > self.worst {
            self.worst = estimate;
            self.pair = pair;
            self.gap = gap;
        }
    }

    /// Writes (estimate, scale, i, j, gap) to the `[5]` real output `at`.
    fn write<T: Field>(&self, item: &mut Item<'_>, at: usize) {
        let entries = [self.sum_sq.sqrt(), self.scale, self.pair.0 as f64, self.pair.1 as f64, self.gap];
        for (i, x) in entries.into_iter().enumerate() {
            item.set::<Re<T>>(at, i, Re::<T>::from_f64(x));
        }
    }
}

/// The rounding error a gauge projection (a difference of dot products of
/// length `len` with columns of norms `norm_i`, `norm_j`) carries:
/// 2·√len·eps·(norm_i + norm_j).
fn projection_error<R: RealScalar>(len: usize, norm_i: R, norm_j: R) -> f64 {
    2.0 * (len.max(1) as f64).sqrt() * R::EPSILON.to_f64() * (norm_i + norm_j).to_f64()
}

/// Σ |x|² over `col` in plain arithmetic (eight partial sums when the
/// column is contiguous, so that the loop vectorizes).
fn plain_ssq<T: Field>(col: ColRef<'_, T>) -> Re<T> {
    let zero = Re::<T>::zero();
    let Some(c) = col.try_as_col_major() else {
        return col.iter().fold(zero, |s, &x| s + x.abs2());
    };
    let chunks = c.as_slice().chunks_exact(8);
    let rest = chunks.remainder().iter().fold(zero, |s, &x| s + x.abs2());
    let mut lanes = [zero; 8];
    for chunk in chunks {
        for (l, &x) in lanes.iter_mut().zip(chunk) {
            *l += x.abs2();
        }
    }
    lanes.iter().fold(rest, |s, &l| s + l)
}

/// Whether a plain sum of squares is its norm's square to working
/// accuracy: finite, and at least MIN_POSITIVE/eps, so that the squares
/// lost to underflow (each below MIN_POSITIVE) add up to at most len·eps of
/// it. Otherwise the scaled [`Norm`] recomputes it.
fn plain_is_safe<R: RealScalar>(ssq: R) -> bool {
    Scalar::is_finite(ssq) && ssq >= R::MIN_POSITIVE / R::EPSILON
}

/// ‖column j of `m`‖.
fn column_norms<T: Field>(m: MatRef<'_, T>, j: usize) -> Re<T> {
    let ssq = plain_ssq(m.col(j));
    if plain_is_safe(ssq) {
        return Scalar::sqrt(ssq);
    }
    let mut norm = Norm::new();
    m.col(j).iter().for_each(|&x| norm.add_entry(x));
    norm.value()
}

/// A Frobenius norm accumulated as scale·√ssq (no overflow or underflow
/// at any scale of the entries).
struct Norm<R> {
    scale: R,
    ssq: R,
}

impl<R: RealScalar> Norm<R> {
    fn new() -> Self {
        Norm { scale: R::zero(), ssq: R::zero() }
    }

    /// Adds a real component.
    fn add(&mut self, x: R) {
        let a = Scalar::abs(x);
        if a == R::zero() {
            return;
        }
        if a > self.scale {
            let r = self.scale / a;
            self.ssq = R::one() + self.ssq * r * r;
            self.scale = a;
        } else {
            let r = a / self.scale;
            self.ssq += r * r;
        }
    }

    /// Adds an entry: its real part, and its imaginary part if complex.
    fn add_entry<T: Field + Scalar<Real = R>>(&mut self, x: T) {
        self.add(Scalar::re(x));
        if T::IS_COMPLEX {
            self.add(Scalar::im(x));
        }
    }

    /// Adds every entry of `m`: its plain sum of squares when that is
    /// safe, else entry by entry.
    fn add_mat<T: Field + Scalar<Real = R>>(&mut self, m: MatRef<'_, T>) {
        let ssq = (0..m.ncols()).fold(R::zero(), |s, j| s + plain_ssq(m.col(j)));
        if plain_is_safe(ssq) {
            self.add(Scalar::sqrt(ssq));
            return;
        }
        for j in 0..m.ncols() {
            m.col(j).iter().for_each(|&x| self.add_entry(x));
        }
    }

    fn value(&self) -> R {
        if self.scale == R::zero() {
            return R::zero();
        }
        self.scale * Scalar::sqrt(self.ssq)
    }
}

/// δ = 10·k·eps·max|x_i|, the tie cutoff of the rules (`PairInv`'s
/// `Cutoff` with the rules' relative cutoff).
fn cutoff<R: RealScalar>(x: impl Iterator<Item = R>, k: usize) -> R {
    let largest = x.fold(R::zero(), |m, v| m.max_real(Scalar::abs(v)));
    largest * R::from_f64(10.0 * k as f64 * R::EPSILON.to_f64())
}

/// (Aᴴ B)_ij = Σ_r conj(a_ri) b_rj.
fn dot<T: Field>(a: MatRef<'_, T>, i: usize, b: MatRef<'_, T>, j: usize) -> T {
    let mut sum = T::zero();
    for r in 0..a.nrows() {
        sum += Scalar::conj(a[(r, i)]) * b[(r, j)];
    }
    sum
}

/// ah(Aᴴ B)_ij = ½((Aᴴ B)_ij − conj((Aᴴ B)_ji)).
fn ah<T: Field>(a: MatRef<'_, T>, b: MatRef<'_, T>, i: usize, j: usize) -> T {
    let half = Re::<T>::from_f64(0.5);
    (dot(a, i, b, j) - Scalar::conj(dot(a, j, b, i))).scale(half)
}

/// ‖(I − A Aᴴ) b_i‖, with the coefficients Aᴴ b_i kept in `c`.
fn residual<T: Field>(a: MatRef<'_, T>, b: MatRef<'_, T>, i: usize, mut c: MatMut<'_, T>) -> Re<T> {
    for j in 0..a.ncols() {
        c[(j, 0)] = dot(a, j, b, i);
    }
    let mut norm = Norm::new();
    for r in 0..a.nrows() {
        let mut x = b[(r, i)];
        for j in 0..a.ncols() {
            x -= a[(r, j)] * c[(j, 0)];
        }
        norm.add(Scalar::re(x));
        norm.add(Scalar::im(x));
    }
    norm.value()
}

/// The values of a real vector input, as a closure over indices.
fn values<'a, T: Field>(item: &'a Item<'_>, input: usize) -> impl Fn(usize) -> Re<T> + 'a {
    move |i| item.get::<Re<T>>(input, i)
}

/// A coupled tie: the rule's term for the pair is 0/0 (docs of `op/internal`).
fn coupled_tie(of: GaugeOf, pair: (usize, usize), gap: f64) -> Failure {
    Failure::NearTie { op: of.op(), pair, gap, estimate: f64::INFINITY, suggestion: of.suggestion() }
}

/// The SVD check of one item (module docs): Err, or the bound of the pairs
/// that are not tied.
fn check_svd<T: Field>(
    item: &Item<'_>,
    of: GaugeOf,
    read: Values,
    stack: &mut MemStack,
) -> Result<Bound, Failure> {
    let (u, vh, gu, gvh) = (item.mat::<T>(0), item.mat::<T>(2), item.mat::<T>(3), item.mat::<T>(5));
    let k = u.ncols();
    // The right factor as columns: A = (Vᴴ)ᵀ, B = (gVᴴ)ᵀ (module docs).
    let (a, b) = (vh.transpose(), gvh.transpose());
    let (m, n) = (u.nrows(), a.nrows());
    let (s, gs) = (values::<T>(item, 1), values::<T>(item, 4));
    let delta = cutoff((0..k).map(&s), k);
    let (mut norm_u, mut norm_s, mut norm_v) = (Norm::new(), Norm::new(), Norm::new());
    norm_u.add_mat(gu);
    norm_v.add_mat(gvh);
    (0..k).for_each(|i| norm_s.add(gs(i)));
    let (norm_u, norm_v) = (norm_u.value(), norm_v.value());
    let norm = norm_u.hypot(norm_s.value()).hypot(norm_v);
    let tolerance = threshold(norm);
    let mut worst = Worst::new();
    let largest = (0..k).map(&s).fold(Re::<T>::zero(), |m, x| m.max_real(x));
    let mut bound = Bound::of_spectrum(norm_s.value(), norm_u + norm_v, largest);
    // SAFETY: column 0 is written by `residual` before it is read, columns
    // 1 to 3 just below.
    let (mut scratch, _) = unsafe { temp_mat_uninit::<T, _, _>(k, 4, stack) };
    let scratch = scratch.as_mat_mut();
    let (mut c, mut norms) = scratch.split_at_col_mut(1);
    // The values once more, in the scratch: the pair loop below reads each
    // k times, and `Item::get` locates its input on every call.
    for i in 0..k {
        norms[(i, 2)] = T::from_real(s(i));
    }
    fill_column_norms(gu, norms.rb_mut().get_mut(.., 0..1));
    fill_row_norms(gvh, norms.rb_mut().get_mut(.., 1..2));
    let s = |i: usize| Scalar::re(norms[(i, 2)]);
    let gu_norm = |i: usize| Scalar::re(norms[(i, 0)]);
    let gv_norm = |i: usize| Scalar::re(norms[(i, 1)]);
    // `projection_error` of each side without the norms.
    let (per_u, per_v) = (
        projection_error(m, Re::<T>::one(), Re::<T>::zero()),
        projection_error(n, Re::<T>::one(), Re::<T>::zero()),
    );
    for i in 0..k {
        let null = s(i) <= delta;
        let (gu_i, gv_i) = (gu_norm(i), gv_norm(i));
        for j in i..k {
            let gap = Scalar::abs(s(i) - s(j));
            let (tied, zero_block) = (gap <= delta, null && s(j) <= delta);
            if !tied && !zero_block {
                // The rule divides ah(J + K)_ij by the gap, ah(J − K)_ij by
                // s_i + s_j: their rounding over the gap is the bound.
                let (gu_j, gv_j) = (gu_norm(j), gv_norm(j));
                let error = per_u * (gu_i + gu_j).to_f64() + per_v * (gv_i + gv_j).to_f64();
                let divisor = gap.min_real(s(i) + s(j)).to_f64();
                bound.add(error / divisor, (i, j), gap.to_f64());
                continue;
            }
            // Real diagonal entries of ah(·) vanish: only ties, zero blocks
            // and (complex) phases are visited.
            if !(zero_block || i != j || T::IS_COMPLEX) {
                continue;
            }
            let a_u = ah(u, gu, i, j);
            let a_v = Scalar::conj(ah(a, b, i, j));
            let (mu, mv) = (Scalar::abs(a_u), Scalar::abs(a_v));
            if zero_block {
                // The vectors of zero values: a null-space basis, left and
                // right apart (named as such, not as a tie or a phase).
                worst.note(mu, "u", SVD_NULL);
                worst.note(mv, "vh", SVD_NULL);
            } else {
                let why = if i == j { SVD_PHASE } else { SVD_TIE };
                worst.note(Scalar::abs(a_u + a_v), if mu >= mv { "u" } else { "vh" }, why);
            }
            // low_rank_approx's own rule divides by no gap inside the kept
            // block: its check looks for cuts through ties only.
            if i != j && !zero_block && of != GaugeOf::LowRankApprox {
                // A tie: the rule's term for the pair is 0/0 and it takes 0,
                // the limit for a loss of the vectors alone (a projector
                // onto the whole group, the polar factor). For a loss that
                // also reads the values (a reconstruction, even one whose
                // ∂L/∂s is 0 on the pair) the limit is not 0, and coupled
                // cotangents look the same for both: reported when the
                // values are read (`Values`). Unequal value cotangents
                // without coupling are a non-symmetric function of tied
                // values.
                let coupling = Scalar::abs(dot(u, i, gu, j))
                    + Scalar::abs(dot(u, j, gu, i))
                    + Scalar::abs(dot(a, i, b, j))
                    + Scalar::abs(dot(a, j, b, i));
                if coupling > tolerance && read == Values::Read && Scalar::abs(a_u + a_v) <= tolerance {
                    worst.verdict_first(of.op(), norm)?;
                    return Err(coupled_tie(of, (i, j), gap.to_f64()));
                }
                worst.note(Scalar::abs(gs(i) - gs(j)), "s", SVD_VALUES);
            } else if i != j && !zero_block {
                worst.note(Scalar::abs(gs(i) - gs(j)), "s", SVD_VALUES);
            }
        }
        if null {
            worst.note(Scalar::abs(gs(i)), "s", SVD_KINK);
            // P_U gU_i: only where U has a complement and gU is nonzero.
            if u.nrows() > k && norm_u > Re::<T>::zero() {
                worst.note(residual(u, gu, i, c.rb_mut()), "u", SVD_NULL);
            }
            if a.nrows() > k && norm_v > Re::<T>::zero() {
                worst.note(residual(a, b, i, c.rb_mut()), "vh", SVD_NULL);
            }
        } else {
            // The rectangular terms divide P_U gU_i and P_V gV_i by s_i.
            let mut error = 0.0;
            if m > k {
                error += projection_error(m, gu_i, Re::<T>::zero());
            }
            if n > k {
                error += projection_error(n, gv_i, Re::<T>::zero());
            }
            bound.add(error / s(i).to_f64(), (i, i), s(i).to_f64());
        }
    }
    worst.output = of.output(worst.output);
    worst.verdict(of.op(), norm)?;
    Ok(bound)
}

/// The eigh check of one item (module docs).
fn check_eigh<T: Field>(item: &Item<'_>, read: Values, stack: &mut MemStack) -> Result<Bound, Failure> {
    let (v, gv) = (item.mat::<T>(0), item.mat::<T>(3));
    let n = v.ncols();
    let (w, gw) = (values::<T>(item, 1), values::<T>(item, 2));
    let delta = cutoff((0..n).map(&w), n);
    let (mut norm_v, mut norm_w) = (Norm::new(), Norm::new());
    norm_v.add_mat(gv);
    (0..n).for_each(|i| norm_w.add(gw(i)));
    let norm = norm_v.value().hypot(norm_w.value());
    let tolerance = threshold(norm);
    let mut worst = Worst::new();
    let spread = (0..n).map(&w).fold(Re::<T>::zero(), |m, x| m.max_real(Scalar::abs(x)));
    let mut bound = Bound::of_spectrum(norm_w.value(), norm_v.value(), spread);
    // SAFETY: column 1 is written just below, column 0 by
    // `fill_column_norms` before it is read.
    let (mut norms, _) = unsafe { temp_mat_uninit::<T, _, _>(n, 2, stack) };
    let mut norms = norms.as_mat_mut();
    // The values in the scratch: the pair loop reads each n times, and
    // `Item::get` locates its input on every call.
    for i in 0..n {
        norms[(i, 1)] = T::from_real(w(i));
    }
    fill_column_norms(gv, norms.rb_mut().get_mut(.., 0..1));
    let w = |i: usize| Scalar::re(norms[(i, 1)]);
    let gv_norm = |i: usize| Scalar::re(norms[(i, 0)]);
    for i in 0..n {
        if T::IS_COMPLEX {
            worst.note(Scalar::abs(ah(v, gv, i, i)), "v", EIGH_PHASE);
        }
        let gv_i = gv_norm(i);
        for j in i + 1..n {
            let gap = Scalar::abs(w(i) - w(j));
            if gap > delta {
                bound.add(projection_error(n, gv_i, gv_norm(j)) / gap.to_f64(), (i, j), gap.to_f64());
                continue;
            }
            let gauge = Scalar::abs(ah(v, gv, i, j));
            worst.note(gauge, "v", EIGH_TIE);
            // As for the SVD: coupled vectors of tied values make a 0/0 term
            // whose limit is 0 for a loss of the vectors alone (a projector
            // onto the group) and f′ for a function V f(Λ) Vᴴ that reads
            // the values: reported when the values are read.
            let coupling = Scalar::abs(dot(v, i, gv, j)) + Scalar::abs(dot(v, j, gv, i));
            if coupling > tolerance && read == Values::Read && gauge <= tolerance {
                worst.verdict_first("eigh", norm)?;
                return Err(coupled_tie(GaugeOf::Eigh, (i, j), gap.to_f64()));
            }
            worst.note(Scalar::abs(gw(i) - gw(j)), "w", EIGH_VALUES);
        }
    }
    worst.verdict("eigh", norm)?;
    Ok(bound)
}

/// The eig check of one item (module docs): tied eigenvalues (complex
/// distance within the cutoff) whose unit eigenvectors are parallel are
/// defective; otherwise J_ij = v_iᴴ gv_j and J_ji are the gauge.
fn check_eig<T: Field>(item: &Item<'_>, read: Values, stack: &mut MemStack) -> Result<Bound, Failure> {
    let (v, gv) = (item.mat::<T>(0), item.mat::<T>(3));
    let n = v.ncols();
    let w = |i: usize| item.get::<T>(1, i);
    let gw = |i: usize| item.get::<T>(2, i);
    let delta = cutoff((0..n).map(|i| Scalar::abs(w(i))), n);
    let (mut norm_v, mut norm_w) = (Norm::new(), Norm::new());
    norm_v.add_mat(gv);
    (0..n).for_each(|i| {
        norm_w.add(Scalar::re(gw(i)));
        norm_w.add(Scalar::im(gw(i)));
    });
    let norm = norm_v.value().hypot(norm_w.value());
    let mut worst = Worst::new();
    let spread = (0..n).fold(Re::<T>::zero(), |m, i| m.max_real(Scalar::abs(w(i))));
    let mut bound = Bound::of_spectrum(norm_w.value(), norm_v.value(), spread);
    // SAFETY: every entry is written by `fill_column_norms` before it is read.
    let (mut norms, _) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    let mut norms = norms.as_mat_mut();
    fill_column_norms(gv, norms.rb_mut());
    let gv_norm = |i: usize| Scalar::re(norms[(i, 0)]);
    // Parallel unit vectors: |v_iᴴ v_j| within √eps of 1.
    let parallel = Re::<T>::one() - Scalar::sqrt(Re::<T>::EPSILON);
    // Values and vectors both read (`EigGaugeCheck`): gaps below which the
    // rule's division would cost the tie check's tolerance are reported.
    let eps = Re::<T>::EPSILON.to_f64();
    let tolerance = if eps > 1e-10 { TieCheck::TOLERANCE_F32 } else { TieCheck::TOLERANCE };
    let coupled = if read == Values::Read { spread.to_f64() * eps / tolerance } else { 0.0 };
    for i in 0..n {
        let gv_i = gv_norm(i);
        for j in i + 1..n {
            let gap = Scalar::abs(w(i) - w(j));
            if gap > delta && gap.to_f64() > coupled {
                bound.add(projection_error(n, gv_i, gv_norm(j)) / gap.to_f64(), (i, j), gap.to_f64());
                continue;
            }
            if gap > delta {
                // A near tie in the coupled band: the rule's division by the
                // gap costs about ε·|λ|/gap, more than the tolerance.
                worst.verdict_first("eig", norm)?;
                let (op, suggestion) = (GaugeOf::Eig.op(), GaugeOf::Eig.suggestion());
                let (gap, estimate) = (gap.to_f64(), spread.to_f64() * eps / gap.to_f64());
                return Err(Failure::NearTie { op, pair: (i, j), gap, estimate, suggestion });
            }
            if Scalar::abs(dot(v, i, v, j)) >= parallel {
                return Err(Failure::NotDifferentiable { op: "eig", output: "w", why: EIG_DEFECTIVE });
            }
            let gauge = Scalar::abs(dot(v, i, gv, j)).max_real(Scalar::abs(dot(v, j, gv, i)));
            worst.note(gauge, "v", EIG_TIE);
            if read == Values::Read {
                worst.verdict_first("eig", norm)?;
                return Err(coupled_tie(GaugeOf::Eig, (i, j), gap.to_f64()));
            }
            worst.note(Scalar::abs(gw(i) - gw(j)), "w", EIG_VALUES);
        }
    }
    worst.verdict("eig", norm)?;
    Ok(bound)
}

/// [`ValuesCheck`] of one batch item: the values `x` and their cotangent
/// `g` (module docs of `lindiff_core::op::internal`, `values.rs`). What
/// the gauge checks find when no vector cotangent is nonzero, in the order
/// of their loops: unequal cotangents of tied values and, for the SVD, a
/// nonzero cotangent of a value at most δ.
///
/// # Errors
/// `Error::NotDifferentiable` naming the decomposition, its values output
/// and why.
pub(crate) fn check_values<R: RealScalar>(
    op: &ValuesCheck,
    x: impl Fn(usize) -> R,
    g: impl Fn(usize) -> R,
    k: usize,
) -> lindiff_core::Result<()> {
    let delta = cutoff((0..k).map(&x), k);
    let mut norm = Norm::new();
    (0..k).for_each(|i| norm.add(g(i)));
    let why = match op.0 {
        GaugeOf::Eigh => EIGH_VALUES,
        GaugeOf::Eig => EIG_VALUES,
        GaugeOf::Svd | GaugeOf::SvdTruncated | GaugeOf::LowRankApprox => SVD_VALUES,
    };
    let (output, kinks) = (op.output(), op.kinks());
    let mut worst = Worst::new();
    for i in 0..k {
        let null = kinks && x(i) <= delta;
        for j in i + 1..k {
            if Scalar::abs(x(i) - x(j)) <= delta && !(null && x(j) <= delta) {
                worst.note(Scalar::abs(g(i) - g(j)), output, why);
            }
        }
        if null {
            worst.note(Scalar::abs(g(i)), output, SVD_KINK);
        }
    }
    worst.verdict(op.0.op(), norm.value()).map_err(|f| f.into_error(ValuesCheck::NAME, 0))
}

/// Writes the norm of column j of `m` (as `T`, imaginary part zero) to
/// row j of `norms`.
fn fill_column_norms<T: Field>(m: MatRef<'_, T>, mut norms: MatMut<'_, T>) {
    for j in 0..m.ncols() {
        norms[(j, 0)] = T::from_real(column_norms(m, j));
    }
}

/// Writes the norm of row i of `m` (as `T`, imaginary part zero) to row i
/// of `norms`: plain sums of squares gathered column by column (a walk
/// along the rows of a column-major matrix strides through memory), a
/// scaled sum for any row where the plain one is not safe.
fn fill_row_norms<T: Field>(m: MatRef<'_, T>, mut norms: MatMut<'_, T>) {
    for i in 0..m.nrows() {
        norms[(i, 0)] = T::zero();
    }
    for j in 0..m.ncols() {
        for i in 0..m.nrows() {
            let ssq = Scalar::re(norms[(i, 0)]) + m[(i, j)].abs2();
            norms[(i, 0)] = T::from_real(ssq);
        }
    }
    for i in 0..m.nrows() {
        let ssq = Scalar::re(norms[(i, 0)]);
        let norm = if plain_is_safe(ssq) {
            Scalar::sqrt(ssq)
        } else {
            let mut norm = Norm::new();
            m.row(i).iter().for_each(|&x| norm.add_entry(x));
            norm.value()
        };
        norms[(i, 0)] = T::from_real(norm);
    }
}

/// Copies vector input `from` to output `to` (`len` entries of `E`).
fn copy_values<E: Element>(item: &mut Item<'_>, from: usize, to: usize, len: usize) {
    for i in 0..len {
        let x = item.get::<E>(from, i);
        item.set::<E>(to, i, x);
    }
}

/// An eigen check's pass-through: `gw` (input 2, entries of `E`) and `gv`
/// (input 3) to outputs 0 and 1, and the bound to output 2.
fn pass_eigen<T: Field, E: Element>(item: &mut Item<'_>, bound: Bound) {
    let gv = item.mat::<T>(3);
    copy_values::<E>(item, 2, 0, gv.ncols());
    item.out_mat::<T>(1).copy_from(gv);
    bound.write::<T>(item, 2);
}

impl<T: Field> Kernel<T> for SvdGaugeCheck {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        temp_mat_scratch::<T>(shapes.input(1).0, 4)
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let bound = check_svd::<T>(item, self.0, self.1, stack)?;
        let (gu, gvh) = (item.mat::<T>(3), item.mat::<T>(5));
        copy_values::<Re<T>>(item, 4, 1, gu.ncols());
        item.out_mat::<T>(0).copy_from(gu);
        item.out_mat::<T>(2).copy_from(gvh);
        bound.write::<T>(item, 3);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for EighGaugeCheck {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        temp_mat_scratch::<T>(shapes.input(0).0, 2)
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let bound = check_eigh::<T>(item, self.0, stack)?;
        pass_eigen::<T, Re<T>>(item, bound);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for EigGaugeCheck {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        temp_mat_scratch::<T>(shapes.input(0).0, 1)
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let bound = check_eig::<T>(item, self.0, stack)?;
        pass_eigen::<T, T>(item, bound);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for TieCheck {
    fn scratch(&self, _shapes: &Shapes, _par: Par) -> StackReq {
        StackReq::EMPTY
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, _stack: &mut MemStack) -> Result<(), Failure> {
        let ga = item.mat::<T>(0);
        let bound = |i: usize| item.get::<Re<T>>(1, i).to_f64();
        let mut norm = Norm::new();
        norm.add_mat(ga);
        // Relative to the gradient, floored at its natural scale.
        let estimate = bound(0) / norm.value().to_f64().max(bound(1));
        let tolerance =
            if Re::<T>::EPSILON.to_f64() > 1e-10 { TieCheck::TOLERANCE_F32 } else { TieCheck::TOLERANCE };
        // A zero gradient has no error to speak of (0/0 is NaN: accepted).
        if estimate > tolerance {
            return Err(Failure::NearTie {
                op: self.0.op(),
                pair: (bound(2) as usize, bound(3) as usize),
                gap: bound(4),
                estimate,
                suggestion: self.0.suggestion(),
            });
        }
        item.out_mat::<T>(0).copy_from(ga);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for CompletionCheck {
    fn scratch(&self, _shapes: &Shapes, _par: Par) -> StackReq {
        StackReq::EMPTY
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, _stack: &mut MemStack) -> Result<(), Failure> {
        let g = item.mat::<T>(0);
        let zero = (0..g.ncols()).all(|j| (0..g.nrows()).all(|i| g[(i, j)] == T::zero()));
        if !zero {
            return Err(Failure::NotDifferentiable {
                op: "svd_full",
                output: self.0.output(),
                why: self.0.why(),
            });
        }
        item.out_mat::<T>(0).copy_from(g);
        Ok(())
    }
}
