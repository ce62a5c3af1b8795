//! The fuzz's value classes: how an input matrix's entries are drawn, and
//! the power of two (if any) it is scaled by, which the checks undo
//! exactly to work on O(1) numbers.

use crate::dense::{Re, Rng};
use lindiff_core::{RealScalar, Scalar};

/// How an input's entries are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Uniform in [−1, 1) (both parts for complex dtypes).
    Normal,
    /// Small integers in [−9, 9].
    Integer,
    /// A product of random m×r and r×n factors, r < min(m, n).
    RankDeficient,
    /// Normal entries with one or two NaN, +∞ or −∞ parts.
    NonFinite,
    /// Half the entries ±0 (either sign), the rest normal; sometimes all.
    Zeros,
    /// Normal entries times 2^996 (≈ 1e300; f32: 2^116 ≈ 1e35).
    Huge,
    /// Normal entries times 2^−996 (≈ 1e−300; f32: 2^−116).
    Small,
    /// Normal entries times 2^−1012 (≈ 1e−305; f32: 2^−120).
    Tiny,
    /// Normal entries times 2^−1030 (≈ 1e−310, subnormal; f32: 2^−136).
    Subnormal,
}

impl Class {
    /// Every class.
    pub const ALL: [Class; 9] = [
        Class::Normal,
        Class::Integer,
        Class::RankDeficient,
        Class::NonFinite,
        Class::Zeros,
        Class::Huge,
        Class::Small,
        Class::Tiny,
        Class::Subnormal,
    ];

    /// The power of two the class scales by, for dtype `T` (0: none).
    /// Even, so that a square root of the scale (a Cholesky factor's) is
    /// exact too.
    pub fn exponent<T: Scalar>() -> impl Fn(Class) -> i32 {
        let single = Re::<T>::EPSILON.to_f64() > 1e-10;
        move |class| match (class, single) {
            (Class::Huge, false) => 996,
            (Class::Small, false) => -996,
            (Class::Tiny, false) => -1012,
            (Class::Subnormal, false) => -1030,
            (Class::Huge, true) => 116,
            (Class::Small, true) => -116,
            (Class::Tiny, true) => -120,
            (Class::Subnormal, true) => -136,
            _ => 0,
        }
    }
}

/// `x · 2^e` in f64, in steps that keep every intermediate normal (so the
/// result rounds once, if at all).
pub fn pow2_scale(x: f64, e: i32) -> f64 {
    let mut x = x;
    let mut e = e;
    while e != 0 {
        let step = e.clamp(-600, 600);
        x *= 2f64.powi(step);
        e -= step;
    }
    x
}

/// `x · 2^e` in `T` (each part rounded once, into `T`'s subnormals where
/// the product lands there).
pub fn scaled<T: Scalar>(x: T, e: i32) -> T {
    T::from_parts(
        Re::<T>::from_f64(pow2_scale(x.re().to_f64(), e)),
        Re::<T>::from_f64(pow2_scale(x.im().to_f64(), e)),
    )
}

/// A rows×cols matrix of class `class` (column-major) and its exponent.
pub fn matrix<T: Scalar>(rng: &mut Rng, rows: usize, cols: usize, class: Class) -> (Vec<T>, i32) {
    let len = rows * cols;
    let e = Class::exponent::<T>()(class);
    let normal = |rng: &mut Rng| -> T { rng.scalar() };
    let data: Vec<T> = match class {
        Class::Integer => (0..len)
            .map(|_| {
                let re = (rng.uniform() * 19.0).floor() - 9.0;
                let im = (rng.uniform() * 19.0).floor() - 9.0;
                T::from_parts(Re::<T>::from_f64(re), Re::<T>::from_f64(im))
            })
            .collect(),
        Class::RankDeficient => {
            let k = rows.min(cols);
            let r = if k == 0 { 0 } else { (rng.uniform() * k as f64) as usize };
            let x: Vec<T> = (0..rows * r).map(|_| normal(rng)).collect();
            let y: Vec<T> = (0..r * cols).map(|_| normal(rng)).collect();
            (0..len)
                .map(|idx| {
                    let (i, j) = (idx % rows, idx / rows);
                    (0..r).fold(T::zero(), |s, l| s + x[i + l * rows] * y[l + j * r])
                })
                .collect()
        }
        Class::NonFinite => {
            let mut d: Vec<T> = (0..len).map(|_| normal(rng)).collect();
            for _ in 0..1 + (rng.uniform() * 2.0) as usize {
                if len == 0 {
                    break;
                }
                let at = (rng.uniform() * len as f64) as usize;
                let bad = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY][(rng.uniform() * 3.0) as usize];
                let bad = Re::<T>::from_f64(bad);
                d[at] = if T::IS_COMPLEX && rng.uniform() < 0.5 {
                    T::from_parts(d[at].re(), bad)
                } else {
                    T::from_parts(bad, d[at].im())
                };
            }
            d
        }
        Class::Zeros => {
            let all = rng.uniform() < 0.3;
            (0..len)
                .map(|_| {
                    if all || rng.uniform() < 0.5 {
                        let sign = if rng.uniform() < 0.5 { -1.0 } else { 1.0 };
                        T::from_parts(Re::<T>::from_f64(0.0 * sign), Re::<T>::from_f64(0.0 * -sign))
                    } else {
                        normal(rng)
                    }
                })
                .collect()
        }
        _ => (0..len).map(|_| scaled(normal(rng), e)).collect(),
    };
    (data, e)
}

/// A class drawn uniformly from [`Class::ALL`].
pub fn any_class(rng: &mut Rng) -> Class {
    Class::ALL[(rng.uniform() * Class::ALL.len() as f64) as usize]
}

/// A matrix dim: mostly 1–6, sometimes 0 or up to 12 (so faer's blocked
/// paths and lindiff's small kernels both run), at most `max`.
pub fn dim(rng: &mut Rng, max: usize) -> usize {
    let u = rng.uniform();
    let d = if u < 0.08 {
        0
    } else if u < 0.25 {
        1
    } else if u < 0.9 {
        2 + (rng.uniform() * 5.0) as usize
    } else {
        7 + (rng.uniform() * 6.0) as usize
    };
    d.min(max)
}
