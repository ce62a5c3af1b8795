//! Results beyond the dtype's range are errors, never `Ok` with infinities,
//! on every host provider and float dtype: a singular value, an eigenvalue,
//! an entry of R or U, a determinant, the solution of a solve or of a
//! triangular solve that overflows gives `Error::OutOfRange` naming the op,
//! argument `a` and the failing batch item; the same ops one power of two
//! inside the range return the exact powers of two. A triangular solve
//! with an exactly zero (non-unit) diagonal entry is `Error::Singular`, and
//! the QR derivative at a numerically rank-deficient matrix (the pivot-ratio
//! test, `PivotCheck::Ratio`) is an error rather than a NaN or 1e16
//! gradient. `sqrtm` and `logm` of matrices at either end of the range, and
//! their gradients, are finite and accurate (evaluated exactly scaled).

use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::op::{Diagonal, Lu, LuFactor, PivotCheck, Triangle, TriangularSolveOptions};
use lindiff_core::{Element, Error, Host, Linalg, LinalgOp, Ops, Provider, RealScalar, Scalar};
use lindiff_tests::dense::{Dense, Re};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// 2^e as the dtype's real type.
fn pow2<T: Scalar>(e: i32) -> f64 {
    // Exact halvings or doublings: `powi` of a negative exponent inverts
    // 2^|e|, which is infinite (so the result 0) for e < −1023 in builds
    // where it is not constant-folded.
    let step = if e < 0 { 0.5 } else { 2.0 };
    let x = (0..e.unsigned_abs()).fold(1f64, |x, _| x * step);
    Re::<T>::from_f64(x).to_f64()
}

/// The largest exponent e with 2^e finite in `T`'s real type.
fn emax<T: Scalar>() -> i32 {
    if core::mem::size_of::<Re<T>>() == 4 {
        127
    } else {
        1023
    }
}

/// A 2×2 matrix, row by row, over `batch` copies of which the last is this
/// one and the others the identity (so the failing item is `batch − 1`).
fn matrix<T: Scalar + Element, P: Provider<Memory = Host>>(
    la: &mut Direct<P>,
    rows: [[f64; 2]; 2],
    batch: usize,
) -> Tensor {
    let mut data = Vec::new();
    for item in 0..batch {
        for j in 0..2 {
            for (i, row) in rows.iter().enumerate() {
                let x = if item + 1 == batch { row[j] } else { f64::from(u8::from(i == j)) };
                data.push(T::from_f64(x));
            }
        }
    }
    let dims: &[usize] = if batch == 1 { &[2, 2] } else { &[2, 2, batch] };
    la.tensor(dims, &data).unwrap()
}

/// A 2×1 right-hand side, `batch` copies (the last one `b`, the others
/// ones).
fn rhs<T: Scalar + Element, P: Provider<Memory = Host>>(
    la: &mut Direct<P>,
    b: [f64; 2],
    batch: usize,
) -> Tensor {
    let data: Vec<T> =
        (0..batch).flat_map(|item| if item + 1 == batch { b } else { [1.0, 1.0] }).map(T::from_f64).collect();
    let dims: &[usize] = if batch == 1 { &[2, 1] } else { &[2, 1, batch] };
    la.tensor(dims, &data).unwrap()
}

/// `r` is `OutOfRange` for `op`, argument `a`, batch item `item`.
fn assert_out_of_range<X: core::fmt::Debug>(r: Result<X, Error>, op: &str, item: usize) {
    match r {
        Err(Error::OutOfRange { op: got, arg: "a", batch_index, .. }) if got == op && batch_index == item => {
        }
        other => panic!("{op}: expected OutOfRange on `a`, item {item}; got {other:?}"),
    }
}

/// The real parts of a tensor's entries (of dtype `T`, or `T`'s real type).
fn reals<T: Scalar + Element>(t: &Tensor) -> Vec<f64>
where
    Re<T>: Element,
{
    match t.to_vec::<T>() {
        Ok(v) => v.into_iter().map(|x| x.re().to_f64()).collect(),
        Err(_) => t.to_vec::<Re<T>>().unwrap().into_iter().map(RealScalar::to_f64).collect(),
    }
}

/// Decompositions whose values overflow: m·[[1, 1], [1, ±1]] with m = ¾ of
/// the largest finite value (s = 2m, w = ±√2·m, R₀₀ = √2·m, U₁₁ = −2m,
/// det = −2m²), alone and as the last of three batch items.
fn decompositions<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let mut la = Direct::new(p);
    let m = 0.75 * Re::<T>::MAX.to_f64();
    for batch in [1, 3] {
        let item = batch - 1;
        let ones = matrix::<T, P>(&mut la, [[m, m], [m, m]], batch);
        let signed = matrix::<T, P>(&mut la, [[m, m], [m, -m]], batch);
        assert_out_of_range(la.svd(&ones), "svd", item);
        assert_out_of_range(la.svd_vals(&ones), "svd_vals", item);
        assert_out_of_range(la.eigh(&signed), "eigh", item);
        assert_out_of_range(la.eigvalsh(&signed), "eigh_vals", item);
        assert_out_of_range(la.qr(&ones), "qr", item);
        assert_out_of_range(la.lu(&signed), "lu", item);
        assert_out_of_range(la.det(&signed), "det", item);
        if !T::IS_COMPLEX {
            // LAPACK's ?geev does not converge this close to the largest
            // finite value: also an error, not infinities.
            let r = la.eigvals(&signed);
            if !matches!(r, Err(Error::NonConvergence { op: "eig_vals", batch_index }) if batch_index == item)
            {
                assert_out_of_range(r, "eig_vals", item);
            }
        }
        // log|det| is representable.
        let (_, logabsdet) = la.slogdet(&signed).unwrap();
        let want = (2.0f64).ln() + 2.0 * m.ln();
        let got = reals::<T>(&logabsdet)[item];
        assert!((got - want).abs() <= 1e-5 * want, "slogdet {got} vs {want}");
    }
    // One power of two inside the range: exact.
    let e = emax::<T>();
    let big = matrix::<T, P>(&mut la, [[pow2::<T>(e), 0.0], [0.0, pow2::<T>(e - 1)]], 1);
    assert_eq!(reals::<T>(&la.svd_vals(&big).unwrap()), [pow2::<T>(e), pow2::<T>(e - 1)]);
    let det = matrix::<T, P>(&mut la, [[pow2::<T>(e - 20), 0.0], [0.0, pow2::<T>(20)]], 1);
    assert_eq!(reals::<T>(&la.det(&det).unwrap()), [pow2::<T>(e)]);
    let det = matrix::<T, P>(&mut la, [[pow2::<T>(e - 20), 0.0], [0.0, pow2::<T>(21)]], 1);
    assert_out_of_range(la.det(&det), "det", 0);
    // A singular matrix's log|det| is −∞ by definition, not out of range.
    let singular = matrix::<T, P>(&mut la, [[1.0, 2.0], [2.0, 4.0]], 1);
    let (sign, logabsdet) = la.slogdet(&singular).unwrap();
    assert_eq!((reals::<T>(&sign), reals::<T>(&logabsdet)), (vec![0.0], vec![f64::NEG_INFINITY]));
}

fn decompositions_overflow<P: TestProvider>(provider: &P) {
    decompositions::<f64, P>(*provider);
    decompositions::<f32, P>(*provider);
    decompositions::<Complex<f64>, P>(*provider);
}

/// Wilkinson's matrix of order n at scale 2^s, bordered by `extra` zero
/// rows (tall) or, for `extra` < 0, zero columns (wide): 1 on the
/// diagonal, −1 below it and 1 in column n−1. Partial pivoting (ties to the
/// first row) grows that column to U[i, n−1] = 2^i·2^s.
fn wilkinson<T: Scalar + Element>(n: usize, s: i32, extra: isize) -> HostTensor {
    let scale = pow2::<T>(s);
    let entry = |i: usize, j: usize| match (i, j) {
        (i, j) if i >= n || j >= n => 0.0,
        (_, j) if j == n - 1 => scale,
        (i, j) if i == j => scale,
        (i, j) if i > j => -scale,
        _ => 0.0,
    };
    let (rows, cols) = (n + extra.max(0).unsigned_abs(), n + extra.min(0).unsigned_abs());
    HostTensor::from_dense(&Dense::from_fn(rows, cols, |i, j| T::from_f64(entry(i, j))))
}

/// `lu` and `lu_factor` of `a` are `OutOfRange` on `a`.
fn both_out_of_range<P: Provider<Memory = Host>>(p: &P, a: &HostTensor, case: &str) {
    for op in [LinalgOp::Lu(Lu), LinalgOp::LuFactor(LuFactor)] {
        let name = op.name();
        match run(p, op, &[a]) {
            Err(Error::OutOfRange { op, arg: "a", batch_index: 0, .. }) if op == name => {}
            other => panic!("{name}, {case}: expected OutOfRange on `a`; got {:?}", other.map(|_| ())),
        }
    }
}

/// LU whose pivot growth overflows U, square, tall and wide: at the input's
/// own scale (order 60, 2^(emax−54): past the small kernel; U's last
/// column reaches 2^(emax+5)), and on scaling back after the kernel scaled
/// `a` into the elimination's safe range (order 20, 2^(emax−10): the
/// scaled U peaks at 2^(emax−6), finite); also an entry above a finite
/// diagonal alone. One power of two less growth factors exactly.
fn pivot_growth<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let e = emax::<T>();
    for (n, s) in [(60, e - 54), (20, e - 10)] {
        for extra in [0, 1, -1] {
            let case = format!("order {n} at 2^{s}, {extra:+} rows");
            both_out_of_range(&p, &wilkinson::<T>(n, s, extra), &case);
        }
        let fits = wilkinson::<T>(n, e - (n as i32 - 1), 0);
        let outs = run(&p, LinalgOp::Lu(Lu), &[&fits]).unwrap();
        let u: Dense<T> = outs[2].as_ref().unwrap().matrix(0);
        let top = (0..n * n).map(|k| u[(k % n, k / n)].re().to_f64().abs()).fold(0.0, f64::max);
        assert_eq!(top, pow2::<T>(e), "order {n}: the largest entry of U");
    }
    // m·[[1, 0, 1], [−1, 1, 1], [0, 0, 1/m]] with m = ¾ of the largest
    // finite value, scaled into the safe range (at its own scale U₂₂ would be
    // 1 − 0·∞ = NaN) and back: U₁₂ = 2m overflows, the diagonal (m, m, 1)
    // does not.
    let m = 0.75 * Re::<T>::MAX.to_f64();
    let rows = [[m, 0.0, m], [-m, m, m], [0.0, 0.0, 1.0]];
    let a = HostTensor::from_dense(&Dense::from_fn(3, 3, |i, j| T::from_f64(rows[i][j])));
    both_out_of_range(&p, &a, "an entry above a finite diagonal");
}

fn lu_pivot_growth<P: TestProvider>(provider: &P) {
    pivot_growth::<f64, P>(*provider);
    pivot_growth::<f32, P>(*provider);
    pivot_growth::<Complex<f64>, P>(*provider);
}

/// Solves whose solution overflows: 2^−(emax−10)·I x = (2^k, 1) has
/// x = (2^(emax − 10 + k), 2^(emax − 10)): exact at k = 10, out of range at
/// k = 11 (for `solve` and `triangular_solve` in both triangles; `inv` of
/// 2^−emax·I against 2^−(emax+1)·I), in the last batch item.
fn solves<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let mut la = Direct::new(p);
    let e = emax::<T>();
    let small = pow2::<T>(-(e - 10));
    for batch in [1, 3] {
        let item = batch - 1;
        let a = matrix::<T, P>(&mut la, [[small, 0.0], [0.0, small]], batch);
        let fits = rhs::<T, P>(&mut la, [pow2::<T>(10), 1.0], batch);
        let over = rhs::<T, P>(&mut la, [pow2::<T>(11), 1.0], batch);
        let x = reals::<T>(&la.solve(&a, &fits).unwrap());
        assert_eq!(&x[2 * item..], [pow2::<T>(e), pow2::<T>(e - 10)]);
        assert_out_of_range(la.solve(&a, &over), "lu_factor_solve", item);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            let opts = TriangularSolveOptions::default().triangle(triangle);
            let x = reals::<T>(&la.triangular_solve(&a, &fits, opts).unwrap());
            assert_eq!(&x[2 * item..], [pow2::<T>(e), pow2::<T>(e - 10)]);
            assert_out_of_range(la.triangular_solve(&a, &over, opts), "triangular_solve", item);
        }
        let a = matrix::<T, P>(&mut la, [[pow2::<T>(-e), 0.0], [0.0, pow2::<T>(-e)]], batch);
        assert_eq!(&reals::<T>(&la.inv(&a).unwrap())[4 * item..], [pow2::<T>(e), 0.0, 0.0, pow2::<T>(e)]);
        // 2^−emax and 2^−(emax+1) are subnormal, their inverses 2^emax
        // (finite) and 2^(emax+1) (not).
        let tiny = pow2::<T>(-(e + 1));
        let a = matrix::<T, P>(&mut la, [[tiny, 0.0], [0.0, tiny]], batch);
        assert_out_of_range(la.inv(&a), "lu_factor_solve", item);
    }
}

fn solves_overflow<P: TestProvider>(provider: &P) {
    solves::<f64, P>(*provider);
    solves::<f32, P>(*provider);
    solves::<Complex<f64>, P>(*provider);
}

/// An exactly zero diagonal entry of a non-unit triangle is `Singular`
/// (rcond 0), whatever the right-hand side; with a unit diagonal the
/// stored zero is not read and the solve is exact.
fn zero_diagonal<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let mut la = Direct::new(p);
    let a = matrix::<T, P>(&mut la, [[1.0, 2.0], [0.0, 0.0]], 1);
    for b in [[1.0, 1.0], [0.0, 0.0]] {
        let b = rhs::<T, P>(&mut la, b, 1);
        let upper = TriangularSolveOptions::default().triangle(Triangle::Upper);
        match la.triangular_solve(&a, &b, upper) {
            Err(Error::Singular { op: "triangular_solve", arg: "a", rcond, .. }) => assert_eq!(rcond, 0.0),
            other => panic!("zero diagonal: {other:?}"),
        }
    }
    let b = rhs::<T, P>(&mut la, [1.0, 1.0], 1);
    let upper = TriangularSolveOptions::default().triangle(Triangle::Upper);
    let unit = upper.diagonal(Diagonal::Unit);
    // [[1, 2], [0, 1]] x = (1, 1): x = (−1, 1).
    assert_eq!(reals::<T>(&la.triangular_solve(&a, &b, unit).unwrap()), [-1.0, 1.0]);
    // `Off`: the plain substitution, x₁ = 1/0 (∞, or NaN in complex
    // arithmetic) and x₀ from it: neither finite, and no error.
    let off = reals::<T>(&la.triangular_solve(&a, &b, upper.pivot_check(PivotCheck::Off)).unwrap());
    assert!(off.iter().all(|x| !x.is_finite()), "{off:?}");
    // A pivot 2^−60 beside a 1 in its column: solved as stated by default,
    // singular to working precision under `Ratio` (rcond 2^−60 < 2ε); the
    // graded diagonal diag(1, 2^−60) passes `Ratio` (nothing above either
    // pivot), and so does a scaled column, [[2^−60, 1], [0, 1]] (column 1's
    // pivot is as large as the entry above it). A lower triangle is tested
    // along its rows (the columns of R = Lᴴ).
    let ratio = upper.pivot_check(PivotCheck::Ratio);
    let tiny = matrix::<T, P>(&mut la, [[1.0, 1.0], [0.0, pow2::<T>(-60)]], 1);
    let x = reals::<T>(&la.triangular_solve(&tiny, &b, upper).unwrap());
    assert_eq!(x, [1.0 - pow2::<T>(60), pow2::<T>(60)]);
    match la.triangular_solve(&tiny, &b, ratio) {
        Err(Error::Singular { op: "triangular_solve", arg: "a", rcond, .. }) => {
            assert_eq!(rcond, pow2::<T>(-60))
        }
        other => panic!("pivot ratio 2^-60: {other:?}"),
    }
    let graded = matrix::<T, P>(&mut la, [[1.0, 0.0], [0.0, pow2::<T>(-60)]], 1);
    assert_eq!(reals::<T>(&la.triangular_solve(&graded, &b, ratio).unwrap()), [1.0, pow2::<T>(60)]);
    let scaled = matrix::<T, P>(&mut la, [[pow2::<T>(-60), 1.0], [0.0, 1.0]], 1);
    assert_eq!(reals::<T>(&la.triangular_solve(&scaled, &b, ratio).unwrap()), [0.0, 1.0]);
    let lower = TriangularSolveOptions::default().triangle(Triangle::Lower).pivot_check(PivotCheck::Ratio);
    let tiny_row = matrix::<T, P>(&mut la, [[1.0, 0.0], [1.0, pow2::<T>(-60)]], 1);
    match la.triangular_solve(&tiny_row, &b, lower) {
        Err(Error::Singular { op: "triangular_solve", arg: "a", rcond, .. }) => {
            assert_eq!(rcond, pow2::<T>(-60))
        }
        other => panic!("lower pivot ratio 2^-60: {other:?}"),
    }
    let scaled_row = matrix::<T, P>(&mut la, [[pow2::<T>(-60), 0.0], [1.0, 1.0]], 1);
    let b = rhs::<T, P>(&mut la, [pow2::<T>(-60), 1.0], 1);
    assert_eq!(reals::<T>(&la.triangular_solve(&scaled_row, &b, lower).unwrap()), [1.0, 0.0]);
}

fn triangular_zero_diagonal<P: TestProvider>(provider: &P) {
    zero_diagonal::<f64, P>(*provider);
    zero_diagonal::<f32, P>(*provider);
    zero_diagonal::<Complex<f64>, P>(*provider);
}

/// The QR derivative at a matrix with dependent columns (R₁₁ zero or at
/// rounding level, by provider) or a zero column divides by that pivot: a
/// `Singular` error naming `qr` (not the rule's solve), not `Ok` with NaN
/// or 1e16.
fn rank_deficient_gradients<P: TestProvider>(provider: &P) {
    let mut la = Direct::new(*provider);
    let dependent = la.tensor(&[3, 2], &[1.0f64, 2.0, 3.0, 2.0, 4.0, 6.0]).unwrap();
    let zero_column = la.tensor(&[3, 2], &[1.0f64, 2.0, 3.0, 0.0, 0.0, 0.0]).unwrap();
    let refused = |r: Result<_, Error>| {
        matches!(
            r,
            Err(Error::Singular { op: "qr", arg: "a", .. } | Error::NotDifferentiable { op: "qr", .. })
        )
    };
    for a in [&dependent, &zero_column] {
        assert!(refused(la.value_and_grad([a], |[a]| a.qr().q.sum())), "qr q");
        assert!(refused(la.value_and_grad([a], |[a]| a.qr().r.sum())), "qr r");
    }
    // Full column rank, however the columns are scaled: orthogonal columns
    // of norms 1 and 2^−60 (R = diag(1, 2^−60)), and columns (2^−60, 0, 0)
    // and (1, 1, 0) (R = [[2^−60, 1], [0, 1]]). The pivot test is per
    // pivot, against the entries above it in its column, so the gradient is
    // returned, and finite.
    let graded = la.tensor(&[3, 2], &[1.0f64, 0.0, 0.0, 0.0, 2f64.powi(-60), 0.0]).unwrap();
    let scaled = la.tensor(&[3, 2], &[2f64.powi(-60), 0.0, 0.0, 1.0, 1.0, 0.0]).unwrap();
    for a in [&graded, &scaled] {
        let g = la.value_and_grad([a], |[a]| a.qr().q.sum()).unwrap();
        assert!(g.grads[0].to_vec::<f64>().unwrap().iter().all(|x| x.is_finite()));
    }
}

/// sqrtm and logm of c·[[2, 1], [1, 2]] at c = 2^±(emax − 1) (the largest
/// entry the dtype's largest power of two, and c its smallest normal
/// number; unscaled, the Schur-form square root leaves the range): √(cM) = √c·½[[√3+1, √3−1],
/// [√3−1, √3+1]] and log(cM) = ½ ln 3·[[1, 1], [1, 1]] + ln c·I, to a
/// few ε — the kernels evaluate them exactly scaled.
fn functions<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let mut la = Direct::new(p);
    let e = emax::<T>() - 1;
    let tol = 16.0 * lindiff_tests::dense::eps::<T>();
    let (r3, l3) = (3f64.sqrt(), 3f64.ln());
    for k in [e, -e] {
        let c = pow2::<T>(k);
        let a = matrix::<T, P>(&mut la, [[2.0 * c, c], [c, 2.0 * c]], 1);
        let root_c = 2f64.powf(f64::from(k) / 2.0);
        let want =
            [(r3 + 1.0) / 2.0, (r3 - 1.0) / 2.0, (r3 - 1.0) / 2.0, (r3 + 1.0) / 2.0].map(|x| x * root_c);
        let got = reals::<T>(&la.sqrtm(&a).unwrap());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= tol * w.abs(), "sqrtm at 2^{k}: {got:?} vs {want:?}");
        }
        let lc = f64::from(k) * 2f64.ln();
        let want = [l3 / 2.0 + lc, l3 / 2.0, l3 / 2.0, l3 / 2.0 + lc];
        let got = reals::<T>(&la.logm(&a).unwrap());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() <= tol * lc.abs(), "logm at 2^{k}: {got:?} vs {want:?}");
        }
    }
}

/// The gradients of Σ sqrtm(A) and Σ log(A) at the same matrices: 1 =
/// (1, 1) is an eigenvector of A = c·[[2, 1], [1, 2]] (eigenvalue 3c), so
/// ∇ = f′(3c)·[[1, 1], [1, 1]], with f′ = 1/(2√x) and 1/x (the Fréchet
/// derivatives, evaluated on A·4^−s and scaled back).
fn function_gradients<T: Scalar + Element, P: Provider<Memory = Host>>(p: P)
where
    Re<T>: Element,
{
    let mut la = Direct::new(p);
    let e = emax::<T>() - 1;
    let tol = 64.0 * lindiff_tests::dense::eps::<T>();
    for k in [e, -e] {
        let c = pow2::<T>(k);
        let a = matrix::<T, P>(&mut la, [[2.0 * c, c], [c, 2.0 * c]], 1);
        // 3c in f64 (2^k·3 is exact); f′(3c) from it.
        let l = 3.0 * 2f64.powf(f64::from(k));
        for (name, want) in [("sqrtm", 0.5 / l.sqrt()), ("logm", 1.0 / l)] {
            let out = if name == "sqrtm" {
                la.value_and_grad([&a], |[a]| a.sqrtm().sum())
            } else {
                la.value_and_grad([&a], |[a]| a.logm().sum())
            };
            let g = reals::<T>(&out.unwrap_or_else(|e| panic!("{name} gradient at 2^{k}: {e}")).grads[0]);
            for x in &g {
                assert!((x - want).abs() <= tol * want, "{name} gradient at 2^{k}: {g:?} vs {want:e}");
            }
        }
    }
}

fn functions_at_extreme_scales<P: TestProvider>(provider: &P) {
    functions::<f64, P>(*provider);
    functions::<f32, P>(*provider);
    functions::<Complex<f64>, P>(*provider);
    function_gradients::<f64, P>(*provider);
    function_gradients::<f32, P>(*provider);
}

lindiff_tests::providers!(
    functions_at_extreme_scales,
    decompositions_overflow,
    solves_overflow,
    lu_pivot_growth,
    triangular_zero_diagonal,
    rank_deficient_gradients
);
