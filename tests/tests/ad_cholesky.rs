//! Cholesky derivatives (lower-triangle semantics: the rule sees
//! tril(dA, −1) + tril(dA, −1)ᴴ + Re diag(dA)).

use lindiff_core::face::Face;
use lindiff_core::prim::ReduceOp;
use lindiff_core::{Element, Ops, Result, Scalar};
use lindiff_tests::ad::{check, Input, Loss};
use lindiff_tests::dense::{Re, Rng};
use lindiff_tests::TestProvider;

/// Σ |L_ij|² weighted by a fixed pattern, so every entry matters.
struct WeightedL;

impl Loss for WeightedL {
    fn name(&self) -> String {
        "Σ|cholesky(A)|²".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let l = f.cholesky(&xs[0])?;
        let l2 = f.unary(lindiff_core::prim::UnaryOp::Abs2, &l)?;
        f.reduce(ReduceOp::Sum, &l2, 2)
    }
}

fn spd<T: Scalar + Element>(n: usize, rng: &mut Rng) -> Input<T>
where
    Re<T>: Element,
{
    let x = rng.matrix::<T>(n, n);
    let mut a = x.matmul(&x.adjoint());
    for i in 0..n {
        a[(i, i)] += T::from_f64(3.0);
    }
    Input::matrix(&a)
}

fn cholesky_of_x_xh_plus_3i<P: TestProvider>(provider: &P) {
    let mut rng = Rng::new(7);
    for n in [1, 3, 6] {
        check(provider, &WeightedL, &[spd::<f64>(n, &mut rng)]);
    }
}

lindiff_tests::providers!(cholesky_of_x_xh_plus_3i);
