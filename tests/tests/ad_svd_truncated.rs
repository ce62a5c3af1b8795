//! Truncated SVD (`svd_truncated`, docs/ad-rules.md#truncated-svd): the rank p
//! chosen from the data at run time, by count or by tolerance; outputs of
//! static shape with the triplets beyond p zeroed and an i64 `rank`.
//!
//! * Forward: the rank each truncation gives, exact zeros beyond it, and the
//!   kept part bit-identical to the plain `svd`'s (batched, with a
//!   different rank per item; counts beyond k; a kept zero value).
//! * Derivatives, through gauge-invariant losses of the masked factors —
//!   the projectors U_p U_pᴴ and V_p V_pᴴ, Σ s_kept², the reconstruction
//!   ⟨W, U diag(s) Vᴴ⟩ — on 7×5 and 5×7, f64 and c64, with
//!   `Count(3)`, `Tolerance { rtol: 1e-2 }` and `Tolerance { atol: 0.5 }` at
//!   s = (5, 4, 3, 1e-3, 1e-4) (p = 3, stable under the FD step), and a
//!   batch whose items keep 3, 4 and 1 triplets:
//!   - forward mode against central finite differences (`check`);
//!   - the gradient on the eager face and on the traced face: bit-identical
//!     (both record the same masked op), and against central finite
//!     differences entry by entry (real and imaginary parts);
//!   - the dot-product test ⟨g, t⟩ = jvp(t), with the JVP by forward mode
//!     and by the traced `jvp` program.
//! * The output tangents themselves: the thin SVD's bit for bit on the kept
//!   triplets, exactly zero on the discarded ones; `rank` not
//!   differentiable.
//! * Real slicing on the concrete faces (`svd_truncated_sliced`): shapes
//!   cut to the largest rank, values equal to the masked form's leading
//!   part, and on the eager face the masked form's gradient.

use lindiff_core::ad::{Dual, DualTensor, Eager, Tangent, Tracked};
use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::face::Face;
use lindiff_core::op::Truncation;
use lindiff_core::prim::BinaryOp;
use lindiff_core::{Element, Error, Host, MatOp, Ops, Provider, RealScalar, Result, Scalar};
use lindiff_tests::ad::{
    assert_same_gradients, check, eager_grad, finite_difference, forward, inner as dot, traced_grad,
    traced_jvp, value, Input, Loss,
};
use lindiff_tests::dense::{Dense, Re, Rng};
use lindiff_tests::losses::{pairing, total};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;

/// The spectrum of the single-matrix cases: p = 3 for every truncation below.
const SPECTRUM: [f64; 5] = [5.0, 4.0, 3.0, 1e-3, 1e-4];

/// The truncations of the single-matrix cases, each keeping 3 of SPECTRUM.
fn truncations() -> [Truncation; 3] {
    [
        Truncation::Count(3),
        Truncation::Tolerance { atol: 0.0, rtol: 1e-2 },
        Truncation::Tolerance { atol: 0.5, rtol: 0.0 },
    ]
}

/// What the loss reads from the masked factors (W is the second input).
#[derive(Clone, Copy, Debug)]
enum Obs {
    /// ⟨W, U Uᴴ⟩ = Re tr(Wᴴ U_p U_pᴴ) (W m×m).
    ProjU,
    /// ⟨W, Vᴴᴴ Vᴴ⟩ = Re tr(Wᴴ V_p V_pᴴ) (W n×n).
    ProjV,
    /// Σ s_i² (the discarded ones are zero).
    SumSquares,
    /// ⟨W, U diag(s) Vᴴ⟩ (W m×n): the rank-p reconstruction.
    Recon,
}

const ALL: [Obs; 4] = [Obs::ProjU, Obs::ProjV, Obs::SumSquares, Obs::Recon];

/// A gauge-invariant loss of `svd_truncated(A, keep)`.
#[derive(Clone, Copy, Debug)]
struct Truncated {
    /// The truncation.
    keep: Truncation,
    /// What is read.
    obs: Obs,
}

impl Loss for Truncated {
    fn name(&self) -> String {
        format!("{:?} of svd_truncated({:?})", self.obs, self.keep)
    }

    fn eval<F: Face + ?Sized>(&self, f: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
        let t = f.svd_truncated(&xs[0], self.keep)?;
        match self.obs {
            Obs::ProjU => {
                let proj = f.matmul_with(&t.u, MatOp::Identity, &t.u, MatOp::Adjoint)?;
                pairing(f, &xs[1], &proj)
            }
            Obs::ProjV => {
                let proj = f.matmul_with(&t.vh, MatOp::Adjoint, &t.vh, MatOp::Identity)?;
                pairing(f, &xs[1], &proj)
            }
            Obs::SumSquares => {
                let s2 = f.binary(BinaryOp::Mul, &t.s, &t.s)?;
                total(f, &s2)
            }
            Obs::Recon => {
                let us = f.scale_cols(&t.u, &t.s)?;
                let x = f.matmul(&us, &t.vh)?;
                pairing(f, &xs[1], &x)
            }
        }
    }
}

/// The weight `obs` needs for the matrices `a` (one, or a batch). Chosen so
/// the loss is not a near-cancelling sum (which would leave the relative FD
/// criterion measuring rounding noise): Hermitian positive semidefinite
/// G Gᴴ/r for the projectors (L = tr(W P) > 0), A + G for the
/// reconstruction (L ≈ ‖A_p‖²).
fn weight<T: Scalar>(obs: Obs, a: &[Dense<T>], rng: &mut Rng) -> Option<Input<T>> {
    let one = |a: &Dense<T>, rng: &mut Rng| {
        let psd = |r: usize, rng: &mut Rng| {
            let g = rng.matrix::<T>(r, r);
            g.matmul(&g.adjoint()).scale_cols(&vec![Re::<T>::from_f64(1.0 / r as f64); r])
        };
        match obs {
            Obs::ProjU => psd(a.rows, rng),
            Obs::ProjV => psd(a.cols, rng),
            Obs::SumSquares => unreachable!("no weight"),
            Obs::Recon => {
                a.sub(&rng.matrix::<T>(a.rows, a.cols).scale_cols(&vec![Re::<T>::from_f64(-1.0); a.cols]))
            }
        }
    };
    match obs {
        Obs::SumSquares => None,
        _ if a.len() == 1 => Some(Input::matrix(&one(&a[0], rng))),
        _ => Some(Input::batch(&a.iter().map(|a| one(a, rng)).collect::<Vec<_>>())),
    }
}

/// Bit pattern of an element (real and imaginary parts).
fn bits<T: Scalar>(x: T) -> (u64, u64) {
    (x.re().to_f64().to_bits(), x.im().to_f64().to_bits())
}

/// What [`faces`] measured.
#[derive(Clone, Copy, Debug, Default)]
struct Measured {
    /// Forward mode vs FD along random directions (`check`).
    forward_vs_fd: f64,
    /// ‖g − g_fd‖∞ / max(‖g‖∞, |L|/‖A‖), g the (bit-identical) eager and
    /// traced gradient with respect to A.
    grad_vs_fd: f64,
    /// |⟨g, t⟩ − jvp(t)| / max(|⟨g, t⟩|, ‖g‖‖t‖·1e-3), forward and traced jvp.
    dot_product: f64,
}

impl Measured {
    fn max(self, o: Measured) -> Measured {
        Measured {
            forward_vs_fd: self.forward_vs_fd.max(o.forward_vs_fd),
            grad_vs_fd: self.grad_vs_fd.max(o.grad_vs_fd),
            dot_product: self.dot_product.max(o.dot_product),
        }
    }
}

/// Every derivative check of `loss` at `xs` on both faces (see the module
/// docs); panics on a failure, returns the measured errors.
fn faces<T: Scalar + Element, P: Provider<Memory = Host> + Clone>(
    p: &P,
    loss: &Truncated,
    xs: &[Input<T>],
) -> Measured
where
    Re<T>: Element,
{
    let name = loss.name();
    let forward_vs_fd = check(p, loss, xs).forward_vs_fd;

    // Eager and traced gradients: the same op recorded, so the same bits.
    let eager = eager_grad(p.clone(), loss, xs).unwrap_or_else(|e| panic!("{name}: eager: {e}"));
    let traced = traced_grad(p, loss, xs).unwrap_or_else(|e| panic!("{name}: traced: {e}"));
    assert_same_gradients(&name, xs, &eager, &traced);
    for e in &eager {
        assert!(e.iter().all(|x| x.re().to_f64().is_finite() && x.im().to_f64().is_finite()), "{name}");
    }

    // Entrywise central differences for the gradient with respect to A
    // (∂L/∂Re a_j + i ∂L/∂Im a_j).
    let mut face = Direct::new(p.clone());
    let l = value(&mut face, loss, xs);
    let norm = xs[0].norm();
    let h = 1e-6 * norm;
    let g = &eager[0];
    let zeros: Vec<Input<T>> =
        xs.iter().map(|x| Input { dims: x.dims.clone(), data: vec![T::zero(); x.data.len()] }).collect();
    let complex = T::DTYPE.is_complex();
    let mut worst = 0.0_f64;
    let g_inf = g.iter().map(|x| x.abs().to_f64()).fold(0.0, f64::max);
    let scale = g_inf.max(l.abs() / norm);
    for (j, gj) in g.iter().enumerate() {
        let parts: &[T] =
            if complex { &[T::one(), T::from_parts(Re::<T>::zero(), Re::<T>::one())] } else { &[T::one()] };
        for (part, &unit) in parts.iter().enumerate() {
            let mut ds = zeros.clone();
            ds[0].data[j] = unit;
            let fd = finite_difference(p, loss, xs, &ds, h);
            let ad = if part == 0 { gj.re().to_f64() } else { gj.im().to_f64() };
            worst = worst.max((ad - fd).abs() / scale);
        }
    }
    assert!(worst <= 1e-8, "{name}: gradient vs entrywise finite differences: {worst:e} (‖g‖∞ = {g_inf:e})");

    // Dot-product test: ⟨g, t⟩ against forward mode and the traced jvp.
    let mut rng = Rng::new(0xd07 ^ xs[0].data.len() as u64);
    let mut dot_product = 0.0_f64;
    for _ in 0..2 {
        let ts: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        let gt: f64 = eager.iter().zip(&ts).map(|(g, t)| dot(g, &t.data)).sum();
        let g_norm = eager.iter().flatten().map(|x| x.abs2().to_f64()).sum::<f64>().sqrt();
        let t_norm = ts.iter().map(Input::norm).map(|x| x * x).sum::<f64>().sqrt();
        let fwd = forward(p.clone(), loss, xs, &ts).unwrap_or_else(|e| panic!("{name}: forward: {e}"));
        let tj = traced_jvp(p, loss, xs, &ts).unwrap_or_else(|e| panic!("{name}: traced jvp: {e}"));
        let denom = gt.abs().max(g_norm * t_norm * 1e-3).max(f64::MIN_POSITIVE);
        for jvp in [fwd, tj] {
            let err = (gt - jvp).abs() / denom;
            assert!(err <= 1e-12, "{name}: ⟨g, t⟩ = {gt:e} vs jvp {jvp:e} ({err:e})");
            dot_product = dot_product.max(err);
        }
    }
    Measured { forward_vs_fd, grad_vs_fd: worst, dot_product }
}

/// Every loss and truncation at 7×5 and 5×7; the worst errors.
fn single_suite<T: Scalar + Element, P: TestProvider>(seed: u64) -> Measured
where
    Re<T>: Element,
{
    let p = P::default();
    let mut rng = Rng::new(seed);
    let mut worst = Measured::default();
    for (m, n) in [(7, 5), (5, 7)] {
        for keep in truncations() {
            for obs in ALL {
                let a = rng.with_spectrum::<T>(m, n, &SPECTRUM);
                let w = weight(obs, core::slice::from_ref(&a), &mut rng);
                let xs: Vec<Input<T>> = core::iter::once(Input::matrix(&a)).chain(w).collect();
                worst = worst.max(faces(&p, &Truncated { keep, obs }, &xs));
            }
        }
    }
    worst
}

fn derivatives_7x5_and_5x7_f64<P: TestProvider>(_provider: &P) {
    let w = single_suite::<f64, P>(1);
    eprintln!("svd_truncated f64 7×5, 5×7: {w:?}");
}

fn derivatives_7x5_and_5x7_c64<P: TestProvider>(_provider: &P) {
    let w = single_suite::<C64, P>(2);
    eprintln!("svd_truncated c64 7×5, 5×7: {w:?}");
}

/// Spectra of the batched case: `Tolerance { rtol: 1e-2 }` keeps 3, 4 and 1.
const BATCH_SPECTRA: [[f64; 5]; 3] =
    [[5.0, 4.0, 3.0, 1e-3, 1e-4], [5.0, 4.0, 3.0, 2.0, 1e-4], [2.0, 1e-3, 5e-4, 2e-4, 1e-4]];

/// A batch of three 6×5 (5×6) matrices whose items keep different ranks.
fn batched_suite<T: Scalar + Element, P: TestProvider>(seed: u64) -> Measured
where
    Re<T>: Element,
{
    let p = P::default();
    let mut rng = Rng::new(seed);
    let keep = Truncation::Tolerance { atol: 0.0, rtol: 1e-2 };
    let mut worst = Measured::default();
    for (m, n) in [(6, 5), (5, 6)] {
        for obs in ALL {
            let mats: Vec<Dense<T>> = BATCH_SPECTRA.iter().map(|s| rng.with_spectrum::<T>(m, n, s)).collect();
            let a = Input::batch(&mats);
            // The ranks really differ per item.
            let mut face = Direct::new(p);
            let ta = face.tensor(&a.dims, &a.data).unwrap();
            let t = face.svd_truncated(&ta, keep).unwrap();
            assert_eq!(t.rank.to_vec::<i64>().unwrap(), [3, 4, 1]);
            let xs: Vec<Input<T>> = core::iter::once(a).chain(weight(obs, &mats, &mut rng)).collect();
            worst = worst.max(faces(&p, &Truncated { keep, obs }, &xs));
        }
    }
    worst
}

fn batched_with_a_rank_per_item<P: TestProvider>(_provider: &P) {
    let real = batched_suite::<f64, P>(3);
    let complex = batched_suite::<C64, P>(4);
    eprintln!("svd_truncated batched: f64 {real:?}, c64 {complex:?}");
}

/// The truncated outputs against the plain thin SVD of the same input: the
/// rank, exact zeros beyond it and the kept part bit for bit.
fn forward_case<T: Scalar + Element, P: TestProvider>(a: &Input<T>, keep: Truncation, expected: &[i64])
where
    Re<T>: Element,
{
    let mut face = Direct::new(P::default());
    let ta = face.tensor(&a.dims, &a.data).unwrap();
    let t = face.svd_truncated(&ta, keep).unwrap();
    let full = face.svd(&ta).unwrap();
    let (m, n) = (a.dims[0], a.dims[1]);
    let k = m.min(n);
    let items = a.dims.get(2).copied().unwrap_or(1);
    let rank = t.rank.to_vec::<i64>().unwrap();
    assert_eq!(rank, expected, "{keep:?}");
    assert_eq!(t.u.dims(), full.u.dims());
    assert_eq!(t.s.dims(), full.s.dims());
    assert_eq!(t.vh.dims(), full.vh.dims());
    let (u, fu) = (t.u.to_vec::<T>().unwrap(), full.u.to_vec::<T>().unwrap());
    let (s, fs) = (t.s.to_vec::<Re<T>>().unwrap(), full.s.to_vec::<Re<T>>().unwrap());
    let (vh, fvh) = (t.vh.to_vec::<T>().unwrap(), full.vh.to_vec::<T>().unwrap());
    assert_eq!(rank.len(), items);
    for (b, &p) in rank.iter().enumerate() {
        let p = usize::try_from(p).unwrap();
        for j in 0..k {
            let kept = j < p;
            let sj = b * k + j;
            let want = if kept { bits(fs[sj]) } else { bits(Re::<T>::zero()) };
            assert_eq!(bits(s[sj]), want, "s[{j}] of item {b}");
            for i in 0..m {
                let e = b * m * k + j * m + i;
                let want = if kept { bits(fu[e]) } else { bits(T::zero()) };
                assert_eq!(bits(u[e]), want, "u[{i}, {j}] of item {b}");
            }
            for c in 0..n {
                let e = b * k * n + c * k + j;
                let want = if kept { bits(fvh[e]) } else { bits(T::zero()) };
                assert_eq!(bits(vh[e]), want, "vh[{j}, {c}] of item {b}");
            }
        }
    }
}

fn forward_suite<T: Scalar + Element, P: TestProvider>(seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    for (m, n) in [(7, 5), (5, 7), (5, 5)] {
        let a = Input::matrix(&rng.with_spectrum::<T>(m, n, &SPECTRUM));
        for keep in truncations() {
            forward_case::<T, P>(&a, keep, &[3]);
        }
        // Counts: capped at k; the default keeps everything.
        forward_case::<T, P>(&a, Truncation::Count(1), &[1]);
        forward_case::<T, P>(&a, Truncation::Count(9), &[5]);
        forward_case::<T, P>(&a, Truncation::default(), &[5]);
        // Thresholds: strict (s > threshold), the larger of atol and rtol·s₀.
        forward_case::<T, P>(&a, Truncation::Tolerance { atol: 0.0, rtol: 0.0 }, &[5]);
        forward_case::<T, P>(&a, Truncation::Tolerance { atol: 3.5, rtol: 0.1 }, &[2]);
        forward_case::<T, P>(&a, Truncation::Tolerance { atol: 0.1, rtol: 0.7 }, &[2]);
        forward_case::<T, P>(&a, Truncation::Tolerance { atol: 10.0, rtol: 0.0 }, &[0]);
        // A zero singular value kept by a count: its column stays (unit
        // norm), only the ones beyond the count are zeroed.
        let zero = Input::matrix(&rng.with_spectrum::<T>(m, n, &[2.0, 1.0, 0.5]));
        forward_case::<T, P>(&zero, Truncation::Count(4), &[4]);
        forward_case::<T, P>(&zero, Truncation::Tolerance { atol: 1e-8, rtol: 0.0 }, &[3]);
    }
    // A batch with a different rank per item.
    let mats: Vec<Dense<T>> = BATCH_SPECTRA.iter().map(|s| rng.with_spectrum::<T>(6, 5, s)).collect();
    forward_case::<T, P>(&Input::batch(&mats), Truncation::Tolerance { atol: 0.0, rtol: 1e-2 }, &[3, 4, 1]);
    forward_case::<T, P>(&Input::batch(&mats), Truncation::Count(2), &[2, 2, 2]);
}

fn forward_rank_masking_and_kept_part<P: TestProvider>(_provider: &P) {
    forward_suite::<f64, P>(5);
    forward_suite::<C64, P>(6);
}

/// The mask primitive the rule builds its mask with.
fn nonzero_mask_is_exactly_zero_or_one<P: TestProvider>(provider: &P) {
    let mut face = Direct::new(*provider);
    let x = face.tensor(&[5], &[0.0, -0.0, 1e-300, -2.5, f64::NAN]).unwrap();
    let m = face.nonzero_mask(&x).unwrap();
    assert_eq!(m.to_vec::<f64>().unwrap(), [0.0, 0.0, 1.0, 1.0, 1.0]);
    let z = face.tensor(&[3], &[C64::new(0.0, 0.0), C64::new(0.0, 1e-300), C64::new(-1.0, 0.0)]).unwrap();
    let m = face.nonzero_mask(&z).unwrap();
    assert_eq!(face.meta(&m).dtype, lindiff_core::DType::F64);
    assert_eq!(m.to_vec::<f64>().unwrap(), [0.0, 1.0, 1.0]);
}

/// The elements of a forward-mode tangent (zeros for `Tangent::Zero`).
fn tangent_values<T: Scalar + Element>(t: &DualTensor<Tensor>, len: usize) -> Vec<T> {
    match &t.tangent {
        Tangent::Value(v) => v.to_vec::<T>().unwrap(),
        Tangent::Zero => vec![T::zero(); len],
        Tangent::Undefined(e) => panic!("undefined tangent: {e}"),
    }
}

/// The output tangents themselves (forward mode, on the batch with a rank
/// per item): the thin SVD's tangents bit for bit on the kept triplets,
/// exactly zero on the discarded ones (the losses above cannot see those:
/// they multiply zeroed columns), and `rank` not differentiable.
fn tangent_suite<T: Scalar + Element, P: TestProvider>(seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let keep = Truncation::Tolerance { atol: 0.0, rtol: 1e-2 };
    for (m, n) in [(6, 5), (5, 6)] {
        let k = m.min(n);
        let mats: Vec<Dense<T>> = BATCH_SPECTRA.iter().map(|s| rng.with_spectrum::<T>(m, n, s)).collect();
        let a = Input::batch(&mats);
        let da = a.random_direction(&mut rng);
        let mut dual = Dual::new(Direct::new(P::default()));
        let primal = dual.inner().tensor(&a.dims, &a.data).unwrap();
        let tangent = Tangent::Value(dual.inner().tensor(&da.dims, &da.data).unwrap());
        let x = DualTensor { primal, tangent };
        let t = dual.svd_truncated(&x, keep).unwrap();
        let full = dual.svd(&x).unwrap();
        let rank = t.rank.primal.to_vec::<i64>().unwrap();
        assert_eq!(rank, [3, 4, 1]);
        assert!(matches!(
            t.rank.tangent,
            Tangent::Undefined(Error::NotDifferentiable { output: "rank", .. })
        ));
        let items = rank.len();
        let du: Vec<T> = tangent_values(&t.u, m * k * items);
        let dfu: Vec<T> = tangent_values(&full.u, m * k * items);
        let ds: Vec<Re<T>> = tangent_values(&t.s, k * items);
        let dfs: Vec<Re<T>> = tangent_values(&full.s, k * items);
        let dvh: Vec<T> = tangent_values(&t.vh, k * n * items);
        let dfvh: Vec<T> = tangent_values(&full.vh, k * n * items);
        // Kept: the thin tangent's bits; discarded: ±0 (a masked product).
        let same = |x: (u64, u64), kept: bool, want: (u64, u64)| {
            if kept {
                x == want
            } else {
                f64::from_bits(x.0) == 0.0 && f64::from_bits(x.1) == 0.0
            }
        };
        for (b, &p) in rank.iter().enumerate() {
            let p = usize::try_from(p).unwrap();
            for j in 0..k {
                let kept = j < p;
                let e = b * k + j;
                assert!(same(bits(ds[e]), kept, bits(dfs[e])), "ds[{j}] of item {b}: {:?}", ds[e]);
                for i in 0..m {
                    let e = b * m * k + j * m + i;
                    assert!(same(bits(du[e]), kept, bits(dfu[e])), "du[{i}, {j}] of item {b}: {:?}", du[e]);
                }
                for c in 0..n {
                    let e = b * k * n + c * k + j;
                    assert!(
                        same(bits(dvh[e]), kept, bits(dfvh[e])),
                        "dvh[{j}, {c}] of item {b}: {:?}",
                        dvh[e]
                    );
                }
            }
        }
    }
}

fn tangents_are_the_thin_ones_masked<P: TestProvider>(_provider: &P) {
    tangent_suite::<f64, P>(7);
    tangent_suite::<C64, P>(8);
}

/// Real slicing on the direct face: the factors cut to the largest rank of
/// the batch, equal to the leading part of the masked ones; rank 0 gives
/// empty factors.
fn sliced_forward_suite<T: Scalar + Element, P: TestProvider>(seed: u64)
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let mut face = Direct::new(P::default());
    let cases: [(&[[f64; 5]], Truncation, usize); 4] = [
        (&BATCH_SPECTRA, Truncation::Tolerance { atol: 0.0, rtol: 1e-2 }, 4),
        (&BATCH_SPECTRA[..1], Truncation::Count(3), 3),
        (&BATCH_SPECTRA[2..], Truncation::Tolerance { atol: 0.0, rtol: 1e-2 }, 1),
        (&BATCH_SPECTRA[..1], Truncation::Tolerance { atol: 10.0, rtol: 0.0 }, 0),
    ];
    for (m, n) in [(6, 5), (5, 6)] {
        for (spectra, keep, p) in cases {
            let mats: Vec<Dense<T>> = spectra.iter().map(|s| rng.with_spectrum::<T>(m, n, s)).collect();
            let a = if mats.len() == 1 { Input::matrix(&mats[0]) } else { Input::batch(&mats) };
            let ta = face.tensor(&a.dims, &a.data).unwrap();
            let cut = face.svd_truncated_sliced(&ta, keep).unwrap();
            let masked = face.svd_truncated(&ta, keep).unwrap();
            let batch = &a.dims[2..];
            let with = |lead: &[usize]| -> Vec<usize> { lead.iter().chain(batch).copied().collect() };
            assert_eq!(cut.u.dims(), with(&[m, p]), "{keep:?}");
            assert_eq!(cut.s.dims(), with(&[p]), "{keep:?}");
            assert_eq!(cut.vh.dims(), with(&[p, n]), "{keep:?}");
            assert_eq!(cut.rank.to_vec::<i64>().unwrap(), masked.rank.to_vec::<i64>().unwrap());
            let k = m.min(n);
            let items = mats.len();
            let (u, mu) = (cut.u.to_vec::<T>().unwrap(), masked.u.to_vec::<T>().unwrap());
            let (s, ms) = (cut.s.to_vec::<Re<T>>().unwrap(), masked.s.to_vec::<Re<T>>().unwrap());
            let (vh, mvh) = (cut.vh.to_vec::<T>().unwrap(), masked.vh.to_vec::<T>().unwrap());
            for b in 0..items {
                for j in 0..p {
                    assert_eq!(bits(s[b * p + j]), bits(ms[b * k + j]));
                    for i in 0..m {
                        assert_eq!(bits(u[b * m * p + j * m + i]), bits(mu[b * m * k + j * m + i]));
                    }
                    for c in 0..n {
                        assert_eq!(bits(vh[b * p * n + c * p + j]), bits(mvh[b * k * n + c * k + j]));
                    }
                }
            }
        }
    }
}

fn sliced_on_the_direct_face<P: TestProvider>(_provider: &P) {
    sliced_forward_suite::<f64, P>(9);
    sliced_forward_suite::<C64, P>(10);
}

/// The gradient of ⟨W, U_p U_pᴴ⟩ + ⟨G, U_p diag(s_p) V_pᴴ⟩ through the
/// sliced factors on the eager face against the masked form's (which the
/// tests above check against finite differences on both faces); returns
/// the largest relative difference.
fn sliced_gradient<T: Scalar + Element, P: TestProvider>(seed: u64) -> f64
where
    Re<T>: Element,
{
    let mut rng = Rng::new(seed);
    let keep = Truncation::Tolerance { atol: 0.0, rtol: 1e-2 };
    let mut worst = 0.0_f64;
    for (m, n) in [(7, 5), (5, 7)] {
        let a = rng.with_spectrum::<T>(m, n, &SPECTRUM);
        let w = weight(Obs::ProjU, core::slice::from_ref(&a), &mut rng).unwrap();
        let g = weight(Obs::Recon, core::slice::from_ref(&a), &mut rng).unwrap();
        let xs = [Input::matrix(&a), w, g];
        let loss =
            |f: &mut Eager<Direct<P>>, v: &[Tracked<Tensor>], sliced: bool| -> Result<Tracked<Tensor>> {
                let t =
                    if sliced { f.svd_truncated_sliced(&v[0], keep)? } else { f.svd_truncated(&v[0], keep)? };
                let proj = f.matmul_with(&t.u, MatOp::Identity, &t.u, MatOp::Adjoint)?;
                let l1 = pairing(f, &v[1], &proj)?;
                let us = f.scale_cols(&t.u, &t.s)?;
                let x = f.matmul(&us, &t.vh)?;
                let l2 = pairing(f, &v[2], &x)?;
                f.binary(BinaryOp::Add, &l1, &l2)
            };
        let grads = |sliced: bool| -> Vec<Vec<T>> {
            let mut f: Eager<Direct<P>> = Eager::new(Direct::new(P::default()));
            let vars: Vec<Tracked<Tensor>> = xs
                .iter()
                .map(|x| {
                    let t = f.inner().tensor(&x.dims, &x.data).unwrap();
                    f.watch(t).unwrap()
                })
                .collect();
            let l = loss(&mut f, &vars, sliced).unwrap();
            let refs: Vec<&Tracked<Tensor>> = vars.iter().collect();
            f.backward(&l, &refs).unwrap().iter().map(|g| g.to_vec::<T>().unwrap()).collect()
        };
        let (cut, masked) = (grads(true), grads(false));
        for (c, mk) in cut.iter().zip(&masked) {
            let scale = mk.iter().map(|x| x.abs().to_f64()).fold(0.0, f64::max);
            let diff = c.iter().zip(mk).map(|(&x, &y)| (x - y).abs().to_f64()).fold(0.0, f64::max);
            worst = worst.max(diff / scale);
        }
    }
    assert!(worst <= 1e-13, "sliced vs masked gradient: {worst:e}");
    worst
}

fn sliced_on_the_eager_face_has_the_masked_gradient<P: TestProvider>(_provider: &P) {
    let real = sliced_gradient::<f64, P>(11);
    let complex = sliced_gradient::<C64, P>(12);
    eprintln!("svd_truncated_sliced vs masked gradient: f64 {real:e}, c64 {complex:e}");
}

lindiff_tests::providers!(
    nonzero_mask_is_exactly_zero_or_one,
    derivatives_7x5_and_5x7_f64,
    derivatives_7x5_and_5x7_c64,
    batched_with_a_rank_per_item,
    forward_rank_masking_and_kept_part,
    tangents_are_the_thin_ones_masked,
    sliced_on_the_direct_face,
    sliced_on_the_eager_face_has_the_masked_gradient
);
