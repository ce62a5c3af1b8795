//! Elementwise fusion in compiled plans. A chain computes what its
//! primitives compute one by one, bit for bit (every link op, all four
//! dtypes, contiguous and strided inputs, a length that is no multiple of
//! the kernel's block); a compiled gradient plan fuses its rules' elementwise
//! steps and gives the bits of the same program run op by op on the eager
//! face; and a provider that refuses chains gets the unfused plan.

use lindiff_core::face::direct::Direct;
use lindiff_core::ir::{Builder, Program};
use lindiff_core::op::internal::{Chain, Link, LinkOp, Operand};
use lindiff_core::prim::{Binary, BinaryOp, PrimOp, Scale, Unary, UnaryOp};
use lindiff_core::var::{trace_value_and_grad, Var};
use lindiff_core::{
    DType, Error, Exec, Face, Host, HostBuffer, Input, Op, Ops, Output, Provider, RealScalar, Result, Scalar,
    Shape, TensorDesc, TensorMeta, WorkspaceReq,
};
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::host::{run, HostTensor};
use lindiff_tests::TestProvider;
use num_complex::Complex;

/// Runs a one-output op and returns its output.
fn run1<P: Provider<Memory = Host>>(p: &P, op: impl Into<Op>, inputs: &[&HostTensor]) -> HostTensor {
    let op = op.into();
    let name = op.name();
    run(p, op, inputs).unwrap_or_else(|e| panic!("{name}: {e}")).remove(0).expect("output present")
}

/// `[r, c, count]` matrices laid out row-major with a padded row, every
/// element outside the view NaN.
fn row_major<T: Scalar>(ms: &[Dense<T>]) -> HostTensor {
    let (r, c, count) = (ms[0].rows, ms[0].cols, ms.len());
    let ld = c + 1;
    let nan = T::from_parts(Scalar::from_f64(f64::NAN), Scalar::from_f64(f64::NAN));
    let mut data = vec![nan; count * r * ld];
    for (b, m) in ms.iter().enumerate() {
        for i in 0..r {
            for j in 0..c {
                data[b * r * ld + i * ld + j] = m[(i, j)];
            }
        }
    }
    let desc = TensorDesc {
        meta: TensorMeta::new(T::DTYPE, Shape::new(&[r, c, count]).unwrap()),
        strides: [ld, 1, r * ld].into_iter().collect(),
        offset: 0,
    };
    HostTensor::with_desc(desc, &data)
}

/// Equal bit patterns (a −0 against a +0, or two NaNs, would show).
fn same_bits<T: Scalar>(got: &HostTensor, want: &HostTensor, what: &str) {
    let parts = |v: Vec<T>| -> Vec<(u64, u64)> {
        v.iter().map(|x| (x.re().to_f64().to_bits(), x.im().to_f64().to_bits())).collect()
    };
    let (g, w) = (parts(got.to_vec::<T>()), parts(want.to_vec::<T>()));
    assert_eq!(g.len(), w.len(), "{what}: length");
    for (k, (a, b)) in g.iter().zip(&w).enumerate() {
        assert_eq!(a, b, "{what}[{k}]: chain vs primitives (bits of re, im)");
    }
}

/// ((x0 + x1)·x2, negated, conjugated, over x3, scaled by 3/8) − x0: every
/// link op, against the primitives run one by one.
fn chain_matches_primitives<T: Scalar, P: Provider<Memory = Host>>(p: &P, seed: u64) {
    let mut rng = Rng::new(seed);
    // 37·19·2 = 1406 elements: no multiple of the kernel's block of 64.
    let mats: Vec<Vec<Dense<T>>> = (0..4).map(|_| (0..2).map(|_| rng.matrix(37, 19)).collect()).collect();
    let mut chain = Chain::new(4);
    let l0 = chain.push(Link { op: LinkOp::Add, a: Operand::Input(0), b: Operand::Input(1) }).unwrap();
    let l1 = chain.push(Link { op: LinkOp::Mul, a: l0, b: Operand::Input(2) }).unwrap();
    let l2 = chain.push(Link { op: LinkOp::Neg, a: l1, b: l1 }).unwrap();
    let l3 = chain.push(Link { op: LinkOp::Conj, a: l2, b: l2 }).unwrap();
    let l4 = chain.push(Link { op: LinkOp::Div, a: l3, b: Operand::Input(3) }).unwrap();
    let l5 = chain.push(Link { op: LinkOp::Scale(0.375), a: l4, b: l4 }).unwrap();
    chain.push(Link { op: LinkOp::Sub, a: l5, b: Operand::Input(0) }).unwrap();
    // Contiguous inputs, and the same with x1 and x3 row-major.
    let contiguous: Vec<HostTensor> = mats.iter().map(|m| HostTensor::batch(m)).collect();
    let strided = |i: usize| if i % 2 == 1 { row_major(&mats[i]) } else { HostTensor::batch(&mats[i]) };
    let mixed: Vec<HostTensor> = (0..4).map(strided).collect();
    let bin = |op| PrimOp::Binary(Binary(op));
    let un = |op| PrimOp::Unary(Unary(op));
    for (layout, xs) in [("contiguous", &contiguous), ("strided", &mixed)] {
        let got = run1(p, chain.clone(), &xs.iter().collect::<Vec<_>>());
        let y = run1(p, bin(BinaryOp::Add), &[&xs[0], &xs[1]]);
        let y = run1(p, bin(BinaryOp::Mul), &[&y, &xs[2]]);
        let y = run1(p, un(UnaryOp::Neg), &[&y]);
        let y = run1(p, un(UnaryOp::Conj), &[&y]);
        let y = run1(p, bin(BinaryOp::Div), &[&y, &xs[3]]);
        let y = run1(p, PrimOp::Scale(Scale(0.375)), &[&y]);
        let want = run1(p, bin(BinaryOp::Sub), &[&y, &xs[0]]);
        assert_eq!(got.dims(), &[37, 19, 2]);
        same_bits::<T>(&got, &want, &format!("{:?} {layout}", T::DTYPE));
    }
}

/// Σ|U|⁴ + Σ|Vᴴ|⁴ + Σ s: a loss of the vectors (invariant under their
/// signs) whose rule builds elementwise chains.
fn loss<F: Face>(a: Var<F>) -> Var<F> {
    let f = a.svd();
    let (u2, v2) = (f.u.abs2(), f.vh.abs2());
    (&u2 * &u2).sum() + (&v2 * &v2).sum() + a.svd_vals().sum()
}

/// A provider that refuses chains (as one without a chain kernel does).
#[derive(Clone, Copy, Default)]
struct NoChains<P>(P);

impl<P: Provider<Memory = Host>> Provider for NoChains<P> {
    type Memory = Host;
    fn name(&self) -> &'static str {
        "no-chains"
    }
    fn exec(&self) -> Exec {
        self.0.exec()
    }
    fn workspace(&self, op: &Op, inputs: &[&TensorDesc]) -> Result<WorkspaceReq> {
        if op.name() == Chain::NAME {
            return Err(Error::Unsupported { op: Chain::NAME, provider: "no-chains", why: "no chains here" });
        }
        self.0.workspace(op, inputs)
    }
    unsafe fn run_into<'m>(
        &self,
        op: &Op,
        inputs: &[Input<'_, Host>],
        outputs: &mut [Option<Output<'_, 'm, Host>>],
        workspace: &mut HostBuffer<'m>,
    ) -> Result<()> {
        // SAFETY: the caller made `call`'s checks for this op; the inner
        // provider needs the same.
        unsafe { self.0.run_into(op, inputs, outputs, workspace) }
    }
}

/// The gradient plan of [`loss`] fuses, and its results are the bits of
/// the program run op by op (eval on the direct face) and of the plan on a
/// provider without chains, which has no chain.
fn plans_fuse_and_agree<P: TestProvider>(p: &P) {
    let n = 7;
    let meta = TensorMeta::new(DType::F64, Shape::new(&[n, n]).unwrap());
    let program = trace_value_and_grad([meta], |[a]| loss(a)).unwrap();
    let data = Rng::new(5).matrix::<f64>(n, n).data;

    let mut face = Direct::new(*p);
    let a = face.tensor(&[n, n], &data).unwrap();
    let compiled = program.compile(p, &[a.desc()]).unwrap();
    let chains = compiled.ops().filter(|op| op.name() == Chain::NAME).count();
    if runs_chains(p) {
        assert!(chains >= 2, "the SVD rule's elementwise steps fuse: {chains} chains");
        assert!(compiled.ops().count() < program.instrs().len());
    } else {
        assert_eq!(chains, 0, "{} refuses chains", p.name());
    }
    let fused = face.run(&compiled, &[&a]).unwrap();
    let by_op = program.eval(&mut face, &[&a]).unwrap();

    let plain = NoChains(*p);
    let mut plain_face = Direct::new(plain);
    let b = plain_face.tensor(&[n, n], &data).unwrap();
    let unfused = program.compile(&plain, &[b.desc()]).unwrap();
    assert!(unfused.ops().all(|op| op.name() != Chain::NAME));
    assert_eq!(unfused.ops().count(), program.instrs().len());
    let separate = plain_face.run(&unfused, &[&b]).unwrap();

    for (k, ((x, y), z)) in fused.iter().zip(by_op.iter()).zip(separate.iter()).enumerate() {
        let (x, y, z) = (x.to_vec::<f64>().unwrap(), y.to_vec::<f64>().unwrap(), z.to_vec::<f64>().unwrap());
        let bits = |v: &[f64]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&x), bits(&y), "result {k}: fused plan vs op by op");
        assert_eq!(bits(&x), bits(&z), "result {k}: fused vs unfused plan");
    }
}

/// Whether `p` runs chains (lindiff-cpu and the providers built on its
/// kernels do; CUDA answers `Unsupported`, and its plans do not fuse).
fn runs_chains<P: Provider<Memory = Host>>(p: &P) -> bool {
    let mut chain = Chain::new(1);
    chain.push(Link { op: LinkOp::Neg, a: Operand::Input(0), b: Operand::Input(0) }).unwrap();
    let desc = TensorDesc::contiguous(TensorMeta::new(DType::F64, Shape::new(&[2]).unwrap())).unwrap();
    p.workspace(&Op::from(chain), &[&desc]).is_ok()
}

/// Runs `program` (three 5×3 parameters) as compiled on `p` and op by op
/// on the direct face; asserts the same bits and returns the plan's op
/// names.
fn fused_vs_by_op<P: TestProvider>(p: &P, program: &Program) -> Vec<&'static str> {
    let mut face = Direct::new(*p);
    let mut rng = Rng::new(9);
    let params: Vec<_> = (0..3)
        .map(|_| {
            // Entries away from zero: some chains divide.
            let m = rng.matrix::<f64>(5, 3);
            let data: Vec<f64> = m.data.iter().map(|x| x + x.signum() * 0.5).collect();
            face.tensor(&[5, 3], &data).unwrap()
        })
        .collect();
    let refs: Vec<_> = params.iter().collect();
    let descs: Vec<_> = params.iter().map(|t| t.desc()).collect();
    let compiled = program.compile(p, &descs).unwrap();
    let names: Vec<&'static str> = compiled.ops().map(Op::name).collect();
    let fused = face.run(&compiled, &refs).unwrap();
    let by_op = program.eval(&mut face, &refs).unwrap();
    assert_eq!(fused.len(), by_op.len());
    for (k, (x, y)) in fused.iter().zip(by_op.iter()).enumerate() {
        let bits = |t: &lindiff_core::face::direct::Tensor| {
            t.to_vec::<f64>().unwrap().iter().map(|e| e.to_bits()).collect::<Vec<_>>()
        };
        assert_eq!(bits(x), bits(y), "result {k}: plan {names:?}");
    }
    names
}

/// The planner on hand-built programs: operand order, a value read twice
/// or returned (never absorbed), three nested scalings (a chain holds
/// two), and runs longer than a chain (split into several).
fn planner_cases<P: TestProvider>(p: &P) {
    let meta = TensorMeta::new(DType::F64, Shape::new(&[5, 3]).unwrap());
    let start = || {
        let mut b: Builder = Builder::new();
        let x: Vec<_> = (0..3).map(|_| b.param(meta.clone()).unwrap()).collect();
        (b, x)
    };
    let chains = |names: &[&str]| names.iter().filter(|&&n| n == Chain::NAME).count();
    let fuses = runs_chains(p);

    // ((a − b) / c) − (b / a): order kept in every Sub and Div.
    let (mut b, x) = start();
    let d = b.binary(BinaryOp::Sub, &x[0], &x[1]).unwrap();
    let q = b.binary(BinaryOp::Div, &d, &x[2]).unwrap();
    let r = b.binary(BinaryOp::Div, &x[1], &x[0]).unwrap();
    let y = b.binary(BinaryOp::Sub, &q, &r).unwrap();
    let names = fused_vs_by_op(p, &b.finish(&[&y]).unwrap());
    assert_eq!(names.len(), if fuses { 1 } else { 4 }, "{names:?}");

    // t = a + b read twice (t·t), so t stays an instruction of its own.
    let (mut b, x) = start();
    let t = b.binary(BinaryOp::Add, &x[0], &x[1]).unwrap();
    let u = b.binary(BinaryOp::Mul, &t, &t).unwrap();
    let y = b.binary(BinaryOp::Sub, &u, &x[2]).unwrap();
    let names = fused_vs_by_op(p, &b.finish(&[&y]).unwrap());
    assert_eq!(names.len(), if fuses { 2 } else { 3 }, "{names:?}");

    // t = a + b is also a result: not absorbed.
    let (mut b, x) = start();
    let t = b.binary(BinaryOp::Add, &x[0], &x[1]).unwrap();
    let n = b.unary(UnaryOp::Neg, &t).unwrap();
    let y = b.binary(BinaryOp::Mul, &n, &x[2]).unwrap();
    let names = fused_vs_by_op(p, &b.finish(&[&t, &y]).unwrap());
    assert_eq!(names.len(), if fuses { 2 } else { 3 }, "{names:?}");

    // Three nested scalings and a sum: a chain takes two of them.
    let (mut b, x) = start();
    let s1 = b.scale(&x[0], 2.0).unwrap();
    let s2 = b.scale(&s1, 3.0).unwrap();
    let s3 = b.scale(&s2, 0.1).unwrap();
    let y = b.binary(BinaryOp::Add, &s3, &x[1]).unwrap();
    let names = fused_vs_by_op(p, &b.finish(&[&y]).unwrap());
    assert_eq!(names.len(), if fuses { 2 } else { 4 }, "{names:?}");
    assert_eq!(chains(&names), usize::from(fuses));

    // Twenty alternating steps: more than one chain's links.
    let (mut b, x) = start();
    let mut acc = b.binary(BinaryOp::Add, &x[0], &x[1]).unwrap();
    for k in 0..20 {
        let op = [BinaryOp::Mul, BinaryOp::Sub, BinaryOp::Add, BinaryOp::Div][k % 4];
        acc = b.binary(op, &acc, &x[k % 3]).unwrap();
    }
    let names = fused_vs_by_op(p, &b.finish(&[&acc]).unwrap());
    if fuses {
        assert!(chains(&names) >= 3 && names.len() < 21, "{names:?}");
    }
}

fn fusion<P: TestProvider>(p: &P) {
    if runs_chains(p) {
        chain_matches_primitives::<f64, P>(p, 1);
        chain_matches_primitives::<Complex<f64>, P>(p, 2);
        chain_matches_primitives::<f32, P>(p, 3);
        chain_matches_primitives::<Complex<f32>, P>(p, 4);
    }
    plans_fuse_and_agree(p);
    planner_cases(p);
}

lindiff_tests::providers!(fusion);
