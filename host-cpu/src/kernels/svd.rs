//! SVD kernels (`svd`, `svd_vals`, `svd_full`, `svd_truncated`) over faer,
//! with the output conventions (Vᴴ, real descending values, canonical
//! phases) and the divide-and-conquer accuracy guard; over lindiff's own
//! bidiagonal divide and conquer ([`super::bidiagonal_dc`], between faer's
//! reduction and back-transformation) for real input with both factors from
//! min(m, n) = 128 in `std` builds; over the one-sided Jacobi SVD of
//! [`super::svd_jacobi`] instead for small matrices (up to 8×8 with
//! `SvdDriver::Auto`, in `std` builds), when `SvdDriver::Jacobi` asks for
//! it, and always with the `svd-jacobi` feature.
//!
//! Scale-robust (`super::scaling`): a matrix whose largest entry lies
//! outside the safe range is factored as `a · 2^e` (faer's SVD on a scaled
//! copy in the workspace, the Jacobi SVD on its own working copy), and the
//! singular values are scaled back; U and V are those of the scaled
//! matrix, which are A's. The kernels built on [`compute`] (the recombine
//! family, the adjugate) get the scaled values and the [`Scaling`], and
//! scale their own results.

use super::bidiagonal_dc;
use super::columns::copy_mat;
use super::finite::all_finite;
use super::gauge::{canonicalize_pairs, canonicalize_pairs_adjoint, canonicalize_pairs_into_adjoint};
use super::kept::{kept_by_truncation, set_rank};
use super::range::check_range;
use super::scaling::{Range, Scaling};
use super::svd_guard;
use super::svd_jacobi;
use crate::batch::{square_fits, Failure, Item, Kernel, Shapes};
use crate::field::Field;
use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::svd::{svd, svd_scratch, ComputeSvdVectors, SvdParams};
use faer::linalg::{temp_mat_scratch, temp_mat_uninit};
use faer::mat::AsMatMut;
use faer::reborrow::{IntoConst, Reborrow, ReborrowMut};
use faer::{MatMut, MatRef, Par, Spec};
use lindiff_core::op::{Svd, SvdDriver, SvdFull, SvdOptions, SvdTruncated, SvdVals, SvdVectors};
use lindiff_core::Scalar;

/// faer parameters that never use divide and conquer.
fn qr_only_params<T: Field>() -> Spec<SvdParams, T> {
    let mut p: SvdParams = faer::Auto::<T>::auto();
    p.recursion_threshold = usize::MAX;
    Spec::new(p)
}

/// `true` when every SVD of this build runs lindiff's one-sided Jacobi SVD
/// (the `svd-jacobi` feature) rather than faer's: a compile-time constant,
/// so faer's SVD, its divide and conquer and the guard are not linked.
const JACOBI: bool = cfg!(feature = "svd-jacobi");

/// Largest m and n for which `SvdDriver::Auto` runs lindiff's Jacobi SVD in
/// a `std` build: measured against faer's (f64, thin U and V, one matrix),
/// 0.55–0.63 of its time at 2×2, 4×4 and 8×8, 1.4 at 12×12 and 16×16
/// (a sweep costs O(m·n²), faer's bidiagonal QR iteration less from there).
/// Without `std` (firmware) faer's SVD alone, unless `svd-jacobi` asks for
/// Jacobi everywhere: flash counts there.
const AUTO_JACOBI_UP_TO: usize = 8;

/// Whether an m×n SVD with these options runs lindiff's Jacobi SVD: always
/// in a `svd-jacobi` build; otherwise, in a `std` build, when asked for
/// (`SvdDriver::Jacobi`) or, with `SvdDriver::Auto` (and `Polar`, which
/// host-cpu runs as `Auto`), up to [`AUTO_JACOBI_UP_TO`]. The choice
/// depends only on the options and the shape, so every SVD op (values only,
/// thin, full, truncated) gives the same bits for the same input, as the
/// derivative rules that recompute factors need.
fn jacobi(opts: &SvdOptions, m: usize, n: usize) -> bool {
    JACOBI
        || (cfg!(feature = "std")
            && match opts.driver {
                SvdDriver::Jacobi => true,
                // `Polar` is documented to run as `Auto` here.
                SvdDriver::Auto | SvdDriver::Polar => m.max(n) <= AUTO_JACOBI_UP_TO,
                _ => false,
            })
}

/// The faer parameters of an SVD with these options and outputs: QR
/// iteration where asked for, faer's defaults otherwise.
fn params_for<T: Field>(opts: &SvdOptions, with_vectors: bool) -> Spec<SvdParams, T> {
    if !with_vectors || opts.driver == SvdDriver::QrIteration {
        qr_only_params::<T>()
    } else {
        Default::default()
    }
}

/// `true` when faer's default parameters would use divide and conquer for an
/// m×n SVD with vectors (its bidiagonal size is min(m, n)); never in a
/// `svd-jacobi` build.
pub(crate) fn uses_divide_and_conquer(m: usize, n: usize) -> bool {
    let p: SvdParams = faer::Auto::<f64>::auto();
    !JACOBI && m.min(n) >= p.recursion_threshold
}

/// `true` when an m×n SVD with these options and factors runs lindiff's own
/// bidiagonal divide and conquer ([`bidiagonal_dc`]) instead of faer's:
/// real `T`, U and V both computed, min(m, n) ≥ [`bidiagonal_dc::DC_FROM`]
/// and an aspect ratio up to faer's (beyond it faer factors a QR first),
/// with the default driver (not `QrIteration` or `Jacobi`).
fn own_dc<T: Field>(opts: &SvdOptions, shape: Shape, m: usize, n: usize) -> bool {
    matches!(shape, Shape::Thin | Shape::Full)
        && opts.driver != SvdDriver::QrIteration
        && !jacobi(opts, m, n)
        && bidiagonal_dc::serves::<T>(m, n)
        && 6 * m.max(n) <= 11 * m.min(n)
}

/// Which factors an SVD computes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Values only.
    Values,
    /// Thin U (m×k) and V (n×k).
    Thin,
    /// Thin U only: V is not computed (U alone fixes the canonical phase).
    ThinLeft,
    /// Full U (m×m) and V (n×n).
    Full,
}

impl Shape {
    /// Columns of (U, V).
    fn cols(self, m: usize, n: usize) -> (usize, usize) {
        let k = m.min(n);
        match self {
            Shape::Values => (0, 0),
            Shape::Thin => (k, k),
            Shape::ThinLeft => (k, 0),
            Shape::Full => (m, n),
        }
    }
    /// faer's (U, V) requests.
    fn faer(self) -> (ComputeSvdVectors, ComputeSvdVectors) {
        match self {
            Shape::Values => (ComputeSvdVectors::No, ComputeSvdVectors::No),
            Shape::Thin => (ComputeSvdVectors::Thin, ComputeSvdVectors::Thin),
            Shape::ThinLeft => (ComputeSvdVectors::Thin, ComputeSvdVectors::No),
            Shape::Full => (ComputeSvdVectors::Full, ComputeSvdVectors::Full),
        }
    }
}

/// Whether the guard (and so the fallback) runs for these options. It
/// needs both factors, so `ThinLeft` is only chosen where it does not run.
fn guarded(opts: &SvdOptions, shape: Shape, m: usize, n: usize) -> bool {
    shape != Shape::Values
        && opts.driver != SvdDriver::QrIteration
        && !jacobi(opts, m, n)
        && uses_divide_and_conquer(m, n)
}

/// The thin shape for `svd` with these options: U only when V is switched
/// off and no guard needs it.
fn thin_shape(opts: &SvdOptions, m: usize, n: usize) -> Shape {
    if opts.vectors == SvdVectors::Left && !guarded(opts, Shape::Thin, m, n) {
        Shape::ThinLeft
    } else {
        Shape::Thin
    }
}

/// Scratch of [`compute`] (`StackReq::OVERFLOW` for a full U or V too large
/// to count).
pub(super) fn scratch<T: Field>(opts: &SvdOptions, shape: Shape, m: usize, n: usize, par: Par) -> StackReq {
    if shape == Shape::Full && !(square_fits(m) && square_fits(n)) {
        return StackReq::OVERFLOW;
    }
    let k = m.min(n);
    let (ucols, vcols) = shape.cols(m, n);
    let (fu, fv) = shape.faer();
    let (jacobi, own) = (jacobi(opts, m, n), own_dc::<T>(opts, shape, m, n));
    let main = if jacobi {
        svd_jacobi::scratch::<T>(m, n, ucols, vcols)
    } else if own {
        bidiagonal_dc::svd_scratch::<T>(m, n, shape == Shape::Full, par)
    } else {
        // Values only: faer always uses the QR algorithm there.
        svd_scratch::<T>(m, n, fu, fv, par, params_for::<T>(opts, shape != Shape::Values))
    };
    let fallback = if own {
        svd_jacobi::scratch::<T>(m, n, ucols, vcols).or(svd_guard::scratch::<T>(m, n, k))
    } else if guarded(opts, shape, m, n) {
        svd_scratch::<T>(m, n, fu, fv, par, qr_only_params::<T>()).or(svd_guard::scratch::<T>(m, n, k))
    } else {
        StackReq::EMPTY
    };
    // The copy of `a` scaled into the safe range (faer's SVD reads its
    // input in place; the Jacobi SVD scales its own working copy), or the
    // own divide and conquer's working matrix.
    let (rows, cols) = copy_shape(jacobi, own, m, n);
    StackReq::all_of(&[
        temp_mat_scratch::<T>(rows, cols), // a · 2^e
        temp_mat_scratch::<T>(k, 1),       // s, as T
        temp_mat_scratch::<T>(m, ucols),   // U
        temp_mat_scratch::<T>(n, vcols).or(temp_mat_scratch::<T>(vcols, n)), // V, either layout
        temp_mat_scratch::<T>(if JACOBI { 0 } else { vcols }, 1), // V's phases (compute_into)
        main.or(fallback),
    ])
}

/// Computes the SVD of `a · 2^e` into temporaries (guarded, canonical
/// phases; e of the [`Scaling`] that brings `a` into the safe range, 0
/// inside it) and hands U, s (as `T`, of the scaled matrix: `a`'s are
/// `scaling.undo(s)`), V — not Vᴴ — and the scaling to `write`.
pub(super) fn compute<T: Field>(
    a: MatRef<'_, T>,
    opts: &SvdOptions,
    shape: Shape,
    par: Par,
    stack: &mut MemStack,
    write: impl FnOnce(Option<MatMut<'_, T>>, MatRef<'_, T>, Option<MatMut<'_, T>>, Scaling),
) -> Result<(), Failure> {
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let (ucols, vcols) = shape.cols(m, n);
    // SAFETY (all three temporaries): faer writes `s` and thin U/V without
    // reading them, and full U/V are zero-filled before faer reads them; the
    // Jacobi SVD writes every entry of all three before reading it.
    let row_major = v_row_major::<T>(opts, shape, m, n);
    let (mut s, stack) = unsafe { temp_mat_uninit::<T, _, _>(k, 1, stack) };
    let (mut u, stack) = unsafe { temp_mat_uninit::<T, _, _>(m, ucols, stack) };
    let (vr, vc) = if row_major { (vcols, n) } else { (n, vcols) };
    let (mut v, stack) = unsafe { temp_mat_uninit::<T, _, _>(vr, vc, stack) };
    let (mut s, mut u, v) = (s.as_mat_mut(), u.as_mat_mut(), v.as_mat_mut());
    let mut v = if row_major { v.transpose_mut() } else { v };
    let with_vectors = shape != Shape::Values;
    let with_v = with_vectors && shape != Shape::ThinLeft;
    let scaling = factor(a, opts, shape, par, stack, (s.rb_mut(), u.rb_mut(), v.rb_mut()))?;
    if with_vectors {
        canonicalize_pairs(u.rb_mut(), v.rb_mut(), k);
        write(Some(u), s.rb(), with_v.then_some(v), scaling);
    } else {
        write(None, s.rb(), None, scaling);
    }
    Ok(())
}

/// `true` when faer writes V row-major (into the transpose of Vᴴ-shaped
/// memory): exactly when faer's guarded divide and conquer runs, whose V
/// comes out of GEMMs that do not mind the layout, and on every path that
/// computes such an SVD ([`compute`] and [`compute_into`]), because faer
/// rounds differently on the two layouts and every SVD op must give the
/// same bits for the same input (the truncated SVD's and `svd`'s derivative
/// rules recompute the factors). faer's QR iteration (below the divide-and-
/// conquer size, or `SvdDriver::QrIteration`) rotates V's columns, up to
/// 35 % slower on a row-major V, so it keeps the column-major one.
/// lindiff's own divide and conquer ([`own_dc`]) writes a thin V row-major
/// too, which saves the n×k temporary of a column-major V (its merges walk
/// a row-major V by rows), and a full V column-major (its Jacobi fallback,
/// [`own_svd`], needs one, and a full V does not fit the working matrix it
/// borrows for a thin one).
fn v_row_major<T: Field>(opts: &SvdOptions, shape: Shape, m: usize, n: usize) -> bool {
    guarded(opts, shape, m, n) && !(shape == Shape::Full && own_dc::<T>(opts, shape, m, n))
}

/// [`compute`] straight into the item's outputs U (`ui`), s (`si`) and Vᴴ
/// (`vi`), all present. U is always written in place. Where V is row-major
/// ([`v_row_major`]) it is written through the transposed view of Vᴴ's
/// memory and conjugated and phased there; otherwise it goes through a
/// column-major temporary and one transposing copy that also applies the
/// phases. This skips the copy of U (and of V) that [`compute`] +
/// [`store`] make, a visible share of a call at n ≤ 512. `shape` is `Thin`
/// or `Full`.
fn compute_into<T: Field>(
    item: &mut Item<'_>,
    opts: &SvdOptions,
    shape: Shape,
    par: Par,
    stack: &mut MemStack,
    (ui, si, vi): (usize, usize, usize),
) -> Result<(), Failure> {
    let a = item.mat::<T>(0);
    let (m, n) = (a.nrows(), a.ncols());
    let k = m.min(n);
    let (_, vcols) = shape.cols(m, n);
    let v_in_place = v_row_major::<T>(opts, shape, m, n);
    // SAFETY: faer, lindiff's own divide and conquer or the Jacobi SVD
    // writes every value of `s` and every entry of a thin `v` before it is
    // read, and a full `v` is zero-filled first (`faer_svd`) or written in
    // full (`bidiagonal_dc::svd`); the canonicalization writes `phases` before it
    // reads them (its real packed path does not use them at all). `s`,
    // `v` and `phases` are counted in `scratch` (the U temporary is unused).
    let (mut s, stack) = unsafe { temp_mat_uninit::<T, _, _>(k, 1, stack) };
    let (mut v, stack) = unsafe { temp_mat_uninit::<T, _, _>(n, if v_in_place { 0 } else { vcols }, stack) };
    let (mut phases, stack) = unsafe { temp_mat_uninit::<T, _, _>(vcols, 1, stack) };
    let (mut s, mut v, mut phases) = (s.as_mat_mut(), v.as_mat_mut(), phases.as_mat_mut());
    let scaling = {
        let (mut u, mut vh) = item.out_pair::<T, T>(ui, vi);
        if v_in_place {
            let vt = vh.rb_mut().transpose_mut();
            let scaling = factor(a, opts, shape, par, stack, (s.rb_mut(), u.rb_mut(), vt))?;
            canonicalize_pairs_adjoint(u, vh, k, phases.rb_mut().col_mut(0));
            scaling
        } else {
            let scaling = factor(a, opts, shape, par, stack, (s.rb_mut(), u.rb_mut(), v.rb_mut()))?;
            canonicalize_pairs_into_adjoint(u, v.rb(), vh, k, phases.rb_mut().col_mut(0));
            scaling
        }
    };
    store_values(item, si, s.rb(), scaling);
    Ok(())
}

/// The SVD of `a · 2^e` into `s`, `u`, `v` (shaped for `shape`; any strides
/// for faer, column-major columns for Jacobi), with the [`Scaling`] (e) that
/// brings `a` into the safe range: lindiff's Jacobi SVD where [`jacobi`]
/// says so, lindiff's own divide and conquer where [`own_dc`] says so
/// ([`own_svd`]), the guarded SVD of [`guarded_svd`] (on a scaled copy when
/// e ≠ 0) otherwise. Phases are not yet canonical. NaN/∞ in `a` is
/// `NonFinite("a")`, found by the scan that measures `a`.
fn factor<T: Field>(
    a: MatRef<'_, T>,
    opts: &SvdOptions,
    shape: Shape,
    par: Par,
    stack: &mut MemStack,
    (s, u, v): (MatMut<'_, T>, MatMut<'_, T>, MatMut<'_, T>),
) -> Result<Scaling, Failure> {
    let (m, n) = (a.nrows(), a.ncols());
    let scaling = check_range(a, "a", Range::Squares)?;
    let jacobi = jacobi(opts, m, n);
    let own = own_dc::<T>(opts, shape, m, n);
    // SAFETY: the copy is written in full before it is read (and only when
    // it is used); `scratch` counts it (`copy_shape`).
    let (rows, cols) = copy_shape(jacobi || (scaling.is_none() && !own), own, m, n);
    let (mut copy, stack) = unsafe { temp_mat_uninit::<T, _, _>(rows, cols, stack) };
    let mut copy = copy.as_mat_mut();
    if jacobi {
        svd_jacobi::svd(a, scaling, s.col_mut(0), u, v, stack)?;
    } else if own {
        own_svd(a, scaling, copy, opts, shape, par, stack, (s, u, v))?;
    } else if scaling.is_none() {
        guarded_svd(a, opts, shape, par, stack, (s, u, v))?;
    } else {
        copy_mat(a, copy.rb_mut());
        scaling.apply_mat(copy.rb_mut());
        guarded_svd(copy.rb(), opts, shape, par, stack, (s, u, v))?;
    }
    Ok(scaling)
}

/// The shape of [`factor`]'s copy of an m×n `a`: none when `unused`; the
/// tall orientation (A or Aᵀ, which [`own_svd`] reduces in place) for
/// lindiff's own divide and conquer; m×n (a · 2^e for faer) otherwise.
fn copy_shape(unused: bool, own: bool, m: usize, n: usize) -> (usize, usize) {
    if unused {
        (m, 0)
    } else if own {
        (m.max(n), m.min(n))
    } else {
        (m, n)
    }
}

/// `true` when [`compute_into`] applies: outputs 0, 1 and 2 (U, s, Vᴴ) are
/// all present. Never in a `svd-jacobi` build: there code size counts more
/// than the copies saved (the Cortex-M firmware's .text limit), so every SVD
/// goes through [`compute`] alone.
fn into_outputs(item: &Item<'_>) -> bool {
    !JACOBI && (0..3).all(|i| item.has_output(i))
}

/// faer's SVD of `a` into `s`, `u`, `v` (shaped for `shape`) with faer's
/// parameters for `opts`, then the divide-and-conquer guard and its QR
/// fallback where they apply.
fn guarded_svd<T: Field>(
    a: MatRef<'_, T>,
    opts: &SvdOptions,
    shape: Shape,
    par: Par,
    stack: &mut MemStack,
    (mut s, mut u, mut v): (MatMut<'_, T>, MatMut<'_, T>, MatMut<'_, T>),
) -> Result<(), Failure> {
    let params = params_for::<T>(opts, shape != Shape::Values);
    faer_svd(a, params, shape, par, stack, (s.rb_mut(), u.rb_mut(), v.rb_mut()))?;
    fallback_if_rejected(a, opts, shape, par, stack, (s, u, v))
}

/// lindiff's own divide and conquer ([`bidiagonal_dc`]) of `a · 2^e`,
/// reduced to bidiagonal form in `work` (A's or Aᵀ's tall shape), then the
/// guard on `a · 2^e` — `a` itself, or the scaled copy rebuilt in `work`.
/// Where the solver fails (a secular root that does not converge) or the
/// guard rejects its factors, the one-sided Jacobi SVD recomputes them (U
/// column-major, as the callers give it; V column-major, or through `work`
/// where it is row-major): it needs no workspace beyond the outputs (faer's
/// QR fallback would add 3·min(m, n)² entries to every call's workspace for
/// a path that does not run) and is the more accurate of the two, at
/// several times the cost.
#[expect(clippy::too_many_arguments, reason = "the SVD's inputs, outputs and workspace")]
fn own_svd<T: Field>(
    a: MatRef<'_, T>,
    scaling: Scaling,
    mut work: MatMut<'_, T>,
    opts: &SvdOptions,
    shape: Shape,
    par: Par,
    stack: &mut MemStack,
    (mut s, mut u, mut v): (MatMut<'_, T>, MatMut<'_, T>, MatMut<'_, T>),
) -> Result<(), Failure> {
    let (m, n) = (a.nrows(), a.ncols());
    debug_assert!(guarded(opts, shape, m, n), "the own solver's sizes are the guard's");
    let solved =
        bidiagonal_dc::svd(a, scaling, work.rb_mut(), (s.rb_mut(), u.rb_mut(), v.rb_mut()), par, stack)
            .is_ok();
    if solved {
        let checked = if scaling.is_none() {
            a
        } else {
            let mut w = if m < n { work.rb_mut().transpose_mut() } else { work.rb_mut() };
            copy_mat(a, w.rb_mut());
            scaling.apply_mat(w.rb_mut());
            w.into_const()
        };
        if accepted(checked, s.rb(), u.rb(), v.rb(), stack) {
            return Ok(());
        }
    }
    svd_guard::note_fallback();
    if v.row_stride() == 1 {
        return svd_jacobi::svd(a, scaling, s.col_mut(0), u, v, stack);
    }
    // A row-major (thin) V: the Jacobi SVD writes V column-major into the
    // working matrix (max(m, n)×min(m, n), as large as V), then it is copied.
    let mut tmp = work.submatrix_mut(0, 0, v.nrows(), v.ncols());
    svd_jacobi::svd(a, scaling, s.col_mut(0), u, tmp.rb_mut(), stack)?;
    v.copy_from(tmp.rb());
    Ok(())
}

/// Whether the guard accepts the SVD `s`, `u`, `v` of `a` (never when the
/// test hook forces a rejection).
fn accepted<T: Field>(
    a: MatRef<'_, T>,
    s: MatRef<'_, T>,
    u: MatRef<'_, T>,
    v: MatRef<'_, T>,
    stack: &mut MemStack,
) -> bool {
    !svd_guard::forced_rejection() && svd_guard::accepts(a, s.col(0), u, v, stack)
}

/// The failure of an SVD of `a` that did not complete: `NonFinite("a")`
/// for NaN/∞ in `a`, `NonConvergence` otherwise.
fn failure<T: Field>(a: MatRef<'_, T>) -> Failure {
    if all_finite(a) {
        Failure::NonConvergence
    } else {
        Failure::NonFinite("a")
    }
}

/// faer's SVD of `a` into `s`, `u`, `v` (shaped for `shape`) with `params`.
fn faer_svd<T: Field>(
    a: MatRef<'_, T>,
    params: Spec<SvdParams, T>,
    shape: Shape,
    par: Par,
    stack: &mut MemStack,
    (s, mut u, mut v): (MatMut<'_, T>, MatMut<'_, T>, MatMut<'_, T>),
) -> Result<(), Failure> {
    if shape == Shape::Full {
        // faer reads part of a full U (tall) or V (wide) before writing it.
        u.fill(T::zero());
        v.fill(T::zero());
    }
    let with_vectors = shape != Shape::Values;
    let with_v = with_vectors && shape != Shape::ThinLeft;
    // faer rejects non-finite input itself (its bidiagonal check), so no
    // separate pass over `a` is needed to name the failure.
    let (u, v) = (with_vectors.then_some(u), with_v.then_some(v));
    svd(a, s.col_mut(0).as_diagonal_mut(), u, v, par, stack, params).map_err(|_| failure(a))
}

/// The divide-and-conquer guard on the SVD of `a` in `s`, `u`, `v`, where
/// it applies ([`guarded`]), and faer's QR SVD of `a` in their place when it
/// rejects them.
fn fallback_if_rejected<T: Field>(
    a: MatRef<'_, T>,
    opts: &SvdOptions,
    shape: Shape,
    par: Par,
    stack: &mut MemStack,
    (s, u, v): (MatMut<'_, T>, MatMut<'_, T>, MatMut<'_, T>),
) -> Result<(), Failure> {
    let (m, n) = (a.nrows(), a.ncols());
    if guarded(opts, shape, m, n) && !accepted(a, s.rb(), u.rb(), v.rb(), stack) {
        svd_guard::note_fallback();
        faer_svd(a, qr_only_params::<T>(), shape, par, stack, (s, u, v))?;
    }
    Ok(())
}

/// Writes U into output `ui`, the real s (scaled back) into `si` and Vᴴ
/// into `vi`, for whichever of them are present.
fn store<T: Field>(
    item: &mut Item<'_>,
    (ui, si, vi): (usize, usize, usize),
    u: Option<MatMut<'_, T>>,
    s: MatRef<'_, T>,
    v: Option<MatMut<'_, T>>,
    scaling: Scaling,
) {
    store_values(item, si, s, scaling);
    if let Some(u) = u.filter(|_| item.has_output(ui)) {
        copy_mat(u.rb(), item.out_mat::<T>(ui));
    }
    if let Some(v) = v.filter(|_| item.has_output(vi)) {
        item.out_mat::<T>(vi).copy_from(v.rb().adjoint());
    }
}

/// Writes the real parts of the column `s`, scaled back by `scaling`, into
/// the real vector output `out`.
pub(super) fn store_values<T: Field>(item: &mut Item<'_>, out: usize, s: MatRef<'_, T>, scaling: Scaling) {
    let mut dst = item.out_mat::<<T as Scalar>::Real>(out);
    for i in 0..s.nrows() {
        dst[(i, 0)] = scaling.undo(Scalar::re(s[(i, 0)]));
    }
}

impl<T: Field> Kernel<T> for Svd {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        scratch::<T>(&self.0, thin_shape(&self.0, m, n), m, n, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        // With Vᴴ switched off, V is skipped unless the guard needs it. U is
        // always computed: the canonical phase of each pair is U's.
        let shape = thin_shape(&self.0, a.nrows(), a.ncols());
        if shape == Shape::Thin && into_outputs(item) {
            return compute_into::<T>(item, &self.0, shape, par, stack, (0, 1, 2));
        }
        compute(a, &self.0, shape, par, stack, |u, s, v, scaling| store(item, (0, 1, 2), u, s, v, scaling))
    }
}

impl<T: Field> Kernel<T> for SvdFull {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        scratch::<T>(&self.0, Shape::Full, m, n, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        if into_outputs(item) {
            return compute_into::<T>(item, &self.0, Shape::Full, par, stack, (0, 1, 2));
        }
        let a = item.mat::<T>(0);
        compute(a, &self.0, Shape::Full, par, stack, |u, s, v, scaling| {
            store(item, (0, 1, 2), u, s, v, scaling)
        })
    }
}

impl<T: Field> Kernel<T> for SvdVals {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        scratch::<T>(&self.0, Shape::Values, m, n, par)
    }

    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        compute(a, &self.0, Shape::Values, par, stack, |_, s, _, scaling| store_values(item, 0, s, scaling))
    }
}

impl<T: Field> Kernel<T> for SvdTruncated {
    fn scratch(&self, shapes: &Shapes, par: Par) -> StackReq {
        let (m, n) = shapes.input(0);
        scratch::<T>(&SvdOptions::default(), Shape::Thin, m, n, par)
    }

    /// The thin SVD with default options (the factors `svd` returns, which
    /// the derivative rule recomputes), stored, then cut to p triplets:
    /// columns p.. of `u`, values p.. of `s` and rows p.. of `vh` are set to
    /// (+)0; `rank` = p.
    fn run(&self, item: &mut Item<'_>, par: Par, stack: &mut MemStack) -> Result<(), Failure> {
        let a = item.mat::<T>(0);
        compute(a, &SvdOptions::default(), Shape::Thin, par, stack, |u, s, v, scaling| {
            let p = kept_by_truncation(&self.0, s, scaling);
            store(item, (0, 1, 2), u, s, v, scaling);
            let zero = <T as Scalar>::zero();
            if item.has_output(0) {
                item.out_mat::<T>(0).get_mut(.., p..).fill(zero);
            }
            for i in p..s.nrows() {
                item.set::<<T as Scalar>::Real>(1, i, Scalar::zero());
            }
            if item.has_output(2) {
                item.out_mat::<T>(2).get_mut(p.., ..).fill(zero);
            }
            set_rank(item, 3, p);
        })
    }
}
