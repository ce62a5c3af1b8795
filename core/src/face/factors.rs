//! The factors the decomposition methods return, one struct per
//! decomposition, with fields named as the op's outputs (the op table,
//! `op/table.rs`, builds them by those names).

use super::{single, take, Face};
use crate::error::{Error, Result};
use crate::op::{HouseholderQrAppend, HouseholderQrApply, HouseholderQrQ, HouseholderQrR, MatOp};
use crate::prim::{PrimOp, Reshape, Slice};
use crate::shape::MAX_RANK;

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

/// A truncated thin SVD (see [`SvdTruncated`](crate::op::SvdTruncated)): the thin factors with the
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
        let u = slice(face, &self.u, [m, p])?;
        let vh = slice(face, &self.vh, [p, n])?;
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
        let s = reshape(face, &self.s, &column[..(dims + 1).min(MAX_RANK)])?;
        let s = slice(face, &s, [p, 1])?;
        let s = reshape(face, &s, &cut[..dims])?;
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
        let mut outs = face.apply(HouseholderQrAppend.into(), &[&self.h, &self.tau, b])?;
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
        single(face, HouseholderQrQ.into(), &[&self.h, &self.tau])
    }

    /// R (diag(R) ≥ 0 convention).
    ///
    /// # Errors
    /// The face's.
    pub fn r<F: Face<Tensor = T> + ?Sized>(&self, face: &mut F) -> Result<T> {
        single(face, HouseholderQrR.into(), &[&self.h])
    }

    /// `op(Q_h) b` with the reflectors' own Q (see the op docs).
    ///
    /// # Errors
    /// Shape errors and the face's.
    pub fn apply<F: Face<Tensor = T> + ?Sized>(&self, face: &mut F, how: MatOp, b: &T) -> Result<T> {
        single(face, HouseholderQrApply(how).into(), &[&self.h, &self.tau, b])
    }
}

/// The leading `size` block of each matrix of `x`.
fn slice<F: Face + ?Sized>(face: &mut F, x: &F::Tensor, size: [usize; 2]) -> Result<F::Tensor> {
    single(face, PrimOp::Slice(Slice { start: [0, 0], size }).into(), &[x])
}

/// `x` under new dims.
fn reshape<F: Face + ?Sized>(face: &mut F, x: &F::Tensor, dims: &[usize]) -> Result<F::Tensor> {
    let dims = heapless::Vec::from_slice(dims).map_err(|_| Error::TooManyDims {
        op: "reshape",
        arg: "dims",
        rank: dims.len(),
    })?;
    single(face, PrimOp::Reshape(Reshape { dims }).into(), &[x])
}
