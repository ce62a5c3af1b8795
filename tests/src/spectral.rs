//! Spectral losses shared by the gauge tests (`tests/ad_gauge.rs`) and the
//! generated spectral suite (`tests/ad_spectral_suite.rs`): functions of an
//! SVD's or eigh's outputs, some differentiable at ties and zeros, some
//! not, and the assertion that a loss is reported as not differentiable.

use crate::ad::{eager_grad, traced_grad, Input, Loss};
use crate::losses::{pairing, total};
use lindiff_core::face::{Face, Norm};
use lindiff_core::op::Truncation;
use lindiff_core::prim::BinaryOp;
use lindiff_core::{Element, Error, Host, Linalg, MatOp, Ops, Provider, Result, Scalar};

/// The sum of the first `p` entries of a vector `x` (no batch).
pub fn first<F: Face + ?Sized>(f: &mut F, x: &F::Tensor, p: usize) -> Result<F::Tensor> {
    let k = f.meta(x).shape.dims()[0];
    let column = f.reshape(x, &[k, 1])?;
    let head = f.slice(&column, [0, 0], [p, 1])?;
    total(f, &head)
}

/// ⟨W, X Xᴴ⟩ for the columns `x` (W the weight input).
pub fn projector<F: Face + ?Sized>(f: &mut F, w: &F::Tensor, x: &F::Tensor) -> Result<F::Tensor> {
    let proj = f.matmul_with(x, MatOp::Identity, x, MatOp::Adjoint)?;
    pairing(f, w, &proj)
}

/// How a loss of singular values gets them.
#[derive(Clone, Copy, Debug)]
pub enum Via {
    /// `svd(a).s`.
    Thin,
    /// `svd_vals(a)`.
    Vals,
    /// `norm(a, Norm::Nuc)` (the nuclear norm itself).
    NormNuc,
}

/// An SVD loss of A (input 0); the weight W is input 1 where used.
#[derive(Clone, Copy, Debug)]
pub enum SvdLoss {
    /// P_p = ⟨W, U_p U_pᴴ⟩ (W m×m).
    ProjU(usize),
    /// ⟨W, V_p V_pᴴ⟩ (W n×n).
    ProjV(usize),
    /// ⟨W, u_j u_jᴴ⟩: the projector onto column j alone (W m×m).
    ColU(usize),
    /// Σ s².
    SumSquares,
    /// Σ s (the nuclear norm).
    Nuclear(Via),
    /// s₁ + … + s_p (the p largest values).
    Top(usize),
    /// Re U[r, 0].
    Entry(usize),
    /// ⟨w, u_j⟩ = Re Σ_r conj(w_r) U[r, j] (w m×1, the weight input).
    Column(usize),
    /// ⟨W, U_p diag(s_p) V_pᴴ⟩ through `low_rank_approx` (W m×n).
    LowRank(usize),
    /// ⟨W, U_p U_pᴴ⟩ through `svd_truncated` with `Count(p)` (the masked
    /// u; W m×m).
    Truncated(usize),
}

impl Loss for SvdLoss {
    fn name(&self) -> String {
        format!("{self:?}")
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let a = &xs[0];
        let dims = f.meta(a).shape.dims().to_vec();
        let (m, n) = (dims[0], dims[1]);
        match *self {
            SvdLoss::Nuclear(Via::Vals) => {
                let s = f.svd_vals(a)?;
                total(f, &s)
            }
            SvdLoss::Nuclear(Via::NormNuc) => f.norm(a, Norm::Nuc),
            SvdLoss::Nuclear(Via::Thin) => {
                let s = f.svd(a)?.s;
                total(f, &s)
            }
            SvdLoss::SumSquares => {
                let s = f.svd(a)?.s;
                let s2 = f.binary(BinaryOp::Mul, &s, &s)?;
                total(f, &s2)
            }
            SvdLoss::Top(p) => {
                let s = f.svd(a)?.s;
                first(f, &s, p)
            }
            SvdLoss::ProjU(p) => {
                let u = f.svd(a)?.u;
                let up = f.slice(&u, [0, 0], [m, p])?;
                projector(f, &xs[1], &up)
            }
            SvdLoss::ProjV(p) => {
                let vh = f.svd(a)?.vh;
                let vp = f.slice(&vh, [0, 0], [p, n])?;
                let v = f.adjoint(&vp, MatOp::Adjoint)?;
                projector(f, &xs[1], &v)
            }
            SvdLoss::ColU(j) => {
                let u = f.svd(a)?.u;
                let uj = f.slice(&u, [0, j], [m, 1])?;
                projector(f, &xs[1], &uj)
            }
            SvdLoss::Entry(r) => {
                let u = f.svd(a)?.u;
                let e = f.slice(&u, [r, 0], [1, 1])?;
                total(f, &e)
            }
            SvdLoss::Truncated(p) => {
                let u = f.svd_truncated(a, Truncation::Count(p))?.u;
                projector(f, &xs[1], &u)
            }
            SvdLoss::Column(j) => {
                let u = f.svd(a)?.u;
                let uj = f.slice(&u, [0, j], [m, 1])?;
                pairing(f, &xs[1], &uj)
            }
            SvdLoss::LowRank(p) => {
                let (ap, _rank) = f.low_rank_approx(a, Truncation::Count(p))?;
                pairing(f, &xs[1], &ap)
            }
        }
    }
}

/// An eigh loss of A (input 0, Hermitian); the weight W is input 1 where used.
#[derive(Clone, Copy, Debug)]
pub enum EighLoss {
    /// ⟨W, V_g V_gᴴ⟩ for the eigenvectors `start..start + count`.
    Proj(usize, usize),
    /// Σ w².
    SumSquares,
    /// w₁ + … + w_p (the p smallest values).
    Bottom(usize),
}

impl Loss for EighLoss {
    fn name(&self) -> String {
        format!("eigh {self:?}")
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let e = f.eigh(&xs[0])?;
        match *self {
            EighLoss::Proj(start, count) => {
                let n = f.meta(&e.v).shape.dims()[0];
                let vg = f.slice(&e.v, [0, start], [n, count])?;
                projector(f, &xs[1], &vg)
            }
            EighLoss::SumSquares => {
                let w2 = f.binary(BinaryOp::Mul, &e.w, &e.w)?;
                total(f, &w2)
            }
            EighLoss::Bottom(p) => first(f, &e.w, p),
        }
    }
}

/// Asserts that both reverse faces (eager, traced) report `op`'s `output` as not differentiable,
/// with a reason containing `why`.
pub fn assert_reported<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    p: &P,
    loss: &L,
    xs: &[Input<T>],
    (op, output, why): (&str, &str, &str),
) {
    let faces = [("eager", eager_grad(p.clone(), loss, xs)), ("traced", traced_grad(p, loss, xs))];
    for (face, result) in faces {
        match result {
            Err(Error::NotDifferentiable { op: o, output: out, why: w }) => {
                assert_eq!((o, out), (op, output), "{} ({face}): {w}", loss.name());
                assert!(w.contains(why), "{} ({face}): reason `{w}` does not mention `{why}`", loss.name());
            }
            Err(e) => panic!("{} ({face}): expected NotDifferentiable, got {e}", loss.name()),
            Ok(g) => panic!("{} ({face}): expected NotDifferentiable, got the gradient {g:?}", loss.name()),
        }
    }
}
