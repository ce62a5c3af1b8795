//! [`Linalg`]: the user-facing methods, implemented once for every [`Face`].

use super::{composite, take, Face};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::{
    check, Adjugate, Cholesky, Det, Eig, EigVals, Eigh, EighOptions, EighVals, FullPivLu, FullPivLuSolve,
    HouseholderQrAppend, HouseholderQrApply, HouseholderQrFactor, HouseholderQrQ, HouseholderQrR, LinalgOp,
    LowRankApprox, Lstsq, LstsqOptions, Lu, LuFactorSolve, MatOp, Pinv, PinvOptions, Polar, Qr, QrOptions,
    RankRevealingQr, RankRevealingQrOptions, Slogdet, Svd, SvdFull, SvdOptions, SvdTruncated, SvdVals,
    SvdVectors, TriangularSolve, TriangularSolveOptions, Truncation,
};
use crate::prim::{
    Adjoint, Binary, BinaryOp, DiagEmbed, DiagPart, Eye, Fill, Matmul, PairInv, PivotPhase, PrimOp, RankMask,
    Reduce, ReduceOp, Reshape, Scale, ScaleCols, ScaleRows, Slice, Unary, UnaryOp,
};
use crate::provider::Op;
use crate::shape::MAX_RANK;
use crate::tensor::TensorMeta;

/// Thin or full SVD factors: `a = u diag(s) vh`.
#[derive(Clone, Debug)]
pub struct SvdFactors<T> {
    /// Left singular vectors.
    pub u: T,
    /// Singular values (real, descending).
    pub s: T,
    /// Vᴴ.
    pub vh: T,
}

/// A truncated thin SVD (see [`SvdTruncated`]): the thin factors with the
/// triplets beyond `rank` zeroed, so `u diag(s) vh` is the rank-p
/// approximation. Shapes are the thin SVD's (u m×k, s k, vh k×n,
/// k = min(m, n)) on every face.
#[derive(Clone, Debug)]
pub struct SvdTruncatedFactors<T> {
    /// Left singular vectors; columns from `rank` on are zero.
    pub u: T,
    /// Singular values (real, descending); entries from `rank` on are zero.
    pub s: T,
    /// Vᴴ; rows from `rank` on are zero.
    pub vh: T,
    /// The number p of kept triplets (i64 scalar per batch item).
    pub rank: T,
}

impl<T: Clone> SvdTruncatedFactors<T> {
    /// The factors cut to their first `p` triplets (real slicing: u m×p,
    /// s p, vh p×n; `rank` unchanged), for a `p` known where the call is
    /// made — on a concrete face, read from `rank` (the direct and eager
    /// faces' `svd_truncated_sliced` do that). Slicing is linear, so the
    /// derivative is the masked one's. A batch item whose rank is below `p`
    /// keeps its zeroed triplets up to `p`.
    ///
    /// # Errors
    /// `p` > min(m, n) (a slice error); the face's.
    pub fn sliced<F: Face<Tensor = T> + ?Sized>(
        &self,
        face: &mut F,
        p: usize,
    ) -> Result<SvdTruncatedFactors<T>> {
        let u_meta = face.meta(&self.u);
        let vh_meta = face.meta(&self.vh);
        let dim = |dims: &[usize], i: usize| dims.get(i).copied().unwrap_or(0);
        let (m, n) = (dim(u_meta.shape.dims(), 0), dim(vh_meta.shape.dims(), 1));
        let u = face.slice(&self.u, [0, 0], [m, p])?;
        let vh = face.slice(&self.vh, [0, 0], [p, n])?;
        // s ([k, batch…]) as one k×1 matrix per item, sliced, and back.
        let s_meta = face.meta(&self.s);
        let s_dims = s_meta.shape.dims();
        let dims = s_dims.len();
        let (mut column, mut cut) = ([1; MAX_RANK], [p; MAX_RANK]);
        if let (Some(&k), Some(batch)) = (s_dims.first(), s_dims.get(1..)) {
            if dims < MAX_RANK {
                column[0] = k;
                column[2..=dims].copy_from_slice(batch);
                cut[1..dims].copy_from_slice(batch);
            }
        }
        let s = face.reshape(&self.s, &column[..(dims + 1).min(MAX_RANK)])?;
        let s = face.slice(&s, [0, 0], [p, 1])?;
        let s = face.reshape(&s, &cut[..dims])?;
        Ok(SvdTruncatedFactors { u, s, vh, rank: self.rank.clone() })
    }
}

/// QR factors: `a = q r`, diag(r) real ≥ 0.
#[derive(Clone, Debug)]
pub struct QrFactors<T> {
    /// Orthonormal columns.
    pub q: T,
    /// Upper triangular (trapezoidal).
    pub r: T,
}

/// Column-pivoted QR: `a[:, perm] = q r`, and the numerical rank.
#[derive(Clone, Debug)]
pub struct RankRevealingQrFactors<T> {
    /// Orthonormal columns.
    pub q: T,
    /// Upper triangular with non-increasing |diag|.
    pub r: T,
    /// Column permutation (i64).
    pub perm: T,
    /// Numerical rank (i64 scalar per batch item).
    pub rank: T,
}

/// Hermitian eigendecomposition: `a = v diag(w) vᴴ`.
#[derive(Clone, Debug)]
pub struct EighFactors<T> {
    /// Eigenvalues (real, ascending).
    pub w: T,
    /// Eigenvectors.
    pub v: T,
}

/// General eigendecomposition: `a v = v diag(w)` (complex).
#[derive(Clone, Debug)]
pub struct EigFactors<T> {
    /// Eigenvalues.
    pub w: T,
    /// Unit-norm eigenvectors.
    pub v: T,
}

/// Partial-pivot LU: `a[perm, :] = l u`.
#[derive(Clone, Debug)]
pub struct LuFactors<T> {
    /// Row permutation (i64).
    pub perm: T,
    /// Unit lower triangular.
    pub l: T,
    /// Upper triangular.
    pub u: T,
}

/// Full-pivot LU: `a[row_perm, col_perm] = l u`.
#[derive(Clone, Debug)]
pub struct FullPivLuFactors<T> {
    /// Row permutation (i64).
    pub row_perm: T,
    /// Column permutation (i64).
    pub col_perm: T,
    /// Unit lower triangular.
    pub l: T,
    /// Upper triangular.
    pub u: T,
}

/// An incremental Householder QR: compact reflectors `h` and scalars `tau`.
/// [`append_columns`](Self::append_columns) extends the factorization to new
/// columns without refactoring or forming Q.
#[derive(Clone, Debug)]
pub struct HouseholderQr<T> {
    /// R on and above the diagonal, reflectors below.
    pub h: T,
    /// Reflector scalars.
    pub tau: T,
}

impl<T: Clone> HouseholderQr<T> {
    /// The factorization of `[a b]` from that of `a`.
    ///
    /// # Errors
    /// Shape errors naming `householder_qr_append`, and the face's.
    pub fn append_columns<F: Face<Tensor = T> + ?Sized>(
        &self,
        face: &mut F,
        b: &T,
    ) -> Result<HouseholderQr<T>> {
        let op = LinalgOp::HouseholderQrAppend(HouseholderQrAppend);
        let mut outs = face.apply(Op::Linalg(op), &[&self.h, &self.tau, b])?;
        Ok(HouseholderQr {
            h: take(&mut outs, "householder_qr_append", 0, "h")?,
            tau: take(&mut outs, "householder_qr_append", 1, "tau")?,
        })
    }

    /// The thin Q (diag(R) ≥ 0 convention).
    ///
    /// # Errors
    /// The face's.
    pub fn q<F: Face<Tensor = T> + ?Sized>(&self, face: &mut F) -> Result<T> {
        face.single(Op::Linalg(LinalgOp::HouseholderQrQ(HouseholderQrQ)), &[&self.h, &self.tau])
    }

    /// R (diag(R) ≥ 0 convention).
    ///
    /// # Errors
    /// The face's.
    pub fn r<F: Face<Tensor = T> + ?Sized>(&self, face: &mut F) -> Result<T> {
        face.single(Op::Linalg(LinalgOp::HouseholderQrR(HouseholderQrR)), &[&self.h])
    }

    /// `op(Q_h) b` with the reflectors' own Q (see the op docs).
    ///
    /// # Errors
    /// Shape errors and the face's.
    pub fn apply<F: Face<Tensor = T> + ?Sized>(&self, face: &mut F, how: MatOp, b: &T) -> Result<T> {
        face.single(
            Op::Linalg(LinalgOp::HouseholderQrApply(HouseholderQrApply(how))),
            &[&self.h, &self.tau, b],
        )
    }
}

/// Every linear-algebra method and array helper, for every face.
///
/// Decompositions are one op each; the composites are built from ops and
/// primitives, so they need no derivative rules of their own.
pub trait Linalg: Face {
    /// Runs an op with exactly one output and returns it.
    ///
    /// # Errors
    /// The op's and the face's.
    fn single(&mut self, op: Op, inputs: &[&Self::Tensor]) -> Result<Self::Tensor> {
        let name = op.name();
        let mut outs = self.apply(op, inputs)?;
        take(&mut outs, name, 0, "output")
    }

    /// Thin SVD `a = u diag(s) vh` (Vᴴ, not V).
    ///
    /// # Errors
    /// Shape errors naming `svd`; non-finite input; non-convergence.
    fn svd(&mut self, a: &Self::Tensor) -> Result<SvdFactors<Self::Tensor>> {
        self.svd_with_options(a, SvdOptions::default())
    }

    /// Thin SVD with options. `options.vectors` is ignored here (both factors
    /// are returned); use [`Linalg::svd_vals`] for values only.
    ///
    /// # Errors
    /// As [`Linalg::svd`], plus invalid options.
    fn svd_with_options(
        &mut self,
        a: &Self::Tensor,
        options: SvdOptions,
    ) -> Result<SvdFactors<Self::Tensor>> {
        let op = LinalgOp::Svd(Svd(options.vectors(SvdVectors::Both)));
        let mut outs = self.apply(Op::Linalg(op), &[a])?;
        Ok(SvdFactors {
            u: take(&mut outs, "svd", 0, "u")?,
            s: take(&mut outs, "svd", 1, "s")?,
            vh: take(&mut outs, "svd", 2, "vh")?,
        })
    }

    /// Full SVD: `u` m×m, `vh` n×n.
    ///
    /// # Errors
    /// As [`Linalg::svd`].
    fn svd_full(&mut self, a: &Self::Tensor) -> Result<SvdFactors<Self::Tensor>> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::SvdFull(SvdFull::default())), &[a])?;
        Ok(SvdFactors {
            u: take(&mut outs, "svd_full", 0, "u")?,
            s: take(&mut outs, "svd_full", 1, "s")?,
            vh: take(&mut outs, "svd_full", 2, "vh")?,
        })
    }

    /// Singular values only (descending).
    ///
    /// # Errors
    /// As [`Linalg::svd`].
    fn svd_vals(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::SvdVals(SvdVals::default())), &[a])
    }

    /// Truncated thin SVD, the rank p chosen per batch item from the data
    /// at run time ([`Truncation::Count`]: min(p, k); [`Truncation::Tolerance`]:
    /// the s_i > max(atol, rtol·s₀)).
    ///
    /// Every face returns the same masked, static-shape form (see
    /// [`SvdTruncated`]): u m×k, s k, vh k×n with the triplets from `rank`
    /// on zeroed, and `rank` as an i64 tensor. The eager and traced faces
    /// record this one op, so values and gradients agree bit for bit. For
    /// the p-column factors themselves (real slicing), the direct and eager
    /// faces have `svd_truncated_sliced`, which reads `rank` and calls
    /// [`SvdTruncatedFactors::sliced`]; a traced program cannot (p is known
    /// only at run time). Differentiable (the thin rule with zero
    /// cotangents on the discarded triplets) where the rank is locally
    /// constant.
    ///
    /// # Errors
    /// Shape errors naming `svd_truncated`; an invalid truncation (a
    /// negative or non-finite threshold, a count of 0); non-finite input;
    /// non-convergence.
    fn svd_truncated(
        &mut self,
        a: &Self::Tensor,
        keep: Truncation,
    ) -> Result<SvdTruncatedFactors<Self::Tensor>> {
        let op = LinalgOp::SvdTruncated(SvdTruncated(keep));
        let mut outs = self.apply(Op::Linalg(op), &[a])?;
        Ok(SvdTruncatedFactors {
            u: take(&mut outs, "svd_truncated", 0, "u")?,
            s: take(&mut outs, "svd_truncated", 1, "s")?,
            vh: take(&mut outs, "svd_truncated", 2, "vh")?,
            rank: take(&mut outs, "svd_truncated", 3, "rank")?,
        })
    }

    /// Thin unpivoted QR.
    ///
    /// # Errors
    /// Shape errors naming `qr`; non-finite input.
    fn qr(&mut self, a: &Self::Tensor) -> Result<QrFactors<Self::Tensor>> {
        self.qr_with_options(a, QrOptions::default())
    }

    /// QR with options (thin or complete Q).
    ///
    /// # Errors
    /// As [`Linalg::qr`].
    fn qr_with_options(&mut self, a: &Self::Tensor, options: QrOptions) -> Result<QrFactors<Self::Tensor>> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::Qr(Qr(options))), &[a])?;
        Ok(QrFactors { q: take(&mut outs, "qr", 0, "q")?, r: take(&mut outs, "qr", 1, "r")? })
    }

    /// Compact Householder QR, extensible with
    /// [`HouseholderQr::append_columns`].
    ///
    /// # Errors
    /// Shape errors; non-finite input.
    fn householder_qr(&mut self, a: &Self::Tensor) -> Result<HouseholderQr<Self::Tensor>> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::HouseholderQrFactor(HouseholderQrFactor)), &[a])?;
        Ok(HouseholderQr {
            h: take(&mut outs, "householder_qr_factor", 0, "h")?,
            tau: take(&mut outs, "householder_qr_factor", 1, "tau")?,
        })
    }

    /// Column-pivoted QR with the numerical rank (not differentiable).
    ///
    /// # Errors
    /// Shape errors; invalid options; non-finite input.
    fn rank_revealing_qr(
        &mut self,
        a: &Self::Tensor,
        options: RankRevealingQrOptions,
    ) -> Result<RankRevealingQrFactors<Self::Tensor>> {
        let name = "rank_revealing_qr";
        let mut outs = self.apply(Op::Linalg(LinalgOp::RankRevealingQr(RankRevealingQr(options))), &[a])?;
        Ok(RankRevealingQrFactors {
            q: take(&mut outs, name, 0, "q")?,
            r: take(&mut outs, name, 1, "r")?,
            perm: take(&mut outs, name, 2, "perm")?,
            rank: take(&mut outs, name, 3, "rank")?,
        })
    }

    /// Hermitian eigendecomposition (reads the lower triangle).
    ///
    /// # Errors
    /// Non-square input; non-finite input; non-convergence.
    fn eigh(&mut self, a: &Self::Tensor) -> Result<EighFactors<Self::Tensor>> {
        self.eigh_with_options(a, EighOptions::default())
    }

    /// Hermitian eigendecomposition with options.
    ///
    /// # Errors
    /// As [`Linalg::eigh`].
    fn eigh_with_options(
        &mut self,
        a: &Self::Tensor,
        options: EighOptions,
    ) -> Result<EighFactors<Self::Tensor>> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::Eigh(Eigh(options))), &[a])?;
        Ok(EighFactors { w: take(&mut outs, "eigh", 0, "w")?, v: take(&mut outs, "eigh", 1, "v")? })
    }

    /// Hermitian eigenvalues only (ascending).
    ///
    /// # Errors
    /// As [`Linalg::eigh`].
    fn eigvalsh(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::EighVals(EighVals::default())), &[a])
    }

    /// General eigendecomposition (complex outputs).
    ///
    /// # Errors
    /// Non-square input; non-finite input.
    fn eig(&mut self, a: &Self::Tensor) -> Result<EigFactors<Self::Tensor>> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::Eig(Eig)), &[a])?;
        Ok(EigFactors { w: take(&mut outs, "eig", 0, "w")?, v: take(&mut outs, "eig", 1, "v")? })
    }

    /// General eigenvalues only (complex).
    ///
    /// # Errors
    /// As [`Linalg::eig`].
    fn eigvals(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::EigVals(EigVals)), &[a])
    }

    /// Cholesky factor `l` with `a = l lᴴ` (reads the lower triangle).
    ///
    /// # Errors
    /// Non-square input; not positive definite.
    fn cholesky(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::Cholesky(Cholesky)), &[a])
    }

    /// Partial-pivot LU (any shape; singular matrices factor without error).
    ///
    /// # Errors
    /// Shape errors; non-finite input.
    fn lu(&mut self, a: &Self::Tensor) -> Result<LuFactors<Self::Tensor>> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::Lu(Lu)), &[a])?;
        Ok(LuFactors {
            perm: take(&mut outs, "lu", 0, "perm")?,
            l: take(&mut outs, "lu", 1, "l")?,
            u: take(&mut outs, "lu", 2, "u")?,
        })
    }

    /// Full-pivot LU (singular and rectangular matrices factor exactly).
    ///
    /// # Errors
    /// Shape errors; non-finite input.
    fn full_piv_lu(&mut self, a: &Self::Tensor) -> Result<FullPivLuFactors<Self::Tensor>> {
        let name = "full_piv_lu";
        let mut outs = self.apply(Op::Linalg(LinalgOp::FullPivLu(FullPivLu)), &[a])?;
        Ok(FullPivLuFactors {
            row_perm: take(&mut outs, name, 0, "row_perm")?,
            col_perm: take(&mut outs, name, 1, "col_perm")?,
            l: take(&mut outs, name, 2, "l")?,
            u: take(&mut outs, name, 3, "u")?,
        })
    }

    /// `x` with `a x = b` (one fused op: its derivative reuses the factors).
    ///
    /// # Errors
    /// Non-square or empty-rectangular `a`, mismatched `b`; singular `a`.
    fn solve(&mut self, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::LuFactorSolve(LuFactorSolve)), &[a, b])?;
        take(&mut outs, "lu_factor_solve", 0, "x")
    }

    /// `x` with `a x = b` through a full-pivot LU.
    ///
    /// # Errors
    /// As [`Linalg::solve`].
    fn full_piv_lu_solve(&mut self, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::FullPivLuSolve(FullPivLuSolve)), &[a, b])?;
        take(&mut outs, "full_piv_lu_solve", 0, "x")
    }

    /// Minimum-norm least squares `x = a⁺ b` (rank-deficient and wide
    /// systems too).
    ///
    /// # Errors
    /// Shape errors; non-finite input.
    fn lstsq(&mut self, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        self.lstsq_with_options(a, b, LstsqOptions::default()).map(|(x, _)| x)
    }

    /// Least squares with thresholds; returns `(x, rank)`.
    ///
    /// # Errors
    /// As [`Linalg::lstsq`], plus invalid options.
    fn lstsq_with_options(
        &mut self,
        a: &Self::Tensor,
        b: &Self::Tensor,
        options: LstsqOptions,
    ) -> Result<(Self::Tensor, Self::Tensor)> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::Lstsq(Lstsq(options))), &[a, b])?;
        Ok((take(&mut outs, "lstsq", 0, "x")?, take(&mut outs, "lstsq", 1, "rank")?))
    }

    /// Triangular solve with options (side, triangle, unit diagonal, op).
    ///
    /// # Errors
    /// Shape errors.
    fn triangular_solve(
        &mut self,
        a: &Self::Tensor,
        b: &Self::Tensor,
        options: TriangularSolveOptions,
    ) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::TriangularSolve(TriangularSolve(options))), &[a, b])
    }

    /// Determinant (square only; 1 for 0×0; singular → tiny value, no error).
    ///
    /// # Errors
    /// Non-square input; non-finite input.
    fn det(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::Det(Det)), &[a])
    }

    /// The adjugate `adj(a)` (`a · adj = det(a) · I`; finite at singular
    /// `a`, zero at corank ≥ 2). The derivative of [`Linalg::det`].
    ///
    /// # Errors
    /// Non-square input; non-finite input.
    fn adjugate(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::Adjugate(Adjugate)), &[a])
    }

    /// `(sign, log|det|)`.
    ///
    /// # Errors
    /// As [`Linalg::det`].
    fn slogdet(&mut self, a: &Self::Tensor) -> Result<(Self::Tensor, Self::Tensor)> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::Slogdet(Slogdet)), &[a])?;
        Ok((take(&mut outs, "slogdet", 0, "sign")?, take(&mut outs, "slogdet", 1, "logabsdet")?))
    }

    /// Inverse, as the fused solve against the identity.
    ///
    /// # Errors
    /// ``inv: argument `a` must be square``; singular `a`.
    fn inv(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        let meta = self.meta(a);
        let m = check::square("inv", "a", &meta)?;
        let eye = self.eye(meta.dtype, m.rows, m.batch)?;
        self.solve(a, &eye)
    }

    /// Moore–Penrose pseudo-inverse (default thresholds).
    ///
    /// # Errors
    /// Shape errors; non-finite input.
    fn pinv(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::Pinv(Pinv(PinvOptions::default()))), &[a])
    }

    /// Pseudo-inverse treating s ≤ rtol·s₀ as zero.
    ///
    /// # Errors
    /// As [`Linalg::pinv`], plus an invalid `rtol`.
    fn pinv_with_rtol(&mut self, a: &Self::Tensor, rtol: f64) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::Pinv(Pinv(PinvOptions::default().rtol(rtol)))), &[a])
    }

    /// Best approximation of rank p (chosen per item from the data); returns
    /// `(a_p, rank)`.
    ///
    /// # Errors
    /// Shape errors; invalid truncation.
    fn low_rank_approx(
        &mut self,
        a: &Self::Tensor,
        keep: Truncation,
    ) -> Result<(Self::Tensor, Self::Tensor)> {
        let mut outs = self.apply(Op::Linalg(LinalgOp::LowRankApprox(LowRankApprox(keep))), &[a])?;
        Ok((take(&mut outs, "low_rank_approx", 0, "a_p")?, take(&mut outs, "low_rank_approx", 1, "rank")?))
    }

    /// Polar factor `u vᴴ`.
    ///
    /// # Errors
    /// Shape errors; non-finite input.
    fn polar(&mut self, a: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Linalg(LinalgOp::Polar(Polar)), &[a])
    }

    /// Matrix or vector norm (see [`Norm`](super::Norm)).
    ///
    /// # Errors
    /// Shape errors naming `norm`.
    fn norm(&mut self, a: &Self::Tensor, kind: super::Norm) -> Result<Self::Tensor> {
        composite::norm(self, a, kind)
    }

    /// Condition number in the given matrix norm (`Two`: s_max/s_min).
    ///
    /// # Errors
    /// Non-square input (except for `Two`/`NegTwo`); singular input for the
    /// norms that need the inverse.
    fn cond(&mut self, a: &Self::Tensor, kind: super::Norm) -> Result<Self::Tensor> {
        composite::cond(self, a, kind)
    }

    /// `a^k` for square `a` (negative k through the inverse).
    ///
    /// # Errors
    /// Non-square input; singular input for k < 0.
    fn matrix_power(&mut self, a: &Self::Tensor, k: i64) -> Result<Self::Tensor> {
        composite::matrix_power(self, a, k)
    }

    /// The product of a chain of matrices in the cheapest order.
    ///
    /// # Errors
    /// An empty chain; mismatched inner dims.
    fn multi_dot(&mut self, chain: &[&Self::Tensor]) -> Result<Self::Tensor> {
        composite::multi_dot(self, chain)
    }

    /// `Σᵢ conj(xᵢ) yᵢ` over the first dim of vectors `[n, batch…]`.
    ///
    /// # Errors
    /// Mismatched shapes or dtypes.
    fn vecdot(&mut self, x: &Self::Tensor, y: &Self::Tensor) -> Result<Self::Tensor> {
        composite::vecdot(self, x, y)
    }

    /// Vandermonde matrix of `x` (`[len, batch…]`) with `n` columns.
    ///
    /// # Errors
    /// A non-vector `x`.
    fn vander(&mut self, x: &Self::Tensor, n: usize, order: super::VanderOrder) -> Result<Self::Tensor> {
        composite::vander(self, x, n, order)
    }

    /// Inverse of a tensor seen as a matrix whose rows are its first `ind`
    /// dims (column-major flattening); the result has dims
    /// `[dims[ind..]…, dims[..ind]…]`.
    ///
    /// # Errors
    /// Row and column products that differ; singular input.
    fn tensorinv(&mut self, a: &Self::Tensor, ind: usize) -> Result<Self::Tensor> {
        composite::tensorinv(self, a, ind)
    }

    /// `x` with `tensordot(a, x) = b`: `a` has dims `[b.dims…, x.dims…]`.
    ///
    /// # Errors
    /// Shapes that do not split that way; singular input.
    fn tensorsolve(&mut self, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        composite::tensorsolve(self, a, b)
    }

    // ---- array helpers (one primitive each) ----

    /// `op_a(a) · op_b(b)`, batched.
    ///
    /// # Errors
    /// Mismatched dims.
    fn matmul_with(
        &mut self,
        a: &Self::Tensor,
        op_a: MatOp,
        b: &Self::Tensor,
        op_b: MatOp,
    ) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Matmul(Matmul::new(op_a, op_b))), &[a, b])
    }

    /// `a · b`, batched.
    ///
    /// # Errors
    /// Mismatched dims.
    fn matmul(&mut self, a: &Self::Tensor, b: &Self::Tensor) -> Result<Self::Tensor> {
        self.matmul_with(a, MatOp::Identity, b, MatOp::Identity)
    }

    /// An elementwise map.
    ///
    /// # Errors
    /// Dtype errors (e.g. `exp` of a complex tensor).
    fn unary(&mut self, op: UnaryOp, x: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Unary(Unary(op))), &[x])
    }

    /// Elementwise arithmetic on equal shapes.
    ///
    /// # Errors
    /// Mismatched shapes or dtypes.
    fn binary(&mut self, op: BinaryOp, x: &Self::Tensor, y: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Binary(Binary(op))), &[x, y])
    }

    /// `factor · x`.
    ///
    /// # Errors
    /// A non-finite factor.
    fn scale(&mut self, x: &Self::Tensor, factor: f64) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Scale(Scale(factor))), &[x])
    }

    /// `op(x)` of each matrix (transpose or adjoint).
    ///
    /// # Errors
    /// A non-matrix `x`.
    fn adjoint(&mut self, x: &Self::Tensor, how: MatOp) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Adjoint(Adjoint(how))), &[x])
    }

    /// Sum, max or min over the first `core_rank` dims.
    ///
    /// # Errors
    /// Too few dims; max/min of complex values.
    fn reduce(&mut self, how: ReduceOp, x: &Self::Tensor, core_rank: usize) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Reduce(Reduce { op: how, core_rank })), &[x])
    }

    /// The same elements under new dims.
    ///
    /// # Errors
    /// A different element count; too many dims.
    fn reshape(&mut self, x: &Self::Tensor, dims: &[usize]) -> Result<Self::Tensor> {
        let dims = heapless::Vec::from_slice(dims).map_err(|_| crate::Error::TooManyDims {
            op: "reshape",
            arg: "dims",
            rank: dims.len(),
        })?;
        self.single(Op::Prim(PrimOp::Reshape(Reshape { dims })), &[x])
    }

    /// A block of each matrix.
    ///
    /// # Errors
    /// A block outside the matrix.
    fn slice(&mut self, x: &Self::Tensor, start: [usize; 2], size: [usize; 2]) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Slice(Slice { start, size })), &[x])
    }

    /// Main diagonals.
    ///
    /// # Errors
    /// A non-matrix `x`.
    fn diag_part(&mut self, x: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::DiagPart(DiagPart)), &[x])
    }

    /// Square matrices with diagonals `d`.
    ///
    /// # Errors
    /// A non-vector `d`.
    fn diag_embed(&mut self, d: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::DiagEmbed(DiagEmbed)), &[d])
    }

    /// Pairwise inverse gaps of a spectrum `x` (see [`PairInv`]).
    ///
    /// # Errors
    /// A non-vector or non-float `x`; an invalid regularization.
    fn pair_inv(&mut self, x: &Self::Tensor, how: PairInv) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::PairInv(how)), &[x])
    }

    /// The reciprocal of each column's pivot entry (see [`PivotPhase`]).
    ///
    /// # Errors
    /// A non-matrix or non-float `u`.
    fn pivot_phase(&mut self, u: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::PivotPhase(PivotPhase)), &[u])
    }

    /// The 0/1 vector `[k, batch…]` of `dtype` that is 1 at `i < rank` (see
    /// [`RankMask`]); `rank` is an i64 tensor `[batch…]`.
    ///
    /// # Errors
    /// A non-i64 `rank`, a non-float `dtype`; too many dims.
    fn rank_mask(&mut self, rank: &Self::Tensor, k: usize, dtype: DType) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::RankMask(RankMask { k, dtype })), &[rank])
    }

    /// `1` where `x ≠ 0`, `0` where `x = 0`, in `x`'s real dtype (see
    /// [`UnaryOp::NonzeroMask`]; no derivative rule).
    ///
    /// # Errors
    /// A non-float `x`.
    fn nonzero_mask(&mut self, x: &Self::Tensor) -> Result<Self::Tensor> {
        self.unary(UnaryOp::NonzeroMask, x)
    }

    /// `a · diag(v)`.
    ///
    /// # Errors
    /// Mismatched lengths or dtypes.
    fn scale_cols(&mut self, a: &Self::Tensor, v: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::ScaleCols(ScaleCols)), &[a, v])
    }

    /// `diag(v) · a`.
    ///
    /// # Errors
    /// Mismatched lengths or dtypes.
    fn scale_rows(&mut self, a: &Self::Tensor, v: &Self::Tensor) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::ScaleRows(ScaleRows)), &[a, v])
    }

    /// Identity matrices `[n, n, batch…]`.
    ///
    /// # Errors
    /// A non-float dtype; too many dims.
    fn eye(&mut self, dtype: DType, n: usize, batch: &[usize]) -> Result<Self::Tensor> {
        let batch = heapless::Vec::from_slice(batch).map_err(|_| crate::Error::TooManyDims {
            op: "eye",
            arg: "batch",
            rank: batch.len() + 2,
        })?;
        self.single(Op::Prim(PrimOp::Eye(Eye { dtype, n, batch })), &[])
    }

    /// A tensor of `meta`'s shape filled with `value`.
    ///
    /// # Errors
    /// A non-finite value or non-float dtype.
    fn fill(&mut self, meta: TensorMeta, value: f64) -> Result<Self::Tensor> {
        self.single(Op::Prim(PrimOp::Fill(Fill { meta, value })), &[])
    }
}

impl<F: Face + ?Sized> Linalg for F {}
