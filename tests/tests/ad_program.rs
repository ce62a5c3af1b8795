//! Programs and the machinery around the rules: pruning after AD, peak
//! memory known before a run and exact for an arena, gradients with zero
//! global allocations in steady state (eager and traced), and the errors a
//! user meets (an unsupported derivative names op and output, gradients
//! only with respect to watched tensors, real losses only), and a program
//! of 100 000 instructions on the default stack.

use core::mem::MaybeUninit;
use lindiff_core::ad::{grad, Eager};
use lindiff_core::face::direct::{Direct, Pool};
use lindiff_core::ir::{passes, Builder, Program};
use lindiff_core::op::{EighOptions, LinalgOp, SvdOptions};
use lindiff_core::prim::{ReduceOp, UnaryOp};
use lindiff_core::var::trace_value_and_grad;
use lindiff_core::{
    Arena, DType, Error, Face, Host, HostData, Input, Memory, Op, Ops, PrimOp, Result, Shape, TensorDesc,
    TensorMeta,
};
use lindiff_tests::counting::{count, expect_zero, Counting};
use lindiff_tests::dense::Rng;
use lindiff_tests::TestProvider;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn meta(dims: &[usize]) -> TensorMeta {
    TensorMeta::new(DType::F64, Shape::new(dims).unwrap())
}

/// Σ |x|² over a matrix.
fn sum_sq<F: Face + ?Sized>(f: &mut F, x: &F::Tensor) -> Result<F::Tensor> {
    let sq = f.unary(UnaryOp::Abs2, x)?;
    f.reduce(ReduceOp::Sum, &sq, 2)
}

fn ops<const I: usize, const V: usize>(p: &Program<I, V>) -> Vec<&'static str> {
    p.instrs().iter().map(|i| i.op.name()).collect()
}

#[test]
fn pruning_after_ad() {
    // SVD with only s used becomes svd_vals; with only U used, V is dropped.
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[5, 3])).unwrap();
    let f = b.svd(&a).unwrap();
    let l = b.reduce(ReduceOp::Sum, &f.s, 1).unwrap();
    let mut p = b.finish(&[&l]).unwrap();
    passes::optimize(&mut p).unwrap();
    assert_eq!(ops(&p), ["svd_vals", "sum"]);

    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[5, 3])).unwrap();
    let f = b.svd(&a).unwrap();
    let l = sum_sq(&mut b, &f.u).unwrap();
    let mut p = b.finish(&[&l]).unwrap();
    passes::optimize(&mut p).unwrap();
    match &p.instrs()[0].op {
        Op::Linalg(LinalgOp::Svd(s)) => {
            assert_eq!(s.0, SvdOptions::default().vectors(lindiff_core::op::SvdVectors::Left))
        }
        other => panic!("expected a left-only svd, got {other:?}"),
    }

    // eigh values only → eigh_vals.
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[4, 4])).unwrap();
    let e = b.eigh_with_options(&a, EighOptions::default()).unwrap();
    let l = b.reduce(ReduceOp::Sum, &e.w, 1).unwrap();
    let mut p = b.finish(&[&l]).unwrap();
    passes::optimize(&mut p).unwrap();
    assert_eq!(ops(&p), ["eigh_vals", "sum"]);

    // The fused solve is never pruned, even with only x used.
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[4, 4])).unwrap();
    let r = b.param(meta(&[4, 2])).unwrap();
    let x = b.solve(&a, &r).unwrap();
    let l = sum_sq(&mut b, &x).unwrap();
    let mut p = b.finish(&[&l]).unwrap();
    passes::optimize(&mut p).unwrap();
    assert_eq!(ops(&p), ["lu_factor_solve", "abs2", "sum"]);

    // Dead code goes: an unused QR disappears.
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[4, 4])).unwrap();
    let _unused = b.qr(&a).unwrap();
    let l = sum_sq(&mut b, &a).unwrap();
    let mut p = b.finish(&[&l]).unwrap();
    passes::optimize(&mut p).unwrap();
    assert_eq!(ops(&p), ["abs2", "sum"]);
}

#[test]
fn a_loss_of_the_values_alone_builds_no_coupling() {
    // Reverse mode runs svd_vals as svd for its vectors, and a loss of
    // svd's s or eigh's w alone reads no vector: the gradient is
    // U diag(ḡ) Vᴴ (V diag(ḡ) Vᴴ), one matmul, no coupling matrix, and the
    // check reads the values alone (no n×n zero cotangents).
    let svd = trace_value_and_grad([meta(&[6, 4])], |[a]| a.svd_vals().sum()).unwrap();
    let eigh = trace_value_and_grad([meta(&[5, 5])], |[a]| a.eigh().w.sum()).unwrap();
    for (p, decomposition) in [(&svd, "svd"), (&eigh, "eigh")] {
        let names = ops(p);
        assert!(names.contains(&decomposition), "{names:?}");
        assert!(names.contains(&"values_check"), "{decomposition}: {names:?}");
        for absent in ["pair_inv", "svd_gauge_check", "eigh_gauge_check"] {
            assert!(!names.contains(&absent), "{decomposition}: {absent} in {names:?}");
        }
        assert_eq!(names.iter().filter(|&&n| n == "matmul").count(), 1, "{decomposition}: {names:?}");
    }
}

#[test]
fn real_data_is_never_conjugated() {
    // The rules conjugate no real data: neither a primal (abs2's and abs's
    // rules) nor a tangent or cotangent (transposes, inv's rule) gets a
    // conjugating copy, while complex data keeps its conj.
    let is_conj = |op: &Op| matches!(op, Op::Prim(PrimOp::Unary(u)) if u.0 == UnaryOp::Conj);
    let loss = |[a]: [lindiff_core::var::Var<_>; 1]| a.abs2().sum() + a.inv().abs().sum();
    for (dtype, conj_expected) in [(DType::F64, false), (DType::C64, true)] {
        let m = TensorMeta::new(dtype, Shape::new(&[3, 3]).unwrap());
        let p = trace_value_and_grad([m], loss).unwrap();
        let conjs = p.instrs().iter().filter(|i| is_conj(&i.op)).count();
        assert_eq!(conjs > 0, conj_expected, "{dtype:?}: {conjs} conj in {:?}", ops(&p));
    }
}

#[test]
fn derivatives_that_pass_a_parameter_through_compile_and_run() {
    // The tangent of x + c is dx and the cotangent of x is ȳ: the JVP and
    // VJP programs return a copy of a parameter, which compiles and runs.
    let m = meta(&[3]);
    let mut b: Builder = Builder::new();
    let x = b.param(m.clone()).unwrap();
    let c = b.param(m.clone()).unwrap();
    let y = b.binary(lindiff_core::prim::BinaryOp::Add, &x, &c).unwrap();
    let program = b.finish(&[&y]).unwrap();
    let mut face = Direct::new(lindiff_cpu::Cpu::new());
    let (xs, cs, ts) = ([1.0f64, 2.0, 3.0], [0.5f64, 0.25, 0.125], [7.0f64, -8.0, 9.0]);
    let (xt, ct, tt) =
        (face.tensor(&[3], &xs).unwrap(), face.tensor(&[3], &cs).unwrap(), face.tensor(&[3], &ts).unwrap());
    for (name, derived) in
        [("jvp", lindiff_core::ad::jvp(&program, &[0])), ("vjp", lindiff_core::ad::vjp(&program, &[0]))]
    {
        let derived = derived.unwrap();
        let params = [&xt, &ct, &tt];
        let descs: Vec<_> = params.iter().map(|t| t.desc()).collect();
        let cpu = lindiff_cpu::Cpu::new();
        let compiled = derived.compile(&cpu, &descs).unwrap_or_else(|e| panic!("{name}: {e}"));
        let out = face.run(&compiled, &params).unwrap();
        assert_eq!(out[0].to_vec::<f64>().unwrap(), vec![1.5, 2.25, 3.125], "{name}: y");
        assert_eq!(out[1].to_vec::<f64>().unwrap(), ts.to_vec(), "{name}: the derivative is the seed");
    }
}

/// A loss through QR and Cholesky: Σ|R|² + Σ|chol(AᴴA + I)|².
fn loss<F: Face + ?Sized>(f: &mut F, a: &F::Tensor) -> Result<F::Tensor> {
    let r = f.qr(a)?.r;
    let gram = f.matmul_with(a, MatOp::Adjoint, a, MatOp::Identity)?;
    let n = f.meta(a).shape.dims()[1];
    let eye = f.eye(DType::F64, n, &[])?;
    let spd = f.binary(lindiff_core::prim::BinaryOp::Add, &gram, &eye)?;
    let l = f.cholesky(&spd)?;
    let x = sum_sq(f, &r)?;
    let y = sum_sq(f, &l)?;
    f.binary(lindiff_core::prim::BinaryOp::Add, &x, &y)
}
use lindiff_core::MatOp;

fn input(m: usize, n: usize) -> Vec<f64> {
    let mut rng = Rng::new(11);
    rng.matrix::<f64>(m, n).data
}

fn peak_memory_is_exact_for_an_arena<P: TestProvider>(provider: &P) {
    let (m, n) = (6, 4);
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[m, n])).unwrap();
    let l = loss(&mut b, &a).unwrap();
    let g = grad(&b.finish(&[&l]).unwrap(), &[0]).unwrap();
    let desc = TensorDesc::contiguous(meta(&[m, n])).unwrap();
    let cpu = *provider;
    let compiled = g.compile(&cpu, &[&desc]).unwrap();
    let peak = compiled.peak_bytes();
    let align = compiled.alignment();
    assert!(peak > 0 && align.is_power_of_two());
    let data = input(m, n);
    let params = [Input { desc: &desc, data: HostData::from_slice(&data) }];
    // Room for exactly `peak` bytes at an aligned start: the run fits and
    // uses all of it.
    let mut bytes = vec![MaybeUninit::<u8>::uninit(); peak + align];
    let start = bytes.as_ptr().align_offset(align);
    let mut arena = Arena::new(&mut bytes[start..start + peak]);
    let results = compiled.run(&mut arena, &params).unwrap();
    assert_eq!(arena.peak(), peak);
    // The same gradient as the direct face gives.
    let got: Vec<f64> = Host::data(&results[1].1).unwrap().typed::<f64>().unwrap().to_vec();
    let mut eager: Eager<Direct<P>> = Eager::new(Direct::new(*provider));
    let t = eager.inner().tensor(&[m, n], &data).unwrap();
    let v = eager.watch(t).unwrap();
    let lv = loss(&mut eager, &v).unwrap();
    let want = eager.backward(&lv, &[&v]).unwrap()[0].to_vec::<f64>().unwrap();
    assert_eq!(got, want);
    drop(results);
    // One byte less does not fit, and says so.
    let mut arena = Arena::new(&mut bytes[start..start + peak - 1]);
    let err = compiled.run(&mut arena, &params).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
}

fn gradients_allocate_nothing_in_steady_state<P: TestProvider>(provider: &P) {
    let (m, n) = (8, 5);
    let data = input(m, n);
    // Eager: the tape and the pool are reused across iterations.
    let mut eager: Eager<Direct<P>> = Eager::new(Direct::new(*provider));
    let mut step = || {
        eager.clear();
        let t = eager.inner().tensor(&[m, n], &data).unwrap();
        let v = eager.watch(t).unwrap();
        let lv = loss(&mut eager, &v).unwrap();
        let g = eager.backward(&lv, &[&v]).unwrap();
        g[0].as_slice::<f64>().unwrap()[0]
    };
    let first = step();
    step();
    let (allocs, again) = count(&mut step);
    assert_eq!(again, first);
    println!("eager gradient ({m}×{n}): {allocs} allocations per step");
    // Zero on the host providers; measured and printed for cuda.
    expect_zero(provider.name(), allocs, "eager gradient in steady state");

    // Traced: compile once, run many on a reused pool and on an arena.
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[m, n])).unwrap();
    let l = loss(&mut b, &a).unwrap();
    let g = grad(&b.finish(&[&l]).unwrap(), &[0]).unwrap();
    let desc = TensorDesc::contiguous(meta(&[m, n])).unwrap();
    let cpu = *provider;
    let compiled = g.compile(&cpu, &[&desc]).unwrap();
    let params = [Input { desc: &desc, data: HostData::from_slice(&data) }];
    let mut pool = Pool::new();
    let mut run_pool = || {
        let mut alloc = pool.allocator();
        let results = compiled.run(&mut alloc, &params).unwrap();
        let x = Host::data(&results[1].1).unwrap().typed::<f64>().unwrap()[0];
        for (_, buffer) in results {
            lindiff_core::Allocator::<Host>::release(&mut alloc, buffer);
        }
        x
    };
    // Two warm-up runs, as for the eager face: the pool hands out its
    // smallest fitting free block, so its working set can take a second run
    // to settle (it does on host-blas, whose LAPACK workspaces have other
    // sizes than faer's).
    run_pool();
    run_pool();
    let (allocs, x) = count(&mut run_pool);
    assert_eq!(x, first);
    println!("traced gradient on a pool: {allocs} allocations per run");
    expect_zero(provider.name(), allocs, "traced gradient in steady state (pool)");
    let mut bytes = vec![MaybeUninit::<u8>::uninit(); compiled.peak_bytes() + compiled.alignment()];
    let (allocs, x) = count(|| {
        let mut arena = Arena::new(&mut bytes);
        let results = compiled.run(&mut arena, &params).unwrap();
        Host::data(&results[1].1).unwrap().typed::<f64>().unwrap()[0]
    });
    assert_eq!(x, first);
    println!("traced gradient on an arena: {allocs} allocations per run");
    expect_zero(provider.name(), allocs, "traced gradient (arena)");
}

fn a_compiled_gradient_runs_without_the_heap<P: TestProvider>(provider: &P) {
    // Programs grow on the heap here (the `alloc` feature); without it
    // (firmware) tracing, differentiating and compiling need none either,
    // which the firmware's test proves under an allocator that always
    // fails. A run takes every buffer from the caller's arena.
    let (m, n) = (6, 4);
    let data = input(m, n);
    let desc = TensorDesc::contiguous(meta(&[m, n])).unwrap();
    let mut bytes = vec![MaybeUninit::<u8>::uninit(); 1 << 20];
    let cpu = *provider;
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[m, n])).unwrap();
    let l = loss(&mut b, &a).unwrap();
    let g = grad(&b.finish(&[&l]).unwrap(), &[0]).unwrap();
    let compiled = g.compile(&cpu, &[&desc]).unwrap();
    let params = [Input { desc: &desc, data: HostData::from_slice(&data) }];
    let (allocs, first) = count(|| {
        let mut arena = Arena::new(&mut bytes);
        let results = compiled.run(&mut arena, &params).unwrap();
        Host::data(&results[1].1).unwrap().typed::<f64>().unwrap()[0]
    });
    assert!(first.is_finite());
    println!("compiled gradient run on an arena: {allocs} allocations");
    expect_zero(provider.name(), allocs, "a compiled gradient's run (the global heap)");
}

/// A program of 100 000 instructions builds, is differentiated, compiles
/// and runs on a test thread's default stack (storage grows on the heap):
/// x_{k+1} = c·x_k, L = Σ x_K², so ∂L/∂x₀ = 2 c^{2K} x₀.
fn a_program_of_100_000_instructions<P: TestProvider>(provider: &P) {
    const K: i32 = 100_000;
    let c = 1.0 - 1e-6;
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[2, 2])).unwrap();
    let mut x = a;
    for _ in 0..K {
        x = b.scale(&x, c).unwrap();
    }
    let l = sum_sq(&mut b, &x).unwrap();
    let program = b.finish(&[&l]).unwrap();
    assert!(program.instrs().len() > K as usize);
    let g = grad(&program, &[0]).unwrap();
    assert!(g.instrs().len() > 2 * K as usize, "{}", g.instrs().len());
    let desc = TensorDesc::contiguous(meta(&[2, 2])).unwrap();
    let cpu = *provider;
    let compiled = g.compile(&cpu, &[&desc]).unwrap();
    let data = [0.5, -1.0, 2.0, 0.25];
    let params = [Input { desc: &desc, data: HostData::from_slice(&data) }];
    let mut pool = Pool::new();
    let mut alloc = pool.allocator();
    let results = compiled.run(&mut alloc, &params).unwrap();
    let grad: Vec<f64> = Host::data(&results[1].1).unwrap().typed::<f64>().unwrap().to_vec();
    let factor = 2.0 * c.powi(2 * K);
    for (g, x) in grad.iter().zip(data) {
        assert!((g - factor * x).abs() <= 1e-9 * (factor * x).abs(), "{g} vs {}", factor * x);
    }
    for (_, buffer) in results {
        lindiff_core::Allocator::<Host>::release(&mut alloc, buffer);
    }
}

fn user_errors<P: TestProvider>(provider: &P) {
    let cpu = *provider;
    // A derivative that does not exist names op and output, on both faces.
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[4, 3])).unwrap();
    let f = b.rank_revealing_qr(&a, Default::default()).unwrap();
    let l = sum_sq(&mut b, &f.r).unwrap();
    let err = grad(&b.finish(&[&l]).unwrap(), &[0]).unwrap_err().to_string();
    assert!(err.starts_with("rank_revealing_qr: output `r` is not differentiable"), "{err}");
    let mut eager: Eager<Direct<P>> = Eager::new(Direct::new(cpu));
    let t = eager.inner().tensor(&[4, 3], &input(4, 3)).unwrap();
    let v = eager.watch(t.clone()).unwrap();
    let f = eager.rank_revealing_qr(&v, Default::default()).unwrap();
    let l = sum_sq(&mut eager, &f.r).unwrap();
    let err = eager.backward(&l, &[&v]).unwrap_err().to_string();
    assert!(err.starts_with("rank_revealing_qr: output `r` is not differentiable"), "{err}");
    // A loss that does not use the non-differentiable output is fine.
    let l = sum_sq(&mut eager, &v).unwrap();
    assert!(eager.backward(&l, &[&v]).is_ok());
    // Gradients only with respect to watched tensors of this tape.
    let c = Eager::<Direct<P>>::constant(t);
    let err = eager.backward(&l, &[&c]).unwrap_err().to_string();
    assert_eq!(err, "program: gradients are taken with respect to watched tensors of this tape");
    eager.clear();
    let err = eager.backward(&l, &[&v]).unwrap_err().to_string();
    assert_eq!(err, "program: gradients are taken with respect to watched tensors of this tape");
    // Real losses only; grad needs one result.
    let mut b: Builder = Builder::new();
    let a = b.param(TensorMeta::new(DType::C64, Shape::new(&[3, 3]).unwrap())).unwrap();
    let d = b.det(&a).unwrap();
    let err = grad(&b.finish(&[&d]).unwrap(), &[0]).unwrap_err().to_string();
    assert_eq!(err, "program: the loss must be real-valued");
    let mut b: Builder = Builder::new();
    let a = b.param(meta(&[3, 3])).unwrap();
    let err = grad(&b.clone().finish(&[&a, &a]).unwrap(), &[0]).unwrap_err().to_string();
    assert_eq!(err, "program: grad needs a program with exactly one result");
}

lindiff_tests::providers!(
    peak_memory_is_exact_for_an_arena,
    gradients_allocate_nothing_in_steady_state,
    a_compiled_gradient_runs_without_the_heap,
    a_program_of_100_000_instructions,
    user_errors
);
