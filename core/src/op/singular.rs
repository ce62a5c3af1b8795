//! How the LU solves (`lu_factor_solve`, `lu_solve_prepared`,
//! `full_piv_lu_solve`, `full_piv_lu_solve_prepared`, and what is built on
//! them: `solve`, `inv`, their derivatives) decide that a matrix is
//! singular: [`SolveOptions`] with a [`SingularCheck`].
//!
//! An LU factorization of a singular matrix rarely meets an exactly zero
//! pivot: rounding leaves one of about ε·‖a‖, and the "solution" has
//! entries of order 1/ε. Every check reports such a matrix as
//! [`Error::Singular`](crate::Error::Singular) carrying `rcond`, the
//! measure it failed on; an exactly zero pivot is always singular
//! (`rcond = 0`).

/// Which test a solve applies to its factorization before solving.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SingularCheck {
    /// The default: singular when min |u_kk| / max |u_kk| < n·ε over the
    /// pivots of U (|re| + |im| for complex pivots; ε of the dtype). O(n),
    /// from the pivots the solve scans anyway. Every matrix with
    /// κ₁(a) ≥ 1/(n·ε)·(pivot growth) fails it, but a matrix can be
    /// ill-conditioned with pivots of one size (e.g. a unit triangular
    /// matrix with large entries above the diagonal): for those, use
    /// [`SingularCheck::ConditionEstimate`].
    #[default]
    PivotRatio,
    /// The pivot ratio, then a 1-norm condition estimate in the manner of
    /// LAPACK's `?gecon` (Hager's method with Higham's refinements, as
    /// `?lacn2`): singular when the estimated 1/(‖a‖₁·‖a⁻¹‖₁) < n·ε. About
    /// 10·n² more flops (4–6 solves with the factors): the benchmark
    /// `cargo bench -p lindiff-cpu --bench singular` prints its cost.
    /// The estimate is a lower bound of ‖a⁻¹‖₁ that is rarely off by more
    /// than a factor of 3, never an overestimate.
    ConditionEstimate,
    /// No test: only an exactly zero pivot is singular; a numerically
    /// singular matrix gets the raw solution (entries of order 1/ε).
    None,
}

/// Options of the LU solves: see [`SingularCheck`].
///
/// ```
/// use lindiff_core::op::{SingularCheck, SolveOptions};
/// let options = SolveOptions::default().check(SingularCheck::ConditionEstimate);
/// assert_eq!(options.check, SingularCheck::ConditionEstimate);
/// assert_eq!(SolveOptions::default().check, SingularCheck::PivotRatio);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SolveOptions {
    /// The singularity test.
    pub check: SingularCheck,
}

impl SolveOptions {
    /// The defaults (the pivot-ratio test).
    pub const fn new() -> SolveOptions {
        SolveOptions { check: SingularCheck::PivotRatio }
    }

    /// With this singularity test.
    pub const fn check(mut self, check: SingularCheck) -> SolveOptions {
        self.check = check;
        self
    }

    /// No test (only an exactly zero pivot is singular): the raw solves of
    /// derivative rules whose matrix is not the user's system (eigenvector
    /// matrices, permutations).
    pub const fn raw() -> SolveOptions {
        SolveOptions { check: SingularCheck::None }
    }

    /// The options of the solves in this solve's derivative, which reuse
    /// its factors: the same pivot test (it passes exactly when the
    /// forward's did, the pivots being the same); the condition estimate is
    /// the forward's alone (the adjoint solve's estimate, in the ∞-norm of
    /// `a`, could fall on the other side of the threshold).
    pub const fn for_derivative(self) -> SolveOptions {
        match self.check {
            SingularCheck::ConditionEstimate => SolveOptions { check: SingularCheck::PivotRatio },
            _ => self,
        }
    }
}
