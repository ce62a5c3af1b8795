//! The array primitives on every host provider, against hand-computed values
//! and naive dense results: batched matmul with all transpose/conjugate
//! combinations, elementwise maps and their dtype changes, layout moves,
//! diagonals and masks, reductions with their empty cases, constants, and
//! strided (row-major, padded, offset) inputs.

use lindiff_core::op::Triangle;
use lindiff_core::prim::{
    Adjoint, Binary, BinaryOp, DiagEmbed, DiagPart, Eye, Fill, Matmul, Pad, Reduce, ReduceOp, Reshape, Scale,
    ScaleCols, ScaleRows, Slice, Spread, TriMask, Unary, UnaryOp,
};
use lindiff_core::{
    call, DType, Error, Host, HostBuffer, HostData, Input, MatOp, Op, PrimOp, Provider, RealScalar, Scalar,
    Shape, TensorDesc, TensorMeta,
};
use lindiff_tests::counting::{count, expect_zero, Counting};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;
type C32 = Complex<f32>;

/// Runs a one-output primitive and returns its output.
fn run1<P: Provider<Memory = Host>>(p: &P, op: PrimOp, inputs: &[&HostTensor]) -> HostTensor {
    let name = op.name();
    let mut outs = run(p, op, inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    outs.remove(0).expect("output present")
}

fn s<T: Scalar>(re: f64, im: f64) -> T {
    T::from_parts(Re::<T>::from_f64(re), Re::<T>::from_f64(im))
}

fn reals<T: Scalar>(xs: &[f64]) -> Vec<T> {
    xs.iter().map(|&x| s(x, 0.0)).collect()
}

fn nan<T: Scalar>() -> T {
    s(f64::NAN, f64::NAN)
}

fn assert_close<T: Scalar>(got: &[T], want: &[T], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (g - w).abs().to_f64();
        assert!(err <= tol * (1.0 + w.abs().to_f64()), "{what}[{k}]: got {g:?}, want {w:?}");
    }
}

/// `op(x)` on the test side.
fn apply<T: Scalar>(x: &Dense<T>, op: MatOp) -> Dense<T> {
    match op {
        MatOp::Identity => x.clone(),
        MatOp::Transpose => x.transpose(),
        MatOp::Adjoint => x.adjoint(),
    }
}

const OPS: [MatOp; 3] = [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint];

/// A batch `[rows, cols, count]` stored with padding and an offset: each
/// matrix row- or column-major with leading dimension `ld = (rows or cols) +
/// pad`, the whole tensor starting `offset` elements in. Every element
/// outside the view is NaN, so reading one shows up in the result.
fn strided<T: Scalar>(ms: &[Dense<T>], row_major: bool, pad: usize, offset: usize) -> HostTensor {
    let (r, c, count) = (ms[0].rows, ms[0].cols, ms.len());
    let ld = if row_major { c + pad } else { r + pad };
    let item = ld * if row_major { r } else { c };
    let mut data = vec![nan::<T>(); offset + count * item];
    for (b, m) in ms.iter().enumerate() {
        for j in 0..c {
            for i in 0..r {
                let at = if row_major { i * ld + j } else { i + j * ld };
                data[offset + b * item + at] = m[(i, j)];
            }
        }
    }
    let strides = if row_major { [ld, 1, item] } else { [1, ld, item] };
    let desc = TensorDesc {
        meta: TensorMeta::new(T::DTYPE, Shape::new(&[r, c, count]).unwrap()),
        strides: strides.into_iter().collect(),
        offset,
    };
    HostTensor::with_desc(desc, &data)
}

// ---------------------------------------------------------------- matmul

fn matmul_all_ops<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let (m, k, n, count) = (3, 4, 2, 3);
    for op_a in OPS {
        for op_b in OPS {
            let stored = |rng: &mut Rng, op: MatOp, r: usize, c: usize| -> Vec<Dense<T>> {
                (0..count)
                    .map(|_| if op == MatOp::Identity { rng.matrix(r, c) } else { rng.matrix(c, r) })
                    .collect()
            };
            let a = stored(&mut rng, op_a, m, k);
            let b = stored(&mut rng, op_b, k, n);
            let c = run1(
                p,
                PrimOp::Matmul(Matmul::new(op_a, op_b)),
                &[&HostTensor::batch(&a), &HostTensor::batch(&b)],
            );
            assert_eq!(c.dims(), &[m, n, count]);
            for i in 0..count {
                let want = apply(&a[i], op_a).matmul(&apply(&b[i], op_b));
                let got: Dense<T> = c.matrix(i);
                let tol = 50.0 * k as f64 * eps::<T>() * a[i].norm() * b[i].norm();
                assert!(got.sub(&want).norm() <= tol, "{op_a:?}·{op_b:?} item {i}");
            }
        }
    }
}

fn matmul_strided<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let (m, k, n) = (4, 3, 5);
    // A plain row-major matrix (the layout of a JS or NumPy array).
    let a: Dense<T> = rng.matrix(m, k);
    let b: Dense<T> = rng.matrix(k, n);
    let row_major: Vec<T> = (0..m).flat_map(|i| (0..k).map(move |j| (i, j))).map(|ij| a[ij]).collect();
    let at = HostTensor::with_desc(TensorDesc::row_major_matrix(T::DTYPE, m, k).unwrap(), &row_major);
    let c = run1(p, PrimOp::Matmul(Matmul::PLAIN), &[&at, &HostTensor::from_dense(&b)]);
    let tol = 50.0 * k as f64 * eps::<T>() * a.norm() * b.norm();
    assert!(c.matrix::<T>(0).sub(&a.matmul(&b)).norm() <= tol, "row-major a");
    // Batched, padded, offset views on both sides, with an adjoint.
    let a: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(k, m)).collect();
    let b: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(k, n)).collect();
    let op = Matmul::new(MatOp::Adjoint, MatOp::Identity);
    let c = run1(p, PrimOp::Matmul(op), &[&strided(&a, true, 2, 3), &strided(&b, false, 1, 5)]);
    for i in 0..2 {
        let want = a[i].adjoint().matmul(&b[i]);
        let tol = 50.0 * k as f64 * eps::<T>() * a[i].norm() * b[i].norm();
        assert!(c.matrix::<T>(i).sub(&want).norm() <= tol, "strided batch item {i}");
    }
}

/// A right-hand side read row by row with its rows 4 KiB apart, in a
/// product of at least 256 rows, inner and outer dimensions, is copied
/// column-major into the workspace first (faer packs it slowly in place):
/// `a · bᵀ` and `a · bᴴ` of column-major `b` (a batch of two, and one `b`
/// broadcast over the batch by a zero stride) and a row-major `b`, against
/// columns of `Dense::matmul`'s product, with the workspace the provider
/// asks for.
fn matmul_copied_rhs<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    // Rows of op(b) `n` elements apart: 4 KiB for f64 at 512, c64 at 256.
    let (m, k, n) = (256, 256, 4096 / core::mem::size_of::<T>());
    let a: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(m, k)).collect();
    let b: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(n, k)).collect();
    // Columns of item i of `c` against a[i] · rhs, a few spread over the
    // product (each from its own reference product: the full one would be
    // slow in a debug build).
    let check = |c: &HostTensor, i: usize, rhs: Dense<T>, what: &str| {
        let got = c.matrix::<T>(i);
        for j in [0, 1, 7, n / 2, n - 1] {
            let want = a[i].matmul(&rhs.cols_range(j, 1));
            let tol = 50.0 * k as f64 * eps::<T>() * a[i].norm() * rhs.norm();
            assert!(got.cols_range(j, 1).sub(&want).norm() <= tol, "{what}, item {i}, column {j}");
        }
    };
    let ta = HostTensor::batch(&a);
    let broadcast = || {
        let mut desc =
            TensorDesc::contiguous(TensorMeta::new(T::DTYPE, Shape::new(&[n, k, 2]).unwrap())).unwrap();
        desc.strides[2] = 0;
        HostTensor::with_desc(desc, &HostTensor::from_dense(&b[0]).to_vec::<T>())
    };
    for op_b in [MatOp::Transpose, MatOp::Adjoint] {
        for shared in [false, true] {
            let tb = if shared { broadcast() } else { HostTensor::batch(&b) };
            let op = Matmul::new(MatOp::Identity, op_b);
            let req = call::workspace(p, &Op::Prim(PrimOp::Matmul(op)), &[&ta.desc, &tb.desc]).unwrap();
            assert!(req.bytes() >= n * k * core::mem::size_of::<T>(), "{op_b:?}: workspace {}", req.bytes());
            let c = run1(p, PrimOp::Matmul(op), &[&ta, &tb]);
            for i in 0..2 {
                let bi = if shared { &b[0] } else { &b[i] };
                check(&c, i, apply(bi, op_b), &format!("a·{op_b:?}(b), broadcast {shared}"));
            }
        }
    }
    let bt = b[0].transpose();
    let row_major: Vec<T> = (0..k).flat_map(|i| (0..n).map(move |j| (i, j))).map(|ij| bt[ij]).collect();
    let rm = HostTensor::with_desc(TensorDesc::row_major_matrix(T::DTYPE, k, n).unwrap(), &row_major);
    let c = run1(p, PrimOp::Matmul(Matmul::PLAIN), &[&HostTensor::from_dense(&a[0]), &rm]);
    check(&c, 0, bt, "row-major b");
}

fn matmul_empty<P: Provider<Memory = Host>>(p: &P) {
    // Inner dimension 0: the product is all zeros.
    let a = HostTensor::new::<f64>(&[3, 0, 2], &[]);
    let b = HostTensor::new::<f64>(&[0, 2, 2], &[]);
    let c = run1(p, PrimOp::Matmul(Matmul::PLAIN), &[&a, &b]);
    assert_eq!(c.dims(), &[3, 2, 2]);
    assert_eq!(c.to_vec::<f64>(), vec![0.0; 12]);
    // Empty output, empty batch.
    let a = HostTensor::new::<C64>(&[0, 3], &[]);
    let b = HostTensor::new::<C64>(&[3, 4], &[s(1.0, 1.0); 12]);
    assert_eq!(run1(p, PrimOp::Matmul(Matmul::PLAIN), &[&a, &b]).dims(), &[0, 4]);
    let a = HostTensor::new::<f64>(&[2, 2, 0], &[]);
    assert_eq!(run1(p, PrimOp::Matmul(Matmul::PLAIN), &[&a, &a]).dims(), &[2, 2, 0]);
}

fn matmul_hand<P: Provider<Memory = Host>>(p: &P) {
    // A = [[1, i], [2, 0]] (rows listed): Aᴴ = [[1, 2], [-i, 0]], so
    // Aᴴ·[1, i]ᵀ = [1 + 2i, -i].
    let a = HostTensor::new::<C64>(&[2, 2], &[s(1.0, 0.0), s(2.0, 0.0), s(0.0, 1.0), s(0.0, 0.0)]);
    let x = HostTensor::new::<C64>(&[2, 1], &[s(1.0, 0.0), s(0.0, 1.0)]);
    let y = run1(p, PrimOp::Matmul(Matmul::new(MatOp::Adjoint, MatOp::Identity)), &[&a, &x]);
    assert_eq!(y.to_vec::<C64>(), vec![s(1.0, 2.0), s(0.0, -1.0)]);
    // Transpose does not conjugate: Aᵀ·[1, i]ᵀ = [1 + 2i, i].
    let y = run1(p, PrimOp::Matmul(Matmul::new(MatOp::Transpose, MatOp::Identity)), &[&a, &x]);
    assert_eq!(y.to_vec::<C64>(), vec![s(1.0, 2.0), s(0.0, 1.0)]);
}

// ---------------------------------------------------------------- elementwise

/// `op` on `x` (complex values as (re, im)) gives `want` of dtype `U`.
fn check_unary<T: Scalar, U: Scalar, P: Provider<Memory = Host>>(
    p: &P,
    op: UnaryOp,
    x: &[(f64, f64)],
    want: &[(f64, f64)],
) {
    let xs: Vec<T> = x.iter().map(|&(re, im)| s(re, im)).collect();
    let want: Vec<U> = want.iter().map(|&(re, im)| s(re, im)).collect();
    let y = run1(p, PrimOp::Unary(Unary(op)), &[&HostTensor::new(&[2, 2], &xs)]);
    assert_eq!(y.desc.meta.dtype, U::DTYPE, "{op:?} dtype");
    assert_eq!(y.dims(), &[2, 2]);
    assert_close(&y.to_vec::<U>(), &want, 4.0 * eps::<U>(), op.name());
}

fn unary_complex<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    use UnaryOp::*;
    let x = [(3.0, 4.0), (-3.0, 4.0), (0.0, -2.0), (-4.0, 0.0)];
    check_unary::<T, T, P>(p, Neg, &x, &[(-3.0, -4.0), (3.0, -4.0), (0.0, 2.0), (4.0, 0.0)]);
    check_unary::<T, T, P>(p, Conj, &x, &[(3.0, -4.0), (-3.0, -4.0), (0.0, 2.0), (-4.0, 0.0)]);
    check_unary::<T, Re<T>, P>(p, Real, &x, &[(3.0, 0.0), (-3.0, 0.0), (0.0, 0.0), (-4.0, 0.0)]);
    check_unary::<T, Re<T>, P>(p, Imag, &x, &[(4.0, 0.0), (4.0, 0.0), (-2.0, 0.0), (0.0, 0.0)]);
    check_unary::<T, T, P>(p, ToComplex, &x, &x);
    check_unary::<T, T, P>(p, MulI, &x, &[(-4.0, 3.0), (-4.0, -3.0), (2.0, 0.0), (0.0, -4.0)]);
    check_unary::<T, Re<T>, P>(p, Abs, &x, &[(5.0, 0.0), (5.0, 0.0), (2.0, 0.0), (4.0, 0.0)]);
    check_unary::<T, Re<T>, P>(p, Abs2, &x, &[(25.0, 0.0), (25.0, 0.0), (4.0, 0.0), (16.0, 0.0)]);
    check_unary::<T, T, P>(p, Sqrt, &x, &[(2.0, 1.0), (1.0, 2.0), (1.0, -1.0), (0.0, 2.0)]);
    check_unary::<T, T, P>(p, Recip, &x, &[(0.12, -0.16), (-0.12, -0.16), (0.0, 0.5), (-0.25, 0.0)]);
    check_unary::<T, T, P>(p, Copy, &x, &x);
}

fn unary_real<T: Scalar, C: Scalar<Real = T>, P: Provider<Memory = Host>>(p: &P) {
    use UnaryOp::*;
    let x = [(4.0, 0.0), (-2.5, 0.0), (0.25, 0.0), (9.0, 0.0)];
    let neg = [(-4.0, 0.0), (2.5, 0.0), (-0.25, 0.0), (-9.0, 0.0)];
    check_unary::<T, T, P>(p, Neg, &x, &neg);
    check_unary::<T, T, P>(p, Conj, &x, &x);
    check_unary::<T, T, P>(p, Real, &x, &x);
    check_unary::<T, T, P>(p, Imag, &x, &[(0.0, 0.0); 4]);
    check_unary::<T, C, P>(p, ToComplex, &x, &x);
    check_unary::<T, T, P>(p, Abs, &x, &[(4.0, 0.0), (2.5, 0.0), (0.25, 0.0), (9.0, 0.0)]);
    check_unary::<T, T, P>(p, Abs2, &x, &[(16.0, 0.0), (6.25, 0.0), (0.0625, 0.0), (81.0, 0.0)]);
    check_unary::<T, T, P>(p, Recip, &x, &[(0.25, 0.0), (-0.4, 0.0), (4.0, 0.0), (1.0 / 9.0, 0.0)]);
    check_unary::<T, T, P>(p, Copy, &x, &x);
    let sq = [(4.0, 0.0), (0.25, 0.0), (9.0, 0.0), (16.0, 0.0)];
    check_unary::<T, T, P>(p, Sqrt, &sq, &[(2.0, 0.0), (0.5, 0.0), (3.0, 0.0), (4.0, 0.0)]);
    let e = core::f64::consts::E;
    let ln2 = core::f64::consts::LN_2;
    check_unary::<T, T, P>(
        p,
        Exp,
        &[(0.0, 0.0), (1.0, 0.0), (ln2, 0.0), (-ln2, 0.0)],
        &[(1.0, 0.0), (e, 0.0), (2.0, 0.0), (0.5, 0.0)],
    );
    check_unary::<T, T, P>(
        p,
        Log,
        &[(1.0, 0.0), (e, 0.0), (2.0, 0.0), (0.5, 0.0)],
        &[(0.0, 0.0), (1.0, 0.0), (ln2, 0.0), (-ln2, 0.0)],
    );
}

fn unary_shapes_and_layouts<P: Provider<Memory = Host>>(p: &P) {
    // Any rank: a scalar, an empty tensor, a rank-3 tensor.
    let x = HostTensor::new::<f64>(&[], &[2.0]);
    assert_eq!(run1(p, PrimOp::Unary(Unary(UnaryOp::Neg)), &[&x]).to_vec::<f64>(), vec![-2.0]);
    let x = HostTensor::new::<C64>(&[0, 3], &[]);
    let y = run1(p, PrimOp::Unary(Unary(UnaryOp::Real)), &[&x]);
    assert_eq!((y.dims(), y.desc.meta.dtype), (&[0usize, 3][..], DType::F64));
    let data: Vec<f64> = (0..12).map(|v| v as f64).collect();
    let y = run1(p, PrimOp::Unary(Unary(UnaryOp::Neg)), &[&HostTensor::new(&[2, 3, 2], &data)]);
    assert_eq!(y.to_vec::<f64>(), data.iter().map(|v| -v).collect::<Vec<_>>());
    // A padded row-major batch with an offset (NaN outside the view).
    let mut rng = Rng::new(11);
    let ms: Vec<Dense<C64>> = (0..3).map(|_| rng.matrix(3, 2)).collect();
    let y = run1(p, PrimOp::Unary(Unary(UnaryOp::Conj)), &[&strided(&ms, true, 2, 1)]);
    for (i, m) in ms.iter().enumerate() {
        let want = Dense::from_fn(3, 2, |r, c| m[(r, c)].conj());
        assert_eq!(y.matrix::<C64>(i), want, "item {i}");
    }
    let y = run1(p, PrimOp::Unary(Unary(UnaryOp::Imag)), &[&strided(&ms, false, 1, 4)]);
    for (i, m) in ms.iter().enumerate() {
        assert_eq!(y.matrix::<f64>(i), Dense::from_fn(3, 2, |r, c| m[(r, c)].im), "item {i}");
    }
    // Core rejects the complex-only and real-only maps on the wrong dtype.
    let x = HostTensor::new::<f64>(&[1], &[1.0]);
    assert!(matches!(run(p, PrimOp::Unary(Unary(UnaryOp::MulI)), &[&x]), Err(Error::DType { .. })));
}

fn binary_hand<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let x: Vec<T> =
        [(1.0, 2.0), (3.0, -1.0), (0.5, 0.0), (-2.0, 4.0)].iter().map(|&(a, b)| s(a, b)).collect();
    let y: Vec<T> = [(3.0, -4.0), (1.0, 1.0), (2.0, 0.0), (0.0, 2.0)].iter().map(|&(a, b)| s(a, b)).collect();
    let xt = HostTensor::new(&[2, 2], &x);
    let yt = HostTensor::new(&[2, 2], &y);
    let cplx = |a: f64, b: f64| (a, b);
    // Worked out by hand; for real T only the real parts enter:
    // x = [1, 3, .5, -2], y = [3, 1, 2, 0].
    let want: [(BinaryOp, [(f64, f64); 4]); 3] = if T::IS_COMPLEX {
        [
            (BinaryOp::Add, [cplx(4.0, -2.0), cplx(4.0, 0.0), cplx(2.5, 0.0), cplx(-2.0, 6.0)]),
            (BinaryOp::Sub, [cplx(-2.0, 6.0), cplx(2.0, -2.0), cplx(-1.5, 0.0), cplx(-2.0, 2.0)]),
            (BinaryOp::Mul, [cplx(11.0, 2.0), cplx(4.0, 2.0), cplx(1.0, 0.0), cplx(-8.0, -4.0)]),
        ]
    } else {
        [
            (BinaryOp::Add, [cplx(4.0, 0.0), cplx(4.0, 0.0), cplx(2.5, 0.0), cplx(-2.0, 0.0)]),
            (BinaryOp::Sub, [cplx(-2.0, 0.0), cplx(2.0, 0.0), cplx(-1.5, 0.0), cplx(-2.0, 0.0)]),
            (BinaryOp::Mul, [cplx(3.0, 0.0), cplx(3.0, 0.0), cplx(1.0, 0.0), cplx(0.0, 0.0)]),
        ]
    };
    for (op, w) in want {
        let z = run1(p, PrimOp::Binary(Binary(op)), &[&xt, &yt]);
        let w: Vec<T> = w.iter().map(|&(a, b)| s(a, b)).collect();
        assert_close(&z.to_vec::<T>(), &w, 4.0 * eps::<T>(), op.name());
    }
    // x / y = x · ȳ / |y|²; for real T divide by a y without zeros.
    let y2: Vec<T> =
        [(3.0, -4.0), (1.0, 1.0), (2.0, 0.0), (4.0, 2.0)].iter().map(|&(a, b)| s(a, b)).collect();
    let want: Vec<T> = if T::IS_COMPLEX {
        // (1+2i)/(3-4i) = (1+2i)(3+4i)/25 = (-5+10i)/25; (3-i)/(1+i) = (3-i)(1-i)/2 = (2-4i)/2;
        // 0.5/2; (-2+4i)/(4+2i) = (-2+4i)(4-2i)/20 = (0+20i)/20.
        [(-0.2, 0.4), (1.0, -2.0), (0.25, 0.0), (0.0, 1.0)].iter().map(|&(a, b)| s(a, b)).collect()
    } else {
        reals(&[1.0 / 3.0, 3.0, 0.25, -0.5])
    };
    let z = run1(p, PrimOp::Binary(Binary(BinaryOp::Div)), &[&xt, &HostTensor::new(&[2, 2], &y2)]);
    assert_close(&z.to_vec::<T>(), &want, 4.0 * eps::<T>(), "div");
}

fn binary_mixed_layouts<P: Provider<Memory = Host>>(p: &P) {
    let mut rng = Rng::new(12);
    let x: Vec<Dense<C64>> = (0..2).map(|_| rng.matrix(2, 3)).collect();
    let y: Vec<Dense<C64>> = (0..2).map(|_| rng.matrix(2, 3)).collect();
    let z =
        run1(p, PrimOp::Binary(Binary(BinaryOp::Sub)), &[&strided(&x, true, 1, 2), &HostTensor::batch(&y)]);
    for i in 0..2 {
        assert_eq!(z.matrix::<C64>(i), x[i].sub(&y[i]), "item {i}");
    }
}

fn scale<P: Provider<Memory = Host>>(p: &P) {
    let x = HostTensor::new::<C64>(&[3], &[s(1.0, -2.0), s(0.5, 0.0), s(0.0, 3.0)]);
    let y = run1(p, PrimOp::Scale(Scale(-2.0)), &[&x]);
    assert_eq!(y.to_vec::<C64>(), vec![s(-2.0, 4.0), s(-1.0, 0.0), s(0.0, -6.0)]);
    let x = HostTensor::new::<f32>(&[2], &[1.5, -4.0]);
    assert_eq!(run1(p, PrimOp::Scale(Scale(0.5)), &[&x]).to_vec::<f32>(), vec![0.75, -2.0]);
}

// ---------------------------------------------------------------- layout

/// Small matrices, and 37×19 ones whose rows and columns end partway
/// through a tile of a blocked transpose; contiguous, row-major and padded.
fn adjoint<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    for (r, c) in [(4, 2), (37, 19)] {
        let ms: Vec<Dense<T>> = (0..3).map(|_| rng.matrix(r, c)).collect();
        for input in [HostTensor::batch(&ms), strided(&ms, true, 1, 2), strided(&ms, false, 3, 1)] {
            for op in OPS {
                let y = run1(p, PrimOp::Adjoint(Adjoint(op)), &[&input]);
                let want_dims: &[usize] = if op == MatOp::Identity { &[r, c, 3] } else { &[c, r, 3] };
                assert_eq!(y.dims(), want_dims);
                for (i, m) in ms.iter().enumerate() {
                    assert_eq!(y.matrix::<T>(i), apply(m, op), "{op:?} {r}×{c} item {i}");
                }
            }
        }
    }
}

fn reduce<T: Scalar + RealScalar, P: Provider<Memory = Host>>(p: &P) {
    let red = |op, core_rank| PrimOp::Reduce(Reduce { op, core_rank });
    // x[:, :, 0] = [[1, 4, -2], [3, -5, 0]], x[:, :, 1] = [[7, 7, 1], [-8, 2, 6]] (rows listed).
    let x: Vec<T> = reals(&[1.0, 3.0, 4.0, -5.0, -2.0, 0.0, 7.0, -8.0, 7.0, 2.0, 1.0, 6.0]);
    let xt = HostTensor::new(&[2, 3, 2], &x);
    let y = run1(p, red(ReduceOp::Sum, 2), &[&xt]);
    assert_eq!((y.dims(), y.to_vec::<T>()), (&[2usize][..], reals(&[1.0, 15.0])));
    assert_eq!(run1(p, red(ReduceOp::Max, 2), &[&xt]).to_vec::<T>(), reals(&[4.0, 7.0]));
    assert_eq!(run1(p, red(ReduceOp::Min, 2), &[&xt]).to_vec::<T>(), reals(&[-5.0, -8.0]));
    // core_rank 1: over the columns' entries → [3, 2].
    let y = run1(p, red(ReduceOp::Sum, 1), &[&xt]);
    assert_eq!((y.dims(), y.to_vec::<T>()), (&[3usize, 2][..], reals(&[4.0, -1.0, -2.0, -1.0, 9.0, 7.0])));
    let y = run1(p, red(ReduceOp::Max, 1), &[&xt]);
    assert_eq!(y.to_vec::<T>(), reals(&[3.0, 4.0, 0.0, 7.0, 7.0, 6.0]));
    let y = run1(p, red(ReduceOp::Min, 1), &[&xt]);
    assert_eq!(y.to_vec::<T>(), reals(&[1.0, -5.0, -2.0, -8.0, 2.0, 1.0]));
    // core_rank 0 keeps every element; the whole tensor reduces to a scalar.
    assert_eq!(run1(p, red(ReduceOp::Max, 0), &[&xt]).to_vec::<T>(), x);
    let y = run1(p, red(ReduceOp::Sum, 3), &[&xt]);
    assert_eq!((y.dims(), y.to_vec::<T>()), (&[][..], reals(&[16.0])));
    // Empty reductions: sum 0, max −∞, min +∞.
    let empty = HostTensor::new::<T>(&[0, 3], &[]);
    assert_eq!(run1(p, red(ReduceOp::Sum, 1), &[&empty]).to_vec::<T>(), reals(&[0.0; 3]));
    assert_eq!(run1(p, red(ReduceOp::Max, 1), &[&empty]).to_vec::<T>(), reals(&[f64::NEG_INFINITY; 3]));
    assert_eq!(run1(p, red(ReduceOp::Min, 1), &[&empty]).to_vec::<T>(), reals(&[f64::INFINITY; 3]));
    let empty = HostTensor::new::<T>(&[2, 0, 2], &[]);
    assert_eq!(run1(p, red(ReduceOp::Min, 2), &[&empty]).to_vec::<T>(), reals(&[f64::INFINITY; 2]));
    assert_eq!(run1(p, red(ReduceOp::Sum, 2), &[&empty]).to_vec::<T>(), reals(&[0.0; 2]));
    // NaN propagates through max and min, wherever it sits.
    let with_nan = HostTensor::new(&[3, 2], &reals::<T>(&[f64::NAN, 1.0, 2.0, 5.0, f64::NAN, 3.0]));
    for op in [ReduceOp::Max, ReduceOp::Min] {
        let y = run1(p, red(op, 1), &[&with_nan]).to_vec::<T>();
        assert!(y.iter().all(|v| v.is_nan_real()), "{op:?}: {y:?}");
    }
    // Max of a strided (row-major, padded, offset) batch.
    let ms: Vec<Dense<T>> = vec![
        Dense::from_col_major(2, 2, reals(&[1.0, -3.0, 2.0, 0.5])),
        Dense::from_col_major(2, 2, reals(&[-1.0, -3.0, -2.0, -0.5])),
    ];
    let y = run1(p, red(ReduceOp::Max, 2), &[&strided(&ms, true, 1, 3)]);
    assert_eq!(y.to_vec::<T>(), reals(&[2.0, -0.5]));
}

/// NaN test on the real types (`Scalar` has no `is_nan`).
trait IsNan {
    fn is_nan_real(&self) -> bool;
}
impl<R: RealScalar> IsNan for R {
    fn is_nan_real(&self) -> bool {
        !self.is_finite_real() && self.abs() != R::from_f64(f64::INFINITY)
    }
}

fn sum_complex<P: Provider<Memory = Host>>(p: &P) {
    let x = HostTensor::new::<C64>(&[2, 2], &[s(1.0, 1.0), s(2.0, -3.0), s(0.5, 0.5), s(0.0, 1.0)]);
    let y = run1(p, PrimOp::Reduce(Reduce { op: ReduceOp::Sum, core_rank: 1 }), &[&x]);
    assert_eq!(y.to_vec::<C64>(), vec![s(3.0, -2.0), s(0.5, 1.5)]);
}

fn reshape<P: Provider<Memory = Host>>(p: &P) {
    // The row-major 2×3 matrix [[1, 2, 3], [4, 5, 6]]: column-major order
    // 1, 4, 2, 5, 3, 6.
    let x = HostTensor::with_desc(
        TensorDesc::row_major_matrix(DType::F64, 2, 3).unwrap(),
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    );
    let y = run1(p, PrimOp::Reshape(Reshape { dims: [3, 2].into_iter().collect() }), &[&x]);
    assert_eq!((y.dims(), y.to_vec::<f64>()), (&[3usize, 2][..], vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]));
    let y = run1(p, PrimOp::Reshape(Reshape { dims: [6, 1, 1].into_iter().collect() }), &[&x]);
    assert_eq!(y.dims(), &[6, 1, 1]);
    let data: Vec<C64> = (0..12).map(|v| s(v as f64, -(v as f64))).collect();
    let x = HostTensor::new(&[2, 3, 2], &data);
    let y = run1(p, PrimOp::Reshape(Reshape { dims: [4, 3].into_iter().collect() }), &[&x]);
    assert_eq!(y.to_vec::<C64>(), data);
    let y = run1(p, PrimOp::Reshape(Reshape { dims: [12].into_iter().collect() }), &[&x]);
    assert_eq!(y.to_vec::<C64>(), data);
}

fn spread<P: Provider<Memory = Host>>(p: &P) {
    let x = HostTensor::new::<f64>(&[2], &[1.5, -2.0]);
    let y = run1(p, PrimOp::Spread(Spread { core: [3].into_iter().collect() }), &[&x]);
    assert_eq!((y.dims(), y.to_vec::<f64>()), (&[3usize, 2][..], vec![1.5, 1.5, 1.5, -2.0, -2.0, -2.0]));
    // Two new dims over a row-major 2×2 batch: y[c0, c1, b0, b1] = x[b0, b1].
    let x = HostTensor::with_desc(
        TensorDesc::row_major_matrix(DType::C64, 2, 2).unwrap(),
        &[s::<C64>(1.0, 0.0), s(2.0, 0.0), s(3.0, 0.0), s(4.0, 1.0)],
    );
    let y = run1(p, PrimOp::Spread(Spread { core: [2, 1].into_iter().collect() }), &[&x]);
    assert_eq!(y.dims(), &[2, 1, 2, 2]);
    let col_major = [s(1.0, 0.0), s(3.0, 0.0), s(2.0, 0.0), s(4.0, 1.0)];
    let want: Vec<C64> = col_major.iter().flat_map(|&v| [v, v]).collect();
    assert_eq!(y.to_vec::<C64>(), want);
    // A scalar spread to a matrix; an empty core.
    let x = HostTensor::new::<f32>(&[], &[7.0]);
    let y = run1(p, PrimOp::Spread(Spread { core: [2, 2].into_iter().collect() }), &[&x]);
    assert_eq!(y.to_vec::<f32>(), vec![7.0; 4]);
    let y = run1(p, PrimOp::Spread(Spread { core: [0].into_iter().collect() }), &[&x]);
    assert_eq!(y.dims(), &[0]);
}

fn slice_pad<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    let ms: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(5, 4)).collect();
    let (start, size) = ([1, 2], [3, 2]);
    for input in [HostTensor::batch(&ms), strided(&ms, true, 1, 2)] {
        let y = run1(p, PrimOp::Slice(Slice { start, size }), &[&input]);
        assert_eq!(y.dims(), &[3, 2, 2]);
        for (i, m) in ms.iter().enumerate() {
            assert_eq!(y.matrix::<T>(i), m.rows_range(1, 3).cols_range(2, 2), "slice item {i}");
        }
        // Pad puts the block back in place, zeros elsewhere.
        let back = run1(p, PrimOp::Pad(Pad { start, size: [5, 4] }), &[&y]);
        assert_eq!(back.dims(), &[5, 4, 2]);
        for (i, m) in ms.iter().enumerate() {
            let want = Dense::from_fn(5, 4, |r, c| {
                if (1..4).contains(&r) && (2..4).contains(&c) {
                    m[(r, c)]
                } else {
                    T::zero()
                }
            });
            assert_eq!(back.matrix::<T>(i), want, "pad item {i}");
        }
    }
    // Pad of a strided input; empty slices and pads.
    let small: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(2, 1)).collect();
    let y = run1(p, PrimOp::Pad(Pad { start: [0, 1], size: [3, 3] }), &[&strided(&small, true, 2, 1)]);
    for (i, m) in small.iter().enumerate() {
        let want = Dense::from_fn(3, 3, |r, c| if r < 2 && c == 1 { m[(r, 0)] } else { T::zero() });
        assert_eq!(y.matrix::<T>(i), want, "strided pad item {i}");
    }
    let input = HostTensor::batch(&ms);
    let y = run1(p, PrimOp::Slice(Slice { start: [5, 0], size: [0, 4] }), &[&input]);
    assert_eq!(y.dims(), &[0, 4, 2]);
    let e = HostTensor::new::<T>(&[0, 0], &[]);
    let y = run1(p, PrimOp::Pad(Pad { start: [1, 1], size: [2, 2] }), &[&e]);
    assert_eq!(y.to_vec::<T>(), vec![T::zero(); 4]);
}

// ---------------------------------------------------------------- diag

fn diag<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    for (r, c) in [(3, 5), (5, 3), (2, 2)] {
        let ms: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(r, c)).collect();
        for input in [HostTensor::batch(&ms), strided(&ms, true, 1, 3)] {
            let d = run1(p, PrimOp::DiagPart(DiagPart), &[&input]);
            let k = r.min(c);
            assert_eq!(d.dims(), &[k, 2]);
            for (i, m) in ms.iter().enumerate() {
                let want: Vec<T> = (0..k).map(|j| m[(j, j)]).collect();
                assert_eq!(d.item::<T>(1, i), want, "diag_part {r}×{c} item {i}");
            }
            // DiagEmbed of the diagonals.
            let e = run1(p, PrimOp::DiagEmbed(DiagEmbed), &[&d]);
            assert_eq!(e.dims(), &[k, k, 2]);
            for (i, m) in ms.iter().enumerate() {
                let want = Dense::from_fn(k, k, |a, b| if a == b { m[(a, a)] } else { T::zero() });
                assert_eq!(e.matrix::<T>(i), want, "diag_embed item {i}");
            }
        }
    }
    // DiagEmbed from a strided vector: the diagonal of a row-major matrix's column.
    let v: Vec<T> = reals(&[1.0, 2.0, 3.0, 4.0]);
    let desc = TensorDesc::row_major_matrix(T::DTYPE, 2, 2).unwrap();
    let e = run1(p, PrimOp::DiagEmbed(DiagEmbed), &[&HostTensor::with_desc(desc, &v)]);
    // Row-major [[1, 2], [3, 4]] is the batch of vectors [1, 3] and [2, 4].
    assert_eq!(e.to_vec::<T>(), reals(&[1.0, 0.0, 0.0, 3.0, 2.0, 0.0, 0.0, 4.0]));
}

fn tri_mask<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    for (r, c) in [(3, 3), (4, 2), (2, 4)] {
        let ms: Vec<Dense<T>> = (0..2).map(|_| rng.matrix(r, c)).collect();
        for input in [HostTensor::batch(&ms), strided(&ms, true, 2, 1)] {
            for triangle in [Triangle::Lower, Triangle::Upper] {
                for diagonal in [0.5, 0.0, 1.0] {
                    let y = run1(p, PrimOp::TriMask(TriMask { triangle, diagonal }), &[&input]);
                    for (i, m) in ms.iter().enumerate() {
                        let want = Dense::from_fn(r, c, |a, b| {
                            let keep = if triangle == Triangle::Lower { a > b } else { a < b };
                            if a == b {
                                m[(a, b)].scale(Re::<T>::from_f64(diagonal))
                            } else if keep {
                                m[(a, b)]
                            } else {
                                T::zero()
                            }
                        });
                        assert_eq!(y.matrix::<T>(i), want, "{triangle:?} ×{diagonal} {r}×{c} item {i}");
                    }
                }
            }
        }
    }
    // A strict mask writes exact zeros even over a non-finite diagonal.
    let x = HostTensor::new::<T>(&[2, 2], &[nan(), s(1.0, 0.0), s(2.0, 0.0), nan()]);
    let y = run1(p, PrimOp::TriMask(TriMask { triangle: Triangle::Lower, diagonal: 0.0 }), &[&x]);
    assert_eq!(y.to_vec::<T>(), vec![T::zero(), s(1.0, 0.0), T::zero(), T::zero()]);
}

fn scale_rows_cols<P: Provider<Memory = Host>>(p: &P) {
    // a = [[1+i, 2], [3, -i]] (rows listed).
    let a_data = [s(1.0, 1.0), s(3.0, 0.0), s(2.0, 0.0), s(0.0, -1.0)];
    let a = HostTensor::new::<C64>(&[2, 2], &a_data);
    // Real v on complex a.
    let v = HostTensor::new::<f64>(&[2], &[2.0, -1.0]);
    let y = run1(p, PrimOp::ScaleCols(ScaleCols), &[&a, &v]);
    assert_eq!(y.desc.meta.dtype, DType::C64);
    assert_eq!(y.to_vec::<C64>(), vec![s(2.0, 2.0), s(6.0, 0.0), s(-2.0, 0.0), s(0.0, 1.0)]);
    let y = run1(p, PrimOp::ScaleRows(ScaleRows), &[&a, &v]);
    assert_eq!(y.to_vec::<C64>(), vec![s(2.0, 2.0), s(-3.0, 0.0), s(4.0, 0.0), s(0.0, 1.0)]);
    // Complex v: v = [i, 2].
    let v = HostTensor::new::<C64>(&[2], &[s(0.0, 1.0), s(2.0, 0.0)]);
    let y = run1(p, PrimOp::ScaleCols(ScaleCols), &[&a, &v]);
    assert_eq!(y.to_vec::<C64>(), vec![s(-1.0, 1.0), s(0.0, 3.0), s(4.0, 0.0), s(0.0, -2.0)]);
    let y = run1(p, PrimOp::ScaleRows(ScaleRows), &[&a, &v]);
    assert_eq!(y.to_vec::<C64>(), vec![s(-1.0, 1.0), s(6.0, 0.0), s(0.0, 2.0), s(0.0, -2.0)]);
    // Batched, rectangular, strided a and a strided batch of v's (f64).
    let mut rng = Rng::new(21);
    let ms: Vec<Dense<f64>> = (0..2).map(|_| rng.matrix(3, 2)).collect();
    let a = strided(&ms, true, 1, 2);
    // v's as the columns of a row-major 2×2 (cols) and 3×2 (rows) matrix.
    let vc = [1.0, -2.0, 0.5, 3.0]; // row-major [[1, -2], [0.5, 3]]: v₀ = [1, .5], v₁ = [-2, 3]
    let vct = HostTensor::with_desc(TensorDesc::row_major_matrix(DType::F64, 2, 2).unwrap(), &vc);
    let y = run1(p, PrimOp::ScaleCols(ScaleCols), &[&a, &vct]);
    let cols = [[1.0, 0.5], [-2.0, 3.0]];
    for (i, m) in ms.iter().enumerate() {
        assert_eq!(y.matrix::<f64>(i), m.scale_cols(&cols[i]), "scale_cols item {i}");
    }
    let vr = [1.0, 2.0, -1.0, 0.0, 4.0, 0.25]; // row-major 3×2: v₀ = [1, -1, 4], v₁ = [2, 0, .25]
    let vrt = HostTensor::with_desc(TensorDesc::row_major_matrix(DType::F64, 3, 2).unwrap(), &vr);
    let y = run1(p, PrimOp::ScaleRows(ScaleRows), &[&a, &vrt]);
    let rows = [[1.0, -1.0, 4.0], [2.0, 0.0, 0.25]];
    for (i, m) in ms.iter().enumerate() {
        let want = Dense::from_fn(3, 2, |r, c| m[(r, c)] * rows[i][r]);
        assert_eq!(y.matrix::<f64>(i), want, "scale_rows item {i}");
    }
}

// ---------------------------------------------------------------- constants

fn constants<T: Scalar, P: Provider<Memory = Host>>(p: &P) {
    let meta = TensorMeta::new(T::DTYPE, Shape::new(&[2, 3, 2]).unwrap());
    let y = run1(p, PrimOp::Fill(Fill { meta, value: -1.25 }), &[]);
    assert_eq!((y.dims(), y.to_vec::<T>()), (&[2usize, 3, 2][..], vec![s(-1.25, 0.0); 12]));
    let meta = TensorMeta::new(T::DTYPE, Shape::scalar());
    assert_eq!(run1(p, PrimOp::Fill(Fill { meta, value: 3.0 }), &[]).to_vec::<T>(), vec![s(3.0, 0.0)]);
    let meta = TensorMeta::new(T::DTYPE, Shape::new(&[4, 0]).unwrap());
    assert_eq!(run1(p, PrimOp::Fill(Fill { meta, value: 3.0 }), &[]).dims(), &[4, 0]);
    let eye =
        |n, batch: &[usize]| PrimOp::Eye(Eye { dtype: T::DTYPE, n, batch: batch.iter().copied().collect() });
    let y = run1(p, eye(3, &[2]), &[]);
    assert_eq!(y.dims(), &[3, 3, 2]);
    for i in 0..2 {
        assert_eq!(y.matrix::<T>(i), Dense::eye(3, 3), "eye item {i}");
    }
    assert_eq!(run1(p, eye(1, &[]), &[]).to_vec::<T>(), vec![T::one()]);
    assert_eq!(run1(p, eye(0, &[3]), &[]).dims(), &[0, 0, 3]);
}

// ---------------------------------------------------------------- provider contract

fn no_workspace<P: Provider<Memory = Host>>(p: &P) {
    let a = TensorDesc::contiguous(TensorMeta::new(DType::C64, Shape::new(&[8, 8, 4]).unwrap())).unwrap();
    let ops: Vec<PrimOp> = vec![
        PrimOp::Matmul(Matmul::PLAIN),
        PrimOp::Binary(Binary(BinaryOp::Add)),
        PrimOp::Unary(Unary(UnaryOp::Abs)),
        PrimOp::Adjoint(Adjoint(MatOp::Adjoint)),
        PrimOp::Reduce(Reduce { op: ReduceOp::Sum, core_rank: 2 }),
    ];
    for op in ops {
        let inputs: Vec<&TensorDesc> = op.input_names().iter().map(|_| &a).collect();
        let req = call::workspace(p, &Op::Prim(op.clone()), &inputs).unwrap();
        assert_eq!(req.bytes(), 0, "{}", op.name());
    }
}

// ---------------------------------------------------------------- no allocation in run

#[global_allocator]
static GLOBAL: Counting = Counting;

fn contiguous(dtype: DType, dims: &[usize]) -> TensorDesc {
    TensorDesc::contiguous(TensorMeta::new(dtype, Shape::new(dims).unwrap())).unwrap()
}

/// Allocations on this thread during one `call::run_into` of `op` (after a
/// warm-up call, which may set up faer's thread-local GEMM buffer). All
/// buffers are made beforehand; inputs hold 0.5 + 0.25i (or 0.5 and 0.25).
fn allocations<P: Provider<Memory = Host>>(p: &P, op: PrimOp, inputs: &[TensorDesc]) -> usize {
    let op = Op::Prim(op);
    let store: Vec<Vec<C64>> = inputs.iter().map(|d| vec![s(0.5, 0.25); d.span().unwrap()]).collect();
    let ins: Vec<Input<'_, Host>> = inputs
        .iter()
        .zip(&store)
        .map(|(desc, data)| Input { desc, data: HostData::from_slice(data) })
        .collect();
    let descs: Vec<&TensorDesc> = inputs.iter().collect();
    let metas = call::infer(&op, &descs).unwrap();
    let mut outs: Vec<Vec<C64>> = metas
        .iter()
        .map(|m| vec![C64::default(); m.as_ref().map_or(0, |m| m.shape.numel().unwrap())])
        .collect();
    let mut buffers: Vec<HostBuffer<'_>> = outs.iter_mut().map(|o| HostBuffer::from_slice_mut(o)).collect();
    let mut refs: Vec<Option<&mut HostBuffer<'_>>> = buffers.iter_mut().map(Some).collect();
    let mut ws_bytes: [f64; 0] = [];
    let mut ws = HostBuffer::from_slice_mut(&mut ws_bytes[..]);
    call::run_into(p, &op, &ins, &mut refs, &mut ws).unwrap();
    let (allocations, result) = count(|| call::run_into(p, &op, &ins, &mut refs, &mut ws));
    result.unwrap();
    allocations
}

fn no_allocation<P: Provider<Memory = Host>>(p: &P) {
    let c = DType::C64;
    let mat = contiguous(c, &[8, 6, 3]);
    let vec_re = contiguous(DType::F64, &[6, 3]);
    let real = contiguous(DType::F64, &[8, 6, 3]);
    let row_major = TensorDesc::row_major_matrix(c, 8, 6).unwrap();
    let big = contiguous(c, &[64, 64, 2]);
    let mut cases: Vec<(PrimOp, Vec<TensorDesc>)> = vec![
        (PrimOp::Matmul(Matmul::new(MatOp::Adjoint, MatOp::Transpose)), vec![big.clone(), big.clone()]),
        (PrimOp::Matmul(Matmul::PLAIN), vec![row_major.clone(), contiguous(c, &[6, 4])]),
        (PrimOp::Binary(Binary(BinaryOp::Div)), vec![mat.clone(), mat.clone()]),
        (PrimOp::Scale(Scale(2.0)), vec![mat.clone()]),
        (PrimOp::Adjoint(Adjoint(MatOp::Adjoint)), vec![mat.clone()]),
        (PrimOp::DiagPart(DiagPart), vec![mat.clone()]),
        (PrimOp::DiagEmbed(DiagEmbed), vec![contiguous(c, &[6, 3])]),
        (PrimOp::TriMask(TriMask { triangle: Triangle::Upper, diagonal: 0.5 }), vec![row_major.clone()]),
        (PrimOp::ScaleCols(ScaleCols), vec![mat.clone(), vec_re.clone()]),
        (PrimOp::ScaleRows(ScaleRows), vec![real.clone(), contiguous(DType::F64, &[8, 3])]),
        (PrimOp::Reduce(Reduce { op: ReduceOp::Sum, core_rank: 2 }), vec![mat.clone()]),
        (PrimOp::Reduce(Reduce { op: ReduceOp::Max, core_rank: 1 }), vec![real.clone()]),
        (PrimOp::Reshape(Reshape { dims: [48, 3].into_iter().collect() }), vec![mat.clone()]),
        (PrimOp::Spread(Spread { core: [4, 2].into_iter().collect() }), vec![vec_re.clone()]),
        (PrimOp::Slice(Slice { start: [1, 2], size: [5, 3] }), vec![mat.clone()]),
        (PrimOp::Pad(Pad { start: [1, 2], size: [10, 9] }), vec![mat.clone()]),
        (PrimOp::Fill(Fill { meta: mat.meta.clone(), value: 1.0 }), vec![]),
        (PrimOp::Eye(Eye { dtype: c, n: 5, batch: [3].into_iter().collect() }), vec![]),
    ];
    for op in [UnaryOp::Neg, UnaryOp::Real, UnaryOp::ToComplex, UnaryOp::Abs, UnaryOp::Sqrt, UnaryOp::Exp] {
        let x = if op == UnaryOp::Exp || op == UnaryOp::ToComplex { real.clone() } else { mat.clone() };
        cases.push((PrimOp::Unary(Unary(op)), vec![x]));
    }
    for (op, inputs) in cases {
        let name = op.name();
        // Zero on the host providers; measured and printed for cuda.
        expect_zero(p.name(), allocations(p, op, &inputs), name);
    }
}

fn suite<P: Provider<Memory = Host>>(p: &P) {
    matmul_all_ops::<f64, P>(p, 1);
    matmul_all_ops::<C64, P>(p, 2);
    matmul_all_ops::<f32, P>(p, 3);
    matmul_all_ops::<C32, P>(p, 4);
    matmul_strided::<f64, P>(p, 5);
    matmul_strided::<C64, P>(p, 6);
    matmul_copied_rhs::<f64, P>(p, 7);
    matmul_copied_rhs::<C64, P>(p, 8);
    matmul_strided::<f32, P>(p, 7);
    matmul_empty(p);
    matmul_hand(p);
    unary_complex::<C64, P>(p);
    unary_complex::<C32, P>(p);
    unary_real::<f64, C64, P>(p);
    unary_real::<f32, C32, P>(p);
    unary_shapes_and_layouts(p);
    binary_hand::<f64, P>(p);
    binary_hand::<C64, P>(p);
    binary_hand::<f32, P>(p);
    binary_mixed_layouts(p);
    scale(p);
    adjoint::<f64, P>(p, 8);
    adjoint::<C64, P>(p, 9);
    reduce::<f64, P>(p);
    reduce::<f32, P>(p);
    sum_complex(p);
    reshape(p);
    spread(p);
    slice_pad::<f64, P>(p, 10);
    slice_pad::<C64, P>(p, 11);
    diag::<f64, P>(p, 12);
    diag::<C64, P>(p, 13);
    tri_mask::<f64, P>(p, 14);
    tri_mask::<C64, P>(p, 15);
    scale_rows_cols(p);
    constants::<f64, P>(p);
    constants::<C64, P>(p);
    constants::<f32, P>(p);
    no_workspace(p);
    no_allocation(p);
}

fn prims<P: TestProvider>(provider: &P) {
    suite(provider);
}

fn prims_threaded<P: TestProvider>(_provider: &P) {
    // A wider team changes only how matmul plans faer's parallelism.
    suite(&P::with_exec(lindiff_core::Exec::with_threads(4)));
}

lindiff_tests::providers!(prims, prims_threaded);
