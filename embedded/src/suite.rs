//! The checks the firmware runs: traced lindiff programs (forward and
//! gradient), compiled for the faer provider and run on an [`Arena`] over
//! the caller's bytes, each result compared with its closed form from
//! [`crate::dense`].
//!
//! The test matrix is A = Q diag(s) Rᵀ (Q, R orthogonal, s_i = n − i):
//! * `svd`: s(A) = s; U = Q D and V = R D with D the signs that make the
//!   largest-magnitude entry of each U column positive (lindiff's gauge).
//! * `solve`: A x = b with b = A x★ gives x★.
//! * `cholesky`: chol(L★ L★ᵀ) = L★.
//! * `grad Σs`: ∂(Σ s_i)/∂A = U Vᵀ = Q Rᵀ.
//! * `grad projector`: L = ‖U_k U_kᵀ A‖² = Σ_{i<k} s_i², ∂L/∂A = 2 Q_k diag(s_k) R_kᵀ.
//! * `grad solve`: L = ⟨c, A⁻¹ b⟩ = ⟨c, x★⟩; ∂L/∂b = A⁻ᵀ c = Q diag(1/s) Rᵀ c
//!   (also multiplied back: Aᵀ g = c) and ∂L/∂A = −(A⁻ᵀ c) x★ᵀ.
//! * `left-out op`: eig, whose op family this firmware does not link
//!   (shapes, rules, kernels), is a clean `Error::Unsupported` naming it.
//!
//! With the `matfun` feature the matrix functions and their gradients run
//! too ([`matfun`]).
//!
//! The gradients run on the Cortex-M4F only: on the Cortex-M3 reverse
//! mode's stack (≥ 120 KiB) does not fit the 64 KiB RAM
//! (`docs/embedded.md`; the flash, since the Jacobi SVD, might hold the AD code).

#[cfg(feature = "matfun")]
mod matfun;

use crate::dense::{self, max_abs_diff, Mat};
use crate::programs::{self, meta};
use crate::sink::Sink;
use crate::text::Line;
use core::mem::MaybeUninit;
use lindiff_core::ir::Program;
use lindiff_core::{Arena, Error, Host, HostData, Input, Memory, RealScalar, TensorDesc};
use lindiff_cpu::Cpu;

/// A peak this close to the stack region's size means the stack may have
/// run past its bottom (into the static data below it) and corrupted it.
const STACK_GUARD: usize = 256;

/// Largest order the fixed-size test data holds.
const MAX_N: usize = 64;

/// What a run found.
#[derive(Default)]
pub struct Outcome {
    /// Comparisons whose error exceeded the tolerance.
    pub failures: usize,
    /// Comparisons made.
    pub checks: usize,
    /// The largest arena any program needed (bytes).
    pub peak_arena: usize,
    /// The deepest stack any check used (bytes), if measured.
    pub peak_stack: Option<usize>,
}

/// A lindiff call failed: the check it belonged to and the error.
pub struct Failed {
    /// The check.
    pub check: &'static str,
    /// lindiff's error.
    pub error: Error,
}

/// Comparisons and their report.
pub struct Report<'s, S: Sink> {
    tol: f64,
    sink: &'s mut S,
    outcome: Outcome,
}

impl<S: Sink> Report<'_, S> {
    /// max |got − want| ≤ tol · max(max |want|, 1), reported on one line.
    /// In T: f64 arithmetic in the f32 build would link soft-float
    /// division and comparisons.
    fn compare<T: RealScalar>(&mut self, name: &str, got: &[T], want: &[T]) {
        let scale = want.iter().map(|w| w.abs()).fold(T::one(), T::max_real);
        let err = max_abs_diff(got, want) / scale;
        let ok = got.len() == want.len() && err <= T::from_f64(self.tol);
        let verdict = self.count(ok);
        Line::new(self.sink).s("  ").s(verdict).s(" ").padded(name, 40).s(" rel err ").sci(err, 2).end();
    }

    /// A yes/no check, reported on one line.
    fn verdict(&mut self, name: &str, ok: bool) {
        let verdict = self.count(ok);
        Line::new(self.sink).s("  ").s(verdict).s(" ").s(name).end();
    }

    fn count(&mut self, ok: bool) -> &'static str {
        self.outcome.checks += 1;
        if ok {
            "ok  "
        } else {
            self.outcome.failures += 1;
            "FAIL"
        }
    }
}

/// The test problem of order n (n ≤ `MAX_N`, n² ≤ `CAP`) and the memory it runs in.
pub struct Suite<'s, T, const CAP: usize, S: Sink> {
    n: usize,
    q: Mat<T, CAP>,
    r: Mat<T, CAP>,
    s: [T; MAX_N],
    a: Mat<T, CAP>,
    arena: &'s mut [MaybeUninit<u8>],
    report: Report<'s, S>,
}

impl<'s, T: RealScalar, const CAP: usize, S: Sink> Suite<'s, T, CAP, S> {
    /// The problem of order `n`; report lines go to `sink`, every buffer of
    /// every run comes from `arena` (whose start is aligned to 64 bytes).
    pub fn new(n: usize, sink: &'s mut S, arena: &'s mut [MaybeUninit<u8>]) -> Self {
        assert!(n <= MAX_N, "suite: order {n} above {MAX_N}");
        let q = dense::givens_q::<T, CAP>(n);
        let r = dense::householder_r::<T, CAP>(n);
        let mut s = [T::zero(); MAX_N];
        dense::singular_values(n, &mut s);
        let a = q.scale_cols(&s).mul(&r.transpose());
        // Backward-stable results of a problem with condition number n and
        // unit gaps have errors of order n·eps·‖A‖; 64·n·eps leaves room for
        // the constants (5e-5 for f32, 1e-13 for f64 at n = 8).
        let tol = 64.0 * n as f64 * T::EPSILON.to_f64();
        let report = Report { tol, sink, outcome: Outcome::default() };
        Suite { n, q, r, s, a, arena, report }
    }

    /// Runs every check. `Err` for a lindiff error, which fails the run too.
    pub fn run(mut self) -> Result<Outcome, Failed> {
        let n = self.n;
        let tol = self.report.tol;
        Line::new(self.report.sink)
            .s("lindiff embedded: ")
            .s(T::DTYPE.name())
            .s(", n = ")
            .n(n)
            .s(", tolerance ")
            .sci(T::from_f64(tol), 1)
            .s(" relative to the largest expected entry")
            .end();
        self.measured("svd", Self::svd)?;
        self.measured("solve", Self::solve)?;
        self.measured("cholesky", Self::cholesky)?;
        self.measured("left-out op", Self::left_out_op)?;
        if cfg!(feature = "mps2-an386") {
            self.measured("grad nuclear norm", Self::grad_nuclear)?;
            self.measured("grad projector", Self::grad_projector)?;
            self.measured("grad solve", Self::grad_solve)?;
        }
        #[cfg(feature = "matfun")]
        self.matrix_functions()?;
        Ok(self.report.outcome)
    }

    /// Runs one check between stack measurements (tracing, differentiating,
    /// compiling and running its program) and reports its peak stack.
    fn measured(
        &mut self,
        check: &'static str,
        run: fn(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Failed> {
        self.report.sink.stack_mark();
        run(self).map_err(|error| Failed { check, error })?;
        if let Some(bytes) = self.report.sink.stack_peak() {
            Line::new(self.report.sink).s(check).s(": stack ").n(bytes).s(" bytes").end();
            // Reported (and counted) only when it fails, so the check
            // counts stay those of the computations.
            let capacity = self.report.sink.stack_capacity().unwrap_or(usize::MAX);
            if bytes.saturating_add(STACK_GUARD) >= capacity {
                self.report.verdict("stack stayed inside its region", false);
            }
            let peak = self.report.outcome.peak_stack.get_or_insert(0);
            *peak = (*peak).max(bytes);
        }
        Ok(())
    }

    /// U = Q D, s, Vᴴ = (R D)ᵀ with D the gauge signs.
    fn svd(&mut self) -> Result<(), Error> {
        let n = self.n;
        let program = programs::svd::<T>(n)?;
        // The gauge: column i of U has its largest-magnitude entry positive.
        let mut d = [T::one(); MAX_N];
        for (j, dj) in d.iter_mut().enumerate().take(n) {
            let big =
                (0..n).map(|i| self.q.at(i, j)).fold(T::zero(), |m, x| if x.abs() > m.abs() { x } else { m });
            if big < T::zero() {
                *dj = -T::one();
            }
        }
        let want_u = self.q.scale_cols(&d);
        let want_vh = self.r.scale_cols(&d).transpose();
        let mut want_s = self.s;
        if cfg!(feature = "break-expectation") {
            // The negative test: a wrong expectation must fail the run.
            want_s[0] += T::one();
        }
        let Suite { arena, report, a: mat_a, .. } = self;
        execute(arena, report, "svd", &program, &[(mat_a.as_slice(), &[n, n])], &mut |rep, got| {
            rep.compare("svd: singular values", got[1], &want_s[..n]);
            rep.compare("svd: U = Q D", got[0], want_u.as_slice());
            rep.compare("svd: Vh = (R D)^T", got[2], want_vh.as_slice());
        })
    }

    /// x = A⁻¹ (A x★) = x★.
    fn solve(&mut self) -> Result<(), Error> {
        let n = self.n;
        let mut x_true = [T::zero(); MAX_N];
        dense::vector(n, 0, &mut x_true);
        let mut rhs = [T::zero(); MAX_N];
        self.a.apply(&x_true, &mut rhs);
        let program = programs::solve::<T>(n)?;
        let Suite { arena, report, a: mat_a, .. } = self;
        let params = [(mat_a.as_slice(), &[n, n][..]), (&rhs[..n], &[n, 1][..])];
        execute(arena, report, "solve", &program, &params, &mut |rep, got| {
            rep.compare("solve: x = x*", got[0], &x_true[..n]);
        })
    }

    /// chol(L★ L★ᵀ) = L★.
    fn cholesky(&mut self) -> Result<(), Error> {
        let n = self.n;
        let l_true = dense::cholesky_factor::<T, CAP>(n);
        let spd = l_true.mul(&l_true.transpose());
        let program = programs::cholesky::<T>(n)?;
        let Suite { arena, report, .. } = self;
        execute(arena, report, "cholesky", &program, &[(spd.as_slice(), &[n, n])], &mut |rep, got| {
            rep.compare("cholesky: L = L*", got[0], l_true.as_slice());
        })
    }

    /// eig is not linked (lindiff-core and lindiff-cpu without `op-eig`):
    /// tracing its program (the core's shapes) or, were the core's family
    /// on, compiling it (the CPU kernels) must fail cleanly, naming the op.
    fn left_out_op(&mut self) -> Result<(), Error> {
        let n = self.n;
        let error = match programs::eig::<T>(n) {
            Err(e) => Some(e),
            Ok(program) => {
                let desc = TensorDesc::contiguous(meta::<T>(&[n, n])?)
                    .ok_or(Error::Program { why: "a shape overflows" })?;
                program.compile(&Cpu::new(), &[&desc]).err()
            }
        };
        let ok = matches!(error, Some(Error::Unsupported { op: "eig", .. }));
        self.report.verdict("eig not linked: Error::Unsupported", ok);
        if let Some(e) = error {
            let line = Line::new(self.report.sink).s("       (");
            let line = match e {
                Error::Unsupported { op, provider, why } => {
                    line.s(op).s(": not supported by provider ").s(provider).s(": ").s(why)
                }
                other => error_line(line, &other),
            };
            line.s(")").end();
        }
        Ok(())
    }

    /// ∂(Σ s_i)/∂A = Q Rᵀ.
    fn grad_nuclear(&mut self) -> Result<(), Error> {
        let n = self.n;
        let program = programs::grad_nuclear::<T>(n)?;
        let want_loss = [T::from_usize(n * (n + 1) / 2)];
        let want_g = self.q.mul(&self.r.transpose());
        let Suite { arena, report, a: mat_a, .. } = self;
        execute(
            arena,
            report,
            "grad nuclear norm",
            &program,
            &[(mat_a.as_slice(), &[n, n])],
            &mut |rep, got| {
                rep.compare("grad sum(s): loss = n(n+1)/2", got[0], &want_loss);
                rep.compare("grad sum(s): dA = Q R^T", got[1], want_g.as_slice());
            },
        )
    }

    /// L = ‖U_k U_kᵀ A‖² = Σ_{i<k} s_i², ∂L/∂A = 2 Q_k diag(s_k) R_kᵀ.
    fn grad_projector(&mut self) -> Result<(), Error> {
        let n = self.n;
        let k = n / 2;
        let program = programs::grad_projector::<T>(n)?;
        let mut two_s = [T::zero(); MAX_N];
        let mut want_loss = T::zero();
        for (ts, &s) in two_s.iter_mut().zip(&self.s).take(k) {
            *ts = T::from_f64(2.0) * s;
            want_loss += s * s;
        }
        let want_g = self.q.scale_cols(&two_s).mul(&self.r.transpose());
        let Suite { arena, report, a: mat_a, .. } = self;
        execute(arena, report, "grad projector", &program, &[(mat_a.as_slice(), &[n, n])], &mut |rep, got| {
            rep.compare("grad |P_k A|^2: loss = sum s_i^2, i<k", got[0], &[want_loss]);
            rep.compare("grad |P_k A|^2: dA = 2 Q_k S_k R_k^T", got[1], want_g.as_slice());
        })
    }

    /// L = ⟨c, A⁻¹ b⟩: ∂L/∂b = Q diag(1/s) Rᵀ c, ∂L/∂A = −(∂L/∂b) x★ᵀ.
    fn grad_solve(&mut self) -> Result<(), Error> {
        let n = self.n;
        let (mut x_true, mut rhs, mut c) = ([T::zero(); MAX_N], [T::zero(); MAX_N], [T::zero(); MAX_N]);
        dense::vector(n, 1, &mut x_true);
        dense::vector(n, 2, &mut c);
        self.a.apply(&x_true, &mut rhs);
        let program = programs::grad_solve::<T>(n)?;
        // A⁻ᵀ = Q diag(1/s) Rᵀ.
        let mut inv_s = [T::zero(); MAX_N];
        for (inv, &s) in inv_s.iter_mut().zip(&self.s).take(n) {
            *inv = T::one() / s;
        }
        let inv_t = self.q.scale_cols(&inv_s).mul(&self.r.transpose());
        let mut want_gb = [T::zero(); MAX_N];
        inv_t.apply(&c, &mut want_gb);
        let mut want_ga = Mat::<T, CAP>::zeros(n);
        for (j, &xj) in x_true.iter().enumerate().take(n) {
            for (i, &gi) in want_gb.iter().enumerate().take(n) {
                want_ga.set(i, j, -gi * xj);
            }
        }
        let want_loss = (0..n).fold(T::zero(), |acc, i| acc + c[i] * x_true[i]);
        let a_t = self.a.transpose();
        let Suite { arena, report, a: mat_a, .. } = self;
        let params = [(mat_a.as_slice(), &[n, n][..]), (&rhs[..n], &[n, 1][..]), (&c[..n], &[n, 1][..])];
        execute(arena, report, "grad solve", &program, &params, &mut |rep, got| {
            rep.compare("grad <c, A^-1 b>: loss = <c, x*>", got[0], &[want_loss]);
            rep.compare("grad <c, A^-1 b>: db = Q S^-1 R^T c", got[2], &want_gb[..n]);
            let mut back = [T::zero(); MAX_N];
            a_t.apply(got[2], &mut back);
            rep.compare("grad <c, A^-1 b>: A^T db = c", &back[..n], &c[..n]);
            rep.compare("grad <c, A^-1 b>: dA = -db x*^T", got[1], want_ga.as_slice());
        })
    }
}

/// What a check does with a program's results (views into the arena).
type Check<'c, S, T> = dyn for<'r> FnMut(&mut Report<'r, S>, &[&[T]]) + 'c;

/// Compiles `program` for the CPU provider, runs it on an arena over
/// `bytes` with `params` (column-major data and dims), and hands the
/// results to `check` while they still borrow the arena. One instance per
/// program capacity (`check` is dynamic), not one per check: flash.
#[inline(never)]
fn execute<T: RealScalar, S: Sink, const I: usize, const V: usize>(
    bytes: &mut [MaybeUninit<u8>],
    report: &mut Report<'_, S>,
    name: &str,
    program: &Program<I, V>,
    params: &[(&[T], &[usize])],
    check: &mut Check<'_, S, T>,
) -> Result<(), Error> {
    let cpu = Cpu::new();
    let mut descs = heapless::Vec::<TensorDesc, 4>::new();
    for (_, dims) in params {
        let d =
            TensorDesc::contiguous(meta::<T>(dims)?).ok_or(Error::Program { why: "a shape overflows" })?;
        descs.push(d).map_err(|_| Error::Program { why: "more than four parameters" })?;
    }
    let refs: heapless::Vec<&TensorDesc, 4> = descs.iter().collect();
    let compiled = program.compile(&cpu, &refs)?;
    let peak = compiled.peak_bytes();
    report.outcome.peak_arena = report.outcome.peak_arena.max(peak);
    Line::new(report.sink)
        .s(name)
        .s(": ")
        .n(program.instrs().len())
        .s(" ops, arena ")
        .n(peak)
        .s(" bytes")
        .end();
    let inputs: heapless::Vec<Input<'_, Host>, 4> = params
        .iter()
        .zip(&descs)
        .map(|((data, _), desc)| Input { desc, data: HostData::from_slice(data) })
        .collect();
    let mut arena = Arena::new(bytes);
    let results = compiled.run(&mut arena, &inputs)?;
    let mut views = heapless::Vec::<&[T], 4>::new();
    for (_, buffer) in &results {
        let view = Host::data(buffer)
            .and_then(|d| d.typed::<T>())
            .ok_or(Error::Program { why: "a result is unwritten or misaligned" })?;
        views.push(view).map_err(|_| Error::Program { why: "more than four results" })?;
    }
    check(report, &views);
    Ok(())
}

/// Writes `error` as its kind and the op it names (`NonFinite in svd`):
/// the firmware does not link the error's `Display` (see [`crate::text`]).
pub fn error_line<'s, S: Sink>(line: Line<'s, S>, error: &Error) -> Line<'s, S> {
    let line = line.s(error.kind());
    match error.op() {
        Some(op) => line.s(" in ").s(op),
        None => line,
    }
}
