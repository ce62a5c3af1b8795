//! Functions of Hermitian matrices: `FunmHermitian` (f(A) = V f(Λ) Vᴴ) and
//! `FunmHermitianFactors` (also w, V and the divided differences Γ its
//! derivative reads), over eigh's decomposition (`super::eigh::decompose`:
//! the lower triangle, scale-robust, canonical vectors).
//!
//! Γ_ij = f[λ_i, λ_j] = (f(λ_i) − f(λ_j))/(λ_i − λ_j), and f′(λ_i) where
//! λ_i = λ_j, in forms that do not cancel when the values nearly tie
//! (docs/ad-rules.md#matrix-functions):
//! * exp: (e^b − e^a)/(b − a) from the values, and e^m (1 + h²/6 + h⁴/120)
//!   (the series of e^m sinh(h)/h, m the midpoint, h the half gap) below
//!   h = (5040ε)^{1/7}, where the quotient's rounding, ε/h, meets the
//!   series' truncation;
//! * log: ln(b/a)/(b − a), by the series of ln(1 + x)/x in x = (b − a)/a
//!   below (5ε)^{1/5};
//! * sqrt: 1/(√a + √b), which never cancels;
//! * a caller's f: the quotient where |f(b) − f(a)| ≥ (|f(a)| + |f(b)|)/4,
//!   else ∫₀¹ f′(a + t(b − a)) dt by 8-point Gauss–Legendre, which never
//!   cancels, where it agrees with the 6-point rule to within the
//!   quotient's rounding (else the quotient: a wide interval on which f′
//!   changes sign).
//!
//! Domains: log needs every λ > 0; sqrt takes λ ≥ −10·n·ε·max|λ| (rounding
//! of a semidefinite matrix) as 0 and fails below; both report
//! `NotPositiveDefinite("a")`. A built-in f(λ) that overflows (exp) is
//! `OutOfRange("a")`; a caller's f that returns NaN or ∞ is
//! `NonFinite("fa")`.
//!
//! Scratch: the eigenvalues and f(λ) as `T`, V and V f(Λ) or f(Λ) Vᴴ (n×n
//! each), and `decompose`'s.

use super::eigh::{decompose, decompose_scratch};
use super::gauss_legendre::both;
use super::scaling::max_abs_mat;
use crate::batch::{Failure, Item, Kernel, Shapes};
use crate::field::Field;
use crate::gemm::{matmul, slow_rhs};
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{Reborrow, ReborrowMut};
use faer::{Accum, Par};
use lindiff_core::op::{FunmHermitian, FunmHermitianFactors, MatrixFunction, ScalarFunction};
use lindiff_core::{RealScalar, Scalar};

fn scratch<T: Field>(n: usize, par: Par) -> StackReq {
    if n == 0 {
        return StackReq::EMPTY;
    }
    StackReq::all_of(&[
        temp_mat_scratch::<T>(n, 1), // eigenvalues, as T
        temp_mat_scratch::<T>(n, 1), // f(λ), as T
        temp_mat_scratch::<T>(n, n), // V
        temp_mat_scratch::<T>(n, n), // V f(Λ), or f(Λ) Vᴴ
        decompose_scratch::<T>(n, true, par),
    ])
}

impl<T: Field> Kernel<T> for FunmHermitian {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        compute::<T>(item, self.0, false, par, stack)
    }
}

impl<T: Field> Kernel<T> for FunmHermitianFactors {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        scratch::<T>(shapes.input(0).0, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        compute::<T>(item, self.0, true, par, stack)
    }
}

/// f(A) into output 0; with `factors`, w, V and Γ into outputs 1, 2, 3.
fn compute<T: Field>(
    item: &mut Item<'_>,
    f: MatrixFunction,
    factors: bool,
    par: Par,
    stack: &mut MemStack,
) -> Result<(), Failure> {
    let a = item.mat::<T>(0);
    let n = a.nrows();
    if n == 0 {
        return Ok(());
    }
    // SAFETY: `decompose` writes `s` and `v` (faer, without reading them)
    // before they are read; `fw` and `vf` (V·F or F·Vᴴ) are written entry
    // by entry below first.
    let (mut s, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    let mut s = s.as_mat_mut();
    let (mut v, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
    let mut v = v.as_mat_mut();
    let (mut vf, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, n, stack) };
    let mut vf = vf.as_mat_mut();
    let (mut fw, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, 1, stack) };
    let mut fw = fw.as_mat_mut();
    let scaling = decompose(a, s.rb_mut(), Some(v.rb_mut()), par, stack)?;
    // The eigenvalues, unscaled, in the domain of f.
    let largest = (0..n)
        .map(|i| scaling.undo(Scalar::re(s[(i, 0)])).abs())
        .fold(Real::<T>::zero(), Real::<T>::max_real);
    let floor = -(largest * Real::<T>::from_usize(10 * n) * Real::<T>::EPSILON);
    for i in 0..n {
        let lambda = scaling.undo(Scalar::re(s[(i, 0)]));
        let lambda = match f {
            MatrixFunction::Exp | MatrixFunction::Custom(_) => lambda,
            MatrixFunction::Log if lambda > Real::<T>::zero() => lambda,
            MatrixFunction::Sqrt if lambda >= floor => lambda.max_real(Real::<T>::zero()),
            MatrixFunction::Log | MatrixFunction::Sqrt => return Err(Failure::NotPositiveDefinite("a")),
        };
        s[(i, 0)] = T::from_real(lambda);
    }
    let at = |i: usize| Scalar::re(s[(i, 0)]);
    for j in 0..n {
        fw[(j, 0)] = T::from_real(value(f, at(j)));
    }
    let f_at = |i: usize| Scalar::re(fw[(i, 0)]);
    let mut fa = item.out_mat::<T>(0);
    if slow_rhs::<T>(n, n, n, v.col_stride(), v.row_stride()) {
        // V·(F·Vᴴ), with F·Vᴴ column-major in `vf` (written down its
        // columns, reading V along rows): GEMM reads a Vᴴ this large slowly
        // in place (`slow_rhs`).
        for j in 0..n {
            for i in 0..n {
                vf[(i, j)] = Scalar::conj(v[(j, i)]).scale(f_at(i));
            }
        }
        matmul(fa.rb_mut(), Accum::Replace, v.rb(), vf.rb(), T::one(), par);
    } else {
        // (V·F)·Vᴴ, with V·F in `vf`.
        for j in 0..n {
            for i in 0..n {
                vf[(i, j)] = v[(i, j)].scale(f_at(j));
            }
        }
        matmul(fa.rb_mut(), Accum::Replace, vf.rb(), v.rb().adjoint(), T::one(), par);
    }
    // f(λ) overflowed (exp) or a caller's f returned NaN/∞.
    max_abs_mat(fa.rb()).ok_or(match f {
        MatrixFunction::Custom(_) => Failure::NonFinite("fa"),
        _ => Failure::OutOfRange { arg: "a", why: "f(λ) overflows the dtype at an eigenvalue λ of A" },
    })?;
    if factors {
        let mut w = item.out_mat::<Real<T>>(1);
        for i in 0..n {
            w[(i, 0)] = at(i);
        }
        let mut vo = item.out_mat::<T>(2);
        vo.copy_from(v.rb());
        let mut gamma = item.out_mat::<Real<T>>(3);
        let divided = Divided::new(f);
        let value_at = |i: usize| Scalar::re(fw[(i, 0)]);
        for j in 0..n {
            for i in 0..=j {
                let g = divided.at((at(i), value_at(i)), (at(j), value_at(j)));
                gamma[(i, j)] = g;
                gamma[(j, i)] = g;
            }
        }
    }
    Ok(())
}

pub(super) type Real<T> = <T as Scalar>::Real;

/// f(x).
fn value<R: RealScalar>(f: MatrixFunction, x: R) -> R {
    match f {
        MatrixFunction::Exp => x.exp(),
        MatrixFunction::Log => x.ln(),
        MatrixFunction::Sqrt => x.sqrt(),
        MatrixFunction::Custom(s) => R::from_f64((s.f)(x.to_f64())),
    }
}

/// f′(x).
fn slope<R: RealScalar>(f: MatrixFunction, x: R) -> R {
    match f {
        MatrixFunction::Exp => x.exp(),
        MatrixFunction::Log => R::one() / x,
        MatrixFunction::Sqrt => R::one() / (x.sqrt() + x.sqrt()),
        MatrixFunction::Custom(s) => R::from_f64((s.df)(x.to_f64())),
    }
}

/// f″(x) (a caller's f without f″ gives NaN: the op's `infer` refuses it
/// before any kernel runs).
pub(super) fn curvature<R: RealScalar>(f: MatrixFunction, x: R) -> R {
    match f {
        MatrixFunction::Exp => x.exp(),
        MatrixFunction::Log => -(R::one() / (x * x)),
        MatrixFunction::Sqrt => -(R::one() / (R::from_f64(4.0) * x * x.sqrt())),
        MatrixFunction::Custom(s) => R::from_f64(s.d2f.map_or(f64::NAN, |d2f| d2f(x.to_f64()))),
    }
}

/// f[x, y] for a function `f`, with the switch points of its series
/// computed once (see the module docs).
struct Divided<R> {
    f: MatrixFunction,
    /// (5040ε)^{1/7}: below it exp's half gap takes the series of sinh(h)/h.
    exp_limit: R,
    /// (5ε)^{1/5}: below it log's relative gap takes the series of ln(1 + x)/x.
    log_limit: R,
}

impl<R: RealScalar> Divided<R> {
    fn new(f: MatrixFunction) -> Self {
        let root = |c: f64, k: f64| ((R::from_f64(c) * R::EPSILON).ln() / R::from_f64(k)).exp();
        Divided { f, exp_limit: root(5040.0, 7.0), log_limit: root(5.0, 5.0) }
    }

    /// f[x, y] from (x, f(x)) and (y, f(y)); symmetric in its arguments.
    fn at(&self, x: (R, R), y: (R, R)) -> R {
        let ((a, fa), (b, fb)) = if x.0 <= y.0 { (x, y) } else { (y, x) };
        if a == b {
            return slope(self.f, a);
        }
        let two = R::from_f64(2.0);
        match self.f {
            MatrixFunction::Exp => {
                let h = (b - a) / two;
                if h < self.exp_limit {
                    // e^m sinh(h)/h, m the midpoint.
                    let h2 = h * h;
                    let sinhc = R::one() + h2 / R::from_f64(6.0) + h2 * h2 / R::from_f64(120.0);
                    ((a + b) / two).exp() * sinhc
                } else {
                    (fb - fa) / (b - a)
                }
            }
            MatrixFunction::Log => {
                let x = (b - a) / a;
                if x < self.log_limit {
                    let series = R::one() - x / two + x * x / R::from_f64(3.0) - x * x * x / R::from_f64(4.0);
                    series / a
                } else {
                    (b / a).ln() / (b - a)
                }
            }
            MatrixFunction::Sqrt => R::one() / (fa + fb),
            MatrixFunction::Custom(s) => R::from_f64(custom_divided(s, a.to_f64(), b.to_f64())),
        }
    }
}

/// f[a, b] of a caller's f (a < b): the quotient where it does not cancel;
/// else ∫₀¹ f′(a + t(b − a)) dt by 8-point Gauss–Legendre (no subtraction)
/// where it agrees with the 6-point rule to within the quotient's own
/// rounding, ε·(|f(a)| + |f(b)|)/(b − a), and the quotient where it does not
/// (a wide interval on which f′ changes sign).
fn custom_divided(s: ScalarFunction, a: f64, b: f64) -> f64 {
    let (fa, fb) = ((s.f)(a), (s.f)(b));
    let rise = fb - fa;
    let scale = fa.abs() + fb.abs();
    if rise.abs() >= scale / 4.0 {
        return rise / (b - a);
    }
    let (eight, six) = both(|t| (s.df)(a + t * (b - a)));
    if (eight - six).abs() <= 4.0 * f64::EPSILON * scale / (b - a) {
        eight
    } else {
        rise / (b - a)
    }
}

#[cfg(test)]
mod tests {
    use super::custom_divided;
    use lindiff_core::op::MatrixFunction;

    /// cos at ±10: the quotient cancels to exactly 0 (the true value), where
    /// Gauss–Legendre of −sin over a width of 20 is far off; near a tie the
    /// quadrature is taken and matches sin's closed form.
    #[test]
    fn the_quadrature_only_where_it_is_accurate() {
        let MatrixFunction::Custom(cos) = MatrixFunction::custom("cos", f64::cos, |x| -x.sin()) else {
            unreachable!("custom builds Custom")
        };
        assert_eq!(custom_divided(cos, -10.0, 10.0), 0.0);
        for h in [1e-12f64, 1e-8, 1e-4] {
            let (a, b) = (0.7, 0.7 + h);
            // cos[a, b] = −sin(m)·sin(h/2)/(h/2), m the midpoint.
            let half = h / 2.0;
            let want = -((a + b) / 2.0).sin() * (1.0 - half * half / 6.0);
            let got = custom_divided(cos, a, b);
            assert!((got - want).abs() <= 1e-15, "h = {h:e}: {got} vs {want}");
        }
    }
}
