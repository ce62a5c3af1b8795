//! The compact Householder QR family: factor, append columns, Q, R, apply.
//!
//! # The state and its tangent
//!
//! The state of an m×n matrix, k = min(m, n), is `h` (R_h on and above the
//! diagonal, the reflector tails below) and `tau`, with
//! Q_h = H_0⋯H_{k−1} = I − V T Vᴴ (V m×k unit lower trapezoidal from `h`,
//! T k×k upper triangular, T = (I + D N)⁻¹ D with D = diag(τ) and
//! N = triu(VᴴV, 1); this form also holds for τ_j = 0) and A = Q_h R_h.
//! In the full-rank region the state is a smooth function of A (faer's
//! reflectors: β = −phase(x₀)‖x‖, τ real, and τ = 0 exactly for a reflector
//! with an empty tail, i.e. the last one when k = m). Every rule here gives
//! the *true* derivative of its op, so the tangent of `(h, tau)` is the
//! derivative of the state itself: a loss may read `h` and `tau` directly,
//! and each rule can be checked on its own by finite differences.
//!
//! # Factor (the state's tangent)
//!
//! With Q₁ = Q_h[:, :k] and R₁ = R_h[:, :k], A₁ = Q₁ R₁ is a thin QR in the
//! state's reflector convention (diag(R₁) = β, not ≥ 0). The QR rule (`qr::thin_core`)
//! gives dQ₁ = X − Q₁ B + Q₁ iΘ and dR₁ = (B − iΘ) R₁, where Θ = diag(θ) is
//! the real phase rate of the reflector convention relative to diag(R)
//! real (θ = 0 for real input: there the convention is a locally constant
//! sign).
//!
//! The reflectors follow from Q₁ as an LU without pivoting (the Householder
//! reconstruction of Ballard et al., LAPACK's ?orhr_col):
//! M = I − Q₁[:k, :] = V₁ U with V₁ = V[:k, :] unit lower, U = T V₁ᴴ upper
//! with diag(U) = τ; for m > k, V₂ = V[k:, :] = −Q₁[k:, :] U⁻¹. The LU
//! tangent with K = tril(V₁⁻¹ dM Ũ⁻¹, −1) is dV₁ = V₁ K, dU = V₁⁻¹ dM − K U,
//! dτ = diag(dU), dV₂ = −(dQ₁[k:, :] + V₂ dU) U⁻¹. Ũ is U with the
//! structurally zero pivot of an empty-tail reflector (k = m) set to 1: the
//! strictly lower K never reads that column's inverse, and that reflector's
//! τ stays 0 (dτ_{k−1} = 0).
//!
//! Complex input: θ is fixed by the reflector convention, i.e. by τ staying real (and
//! τ_{k−1} staying 0 for an empty tail): Im diag(dU) = 0. Im diag(dU) is
//! affine in θ, b + J θ, with J lower triangular:
//! J_jj = Re τ_j − 1, J_jp = −Ũ_jj Re((V₁⁻¹)_jp (Ũ⁻¹)_pj) for p < j
//! (from V₁⁻¹ Q₁[:k, :] = V₁⁻¹ − U), so θ = −J⁻¹ b with b from θ = 0.
//! For a nonempty tail J_jj = τ_j − 1 = |x₀|/‖x‖, which vanishes only where
//! x₀ = 0, where the phase of β, and so the state, is not differentiable;
//! for the empty tail J_jj = −1.
//!
//! m < n: R_h[:, k:] = Q₁ᴴ A₂ gives dR₂ = Q₁ᴴ dA₂ − Ω R₂ with
//! Ω = Q₁ᴴ dQ₁ = C − B + iΘ (docs/ad-rules.md#qr, the m < n rule).
//!
//! # Append, Q, R, apply
//!
//! * `apply`: d(op(Q_h) b) = op(dQ_h) b + op(Q_h) db with
//!   dQ_h = −dV T Vᴴ − V dT Vᴴ − V T dVᴴ,
//!   dT = (I + D N)⁻¹ (dD (I − N T) − D dN T), dN = triu(dVᴴ V + Vᴴ dV, 1);
//!   Q_hᵀ b = conj(Q_hᴴ conj(b)).
//! * `append` (docs/ad-rules.md#householder-qr): W = Q_hᴴ B, so
//!   dW = dQ_hᴴ B + Q_hᴴ dB through the stored reflectors (Q never formed);
//!   its first n₁ rows are dR₁₂ and, when m > n₁, the new reflectors are
//!   the factorization of W[n₁:, :], whose tangent is the factor rule's.
//!   The old columns and τ's are copied, and so are their tangents.
//! * `q` = Q₁ diag(ph), `r` = diag(conj ph) R_h[:k, :] with
//!   ph_j = phase(h_jj): dph_j = i θ_j ph_j, θ_j = Im(conj(ph_j) dh_jj)/|h_jj|.
//!
//! # Where it holds
//!
//! The full-rank region of the factored matrices with every reflector
//! nontrivial: x₀ ≠ 0 and a nonzero tail for every reflector with a
//! nonempty tail. At an A whose column is already reduced (e.g. an upper
//! triangular A) faer keeps an identity reflector and the state jumps under
//! perturbation: the state is not differentiable there, and a solve in the
//! rule meets that zero pivot, which the solve reports (`Error::Singular`
//! rather than a wrong value); `qr`
//! is differentiable there. The rules assume the CPU provider's state conventions
//! stated above (real τ; τ = 0 for an empty tail).

use super::qr::thin_core;
use super::{tangents, unsupported, Primals, Tangents};
use crate::ad::linear::{p, t};
use crate::ad::{Cx, Lin, Tangent};
use crate::dtype::DType;
use crate::error::Result;
use crate::op::{Diagonal, LinalgOp, MatOp, Side, Triangle, TriangularSolveOptions};
use crate::prim::{BinaryOp, Pad, PrimOp, ReduceOp, TriMask, UnaryOp};
use crate::provider::Op;
use crate::shape::Shape;
use crate::tensor::TensorMeta;
use crate::Ops;

/// Output tangents of the Householder family (see the module docs).
pub(super) fn jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    l: &LinalgOp,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    match l {
        LinalgOp::HouseholderQrFactor(_) => {
            let (h, tau) = (primals.output(op, 0)?, primals.output(op, 1)?);
            let [dh, dtau] = state_tangent(cx, h, tau, &dx[0])?;
            Ok(tangents([dh, dtau]))
        }
        LinalgOp::HouseholderQrAppend(_) => append(cx, op, primals, dx),
        LinalgOp::HouseholderQrQ(_) => q_jvp(cx, op, primals, dx),
        LinalgOp::HouseholderQrR(_) => r_jvp(cx, op, primals, &dx[0]),
        LinalgOp::HouseholderQrApply(a) => apply_jvp(cx, primals, dx, a.0),
        _ => Ok(unsupported(op)),
    }
}

// ------------------------------------------------------------ shapes ----

/// Sizes of an m×n matrix (batched) and its dtype.
struct Dims {
    /// Rows.
    m: usize,
    /// Columns.
    n: usize,
    /// min(m, n).
    k: usize,
    /// Element type.
    dtype: DType,
    /// Batch dims.
    batch: Shape,
}

impl Dims {
    /// `core` dims followed by the batch dims.
    fn shape(&self, core: &[usize]) -> Result<Shape> {
        Ok(Shape::from_parts(core, self.batch.dims())?)
    }
}

/// The [`Dims`] of a primal matrix.
fn dims_of<C: Cx + ?Sized>(cx: &mut C, x: &C::P) -> Result<Dims> {
    let meta = cx.primal().meta(x);
    let d = meta.shape.dims();
    let (m, n) = (d[0], d[1]);
    Ok(Dims { m, n, k: m.min(n), dtype: meta.dtype, batch: Shape::new(meta.shape.batch(2))? })
}

// ------------------------------------------------- primal helpers ----

/// One primitive on primal values.
fn prim<C: Cx + ?Sized>(cx: &mut C, op: PrimOp, inputs: &[&C::P]) -> Result<C::P> {
    cx.primal().single(Op::Prim(op), inputs)
}

/// One triangle of a primal matrix, its diagonal times `diagonal`.
fn tri<C: Cx + ?Sized>(cx: &mut C, x: &C::P, triangle: Triangle, diagonal: f64) -> Result<C::P> {
    prim(cx, PrimOp::TriMask(TriMask { triangle, diagonal }), &[x])
}

/// `x` placed at `start` in zero matrices of `size` (primal).
fn pad_p<C: Cx + ?Sized>(cx: &mut C, x: &C::P, start: [usize; 2], size: [usize; 2]) -> Result<C::P> {
    prim(cx, PrimOp::Pad(Pad { start, size }), &[x])
}

/// `x ∘ y` (elementwise `how`) on primal values.
fn bin<C: Cx + ?Sized>(cx: &mut C, how: BinaryOp, x: &C::P, y: &C::P) -> Result<C::P> {
    cx.primal().binary(how, x, y)
}

/// The first `cols` columns of the `rows`×`rows` identity.
fn eye_slab<C: Cx + ?Sized>(cx: &mut C, d: &Dims, rows: usize, cols: usize) -> Result<C::P> {
    let eye = cx.primal().eye(d.dtype, rows, d.batch.dims())?;
    if cols == rows {
        Ok(eye)
    } else {
        cx.primal().slice(&eye, [0, 0], [rows, cols])
    }
}

/// Triangular-solve options.
fn solve_opts(triangle: Triangle, diagonal: Diagonal, side: Side) -> TriangularSolveOptions {
    TriangularSolveOptions::default().triangle(triangle).diagonal(diagonal).side(side)
}

/// Elements `start..start + len` of primal vectors `[total, batch…]`.
fn vec_slice_p<C: Cx + ?Sized>(
    cx: &mut C,
    d: &Dims,
    x: &C::P,
    start: usize,
    len: usize,
    total: usize,
) -> Result<C::P> {
    let col = cx.primal().reshape(x, d.shape(&[total, 1])?.dims())?;
    let part = cx.primal().slice(&col, [start, 0], [len, 1])?;
    cx.primal().reshape(&part, d.shape(&[len])?.dims())
}

// ------------------------------------------------ tangent helpers ----

/// Tangent vectors `[len, batch…]` placed at `start` in zero vectors of
/// length `total`.
fn vec_pad_t<C: Cx + ?Sized>(
    cx: &mut C,
    d: &Dims,
    x: &Tangent<C::T>,
    start: usize,
    len: usize,
    total: usize,
) -> Result<Tangent<C::T>> {
    if len == total {
        return Ok(x.clone());
    }
    let col = cx.reshape(x, d.shape(&[len, 1])?.dims())?;
    let padded = cx.pad(&col, [start, 0], [total, 1])?;
    cx.reshape(&padded, d.shape(&[total])?.dims())
}

/// `x · diag(v)` for a primal `x` (r×k) and a tangent vector `v` (k).
fn cols_by<C: Cx + ?Sized>(cx: &mut C, x: &C::P, rows: usize, v: &Tangent<C::T>) -> Result<Tangent<C::T>> {
    let spread = cx.spread(v, &[rows])?;
    cx.mul(x, &spread)
}

/// `diag(v) · x` for a tangent vector `v` (k) and a primal `x` (k×c).
fn rows_by<C: Cx + ?Sized>(cx: &mut C, v: &Tangent<C::T>, x: &C::P, cols: usize) -> Result<Tangent<C::T>> {
    let spread = cx.spread(v, &[cols])?;
    let rows = cx.adjoint(&spread, MatOp::Transpose)?;
    cx.mul(x, &rows)
}

/// i·θ with θ_j = Im(conj(ph_j) dd_j) / |h_jj|: the rate of the phases
/// ph = phase(diag h) along the tangent dd of diag h (complex only).
fn phase_rate<C: Cx + ?Sized>(
    cx: &mut C,
    ph: &C::P,
    abs_diag: &C::P,
    dd: &Tangent<C::T>,
) -> Result<Tangent<C::T>> {
    let conj_ph = cx.primal().unary(UnaryOp::Conj, ph)?;
    let w = cx.mul(&conj_ph, dd)?;
    let im = cx.unary(UnaryOp::Imag, &w)?;
    let theta = cx.div(&im, abs_diag)?;
    let theta_c = cx.unary(UnaryOp::ToComplex, &theta)?;
    cx.unary(UnaryOp::MulI, &theta_c)
}

// ------------------------------------------------------ the state ----

/// Primal pieces of a state's reflectors in compact WY form.
struct Wy<P> {
    /// V (m×k), unit lower trapezoidal.
    v: P,
    /// T (k×k) with Q_h = I − V T Vᴴ.
    t: P,
    /// N = triu(VᴴV, 1).
    nn: P,
    /// D N, read as the unit upper triangular I + D N.
    dn: P,
    /// τ.
    tau: P,
}

/// The compact WY form of the state `(h, tau)` (k > 0).
fn wy<C: Cx + ?Sized>(cx: &mut C, d: &Dims, h: &C::P, tau: &C::P) -> Result<Wy<C::P>> {
    let (m, k) = (d.m, d.k);
    let hk = if d.n == k { h.clone() } else { cx.primal().slice(h, [0, 0], [m, k])? };
    let lower = tri(cx, &hk, Triangle::Lower, 0.0)?;
    let ek = eye_slab(cx, d, m, k)?;
    let v = bin(cx, BinaryOp::Add, &lower, &ek)?;
    let vhv = cx.primal().matmul_with(&v, MatOp::Adjoint, &v, MatOp::Identity)?;
    let nn = tri(cx, &vhv, Triangle::Upper, 0.0)?;
    let dn = cx.primal().scale_rows(&nn, tau)?;
    let dd = cx.primal().diag_embed(tau)?;
    let t =
        cx.primal().triangular_solve(&dn, &dd, solve_opts(Triangle::Upper, Diagonal::Unit, Side::Left))?;
    Ok(Wy { v, t, nn, dn, tau: tau.clone() })
}

/// op(dQ_h) · b for a primal `b` (m×r), `how` ∈ {identity, adjoint}, along
/// the state tangent (dh, dτ); see the module docs.
fn dq_times<C: Cx + ?Sized>(
    cx: &mut C,
    d: &Dims,
    w: &Wy<C::P>,
    dh: &Tangent<C::T>,
    dtau: &Tangent<C::T>,
    b: &C::P,
    how: MatOp,
) -> Result<Tangent<C::T>> {
    let k = d.k;
    let dhk = if d.n == k { dh.clone() } else { cx.slice(dh, [0, 0], [d.m, k])? };
    let dv = cx.tri_mask(&dhk, Triangle::Lower, 0.0)?;
    // dN = triu(dVᴴ V + Vᴴ dV, 1).
    let s = cx.matmul(p(&w.v), MatOp::Adjoint, t(&dv), MatOp::Identity)?;
    let sh = cx.adjoint(&s, MatOp::Adjoint)?;
    let sym = cx.add(&s, &sh)?;
    let dnn = cx.tri_mask(&sym, Triangle::Upper, 0.0)?;
    // dT = (I + D N)⁻¹ (dD (I − N T) − D dN T).
    let nt = cx.primal().matmul(&w.nn, &w.t)?;
    let eye = cx.primal().eye(d.dtype, k, d.batch.dims())?;
    let i_nt = bin(cx, BinaryOp::Sub, &eye, &nt)?;
    let term1 = rows_by(cx, dtau, &i_nt, k)?;
    let dnt = cx.matmul(t(&dnn), MatOp::Identity, p(&w.t), MatOp::Identity)?;
    let term2 = cx.scale_rows(&dnt, &w.tau)?;
    let rhs = cx.sub(&term1, &term2)?;
    let dt = cx.tri_solve(&w.dn, &rhs, solve_opts(Triangle::Upper, Diagonal::Unit, Side::Left))?;
    // Y = Vᴴ b.
    let y = cx.primal().matmul_with(&w.v, MatOp::Adjoint, b, MatOp::Identity)?;
    let dvh_b = cx.matmul(t(&dv), MatOp::Adjoint, p(b), MatOp::Identity)?;
    let (a1, a2, a3) = if how == MatOp::Identity {
        // dV (T Y) + V (dT Y) + (V T)(dVᴴ b).
        let ty = cx.primal().matmul(&w.t, &y)?;
        let vt = cx.primal().matmul(&w.v, &w.t)?;
        let a1 = cx.matmul(t(&dv), MatOp::Identity, p(&ty), MatOp::Identity)?;
        let dty = cx.matmul(t(&dt), MatOp::Identity, p(&y), MatOp::Identity)?;
        let a2 = cx.matmul(p(&w.v), MatOp::Identity, t(&dty), MatOp::Identity)?;
        let a3 = cx.matmul(p(&vt), MatOp::Identity, t(&dvh_b), MatOp::Identity)?;
        (a1, a2, a3)
    } else {
        // (V Tᴴ)(dVᴴ b) + V (dTᴴ Y) + dV (Tᴴ Y).
        let thy = cx.primal().matmul_with(&w.t, MatOp::Adjoint, &y, MatOp::Identity)?;
        let vth = cx.primal().matmul_with(&w.v, MatOp::Identity, &w.t, MatOp::Adjoint)?;
        let a1 = cx.matmul(p(&vth), MatOp::Identity, t(&dvh_b), MatOp::Identity)?;
        let dthy = cx.matmul(t(&dt), MatOp::Adjoint, p(&y), MatOp::Identity)?;
        let a2 = cx.matmul(p(&w.v), MatOp::Identity, t(&dthy), MatOp::Identity)?;
        let a3 = cx.matmul(t(&dv), MatOp::Identity, p(&thy), MatOp::Identity)?;
        (a1, a2, a3)
    };
    let sum = cx.add(&a1, &a2)?;
    let sum = cx.add(&sum, &a3)?;
    cx.neg(&sum)
}

/// Primal pieces of the LU M = I − Q₁[:k, :] = V₁ U of a state.
struct Lu<P> {
    /// `h[:k, :k]`: V₁ in its strict lower triangle (unit diagonal implied).
    hk: P,
    /// V₁ explicit.
    l: P,
    /// U (diag(U) = τ).
    u: P,
    /// U with an empty-tail zero pivot replaced by 1.
    ut: P,
}

/// The LU tangent: (dV₁, dU) for dM (module docs).
fn lu_tangent<C: Cx + ?Sized>(cx: &mut C, lu: &Lu<C::P>, dm: &Tangent<C::T>) -> Result<[Tangent<C::T>; 2]> {
    let xm = cx.tri_solve(&lu.hk, dm, solve_opts(Triangle::Lower, Diagonal::Unit, Side::Left))?;
    let y = cx.tri_solve(&lu.ut, &xm, solve_opts(Triangle::Upper, Diagonal::NonUnit, Side::Right))?;
    let kk = cx.tri_mask(&y, Triangle::Lower, 0.0)?;
    let dl = cx.matmul(p(&lu.l), MatOp::Identity, t(&kk), MatOp::Identity)?;
    let ku = cx.matmul(t(&kk), MatOp::Identity, p(&lu.u), MatOp::Identity)?;
    let du = cx.sub(&xm, &ku)?;
    Ok([dl, du])
}

/// The real lower triangular J with Im diag(dU) = b + J θ (module docs).
fn phase_system<C: Cx + ?Sized>(cx: &mut C, d: &Dims, lu: &Lu<C::P>, tau: &C::P) -> Result<C::P> {
    let k = d.k;
    let eye = cx.primal().eye(d.dtype, k, d.batch.dims())?;
    let f = cx.primal();
    let linv = f.triangular_solve(&lu.hk, &eye, solve_opts(Triangle::Lower, Diagonal::Unit, Side::Left))?;
    let uinv =
        f.triangular_solve(&lu.ut, &eye, solve_opts(Triangle::Upper, Diagonal::NonUnit, Side::Left))?;
    let uinv_t = f.adjoint(&uinv, MatOp::Transpose)?;
    let prod = f.binary(BinaryOp::Mul, &linv, &uinv_t)?;
    let re = f.unary(UnaryOp::Real, &prod)?;
    let strict = tri(cx, &re, Triangle::Lower, 0.0)?;
    let f = cx.primal();
    let ud = f.diag_part(&lu.ut)?;
    let ud = f.unary(UnaryOp::Real, &ud)?;
    let scaled = f.scale_rows(&strict, &ud)?;
    let tau_re = f.unary(UnaryOp::Real, tau)?;
    let ones = f.fill(TensorMeta::new(d.dtype.real(), d.shape(&[k])?), 1.0)?;
    let jd = f.binary(BinaryOp::Sub, &tau_re, &ones)?;
    let diag = f.diag_embed(&jd)?;
    f.binary(BinaryOp::Sub, &diag, &scaled)
}

/// The tangent (dh, dτ) of the state `(h, tau)` of a matrix A along dA
/// (module docs, "Factor").
fn state_tangent<C: Cx + ?Sized>(
    cx: &mut C,
    h: &C::P,
    tau: &C::P,
    da: &Tangent<C::T>,
) -> Result<[Tangent<C::T>; 2]> {
    let d = dims_of(cx, h)?;
    let (m, n, k) = (d.m, d.n, d.k);
    if k == 0 || da.is_zero() {
        return Ok([Tangent::Zero, Tangent::Zero]);
    }
    // An empty-tail last reflector (k = m): τ_{k−1} = 0 structurally.
    let empty_tail = k == m;
    let ek = eye_slab(cx, &d, m, k)?;
    let q1 = apply_p(cx, h, tau, &ek, MatOp::Identity)?;
    let hk = cx.primal().slice(h, [0, 0], [k, k])?;
    let r1 = tri(cx, &hk, Triangle::Upper, 1.0)?;
    let eye = cx.primal().eye(d.dtype, k, d.batch.dims())?;
    let strict = tri(cx, &hk, Triangle::Lower, 0.0)?;
    let l = bin(cx, BinaryOp::Add, &strict, &eye)?;
    let q1_top = if m == k { q1.clone() } else { cx.primal().slice(&q1, [0, 0], [k, k])? };
    let mm = bin(cx, BinaryOp::Sub, &eye, &q1_top)?;
    let linv_m =
        cx.primal().triangular_solve(&hk, &mm, solve_opts(Triangle::Lower, Diagonal::Unit, Side::Left))?;
    let u_strict = tri(cx, &linv_m, Triangle::Upper, 0.0)?;
    let dtau_mat = cx.primal().diag_embed(tau)?;
    let u = bin(cx, BinaryOp::Add, &u_strict, &dtau_mat)?;
    let ut = if empty_tail {
        let one = cx.primal().eye(d.dtype, 1, d.batch.dims())?;
        let corner = pad_p(cx, &one, [k - 1, k - 1], [k, k])?;
        bin(cx, BinaryOp::Add, &u, &corner)?
    } else {
        u.clone()
    };
    let lu = Lu { hk, l, u, ut };

    // The thin QR rule in the state's reflector convention, with θ = 0.
    let da1 = if n == k { da.clone() } else { cx.slice(da, [0, 0], [m, k])? };
    let [x, c, b0] = thin_core(cx, &q1, &r1, &da1)?;
    let qb0 = cx.matmul(p(&q1), MatOp::Identity, t(&b0), MatOp::Identity)?;
    let g0 = cx.sub(&x, &qb0)?;
    let top = |cx: &mut C, g: &Tangent<C::T>| -> Result<Tangent<C::T>> {
        let g_top = if m == k { g.clone() } else { cx.slice(g, [0, 0], [k, k])? };
        cx.neg(&g_top)
    };
    let (g, b) = if d.dtype.is_complex() {
        // Fix θ so that τ stays real: Im diag(dU) = 0.
        let dm0 = top(cx, &g0)?;
        let [_, du0] = lu_tangent(cx, &lu, &dm0)?;
        let diag0 = cx.diag_part(&du0)?;
        let rhs = cx.unary(UnaryOp::Imag, &diag0)?;
        let j = phase_system(cx, &d, &lu, tau)?;
        let rhs = cx.reshape(&rhs, d.shape(&[k, 1])?.dims())?;
        let sol = cx.tri_solve(&j, &rhs, solve_opts(Triangle::Lower, Diagonal::NonUnit, Side::Left))?;
        let sol = cx.reshape(&sol, d.shape(&[k])?.dims())?;
        let theta = cx.neg(&sol)?;
        let theta = cx.unary(UnaryOp::ToComplex, &theta)?;
        let itheta = cx.unary(UnaryOp::MulI, &theta)?;
        let q_it = cols_by(cx, &q1, m, &itheta)?;
        let g = cx.add(&g0, &q_it)?;
        let it_mat = cx.diag_embed(&itheta)?;
        let b = cx.sub(&b0, &it_mat)?;
        (g, b)
    } else {
        (g0, b0)
    };
    let dm = top(cx, &g)?;
    let [dl, du] = lu_tangent(cx, &lu, &dm)?;
    let dr1 = cx.matmul(t(&b), MatOp::Identity, p(&r1), MatOp::Identity)?;
    let dh_top = cx.add(&dr1, &dl)?;

    // dτ = diag(dU), real; the empty-tail τ stays 0.
    let du_diag = if empty_tail {
        if k == 1 {
            Tangent::Zero
        } else {
            let lead = cx.slice(&du, [0, 0], [k - 1, k - 1])?;
            cx.pad(&lead, [0, 0], [k, k])?
        }
    } else {
        du.clone()
    };
    let dtau = cx.diag_part(&du_diag)?;
    let dtau = if d.dtype.is_complex() {
        let re = cx.unary(UnaryOp::Real, &dtau)?;
        cx.unary(UnaryOp::ToComplex, &re)?
    } else {
        dtau
    };

    let dh = if m > k {
        // dV₂ = −(dQ₁[k:, :] + V₂ dU) U⁻¹.
        let v2 = cx.primal().slice(h, [k, 0], [m - k, k])?;
        let g_bot = cx.slice(&g, [k, 0], [m - k, k])?;
        let v2du = cx.matmul(p(&v2), MatOp::Identity, t(&du), MatOp::Identity)?;
        let sum = cx.add(&g_bot, &v2du)?;
        let solved =
            cx.tri_solve(&lu.u, &sum, solve_opts(Triangle::Upper, Diagonal::NonUnit, Side::Right))?;
        let dv2 = cx.neg(&solved)?;
        let upper = cx.pad(&dh_top, [0, 0], [m, n])?;
        let lower = cx.pad(&dv2, [k, 0], [m, n])?;
        cx.add(&upper, &lower)?
    } else if n > k {
        // dR₂ = Q₁ᴴ dA₂ − Ω R₂, Ω = C − B + iΘ = C − b.
        let r2 = cx.primal().slice(h, [0, k], [k, n - k])?;
        let da2 = cx.slice(da, [0, k], [m, n - k])?;
        let qda2 = cx.matmul(p(&q1), MatOp::Adjoint, t(&da2), MatOp::Identity)?;
        let omega = cx.sub(&c, &b)?;
        let or2 = cx.matmul(t(&omega), MatOp::Identity, p(&r2), MatOp::Identity)?;
        let dr2 = cx.sub(&qda2, &or2)?;
        let left = cx.pad(&dh_top, [0, 0], [m, n])?;
        let right = cx.pad(&dr2, [0, k], [m, n])?;
        cx.add(&left, &right)?
    } else {
        dh_top
    };
    Ok([dh, dtau])
}

/// `op(Q_h) b` on primal values.
fn apply_p<C: Cx + ?Sized>(cx: &mut C, h: &C::P, tau: &C::P, b: &C::P, how: MatOp) -> Result<C::P> {
    let op = LinalgOp::HouseholderQrApply(crate::op::HouseholderQrApply(how));
    cx.primal().single(Op::Linalg(op), &[h, tau, b])
}

// ----------------------------------------------------------- rules ----

/// `householder_qr_append`: (h₁, τ₁, B) → the state of [A B].
fn append<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let (h1, tau1, b) = (primals.input(0), primals.input(1), primals.input(2));
    let (h, tau) = (primals.output(op, 0)?, primals.output(op, 1)?);
    let d1 = dims_of(cx, h1)?;
    let d = dims_of(cx, h)?;
    let (m, n1, k1, n, k) = (d1.m, d1.n, d1.k, d.n, d.k);
    let n2 = n - n1;
    if n2 == 0 {
        return Ok(tangents([dx[0].clone(), dx[1].clone()]));
    }
    // dW = dQ_hᴴ B + Q_hᴴ dB.
    let dw_q = if k1 == 0 || (dx[0].is_zero() && dx[1].is_zero()) {
        Tangent::Zero
    } else {
        let w = wy(cx, &d1, h1, tau1)?;
        dq_times(cx, &d1, &w, &dx[0], &dx[1], b, MatOp::Adjoint)?
    };
    let dw_b = if k1 == 0 { dx[2].clone() } else { cx.householder_apply(h1, tau1, &dx[2], MatOp::Adjoint)? };
    let dw = cx.add(&dw_q, &dw_b)?;
    let left = if n1 == 0 { Tangent::Zero } else { cx.pad(&dx[0], [0, 0], [m, n])? };
    if m <= n1 {
        // No new reflectors: W is R₁₂ and τ is τ₁.
        let right = cx.pad(&dw, [0, n1], [m, n])?;
        let dh = cx.add(&left, &right)?;
        return Ok(tangents([dh, dx[1].clone()]));
    }
    let (m2, k2) = (m - n1, (m - n1).min(n2));
    let h2 = cx.primal().slice(h, [n1, n1], [m2, n2])?;
    let tau2 = vec_slice_p(cx, &d, tau, k1, k2, k)?;
    let dw2 = cx.slice(&dw, [n1, 0], [m2, n2])?;
    let [dh2, dtau2] = state_tangent(cx, &h2, &tau2, &dw2)?;
    let placed2 = cx.pad(&dh2, [n1, n1], [m, n])?;
    let mut dh = cx.add(&left, &placed2)?;
    if n1 > 0 {
        let dw_top = cx.slice(&dw, [0, 0], [n1, n2])?;
        let placed = cx.pad(&dw_top, [0, n1], [m, n])?;
        dh = cx.add(&dh, &placed)?;
    }
    let dtau1 = if k1 == 0 { Tangent::Zero } else { vec_pad_t(cx, &d, &dx[1], 0, k1, k)? };
    let dtau2 = vec_pad_t(cx, &d, &dtau2, k1, k2, k)?;
    let dtau = cx.add(&dtau1, &dtau2)?;
    Ok(tangents([dh, dtau]))
}

/// `householder_qr_q`: Q = Q_h[:, :k] diag(ph).
fn q_jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
) -> Result<Tangents<C::T>> {
    let (h, tau) = (primals.input(0), primals.input(1));
    let q = primals.output(op, 0)?;
    let d = dims_of(cx, h)?;
    let (m, k) = (d.m, d.k);
    if k == 0 {
        return Ok(tangents([Tangent::Zero]));
    }
    let ek = eye_slab(cx, &d, m, k)?;
    let w = wy(cx, &d, h, tau)?;
    let dq1 = dq_times(cx, &d, &w, &dx[0], &dx[1], &ek, MatOp::Identity)?;
    // ph_j = (Q₁ᴴ Q)_jj, exactly the kernel's phase (1 for h_jj = 0).
    let q1 = apply_p(cx, h, tau, &ek, MatOp::Identity)?;
    let f = cx.primal();
    let q1c = f.unary(UnaryOp::Conj, &q1)?;
    let prod = f.binary(BinaryOp::Mul, &q1c, q)?;
    let ph = f.reduce(ReduceOp::Sum, &prod, 1)?;
    let mut dq = cx.scale_cols(&dq1, &ph)?;
    if d.dtype.is_complex() {
        let hk = cx.primal().slice(h, [0, 0], [k, k])?;
        let hd = cx.primal().diag_part(&hk)?;
        let abs = cx.primal().unary(UnaryOp::Abs, &hd)?;
        let dhk = cx.slice(&dx[0], [0, 0], [k, k])?;
        let dd = cx.diag_part(&dhk)?;
        let itheta = phase_rate(cx, &ph, &abs, &dd)?;
        let rot = cols_by(cx, q, m, &itheta)?;
        dq = cx.add(&dq, &rot)?;
    }
    Ok(tangents([dq]))
}

/// `householder_qr_r`: R = diag(conj ph) triu(h[:k, :]), ph = phase(diag h).
fn r_jvp<C: Cx + ?Sized>(
    cx: &mut C,
    op: &Op,
    primals: &Primals<'_, C::P>,
    dh: &Tangent<C::T>,
) -> Result<Tangents<C::T>> {
    let h = primals.input(0);
    let r = primals.output(op, 0)?;
    let d = dims_of(cx, h)?;
    let (m, n, k) = (d.m, d.n, d.k);
    if k == 0 {
        return Ok(tangents([Tangent::Zero]));
    }
    let f = cx.primal();
    let hk = f.slice(h, [0, 0], [k, k])?;
    let hd = f.diag_part(&hk)?;
    let abs = f.unary(UnaryOp::Abs, &hd)?;
    let abs_c = if d.dtype.is_complex() { f.unary(UnaryOp::ToComplex, &abs)? } else { abs.clone() };
    let ph = f.binary(BinaryOp::Div, &hd, &abs_c)?;
    let conj_ph = f.unary(UnaryOp::Conj, &ph)?;
    let top = if m == k { dh.clone() } else { cx.slice(dh, [0, 0], [k, n])? };
    let upper = cx.tri_mask(&top, Triangle::Upper, 1.0)?;
    let mut dr = cx.scale_rows(&upper, &conj_ph)?;
    if d.dtype.is_complex() {
        let dhk = cx.slice(dh, [0, 0], [k, k])?;
        let dd = cx.diag_part(&dhk)?;
        let itheta = phase_rate(cx, &ph, &abs, &dd)?;
        let rot = rows_by(cx, &itheta, r, n)?;
        dr = cx.sub(&dr, &rot)?;
    }
    Ok(tangents([dr]))
}

/// `householder_qr_apply`: y = op(Q_h) b.
fn apply_jvp<C: Cx + ?Sized>(
    cx: &mut C,
    primals: &Primals<'_, C::P>,
    dx: &[Tangent<C::T>],
    how: MatOp,
) -> Result<Tangents<C::T>> {
    let (h, tau, b) = (primals.input(0), primals.input(1), primals.input(2));
    let d = dims_of(cx, h)?;
    if d.k == 0 {
        // Q_h = I.
        return Ok(tangents([dx[2].clone()]));
    }
    let from_state = if dx[0].is_zero() && dx[1].is_zero() {
        Tangent::Zero
    } else {
        let w = wy(cx, &d, h, tau)?;
        match how {
            MatOp::Identity | MatOp::Adjoint => dq_times(cx, &d, &w, &dx[0], &dx[1], b, how)?,
            MatOp::Transpose => {
                // Q_hᵀ b = conj(Q_hᴴ conj(b)).
                let bc = cx.primal().unary(UnaryOp::Conj, b)?;
                let y = dq_times(cx, &d, &w, &dx[0], &dx[1], &bc, MatOp::Adjoint)?;
                cx.unary(UnaryOp::Conj, &y)?
            }
        }
    };
    let from_b = cx.householder_apply(h, tau, &dx[2], how)?;
    Ok(tangents([cx.add(&from_state, &from_b)?]))
}
