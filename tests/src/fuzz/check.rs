//! What the fuzz checks of every `Ok`, independently of the code under
//! test (test-side dense algebra in complex f64 on the inputs and outputs
//! scaled back to O(1) by the inputs' exact powers of two):
//! * NaN/∞ in an input: a decomposition, solve or norm built on them that
//!   answers `Ok` has finite outputs (the bad entry was in a part it does
//!   not read), never NaN/∞ outputs;
//! * finite inputs: each float output is finite wherever its true value is
//!   representable — where its degree of homogeneity in the inputs times
//!   their exponents keeps it, with a margin, inside the dtype's range;
//! * finite inputs and outputs: the op's backward error (reconstruction,
//!   residual, orthonormality, normal equations, …) is at most 100·n·ε
//!   relative, plus a few of the dtype's smallest subnormal steps where an
//!   output lies among the subnormals (representable only to those).

use super::cases::{Arg, ArgData, Case, Composite, Target};
use super::values::pow2_scale;
use crate::dense::{Dense, Re};
use lindiff_core::face::Norm;
use lindiff_core::op::{Diagonal, LinalgOp, MatOp, QrMode, Side, SvdVectors, Triangle, Truncation};
use lindiff_core::{Op, RealScalar, Scalar};
use num_complex::Complex;

/// Complex f64: the checks' arithmetic.
pub type C = Complex<f64>;

/// An output as the checks see it: dims and elements (float ones widened
/// to complex f64, exactly).
#[derive(Clone, Debug)]
pub struct Out {
    /// Dims.
    pub dims: Vec<usize>,
    /// Elements.
    pub data: OutData,
}

/// Widened float elements, or integers.
#[derive(Clone, Debug)]
pub enum OutData {
    /// Real or complex elements as complex f64.
    Float(Vec<C>),
    /// i64 elements.
    Int(Vec<i64>),
}

/// How an output scales with the inputs: `a`'s degree and `b`'s (the first
/// and the last float input), half a degree of `a` (a Cholesky factor), or
/// not homogeneous (no finiteness or range check).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Deg {
    Of(i32, i32),
    HalfA,
    Skip,
}

/// Whether an output's true size is bounded by its inputs' (a
/// decomposition's factors) or may be large on ill-conditioned inputs (a
/// solution, an inverse, a determinant): the finiteness rule's margin; or
/// unbounded on inputs the op does not check (a triangular solve's zero
/// diagonal: the unchecked solve), where no finiteness rule applies.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Size {
    Bounded,
    Unbounded,
    Free,
}

/// The first float argument's exponent, and the last one's.
fn exponents<T>(args: &[Arg<T>]) -> (i32, i32) {
    let floats: Vec<&Arg<T>> = args.iter().filter(|a| matches!(a.data, ArgData::Float(_))).collect();
    (floats.first().map_or(0, |a| a.exponent), floats.last().map_or(0, |a| a.exponent))
}

/// Each output's degree and size class.
fn degrees<T>(target: &Target, args: &[Arg<T>]) -> (Vec<Deg>, Size) {
    use Deg::{HalfA, Of, Skip};
    let n = args.first().and_then(|a| a.dims.first().copied()).unwrap_or(0) as i32;
    match target {
        Target::Op(Op::Linalg(l)) => match l {
            LinalgOp::Svd(_) | LinalgOp::SvdFull(_) => (vec![Of(0, 0), Of(1, 0), Of(0, 0)], Size::Bounded),
            LinalgOp::SvdVals(_) => (vec![Of(1, 0)], Size::Bounded),
            LinalgOp::SvdTruncated(_) => (vec![Of(0, 0), Of(1, 0), Of(0, 0), Skip], Size::Bounded),
            LinalgOp::Qr(_) => (vec![Of(0, 0), Of(1, 0)], Size::Bounded),
            LinalgOp::RankRevealingQr(_) => (vec![Of(0, 0), Of(1, 0), Skip, Skip], Size::Bounded),
            LinalgOp::Eigh(_) | LinalgOp::Eig(_) => (vec![Of(1, 0), Of(0, 0)], Size::Bounded),
            LinalgOp::EighVals(_) | LinalgOp::EigVals(_) => (vec![Of(1, 0)], Size::Bounded),
            LinalgOp::Cholesky(_) => (vec![HalfA], Size::Bounded),
            LinalgOp::Lu(_) => (vec![Skip, Of(0, 0), Of(1, 0)], Size::Bounded),
            LinalgOp::FullPivLu(_) => (vec![Skip, Skip, Of(0, 0), Of(1, 0)], Size::Bounded),
            LinalgOp::LuFactorSolve(_) | LinalgOp::FullPivLuSolve(_) => (vec![Of(-1, 1)], Size::Unbounded),
            LinalgOp::LuSolvePrepared(_) | LinalgOp::FullPivLuSolvePrepared(_) => {
                (vec![Of(-1, 1)], Size::Unbounded)
            }
            LinalgOp::TriangularSolve(t) if t.0.diagonal == Diagonal::NonUnit => {
                (vec![Of(-1, 1)], Size::Free)
            }
            LinalgOp::TriangularSolve(_) => (vec![Of(0, 1)], Size::Free),
            LinalgOp::Det(_) => (vec![Of(n, 0)], Size::Unbounded),
            LinalgOp::Slogdet(_) => (vec![Of(0, 0), Skip], Size::Bounded),
            LinalgOp::Adjugate(_) => (vec![Of(n - 1, 0)], Size::Unbounded),
            LinalgOp::LowRankApprox(_) => (vec![Of(1, 0), Skip], Size::Bounded),
            LinalgOp::Polar(_) => (vec![Of(0, 0)], Size::Bounded),
            LinalgOp::Pinv(_) => (vec![Of(-1, 0)], Size::Unbounded),
            LinalgOp::Lstsq(_) => (vec![Of(-1, 1), Skip], Size::Unbounded),
            _ => (vec![], Size::Bounded),
        },
        Target::Composite(c) => match *c {
            Composite::Norm(Norm::Vector(p)) if p != 1.0 && p != 2.0 && p != f64::INFINITY => {
                (vec![Skip], Size::Bounded)
            }
            Composite::Norm(_) => (vec![Of(1, 0)], Size::Bounded),
            Composite::Cond(_) => (vec![Skip], Size::Bounded),
            Composite::Inv(_) => (vec![Of(-1, 0)], Size::Unbounded),
            Composite::Solve(_) => (vec![Of(-1, 1)], Size::Unbounded),
            Composite::MatrixPower(k) => (vec![Of(k as i32, 0)], Size::Unbounded),
            Composite::Vecdot => (vec![Of(1, 1)], Size::Bounded),
        },
        Target::Op(_) => (vec![], Size::Bounded),
    }
}

/// `true` for targets whose NaN/∞ inputs must never give NaN/∞ outputs
/// with `Ok` (they check their inputs).
fn checks_inputs(target: &Target) -> bool {
    match target {
        Target::Op(Op::Linalg(l)) => !matches!(
            l,
            LinalgOp::HouseholderQrQ(_)
                | LinalgOp::HouseholderQrR(_)
                | LinalgOp::HouseholderQrApply(_)
                | LinalgOp::TriangularSolve(_)
        ),
        Target::Composite(c) => matches!(
            c,
            Composite::Norm(Norm::Fro | Norm::Nuc | Norm::Two | Norm::NegTwo | Norm::Vector(2.0))
                | Composite::Inv(_)
                | Composite::Solve(_)
        ),
        Target::Op(_) => false,
    }
}

fn is_finite(c: &C) -> bool {
    c.re.is_finite() && c.im.is_finite()
}

/// `x · 2^e`, in steps that keep every intermediate normal (a factor 2^e
/// itself may not be representable: 2^1030).
fn scale_c(x: C, e: i64) -> C {
    let e = e.clamp(-5000, 5000) as i32;
    C::new(pow2_scale(x.re, e), pow2_scale(x.im, e))
}

/// A float argument as an O(1) matrix: its elements times 2^−exponent
/// (exact: scaling up). Vectors are len×1.
fn input_up<T: Scalar>(arg: &Arg<T>) -> Dense<C> {
    let rows = arg.dims.first().copied().unwrap_or(1);
    let cols: usize = arg.dims.iter().skip(1).product();
    let e = -i64::from(arg.exponent);
    match &arg.data {
        ArgData::Float(d) => Dense::from_col_major(
            rows,
            cols,
            d.iter().map(|x| scale_c(C::new(x.re().to_f64(), x.im().to_f64()), e)).collect(),
        ),
        ArgData::Int(_) => Dense::zeros(rows, cols),
    }
}

/// A packed LU argument as O(1) factors: U (on and above the diagonal)
/// times 2^−exponent, L (below) as drawn.
fn packed_up<T: Scalar>(arg: &Arg<T>) -> Dense<C> {
    let scaled = input_up(arg);
    let raw = input_up(&Arg { exponent: 0, ..arg.clone() });
    Dense::from_fn(scaled.rows, scaled.cols, |i, j| if i > j { raw[(i, j)] } else { scaled[(i, j)] })
}

/// `true` when the gradient of Σ Re(output 0) of `case` with respect to
/// every float input exists and is representable wherever the forward is
/// (so a NaN there is a violation): a decomposition, solve or norm built on
/// them, generic inputs (normal entries, scaled or not: at rank-deficient,
/// zero or integer matrices QR's Q, slogdet's sign, … are not
/// differentiable), every gradient's scale (the loss's minus the input's
/// exponent) and the rules' intermediates of degree −1 (1/σ, 1/(σᵢ − σⱼ),
/// a⁻¹) inside the dtype's range with the unbounded margin. Primitives and
/// the entrywise norms differentiate by IEEE formulas, whose 0/0 at a kink
/// (|x| at 0) is NaN.
pub fn gradient_checked<T: Scalar>(case: &Case<T>) -> bool {
    use super::values::Class;
    if !checks_inputs(&case.target) {
        return false;
    }
    let generic =
        |c: Class| matches!(c, Class::Normal | Class::Huge | Class::Small | Class::Tiny | Class::Subnormal);
    if !case.args.iter().filter(|a| matches!(a.data, ArgData::Float(_))).all(|a| generic(a.class)) {
        return false;
    }
    let (ea, eb) = exponents(&case.args);
    let (degs, _) = degrees(&case.target, &case.args);
    let loss = match degs.first() {
        Some(Deg::Of(da, db)) => i64::from(*da) * i64::from(ea) + i64::from(*db) * i64::from(eb),
        Some(Deg::HalfA) => i64::from(ea / 2),
        _ => return false,
    };
    let single = Re::<T>::EPSILON.to_f64() > 1e-10;
    let (emax, emin, margin) = if single { (127, -149, 24) } else { (1023, -1074, 64) };
    case.args.iter().filter(|a| matches!(a.data, ArgData::Float(_))).all(|a| {
        let shift = loss - i64::from(a.exponent);
        let inverse = -i64::from(a.exponent);
        [shift, inverse].iter().all(|&s| s + margin < emax && s - margin > emin + 60)
    })
}

/// An output as an O(1) matrix: its elements times 2^−shift.
fn output_up(out: &Out, shift: i64) -> Dense<C> {
    let rows = out.dims.first().copied().unwrap_or(1);
    let cols: usize = out.dims.iter().skip(1).product();
    match &out.data {
        OutData::Float(d) => {
            Dense::from_col_major(rows, cols, d.iter().map(|&x| scale_c(x, -shift)).collect())
        }
        OutData::Int(d) => {
            Dense::from_col_major(rows, cols, d.iter().map(|&x| C::new(x as f64, 0.0)).collect())
        }
    }
}

fn ints(out: &Option<Out>) -> Vec<i64> {
    match out.as_ref().map(|o| &o.data) {
        Some(OutData::Int(d)) => d.clone(),
        _ => Vec::new(),
    }
}

/// Checks one `Ok` of `case` with outputs `outs` (see the module docs).
///
/// # Errors
/// What is wrong, for the violation report.
pub fn check<T: Scalar>(case: &Case<T>, outs: &[Option<Out>]) -> Result<(), String> {
    let floats_finite = case.args.iter().all(|a| match &a.data {
        ArgData::Float(d) => d.iter().all(|x| x.is_finite()),
        ArgData::Int(_) => true,
    });
    let out_finite = |o: &Option<Out>| match o.as_ref().map(|o| &o.data) {
        Some(OutData::Float(d)) => d.iter().all(is_finite),
        _ => true,
    };
    if !floats_finite {
        if checks_inputs(&case.target) && !outs.iter().all(out_finite) {
            return Err("NaN/∞ input gave Ok with NaN/∞ outputs (not NonFinite)".into());
        }
        return Ok(());
    }
    let (ea, eb) = exponents(&case.args);
    let (degs, size) = degrees(&case.target, &case.args);
    let eps = Re::<T>::EPSILON.to_f64();
    let single = eps > 1e-10;
    let (emax, emin) = if single { (127, -149) } else { (1023, -1074) };
    let margin = match size {
        Size::Bounded => 8,
        Size::Unbounded | Size::Free => {
            if single {
                24
            } else {
                64
            }
        }
    };
    let mut shifts = Vec::new();
    for (i, out) in outs.iter().enumerate() {
        let shift = match degs.get(i) {
            Some(Deg::Of(da, db)) => i64::from(*da) * i64::from(ea) + i64::from(*db) * i64::from(eb),
            Some(Deg::HalfA) => i64::from(ea / 2),
            _ => {
                shifts.push(None);
                continue;
            }
        };
        shifts.push(Some(shift));
        let representable =
            size != Size::Free && shift + margin < emax && shift - margin > i64::from(emin) + 60;
        if representable && !out_finite(out) {
            return Err(format!(
                "output {i} is not finite though its true value (scale 2^{shift}) is representable"
            ));
        }
    }
    if !outs.iter().all(out_finite) {
        return Ok(()); // overflowed where allowed: no residual to check
    }
    residuals(case, outs, &shifts, eps, ea).map_err(|e| format!("backward error: {e}"))
}

/// ‖x‖_F of a dense matrix (0 for empty), summed on the entries divided
/// by the largest, so that it overflows only when the norm itself does:
/// the plain sum of squares overflows from entries of 2^512 on, which a
/// unit triangle's entries reach (they are checked as drawn, up to
/// 2^1000), and ∞·‖x‖ = NaN for an empty `x` made every bound NaN.
fn nrm(m: &Dense<C>) -> f64 {
    let big = m.max_abs();
    if big == 0.0 || !big.is_finite() {
        return m.norm();
    }
    big * m.data.iter().map(|x| (x.norm() / big).powi(2)).sum::<f64>().sqrt()
}

/// The op-specific backward-error checks on O(1) data.
#[allow(clippy::too_many_lines)]
fn residuals<T: Scalar>(
    case: &Case<T>,
    outs: &[Option<Out>],
    shifts: &[Option<i64>],
    eps: f64,
    ea: i32,
) -> Result<(), String> {
    let prepared = matches!(
        case.target,
        Target::Op(Op::Linalg(LinalgOp::LuSolvePrepared(_) | LinalgOp::FullPivLuSolvePrepared(_)))
    );
    let a = match case.args.first() {
        // The packed factor's L is O(1) as drawn; its U carries the
        // exponent.
        Some(arg) if prepared => packed_up(arg),
        Some(arg) if matches!(arg.data, ArgData::Float(_)) => input_up(arg),
        _ => return Ok(()),
    };
    let dim = a.rows.max(a.cols).max(1) as f64;
    let tol = 100.0 * dim * eps;
    // One subnormal step of the dtype at an output's scale, in O(1) units.
    let single = eps > 1e-10;
    let step = if single { f64::from(f32::MIN_POSITIVE) * f64::from(f32::EPSILON) } else { 5e-324 };
    let quantum = |shift: i64| scale_c(C::new(step, 0.0), -shift).re;
    // A few subnormal steps of the largest output quantum, times what
    // multiplies an output in the residuals (‖A‖): even the correctly
    // rounded outputs leave that much.
    let floor =
        4.0 * dim * shifts.iter().flatten().map(|&s| quantum(s)).fold(0.0, f64::max) * (1.0 + a.norm());
    let o = |i: usize| -> Option<Dense<C>> {
        let out = outs.get(i)?.as_ref()?;
        Some(output_up(out, shifts.get(i).copied().flatten().unwrap_or(0)))
    };
    let ok = |what: &str, err: f64, bound: f64| -> Result<(), String> {
        if err <= bound || err.is_nan() && bound.is_nan() {
            Ok(())
        } else {
            Err(format!("{what}: {err:.3e} > {bound:.3e}"))
        }
    };
    let orth = |q: &Dense<C>| q.orthonormality_error();
    let b = case.args.iter().rev().find(|x| matches!(x.data, ArgData::Float(_))).map(input_up);
    match &case.target {
        Target::Op(Op::Linalg(l)) => match l {
            LinalgOp::Svd(lindiff_core::op::Svd(s)) | LinalgOp::SvdFull(lindiff_core::op::SvdFull(s)) => {
                let (u, sv) = (o(0).ok_or("no u")?, o(1).ok_or("no s")?);
                descending(&sv)?;
                ok("UᴴU − I", orth(&u), tol)?;
                if let (Some(vh), true) =
                    (o(2), s.vectors == SvdVectors::Both || matches!(l, LinalgOp::SvdFull(_)))
                {
                    ok("VVᴴ − I", orth(&vh.adjoint()), tol)?;
                    let k = sv.rows;
                    let us = u.cols_range(0, k).scale_cols(&sv.data.iter().map(|x| x.re).collect::<Vec<_>>());
                    let rec = us.matmul(&vh.rows_range(0, k));
                    ok("A − U S Vᴴ", nrm(&a.sub(&rec)), tol * nrm(&a) + floor)?;
                }
            }
            LinalgOp::SvdVals(_) => {
                let sv = o(0).ok_or("no s")?;
                descending(&sv)?;
                let sum2: f64 = sv.data.iter().map(|x| x.re * x.re).sum();
                ok("Σs² − ‖A‖²", (sum2.sqrt() - nrm(&a)).abs(), tol * nrm(&a) + floor)?;
            }
            LinalgOp::SvdTruncated(t) => {
                let (u, sv, vh) = (o(0).ok_or("no u")?, o(1).ok_or("no s")?, o(2).ok_or("no vh")?);
                descending(&sv)?;
                let rank = ints(&outs[3]).first().copied().unwrap_or(0) as usize;
                if let Truncation::Count(p) = t.0 {
                    if rank != p.min(sv.rows) {
                        return Err(format!("rank {rank} for Count({p})"));
                    }
                }
                let kept = u.cols_range(0, rank);
                ok("U_rᴴU_r − I", orth(&kept), tol)?;
                let dropped = sv.data[rank..].iter().map(|x| x.norm()).fold(0.0, f64::max)
                    + nrm(&u.cols_range(rank, u.cols - rank))
                    + nrm(&vh.rows_range(rank, vh.rows - rank));
                ok("dropped triplets", dropped, 0.0)?;
            }
            LinalgOp::Qr(q) => {
                let (qm, r) = (o(0).ok_or("no q")?, o(1).ok_or("no r")?);
                ok("QᴴQ − I", orth(&qm), tol)?;
                upper_real_diagonal(&r, tol)?;
                let want_cols = if q.0.mode == QrMode::Complete { a.rows } else { a.rows.min(a.cols) };
                if qm.cols != want_cols {
                    return Err(format!("Q has {} columns, not {want_cols}", qm.cols));
                }
                ok("A − QR", nrm(&a.sub(&qm.matmul(&r))), tol * nrm(&a) + floor)?;
            }
            LinalgOp::RankRevealingQr(_) => {
                let (qm, r) = (o(0).ok_or("no q")?, o(1).ok_or("no r")?);
                let perm = ints(&outs[2]);
                ok("QᴴQ − I", orth(&qm), tol)?;
                let ap = Dense::from_fn(a.rows, a.cols, |i, j| a[(i, perm[j] as usize)]);
                ok("A P − QR", nrm(&ap.sub(&qm.matmul(&r))), tol * nrm(&a) + floor)?;
            }
            LinalgOp::Eigh(_) | LinalgOp::EighVals(_) => {
                let h = hermitian_lower(&a);
                let w = o(0).ok_or("no w")?;
                if w.data.windows(2).any(|p| p[0].re > p[1].re) {
                    return Err("eigenvalues not ascending".into());
                }
                if let (LinalgOp::Eigh(_), Some(v)) = (l, o(1)) {
                    ok("VᴴV − I", orth(&v), tol)?;
                    let vw = v.scale_cols(&w.data.iter().map(|x| x.re).collect::<Vec<_>>());
                    ok("HV − VW", nrm(&h.matmul(&v).sub(&vw)), tol * nrm(&h) + floor)?;
                } else {
                    let sum2: f64 = w.data.iter().map(|x| x.re * x.re).sum();
                    ok("Σw² − ‖H‖²", (sum2.sqrt() - nrm(&h)).abs(), tol * nrm(&h) + floor)?;
                }
            }
            LinalgOp::Eig(_) => {
                let (w, v) = (o(0).ok_or("no w")?, o(1).ok_or("no v")?);
                for j in 0..v.cols {
                    let c = v.cols_range(j, 1);
                    ok("‖v_j‖ − 1", (nrm(&c) - 1.0).abs(), tol)?;
                }
                let vw = Dense::from_fn(v.rows, v.cols, |i, j| v[(i, j)] * w.data[j]);
                ok("AV − VW", nrm(&a.matmul(&v).sub(&vw)), tol * nrm(&a) * dim.sqrt() + floor)?;
            }
            LinalgOp::EigVals(_) => {
                let w = o(0).ok_or("no w")?;
                let trace: C = (0..a.rows).map(|i| a[(i, i)]).sum();
                let sum: C = w.data.iter().sum();
                ok("Σλ − tr A", (sum - trace).norm(), tol * nrm(&a) * dim + floor)?;
            }
            LinalgOp::Cholesky(_) => {
                let lo = o(0).ok_or("no l")?;
                let h = hermitian_lower(&a);
                for j in 0..lo.cols {
                    if lo[(j, j)].im != 0.0
                        || lo[(j, j)].re <= 0.0
                        || (0..j).any(|i| lo[(i, j)] != C::new(0.0, 0.0))
                    {
                        return Err("L is not lower triangular with a positive real diagonal".into());
                    }
                }
                ok("H − LLᴴ", nrm(&h.sub(&lo.matmul(&lo.adjoint()))), tol * nrm(&h) + floor)?;
            }
            LinalgOp::Lu(_) => {
                let perm = ints(&outs[0]);
                let (lo, up) = (o(1).ok_or("no l")?, o(2).ok_or("no u")?);
                let pa = Dense::from_fn(a.rows, a.cols, |i, j| a[(perm[i] as usize, j)]);
                ok("PA − LU", nrm(&pa.sub(&lo.matmul(&up))), tol * nrm(&a) + floor)?;
            }
            LinalgOp::FullPivLu(_) => {
                let (rows, cols) = (ints(&outs[0]), ints(&outs[1]));
                let (lo, up) = (o(2).ok_or("no l")?, o(3).ok_or("no u")?);
                let paq = Dense::from_fn(a.rows, a.cols, |i, j| a[(rows[i] as usize, cols[j] as usize)]);
                ok("PAQ − LU", nrm(&paq.sub(&lo.matmul(&up))), tol * nrm(&a) + floor)?;
            }
            LinalgOp::LuFactorSolve(_) | LinalgOp::FullPivLuSolve(_) => {
                let (x, b) = (o(0).ok_or("no x")?, b.ok_or("no b")?);
                ok("Ax − b", nrm(&a.matmul(&x).sub(&b)), tol * (nrm(&a) * nrm(&x) + nrm(&b)) + floor)?;
            }
            LinalgOp::LuSolvePrepared(_) | LinalgOp::FullPivLuSolvePrepared(_) => {
                let (x, b) = (o(0).ok_or("no x")?, b.ok_or("no b")?);
                let full = matches!(l, LinalgOp::FullPivLuSolvePrepared(_));
                let how = match l {
                    LinalgOp::LuSolvePrepared(p) => p.0,
                    LinalgOp::FullPivLuSolvePrepared(p) => p.0,
                    _ => MatOp::Identity,
                };
                let rows = ints_arg(&case.args[1]);
                let cols = if full { ints_arg(&case.args[2]) } else { (0..a.cols as i64).collect() };
                let factored = unpack_lu(&a);
                // (P A Q)[i, j] = A[rows[i], cols[j]] = (LU)[i, j].
                let mut full_a = Dense::zeros(a.rows, a.cols);
                for i in 0..a.rows {
                    for j in 0..a.cols {
                        full_a[(rows[i] as usize, cols[j] as usize)] = factored[(i, j)];
                    }
                }
                let op_a = apply_op(&full_a, how);
                let scale = nrm(&lu_abs_product(&a));
                ok("op(A)x − b", nrm(&op_a.matmul(&x).sub(&b)), tol * (scale * nrm(&x) + nrm(&b)) + floor)?;
            }
            LinalgOp::TriangularSolve(t) => {
                let x = o(0).ok_or("no x")?;
                let b = b.ok_or("no b")?;
                // A unit triangle is not homogeneous (its diagonal is 1):
                // its entries as they are.
                let a = if t.0.diagonal == Diagonal::Unit {
                    input_up(&Arg { exponent: 0, ..case.args[0].clone() })
                } else {
                    a.clone()
                };
                let tri = Dense::from_fn(a.rows, a.cols, |i, j| {
                    let keep = if t.0.triangle == Triangle::Lower { i >= j } else { i <= j };
                    if i == j && t.0.diagonal == Diagonal::Unit {
                        C::new(1.0, 0.0)
                    } else if keep {
                        a[(i, j)]
                    } else {
                        C::new(0.0, 0.0)
                    }
                });
                let op_t = apply_op(&tri, t.0.op);
                let res =
                    if t.0.side == Side::Left { op_t.matmul(&x).sub(&b) } else { x.matmul(&op_t).sub(&b) };
                // Triangular solves are backward stable componentwise.
                ok("op(T)x − b", nrm(&res), tol * (nrm(&tri) * nrm(&x) + nrm(&b)) * dim + floor)?;
            }
            LinalgOp::Det(_) | LinalgOp::Slogdet(_) | LinalgOp::Adjugate(_) => {
                let (want, hadamard) = det_and_bound(&a);
                let n = a.rows as i64;
                match l {
                    LinalgOp::Det(_) => {
                        let d = o(0).ok_or("no det")?.data[0];
                        ok("det", (d - want).norm(), tol * hadamard + floor)?;
                    }
                    LinalgOp::Slogdet(_) => {
                        let sign = o(0).ok_or("no sign")?.data[0];
                        let log = match outs.get(1).and_then(|o| o.as_ref()).map(|o| &o.data) {
                            Some(OutData::Float(d)) => d[0].re,
                            _ => return Err("no logabsdet".into()),
                        };
                        let got = if log == f64::NEG_INFINITY {
                            C::new(0.0, 0.0)
                        } else {
                            sign * (log - (n * i64::from(ea)) as f64 * core::f64::consts::LN_2).exp()
                        };
                        // exp of a log of size L is accurate to about L·ε.
                        let bound = tol * hadamard * (1.0 + log.abs()) + floor;
                        ok("sign·exp(logabsdet)", (got - want).norm(), bound)?;
                    }
                    _ => {
                        let adj = o(0).ok_or("no adj")?;
                        let eye =
                            Dense::from_fn(
                                a.rows,
                                a.rows,
                                |i, j| if i == j { want } else { C::new(0.0, 0.0) },
                            );
                        let bound = tol * (nrm(&a) * nrm(&adj) + hadamard * dim) + floor;
                        ok("A adj(A) − det(A) I", nrm(&a.matmul(&adj).sub(&eye)), bound)?;
                    }
                }
            }
            LinalgOp::Pinv(_) => {
                let x = o(0).ok_or("no pinv")?;
                let trunc = a.rows.min(a.cols) as f64 * dim * eps;
                ok("AXA − A", nrm(&a.matmul(&x).matmul(&a).sub(&a)), (tol + trunc) * nrm(&a) * dim + floor)?;
            }
            LinalgOp::Lstsq(_) => {
                let (x, b) = (o(0).ok_or("no x")?, b.ok_or("no b")?);
                let r = a.matmul(&x).sub(&b);
                let trunc = dim * eps * dim;
                let bound = (tol + trunc) * nrm(&a) * (nrm(&a) * nrm(&x) + nrm(&b)) * dim + floor * nrm(&a);
                ok("Aᴴ(Ax − b)", nrm(&a.adjoint().matmul(&r)), bound)?;
            }
            LinalgOp::Polar(_) => {
                let w = o(0).ok_or("no w")?;
                let (wide, tall) = (w.adjoint(), w.clone());
                let q = if a.rows >= a.cols { tall } else { wide };
                ok("WᴴW − I", orth(&q), tol)?;
                let p = if a.rows >= a.cols { w.adjoint().matmul(&a) } else { a.matmul(&w.adjoint()) };
                ok("P − Pᴴ", nrm(&p.sub(&p.adjoint())), tol * nrm(&a) * dim + floor)?;
            }
            LinalgOp::LowRankApprox(_) => {
                let ap = o(0).ok_or("no a_p")?;
                ok("‖A_p‖ − ‖A‖", (nrm(&ap) - nrm(&a)).max(0.0), tol * nrm(&a) + floor)?;
            }
            _ => {}
        },
        Target::Composite(c) => match *c {
            Composite::Norm(kind) => {
                let got = o(0).ok_or("no norm")?.data[0].re;
                let want = match kind {
                    Norm::Fro | Norm::Vector(2.0) => Some(nrm(&a)),
                    Norm::One => Some(column_sums(&a).into_iter().fold(0.0, f64::max)),
                    Norm::Inf => Some(column_sums(&a.adjoint()).into_iter().fold(0.0, f64::max)),
                    Norm::Vector(1.0) => Some(a.data.iter().map(|x| x.norm()).sum()),
                    Norm::Vector(p) if p == f64::INFINITY => Some(a.max_abs()),
                    _ => None,
                };
                if let Some(want) = want {
                    ok("norm", (got - want).abs(), tol * want + floor)?;
                }
            }
            Composite::Inv(_) => {
                let x = o(0).ok_or("no inverse")?;
                let eye = Dense::<C>::eye(a.rows, a.rows);
                ok("AX − I", nrm(&a.matmul(&x).sub(&eye)), tol * nrm(&a) * nrm(&x) + floor * nrm(&a))?;
            }
            Composite::Solve(_) => {
                let (x, b) = (o(0).ok_or("no x")?, b.ok_or("no b")?);
                ok("Ax − b", nrm(&a.matmul(&x).sub(&b)), tol * (nrm(&a) * nrm(&x) + nrm(&b)) + floor)?;
            }
            _ => {}
        },
        Target::Op(_) => {}
    }
    Ok(())
}

fn ints_arg<T>(arg: &Arg<T>) -> Vec<i64> {
    match &arg.data {
        ArgData::Int(d) => d.clone(),
        ArgData::Float(_) => Vec::new(),
    }
}

fn descending(s: &Dense<C>) -> Result<(), String> {
    if s.data.iter().any(|x| x.re < 0.0 || x.im != 0.0) || s.data.windows(2).any(|p| p[0].re < p[1].re) {
        Err(format!("singular values not real, non-negative, descending: {:?}", s.data))
    } else {
        Ok(())
    }
}

fn upper_real_diagonal(r: &Dense<C>, tol: f64) -> Result<(), String> {
    for j in 0..r.cols {
        for i in j + 1..r.rows {
            if r[(i, j)] != C::new(0.0, 0.0) {
                return Err("R is not upper triangular".into());
            }
        }
        if j < r.rows && (r[(j, j)].re < 0.0 || r[(j, j)].im.abs() > tol * r[(j, j)].re.max(1.0)) {
            return Err(format!("diag(R) not real and ≥ 0: {}", r[(j, j)]));
        }
    }
    Ok(())
}

/// The Hermitian matrix of `a`'s lower triangle (its diagonal's real part).
fn hermitian_lower(a: &Dense<C>) -> Dense<C> {
    Dense::from_fn(a.rows, a.cols, |i, j| match i.cmp(&j) {
        core::cmp::Ordering::Greater => a[(i, j)],
        core::cmp::Ordering::Equal => C::new(a[(i, i)].re, 0.0),
        core::cmp::Ordering::Less => a[(j, i)].conj(),
    })
}

/// L U of a packed factor (unit-lower L below the diagonal, U on and above).
fn unpack_lu(lu: &Dense<C>) -> Dense<C> {
    let n = lu.rows;
    let lo = Dense::from_fn(n, n, |i, j| match i.cmp(&j) {
        core::cmp::Ordering::Greater => lu[(i, j)],
        core::cmp::Ordering::Equal => C::new(1.0, 0.0),
        core::cmp::Ordering::Less => C::new(0.0, 0.0),
    });
    let up = Dense::from_fn(n, lu.cols, |i, j| if i <= j { lu[(i, j)] } else { C::new(0.0, 0.0) });
    lo.matmul(&up)
}

/// |L| |U| of a packed factor (the scale of LU's backward error).
fn lu_abs_product(lu: &Dense<C>) -> Dense<C> {
    let n = lu.rows;
    let lo = Dense::from_fn(n, n, |i, j| {
        C::new(
            if i > j {
                lu[(i, j)].norm()
            } else if i == j {
                1.0
            } else {
                0.0
            },
            0.0,
        )
    });
    let up = Dense::from_fn(n, lu.cols, |i, j| C::new(if i <= j { lu[(i, j)].norm() } else { 0.0 }, 0.0));
    lo.matmul(&up)
}

fn apply_op(a: &Dense<C>, how: MatOp) -> Dense<C> {
    match how {
        MatOp::Identity => a.clone(),
        MatOp::Transpose => a.transpose(),
        MatOp::Adjoint => a.adjoint(),
    }
}

fn column_sums(a: &Dense<C>) -> Vec<f64> {
    (0..a.cols).map(|j| (0..a.rows).map(|i| a[(i, j)].norm()).sum()).collect()
}

/// det(a) by partial-pivot elimination in complex f64, and Hadamard's
/// bound Π‖a_j‖ (1 for 0×0).
fn det_and_bound(a: &Dense<C>) -> (C, f64) {
    let n = a.rows;
    let mut m = a.clone();
    let mut det = C::new(1.0, 0.0);
    for k in 0..n {
        let p = (k..n).max_by(|&x, &y| m[(x, k)].norm().total_cmp(&m[(y, k)].norm())).unwrap_or(k);
        if m[(p, k)].norm() == 0.0 {
            det = C::new(0.0, 0.0);
            break;
        }
        if p != k {
            for j in 0..n {
                let t = m[(k, j)];
                m[(k, j)] = m[(p, j)];
                m[(p, j)] = t;
            }
            det = -det;
        }
        det *= m[(k, k)];
        for i in k + 1..n {
            let f = m[(i, k)] / m[(k, k)];
            for j in k..n {
                let t = m[(k, j)];
                m[(i, j)] -= f * t;
            }
        }
    }
    let bound = (0..n).map(|j| (0..n).map(|i| a[(i, j)].norm_sqr()).sum::<f64>().sqrt()).product();
    (det, bound)
}
