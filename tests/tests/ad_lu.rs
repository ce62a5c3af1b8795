//! LU derivatives (partial and full pivoting, explicit and packed factors):
//! forward mode against finite differences through `check`, on square, tall,
//! wide and batched inputs in f64 and c64, and at singular matrices whose
//! only zero pivot is the last one (the factors are smooth there, and the
//! rule keeps the tangent finite).
//!
//! The losses Σ|X + 1|² weigh every entry of the factors, structural zeros
//! included, so a tangent with garbage above L's diagonal or below U's would
//! be caught. The factors of a matrix with distinct pivots are unique (no
//! freedom of choice), and the pivot order is locally constant at these inputs.

use lindiff_core::face::Face;
use lindiff_core::op::{FullPivLuFactor, LuFactor};
use lindiff_core::prim::BinaryOp;
use lindiff_core::{Element, Error, Host, LinalgOp, Ops, Provider, Result, Scalar};
use lindiff_tests::ad::{check, check_forward, eager_grad, traced_grad, Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::{outputs, sq1};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// `sq1(x) + sq1(y)`.
fn sq1_both<F: Face + ?Sized>(f: &mut F, x: &F::Tensor, y: &F::Tensor) -> Result<F::Tensor> {
    let a = sq1(f, x)?;
    let b = sq1(f, y)?;
    f.binary(BinaryOp::Add, &a, &b)
}

/// Which factorization a loss reads.
#[derive(Clone, Copy, Debug)]
enum Which {
    /// `lu`: Σ|L + 1|² + Σ|U + 1|².
    Lu,
    /// `lu_factor`: Σ|lu + 1|² of the packed factor.
    LuFactor,
    /// `full_piv_lu`: Σ|L + 1|² + Σ|U + 1|².
    FullPivLu,
    /// `full_piv_lu_factor`: Σ|lu + 1|².
    FullPivLuFactor,
}

/// A loss of the factors of A.
struct Factors(Which);

impl Loss for Factors {
    fn name(&self) -> String {
        format!("{:?} factors: Σ|X + 1|²", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        match self.0 {
            Which::Lu => {
                let lu = f.lu(&xs[0])?;
                sq1_both(f, &lu.l, &lu.u)
            }
            Which::FullPivLu => {
                let lu = f.full_piv_lu(&xs[0])?;
                sq1_both(f, &lu.l, &lu.u)
            }
            Which::LuFactor => {
                let outs = outputs(f, LinalgOp::LuFactor(LuFactor), &[&xs[0]])?;
                sq1(f, &outs[0])
            }
            Which::FullPivLuFactor => {
                let outs = outputs(f, LinalgOp::FullPivLuFactor(FullPivLuFactor), &[&xs[0]])?;
                sq1(f, &outs[0])
            }
        }
    }
}

const ALL: [Which; 4] = [Which::Lu, Which::LuFactor, Which::FullPivLu, Which::FullPivLuFactor];

impl Which {
    /// The name of the op the loss calls.
    fn op(self) -> &'static str {
        match self {
            Which::Lu => "lu",
            Which::LuFactor => "lu_factor",
            Which::FullPivLu => "full_piv_lu",
            Which::FullPivLuFactor => "full_piv_lu_factor",
        }
    }
}

/// A well-conditioned m×n matrix (singular values in [0.8, 2.5]).
fn conditioned<T: Scalar>(m: usize, n: usize, rng: &mut Rng) -> Dense<T> {
    let k = m.min(n);
    let s: Vec<f64> = (0..k).map(|i| 2.5 - 1.7 * i as f64 / k.max(2) as f64).collect();
    rng.with_spectrum::<T>(m, n, &s)
}

fn shapes<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for (m, n) in [(1, 1), (4, 4), (6, 3), (3, 6), (5, 4), (4, 5)] {
        let a = Input::matrix(&conditioned::<T>(m, n, &mut rng));
        for which in ALL {
            let r = check(p, &Factors(which), core::slice::from_ref(&a));
            println!("{which:?} {m}×{n}: forward vs fd {:.1e}", r.forward_vs_fd);
        }
    }
    let batch: Vec<Dense<T>> = (0..3).map(|_| conditioned::<T>(4, 3, &mut rng)).collect();
    for which in ALL {
        let r = check(p, &Factors(which), &[Input::batch(&batch)]);
        println!("{which:?} batched 4×3×3: forward vs fd {:.1e}", r.forward_vs_fd);
    }
}

/// Real matrices (as `T`) from rows.
fn from_rows<T: Scalar>(rows: &[&[f64]]) -> Dense<T> {
    Dense::from_fn(rows.len(), rows[0].len(), |i, j| T::from_f64(rows[i][j]))
}

/// Singular inputs whose only zero pivot is the last one, with partial and
/// with full pivoting (and no ties in either pivot search): the factors are
/// smooth there and the forward tangent is finite and exact. Reverse mode
/// is not: its transposed triangular solves meet the zero pivot before the
/// mask applies, and the gradient is an error (`Singular`, naming the
/// factorization and its argument, not the rule's solve), never a
/// NaN-filled answer, on the eager and the traced face alike.
fn singular<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P)
where
    Re<T>: Element,
{
    let square = from_rows::<T>(&[&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0], &[1.0, 0.0, 2.0]]);
    let wide = from_rows::<T>(&[&[1.0, 2.0, 3.0, 5.0], &[2.0, 4.0, 6.0, 10.0], &[1.0, 0.0, 2.0, 3.0]]);
    for a in [square, wide] {
        let (m, n) = (a.rows, a.cols);
        for which in ALL {
            let r = check_forward(p, &Factors(which), &[Input::matrix(&a)]);
            println!("{which:?} singular {m}×{n}: forward vs fd {r:.1e}");
            let x = [Input::matrix(&a)];
            for got in [eager_grad(p.clone(), &Factors(which), &x), traced_grad(p, &Factors(which), &x)] {
                let err = got.unwrap_err();
                // The device's triangular solve has no zero-pivot check yet
                // (docs/cuda.md): a later solve finds the non-finite value.
                let cuda = p.name() == "cuda" && err.to_string().contains("NaN or infinity");
                assert!(
                    cuda || matches!(err, Error::Singular { op, arg: "a", .. } if op == which.op()),
                    "{which:?}: {err:?}"
                );
            }
        }
    }
}

/// Every LU derivative check on one provider.
fn suite<P: Provider<Memory = Host> + Clone>(p: &P) {
    shapes::<f64, P>(p, 11);
    shapes::<Complex<f64>, P>(p, 12);
    singular::<f64, P>(p);
    singular::<Complex<f64>, P>(p);
}

fn lu_derivatives<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(lu_derivatives);
