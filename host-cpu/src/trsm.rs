//! The triangular solves the matrix-function kernels run: faer's, except
//! where faer's would reach for the heap.
//!
//! faer's triangular solves recurse into GEMMs on their off-diagonal
//! blocks, and without `std` those allocate above 16³-sized products
//! ([`crate::gemm`]): a 32×32 solve with 32 right-hand sides already does.
//! No-std builds therefore solve by substitution here, in place, with no
//! scratch beyond what faer's own entry points ask for. With `std` every
//! solve goes to faer.

use crate::field::Field;
use faer::dyn_stack::MemStack;
use faer::perm::PermRef;
use faer::reborrow::ReborrowMut;
use faer::{Conj, MatMut, MatRef, Par};

/// `rhs ← U⁻¹ rhs` for the upper triangle of `u` (its strict lower part is
/// never read), as faer's `solve_upper_triangular_in_place`.
pub(crate) fn solve_upper_triangular_in_place<T: Field>(u: MatRef<'_, T>, rhs: MatMut<'_, T>, par: Par) {
    if cfg!(feature = "std") {
        faer::linalg::triangular_solve::solve_upper_triangular_in_place(u, rhs, par);
    } else {
        back_substitution(u, rhs);
    }
}

/// `rhs ← (P⁻¹ L U)⁻¹ rhs` for the packed partial-pivoting factors `lu`
/// (unit L below the diagonal, U on and above it) and the row permutation
/// `perm`, as faer's `lu::partial_pivoting::solve::solve_in_place_with_conj`
/// with `Conj::No`; `stack` as that function's `solve_in_place_scratch`
/// asks.
pub(crate) fn lu_solve_in_place<T: Field>(
    lu: MatRef<'_, T>,
    perm: PermRef<'_, usize>,
    mut rhs: MatMut<'_, T>,
    par: Par,
    stack: &mut MemStack,
) {
    if cfg!(feature = "std") {
        faer::linalg::lu::partial_pivoting::solve::solve_in_place_with_conj(
            lu,
            lu,
            perm,
            Conj::No,
            rhs,
            par,
            stack,
        );
    } else {
        faer::perm::permute_rows_in_place(rhs.rb_mut(), perm, stack);
        unit_forward_substitution(lu, rhs.rb_mut());
        back_substitution(lu, rhs);
    }
}

/// `rhs ← L⁻¹ rhs`, L unit lower triangular (the strict lower part of `l`).
fn unit_forward_substitution<T: Field>(l: MatRef<'_, T>, mut rhs: MatMut<'_, T>) {
    let n = l.nrows();
    for c in 0..rhs.ncols() {
        for k in 0..n {
            let x = rhs[(k, c)];
            for i in k + 1..n {
                rhs[(i, c)] -= l[(i, k)] * x;
            }
        }
    }
}

/// `rhs ← U⁻¹ rhs`, U the upper triangle of `u`.
fn back_substitution<T: Field>(u: MatRef<'_, T>, mut rhs: MatMut<'_, T>) {
    let n = u.nrows();
    for c in 0..rhs.ncols() {
        for k in (0..n).rev() {
            let x = rhs[(k, c)] / u[(k, k)];
            rhs[(k, c)] = x;
            for i in 0..k {
                rhs[(i, c)] -= u[(i, k)] * x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::dyn_stack::MemBuffer;
    use faer::linalg::lu::partial_pivoting::solve::solve_in_place_scratch;
    use faer::Mat;
    use num_complex::Complex;

    /// The substitution loops agree with faer's solves (to rounding), with a
    /// row permutation that is not its own inverse.
    #[test]
    fn substitution_matches_faer() {
        let n = 20;
        let lu = Mat::<Complex<f64>>::from_fn(n, n, |i, j| {
            let x = ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.5;
            if i == j {
                Complex::new(2.0 + x, 0.5)
            } else {
                Complex::new(x, 0.25 * x)
            }
        });
        let rhs = Mat::<Complex<f64>>::from_fn(n, 33, |i, j| {
            Complex::new((i + 2 * j) as f64 / 9.0, 1.0 - j as f64 / 7.0)
        });
        let fwd: Vec<usize> = (0..n).map(|i| (i * 3 + 1) % n).collect();
        let mut inv = vec![0; n];
        for (i, &f) in fwd.iter().enumerate() {
            inv[f] = i;
        }
        let perm = PermRef::new_checked(&fwd, &inv, n);
        let mut mem = MemBuffer::new(solve_in_place_scratch::<usize, Complex<f64>>(n, rhs.ncols(), Par::Seq));
        let stack = MemStack::new(&mut mem);

        let mut want = rhs.clone();
        faer::linalg::lu::partial_pivoting::solve::solve_in_place_with_conj(
            lu.as_ref(),
            lu.as_ref(),
            perm,
            Conj::No,
            want.as_mut(),
            Par::Seq,
            stack,
        );
        let mut got = rhs.clone();
        faer::perm::permute_rows_in_place(got.as_mut(), perm, stack);
        unit_forward_substitution(lu.as_ref(), got.as_mut());
        back_substitution(lu.as_ref(), got.rb_mut());
        assert!((&want - &got).norm_max() <= 1e-12, "LU solve: {:e}", (&want - &got).norm_max());

        let mut want = rhs.clone();
        faer::linalg::triangular_solve::solve_upper_triangular_in_place(lu.as_ref(), want.as_mut(), Par::Seq);
        let mut got = rhs.clone();
        back_substitution(lu.as_ref(), got.as_mut());
        assert!((&want - &got).norm_max() <= 1e-12, "upper: {:e}", (&want - &got).norm_max());
    }
}
