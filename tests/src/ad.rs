//! The derivative-checking harness every AD test uses.
//!
//! A test writes its loss once, against the generic [`Face`] methods
//! ([`Loss::eval`]), and hands it to [`check`] with inputs in f64 or c64.
//! `check` evaluates the loss on every face lindiff has and compares:
//! * forward mode ([`Dual`]) against central finite differences along
//!   random directions (`docs/ad-rules.md#how-the-rules-are-tested`: step 1e-6·‖A‖, tolerance
//!   1e-8·max(|dL|, |L|); the closer of steps h and 4h, see
//!   `closest_difference`);
//! * the gradient by the eager face ([`Eager`] over [`Direct`]) and by the
//!   traced face ([`grad`] of the traced program, run by the interpreter on
//!   a pool allocator): **bit-identical**;
//! * the gradient against central finite differences entry by entry (real
//!   and imaginary parts) for inputs of up to [`ENTRYWISE_LIMIT`] entries:
//!   ‖g_i − g_fd,i‖∞ ≤ 1e-8·max(‖g_i‖∞, L/‖x_i‖) for each input x_i, with
//!   L = max(|L|, maxⱼ ‖g_j‖∞·‖x_j‖) the loss's magnitude;
//! * the dot-product test ⟨vjp(1), t⟩ = ⟨1, jvp(t)⟩ ≤ 1e-12 relative, with
//!   the JVP by forward mode and by the traced `jvp` program.
//!
//! Losses must be real scalars (rank 0) and gauge-invariant.

use crate::dense::{Dense, Re, Rng};
use lindiff_core::ad::{grad, jvp, Dual, DualTensor, Eager, Tangent};
use lindiff_core::face::direct::{Direct, Pool, Tensor};
use lindiff_core::face::Face;
use lindiff_core::ir::{Builder, Program};
use lindiff_core::{
    Element, Error, Host, HostData, Input as OpInput, Memory, Provider, RealScalar, Result, Scalar,
    TensorDesc, TensorMeta,
};

/// A real scalar function of some tensors, written once for every face.
pub trait Loss {
    /// What it computes (for failure messages).
    fn name(&self) -> String;

    /// The loss value: a real rank-0 tensor.
    ///
    /// # Errors
    /// Whatever the face methods it calls return.
    fn eval<F: Face + ?Sized>(&self, face: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor>;
}

/// One input of a loss: dims and column-major data.
#[derive(Clone, Debug)]
pub struct Input<T> {
    /// Dims (`[rows, cols, batch…]` for matrices).
    pub dims: Vec<usize>,
    /// Column-major elements.
    pub data: Vec<T>,
}

impl<T: Scalar> Input<T> {
    /// One matrix.
    pub fn matrix(m: &Dense<T>) -> Self {
        Input { dims: vec![m.rows, m.cols], data: m.data.clone() }
    }

    /// A batch of equally-sized matrices (`[rows, cols, count]`).
    pub fn batch(ms: &[Dense<T>]) -> Self {
        let data = ms.iter().flat_map(|m| m.data.iter().copied()).collect();
        Input { dims: vec![ms[0].rows, ms[0].cols, ms.len()], data }
    }

    /// Frobenius norm.
    pub fn norm(&self) -> f64 {
        self.data.iter().map(|x| x.abs2().to_f64()).sum::<f64>().sqrt()
    }

    /// `self + h·d`.
    pub fn axpy(&self, h: f64, d: &Input<T>) -> Self {
        let h = Re::<T>::from_f64(h);
        Input {
            dims: self.dims.clone(),
            data: self.data.iter().zip(&d.data).map(|(&x, &y)| x + y.scale(h)).collect(),
        }
    }

    /// A random direction with the same dims and Frobenius norm as `self`
    /// (or norm 1 when `self` is zero).
    pub fn random_direction(&self, rng: &mut Rng) -> Self {
        let data: Vec<T> = self.data.iter().map(|_| rng.scalar::<T>()).collect();
        let d = Input { dims: self.dims.clone(), data };
        let scale = if self.norm() > 0.0 { self.norm() / d.norm() } else { 1.0 / d.norm() };
        Input {
            dims: d.dims.clone(),
            data: d.data.iter().map(|x| x.scale(Re::<T>::from_f64(scale))).collect(),
        }
    }
}

/// ⟨x, y⟩ = Re Σ conj(x) y over all elements.
pub fn inner<T: Scalar>(x: &[T], y: &[T]) -> f64 {
    x.iter().zip(y).map(|(a, b)| (a.conj() * *b).re().to_f64()).sum()
}

/// The loss's value on the direct face.
///
/// # Panics
/// When the loss fails or is not a real scalar.
pub fn value<T: Scalar + Element, P: Provider<Memory = Host>, L: Loss>(
    face: &mut Direct<P>,
    loss: &L,
    xs: &[Input<T>],
) -> f64
where
    Re<T>: Element,
{
    let ts: Vec<Tensor> = xs.iter().map(|x| face.tensor(&x.dims, &x.data).unwrap()).collect();
    let l = loss.eval(face, &ts).unwrap_or_else(|e| panic!("{}: {e}", loss.name()));
    scalar::<Re<T>>(&l, &loss.name())
}

fn scalar<R: RealScalar + Element>(t: &Tensor, name: &str) -> f64 {
    assert_eq!(t.dims(), &[] as &[usize], "{name}: the loss must be a scalar");
    t.as_slice::<R>().unwrap_or_else(|e| panic!("{name}: {e}"))[0].to_f64()
}

/// The directional derivative of the loss along `ds` by forward mode.
///
/// # Errors
/// The loss's or a rule's error (an undefined derivative included).
pub fn forward<T: Scalar + Element, P: Provider<Memory = Host>, L: Loss>(
    provider: P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
) -> Result<f64>
where
    Re<T>: Element,
{
    let mut dual = Dual::new(Direct::new(provider));
    let mut ts = Vec::new();
    for (x, d) in xs.iter().zip(ds) {
        let primal = dual.inner().tensor(&x.dims, &x.data)?;
        let tangent = Tangent::Value(dual.inner().tensor(&d.dims, &d.data)?);
        ts.push(DualTensor { primal, tangent });
    }
    let l = loss.eval(&mut dual, &ts)?;
    match l.tangent {
        Tangent::Zero => Ok(0.0),
        Tangent::Value(t) => Ok(scalar::<Re<T>>(&t, &loss.name())),
        Tangent::Undefined(e) => Err(e),
    }
}

/// Central finite difference of the loss along `ds` with step `h`: the
/// reference of the derivative checks. It runs on `provider`, or on
/// host-cpu when the suite is on the `cuda` arm
/// ([`reference::is_on_host`](crate::reference::is_on_host)).
pub fn finite_difference<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
    h: f64,
) -> f64
where
    Re<T>: Element,
{
    fn central<T: Scalar + Element, Q: Provider<Memory = Host>, L: Loss>(
        provider: Q,
        loss: &L,
        xs: &[Input<T>],
        ds: &[Input<T>],
        h: f64,
    ) -> f64
    where
        Re<T>: Element,
    {
        let mut face = Direct::new(provider);
        let plus: Vec<Input<T>> = xs.iter().zip(ds).map(|(x, d)| x.axpy(h, d)).collect();
        let minus: Vec<Input<T>> = xs.iter().zip(ds).map(|(x, d)| x.axpy(-h, d)).collect();
        (value(&mut face, loss, &plus) - value(&mut face, loss, &minus)) / (2.0 * h)
    }
    crate::reference::evaluating(|| {
        if crate::reference::is_on_host() {
            central(crate::Cpu::default(), loss, xs, ds, h)
        } else {
            central(provider.clone(), loss, xs, ds, h)
        }
    })
}

/// What [`check`] measured: the worst error relative to its tolerance scale.
#[derive(Clone, Copy, Debug, Default)]
pub struct Report {
    /// max |dL − dL_fd| / max(|dL|, |L|) over the directions tried.
    pub forward_vs_fd: f64,
    /// max over inputs of ‖g_i − g_fd,i‖∞ / max(‖g_i‖∞, L/‖x_i‖) (entrywise finite differences;
    /// 0 when the inputs were too large to check entry by entry).
    pub grad_vs_fd: f64,
    /// max |⟨g, t⟩ − jvp(t)| / (‖g‖·‖t‖) over the directions tried
    /// (forward mode and the traced jvp program).
    pub dot_product: f64,
    /// Directions along which both forward faces reported a tie (only
    /// with [`CheckOptions::at_ties`]).
    pub forward_ties: usize,
}

/// Inputs with at most this many entries in all get the entrywise
/// finite-difference gradient check.
pub const ENTRYWISE_LIMIT: usize = 64;

/// Gradients of the loss with respect to every input, on the eager face.
///
/// # Errors
/// The loss's or a rule's error.
pub fn eager_grad<T: Scalar + Element, P: Provider<Memory = Host>, L: Loss>(
    provider: P,
    loss: &L,
    xs: &[Input<T>],
) -> Result<Vec<Vec<T>>> {
    let mut face: Eager<Direct<P>> = Eager::new(Direct::new(provider));
    let mut vars = Vec::new();
    for x in xs {
        let t = face.inner().tensor(&x.dims, &x.data)?;
        vars.push(face.watch(t)?);
    }
    let l = loss.eval(&mut face, &vars)?;
    let refs: Vec<_> = vars.iter().collect();
    let grads = face.backward(&l, &refs)?;
    grads.iter().map(|g| g.to_vec::<T>()).collect()
}

/// Gradients of the loss with respect to every input by the traced face:
/// trace, `grad`, compile, run on a pool allocator.
///
/// # Errors
/// The loss's or a rule's error; the interpreter's.
pub fn traced_grad<T: Scalar + Element, P: Provider<Memory = Host>, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
) -> Result<Vec<Vec<T>>> {
    let (program, descs) = trace(loss, xs)?;
    let wrt: Vec<usize> = (0..xs.len()).collect();
    let g = grad(&program, &wrt)?;
    let outs = run_program(provider, &g, &descs, xs)?;
    Ok(outs.into_iter().skip(1).collect())
}

/// The loss traced into a program (one parameter per input).
///
/// # Errors
/// The loss's shape errors.
pub fn trace<T: Scalar + Element, L: Loss>(loss: &L, xs: &[Input<T>]) -> Result<(Program, Vec<TensorDesc>)> {
    let mut b: Builder = Builder::new();
    let mut params = Vec::new();
    let mut descs = Vec::new();
    for x in xs {
        let meta = TensorMeta::new(T::DTYPE, lindiff_core::Shape::new(&x.dims).unwrap());
        params.push(b.param(meta.clone())?);
        descs.push(TensorDesc::contiguous(meta).unwrap());
    }
    let l = loss.eval(&mut b, &params)?;
    Ok((b.finish(&[&l])?, descs))
}

/// Compiles `program` and runs it on `params` (the first `xs.len()`
/// parameters; further parameters are taken from `extra`), returning every
/// result as a `Vec<T>` (real results are widened to `T`).
///
/// # Errors
/// The interpreter's.
pub fn run_program<T: Scalar + Element, P: Provider<Memory = Host>>(
    provider: &P,
    program: &Program,
    descs: &[TensorDesc],
    xs: &[Input<T>],
) -> Result<Vec<Vec<T>>> {
    let desc_refs: Vec<&TensorDesc> = descs.iter().collect();
    let compiled = program.compile(provider, &desc_refs)?;
    let mut pool = Pool::new();
    let mut alloc = pool.allocator();
    let inputs: Vec<OpInput<'_, Host>> =
        xs.iter().zip(descs).map(|(x, d)| OpInput { desc: d, data: HostData::from_slice(&x.data) }).collect();
    let results = compiled.run(&mut alloc, &inputs)?;
    let mut out = Vec::new();
    for (meta, buffer) in results {
        let data = Host::data(&buffer).expect("a result is written");
        // The buffer may be a larger pool block: keep the tensor's elements.
        let numel = meta.shape.numel().unwrap();
        let v: Vec<T> = if meta.dtype == T::DTYPE {
            data.typed::<T>().unwrap()[..numel].to_vec()
        } else {
            data.typed::<Re<T>>().unwrap()[..numel].iter().map(|&r| T::from_real(r)).collect()
        };
        out.push(v);
        lindiff_core::Allocator::<Host>::release(&mut alloc, buffer);
    }
    Ok(out)
}

/// The directional derivative along `ds` by the traced `jvp` program.
///
/// # Errors
/// As [`traced_grad`].
pub fn traced_jvp<T: Scalar + Element, P: Provider<Memory = Host>, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
) -> Result<f64> {
    let (program, mut descs) = trace(loss, xs)?;
    let wrt: Vec<usize> = (0..xs.len()).collect();
    let j = jvp(&program, &wrt)?;
    descs.extend(descs.clone());
    let all: Vec<Input<T>> = xs.iter().chain(ds).cloned().collect();
    let outs = run_program(provider, &j, &descs, &all)?;
    Ok(outs[1][0].re().to_f64())
}

/// The AD tolerance for dtype `T`: 1e-8 in f64
/// (`docs/ad-rules.md#how-the-rules-are-tested`) and 2e-2 in
/// f32, where a 1e-6 step is below the rounding of the loss itself and the
/// f32 checks use a larger step (see [`step`]).
pub fn tolerance<T: Scalar>() -> f64 {
    if crate::dense::eps::<T>() > 1e-10 {
        2e-2
    } else {
        1e-8
    }
}

/// The relative finite-difference step for dtype `T`.
pub fn step<T: Scalar>() -> f64 {
    if crate::dense::eps::<T>() > 1e-10 {
        1e-2
    } else {
        1e-6
    }
}

/// The central difference along `ds` closest to `jvp` among the steps
/// [`step`] and 4·[`step`]. A central difference errs by truncation
/// (O(h²)) and by the forward's rounding amplified by 1/h; a provider whose
/// forward is accurate to ~100·eps (LAPACK's gesdd on some shapes) needs the
/// larger step, a strongly curved loss the smaller. Either error bounds the
/// comparison, so the better of the two is the fair one.
fn closest_difference<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
    jvp: f64,
) -> f64
where
    Re<T>: Element,
{
    let near = finite_difference(provider, loss, xs, ds, step::<T>());
    let far = finite_difference(provider, loss, xs, ds, 4.0 * step::<T>());
    if (far - jvp).abs() < (near - jvp).abs() {
        far
    } else {
        near
    }
}

/// The forward-mode derivative of the loss (value `l`) along `ds` against
/// the [`closest_difference`]: returns (jvp, relative error).
///
/// # Panics
/// When the derivative fails or the error exceeds [`tolerance`].
fn forward_vs_fd<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    ds: &[Input<T>],
    l: f64,
) -> (f64, f64)
where
    Re<T>: Element,
{
    let name = loss.name();
    let jvp = forward(provider.clone(), loss, xs, ds).unwrap_or_else(|e| panic!("{name}: jvp: {e}"));
    let fd = closest_difference(provider, loss, xs, ds, jvp);
    let err = (jvp - fd).abs() / jvp.abs().max(l.abs()).max(f64::MIN_POSITIVE);
    assert!(
        err <= tolerance::<T>(),
        "{name}: forward-mode derivative {jvp:e} vs finite differences {fd:e} (relative error {err:e}, L = {l:e})"
    );
    (jvp, err)
}

/// Checks every derivative of `loss` at `xs` (see the module docs) and
/// returns what it measured.
///
/// # Panics
/// On any failed comparison, naming the loss and the check.
pub fn check<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
) -> Report
where
    Re<T>: Element,
{
    check_with(provider, loss, xs, CheckOptions::default())
}

/// Only the forward-mode part of [`check`]: the directional derivative
/// against finite differences along three random directions. For points
/// where the forward tangent is finite but reverse mode is not defined
/// (e.g. an LU whose last pivot is zero: see `tests/tests/ad_lu.rs`).
///
/// # Panics
/// When the derivative fails or disagrees.
pub fn check_forward<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
) -> f64
where
    Re<T>: Element,
{
    let mut face = Direct::new(provider.clone());
    let l = value(&mut face, loss, xs);
    let mut rng = Rng::new(0x5eed ^ xs.iter().map(|x| x.data.len() as u64).sum::<u64>());
    let mut worst = 0.0f64;
    for _ in 0..3 {
        let ds: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        let (_, err) = forward_vs_fd(provider, loss, xs, &ds, l);
        worst = worst.max(err);
    }
    worst
}

/// Tolerances of [`check_with`] that a test may loosen, saying why.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckOptions {
    /// The dot-product tolerance relative to ‖vjp(1)‖·‖t‖ (default 1e-12 in
    /// f64, 1e-4 in f32). An ill-conditioned linear map — the opt-in
    /// Lorentzian broadening at an exact tie has coefficients ~ gap/ε² — needs more.
    pub dot: Option<f64>,
    /// The inputs have exactly tied values (or zero singular values):
    /// forward mode may report a direction that couples their vectors
    /// (docs/ad-rules.md#second-order), on both faces alike; the reverse
    /// gradient is still checked.
    pub ties: bool,
}

impl CheckOptions {
    /// Inputs with exact ties ([`CheckOptions::ties`]).
    pub fn at_ties(mut self) -> Self {
        self.ties = true;
        self
    }

    /// Sets the dot-product tolerance.
    pub fn dot(mut self, tolerance: f64) -> Self {
        self.dot = Some(tolerance);
        self
    }
}

/// [`check`] with loosened tolerances.
///
/// # Panics
/// On any failed comparison, naming the loss and the check.
pub fn check_with<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    options: CheckOptions,
) -> Report
where
    Re<T>: Element,
{
    let mut face = Direct::new(provider.clone());
    let l = value(&mut face, loss, xs);
    let mut rng = Rng::new(0x5eed ^ xs.iter().map(|x| x.data.len() as u64).sum::<u64>());
    let name = loss.name();
    let mut report = Report::default();
    let eager = eager_grad(provider.clone(), loss, xs).unwrap_or_else(|e| panic!("{name}: eager grad: {e}"));
    let traced = traced_grad(provider, loss, xs).unwrap_or_else(|e| panic!("{name}: traced grad: {e}"));
    assert_same_gradients(&name, xs, &eager, &traced);
    let finite = |x: &T| x.re().to_f64().is_finite() && x.im().to_f64().is_finite();
    assert!(eager.iter().flatten().all(finite), "{name}: non-finite gradient {eager:?}");
    let g_norm = eager.iter().flatten().map(|x| x.abs2().to_f64()).sum::<f64>().sqrt();
    for _ in 0..3 {
        let ds: Vec<Input<T>> = xs.iter().map(|x| x.random_direction(&mut rng)).collect();
        if options.ties {
            if let Err(e) = forward(provider.clone(), loss, xs, &ds) {
                assert!(is_forward_tie(&e), "{name}: jvp: {e}");
                let traced =
                    traced_jvp(provider, loss, xs, &ds).expect_err("the traced jvp reports the tie too");
                assert_eq!(traced, e, "{name}: the traced jvp reports another error");
                report.forward_ties += 1;
                continue;
            }
        }
        let (jvp, err) = forward_vs_fd(provider, loss, xs, &ds, l);
        report.forward_vs_fd = report.forward_vs_fd.max(err);
        // Dot-product test: ⟨g, t⟩ against the JVP, both ways of computing it.
        let gt: f64 = eager.iter().zip(&ds).map(|(g, d)| inner(g, &d.data)).sum();
        let traced_jvp =
            traced_jvp(provider, loss, xs, &ds).unwrap_or_else(|e| panic!("{name}: traced jvp: {e}"));
        let d_norm = ds.iter().map(|d| d.norm().powi(2)).sum::<f64>().sqrt();
        // Relative to the Cauchy–Schwarz scale ‖g‖·‖t‖ of the inner product.
        let scale = (g_norm * d_norm).max(f64::MIN_POSITIVE);
        for (what, j) in [("forward mode", jvp), ("traced jvp", traced_jvp)] {
            let err = (gt - j).abs() / scale;
            let tol = options.dot.unwrap_or(if crate::dense::eps::<T>() > 1e-10 { 1e-4 } else { 1e-12 });
            assert!(
                err <= tol,
                "{name}: dot-product test: <vjp(1), t> = {gt:e} vs {what} {j:e} (relative {err:e})"
            );
            report.dot_product = report.dot_product.max(err);
        }
    }
    let entries: usize = xs.iter().map(|x| x.data.len()).sum();
    if entries <= ENTRYWISE_LIMIT {
        report.grad_vs_fd = entrywise(provider, loss, xs, &eager, l);
    }
    report
}

/// Whether `e` is forward mode's report of a direction that couples tied
/// vectors (`TangentTieCheck`).
pub fn is_forward_tie(e: &Error) -> bool {
    use lindiff_core::op::internal::why::{FORWARD_NULL, FORWARD_TIE};
    matches!(e, Error::NotDifferentiable { why, .. } if *why == FORWARD_TIE || *why == FORWARD_NULL)
}

/// The (re, im) bits of a scalar, for comparisons that must be exact.
pub fn bits<T: Scalar>(x: &T) -> (u64, u64) {
    (x.re().to_f64().to_bits(), x.im().to_f64().to_bits())
}

/// Asserts one gradient per input, each of the input's size, and the
/// traced gradients equal to the eager ones bit for bit.
///
/// # Panics
/// On a count, a size or a bit that differs, naming the loss `name`.
pub fn assert_same_gradients<T: Scalar>(name: &str, xs: &[Input<T>], eager: &[Vec<T>], traced: &[Vec<T>]) {
    assert_eq!((eager.len(), traced.len()), (xs.len(), xs.len()), "{name}: one gradient per input");
    for (k, ((e, t), x)) in eager.iter().zip(traced).zip(xs).enumerate() {
        assert_eq!(
            (e.len(), t.len()),
            (x.data.len(), x.data.len()),
            "{name}: gradient {k} has the wrong size"
        );
        let (eb, tb): (Vec<_>, Vec<_>) = (e.iter().map(bits).collect(), t.iter().map(bits).collect());
        assert_eq!(eb, tb, "{name}: eager and traced gradients of input {k} differ");
    }
}

/// The direction that moves entry `i` of input `k` by `unit` (1, or i for
/// the imaginary part) and nothing else: one step of an entrywise finite
/// difference.
pub fn unit_direction<T: Scalar>(xs: &[Input<T>], k: usize, i: usize, unit: T) -> Vec<Input<T>> {
    xs.iter()
        .enumerate()
        .map(|(j, y)| {
            let mut data = vec![T::zero(); y.data.len()];
            if j == k {
                data[i] = unit;
            }
            Input { dims: y.dims.clone(), data }
        })
        .collect()
}

/// Entrywise central differences of the loss against its gradient `g`:
/// each real (and, for complex `T`, imaginary) part of every entry, input
/// k with the step [`step`]·‖x_k‖ (1 for a zero input). Returns
/// (max |g − g_fd|, ‖g‖∞) over all inputs, for the caller's criterion.
///
/// # Panics
/// On a non-finite gradient entry.
pub fn entrywise_errors<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    g: &[Vec<T>],
) -> (f64, f64)
where
    Re<T>: Element,
{
    let name = loss.name();
    let i_unit = T::from_parts(Re::<T>::zero(), Re::<T>::one());
    let units: &[T] = if T::IS_COMPLEX { &[T::one(), i_unit] } else { &[T::one()] };
    let (mut err, mut g_inf) = (0.0f64, 0.0f64);
    for (k, (x, gk)) in xs.iter().zip(g).enumerate() {
        let h = step::<T>() * if x.norm() > 0.0 { x.norm() } else { 1.0 };
        for (i, &gi) in gk.iter().enumerate() {
            for (part, &unit) in units.iter().enumerate() {
                let fd = finite_difference(provider, loss, xs, &unit_direction(xs, k, i, unit), h);
                let gv = if part == 0 { gi.re() } else { gi.im() }.to_f64();
                assert!(gv.is_finite(), "{name}: gradient entry ({k}, {i}) = {gv}");
                err = err.max((gv - fd).abs());
                g_inf = g_inf.max(gi.abs().to_f64());
            }
        }
    }
    (err, g_inf)
}

/// The entrywise finite-difference gradient check; returns the error.
fn entrywise<T: Scalar + Element, P: Provider<Memory = Host> + Clone, L: Loss>(
    provider: &P,
    loss: &L,
    xs: &[Input<T>],
    g: &[Vec<T>],
    l: f64,
) -> f64
where
    Re<T>: Element,
{
    let name = loss.name();
    let complex = T::DTYPE.is_complex();
    let mut worst = 0.0f64;
    let mut g_max = 0.0f64;
    // The loss's magnitude: |L|, or the size of its terms when they cancel
    // (‖g_j‖∞·‖x_j‖ over the inputs) — what finite differences resolve.
    let l_scale = xs.iter().zip(g).fold(l.abs(), |acc, (x, gj)| {
        let gj_max = gj.iter().take(x.data.len()).fold(0.0f64, |m, v| m.max(v.abs().to_f64()));
        acc.max(gj_max * x.norm())
    });
    for (i, x) in xs.iter().enumerate() {
        // Per input: a step of its own and the criterion's scale
        // max(‖g_i‖∞, L/‖x_i‖), so inputs of very different scales (a
        // matrix at 1e-150 next to a weight of order 1) are each measured
        // against their own derivative's size.
        let x_norm = x.norm().max(f64::MIN_POSITIVE);
        let h = step::<T>() * x_norm;
        let mut errors = Vec::new();
        let mut gi_max = 0.0f64;
        for (e, &gi) in g[i].iter().enumerate().take(x.data.len()) {
            let mut parts = [0.0; 2];
            for (part, unit) in [(0, T::one()), (1, T::from_parts(Re::<T>::zero(), Re::<T>::one()))] {
                if part == 1 && !complex {
                    continue;
                }
                let ds = unit_direction(xs, i, e, unit);
                parts[part] = finite_difference(provider, loss, xs, &ds, h);
            }
            gi_max = gi_max.max(gi.abs().to_f64());
            errors.push((gi.re().to_f64() - parts[0]).abs().max((gi.im().to_f64() - parts[1]).abs()));
        }
        let scale = gi_max.max(l_scale / x_norm).max(f64::MIN_POSITIVE);
        worst = errors.into_iter().fold(worst, |w, e| w.max(e / scale));
        g_max = g_max.max(gi_max);
    }
    assert!(
        worst <= tolerance::<T>(),
        "{name}: gradient vs entrywise finite differences: relative error {worst:e} (‖g‖∞ = {g_max:e})"
    );
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use lindiff_core::{Exec, HostBuffer, Op, Output, WorkspaceReq};

    /// A provider that refuses every call (a device the reference must not use).
    #[derive(Clone, Copy, Debug, Default)]
    struct Refuses;

    impl Provider for Refuses {
        type Memory = Host;
        fn name(&self) -> &'static str {
            "refuses"
        }
        fn exec(&self) -> Exec {
            Exec::serial()
        }
        fn workspace(&self, _: &Op, _: &[&TensorDesc]) -> Result<WorkspaceReq> {
            Err(lindiff_core::Error::ProviderUnavailable { provider: "refuses", why: "test" })
        }
        unsafe fn run_into<'m>(
            &self,
            _: &Op,
            _: &[OpInput<'_, Host>],
            _: &mut [Option<Output<'_, 'm, Host>>],
            _: &mut HostBuffer<'m>,
        ) -> Result<()> {
            Err(lindiff_core::Error::ProviderUnavailable { provider: "refuses", why: "test" })
        }
    }

    /// Σ x, the simplest loss.
    struct Sum;
    impl Loss for Sum {
        fn name(&self) -> String {
            "sum".into()
        }
        fn eval<F: Face + ?Sized>(&self, face: &mut F, xs: &[F::Tensor]) -> Result<F::Tensor> {
            crate::losses::total(face, &xs[0])
        }
    }

    #[test]
    fn the_reference_runs_on_host_cpu_under_on_host() {
        let xs = [Input { dims: vec![2, 2], data: vec![1.0f64, 2.0, 3.0, 4.0] }];
        let ds = [Input { dims: vec![2, 2], data: vec![1.0f64; 4] }];
        // On the cpu arm the reference uses the suite's provider …
        let cpu = finite_difference(&crate::Cpu::default(), &Sum, &xs, &ds, 1e-3);
        assert!((cpu - 4.0).abs() < 1e-9, "{cpu}");
        let refused = std::panic::catch_unwind(|| finite_difference(&Refuses, &Sum, &xs, &ds, 1e-3));
        assert!(refused.is_err(), "the reference ran on the suite's provider");
        // … under `on_host` (the cuda arm) it never calls it.
        let host = crate::reference::on_host(|| finite_difference(&Refuses, &Sum, &xs, &ds, 1e-3));
        assert_eq!(host.to_bits(), cpu.to_bits());
        assert!(!crate::reference::is_on_host(), "the flag is restored");
    }
}
