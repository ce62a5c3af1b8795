//! Transpose rules: the dot-product test ⟨ct, T(t)⟩ = ⟨Tᵀ(ct), t⟩ (≤ 1e-12
//! relative, f64 and c64) for every op a JVP rule may record with a tangent,
//! in every tangent position and flag combination, batched and not; every
//! op the transpose records must itself be transposable (so reverse mode
//! is a linear program); and the error, zero and undefined paths.

use lindiff_core::ad::{transpose, Arg, Cx, Forward, TArg, Tangent};
use lindiff_core::face::direct::{Direct, Tensor};
use lindiff_core::face::Face;
use lindiff_core::op::{
    Diagonal, FullPivLuFactor, FullPivLuSolvePrepared, HouseholderQrApply, LuFactor, LuSolvePrepared, Side,
    Svd, SvdOptions, Triangle, TriangularSolve, TriangularSolveOptions,
};
use lindiff_core::prim::{
    Adjoint, Binary, BinaryOp, DiagEmbed, DiagPart, Matmul, Pad, Reduce, ReduceOp, Reshape, Scale, ScaleCols,
    ScaleRows, Slice, Spread, TriMask, Unary, UnaryOp,
};
use lindiff_core::{
    DType, Element, Error, Host, LinalgOp, MatOp, Op, Ops, PrimOp, Provider, Result, Scalar, TensorMeta,
};
use lindiff_tests::ad::inner;
use lindiff_tests::dense::{Dense, Rng};
use lindiff_tests::TestProvider;
use num_complex::Complex;

type C64 = Complex<f64>;

const OPS: [MatOp; 3] = [MatOp::Identity, MatOp::Transpose, MatOp::Adjoint];

/// One input of a case: a primal coefficient or a tangent (its direction).
#[derive(Clone)]
enum In {
    P(Tensor),
    T(Tensor),
}

/// A [`Cx`] that runs like [`Forward`] and logs every linear op it runs,
/// with its primal arguments and the metas of its tangent arguments.
struct Recorder<'f, Pr> {
    face: &'f mut Direct<Pr>,
    log: Vec<(Op, Vec<Logged>)>,
}

/// An argument of a logged op.
enum Logged {
    P(Tensor),
    T(TensorMeta),
}

impl<Pr: Provider<Memory = Host>> Cx for Recorder<'_, Pr> {
    type P = Tensor;
    type T = Tensor;

    fn primal(&mut self) -> &mut dyn Face<Tensor = Tensor> {
        self.face
    }

    fn tangent_meta(&self, t: &Tensor) -> TensorMeta {
        t.meta().clone()
    }

    fn linear(&mut self, op: Op, args: &[Arg<'_, Tensor, Tensor>]) -> Result<Tensor> {
        let logged = args
            .iter()
            .map(|a| match a {
                Arg::P(x) => Logged::P((*x).clone()),
                Arg::T(x) => Logged::T(x.meta().clone()),
            })
            .collect();
        self.log.push((op.clone(), logged));
        Forward::new(&mut *self.face).linear(op, args)
    }
}

/// Random tensors, the checks, and the worst error seen.
struct Bench<Pr> {
    face: Direct<Pr>,
    rng: Rng,
    worst: f64,
    count: usize,
}

impl<Pr: Provider<Memory = Host>> Bench<Pr> {
    fn new(provider: Pr, seed: u64) -> Self {
        Bench { face: Direct::new(provider), rng: Rng::new(seed), worst: 0.0, count: 0 }
    }

    /// A tensor with entries uniform in [-1, 1) (both parts), plus `shift`.
    fn rand(&mut self, dtype: DType, dims: &[usize], shift: f64) -> Tensor {
        let n: usize = dims.iter().product();
        match dtype {
            DType::F64 => {
                let d: Vec<f64> = (0..n).map(|_| self.rng.scalar::<f64>() + shift).collect();
                self.face.tensor(dims, &d).unwrap()
            }
            DType::C64 => {
                let d: Vec<C64> = (0..n).map(|_| self.rng.scalar::<C64>() + shift).collect();
                self.face.tensor(dims, &d).unwrap()
            }
            other => panic!("no random tensors of {other:?} here"),
        }
    }

    /// A batch of matrices as one tensor (`[rows, cols]` for one matrix).
    fn stack<T: Scalar + Element>(&mut self, ms: &[Dense<T>]) -> Tensor {
        let data: Vec<T> = ms.iter().flat_map(|m| m.data.iter().copied()).collect();
        let mut dims = vec![ms[0].rows, ms[0].cols];
        if ms.len() > 1 {
            dims.push(ms.len());
        }
        self.face.tensor(&dims, &data).unwrap()
    }

    /// Runs `op` on `ins`, transposes it at a random cotangent and checks
    /// ⟨ct, T(t)⟩ = Σ ⟨Tᵀ(ct)_i, t_i⟩ over the tangent inputs.
    fn check(&mut self, what: &str, op: Op, ins: &[In]) {
        let args: Vec<Arg<'_, Tensor, Tensor>> = ins
            .iter()
            .map(|i| match i {
                In::P(x) => Arg::P(x),
                In::T(x) => Arg::T(x),
            })
            .collect();
        let y = Forward::new(&mut self.face)
            .linear(op.clone(), &args)
            .unwrap_or_else(|e| panic!("{what}: forward: {e}"));
        let ct = self.rand(y.meta().dtype, y.dims(), 0.0);
        let metas: Vec<TensorMeta> = ins
            .iter()
            .map(|i| match i {
                In::P(x) | In::T(x) => x.meta().clone(),
            })
            .collect();
        let targs: Vec<TArg<'_, Tensor>> = ins
            .iter()
            .zip(&metas)
            .map(|(i, m)| match i {
                In::P(x) => TArg::P(x),
                In::T(_) => TArg::T(m),
            })
            .collect();
        let mut rec = Recorder { face: &mut self.face, log: Vec::new() };
        let cts = transpose(&mut rec, &op, &targs, &Tangent::Value(ct.clone()))
            .unwrap_or_else(|e| panic!("{what}: transpose: {e}"));
        let log = rec.log;
        assert_eq!(cts.len(), ins.len(), "{what}: one cotangent per input");
        let lhs = inner_any(&ct, &y);
        let mut rhs = 0.0;
        for (i, (input, g)) in ins.iter().zip(&cts).enumerate() {
            match (input, g) {
                (In::P(_), Tangent::Zero) | (In::T(_), Tangent::Zero) => {}
                (In::T(t), Tangent::Value(g)) => {
                    assert_eq!(g.meta(), t.meta(), "{what}: cotangent {i} has the input's dtype and shape");
                    rhs += inner_any(g, t);
                }
                (In::P(_), _) => panic!("{what}: primal input {i} got a nonzero cotangent"),
                (In::T(_), Tangent::Undefined(e)) => panic!("{what}: cotangent {i} undefined: {e}"),
            }
        }
        let scale = lhs.abs().max(rhs.abs());
        let err = if scale == 0.0 { 0.0 } else { (lhs - rhs).abs() / scale };
        assert!(err <= 1e-12, "{what}: ⟨ct, T t⟩ = {lhs:e} but ⟨Tᵀ ct, t⟩ = {rhs:e} (relative {err:e})");
        self.worst = self.worst.max(err);
        self.count += 1;
        // The transposed program must itself be transposable.
        for (rop, rargs) in &log {
            let targs: Vec<TArg<'_, Tensor>> = rargs
                .iter()
                .map(|a| match a {
                    Logged::P(x) => TArg::P(x),
                    Logged::T(m) => TArg::T(m),
                })
                .collect();
            transpose(&mut Forward::new(&mut self.face), rop, &targs, &Tangent::Zero).unwrap_or_else(|e| {
                panic!("{what}: the transpose recorded {rop:?}, which is not linear: {e}")
            });
        }
    }
}

/// ⟨x, y⟩ = Re Σ conj(x) y of two tensors of the same dtype and layout.
fn inner_any(x: &Tensor, y: &Tensor) -> f64 {
    assert_eq!(x.meta(), y.meta());
    match x.meta().dtype {
        DType::F64 => inner(x.as_slice::<f64>().unwrap(), y.as_slice::<f64>().unwrap()),
        DType::C64 => inner(x.as_slice::<C64>().unwrap(), y.as_slice::<C64>().unwrap()),
        other => panic!("no inner product of {other:?} here"),
    }
}

fn prim(p: PrimOp) -> Op {
    Op::Prim(p)
}

/// Dims of `op(x)` = rows×cols stored, with optional batch.
fn stored(how: MatOp, rows: usize, cols: usize, batch: &[usize]) -> Vec<usize> {
    let mut d = match how {
        MatOp::Identity => vec![rows, cols],
        _ => vec![cols, rows],
    };
    d.extend_from_slice(batch);
    d
}

fn with_batch(core: &[usize], batch: &[usize]) -> Vec<usize> {
    core.iter().chain(batch).copied().collect()
}

fn matmul_cases<Pr: Provider<Memory = Host>>(b: &mut Bench<Pr>, d: DType) {
    let (m, k, n) = (3, 4, 2);
    for batch in [&[][..], &[2][..]] {
        for op_a in OPS {
            for op_b in OPS {
                let a = b.rand(d, &stored(op_a, m, k, batch), 0.0);
                let bb = b.rand(d, &stored(op_b, k, n, batch), 0.0);
                let op = prim(PrimOp::Matmul(Matmul::new(op_a, op_b)));
                let what = format!("matmul {op_a:?}·{op_b:?} {d:?} batch {batch:?}");
                b.check(&format!("{what}, tangent a"), op.clone(), &[In::T(a.clone()), In::P(bb.clone())]);
                b.check(&format!("{what}, tangent b"), op, &[In::P(a), In::T(bb)]);
            }
        }
    }
}

fn unary_cases<Pr: Provider<Memory = Host>>(b: &mut Bench<Pr>, d: DType) {
    let mut maps =
        vec![UnaryOp::Neg, UnaryOp::Conj, UnaryOp::Copy, UnaryOp::Real, UnaryOp::Imag, UnaryOp::ToComplex];
    if d.is_complex() {
        maps.push(UnaryOp::MulI);
    }
    for dims in [&[3, 2][..], &[3, 2, 2][..]] {
        for &how in &maps {
            let x = b.rand(d, dims, 0.0);
            b.check(&format!("{how:?} of {d:?} {dims:?}"), prim(PrimOp::Unary(Unary(how))), &[In::T(x)]);
        }
        // ToComplex of a real tangent when the case's dtype is complex.
        let x = b.rand(d.real(), dims, 0.0);
        let what = format!("ToComplex of {:?} {dims:?}", d.real());
        b.check(&what, prim(PrimOp::Unary(Unary(UnaryOp::ToComplex))), &[In::T(x)]);
    }
}

fn elementwise_cases<Pr: Provider<Memory = Host>>(b: &mut Bench<Pr>, d: DType) {
    for dims in [&[3, 2][..], &[3, 2, 2][..]] {
        let bin = |how| prim(PrimOp::Binary(Binary(how)));
        let (x, y) = (b.rand(d, dims, 0.0), b.rand(d, dims, 0.0));
        let what = format!("{d:?} {dims:?}");
        b.check(&format!("add {what}"), bin(BinaryOp::Add), &[In::T(x.clone()), In::T(y.clone())]);
        b.check(&format!("sub {what}"), bin(BinaryOp::Sub), &[In::T(x.clone()), In::T(y.clone())]);
        b.check(&format!("coef·t {what}"), bin(BinaryOp::Mul), &[In::P(x.clone()), In::T(y.clone())]);
        b.check(&format!("t·coef {what}"), bin(BinaryOp::Mul), &[In::T(x.clone()), In::P(y)]);
        let den = b.rand(d, dims, 2.0);
        b.check(&format!("t/coef {what}"), bin(BinaryOp::Div), &[In::T(x.clone()), In::P(den)]);
        b.check(&format!("scale {what}"), prim(PrimOp::Scale(Scale(-1.7))), &[In::T(x)]);
    }
}

fn layout_cases<Pr: Provider<Memory = Host>>(b: &mut Bench<Pr>, d: DType) {
    for batch in [&[][..], &[2][..]] {
        for how in OPS {
            let x = b.rand(d, &with_batch(&[3, 2], batch), 0.0);
            b.check(
                &format!("adjoint {how:?} {d:?} {batch:?}"),
                prim(PrimOp::Adjoint(Adjoint(how))),
                &[In::T(x)],
            );
        }
        for core in [[3, 3], [4, 2], [2, 4]] {
            let x = b.rand(d, &with_batch(&core, batch), 0.0);
            b.check(
                &format!("diag_part {core:?} {d:?} {batch:?}"),
                prim(PrimOp::DiagPart(DiagPart)),
                &[In::T(x)],
            );
        }
        let x = b.rand(d, &with_batch(&[3], batch), 0.0);
        b.check(&format!("diag_embed {d:?} {batch:?}"), prim(PrimOp::DiagEmbed(DiagEmbed)), &[In::T(x)]);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            for diagonal in [0.0, 0.5, 1.0] {
                for core in [[3, 3], [4, 3], [3, 4]] {
                    let x = b.rand(d, &with_batch(&core, batch), 0.0);
                    let op = prim(PrimOp::TriMask(TriMask { triangle, diagonal }));
                    b.check(
                        &format!("tri_mask {triangle:?} {diagonal} {core:?} {d:?} {batch:?}"),
                        op,
                        &[In::T(x)],
                    );
                }
            }
        }
        let x = b.rand(d, &with_batch(&[5, 4], batch), 0.0);
        let op = prim(PrimOp::Slice(Slice { start: [1, 2], size: [3, 2] }));
        b.check(&format!("slice {d:?} {batch:?}"), op, &[In::T(x)]);
        let x = b.rand(d, &with_batch(&[3, 2], batch), 0.0);
        let op = prim(PrimOp::Pad(Pad { start: [1, 1], size: [5, 4] }));
        b.check(&format!("pad {d:?} {batch:?}"), op, &[In::T(x)]);
    }
    for core_rank in 0..=3 {
        let x = b.rand(d, &[3, 4, 2], 0.0);
        let op = prim(PrimOp::Reduce(Reduce { op: ReduceOp::Sum, core_rank }));
        b.check(&format!("sum over {core_rank} dims {d:?}"), op, &[In::T(x)]);
    }
    for core in [&[][..], &[3][..], &[3, 4][..]] {
        let x = b.rand(d, &[2], 0.0);
        let op = prim(PrimOp::Spread(Spread { core: heapless::Vec::from_slice(core).unwrap() }));
        b.check(&format!("spread {core:?} {d:?}"), op, &[In::T(x)]);
    }
    for dims in [&[6, 4][..], &[24][..], &[2, 3, 4][..]] {
        let x = b.rand(d, &[3, 4, 2], 0.0);
        let op = prim(PrimOp::Reshape(Reshape { dims: heapless::Vec::from_slice(dims).unwrap() }));
        b.check(&format!("reshape to {dims:?} {d:?}"), op, &[In::T(x)]);
    }
}

/// Row and column scaling with `v` of dtype `vd` (the case's dtype or, for
/// complex `a`, its real dtype).
fn scaling_cases<Pr: Provider<Memory = Host>>(b: &mut Bench<Pr>, d: DType) {
    let mut vdtypes = vec![d];
    if d.is_complex() {
        vdtypes.push(d.real());
    }
    for batch in [&[][..], &[2][..]] {
        for &vd in &vdtypes {
            let a = b.rand(d, &with_batch(&[3, 4], batch), 0.0);
            let v = b.rand(vd, &with_batch(&[4], batch), 0.0);
            let what = format!("{d:?} by {vd:?} {batch:?}");
            b.check(
                &format!("scale_cols {what}"),
                prim(PrimOp::ScaleCols(ScaleCols)),
                &[In::T(a.clone()), In::P(v)],
            );
            let v = b.rand(vd, &with_batch(&[3], batch), 0.0);
            b.check(&format!("scale_rows {what}"), prim(PrimOp::ScaleRows(ScaleRows)), &[In::T(a), In::P(v)]);
        }
    }
}

/// Triangular matrices (both triangles filled: the solve must read only
/// its own) with a dominant diagonal.
fn triangular<T: Scalar + Element, Pr: Provider<Memory = Host>>(
    b: &mut Bench<Pr>,
    n: usize,
    count: usize,
) -> Tensor {
    let ms: Vec<Dense<T>> = (0..count)
        .map(|_| {
            let mut m = b.rng.matrix::<T>(n, n);
            for i in 0..n {
                m[(i, i)] += T::from_f64(4.0);
            }
            m
        })
        .collect();
    b.stack(&ms)
}

/// Well-conditioned square matrices (singular values in [1, 2]).
fn conditioned<T: Scalar + Element, Pr: Provider<Memory = Host>>(
    b: &mut Bench<Pr>,
    m: usize,
    n: usize,
    count: usize,
) -> Tensor {
    let k = m.min(n);
    let s: Vec<f64> = (0..k).map(|i| 2.0 - i as f64 / k as f64).collect();
    let ms: Vec<Dense<T>> = (0..count).map(|_| b.rng.with_spectrum::<T>(m, n, &s)).collect();
    b.stack(&ms)
}

fn solve_cases<T: Scalar + Element, Pr: Provider<Memory = Host>>(b: &mut Bench<Pr>) {
    let d = T::DTYPE;
    let (n, r) = (4, 3);
    for (count, batch) in [(1, &[][..]), (2, &[2][..])] {
        let a = triangular::<T, Pr>(b, n, count);
        for triangle in [Triangle::Lower, Triangle::Upper] {
            for diagonal in [Diagonal::NonUnit, Diagonal::Unit] {
                for side in [Side::Left, Side::Right] {
                    for how in OPS {
                        let rhs = match side {
                            Side::Left => with_batch(&[n, r], batch),
                            Side::Right => with_batch(&[r, n], batch),
                        };
                        let x = b.rand(d, &rhs, 0.0);
                        let options = TriangularSolveOptions::default()
                            .triangle(triangle)
                            .diagonal(diagonal)
                            .side(side)
                            .op(how);
                        let op = Op::Linalg(LinalgOp::TriangularSolve(TriangularSolve(options)));
                        let what = format!(
                            "triangular_solve {triangle:?} {diagonal:?} {side:?} {how:?} {d:?} {batch:?}"
                        );
                        b.check(&what, op, &[In::P(a.clone()), In::T(x)]);
                    }
                }
            }
        }
        let a = conditioned::<T, Pr>(b, n, n, count);
        let mut lu = b.face.apply(Op::Linalg(LinalgOp::LuFactor(LuFactor)), &[&a]).unwrap();
        let (f, perm) = (lu[0].take().unwrap(), lu[1].take().unwrap());
        let mut full = b.face.apply(Op::Linalg(LinalgOp::FullPivLuFactor(FullPivLuFactor)), &[&a]).unwrap();
        let (g, rows, cols) = (full[0].take().unwrap(), full[1].take().unwrap(), full[2].take().unwrap());
        for how in OPS {
            let x = b.rand(d, &with_batch(&[n, r], batch), 0.0);
            let op = Op::Linalg(LinalgOp::LuSolvePrepared(LuSolvePrepared::new(how)));
            let ins = [In::P(f.clone()), In::P(perm.clone()), In::T(x.clone())];
            b.check(&format!("lu_solve_prepared {how:?} {d:?} {batch:?}"), op, &ins);
            let op = Op::Linalg(LinalgOp::FullPivLuSolvePrepared(FullPivLuSolvePrepared::new(how)));
            let ins = [In::P(g.clone()), In::P(rows.clone()), In::P(cols.clone()), In::T(x)];
            b.check(&format!("full_piv_lu_solve_prepared {how:?} {d:?} {batch:?}"), op, &ins);
        }
        for (m, k) in [(5, 3), (4, 4), (3, 5)] {
            let a = conditioned::<T, Pr>(b, m, k, count);
            let qr = b.face.householder_qr(&a).unwrap();
            for how in OPS {
                let x = b.rand(d, &with_batch(&[m, 2], batch), 0.0);
                let op = Op::Linalg(LinalgOp::HouseholderQrApply(HouseholderQrApply(how)));
                let ins = [In::P(qr.h.clone()), In::P(qr.tau.clone()), In::T(x)];
                b.check(&format!("householder_qr_apply {m}×{k} {how:?} {d:?} {batch:?}"), op, &ins);
            }
        }
    }
}

fn dtype_suite<T: Scalar + Element, Pr: Provider<Memory = Host> + Clone>(p: &Pr, seed: u64) -> (f64, usize) {
    let mut b = Bench::new(p.clone(), seed);
    let d = T::DTYPE;
    matmul_cases(&mut b, d);
    unary_cases(&mut b, d);
    elementwise_cases(&mut b, d);
    layout_cases(&mut b, d);
    scaling_cases(&mut b, d);
    solve_cases::<T, Pr>(&mut b);
    (b.worst, b.count)
}

fn suite<Pr: Provider<Memory = Host> + Clone>(p: &Pr) {
    for (name, (worst, count)) in
        [("f64", dtype_suite::<f64, Pr>(p, 1)), ("c64", dtype_suite::<C64, Pr>(p, 2))]
    {
        println!("{name}: {count} dot-product tests, worst relative error {worst:e}");
        assert!(count > 100);
    }
}

fn dot_product_test_every_linear_op<P: TestProvider>(provider: &P) {
    suite(provider);
}

/// The transpose refuses positions an op is not linear in — whatever the
/// cotangent — and passes zero and undefined cotangents through.
fn error_suite<Pr: Provider<Memory = Host> + Clone>(p: &Pr) {
    let mut b = Bench::new(p.clone(), 3);
    let d = DType::C64;
    let a = b.rand(d, &[3, 3], 4.0);
    let (am, x) = (a.meta().clone(), b.rand(d, &[3, 3], 0.0));
    let xm = x.meta().clone();
    let tri = Op::Linalg(LinalgOp::TriangularSolve(TriangularSolve(TriangularSolveOptions::default())));
    let refused: Vec<(Op, Vec<TArg<'_, Tensor>>, &str, &str)> = vec![
        (prim(PrimOp::Matmul(Matmul::PLAIN)), vec![TArg::T(&am), TArg::T(&xm)], "matmul", "b"),
        (prim(PrimOp::Matmul(Matmul::PLAIN)), vec![TArg::P(&a), TArg::P(&x)], "matmul", "a"),
        (tri.clone(), vec![TArg::T(&am), TArg::P(&x)], "triangular_solve", "a"),
        (tri, vec![TArg::T(&am), TArg::T(&xm)], "triangular_solve", "a"),
        (prim(PrimOp::Unary(Unary(UnaryOp::Sqrt))), vec![TArg::T(&xm)], "sqrt", "x"),
        (prim(PrimOp::Binary(Binary(BinaryOp::Add))), vec![TArg::T(&xm), TArg::P(&a)], "add", "x"),
        (prim(PrimOp::Binary(Binary(BinaryOp::Sub))), vec![TArg::P(&a), TArg::T(&xm)], "sub", "y"),
        (prim(PrimOp::Binary(Binary(BinaryOp::Mul))), vec![TArg::T(&am), TArg::T(&xm)], "mul", "y"),
        (prim(PrimOp::Binary(Binary(BinaryOp::Div))), vec![TArg::P(&a), TArg::T(&xm)], "div", "y"),
        (prim(PrimOp::ScaleCols(ScaleCols)), vec![TArg::P(&a), TArg::T(&xm)], "scale_cols", "v"),
        (prim(PrimOp::Reduce(Reduce { op: ReduceOp::Max, core_rank: 2 })), vec![TArg::T(&xm)], "max", "x"),
        (Op::Linalg(LinalgOp::Svd(Svd(SvdOptions::default()))), vec![TArg::T(&xm)], "svd", "a"),
    ];
    for (op, args, name, arg) in &refused {
        for ct in [Tangent::Zero, Tangent::Value(x.clone())] {
            match transpose(&mut Forward::new(&mut b.face), op, args, &ct) {
                Err(Error::UnsupportedDerivative { op: o, output }) => {
                    assert_eq!((o, output), (*name, *arg), "{op:?}")
                }
                other => {
                    panic!("{op:?}: expected an unsupported-derivative error, got {:?}", other.map(|_| ()))
                }
            }
        }
    }

    // Zero and undefined cotangents: nothing is recorded, primal positions
    // stay zero.
    let op = prim(PrimOp::Matmul(Matmul::new(MatOp::Adjoint, MatOp::Transpose)));
    let args = [TArg::P(&a), TArg::T(&xm)];
    let mut rec = Recorder { face: &mut b.face, log: Vec::new() };
    let zero = transpose(&mut rec, &op, &args, &Tangent::Zero).unwrap();
    assert!(zero.iter().all(Tangent::is_zero) && zero.len() == 2);
    let why = Error::UnsupportedDerivative { op: "svd", output: "u" };
    let undefined = transpose(&mut rec, &op, &args, &Tangent::Undefined(why.clone())).unwrap();
    assert!(undefined[0].is_zero());
    assert!(matches!(&undefined[1], Tangent::Undefined(e) if e.to_string() == why.to_string()));
    let add = prim(PrimOp::Binary(Binary(BinaryOp::Add)));
    let both = transpose(&mut rec, &add, &[TArg::T(&xm), TArg::T(&xm)], &Tangent::Undefined(why)).unwrap();
    assert!(both.iter().all(|g| matches!(g, Tangent::Undefined(_))));
    assert!(rec.log.is_empty(), "zero/undefined cotangents record nothing: {:?}", rec.log.len());

    // A cotangent that is not shaped like the output is an error.
    let wrong = b.rand(d, &[2, 3], 0.0);
    let err = transpose(&mut Forward::new(&mut b.face), &op, &args, &Tangent::Value(wrong)).map(|_| ());
    assert!(matches!(err, Err(Error::ShapeMismatch { arg: "cotangent", .. })), "{err:?}");
    let real = b.rand(DType::F64, &[3, 3], 0.0);
    let err = transpose(&mut Forward::new(&mut b.face), &op, &args, &Tangent::Value(real)).map(|_| ());
    assert!(matches!(err, Err(Error::DType { arg: "cotangent", .. })), "{err:?}");
    // A wrong input count.
    let err = transpose(&mut Forward::new(&mut b.face), &op, &[TArg::T(&xm)], &Tangent::Zero).map(|_| ());
    assert!(matches!(err, Err(Error::Arity { .. })), "{err:?}");
}

fn refusals_zero_and_undefined_cotangents<P: TestProvider>(provider: &P) {
    error_suite(provider);
}

lindiff_tests::providers!(dot_product_test_every_linear_op, refusals_zero_and_undefined_cotangents);
