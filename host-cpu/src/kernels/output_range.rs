//! The range check of every linear-algebra op's outputs. The kernels check
//! their inputs (a NaN or infinity there is `Error::NonFinite`), so a NaN or
//! infinity in an output of finite inputs is a value the dtype cannot hold:
//! a singular value, an eigenvalue or an entry of R beyond the largest
//! finite number, a solution of a system too close to singular for the
//! scale of its right-hand side, a determinant that overflows — or an
//! intermediate a kernel had to form on the way. Each is reported as
//! `Error::OutOfRange`, naming the op, its first argument and the
//! lowest-indexed batch item, never returned as `Ok` with infinities.
//!
//! One vectorised pass over each present floating-point output that can
//! leave the range, after the whole batch ([`slice_finite`]): O(size of the
//! outputs) against the op's O(n³); a failing output is scanned again,
//! entry by entry, for the batch item. Not scanned: outputs bounded by
//! construction (unitary factors, eigenvectors, partial-pivot L, Cholesky
//! factors); partial-pivot U, which its kernels check (most often from its
//! diagonal alone: `super::lu::upper_finite`); and by definition `slogdet`'s
//! `logabsdet` (−∞ at a singular matrix), `funm_hermitian_factors`' `gamma`
//! (+∞ where f′ is, e.g. √ at a zero eigenvalue), and a triangular solve
//! asked to propagate a zero pivot (`PivotCheck::Off`, whose caller
//! discards what it reaches).

use super::finite::slice_finite;
use crate::batch_run::batch_rank_of;
use crate::field::Field;
use lindiff_core::op::PivotCheck;
use lindiff_core::{DType, Error, Host, HostData, Input, LinalgOp, Output, Result};

/// Why a determinant is out of range, and what to use instead.
const DET: &str =
    "|det a| is beyond the dtype's largest finite value; `slogdet` gives its sign and logarithm";
/// Why a solution is out of range.
const SOLUTION: &str = "an entry of the solution is beyond the dtype's largest finite value (the matrix is \
                        too close to singular for the scale of the right-hand side)";
/// Why a Fréchet derivative of f(A) is out of range.
pub(super) const UNBOUNDED: &str =
    "an entry of L(a, e) is beyond the dtype's largest finite value, or unbounded where f′ is \
                         infinite at an eigenvalue of a (√ at 0)";
/// Why any other output is out of range.
pub(super) const RESULT: &str =
    "an entry of the result is beyond the dtype's largest finite value; scale the input \
                      down (and the result back)";

/// What a non-finite entry in output `i` of `op` means: by the output's
/// name, `det` and the solutions `x` (of every solve, `lstsq` included)
/// having their own.
fn why(op: &LinalgOp, i: usize) -> &'static str {
    if matches!(op, LinalgOp::FunmHermitianFrechet(_) | LinalgOp::FunmHermitianSecond(_)) {
        return UNBOUNDED;
    }
    match op.output_names().get(i).copied() {
        Some("det") => DET,
        Some("x") => SOLUTION,
        _ => RESULT,
    }
}

/// Whether output `i` of `op` need not be scanned: it may hold a
/// non-finite value for finite inputs (see the module docs), or it cannot
/// overflow — unitary factors and unit-norm eigenvectors (entries ≤ 1),
/// partial-pivot L (≤ 1), a Cholesky factor (|l_ij| ≤ √a_jj) — or its
/// kernel checks it (partial-pivot U, and with it the packed factors of
/// `lu_factor` and `lu_factor_solve`, whose L is finite where U is) — so
/// the scan is spent only where a value can leave the range.
fn exempt(op: &LinalgOp, i: usize) -> bool {
    let name = op.output_names().get(i).copied();
    match op {
        LinalgOp::Cholesky(_) | LinalgOp::Polar(_) => true,
        // U is checked by the kernels themselves (`super::lu::upper_finite`),
        // most often from its diagonal alone.
        LinalgOp::Lu(_) | LinalgOp::LuFactor(_) => true,
        LinalgOp::LuFactorSolve(_) => name == Some("lu"),
        LinalgOp::FullPivLu(_) => name == Some("l"),
        LinalgOp::Qr(_) | LinalgOp::RankRevealingQr(_) => name == Some("q"),
        LinalgOp::Svd(_) | LinalgOp::SvdFull(_) | LinalgOp::SvdTruncated(_) => {
            matches!(name, Some("u" | "vh"))
        }
        LinalgOp::Eigh(_) | LinalgOp::Eig(_) => name == Some("v"),
        LinalgOp::Slogdet(_) => i == 1,
        // Γ's divided differences are +∞ where f′ is (√ at a zero eigenvalue
        // of a PSD matrix), as its derivative rule documents.
        LinalgOp::FunmHermitianFactors(_) => matches!(name, Some("gamma" | "v")),
        LinalgOp::TriangularSolve(t) => t.0.pivot_check == PivotCheck::Off,
        _ => false,
    }
}

/// `Ok` when every present floating-point output of `op` (run on `inputs`,
/// whose entries the kernels found finite) is finite; otherwise
/// `Error::OutOfRange` naming `op`, its first argument and the lowest
/// batch item with a non-finite entry in any output.
///
/// # Errors
/// As above.
pub fn outputs_in_range(
    op: &LinalgOp,
    inputs: &[Input<'_, Host>],
    outputs: &[Option<Output<'_, '_, Host>>],
) -> Result<()> {
    let rank = batch_rank_of(inputs.first().map(|i| i.desc));
    // The lowest failing batch item, and the first output failing there.
    let mut worst: Option<(usize, usize)> = None;
    for (i, out) in outputs.iter().enumerate() {
        let Some(out) = out else { continue };
        if exempt(op, i) {
            continue;
        }
        let dims = out.meta.shape.dims();
        let core: usize = dims[..dims.len().saturating_sub(rank)].iter().product();
        let parts = if out.meta.dtype.is_complex() { 2 } else { 1 };
        let Some(data) = out.buffer.data() else { continue };
        // The buffer may be longer than the tensor (zero-filled past it).
        let bytes = data.bytes();
        let data = HostData::from_bytes(&bytes[..out.meta.bytes().unwrap_or(0).min(bytes.len())]);
        let first = match out.meta.dtype {
            #[cfg(any(feature = "f64", feature = "c64"))]
            DType::F64 | DType::C64 => first_non_finite(data.typed::<f64>()),
            #[cfg(any(feature = "f32", feature = "c32"))]
            DType::F32 | DType::C32 => first_non_finite(data.typed::<f32>()),
            _ => None,
        };
        if let Some(at) = first {
            let item = at / (parts * core).max(1);
            if worst.is_none_or(|(w, _)| item < w) {
                worst = Some((item, i));
            }
        }
    }
    match worst {
        None => Ok(()),
        Some((batch_index, output)) => {
            let arg = op.input_names().first().copied().unwrap_or("a");
            Err(Error::OutOfRange { op: op.name(), arg, batch_index, why: why(op, output) })
        }
    }
}

/// The index of the first NaN or infinite entry of `s` (`None` when all are
/// finite, or when `s` is `None`): the vectorised pass first, the exact
/// search only when it fails.
#[allow(dead_code)] // with neither real dtype's kernels built
fn first_non_finite<R: Field>(s: Option<&[R]>) -> Option<usize> {
    let s = s?;
    if slice_finite(s) {
        return None;
    }
    s.iter().position(|&x| !lindiff_core::Scalar::is_finite(x))
}
