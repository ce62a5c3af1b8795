//! The adjugate kernel, from the SVD (docs/ad-rules.md#determinants): with
//! `a = U diag(s) Vᴴ`,
//!
//! adj(a) = adj(Vᴴ) · adj(diag(s)) · adj(U) = det(U) · det(Vᴴ) · V diag(c) Uᴴ,
//! c_i = Π_{j≠i} s_j,
//!
//! since adj(W) = det(W) Wᴴ for a unitary W. Nothing is divided, so a singular
//! matrix gets its exact, finite adjugate: the rank-one
//! `c_n · v_n u_nᴴ` (times the phase) at corank 1, zero at corank ≥ 2. The
//! products `c_i` use the determinant kernel's exact power-of-two rescaling,
//! so they overflow only when the adjugate itself does. `det(U)` and
//! `det(Vᴴ) = conj(det V)` have modulus 1: each is the phase of the pivot
//! product of a partial-pivot LU (the determinant kernel's factorization).
//!
//! Accuracy: a backward-stable SVD gives every `s_i` to `eps·s_max`, so the
//! adjugate has an absolute error of about `eps · s_max^{n−1}` (the size of
//! the largest cofactor), singular or not.
//!
//! Scale-robust: the SVD is of `a · 2^e` when `a` lies outside the safe
//! range, and adj(a) = adj(a · 2^e) · 2^(−(n−1)e) goes into the products'
//! exponents.

use super::det::{factor_square, scratch as factor_region, ScaledProduct};
use super::lu::div_real;
use super::scaling::Scaling;
use super::svd::{compute, scratch as svd_scratch, Shape};
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use crate::gemm::matmul;
use faer::dyn_stack::{MemStack, StackReq};
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatRef, Par};
use lindiff_core::op::{Adjugate, SvdOptions};
use lindiff_core::Scalar;

/// `det(w)` of a unitary (or any nonsingular) `w`, normalised to modulus 1.
fn unit_det<T: Field>(w: MatRef<'_, T>, par: Par, stack: &mut MemStack) -> T {
    factor_square(w, Scaling::NONE, par, stack, |lu, odd| {
        let mut phase = if odd { -T::one() } else { T::one() };
        for k in 0..lu.nrows() {
            let p = lu[(k, k)];
            phase *= div_real(p, Scalar::abs(p));
        }
        div_real(phase, Scalar::abs(phase))
    })
}

impl<T: Field> Kernel<T> for Adjugate {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let n = shapes.input(0).0;
        let region = factor_region::<T>(n, par);
        StackReq::all_of(&[
            StackReq::new_aligned::<u8>(region.size_bytes(), region.align_bytes()),
            svd_scratch::<T>(&SvdOptions::default(), Shape::Thin, n, n, par),
        ])
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        let n = a.nrows();
        if n == 0 {
            return Ok(());
        }
        // The LU scratch of the two unit determinants, carved before the SVD
        // takes the rest (the SVD's factors live only inside `compute`).
        let req = factor_region::<T>(n, par);
        let (region, stack) = stack.make_aligned_uninit::<u8>(req.size_bytes(), req.align_bytes());
        let region = MemStack::new(region);
        let mut out = item.out_mat::<T>(0);
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, s, v, scaling| {
            // `Shape::Thin` always hands both factors over.
            let (Some(u), Some(mut v)) = (u, v) else {
                return;
            };
            let phase = unit_det(u.rb(), par, region) * Scalar::conj(unit_det(v.rb(), par, region));
            for i in 0..n {
                let mut c = ScaledProduct::<T>::one();
                for j in (0..n).filter(|&j| j != i) {
                    c.mul(s[(j, 0)]);
                }
                c.mul_pow2(-i64::from(scaling.exponent()) * (n as i64 - 1));
                let ci = c.value() * phase;
                for r in 0..n {
                    v[(r, i)] *= ci;
                }
            }
            matmul(out.rb_mut(), Accum::Replace, v.rb(), u.rb().adjoint(), T::one(), par);
        })
    }
}
