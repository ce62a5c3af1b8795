//! The first and second derivatives of a function of a Hermitian matrix
//! from its factors w, V, Γ (`lindiff_core::op::funm_frechet`):
//! * `FunmHermitianFrechet`: V (Γ∘(Vᴴ E V)) Vᴴ, four products;
//! * `FunmHermitianSecond`: V R Vᴴ with R_ij = Σ_k f[λ_i, λ_k, λ_j]
//!   (Ẽ_ik D̃_kj + D̃_ik Ẽ_kj), Ẽ = Vᴴ E V, D̃ = Vᴴ D V.
//!
//! The second divided difference of x ≤ y ≤ z (w is ascending, so sorting
//! the indices sorts the values) is (f[y, z] − f[x, y])/(z − x) from Γ,
//! which loses at most a factor (|f[x, y]| + |f[y, z]|)/|f[y, z] − f[x, y]|
//! of Γ's accuracy. Where that factor passes 64 (the values close on the
//! scale on which f′ changes) it is the Hermite–Genocchi integral
//! f[x, y, z] = ∫₀¹∫₀¹ t f″(x + t(y − x) + ts(z − y)) ds dt by 8×8-point
//! Gauss–Legendre instead, which never subtracts and is exact for
//! polynomials of degree 15 in each variable; f″(x)/2 where the three tie
//! (docs/ad-rules.md#second-order-of-a-hermitian-matrix-function).
//!
//! A result that is not finite (Γ or f″ infinite: sqrt at a zero
//! eigenvalue) is `NonFinite("l")`.
//!
//! Scratch: two n×n temporaries for the first derivative, four for the
//! second.

use super::funm::{curvature, Real};
use super::gauss_legendre::{NODES, WEIGHTS};
use super::pool::Pool;
use super::scaling::max_abs_mat;
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::matmul::matmul;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, MatMut, MatRef, Par};
use lindiff_core::op::{FunmHermitianFrechet, FunmHermitianSecond, MatrixFunction};
use lindiff_core::RealScalar;

fn scratch<T: Field>(n: usize, temps: usize) -> StackReq {
    StackReq::new::<T>(temps * n * n)
}

impl<T: Field> Kernel<T> for FunmHermitianFrechet {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, 2)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (v, gamma, e) = (item.mat::<T>(1), item.mat::<Real<T>>(3), item.mat::<T>(4));
        let n = v.nrows();
        if n == 0 {
            return Ok(());
        }
        max_abs_mat(e).ok_or(Failure::NonFinite("e"))?;
        let (mut block, _) = stack.make_with(2 * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        let (mut tmp, mut tilde) = (pool.take(), pool.take());
        rotate_in(v, e, tmp.rb_mut(), tilde.rb_mut(), par);
        for j in 0..n {
            for i in 0..n {
                tilde[(i, j)] = tilde[(i, j)].scale(gamma[(i, j)]);
            }
        }
        rotate_out(item, v, tilde.rb(), tmp, par)
    }
}

impl<T: Field> Kernel<T> for FunmHermitianSecond {
    fn scratch(&self, shapes: &Shapes, _par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, 4)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let (v, w, gamma) = (item.mat::<T>(0), item.mat::<Real<T>>(1), item.mat::<Real<T>>(2));
        let (e, d) = (item.mat::<T>(3), item.mat::<T>(4));
        let n = v.nrows();
        if n == 0 {
            return Ok(());
        }
        max_abs_mat(e).ok_or(Failure::NonFinite("e"))?;
        max_abs_mat(d).ok_or(Failure::NonFinite("d"))?;
        let (mut block, _) = stack.make_with(4 * n * n, |_| T::zero());
        let mut pool = Pool::new(&mut block, n);
        let (mut tmp, mut et, mut dt, mut r) = (pool.take(), pool.take(), pool.take(), pool.take());
        rotate_in(v, e, tmp.rb_mut(), et.rb_mut(), par);
        rotate_in(v, d, tmp.rb_mut(), dt.rb_mut(), par);
        for j in 0..n {
            for i in 0..n {
                let mut sum = T::zero();
                for k in 0..n {
                    let f = second_divided(self.0, w, gamma, [i, k, j]);
                    sum += (et[(i, k)] * dt[(k, j)] + dt[(i, k)] * et[(k, j)]).scale(f);
                }
                r[(i, j)] = sum;
            }
        }
        rotate_out(item, v, r.rb(), tmp, par)
    }
}

/// `out` = Vᴴ X V, through the temporary `tmp`.
fn rotate_in<T: Field>(
    v: MatRef<'_, T>,
    x: MatRef<'_, T>,
    mut tmp: MatMut<'_, T>,
    mut out: MatMut<'_, T>,
    par: Par,
) {
    matmul(tmp.rb_mut(), Accum::Replace, v.adjoint(), x, T::one(), par);
    matmul(out.rb_mut(), Accum::Replace, tmp.rb(), v, T::one(), par);
}

/// V X Vᴴ into output 0, through the temporary `tmp`; `NonFinite("l")`
/// when it is not finite.
fn rotate_out<T: Field>(
    item: &mut Item<'_>,
    v: MatRef<'_, T>,
    x: MatRef<'_, T>,
    mut tmp: MatMut<'_, T>,
    par: Par,
) -> Result<(), Failure> {
    matmul(tmp.rb_mut(), Accum::Replace, v, x, T::one(), par);
    let mut out = item.out_mat::<T>(0);
    matmul(out.rb_mut(), Accum::Replace, tmp.rb(), v.adjoint(), T::one(), par);
    max_abs_mat(out.rb()).map(|_| ()).ok_or(Failure::NonFinite("l"))
}

/// f[λ_a, λ_b, λ_c] for the indices `abc` (see the module docs).
fn second_divided<R: RealScalar>(
    f: MatrixFunction,
    w: MatRef<'_, R>,
    gamma: MatRef<'_, R>,
    abc: [usize; 3],
) -> R {
    let [a, b, c] = abc;
    let lo = a.min(b).min(c);
    let hi = a.max(b).max(c);
    let mid = a + b + c - lo - hi;
    let (x, y, z) = (w[(lo, 0)], w[(mid, 0)], w[(hi, 0)]);
    let two = R::from_f64(2.0);
    if x == z {
        return curvature(f, x) / two;
    }
    let (left, right) = (gamma[(lo, mid)], gamma[(mid, hi)]);
    let rise = right - left;
    if rise.abs() >= (left.abs() + right.abs()) / R::from_f64(64.0) {
        return rise / (z - x);
    }
    let mut sum = R::zero();
    for (&t, &wt) in NODES.iter().zip(WEIGHTS.iter()) {
        let t = R::from_f64(t);
        let mut inner = R::zero();
        for (&s, &ws) in NODES.iter().zip(WEIGHTS.iter()) {
            inner += R::from_f64(ws) * curvature(f, x + t * (y - x) + t * R::from_f64(s) * (z - y));
        }
        sum += R::from_f64(wt) * t * inner;
    }
    sum
}
