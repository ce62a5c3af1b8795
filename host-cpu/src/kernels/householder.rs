//! Compact Householder QR kernels: factor, append columns, form Q, extract R,
//! apply Q.
//!
//! # The compact state `(h, tau)`
//!
//! For an m×n matrix A, k = min(m, n):
//!
//! * `h` (m×n) holds R on and above the diagonal and, strictly below the
//!   diagonal of column j < k, the essential part of the reflector vector
//!   v_j: v_j[i] = 0 for i < j, v_j[j] = 1 (implicit), v_j[i] = h[i, j] for
//!   i > j.
//! * `tau` (k) holds LAPACK-style scalars: H_j = I − τ_j v_j v_jᴴ, with
//!   τ_j = 0 for an identity reflector (whatever `h` holds below the
//!   diagonal of column j is then ignored).
//! * Q_h = H_0 H_1 ⋯ H_{k−1} (m×m) and A = Q_h · triu(h).
//!
//! faer's reflectors are H = I − v vᴴ / τ_faer with real τ_faer (+∞ for an
//! identity reflector), so τ = 1/τ_faer, with ∞ ↦ 0. States made here always
//! have real τ; a state with complex τ (e.g. from LAPACK's ?geqrf, whose
//! reflectors are not Hermitian) is accepted by every kernel.
//!
//! # The reflector convention and diag(R) ≥ 0
//!
//! The state keeps faer's reflector convention: its R diagonal may be negative
//! or complex (faer's β = −phase(x₀)·‖x‖). With phase(x) = x/|x| (and
//! phase(0) = 1), `householder_qr_r` returns R with row j multiplied by
//! conj(phase(h[j,j])) and `householder_qr_q` returns Q_h[:, :k] with column
//! j multiplied by phase(h[j,j]), so that Q R = A with diag(R) real and ≥ 0
//! (the `qr` convention). `householder_qr_apply` works in the state's convention:
//! it applies the raw product Q_h (m×m), Q_hᴴ or Q_hᵀ, with no phase fix.
//!
//! A rank-deficient A gives an echelon R (faer skips columns with a
//! negligible remaining norm; their reflectors are identities with τ = 0),
//! and A = Q R still holds.
//!
//! # Applying the reflectors
//!
//! When every τ is real, the block Householder factors (faer's T matrices)
//! are rebuilt from τ and the basis in scratch, and faer's blocked
//! apply runs (level 3). Otherwise (complex τ) the reflectors are applied
//! one by one (level 2, O(m·k·r)).

use super::finite::check_finite;
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::householder::{
    apply_block_householder_sequence_on_the_left_in_place_scratch,
    apply_block_householder_sequence_on_the_left_in_place_with_conj,
    apply_block_householder_sequence_transpose_on_the_left_in_place_scratch,
    apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj, upgrade_householder_factor,
};
use faer::linalg::qr::no_pivoting::factor::{qr_in_place, qr_in_place_scratch, recommended_block_size};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{ColRef, Conj, MatMut, MatRef, Par};
use lindiff_core::op::{
    HouseholderQrAppend, HouseholderQrApply, HouseholderQrFactor, HouseholderQrQ, HouseholderQrR, MatOp,
};
use lindiff_core::Scalar;

type Re<T> = <T as Scalar>::Real;

/// phase(x) = x/|x|, and 1 for x = 0. For a real x exactly its sign: the
/// division would give 0.9999999999999999 for about one x in seven (e.g.
/// 49·(1/49)), and a factor that is not exactly ±1 rescales a whole column.
pub fn phase<T: Field>(x: T) -> T {
    if !<T as Scalar>::IS_COMPLEX {
        return real_sign(x);
    }
    let r = Scalar::abs(x);
    if r == Re::<T>::zero() {
        T::one()
    } else {
        Scalar::scale(x, Re::<T>::one() / r)
    }
}

/// ±1 for a real `x` (+1 for 0), exactly.
pub(super) fn real_sign<T: Field>(x: T) -> T {
    if Scalar::re(x) < Re::<T>::zero() {
        -T::one()
    } else {
        T::one()
    }
}

/// Our τ from faer's τ_faer (real; +∞ for an identity reflector ↦ 0).
fn tau_from_faer<T: Field>(tau_faer: T) -> T {
    T::from_real(Re::<T>::one() / Scalar::re(tau_faer))
}

/// faer's τ_faer = 1/τ (τ = 0 ↦ +∞).
fn tau_to_faer<T: Field>(tau: T) -> T {
    if tau == T::zero() {
        <T as Scalar>::from_f64(f64::INFINITY)
    } else {
        T::one() / tau
    }
}

/// Which product of the reflector sequence Q_h = H_0 ⋯ H_{k−1} to apply.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Product {
    /// Q_h b.
    Q,
    /// Q_hᴴ b.
    Adjoint,
    /// Q_hᵀ b.
    Transpose,
}

impl From<MatOp> for Product {
    fn from(op: MatOp) -> Self {
        match op {
            MatOp::Identity => Product::Q,
            MatOp::Adjoint => Product::Adjoint,
            MatOp::Transpose => Product::Transpose,
        }
    }
}

/// Scratch of [`apply_reflectors`] for a basis `h` of m×n and `r` columns,
/// beside the τ column the caller holds.
fn apply_scratch<T: Field>(m: usize, n: usize, r: usize) -> StackReq {
    let k = m.min(n);
    if k == 0 {
        return StackReq::EMPTY;
    }
    let bs = recommended_block_size::<T>(m, n);
    StackReq::all_of(&[
        temp_mat_scratch::<T>(bs, k),
        apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(m, bs, r)
            .or(apply_block_householder_sequence_transpose_on_the_left_in_place_scratch::<T>(m, bs, r)),
    ])
}

/// b ← Q_h b, Q_hᴴ b or Q_hᵀ b for the state (`h`, `tau`) (`tau` of length
/// min(m, n) of `h`).
fn apply_reflectors<T: Field>(
    h: MatRef<'_, T>,
    tau: ColRef<'_, T>,
    product: Product,
    b: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) {
    let (m, n) = (h.nrows(), h.ncols());
    let k = m.min(n);
    if k == 0 || b.ncols() == 0 {
        return;
    }
    if (0..k).all(|j| Scalar::im(tau[j]) == Re::<T>::zero()) {
        apply_blocked(h, tau, product, b, par, stack);
    } else {
        apply_one_by_one(h, tau, product, b);
    }
}

/// [`apply_reflectors`] through faer's block Householder sequence, with the
/// block factors rebuilt from (real) τ and the basis.
///
/// When k = m, the last reflector has an empty tail: H_{m−1} = I − τ e eᵀ
/// only scales the last row by 1 − τ. faer never stores such a reflector
/// with τ ≠ 0 (it uses τ_faer = ∞) and its width-1 apply skips it, so it is
/// applied here as that scaling, in its place in the product.
fn apply_blocked<T: Field>(
    h: MatRef<'_, T>,
    tau: ColRef<'_, T>,
    product: Product,
    mut b: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) {
    let (m, n) = (h.nrows(), h.ncols());
    let k = m.min(n);
    let peel = k == m;
    let kb = if peel { k - 1 } else { k };
    let last_row_factor = if peel {
        let t = tau[k - 1];
        T::one() - if product == Product::Adjoint { Scalar::conj(t) } else { t }
    } else {
        T::one()
    };
    let scale_last_row = |b: &mut MatMut<'_, T>| {
        if peel {
            for c in 0..b.ncols() {
                b[(m - 1, c)] *= last_row_factor;
            }
        }
    };
    // Q_h = (H_0 ⋯ H_{kb−1}) H_{m−1}: for Q b the peeled reflector goes first.
    if product == Product::Q {
        scale_last_row(&mut b);
    }
    if kb > 0 {
        let basis = h.get(.., 0..kb);
        let bs = recommended_block_size::<T>(m, n).min(kb);
        // SAFETY: the upper triangle (diagonal included) of each block's w×w
        // leading square is written below before faer reads it; faer reads
        // nothing else of the factor.
        let (mut coeff, stack) = unsafe { temp_mat_uninit::<T, _, _>(bs, kb, stack) };
        let mut coeff = coeff.as_mat_mut();
        let mut j0 = 0;
        while j0 < kb {
            let w = bs.min(kb - j0);
            let mut block = coeff.rb_mut().get_mut(0..w, j0..j0 + w);
            for t in 0..w {
                block[(t, t)] = tau_to_faer(tau[j0 + t]);
            }
            // Fills the strict upper triangle: T = diag(τ_faer) + triu(VᴴV, 1),
            // the factor of H_{j0} ⋯ H_{j0+w−1} = I − V T⁻¹ Vᴴ (as faer's
            // column-pivoted QR does).
            upgrade_householder_factor(block, basis.get(j0.., j0..j0 + w), bs, 1, par);
            j0 += w;
        }
        let coeff = coeff.rb();
        let b = b.rb_mut();
        match product {
            Product::Q => apply_block_householder_sequence_on_the_left_in_place_with_conj(
                basis,
                coeff,
                Conj::No,
                b,
                par,
                stack,
            ),
            Product::Adjoint => apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj(
                basis,
                coeff,
                Conj::Yes,
                b,
                par,
                stack,
            ),
            Product::Transpose => apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj(
                basis,
                coeff,
                Conj::No,
                b,
                par,
                stack,
            ),
        }
    }
    if product != Product::Q {
        scale_last_row(&mut b);
    }
}

/// [`apply_reflectors`] one reflector at a time (any complex τ).
///
/// H_j = I − τ v vᴴ, H_jᴴ = I − conj(τ) v vᴴ, H_jᵀ = I − τ conj(v) vᵀ.
fn apply_one_by_one<T: Field>(h: MatRef<'_, T>, tau: ColRef<'_, T>, product: Product, mut b: MatMut<'_, T>) {
    let (m, n) = (h.nrows(), h.ncols());
    let k = m.min(n);
    // v_j[i] for i ≥ j.
    let v = |i: usize, j: usize| if i == j { T::one() } else { h[(i, j)] };
    for step in 0..k {
        // Q_h b applies H_{k−1} first; Q_hᴴ b and Q_hᵀ b apply H_0ᴴ / H_0ᵀ first.
        let j = if product == Product::Q { k - 1 - step } else { step };
        let t = tau[j];
        if t == T::zero() {
            continue;
        }
        for c in 0..b.ncols() {
            let mut dot = T::zero();
            match product {
                Product::Q | Product::Adjoint => {
                    for i in j..m {
                        dot += Scalar::conj(v(i, j)) * b[(i, c)];
                    }
                    let s = if product == Product::Q { t * dot } else { Scalar::conj(t) * dot };
                    for i in j..m {
                        b[(i, c)] -= s * v(i, j);
                    }
                }
                Product::Transpose => {
                    for i in j..m {
                        dot += v(i, j) * b[(i, c)];
                    }
                    let s = t * dot;
                    for i in j..m {
                        b[(i, c)] -= s * Scalar::conj(v(i, j));
                    }
                }
            }
        }
    }
}

/// Reads vector input `i` (length `len`) into the first column of `dst`.
fn read_vector<T: Field>(item: &Item<'_>, i: usize, mut dst: MatMut<'_, T>) {
    for j in 0..dst.nrows() {
        dst[(j, 0)] = item.get::<T>(i, j);
    }
}

impl<T: Field> Kernel<T> for HouseholderQrFactor {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let bs = recommended_block_size::<T>(m, n);
        StackReq::all_of(&[
            temp_mat_scratch::<T>(bs, m.min(n)),
            qr_in_place_scratch::<T>(m, n, bs, par, Default::default()),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        check_finite(a, "a")?;
        let (m, n) = (a.nrows(), a.ncols());
        let k = m.min(n);
        let bs = recommended_block_size::<T>(m, n);
        // SAFETY: faer writes the diagonal of every block of `coeff` (the
        // only entries read below) during the factorization.
        let (mut coeff, stack) = unsafe { temp_mat_uninit::<T, _, _>(bs, k, stack) };
        let mut coeff = coeff.as_mat_mut();
        {
            let mut h = item.out_mat::<T>(0);
            h.copy_from(a);
            if k > 0 {
                qr_in_place(h.rb_mut(), coeff.rb_mut(), par, stack, Default::default());
            }
        }
        for j in 0..k {
            // Reflector j's τ_faer is the diagonal of its block's factor.
            item.set::<T>(1, j, tau_from_faer(coeff[(j % bs, j)]));
        }
        Ok(())
    }
}

impl<T: Field> Kernel<T> for HouseholderQrAppend {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n1) = shapes.input(0);
        let (_, n2) = shapes.input(2);
        let k1 = m.min(n1);
        let (m2, k2) = (m.saturating_sub(n1), m.saturating_sub(n1).min(n2));
        let bs2 = recommended_block_size::<T>(m2, n2);
        StackReq::all_of(&[
            temp_mat_scratch::<T>(bs2, k2), // block factors of the new reflectors
            StackReq::any_of(&[
                temp_mat_scratch::<T>(k1, 1).and(apply_scratch::<T>(m, n1, n2)),
                qr_in_place_scratch::<T>(m2, n2, bs2, par, Default::default()),
            ]),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let h1 = item.mat::<T>(0);
        let b = item.mat::<T>(2);
        let (m, n1, n2) = (h1.nrows(), h1.ncols(), b.ncols());
        let k1 = m.min(n1);
        let (m2, k2) = (m.saturating_sub(n1), m.saturating_sub(n1).min(n2));
        let bs2 = recommended_block_size::<T>(m2, n2);
        check_finite(h1, "h")?;
        for j in 0..k1 {
            if !Scalar::is_finite(item.get::<T>(1, j)) {
                return Err(Failure::NonFinite("tau"));
            }
        }
        check_finite(b, "b")?;
        // SAFETY: faer writes the diagonal of every block of `coeff2` (the
        // only entries read below) while factoring the trailing block.
        let (mut coeff2, stack) = unsafe { temp_mat_uninit::<T, _, _>(bs2, k2, stack) };
        let mut coeff2 = coeff2.as_mat_mut();
        {
            // SAFETY: `tau1` is fully written by `read_vector` before use.
            let (mut tau1, stack) = unsafe { temp_mat_uninit::<T, _, _>(k1, 1, stack) };
            let mut tau1 = tau1.as_mat_mut();
            read_vector(item, 1, tau1.rb_mut());
            let mut h = item.out_mat::<T>(0);
            h.rb_mut().get_mut(.., 0..n1).copy_from(h1);
            let mut w = h.rb_mut().get_mut(.., n1..n1 + n2);
            w.copy_from(b);
            // W = Q_hᴴ B; its rows 0..n1 are R12.
            apply_reflectors(h1, tau1.rb().col(0), Product::Adjoint, w.rb_mut(), par, stack);
            if k2 > 0 {
                // New reflectors for the rows below A's: R22 and their basis.
                qr_in_place(w.get_mut(n1.., ..), coeff2.rb_mut(), par, stack, Default::default());
            }
        }
        for j in 0..k1 {
            let t = item.get::<T>(1, j);
            item.set::<T>(1, j, t);
        }
        for j in 0..k2 {
            item.set::<T>(1, k1 + j, tau_from_faer(coeff2[(j % bs2, j)]));
        }
        Ok(())
    }
}

impl<T: Field> Kernel<T> for HouseholderQrQ {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let k = m.min(n);
        temp_mat_scratch::<T>(k, 1).and(apply_scratch::<T>(m, n, k))
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let h = item.mat::<T>(0);
        let k = h.nrows().min(h.ncols());
        // SAFETY: fully written by `read_vector` before use.
        let (mut tau, stack) = unsafe { temp_mat_uninit::<T, _, _>(k, 1, stack) };
        let mut tau = tau.as_mat_mut();
        read_vector(item, 1, tau.rb_mut());
        let mut q = item.out_mat::<T>(0);
        q.fill(T::zero());
        for i in 0..k {
            q[(i, i)] = T::one();
        }
        apply_reflectors(h, tau.rb().col(0), Product::Q, q.rb_mut(), par, stack);
        for j in 0..k {
            let c = phase(h[(j, j)]);
            for i in 0..q.nrows() {
                q[(i, j)] *= c;
            }
        }
        Ok(())
    }
}

impl<T: Field> Kernel<T> for HouseholderQrR {
    fn scratch(&self, _shapes: &Shapes, _par: Par) -> StackReq {
        StackReq::EMPTY
    }

    fn run(&self, item: &mut Item<'_>, _par: Par, _stack: &mut MemStack) -> Result<(), Failure> {
        let h = item.mat::<T>(0);
        let mut r = item.out_mat::<T>(0);
        for i in 0..r.nrows() {
            let d = h[(i, i)];
            let c = Scalar::conj(phase(d));
            for j in 0..r.ncols() {
                r[(i, j)] = if j < i {
                    T::zero()
                } else if j == i {
                    T::from_real(Scalar::abs(d))
                } else {
                    h[(i, j)] * c
                };
            }
        }
        Ok(())
    }
}

impl<T: Field> Kernel<T> for HouseholderQrApply {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        let (_, r) = shapes.input(2);
        temp_mat_scratch::<T>(m.min(n), 1).and(apply_scratch::<T>(m, n, r))
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let h = item.mat::<T>(0);
        let b = item.mat::<T>(2);
        let k = h.nrows().min(h.ncols());
        // SAFETY: fully written by `read_vector` before use.
        let (mut tau, stack) = unsafe { temp_mat_uninit::<T, _, _>(k, 1, stack) };
        let mut tau = tau.as_mat_mut();
        read_vector(item, 1, tau.rb_mut());
        let mut y = item.out_mat::<T>(0);
        y.copy_from(b);
        apply_reflectors(h, tau.rb().col(0), Product::from(self.0), y, par, stack);
        Ok(())
    }
}
