//! Solve derivatives: the fused solves (`solve`, `full_piv_lu_solve`, and
//! `inv` built on `solve`), the prepared solves differentiated in their
//! factors too (`lu_factor` → `lu_solve_prepared` with every `MatOp`, and the
//! full-pivot pair), and the triangular solve with every combination of
//! side, triangle, diagonal and op. Forward mode against finite differences
//! through `check`, f64 and c64, one batched case each.
//!
//! The triangular inputs are full random matrices: the op reads one
//! triangle (not the diagonal when unit), so perturbing the rest must change
//! nothing, and the finite differences check that the rule agrees.

use lindiff_core::face::Face;
use lindiff_core::op::{
    Diagonal, FullPivLuFactor, FullPivLuSolvePrepared, LuFactor, LuSolvePrepared, MatOp, Side, Triangle,
    TriangularSolveOptions,
};
use lindiff_core::prim::{ReduceOp, UnaryOp};
use lindiff_core::{Element, Host, Linalg, LinalgOp, Ops, Provider, Result, Scalar};
use lindiff_tests::ad::{check, Input, Loss};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::{outputs, sq1};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// Which solve a loss differentiates (inputs `a`, `b`; `inv` reads only `a`).
#[derive(Clone, Copy, Debug)]
enum Solve {
    /// `solve(a, b)`: the fused partial-pivot solve.
    Fused,
    /// `full_piv_lu_solve(a, b)`.
    FullPiv,
    /// `inv(a)` (the fused solve against the identity).
    Inv,
    /// `lu_solve_prepared(lu_factor(a), b)` with this op.
    Prepared(MatOp),
    /// `full_piv_lu_solve_prepared(full_piv_lu_factor(a), b)` with this op.
    FullPivPrepared(MatOp),
}

/// Σ|x + 1|² of the solution.
struct SolveLoss(Solve);

impl Loss for SolveLoss {
    fn name(&self) -> String {
        format!("{:?}: Σ|x + 1|²", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let (a, b) = (&xs[0], &xs[1]);
        let x = match self.0 {
            Solve::Fused => f.solve(a, b)?,
            Solve::FullPiv => f.full_piv_lu_solve(a, b)?,
            Solve::Inv => {
                // b enters too, so both inputs have a derivative.
                let inv = f.inv(a)?;
                f.matmul(&inv, b)?
            }
            Solve::Prepared(how) => {
                let fac = outputs(f, LinalgOp::LuFactor(LuFactor), &[a])?;
                let op = LinalgOp::LuSolvePrepared(LuSolvePrepared::new(how));
                outputs(f, op, &[&fac[0], &fac[1], b])?.remove(0)
            }
            Solve::FullPivPrepared(how) => {
                let fac = outputs(f, LinalgOp::FullPivLuFactor(FullPivLuFactor), &[a])?;
                let op = LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(how));
                outputs(f, op, &[&fac[0], &fac[1], &fac[2], b])?.remove(0)
            }
        };
        sq1(f, &x)
    }
}

const HOWS: [MatOp; 3] = [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint];

/// A well-conditioned n×n matrix (singular values in [0.8, 2.5]).
fn conditioned<T: Scalar>(n: usize, rng: &mut Rng) -> Dense<T> {
    let s: Vec<f64> = (0..n).map(|i| 2.5 - 1.7 * i as f64 / n.max(2) as f64).collect();
    rng.with_spectrum::<T>(n, n, &s)
}

fn solves<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut kinds = vec![Solve::Fused, Solve::FullPiv, Solve::Inv];
    kinds.extend(HOWS.map(Solve::Prepared));
    kinds.extend(HOWS.map(Solve::FullPivPrepared));
    for (n, r) in [(1, 1), (4, 2), (5, 3)] {
        let a = Input::matrix(&conditioned::<T>(n, &mut rng));
        let b = Input::matrix(&rng.matrix::<T>(n, r));
        for &kind in &kinds {
            let rep = check(p, &SolveLoss(kind), &[a.clone(), b.clone()]);
            println!("{kind:?} {n}×{n}, {r} rhs: forward vs fd {:.1e}", rep.forward_vs_fd);
        }
    }
    let a: Vec<Dense<T>> = (0..3).map(|_| conditioned::<T>(4, &mut rng)).collect();
    let b: Vec<Dense<T>> = (0..3).map(|_| rng.matrix::<T>(4, 2)).collect();
    for &kind in &kinds {
        let rep = check(p, &SolveLoss(kind), &[Input::batch(&a), Input::batch(&b)]);
        println!("{kind:?} batched 4×4×3: forward vs fd {:.1e}", rep.forward_vs_fd);
    }
}

/// Σ|x + 1|² of a triangular solve.
struct TriLoss(TriangularSolveOptions);

impl Loss for TriLoss {
    fn name(&self) -> String {
        format!("triangular_solve {:?}: Σ|x + 1|²", self.0)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let x = f.triangular_solve(&xs[0], &xs[1], self.0)?;
        sq1(f, &x)
    }
}

/// A random n×n matrix with 3 added to its diagonal: each triangle (with or
/// without the diagonal) is a well-conditioned triangular matrix.
fn triangular_input<T: Scalar>(n: usize, rng: &mut Rng) -> Dense<T> {
    let mut a = rng.matrix::<T>(n, n);
    for i in 0..n {
        a[(i, i)] += T::from_f64(3.0);
    }
    a
}

fn triangular<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(p: &P, seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let (n, r) = (4, 3);
    for side in [Side::Left, Side::Right] {
        for triangle in [Triangle::Lower, Triangle::Upper] {
            for diagonal in [Diagonal::NonUnit, Diagonal::Unit] {
                for how in HOWS {
                    let o = TriangularSolveOptions::default()
                        .side(side)
                        .triangle(triangle)
                        .diagonal(diagonal)
                        .op(how);
                    let (br, bc) = if side == Side::Left { (n, r) } else { (r, n) };
                    let a = Input::matrix(&triangular_input::<T>(n, &mut rng));
                    let b = Input::matrix(&rng.matrix::<T>(br, bc));
                    let rep = check(p, &TriLoss(o), &[a, b]);
                    println!("{o:?}: forward vs fd {:.1e}", rep.forward_vs_fd);
                }
            }
        }
    }
    let o = TriangularSolveOptions::default().triangle(Triangle::Upper).side(Side::Right).op(MatOp::Adjoint);
    let a: Vec<Dense<T>> = (0..3).map(|_| triangular_input::<T>(n, &mut rng)).collect();
    let b: Vec<Dense<T>> = (0..3).map(|_| rng.matrix::<T>(r, n)).collect();
    let rep = check(p, &TriLoss(o), &[Input::batch(&a), Input::batch(&b)]);
    println!("batched {o:?}: forward vs fd {:.1e}", rep.forward_vs_fd);
}

/// The seed's solve check (finite differences, step 1e-6, a
/// scalar loss; the seed implementation reached 7.9e-11): Σ x of `solve(a, b)` on the
/// seed's timing-style matrix (uniform [−0.5, 0.5) entries) with 4 added to
/// the diagonal.
struct SumOfSolution;

impl Loss for SumOfSolution {
    fn name(&self) -> String {
        "Σ solve(a, b)".into()
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let x = f.solve(&xs[0], &xs[1])?;
        let re = f.unary(UnaryOp::Real, &x)?;
        let rank = f.meta(&re).shape.dims().len();
        f.reduce(ReduceOp::Sum, &re, rank)
    }
}

fn seed_solve<P: Provider<Memory = Host> + Clone>(p: &P) {
    let mut rng = Rng::new(5);
    let n = 6;
    let a = Dense::<f64>::from_fn(n, n, |i, j| rng.centered() + if i == j { 4.0 } else { 0.0 });
    let b = Dense::<f64>::from_fn(n, 2, |_, _| rng.centered());
    let rep = check(p, &SumOfSolution, &[Input::matrix(&a), Input::matrix(&b)]);
    println!("seed solve: forward vs fd {:.1e}", rep.forward_vs_fd);
}

/// Every solve derivative check on one provider.
fn suite<P: Provider<Memory = Host> + Clone>(p: &P) {
    solves::<f64, P>(p, 21);
    solves::<Complex<f64>, P>(p, 22);
    triangular::<f64, P>(p, 23);
    triangular::<Complex<f64>, P>(p, 24);
    seed_solve(p);
}

fn solve_derivatives<P: TestProvider>(provider: &P) {
    suite(provider);
}

lindiff_tests::providers!(solve_derivatives);
