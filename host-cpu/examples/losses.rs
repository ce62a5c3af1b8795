//! Six losses and their gradients: each is one expression and one
//! value-and-grad call, with the JAX line that computes the same beside it.
//! The last part traces one of them into a program (build → grad →
//! compile → run). The tests at the bottom check every gradient against
//! central finite differences.
//!
//! Run: `cargo run --release -p lindiff-cpu --example losses`

use lindiff_cpu::prelude::*;

/// Nuclear norm ‖A‖_* = Σ sᵢ.
fn nuclear<F: Face>(a: &Var<F>) -> Var<F> {
    a.svd_vals().sum() // jnp.linalg.svd(a, compute_uv=False).sum()
}

/// Projector loss ‖U_k U_kᴴ − P‖²_F on the top-k left singular vectors.
fn projector<F: Face>(a: &Var<F>, p: &Var<F>, k: usize) -> Var<F> {
    let u = a.svd().u.cols(0..k); // u = jnp.linalg.svd(a, full_matrices=False)[0][:, :k]
    (u.matmul(&u.h()) - p).abs2().sum() // jnp.sum(jnp.abs(u @ u.conj().T - p) ** 2)
}

/// log det A of a symmetric positive definite A, through Cholesky.
fn logdet<F: Face>(a: &Var<F>) -> Var<F> {
    2.0 * a.cholesky().diag().ln().sum() // 2 * jnp.log(jnp.diag(jnp.linalg.cholesky(a))).sum()
}

/// The least-squares residual ‖A x − b‖² at x = lstsq(A, b).
fn residual<F: Face>(a: &Var<F>, b: &Var<F>) -> Var<F> {
    let x = a.lstsq(b); // x = jnp.linalg.lstsq(a, b)[0]
    (a.matmul(&x) - b).abs2().sum() // jnp.sum((a @ x - b) ** 2)
}

/// The gap between the two largest eigenvalues of a symmetric A.
fn eigen_gap<F: Face>(a: &Var<F>, n: usize) -> Var<F> {
    let w = a.eigvalsh(); // w = jnp.linalg.eigvalsh(a)
    w.get(n - 1) - w.get(n - 2) // w[-1] - w[-2]
}

/// The free energy log Σ exp(λᵢ) of a complex Hermitian A.
fn free_energy<F: Face>(a: &Var<F>) -> Var<F> {
    a.eigvalsh().exp().sum().ln() // jnp.log(jnp.exp(jnp.linalg.eigvalsh(a)).sum())
}

/// The inputs: A (4×3), a projector P (4×4), an SPD S (3×3), b (4×2), a
/// symmetric M (3×3), a complex Hermitian H (2×2).
struct Inputs {
    a: Tensor,
    p: Tensor,
    s: Tensor,
    b: Tensor,
    m: Tensor,
    h: Tensor,
}

fn inputs(la: &mut Direct<Cpu>) -> Result<Inputs> {
    #[rustfmt::skip]
    let a = la.tensor_row_major(4, 3, &[
        2.0, -1.0, 0.5,
        0.3, 1.5, -0.7,
        -1.2, 0.4, 1.1,
        0.8, 0.9, -0.2,
    ])?;
    // The projector onto e₁, e₂.
    #[rustfmt::skip]
    let p = la.tensor_row_major(4, 4, &[
        1.0, 0.0, 0.0, 0.0,
        0.0, 1.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
    ])?;
    let s = la.tensor_row_major(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0])?;
    let b = la.tensor_row_major(4, 2, &[1.0, 0.0, -0.5, 2.0, 0.3, 1.0, 0.7, -1.0])?;
    let m = la.tensor_row_major(3, 3, &[1.0, 0.4, -0.3, 0.4, 2.5, 0.6, -0.3, 0.6, 4.0])?;
    let i = |re: f64, im: f64| Complex64::new(re, im);
    let h = la.tensor(&[2, 2], &[i(1.0, 0.0), i(0.5, 0.3), i(0.5, -0.3), i(-0.4, 0.0)])?;
    Ok(Inputs { a, p, s, b, m, h })
}

fn main() -> Result<()> {
    let mut la = Direct::new(Cpu::new());
    let x = inputs(&mut la)?;

    let out = la.value_and_grad([&x.a], |[a]| nuclear(&a))?;
    println!("nuclear norm         {:.6}  ∂/∂A = {:.4?}", out.value, out.grads[0].to_vec::<f64>()?);

    let out = la.value_and_grad([&x.a, &x.p], |[a, p]| projector(&a, &p, 2))?;
    println!("projector loss       {:.6}  ∂/∂A = {:.4?}", out.value, out.grads[0].to_vec::<f64>()?);

    let out = la.value_and_grad([&x.s], |[s]| logdet(&s))?;
    println!("log det (Cholesky)   {:.6}  ∂/∂S = {:.4?}", out.value, out.grads[0].to_vec::<f64>()?);

    let out = la.value_and_grad([&x.a, &x.b], |[a, b]| residual(&a, &b))?;
    println!("lstsq residual       {:.6}  ∂/∂b = {:.4?}", out.value, out.grads[1].to_vec::<f64>()?);

    let out = la.value_and_grad([&x.m], |[m]| eigen_gap(&m, 3))?;
    println!("eigenvalue gap       {:.6}  ∂/∂M = {:.4?}", out.value, out.grads[0].to_vec::<f64>()?);

    let out = la.value_and_grad([&x.h], |[h]| free_energy(&h))?;
    println!("free energy (ℂ)      {:.6}  ∂/∂H = {:.4?}", out.value, out.grads[0].to_vec::<Complex64>()?);

    // The same projector loss traced: build → grad → compile → run.
    let metas = [x.a.meta().clone(), x.p.meta().clone()];
    let program = trace_value_and_grad(metas, |[a, p]| projector(&a, &p, 2))?;
    let cpu = Cpu::new();
    let compiled = program.compile(&cpu, &[x.a.desc(), x.p.desc()])?;
    let outs = la.run(&compiled, &[&x.a, &x.p])?; // [loss, ∂/∂A, ∂/∂P]
    println!(
        "projector (traced)   {:.6}  ∂/∂A = {:.4?}",
        outs[0].to_vec::<f64>()?[0],
        outs[1].to_vec::<f64>()?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loss at `xs` (no gradient needed: the value of value_and_grad).
    fn value<const N: usize>(
        la: &mut Direct<Cpu>,
        xs: [&Tensor; N],
        loss: &impl Fn([Var<Eager<&mut Direct<Cpu>>>; N]) -> Var<Eager<&mut Direct<Cpu>>>,
    ) -> f64 {
        la.value_and_grad(xs, loss).unwrap().value
    }

    /// `t` with entry `i` (column-major, as gradients are laid out) moved
    /// by `h` (by `h·i` in the imaginary part when `imaginary`).
    fn nudged(la: &mut Direct<Cpu>, t: &Tensor, i: usize, h: f64, imaginary: bool) -> Tensor {
        let t = &la.unary(UnaryOp::Copy, t).unwrap(); // column-major
        if t.meta().dtype.is_complex() {
            let mut data = t.to_vec::<Complex64>().unwrap();
            data[i] += if imaginary { Complex64::new(0.0, h) } else { Complex64::new(h, 0.0) };
            la.tensor(t.dims(), &data).unwrap()
        } else {
            let mut data = t.to_vec::<f64>().unwrap();
            data[i] += h;
            la.tensor(t.dims(), &data).unwrap()
        }
    }

    /// Every entry of every gradient against central differences with step
    /// 1e-6: within 1e-6 of the largest gradient entry.
    fn check<const N: usize>(
        la: &mut Direct<Cpu>,
        xs: [&Tensor; N],
        loss: impl Fn([Var<Eager<&mut Direct<Cpu>>>; N]) -> Var<Eager<&mut Direct<Cpu>>>,
    ) {
        let out = la.value_and_grad(xs, &loss).unwrap();
        let h = 1e-6;
        for (k, x) in xs.iter().enumerate() {
            let complex = x.meta().dtype.is_complex();
            let grad: Vec<Complex64> = if complex {
                out.grads[k].to_vec::<Complex64>().unwrap()
            } else {
                out.grads[k].to_vec::<f64>().unwrap().into_iter().map(|g| Complex64::new(g, 0.0)).collect()
            };
            let scale = grad.iter().map(|g| g.norm()).fold(1e-3, f64::max);
            for (i, g) in grad.iter().enumerate() {
                for imaginary in if complex { vec![false, true] } else { vec![false] } {
                    let mut at = |step: f64| {
                        let moved = nudged(la, x, i, step, imaginary);
                        let mut args: [&Tensor; N] = xs;
                        args[k] = &moved;
                        value(la, args, &loss)
                    };
                    let fd = (at(h) - at(-h)) / (2.0 * h);
                    let want = if imaginary { g.im } else { g.re };
                    assert!((fd - want).abs() <= 1e-6 * scale, "input {k} entry {i}: {want} vs {fd}");
                }
            }
        }
    }

    #[test]
    fn every_gradient_matches_finite_differences() {
        let mut la = Direct::new(Cpu::new());
        let x = inputs(&mut la).unwrap();
        check(&mut la, [&x.a], |[a]| nuclear(&a));
        check(&mut la, [&x.a, &x.p], |[a, p]| projector(&a, &p, 2));
        check(&mut la, [&x.s], |[s]| logdet(&s));
        check(&mut la, [&x.a, &x.b], |[a, b]| residual(&a, &b));
        check(&mut la, [&x.m], |[m]| eigen_gap(&m, 3));
        check(&mut la, [&x.h], |[h]| free_energy(&h));
    }

    #[test]
    fn the_traced_gradient_is_the_eager_one_bit_for_bit() {
        let mut la = Direct::new(Cpu::new());
        let x = inputs(&mut la).unwrap();
        let eager = la.value_and_grad([&x.a, &x.p], |[a, p]| projector(&a, &p, 2)).unwrap();
        let metas = [x.a.meta().clone(), x.p.meta().clone()];
        let program = trace_value_and_grad(metas, |[a, p]| projector(&a, &p, 2)).unwrap();
        let cpu = Cpu::new();
        let compiled = program.compile(&cpu, &[x.a.desc(), x.p.desc()]).unwrap();
        let outs = la.run(&compiled, &[&x.a, &x.p]).unwrap();
        assert_eq!(outs[0].to_vec::<f64>().unwrap()[0], eager.value);
        assert_eq!(outs[1].to_vec::<f64>().unwrap(), eager.grads[0].to_vec::<f64>().unwrap());
        // Values-only decompositions run with their vectors in both faces
        // when differentiated (one decomposition, the same bits).
        let eager = la.value_and_grad([&x.a], |[a]| nuclear(&a)).unwrap();
        let program = trace_value_and_grad([x.a.meta().clone()], |[a]| nuclear(&a)).unwrap();
        let compiled = program.compile(&cpu, &[x.a.desc()]).unwrap();
        let outs = la.run(&compiled, &[&x.a]).unwrap();
        assert_eq!(outs[0].to_vec::<f64>().unwrap()[0], eager.value);
        assert_eq!(outs[1].to_vec::<f64>().unwrap(), eager.grads[0].to_vec::<f64>().unwrap());
    }

    #[test]
    fn errors_name_op_argument_and_shape() {
        let mut la = Direct::new(Cpu::new());
        let x = inputs(&mut la).unwrap();
        // A 4×3 matrix has no Cholesky factor; the expression goes on and
        // the call returns the first error.
        let err = la.value_and_grad([&x.a], |[a]| logdet(&a)).unwrap_err();
        assert_eq!(err.to_string(), "cholesky: argument `a` must be square, got 4×3");
        // A loss must be a real scalar.
        let err = la.value_and_grad([&x.a], |[a]| a.svd_vals()).unwrap_err();
        assert_eq!(err.to_string(), "program: the loss must be a scalar (rank 0): sum or index it");
    }
}
