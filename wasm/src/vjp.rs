//! Vector–Jacobian products of single ops for callers that write their
//! loss themselves (in JS): [`vjp`] runs an op forward on lindiff's eager
//! tape and keeps the tape; [`Vjp::pullback`] takes one cotangent per
//! output (a missing one is zero) and returns one per input.
//!
//! The pullback is the gradient of the cotangent-weighted loss
//! `Σ_k ⟨ȳ_k, y_k⟩` (ȳ_k the caller's cotangent of output y_k, held
//! constant) with respect to the inputs — the vjp by definition — taken by
//! the eager face's reverse mode on the recorded tape, so every derivative
//! rule, gauge check and near-tie report is the library's own; nothing is
//! re-derived here. In f32 the tape runs in f32 (values cross in f64,
//! which holds every f32 exactly).

use crate::error::ApiError;
use crate::matrix::Matrix;
use crate::provider;
use lindiff_core::ad::{Eager, Tracked};
use lindiff_core::prim::{BinaryOp, ReduceOp};
use lindiff_core::{Error, Linalg, Ops};
use lindiff_cpu::{Cpu, Direct, Tensor};

/// The element type an op runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// f32 (JS `Float32Array`).
    F32,
    /// f64 (JS `Float64Array`).
    F64,
}

/// The ops [`vjp`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VjpOp {
    /// Thin SVD `a = u diag(s) vh`: outputs `u`, `s`, `vh`.
    Svd,
    /// Symmetric eigendecomposition of `a`'s lower triangle: `w`
    /// (ascending), `v`.
    Eigh,
    /// Thin QR with diag(R) ≥ 0: `q`, `r`.
    Qr,
    /// Cholesky factor of `a`'s lower triangle: `l`.
    Cholesky,
    /// `x` with `a x = b`.
    Solve,
    /// `det` of a square `a` (a scalar).
    Det,
    /// `inv` of a square `a`.
    Inv,
    /// `c = a b`.
    Matmul,
    /// `ea` = e^a of a square `a`.
    Expm,
    /// `la`, the principal logarithm of a square `a`.
    Logm,
    /// `sa`, the principal square root of a square `a`.
    Sqrtm,
    /// `ea` = e^a of a symmetric `a` (its lower triangle), through its
    /// eigendecomposition: exact derivatives at repeated eigenvalues.
    ExpmHermitian,
    /// `la`, the logarithm of a symmetric positive definite `a` (its lower
    /// triangle).
    LogmPd,
    /// `sa`, the positive semidefinite square root of a symmetric positive
    /// semidefinite `a` (its lower triangle).
    SqrtmPsd,
}

/// What an output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// A matrix.
    Matrix,
    /// A vector (singular values, eigenvalues).
    Vector,
    /// A scalar (a determinant).
    Scalar,
}

impl VjpOp {
    /// Every op, in the order of their names.
    pub const ALL: [VjpOp; 14] = [
        VjpOp::Svd,
        VjpOp::Eigh,
        VjpOp::Qr,
        VjpOp::Cholesky,
        VjpOp::Solve,
        VjpOp::Det,
        VjpOp::Inv,
        VjpOp::Matmul,
        VjpOp::Expm,
        VjpOp::Logm,
        VjpOp::Sqrtm,
        VjpOp::ExpmHermitian,
        VjpOp::LogmPd,
        VjpOp::SqrtmPsd,
    ];

    /// The op's name (as JS spells it).
    pub fn name(self) -> &'static str {
        match self {
            VjpOp::Svd => "svd",
            VjpOp::Eigh => "eigh",
            VjpOp::Qr => "qr",
            VjpOp::Cholesky => "cholesky",
            VjpOp::Solve => "solve",
            VjpOp::Det => "det",
            VjpOp::Inv => "inv",
            VjpOp::Matmul => "matmul",
            VjpOp::Expm => "expm",
            VjpOp::Logm => "logm",
            VjpOp::Sqrtm => "sqrtm",
            VjpOp::ExpmHermitian => "expm_hermitian",
            VjpOp::LogmPd => "logm_pd",
            VjpOp::SqrtmPsd => "sqrtm_psd",
        }
    }

    /// The op called `name`.
    ///
    /// # Errors
    /// [`ApiError::Argument`] naming `op` for an unknown name.
    pub fn parse(name: &str) -> Result<VjpOp, ApiError> {
        VjpOp::ALL.into_iter().find(|op| op.name() == name).ok_or_else(|| {
            let known: Vec<&str> = VjpOp::ALL.iter().map(|op| op.name()).collect();
            ApiError::argument("vjp", "op", format!("unknown op {name:?}; known: {}", known.join(", ")))
        })
    }

    /// The input names, in order.
    pub fn inputs(self) -> &'static [&'static str] {
        match self {
            VjpOp::Solve | VjpOp::Matmul => &["a", "b"],
            _ => &["a"],
        }
    }

    /// The output names and kinds, in order.
    pub fn outputs(self) -> &'static [(&'static str, OutputKind)] {
        use OutputKind::{Matrix as M, Scalar, Vector};
        match self {
            VjpOp::Svd => &[("u", M), ("s", Vector), ("vh", M)],
            VjpOp::Eigh => &[("w", Vector), ("v", M)],
            VjpOp::Qr => &[("q", M), ("r", M)],
            VjpOp::Cholesky => &[("l", M)],
            VjpOp::Solve => &[("x", M)],
            VjpOp::Det => &[("det", Scalar)],
            VjpOp::Inv => &[("inv", M)],
            VjpOp::Matmul => &[("c", M)],
            VjpOp::Expm | VjpOp::ExpmHermitian => &[("ea", M)],
            VjpOp::Logm | VjpOp::LogmPd => &[("la", M)],
            VjpOp::Sqrtm | VjpOp::SqrtmPsd => &[("sa", M)],
        }
    }
}

/// An output's value or a cotangent.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A matrix.
    Matrix(Matrix),
    /// A vector.
    Vector(Vec<f64>),
    /// A scalar.
    Scalar(f64),
}

impl Value {
    /// Its dims (`[rows, cols]`, `[len]` or `[]`).
    pub fn dims(&self) -> Vec<usize> {
        match self {
            Value::Matrix(m) => vec![m.rows(), m.cols()],
            Value::Vector(v) => vec![v.len()],
            Value::Scalar(_) => vec![],
        }
    }

    /// The entries in lindiff's order (column-major for a matrix).
    fn entries(&self) -> &[f64] {
        match self {
            Value::Matrix(m) => m.col_major(),
            Value::Vector(v) => v,
            Value::Scalar(x) => core::slice::from_ref(x),
        }
    }
}

type Tape = Eager<Direct<Cpu>>;

/// One op run forward on the eager tape, ready for pullbacks.
pub struct Vjp {
    op: VjpOp,
    precision: Precision,
    tape: Tape,
    inputs: Vec<Tracked<Tensor>>,
    outputs: Vec<Tracked<Tensor>>,
    values: Vec<Value>,
}

impl core::fmt::Debug for Vjp {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Vjp")
            .field("op", &self.op)
            .field("precision", &self.precision)
            .finish_non_exhaustive()
    }
}

/// A tensor of `dims` over the column-major `data` in `precision`.
fn tensor(
    la: &mut Direct<Cpu>,
    dims: &[usize],
    data: &[f64],
    precision: Precision,
) -> Result<Tensor, ApiError> {
    Ok(match precision {
        Precision::F64 => la.tensor(dims, data)?,
        Precision::F32 => la.tensor(dims, &data.iter().map(|&x| x as f32).collect::<Vec<f32>>())?,
    })
}

/// A tensor's entries as f64 (exact for f32).
fn entries(t: &Tensor, precision: Precision) -> Result<Vec<f64>, ApiError> {
    Ok(match precision {
        Precision::F64 => t.to_vec::<f64>()?,
        Precision::F32 => t.to_vec::<f32>()?.into_iter().map(f64::from).collect(),
    })
}

/// The op's outputs on the tape, in [`VjpOp::outputs`] order.
fn forward(tape: &mut Tape, op: VjpOp, x: &[Tracked<Tensor>]) -> Result<Vec<Tracked<Tensor>>, ApiError> {
    Ok(match op {
        VjpOp::Svd => {
            let f = tape.svd(&x[0])?;
            vec![f.u, f.s, f.vh]
        }
        VjpOp::Eigh => {
            let f = tape.eigh(&x[0])?;
            vec![f.w, f.v]
        }
        VjpOp::Qr => {
            let f = tape.qr(&x[0])?;
            vec![f.q, f.r]
        }
        VjpOp::Cholesky => vec![tape.cholesky(&x[0])?],
        VjpOp::Solve => vec![tape.solve(&x[0], &x[1])?],
        VjpOp::Det => vec![tape.det(&x[0])?],
        VjpOp::Inv => vec![tape.inv(&x[0])?],
        VjpOp::Matmul => vec![tape.matmul(&x[0], &x[1])?],
        VjpOp::Expm => vec![tape.expm(&x[0])?],
        VjpOp::Logm => vec![tape.logm(&x[0])?],
        VjpOp::Sqrtm => vec![tape.sqrtm(&x[0])?],
        VjpOp::ExpmHermitian => vec![tape.expm_hermitian(&x[0])?],
        VjpOp::LogmPd => vec![tape.logm_pd(&x[0])?],
        VjpOp::SqrtmPsd => vec![tape.sqrtm_psd(&x[0])?],
    })
}

/// `e` with `op`'s own name where the library names the op it runs
/// inside (solve runs `lu_factor_solve`): the caller called `op`.
fn named(e: ApiError, op: VjpOp) -> ApiError {
    let ApiError::Lindiff(mut e) = e else { return e };
    match &mut e {
        Error::Rank { op: name, .. }
        | Error::NotSquare { op: name, .. }
        | Error::DimMismatch { op: name, .. }
        | Error::BatchMismatch { op: name, .. }
        | Error::ShapeMismatch { op: name, .. }
        | Error::DType { op: name, .. }
        | Error::Empty { op: name, .. }
        | Error::NonFinite { op: name, .. }
        | Error::NotPositiveDefinite { op: name, .. }
        | Error::OutsideDomain { op: name, .. }
        | Error::OutOfRange { op: name, .. }
        | Error::Singular { op: name, .. } => *name = op.name(),
        _ => {}
    }
    ApiError::Lindiff(e)
}

/// Runs `op` on `inputs` (as many as [`VjpOp::inputs`] names) in
/// `precision`, recording it for [`Vjp::pullback`].
///
/// ```
/// use lindiff_wasm::{vjp, Layout, Matrix, Precision, Value, VjpOp};
/// let a = Matrix::new(vec![3.0, 0.0, 0.0, 2.0], 2, 2, Layout::RowMajor)?;
/// let mut f = vjp(VjpOp::Svd, &[a], Precision::F64)?;
/// assert_eq!(f.output("s"), Some(&Value::Vector(vec![3.0, 2.0])));
/// // The cotangent 2s on s and none on u, vh: ∂Σs²/∂A = 2A.
/// let g = f.pullback(&[None, Some(Value::Vector(vec![6.0, 4.0])), None])?;
/// assert!((g[0].get(0, 0) - 6.0).abs() < 1e-12 && (g[0].get(1, 1) - 4.0).abs() < 1e-12);
/// # Ok::<(), lindiff_wasm::ApiError>(())
/// ```
///
/// # Errors
/// [`ApiError::Argument`] for a wrong number of inputs; the library's
/// errors (shapes naming the op and argument, a non-finite input, a
/// matrix that is not positive definite, …).
pub fn vjp(op: VjpOp, inputs: &[Matrix], precision: Precision) -> Result<Vjp, ApiError> {
    let names = op.inputs();
    if inputs.len() != names.len() {
        return Err(ApiError::argument_shape(
            op.name(),
            "inputs",
            &[inputs.len()],
            format!("takes {} input(s) ({}), got {}", names.len(), names.join(", "), inputs.len()),
        ));
    }
    let mut tape: Tape = Eager::new(provider::serial());
    let mut watched = Vec::with_capacity(inputs.len());
    for m in inputs {
        let t = tensor(tape.inner(), &[m.rows(), m.cols()], m.col_major(), precision)?;
        watched.push(tape.watch(t)?);
    }
    let outputs = forward(&mut tape, op, &watched).map_err(|e| named(e, op))?;
    let mut values = Vec::with_capacity(outputs.len());
    for (o, (_, kind)) in outputs.iter().zip(op.outputs()) {
        let t = o.value();
        let data = entries(t, precision)?;
        values.push(match kind {
            OutputKind::Matrix => Value::Matrix(Matrix::from_col_major(t.dims()[0], t.dims()[1], data)),
            OutputKind::Vector => Value::Vector(data),
            OutputKind::Scalar => Value::Scalar(data[0]),
        });
    }
    Ok(Vjp { op, precision, tape, inputs: watched, outputs, values })
}

impl Vjp {
    /// The op.
    pub fn op(&self) -> VjpOp {
        self.op
    }

    /// The precision it runs in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The outputs' values, in [`VjpOp::outputs`] order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The output called `name`.
    pub fn output(&self, name: &str) -> Option<&Value> {
        self.op.outputs().iter().position(|(n, _)| *n == name).map(|i| &self.values[i])
    }

    /// The input cotangents (one per input, each of its input's shape) for
    /// the output cotangents `cotangents` (in [`VjpOp::outputs`] order;
    /// `None`, or a missing tail, is zero). May be called any number of
    /// times.
    ///
    /// # Errors
    /// [`ApiError::Argument`] naming the output whose cotangent has the
    /// wrong shape (with that shape), or too many cotangents; the
    /// library's derivative reports — `NotDifferentiable`, and `NearTie`
    /// where a cotangent on singular or eigen vectors is gauge dependent at
    /// tied or nearly tied values.
    pub fn pullback(&mut self, cotangents: &[Option<Value>]) -> Result<Vec<Matrix>, ApiError> {
        let outs = self.op.outputs();
        if cotangents.len() > outs.len() {
            return Err(ApiError::argument_shape(
                self.op.name(),
                "cotangents",
                &[cotangents.len()],
                format!("the op has {} output(s), got {} cotangents", outs.len(), cotangents.len()),
            ));
        }
        for (ct, ((name, _), value)) in cotangents.iter().zip(outs.iter().zip(&self.values)) {
            if let Some(ct) = ct {
                let (want, got) = (value.dims(), ct.dims());
                if want != got {
                    return Err(ApiError::argument_shape(
                        self.op.name(),
                        name,
                        &got,
                        format!(
                            "the cotangent of `{name}` must have the output's shape {want:?}, got {got:?}"
                        ),
                    ));
                }
            }
        }
        let mut loss: Option<Tracked<Tensor>> = None;
        for (ct, y) in cotangents.iter().zip(&self.outputs) {
            let Some(ct) = ct else { continue };
            let dims = ct.dims();
            let t = tensor(self.tape.inner(), &dims, ct.entries(), self.precision)?;
            let w = self.tape.binary(BinaryOp::Mul, y, &Tape::constant(t))?;
            let term = if dims.is_empty() { w } else { self.tape.reduce(ReduceOp::Sum, &w, dims.len())? };
            loss = Some(match loss {
                None => term,
                Some(l) => self.tape.binary(BinaryOp::Add, &l, &term)?,
            });
        }
        let shapes = self.inputs.iter().map(|x| (x.value().dims()[0], x.value().dims()[1]));
        let Some(loss) = loss else {
            // Every cotangent is zero: so is every input cotangent.
            return Ok(shapes.map(|(r, c)| Matrix::from_col_major(r, c, vec![0.0; r * c])).collect());
        };
        let wrt: Vec<&Tracked<Tensor>> = self.inputs.iter().collect();
        let grads = self.tape.backward(&loss, &wrt)?;
        shapes
            .zip(grads.iter())
            .map(|((r, c), g)| Ok(Matrix::from_col_major(r, c, entries(g, self.precision)?)))
            .collect()
    }
}
