//! Batched `c = op_a(a) · op_b(b)` through faer's GEMM, reading the strided
//! inputs in place (transposes and conjugations are view flags, never copies)
//! and writing each product straight into its slot of the output.
//!
//! Without `std`, faer's GEMM allocates on every product with m·n·k above
//! 16³ (gemm's no-std packing buffers; docs/faer-scratch-apis.md
//! §13), so those products run through [`plain_product`] instead: a
//! heap-free loop, as fast as no-std gemm's scalar kernels at the sizes a
//! heap-free program uses. With `std`, every product goes to faer.

use super::strided::{self, View, Walk};
use crate::batch::par_for;
use crate::field::Field;
use faer::linalg::matmul::matmul_with_conj;
use faer::{Accum, Conj, MatMut, MatRef};
use lindiff_core::prim::Matmul;
use lindiff_core::{Exec, Host, Input, MatOp, Output, Result, Scalar};

/// Stride for faer: strides of dims longer than 1 are bounded by the view's
/// span, which fits the buffer (so `isize`); a size-1 dim's stride is never
/// applied and may be anything, so an unrepresentable one becomes 0.
fn stride(s: usize) -> isize {
    isize::try_from(s).unwrap_or(0)
}

/// `op(x)` as a faer view plus its conjugation flag.
fn apply<T: Field>(x: MatRef<'_, T>, op: MatOp) -> (MatRef<'_, T>, Conj) {
    match op {
        MatOp::Identity => (x, Conj::No),
        MatOp::Transpose => (x.transpose(), Conj::No),
        MatOp::Adjoint => (x.transpose(), if <T as Scalar>::IS_COMPLEX { Conj::Yes } else { Conj::No }),
    }
}

/// faer's no-std GEMM allocates for an m×k by k×n product above this
/// m·n·k (its `NANO_GEMM_THRESHOLD`, 16³).
const NO_STD_HEAP_FREE_VOLUME: usize = 16 * 16 * 16;

/// Whether faer's GEMM would allocate for this product in a no-std build.
/// (It avoids the heap for some larger shapes too, e.g. matrix-vector
/// products; those take the plain loop all the same.)
fn allocates_without_std(m: usize, n: usize, k: usize) -> bool {
    m.saturating_mul(n).saturating_mul(k) > NO_STD_HEAP_FREE_VOLUME
}

/// `c = conj?(a) · conj?(b)` by the definition, reading the strided views
/// in place: no heap, no scratch. Each entry is one sum over k in order.
fn plain_product<T: Field>(
    mut c: MatMut<'_, T>,
    a: MatRef<'_, T>,
    conj_a: Conj,
    b: MatRef<'_, T>,
    conj_b: Conj,
) {
    let read = |x: T, conj: Conj| if matches!(conj, Conj::Yes) { <T as Scalar>::conj(x) } else { x };
    for j in 0..c.ncols() {
        for i in 0..c.nrows() {
            let mut acc = <T as Scalar>::zero();
            for p in 0..a.ncols() {
                acc += read(a[(i, p)], conj_a) * read(b[(p, j)], conj_b);
            }
            c[(i, j)] = acc;
        }
    }
}

/// Runs the batched product, one matrix after another, each with faer's
/// parallelism for the team width the exec gives one matrix.
pub(super) fn matmul<T: Field>(
    op: &Matmul,
    inputs: &[Input<'_, Host>],
    out: &mut Output<'_, '_, Host>,
    exec: Exec,
) -> Result<()> {
    const NAME: &str = "matmul";
    let (ad, bd) = (inputs[0].desc, inputs[1].desc);
    let a = strided::input::<T>(NAME, "a", &inputs[0])?;
    let b = strided::input::<T>(NAME, "b", &inputs[1])?;
    let dims = strided::dims(out);
    let (m, n, batch) = (dims[0], dims[1], &dims[2..]);
    let (a_dims, b_dims) = (ad.meta.shape.dims(), bd.meta.shape.dims());
    let (a_str, b_str) = (&ad.strides, &bd.strides);
    let par = par_for(exec.plan(batch.iter().product()).threads_per_matrix);
    let c = strided::output::<T>(NAME, "c", out)?;
    let per = m * n;
    if per > 0 {
        // Item base offsets of a and b, in batch order (all share batch dims).
        let items =
            Walk::new(batch, [View::new(&[&a_str[2..]], ad.offset), View::new(&[&b_str[2..]], bd.offset)]);
        for (c_item, p) in c.chunks_exact_mut(per).zip(items) {
            // SAFETY: `lindiff_core::call` checked that every element of a's
            // view (offset + Σ index·stride) lies inside its buffer `a`, and
            // this item's elements are those with its batch indices; the
            // pointer is aligned (`a` is a typed slice), and faer only reads
            // through it while `a` is borrowed. Same for `b` below.
            let a_mat = unsafe {
                MatRef::from_raw_parts(
                    a.as_ptr().wrapping_add(p.offsets[0]),
                    a_dims[0],
                    a_dims[1],
                    stride(a_str[0]),
                    stride(a_str[1]),
                )
            };
            // SAFETY: as for `a` above.
            let b_mat = unsafe {
                MatRef::from_raw_parts(
                    b.as_ptr().wrapping_add(p.offsets[1]),
                    b_dims[0],
                    b_dims[1],
                    stride(b_str[0]),
                    stride(b_str[1]),
                )
            };
            // SAFETY: `c_item` is this item's m·n elements, uniquely
            // borrowed and aligned; column-major m×n with column stride m
            // covers exactly them. faer's `Accum::Replace` writes every
            // element without reading the old (uninitialised) values, and
            // zero-fills when the inner dimension is 0.
            let c_mat =
                unsafe { MatMut::from_raw_parts_mut(c_item.as_mut_ptr().cast::<T>(), m, n, 1, m as isize) };
            let (lhs, conj_lhs) = apply(a_mat, op.a);
            let (rhs, conj_rhs) = apply(b_mat, op.b);
            if !cfg!(feature = "std") && allocates_without_std(m, n, lhs.ncols()) {
                plain_product(c_mat, lhs, conj_lhs, rhs, conj_rhs);
            } else {
                matmul_with_conj(
                    c_mat,
                    Accum::Replace,
                    lhs,
                    conj_lhs,
                    rhs,
                    conj_rhs,
                    <T as Scalar>::one(),
                    par,
                );
            }
        }
    }
    // SAFETY: the loop above ran one `Replace` product per batch item over
    // the disjoint `per`-element chunks that tile the output (`Walk` yields
    // one position per item, the chunk count); with `per == 0` there is
    // nothing to write.
    unsafe { strided::finish::<T>(out) };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::{Mat, Par};
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
    /// transpose/conjugation flag, on shapes above the no-std threshold.
    #[test]
    fn plain_product_matches_faer() {
        let c64 = |re, im| Complex::new(re, im);
        for (m, n, k) in [(17, 17, 17), (20, 3, 70), (5, 40, 30)] {
            assert!(allocates_without_std(m, n, k));
            for (conj_a, conj_b) in [(Conj::No, Conj::No), (Conj::Yes, Conj::No), (Conj::No, Conj::Yes)] {
                // a is stored k×m and read transposed, b stored n×k and read transposed.
                let a = filled::<Complex<f64>>(k, m, 1, c64);
                let b = filled::<Complex<f64>>(n, k, 2, c64);
                let mut want = Mat::<Complex<f64>>::zeros(m, n);
                let mut got = Mat::<Complex<f64>>::zeros(m, n);
                let one = <Complex<f64> as Scalar>::one();
                matmul_with_conj(
                    want.as_mut(),
                    Accum::Replace,
                    a.transpose(),
                    conj_a,
                    b.transpose(),
                    conj_b,
                    one,
                    Par::Seq,
                );
                plain_product(got.as_mut(), a.transpose(), conj_a, b.transpose(), conj_b);
                let err = (&want - &got).norm_max();
                assert!(err <= 1e-13 * k as f64, "{m}×{n}×{k} {conj_a:?} {conj_b:?}: {err:e}");
            }
        }
        let a = filled::<f32>(16, 16, 3, |re, _| re as f32);
        assert!(!allocates_without_std(16, 16, 16));
        let mut got = Mat::<f32>::zeros(16, 16);
        plain_product(got.as_mut(), a.as_ref(), Conj::No, a.as_ref(), Conj::No);
        let want = &a * &a;
        assert!((&want - &got).norm_max() <= 1e-5);
    }
}
