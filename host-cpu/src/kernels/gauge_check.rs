//! The gauge-check kernels of reverse mode (`SvdGaugeCheck`,
//! `EighGaugeCheck`; the math is in lindiff-core's `op/gauge_check.rs` and
//! AD-RULES.md "Gauge check"). Each measures Δ, the largest part of the
//! cotangents the rule cannot transpose exactly, and either copies the
//! cotangents to its outputs or fails with
//! [`Failure::NotDifferentiable`] when Δ > eps^{3/4}·‖cotangents‖.
//!
//! Only what the check needs is formed: the tie groups come from the
//! spectrum (O(k²) comparisons of scalars), then one entry of
//! ah(Uᴴ gU) costs two dot products of length m, and only tied pairs, the
//! diagonal (complex input) and the zero singular values are visited. The
//! projection P_U gU_i = gU_i − U (Uᴴ gU_i) is formed explicitly (never as
//! ‖gU_i‖² − ‖Uᴴ gU_i‖², whose cancellation would cost half the digits).
//!
//! For the right factor the kernel works with Vᴴ and its cotangent
//! directly: with A = (Vᴴ)ᵀ and B = (gVᴴ)ᵀ (columns: the rows of vh and
//! gvh), Vᴴ gV = conj(Aᴴ B), so ah(Vᴴ gV) = conj(ah(Aᴴ B)) entrywise and
//! ‖P_V gV_i‖ = ‖(I − A Aᴴ) b_i‖: the same helpers serve both sides.
//!
//! Scratch: k scalars (the coefficients Uᴴ gU_i of one projection).

use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::ReborrowMut;
use faer::{MatMut, MatRef, Par};
use lindiff_core::op::gauge_why::{
    EIGH_PHASE, EIGH_TIE, EIGH_VALUES, SVD_KINK, SVD_NULL, SVD_PHASE, SVD_TIE, SVD_VALUES,
};
use lindiff_core::op::{EighGaugeCheck, GaugeOf, SvdGaugeCheck};
use lindiff_core::{LinalgOp, RealScalar, Scalar};

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

    /// Keeps (size, output, why) if it is the largest so far.
    fn note(&mut self, size: R, output: &'static str, why: &'static str) {
        if size > self.size {
            *self = Worst { size, output, why };
        }
    }

    /// `Err` when the largest violation exceeds eps^{3/4}·`norm`.
    fn verdict(self, op: &'static str, norm: R) -> Result<(), Failure> {
        let tolerance = (R::EPSILON.ln() * R::from_f64(0.75)).exp() * norm;
        if self.size > tolerance {
            return Err(Failure::NotDifferentiable { op, output: self.output, why: self.why });
        }
        Ok(())
    }
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

    /// Adds every entry of `m` (real and imaginary parts).
    fn add_mat<T: Field + Scalar<Real = R>>(&mut self, m: MatRef<'_, T>) {
        for j in 0..m.ncols() {
            for i in 0..m.nrows() {
                let x = m[(i, j)];
                self.add(Scalar::re(x));
                if T::IS_COMPLEX {
                    self.add(Scalar::im(x));
                }
            }
        }
    }

    fn value(&self) -> R {
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

/// The SVD check of one item (module docs).
fn check_svd<T: Field>(item: &Item<'_>, of: GaugeOf, stack: &mut MemStack) -> Result<(), Failure> {
    let (u, vh, gu, gvh) = (item.mat::<T>(0), item.mat::<T>(2), item.mat::<T>(3), item.mat::<T>(5));
    let k = u.ncols();
    // The right factor as columns: A = (Vᴴ)ᵀ, B = (gVᴴ)ᵀ (module docs).
    let (a, b) = (vh.transpose(), gvh.transpose());
    let (s, gs) = (values::<T>(item, 1), values::<T>(item, 4));
    let delta = cutoff((0..k).map(&s), k);
    let (mut norm_u, mut norm_s, mut norm_v) = (Norm::new(), Norm::new(), Norm::new());
    norm_u.add_mat(gu);
    norm_v.add_mat(gvh);
    (0..k).for_each(|i| norm_s.add(gs(i)));
    let (norm_u, norm_v) = (norm_u.value(), norm_v.value());
    let norm = norm_u.hypot(norm_s.value()).hypot(norm_v);
    let mut worst = Worst::new();
    // SAFETY: every entry of `c` is written by `residual` before it is read.
    let (mut c, _) = unsafe { temp_mat_uninit::<T, _, _>(k, 1, stack) };
    let mut c = c.as_mat_mut();
    for i in 0..k {
        let null = s(i) <= delta;
        for j in i..k {
            let (tied, zero_block) = (Scalar::abs(s(i) - s(j)) <= delta, null && s(j) <= delta);
            // Real diagonal entries of ah(·) vanish: only ties, zero blocks
            // and (complex) phases are visited.
            if !(zero_block || (tied && (i != j || T::IS_COMPLEX))) {
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
            if i != j {
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
        }
    }
    worst.output = of.output(worst.output);
    worst.verdict(of.op(), norm)
}

/// The eigh check of one item (module docs).
fn check_eigh<T: Field>(item: &Item<'_>) -> Result<(), Failure> {
    let (v, gv) = (item.mat::<T>(0), item.mat::<T>(3));
    let n = v.ncols();
    let (w, gw) = (values::<T>(item, 1), values::<T>(item, 2));
    let delta = cutoff((0..n).map(&w), n);
    let mut norm = Norm::new();
    norm.add_mat(gv);
    (0..n).for_each(|i| norm.add(gw(i)));
    let mut worst = Worst::new();
    for i in 0..n {
        if T::IS_COMPLEX {
            worst.note(Scalar::abs(ah(v, gv, i, i)), "v", EIGH_PHASE);
        }
        for j in i + 1..n {
            if Scalar::abs(w(i) - w(j)) > delta {
                continue;
            }
            worst.note(Scalar::abs(ah(v, gv, i, j)), "v", EIGH_TIE);
            worst.note(Scalar::abs(gw(i) - gw(j)), "w", EIGH_VALUES);
        }
    }
    worst.verdict("eigh", norm.value())
}

/// Copies real vector input `from` to output `to` (`len` entries).
fn copy_values<T: Field>(item: &mut Item<'_>, from: usize, to: usize, len: usize) {
    for i in 0..len {
        let x = item.get::<Re<T>>(from, i);
        item.set::<Re<T>>(to, i, x);
    }
}

impl<T: Field> Kernel<T> for SvdGaugeCheck {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        temp_mat_scratch::<T>(shapes.input(1).0, 1)
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        check_svd::<T>(item, self.0, stack)?;
        let (gu, gvh) = (item.mat::<T>(3), item.mat::<T>(5));
        copy_values::<T>(item, 4, 1, gu.ncols());
        item.out_mat::<T>(0).copy_from(gu);
        item.out_mat::<T>(2).copy_from(gvh);
        Ok(())
    }
}

impl<T: Field> Kernel<T> for EighGaugeCheck {
    fn scratch(&self, _shapes: &Shapes, _par: Par) -> StackReq {
        StackReq::EMPTY
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, _stack: &mut MemStack) -> Result<(), Failure> {
        check_eigh::<T>(item)?;
        let gv = item.mat::<T>(3);
        copy_values::<T>(item, 2, 0, gv.ncols());
        item.out_mat::<T>(1).copy_from(gv);
        Ok(())
    }
}

/// The kernel of `op` if it belongs to this family.
pub(super) fn find<T: Field>(op: &LinalgOp) -> Option<&dyn Kernel<T>> {
    match op {
        // Each check belongs to its decomposition's family (`op-*`).
        LinalgOp::SvdGaugeCheck(k) if cfg!(feature = "op-svd") => Some(k),
        LinalgOp::EighGaugeCheck(k) if cfg!(feature = "op-eigh") => Some(k),
        _ => None,
    }
}
