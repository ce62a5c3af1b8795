//! Reverse mode factors A once (the fused solve): the gradient
//! of Σ|solve(A, b)|² with respect to A and b runs exactly one
//! factorization — the forward's fused `lu_factor_solve` — and the backward
//! pass reuses its factors through `lu_solve_prepared`; likewise
//! `full_piv_lu_solve` and `full_piv_lu_solve_prepared`. Checked on the
//! eager face (forward and backward counted separately) and on the traced
//! face (the compiled gradient program, counted while it runs), with a
//! provider wrapper that counts every op it runs by name.

use std::cell::RefCell;
use std::collections::HashMap;

use lindiff_core::ad::{grad, Eager};
use lindiff_core::face::direct::{Direct, Pool};
use lindiff_core::ir::Builder;
use lindiff_core::prim::{ReduceOp, UnaryOp};
use lindiff_core::{
    DType, Exec, Face, Host, HostData, Input, Memory, Op, Ops, Output, Provider, Result, Shape, TensorDesc,
    TensorMeta, WorkspaceReq,
};
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::TestProvider;

/// A provider that counts every op it runs, by name, and delegates.
struct CountingProvider<P> {
    inner: P,
    counts: RefCell<HashMap<&'static str, usize>>,
}

impl<P> CountingProvider<P> {
    fn new(inner: P) -> Self {
        CountingProvider { inner, counts: RefCell::new(HashMap::new()) }
    }

    /// The counts so far, and a fresh start.
    fn take(&self) -> HashMap<&'static str, usize> {
        std::mem::take(&mut *self.counts.borrow_mut())
    }
}

impl<P: Provider> Provider for CountingProvider<P> {
    type Memory = P::Memory;

    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn exec(&self) -> Exec {
        self.inner.exec()
    }

    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        self.inner.workspace(op, inputs)
    }

    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Self::Memory>],
        outputs: &mut [Option<Output<'_, 'm, Self::Memory>>],
        workspace: &mut <Self::Memory as Memory>::Buffer<'m>,
    ) -> Result<()> {
        *self.counts.borrow_mut().entry(op.name()).or_default() += 1;
        // SAFETY: the caller's guarantees are passed on unchanged.
        unsafe { self.inner.run_into(op, inputs, outputs, workspace) }
    }
}

/// The ops that factor a matrix.
const FACTORIZATIONS: [&str; 6] =
    ["lu_factor_solve", "lu_factor", "lu", "full_piv_lu", "full_piv_lu_factor", "full_piv_lu_solve"];

/// The solves that reuse saved factors.
const PREPARED: [&str; 2] = ["lu_solve_prepared", "full_piv_lu_solve_prepared"];

/// How many factorizations `counts` holds. Every op whose name mentions
/// `lu` must be a known factorization or a prepared solve, so a renamed or
/// new factorizing op cannot slip past.
fn factorizations(counts: &HashMap<&'static str, usize>) -> usize {
    for name in counts.keys() {
        assert!(
            !name.contains("lu") || FACTORIZATIONS.contains(name) || PREPARED.contains(name),
            "unknown LU-family op {name} ran"
        );
    }
    FACTORIZATIONS.iter().map(|name| counts.get(name).copied().unwrap_or(0)).sum()
}

/// Which fused solve.
#[derive(Clone, Copy, Debug)]
enum Fused {
    /// `solve`: partial-pivot LU.
    Partial,
    /// `full_piv_lu_solve`.
    Full,
}

impl Fused {
    /// The op the forward runs, and the prepared solve the backward must use.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Fused::Partial => ("lu_factor_solve", "lu_solve_prepared"),
            Fused::Full => ("full_piv_lu_solve", "full_piv_lu_solve_prepared"),
        }
    }
}

/// Σ|solve(a, b)|² (over every element, batch included).
fn loss<F: Face + ?Sized>(f: &mut F, fused: Fused, a: &F::Tensor, b: &F::Tensor) -> Result<F::Tensor> {
    let x = match fused {
        Fused::Partial => f.solve(a, b)?,
        Fused::Full => f.full_piv_lu_solve(a, b)?,
    };
    let sq = f.unary(UnaryOp::Abs2, &x)?;
    let rank = f.meta(&sq).shape.rank();
    f.reduce(ReduceOp::Sum, &sq, rank)
}

/// A well-conditioned a (`dims` = [n, n, batch…]) and b ([n, r, batch…]).
fn inputs(dims_a: &[usize], dims_b: &[usize], seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let (n, count) = (dims_a[0], dims_a[2..].iter().product::<usize>());
    let mut a = Vec::new();
    for _ in 0..count {
        a.extend(rng.with_spectrum::<f64>(n, n, &[2.2, 1.7, 1.3, 0.9][..n]).data);
    }
    let b: Vec<f64> = (0..dims_b.iter().product::<usize>()).map(|_| rng.centered()).collect();
    (a, b)
}

/// The eager gradient with the counts of forward and backward.
type Counted = (Vec<Vec<f64>>, HashMap<&'static str, usize>, HashMap<&'static str, usize>);

fn eager<P: TestProvider>(fused: Fused, dims_a: &[usize], dims_b: &[usize], a: &[f64], b: &[f64]) -> Counted {
    let mut face: Eager<Direct<CountingProvider<P>>> =
        Eager::new(Direct::new(CountingProvider::new(P::default())));
    let ta = face.inner().tensor(dims_a, a).unwrap();
    let tb = face.inner().tensor(dims_b, b).unwrap();
    let va = face.watch(ta).unwrap();
    let vb = face.watch(tb).unwrap();
    face.inner().provider().take();
    let l = loss(&mut face, fused, &va, &vb).unwrap();
    let forward = face.inner().provider().take();
    let grads = face.backward(&l, &[&va, &vb]).unwrap();
    let backward = face.inner().provider().take();
    let grads = grads.iter().map(|g| g.to_vec::<f64>().unwrap()).collect();
    (grads, forward, backward)
}

/// The traced gradient program: its op names, the gradients it computes and
/// the counts of its run.
fn traced<P: TestProvider>(
    fused: Fused,
    dims_a: &[usize],
    dims_b: &[usize],
    a: &[f64],
    b: &[f64],
) -> (Vec<&'static str>, Vec<Vec<f64>>, HashMap<&'static str, usize>) {
    let meta = |dims: &[usize]| TensorMeta::new(DType::F64, Shape::new(dims).unwrap());
    let mut builder: Builder = Builder::new();
    let pa = builder.param(meta(dims_a)).unwrap();
    let pb = builder.param(meta(dims_b)).unwrap();
    let l = loss(&mut builder, fused, &pa, &pb).unwrap();
    let program = builder.finish(&[&l]).unwrap();
    let g = grad(&program, &[0, 1]).unwrap();
    let ops: Vec<&'static str> = g.instrs().iter().map(|i| i.op.name()).collect();
    let descs =
        [TensorDesc::contiguous(meta(dims_a)).unwrap(), TensorDesc::contiguous(meta(dims_b)).unwrap()];
    let provider = CountingProvider::new(P::default());
    let compiled = g.compile(&provider, &[&descs[0], &descs[1]]).unwrap();
    provider.take();
    let mut pool = Pool::new();
    let mut alloc = pool.allocator();
    let params = [
        Input { desc: &descs[0], data: HostData::from_slice(a) },
        Input { desc: &descs[1], data: HostData::from_slice(b) },
    ];
    let results = compiled.run(&mut alloc, &params).unwrap();
    let counts = provider.take();
    let mut grads = Vec::new();
    for (k, (meta, buffer)) in results.into_iter().enumerate() {
        let len = meta.shape.dims().iter().product::<usize>();
        if k > 0 {
            grads.push(Host::data(&buffer).unwrap().typed::<f64>().unwrap()[..len].to_vec());
        }
        lindiff_core::Allocator::<Host>::release(&mut alloc, buffer);
    }
    (ops, grads, counts)
}

/// The gradient Σ|x|² → (A, b) by hand: x = A⁻¹b, ḡ_b = A⁻ᵀ 2x, ḡ_A = −ḡ_b xᵀ
/// (one unbatched matrix, naive Gaussian elimination, for the values).
fn by_hand(n: usize, r: usize, a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let a = Dense::from_col_major(n, n, a.to_vec());
    let b = Dense::from_col_major(n, r, b.to_vec());
    let solve = |m: &Dense<f64>, rhs: &Dense<f64>| -> Dense<f64> {
        // Gaussian elimination with partial pivoting on [m | rhs].
        let (mut m, mut x) = (m.clone(), rhs.clone());
        for k in 0..n {
            let p = (k..n).max_by(|&i, &j| m[(i, k)].abs().total_cmp(&m[(j, k)].abs())).unwrap();
            for j in 0..n {
                let t = m[(k, j)];
                m[(k, j)] = m[(p, j)];
                m[(p, j)] = t;
            }
            for j in 0..x.cols {
                let t = x[(k, j)];
                x[(k, j)] = x[(p, j)];
                x[(p, j)] = t;
            }
            for i in k + 1..n {
                let f = m[(i, k)] / m[(k, k)];
                for j in k..n {
                    m[(i, j)] -= f * m[(k, j)];
                }
                for j in 0..x.cols {
                    x[(i, j)] -= f * x[(k, j)];
                }
            }
        }
        for j in 0..x.cols {
            for i in (0..n).rev() {
                let mut s = x[(i, j)];
                for k in i + 1..n {
                    s -= m[(i, k)] * x[(k, j)];
                }
                x[(i, j)] = s / m[(i, i)];
            }
        }
        x
    };
    let x = solve(&a, &b);
    let two_x = Dense::from_fn(n, r, |i, j| 2.0 * x[(i, j)]);
    let gb = solve(&a.transpose(), &two_x);
    let ga = Dense::from_fn(n, n, |i, j| -(0..r).map(|k| gb[(i, k)] * x[(j, k)]).sum::<f64>());
    (ga.data, gb.data)
}

fn check_once<P: TestProvider>(fused: Fused, dims_a: &[usize], dims_b: &[usize], seed: u64) {
    let (a, b) = inputs(dims_a, dims_b, seed);
    let (forward_op, prepared) = fused.names();

    // Eager: the forward factors once, the backward not at all and uses the
    // prepared solve.
    let (g_eager, fwd, bwd) = eager::<P>(fused, dims_a, dims_b, &a, &b);
    println!("{fused:?} {dims_a:?} eager forward: {fwd:?}");
    println!("{fused:?} {dims_a:?} eager backward: {bwd:?}");
    assert_eq!(factorizations(&fwd), 1, "{fused:?}: forward factorizations {fwd:?}");
    assert_eq!(fwd.get(forward_op), Some(&1), "{fused:?}: the forward runs {forward_op}");
    assert_eq!(factorizations(&bwd), 0, "{fused:?}: the backward factored again: {bwd:?}");
    assert!(
        bwd.get(prepared).copied().unwrap_or(0) >= 1,
        "{fused:?}: the backward did not use {prepared}: {bwd:?}"
    );

    // Traced: the gradient program holds one factorization and the prepared
    // solve, and running it factors once.
    let (ops, g_traced, run) = traced::<P>(fused, dims_a, dims_b, &a, &b);
    println!("{fused:?} {dims_a:?} traced program: {ops:?}");
    println!("{fused:?} {dims_a:?} traced run: {run:?}");
    let in_program = ops.iter().filter(|name| FACTORIZATIONS.contains(name)).count();
    assert_eq!(in_program, 1, "{fused:?}: gradient program {ops:?}");
    assert!(ops.contains(&prepared), "{fused:?}: gradient program without {prepared}: {ops:?}");
    assert_eq!(factorizations(&run), 1, "{fused:?}: traced run {run:?}");
    assert_eq!(run.get(forward_op), Some(&1), "{fused:?}: the traced run runs {forward_op} once");
    assert!(
        run.get(prepared).copied().unwrap_or(0) >= 1,
        "{fused:?}: traced run without {prepared}: {run:?}"
    );

    // The same gradient on both faces, bit for bit, and the right one.
    assert_eq!(g_eager.len(), 2);
    for (k, (e, t)) in g_eager.iter().zip(&g_traced).enumerate() {
        let eb: Vec<u64> = e.iter().map(|x| x.to_bits()).collect();
        let tb: Vec<u64> = t.iter().map(|x| x.to_bits()).collect();
        assert_eq!(eb, tb, "{fused:?}: eager and traced gradient {k} differ");
    }
    if dims_a.len() == 2 {
        let (ga, gb) = by_hand(dims_a[0], dims_b[1], &a, &b);
        let scale = ga.iter().chain(&gb).fold(0.0f64, |m, x| m.max(x.abs()));
        for (got, want) in [(&g_eager[0], &ga), (&g_eager[1], &gb)] {
            let err = got.iter().zip(want.iter()).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
            assert!(err <= 1e-13 * scale, "{fused:?}: gradient off by {err:e} (scale {scale:e})");
        }
    }
}

/// The counting wrapper sees what it should: a plain factorization followed
/// by a prepared solve counts one of each (guards the counter itself).
fn the_counter_counts<P: TestProvider>(provider: &P) {
    let provider = CountingProvider::new(*provider);
    let mut face = Direct::new(provider);
    let (a, b) = inputs(&[3, 3], &[3, 1], 1);
    let ta = face.tensor(&[3, 3], &a).unwrap();
    let tb = face.tensor(&[3, 1], &b).unwrap();
    face.provider().take();
    let _ = face.solve(&ta, &tb).unwrap();
    let _ = face.lu(&ta).unwrap();
    let counts = face.provider().take();
    assert_eq!(factorizations(&counts), 2, "{counts:?}");
    assert_eq!((counts.get("lu_factor_solve"), counts.get("lu")), (Some(&1), Some(&1)));
}

fn reverse_mode_factors_a_once<P: TestProvider>(_provider: &P) {
    for fused in [Fused::Partial, Fused::Full] {
        check_once::<P>(fused, &[4, 4], &[4, 2], 3);
        check_once::<P>(fused, &[3, 3], &[3, 1], 4);
        check_once::<P>(fused, &[4, 4, 3], &[4, 2, 3], 5);
    }
}

lindiff_tests::providers!(the_counter_counts, reverse_mode_factors_a_once);
