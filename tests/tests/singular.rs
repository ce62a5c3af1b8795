//! Numerically singular systems are errors, on every host provider and
//! float dtype: `solve`, `lu_factor_solve`, `lu_solve_prepared`,
//! `full_piv_lu_solve` (and its prepared form) and `inv` of a matrix whose
//! column 1 is twice column 0 (random or integer entries) give
//! `Error::Singular` with rcond < n·ε, as do the gradients through them
//! and the composites built on them (`matrix_power` with k < 0,
//! `tensorinv`, `tensorsolve`); `cond` of a singular matrix is +∞. The
//! options: `SingularCheck::None` returns the raw solution,
//! `ConditionEstimate` also catches an ill-conditioned matrix whose pivots
//! are all 1 (estimated rcond within a factor 3 of the true one), and no
//! test fires on well-conditioned systems (residuals against test-side
//! dense algebra).

use lindiff_core::ad::Eager;
use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::face::{Face, Norm};
use lindiff_core::op::{
    FullPivLuFactor, FullPivLuSolve, FullPivLuSolvePrepared, LuFactor, LuFactorSolve, LuSolvePrepared, MatOp,
    SingularCheck, SolveOptions,
};
use lindiff_core::prim::{ReduceOp, UnaryOp};
use lindiff_core::{Element, Error, Host, Linalg, LinalgOp, Op, Ops, Provider, RealScalar, Scalar};
use lindiff_tests::dense::{eps, Dense, Re, Rng};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// An n×n matrix whose column 1 is twice column 0: random entries, or
/// small integers.
fn singular<T: Scalar>(n: usize, integer: bool, rng: &mut Rng) -> Dense<T> {
    let mut a: Dense<T> = if integer {
        Dense::from_fn(n, n, |_, _| T::from_f64((rng.uniform() * 19.0).floor() - 9.0))
    } else {
        rng.matrix(n, n)
    };
    for i in 0..n {
        a[(i, 1)] = a[(i, 0)] + a[(i, 0)];
    }
    a
}

/// Every solve of `a` (n×n) against a random right-hand side with
/// `options`, through the op and its face method: the x's, or the first
/// error.
fn solves<T: Scalar + Element, P: Provider<Memory = Host>>(
    la: &mut Direct<P>,
    a: &Dense<T>,
    options: SolveOptions,
    rng: &mut Rng,
) -> Vec<(&'static str, Result<Dense<T>, Error>)> {
    let n = a.rows;
    let b: Dense<T> = rng.matrix(n, 2);
    let ta = la.tensor(&[n, n], &a.data).unwrap();
    let tb = la.tensor(&[n, 2], &b.data).unwrap();
    let x =
        |r: Result<Tensor, Error>, cols| r.map(|t| Dense::from_col_major(n, cols, t.to_vec::<T>().unwrap()));
    let first = |la: &mut Direct<P>, op, args: &[&Tensor]| {
        la.apply(Op::Linalg(op), args).map(|o| o[0].clone().unwrap())
    };
    let lu = la.apply(Op::Linalg(LinalgOp::LuFactor(LuFactor)), &[&ta]).unwrap();
    let (lu, perm) = (lu[0].clone().unwrap(), lu[1].clone().unwrap());
    let flu = la.apply(Op::Linalg(LinalgOp::FullPivLuFactor(FullPivLuFactor)), &[&ta]).unwrap();
    let (flu, rows, cols) = (flu[0].clone().unwrap(), flu[1].clone().unwrap(), flu[2].clone().unwrap());
    vec![
        ("solve", x(la.solve_with_options(&ta, &tb, options), 2)),
        ("lu_factor_solve", x(first(la, LinalgOp::LuFactorSolve(LuFactorSolve(options)), &[&ta, &tb]), 2)),
        (
            "lu_solve_prepared",
            x(
                first(
                    la,
                    LinalgOp::LuSolvePrepared(LuSolvePrepared(MatOp::Identity, options)),
                    &[&lu, &perm, &tb],
                ),
                2,
            ),
        ),
        ("full_piv_lu_solve", x(la.full_piv_lu_solve_with_options(&ta, &tb, options), 2)),
        (
            "full_piv_lu_solve (op)",
            x(first(la, LinalgOp::FullPivLuSolve(FullPivLuSolve(options)), &[&ta, &tb]), 2),
        ),
        (
            "full_piv_lu_solve_prepared",
            x(
                first(
                    la,
                    LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared(MatOp::Identity, options)),
                    &[&flu, &rows, &cols, &tb],
                ),
                2,
            ),
        ),
        ("inv", x(la.inv_with_options(&ta, options), n)),
    ]
}

/// ‖a x − I‖ / (‖a‖‖x‖) for an inverse x of a.
fn inverse_residual<T: Scalar>(a: &Dense<T>, x: &Dense<T>) -> f64 {
    a.matmul(x).sub(&Dense::eye(a.rows, a.rows)).norm() / (a.norm() * x.norm())
}

/// Numerically singular: every solve fails with `Singular` and rcond <
/// n·ε (or 0 for an exactly zero pivot); with `SingularCheck::None` the
/// raw solution comes back (unless a pivot is exactly zero).
fn singular_systems<T: Scalar + Element, P: Provider<Memory = Host>>(p: P, seed: u64) {
    let mut la = Direct::new(p);
    let mut rng = Rng::new(seed);
    for n in [2, 3, 5, 8, 33] {
        for integer in [false, true] {
            let a = singular::<T>(n, integer, &mut rng);
            for check in [SingularCheck::PivotRatio, SingularCheck::ConditionEstimate] {
                for (name, r) in solves(&mut la, &a, SolveOptions::default().check(check), &mut rng) {
                    match r {
                        Err(Error::Singular { rcond, arg, .. }) => {
                            assert!(rcond < n as f64 * eps::<T>(), "{name} {n} {integer}: rcond {rcond}");
                            assert!(arg == "a" || arg == "lu", "{name}: {arg}");
                        }
                        other => panic!("{name} n = {n} (integer {integer}, {check:?}): {other:?}"),
                    }
                }
            }
            // The raw result: Ok (entries of order 1/ε), or an exactly
            // zero pivot.
            for (name, r) in solves(&mut la, &a, SolveOptions::raw(), &mut rng) {
                match r {
                    Ok(x) => assert!(x.max_abs() > 1e3, "{name}: a raw singular solve {:?}", x.max_abs()),
                    Err(Error::Singular { rcond, .. }) => assert_eq!(rcond, 0.0, "{name}"),
                    Err(e) => panic!("{name}: {e}"),
                }
            }
        }
        // The zero matrix: an exactly zero pivot, whatever the check.
        let zero = Dense::<T>::zeros(n, n);
        for check in [SingularCheck::PivotRatio, SingularCheck::ConditionEstimate, SingularCheck::None] {
            for (name, r) in solves(&mut la, &zero, SolveOptions::default().check(check), &mut rng) {
                assert!(matches!(r, Err(Error::Singular { rcond: 0.0, .. })), "{name} of 0: {r:?}");
            }
        }
    }
}

/// Well conditioned: no test fires, and the inverse's residual is small.
fn regular_systems<T: Scalar + Element, P: Provider<Memory = Host>>(p: P, seed: u64) {
    let mut la = Direct::new(p);
    let mut rng = Rng::new(seed);
    for n in [1, 2, 7, 16, 64] {
        let a: Dense<T> =
            rng.with_spectrum(n, n, &(0..n).map(|i| 1.0 + i as f64 / n as f64).collect::<Vec<_>>());
        for check in [SingularCheck::PivotRatio, SingularCheck::ConditionEstimate, SingularCheck::None] {
            for (name, r) in solves(&mut la, &a, SolveOptions::default().check(check), &mut rng) {
                let x = r.unwrap_or_else(|e| panic!("{name} n = {n} {check:?}: {e}"));
                if name == "inv" {
                    let res = inverse_residual(&a, &x);
                    assert!(res <= 100.0 * n as f64 * eps::<T>(), "{name} n = {n}: residual {res:e}");
                }
            }
        }
    }
}

/// Unit upper triangular with −1 above the diagonal: partial pivoting
/// leaves it as it is, pivots all 1 (the pivot ratio passes; full pivoting
/// reveals its rank and fails it), κ₁ = n·2^(n−1). The condition estimate
/// catches it, its rcond within a factor 3 of the true 1/κ₁ (an estimate
/// of ‖a⁻¹‖₁ from below, as `?gecon`'s).
fn equal_pivots<T: Scalar + Element, P: Provider<Memory = Host>>(p: P) {
    let mut la = Direct::new(p);
    let mut rng = Rng::new(5);
    let n = if eps::<T>() > 1e-10 { 30 } else { 60 };
    let a = Dense::<T>::from_fn(n, n, |i, j| match i.cmp(&j) {
        core::cmp::Ordering::Equal => T::one(),
        core::cmp::Ordering::Less => -T::one(),
        core::cmp::Ordering::Greater => T::zero(),
    });
    let truth = 1.0 / (n as f64 * 2f64.powi(n as i32 - 1));
    for (name, r) in solves(&mut la, &a, SolveOptions::default(), &mut rng) {
        if name.starts_with("full_piv") {
            assert!(matches!(r, Err(Error::Singular { .. })), "{name}: full pivoting reveals it: {r:?}");
        } else {
            assert!(r.is_ok(), "{name}: the pivot ratio of a matrix with unit pivots: {r:?}");
        }
    }
    let careful = SolveOptions::default().check(SingularCheck::ConditionEstimate);
    for (name, r) in solves(&mut la, &a, careful, &mut rng) {
        match r {
            // Full pivoting's pivot ratio fires first.
            Err(Error::Singular { .. }) if name.starts_with("full_piv") => {}
            Err(Error::Singular { rcond, .. }) => {
                assert!(
                    rcond >= truth * (1.0 - 1e-6) && rcond <= 3.0 * truth,
                    "{name}: rcond {rcond:e} vs {truth:e}"
                )
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// Σ x of the solution (a real scalar for the gradient).
fn sum_re<F: Face + ?Sized>(f: &mut F, x: &F::Tensor) -> lindiff_core::Result<F::Tensor> {
    let re = f.unary(UnaryOp::Real, x)?;
    let rank = f.meta(&re).shape.rank();
    f.reduce(ReduceOp::Sum, &re, rank)
}

/// Gradients through the solves of a singular matrix fail with the
/// forward's `Singular`; composites on it: `cond` +∞ (per item in a batch),
/// the others `Singular`.
fn gradients_and_composites<T: Scalar + Element, P: Provider<Memory = Host> + Copy>(p: P)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(11);
    let n = 4;
    let a = singular::<T>(n, false, &mut rng);
    let b: Dense<T> = rng.matrix(n, 1);
    let mut eager: Eager<Direct<P>> = Eager::new(Direct::new(p));
    let ta = eager.inner().tensor(&[n, n], &a.data).unwrap();
    let tb = eager.inner().tensor(&[n, 1], &b.data).unwrap();
    let (va, vb) = (eager.watch(ta).unwrap(), eager.watch(tb).unwrap());
    for (name, result) in [
        ("solve", eager.solve(&va, &vb).and_then(|x| sum_re(&mut eager, &x))),
        ("inv", eager.inv(&va).and_then(|x| sum_re(&mut eager, &x))),
        ("full_piv_lu_solve", eager.full_piv_lu_solve(&va, &vb).and_then(|x| sum_re(&mut eager, &x))),
        ("matrix_power(−2)", eager.matrix_power(&va, -2).and_then(|x| sum_re(&mut eager, &x))),
    ] {
        assert!(
            matches!(result, Err(Error::Singular { .. })),
            "gradient of {name}: {:?}",
            result.map(|_| ())
        );
    }
    let mut la = Direct::new(p);
    let ta = la.tensor(&[n, n], &a.data).unwrap();
    for kind in [Norm::One, Norm::Inf, Norm::Fro, Norm::Nuc, Norm::NegOne, Norm::NegInf] {
        let c = la.cond(&ta, kind).unwrap().to_vec::<Re<T>>().unwrap();
        assert_eq!(c, vec![Re::<T>::from_f64(f64::INFINITY)], "cond {kind:?} of a singular matrix");
    }
    // Exactly singular (s_min = 0) and the zero matrix in the 2-norms.
    let zero = la.tensor(&[n, n], &vec![T::zero(); n * n]).unwrap();
    for kind in [Norm::Two, Norm::One] {
        let c = la.cond(&zero, kind).unwrap().to_vec::<Re<T>>().unwrap();
        assert_eq!(c, vec![Re::<T>::from_f64(f64::INFINITY)], "cond {kind:?} of 0");
    }
    // A batch of a regular and a singular matrix: item by item.
    let regular: Dense<T> = rng.with_spectrum(n, n, &[4.0, 3.0, 2.0, 1.0]);
    let both = la.tensor(&[n, n, 2], &[regular.data.clone(), a.data.clone()].concat()).unwrap();
    let c = la.cond(&both, Norm::One).unwrap().to_vec::<Re<T>>().unwrap();
    let alone = la.tensor(&[n, n], &regular.data).unwrap();
    let want = la.cond(&alone, Norm::One).unwrap().to_vec::<Re<T>>().unwrap()[0];
    assert_eq!(c, vec![want, Re::<T>::from_f64(f64::INFINITY)], "batched cond");
    assert!(want.to_f64().is_finite());
    // tensorinv and tensorsolve of the singular matrix as a 2×2×(n/2)… tensor.
    let t = la.tensor(&[2, 2, 2, 2], &a.data).unwrap();
    assert!(matches!(la.tensorinv(&t, 2), Err(Error::Singular { .. })));
    let rhs = la.tensor(&[2, 2], &b.data).unwrap();
    assert!(matches!(la.tensorsolve(&t, &rhs), Err(Error::Singular { .. })));
    assert!(matches!(la.matrix_power(&ta, -1), Err(Error::Singular { .. })));
    // An empty matrix has no condition number.
    let empty = la.tensor::<T>(&[0, 0], &[]).unwrap();
    assert!(matches!(la.cond(&empty, Norm::Two), Err(Error::Empty { .. })));
}

fn every_dtype<P: TestProvider>(p: &P) {
    singular_systems::<f64, P>(*p, 1);
    singular_systems::<f32, P>(*p, 2);
    singular_systems::<Complex<f64>, P>(*p, 3);
    singular_systems::<Complex<f32>, P>(*p, 4);
    regular_systems::<f64, P>(*p, 5);
    regular_systems::<f32, P>(*p, 6);
    regular_systems::<Complex<f64>, P>(*p, 7);
    regular_systems::<Complex<f32>, P>(*p, 8);
    equal_pivots::<f64, P>(*p);
    equal_pivots::<f32, P>(*p);
    equal_pivots::<Complex<f64>, P>(*p);
    gradients_and_composites::<f64, P>(*p);
    gradients_and_composites::<Complex<f32>, P>(*p);
}

// The host providers only (not `providers!`, whose `cuda` arm would run
// this on host-cuda, whose kernels neither scale nor test singularity:
// out of scope without a GPU to run them).
mod every_dtype {
    #[test]
    fn cpu() {
        super::every_dtype(&lindiff_tests::Cpu::default())
    }
    #[cfg(feature = "blas")]
    #[test]
    fn blas() {
        super::every_dtype(&lindiff_tests::Blas::default())
    }
}
