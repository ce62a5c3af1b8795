//! The products every kernel of this crate computes: faer's GEMM, except
//! where faer's GEMM would reach for the heap.
//!
//! Without `std`, faer's GEMM allocates on every product with m·n·k above
//! 16³ (gemm's no-std packing buffers; docs/faer-scratch-apis.md §13), so
//! those products run through a heap-free loop instead, as fast as no-std
//! gemm's scalar kernels at the sizes a heap-free program uses. With `std`
//! every product goes to faer. Kernels call [`matmul`] and
//! [`matmul_with_conj`] here, never faer's directly, so that a no-std build
//! allocates only inside faer's own decompositions (docs/embedded.md,
//! "Heap-free sizes").

use crate::field::Field;
use faer::traits::Conjugate;
use faer::{Accum, Conj, MatMut, MatRef, Par};
use lindiff_core::Scalar;

/// faer's no-std GEMM allocates for an m×k by k×n product above this
/// m·n·k (its `NANO_GEMM_THRESHOLD`, 16³).
const NO_STD_HEAP_FREE_VOLUME: usize = 16 * 16 * 16;

/// Whether faer's GEMM would allocate for this product in a no-std build.
/// (It avoids the heap for some larger shapes too, e.g. matrix-vector
/// products; those take the plain loop all the same.)
fn allocates_without_std(m: usize, n: usize, k: usize) -> bool {
    m.saturating_mul(n).saturating_mul(k) > NO_STD_HEAP_FREE_VOLUME
}

/// Smallest distance in bytes between the rows of a row-major right-hand
/// side at which faer's GEMM slows down (see [`slow_rhs`]).
const ALIASING_ROW_BYTES: usize = 4096;

/// Fewest rows of the product, and rows and columns of the right-hand side,
/// at which copying a slow right-hand side pays: below, the product is too
/// short for the packing to matter, or the copy costs as much as the
/// product (a few rows times a large matrix).
const SLOW_RHS_MIN_DIM: usize = 256;

/// `true` when faer's GEMM reads the k×n right-hand side of an m×k by k×n
/// product slowly enough that a column-major copy of it pays: it is read
/// row by row (column stride 1) with its rows at least 4 KiB apart, and m,
/// k and n are at least 256. Its rows then share cache sets while GEMM
/// packs them: f64 `a · bᵀ` of column-major n×n matrices took 2× `a · b`'s
/// time where the rows are a multiple of 4 KiB apart (6.8 against 3.5 ms
/// at n = 512, 56 against 28 ms at 1024) and 1.1–1.3× at the other sizes
/// measured from 640 to 1280; copying `bᵀ` first brings it to 1.05–1.2×
/// (4.2 ms at 512, 34 ms at 1024). c64 at n = 256, whose rows are 4 KiB
/// apart too, took the same time either way (expm_hermitian: 14.9 ms).
/// `row_stride` and `col_stride` are in elements of `T`. Without `std` the
/// large products run through the plain loop, for which the copy is
/// harmless but was not measured.
pub(crate) fn slow_rhs<T>(m: usize, k: usize, n: usize, row_stride: isize, col_stride: isize) -> bool {
    col_stride == 1
        && row_stride.unsigned_abs().saturating_mul(size_of::<T>()) >= ALIASING_ROW_BYTES
        && m.min(k).min(n) >= SLOW_RHS_MIN_DIM
}

/// `dst = alpha·lhs·rhs` (`Accum::Replace`) or `dst += alpha·lhs·rhs`
/// (`Accum::Add`), as faer's `matmul`: the factors may be conjugated views
/// (`.adjoint()`, `.conjugate()`).
pub(crate) fn matmul<T: Field, L: Conjugate<Canonical = T>, R: Conjugate<Canonical = T>>(
    dst: MatMut<'_, T>,
    accum: Accum,
    lhs: MatRef<'_, L>,
    rhs: MatRef<'_, R>,
    alpha: T,
    par: Par,
) {
    matmul_with_conj(
        dst,
        accum,
        lhs.canonical(),
        Conj::get::<L>(),
        rhs.canonical(),
        Conj::get::<R>(),
        alpha,
        par,
    );
}

/// [`matmul`] with each factor optionally conjugated, as faer's
/// `matmul_with_conj`.
#[allow(clippy::too_many_arguments)] // faer's own signature, kept so call sites read the same
pub(crate) fn matmul_with_conj<T: Field>(
    dst: MatMut<'_, T>,
    accum: Accum,
    lhs: MatRef<'_, T>,
    conj_lhs: Conj,
    rhs: MatRef<'_, T>,
    conj_rhs: Conj,
    alpha: T,
    par: Par,
) {
    if !cfg!(feature = "std") && allocates_without_std(dst.nrows(), dst.ncols(), lhs.ncols()) {
        plain_product(dst, accum, lhs, conj_lhs, rhs, conj_rhs, alpha);
    } else {
        faer::linalg::matmul::matmul_with_conj(dst, accum, lhs, conj_lhs, rhs, conj_rhs, alpha, par);
    }
}

/// The product by its definition, reading the strided views in place: no
/// heap, no scratch. Each entry is one sum over k in order, then scaled by
/// `alpha` and stored or added. With `Accum::Replace` the old entries are
/// never read (they may be uninitialised workspace).
fn plain_product<T: Field>(
    mut dst: MatMut<'_, T>,
    accum: Accum,
    lhs: MatRef<'_, T>,
    conj_lhs: Conj,
    rhs: MatRef<'_, T>,
    conj_rhs: Conj,
    alpha: T,
) {
    let read = |x: T, conj: Conj| if matches!(conj, Conj::Yes) { <T as Scalar>::conj(x) } else { x };
    for j in 0..dst.ncols() {
        for i in 0..dst.nrows() {
            let mut acc = <T as Scalar>::zero();
            for p in 0..lhs.ncols() {
                acc += read(lhs[(i, p)], conj_lhs) * read(rhs[(p, j)], conj_rhs);
            }
            let scaled = alpha * acc;
            dst[(i, j)] = match accum {
                Accum::Replace => scaled,
                Accum::Add => dst[(i, j)] + scaled,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use num_complex::Complex;

    /// A deterministic m×n matrix with entries in [−1, 1).
    fn filled<T: Field>(m: usize, n: usize, seed: u64, make: impl Fn(f64, f64) -> T) -> Mat<T> {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        Mat::from_fn(m, n, |_, _| {
            let (re, im) = (next(), next());
            make(re, im)
        })
    }

    /// The heap-free loop agrees with faer's GEMM (to rounding) for every
    /// transpose/conjugation flag, both accumulations and a non-unit
    /// alpha, on shapes above the no-std threshold.
    #[test]
    fn plain_product_matches_faer() {
        let c64 = |re, im| Complex::new(re, im);
        let alpha = Complex::new(-0.75, 0.5);
        for (m, n, k) in [(17, 17, 17), (20, 3, 70), (5, 40, 30)] {
            assert!(allocates_without_std(m, n, k));
            for (conj_a, conj_b) in [(Conj::No, Conj::No), (Conj::Yes, Conj::No), (Conj::No, Conj::Yes)] {
                for accum in [Accum::Replace, Accum::Add] {
                    // a is stored k×m and read transposed, b stored n×k and read transposed.
                    let a = filled::<Complex<f64>>(k, m, 1, c64);
                    let b = filled::<Complex<f64>>(n, k, 2, c64);
                    let mut want = filled::<Complex<f64>>(m, n, 3, c64);
                    let mut got = want.clone();
                    faer::linalg::matmul::matmul_with_conj(
                        want.as_mut(),
                        accum,
                        a.transpose(),
                        conj_a,
                        b.transpose(),
                        conj_b,
                        alpha,
                        Par::Seq,
                    );
                    plain_product(got.as_mut(), accum, a.transpose(), conj_a, b.transpose(), conj_b, alpha);
                    let err = (&want - &got).norm_max();
                    assert!(err <= 1e-13 * k as f64, "{m}×{n}×{k} {conj_a:?} {conj_b:?} {accum:?}: {err:e}");
                }
            }
        }
        let a = filled::<f32>(16, 16, 3, |re, _| re as f32);
        assert!(!allocates_without_std(16, 16, 16));
        let mut got = Mat::<f32>::zeros(16, 16);
        plain_product(got.as_mut(), Accum::Replace, a.as_ref(), Conj::No, a.as_ref(), Conj::No, 1.0);
        let want = &a * &a;
        assert!((&want - &got).norm_max() <= 1e-5);
    }

    /// Rows 4 KiB apart (f64 at 512, c64 at 256) with every dimension at
    /// least 256 are slow; 2 KiB rows, a column-major factor, or a short
    /// product are not.
    #[test]
    fn the_slow_layouts() {
        assert!(slow_rhs::<f64>(512, 512, 512, 512, 1));
        assert!(slow_rhs::<Complex<f64>>(256, 256, 256, 256, 1));
        assert!(slow_rhs::<f64>(300, 700, 300, 700, 1));
        assert!(slow_rhs::<f32>(256, 256, 256, -1024, 1));
        assert!(!slow_rhs::<f64>(256, 256, 256, 256, 1));
        assert!(!slow_rhs::<f64>(512, 512, 512, 1, 512));
        assert!(!slow_rhs::<f64>(8, 512, 512, 512, 1));
        assert!(!slow_rhs::<f64>(512, 512, 100, 512, 1));
    }
}
