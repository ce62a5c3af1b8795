//! The JS face of [`vjp`](crate::vjp()): `vjp(op, inputs)` returns a `Vjp`
//! whose `outputs` are plain JS values and whose `pullback(cotangents)`
//! returns the input cotangents. Conversions between JS values (typed
//! arrays, `{ data, rows, cols }` objects) and [`Matrix`] / [`Value`] live
//! here, at the edge; nothing in the crate imports this module.
//!
//! A matrix crosses as `{ data, rows, cols }` with `data` row-major (JS
//! order), a vector as a typed array, a scalar as a number. The input
//! arrays' type picks the precision: `Float32Array` runs in f32 and
//! returns `Float32Array`s; `Float64Array` (or a plain array) in f64.

use crate::error::ApiError;
use crate::js_error::to_js;
use crate::matrix::{Layout, Matrix};
use crate::vjp::{self, OutputKind, Precision, Value, VjpOp};
use js_sys::{Array, Float32Array, Float64Array, Object, Reflect};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const VJP_TYPES: &'static str = r#"
/** The arrays the vjp API takes and returns: the input's type picks f32 or f64. */
export type FloatArray = Float32Array | Float64Array;
/** A dense matrix: `data` lists the entries row after row. */
export interface Mat<A extends FloatArray = Float64Array> {
  data: A;
  rows: number;
  cols: number;
}
/** The outputs of each op of `vjp`. */
export interface VjpOutputs<A extends FloatArray> {
  svd: { u: Mat<A>; s: A; vh: Mat<A> };
  eigh: { w: A; v: Mat<A> };
  qr: { q: Mat<A>; r: Mat<A> };
  cholesky: { l: Mat<A> };
  solve: { x: Mat<A> };
  det: { det: number };
  inv: { inv: Mat<A> };
  matmul: { c: Mat<A> };
  expm: { ea: Mat<A> };
  logm: { la: Mat<A> };
  sqrtm: { sa: Mat<A> };
  expm_hermitian: { ea: Mat<A> };
  logm_pd: { la: Mat<A> };
  sqrtm_psd: { sa: Mat<A> };
}
/** The inputs of each op of `vjp`. */
export interface VjpInputs<A extends FloatArray> {
  svd: [a: Mat<A>];
  eigh: [a: Mat<A>];
  qr: [a: Mat<A>];
  cholesky: [a: Mat<A>];
  solve: [a: Mat<A>, b: Mat<A>];
  det: [a: Mat<A>];
  inv: [a: Mat<A>];
  matmul: [a: Mat<A>, b: Mat<A>];
  expm: [a: Mat<A>];
  logm: [a: Mat<A>];
  sqrtm: [a: Mat<A>];
  expm_hermitian: [a: Mat<A>];
  logm_pd: [a: Mat<A>];
  sqrtm_psd: [a: Mat<A>];
}
/** The ops `vjp` runs. */
export type VjpOp = keyof VjpOutputs<Float64Array>;
/** The cotangent of an output: same shape (a matrix's may also be its flat row-major entries). */
export type Cotangent<T> = T extends number ? number : T extends Mat<infer A> ? Mat<A> | A | number[] : T | number[];
/** One matrix per input of the tuple `T` (the input cotangents). */
export type InputCotangents<T, A extends FloatArray> = { [I in keyof T]: Mat<A> };
/** Cotangents, one per output by name; a missing one is zero. */
export type Cotangents<O> = { [K in keyof O]?: Cotangent<O[K]> | null };
/**
 * One op run forward on lindiff's tape. `outputs` holds its results;
 * `pullback` maps output cotangents to input cotangents (any number of
 * times). `free()` releases it now (else the garbage collector does).
 */
export class Vjp<K extends VjpOp = VjpOp, A extends FloatArray = FloatArray> {
  private constructor();
  free(): void;
  [Symbol.dispose](): void;
  /** The op's name. */
  readonly op: K;
  /** "f32" or "f64". */
  readonly precision: A extends Float32Array ? "f32" : "f64";
  /** The outputs (fresh copies on every read). */
  readonly outputs: VjpOutputs<A>[K];
  /**
   * The input cotangents for these output cotangents, one per input in
   * order, each of its input's shape. Throws a `LindiffError` for a
   * cotangent of the wrong shape or an unknown output name, and passes the
   * library's reports through (`NotDifferentiable`; `NearTie` where a
   * cotangent on singular or eigen vectors is gauge dependent at tied
   * values).
   */
  pullback(cotangents: Cotangents<VjpOutputs<A>[K]>): InputCotangents<VjpInputs<A>[K], A>;
}
/**
 * Runs `op` on `inputs` on lindiff's tape and returns the outputs with a
 * pullback. Throws a `LindiffError` (e.g. `kind: "NotSquare", op:
 * "cholesky", argument: "a", shape: [2, 3]`).
 */
export function vjp<K extends VjpOp, A extends FloatArray = Float64Array>(op: K, inputs: VjpInputs<A>[K]): Vjp<K, A>;
"#;

/// The entries of a JS array-like (typed array or array of numbers), or
/// `None` when `v` is none of these.
fn numbers(v: &JsValue) -> Option<Vec<f64>> {
    if let Some(a) = v.dyn_ref::<Float64Array>() {
        Some(a.to_vec())
    } else if let Some(a) = v.dyn_ref::<Float32Array>() {
        Some(a.to_vec().into_iter().map(f64::from).collect())
    } else if Array::is_array(v) {
        Array::from(v).iter().map(|x| x.as_f64()).collect()
    } else {
        None
    }
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A count from a JS number (a non-negative integer).
fn count(v: &JsValue) -> Option<usize> {
    v.as_f64().filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x <= u32::MAX as f64).map(|x| x as usize)
}

/// `{ data, rows, cols }` (row-major data) as a [`Matrix`], and the
/// precision its data's type asks for; errors name `op` and `arg`.
fn matrix_in(op: &'static str, arg: &'static str, v: &JsValue) -> Result<(Matrix, Precision), ApiError> {
    let data = get(v, "data");
    let (rows, cols) = (count(&get(v, "rows")), count(&get(v, "cols")));
    let (Some(rows), Some(cols)) = (rows, cols) else {
        return Err(ApiError::argument(
            op,
            arg,
            "must be { data, rows, cols } with integer rows and cols".into(),
        ));
    };
    let precision = if data.is_instance_of::<Float32Array>() { Precision::F32 } else { Precision::F64 };
    let entries = numbers(&data).ok_or_else(|| {
        ApiError::argument_shape(
            op,
            arg,
            &[rows, cols],
            "`data` must be a Float32Array, Float64Array or number[]".into(),
        )
    })?;
    if Some(entries.len()) != rows.checked_mul(cols) {
        return Err(ApiError::argument_shape(
            op,
            arg,
            &[rows, cols],
            format!(
                "a {rows}×{cols} matrix needs {} entries, got {}",
                rows.saturating_mul(cols),
                entries.len()
            ),
        ));
    }
    Ok((Matrix::new(entries, rows, cols, Layout::RowMajor)?, precision))
}

/// A cotangent for an output of `kind` shaped like `like`.
fn cotangent_in(
    op: &'static str,
    name: &'static str,
    kind: OutputKind,
    like: &Value,
    v: &JsValue,
) -> Result<Value, ApiError> {
    let bad = |what: &str| ApiError::argument(op, name, format!("the cotangent of `{name}` must be {what}"));
    match kind {
        OutputKind::Scalar => v.as_f64().map(Value::Scalar).ok_or_else(|| bad("a number")),
        OutputKind::Vector => numbers(v).map(Value::Vector).ok_or_else(|| bad("a typed array or number[]")),
        OutputKind::Matrix => {
            if let Some(flat) = numbers(v) {
                let Value::Matrix(m) = like else { unreachable!("a matrix output has a matrix value") };
                if flat.len() != m.rows() * m.cols() {
                    return Err(ApiError::argument_shape(
                        op,
                        name,
                        &[flat.len()],
                        format!(
                            "the flat cotangent of `{name}` must have {}×{} entries, got {}",
                            m.rows(),
                            m.cols(),
                            flat.len()
                        ),
                    ));
                }
                return Ok(Value::Matrix(Matrix::new(flat, m.rows(), m.cols(), Layout::RowMajor)?));
            }
            if v.is_object() {
                return Ok(Value::Matrix(matrix_in(op, name, v)?.0));
            }
            Err(bad("{ data, rows, cols } or the flat row-major entries"))
        }
    }
}

/// A typed array of `precision` holding `data`.
fn array_out(data: &[f64], precision: Precision) -> JsValue {
    match precision {
        Precision::F64 => Float64Array::from(data).into(),
        Precision::F32 => {
            Float32Array::from(&data.iter().map(|&x| x as f32).collect::<Vec<f32>>()[..]).into()
        }
    }
}

/// `{ data, rows, cols }` (row-major) for `m`.
fn matrix_out(m: &Matrix, precision: Precision) -> JsValue {
    let obj = Object::new();
    // Setting properties on a fresh plain object cannot fail.
    let _ = Reflect::set(&obj, &"data".into(), &array_out(&m.to_row_major(), precision));
    let _ = Reflect::set(&obj, &"rows".into(), &JsValue::from_f64(m.rows() as f64));
    let _ = Reflect::set(&obj, &"cols".into(), &JsValue::from_f64(m.cols() as f64));
    obj.into()
}

fn value_out(v: &Value, precision: Precision) -> JsValue {
    match v {
        Value::Matrix(m) => matrix_out(m, precision),
        Value::Vector(x) => array_out(x, precision),
        Value::Scalar(x) => JsValue::from_f64(*x),
    }
}

/// One op run forward, as JS holds it (see the TypeScript `Vjp`).
#[wasm_bindgen(js_name = Vjp, skip_typescript)]
#[derive(Debug)]
pub struct JsVjp {
    inner: vjp::Vjp,
}

#[wasm_bindgen(js_class = Vjp)]
impl JsVjp {
    /// The op's name.
    #[wasm_bindgen(getter, skip_typescript)]
    pub fn op(&self) -> String {
        self.inner.op().name().into()
    }

    /// `"f32"` or `"f64"`.
    #[wasm_bindgen(getter, skip_typescript)]
    pub fn precision(&self) -> String {
        match self.inner.precision() {
            Precision::F32 => "f32".into(),
            Precision::F64 => "f64".into(),
        }
    }

    /// The outputs by name, as fresh JS values.
    #[wasm_bindgen(getter, skip_typescript)]
    pub fn outputs(&self) -> JsValue {
        let obj = Object::new();
        let precision = self.inner.precision();
        for ((name, _), v) in self.inner.op().outputs().iter().zip(self.inner.values()) {
            let _ = Reflect::set(&obj, &JsValue::from_str(name), &value_out(v, precision));
        }
        obj.into()
    }

    /// The input cotangents for the output cotangents `cotangents` (an
    /// object keyed by output name; a missing one is zero).
    ///
    /// # Errors
    /// Throws a `LindiffError`.
    #[wasm_bindgen(skip_typescript)]
    pub fn pullback(&mut self, cotangents: &JsValue) -> Result<Array, JsValue> {
        self.js_pullback(cotangents).map_err(to_js)
    }
}

impl JsVjp {
    fn js_pullback(&mut self, cotangents: &JsValue) -> Result<Array, ApiError> {
        let op = self.inner.op();
        let name = op.name();
        if !(cotangents.is_object() || cotangents.is_undefined() || cotangents.is_null()) {
            return Err(ApiError::argument(
                name,
                "cotangents",
                "must be an object keyed by output name".into(),
            ));
        }
        let outs = op.outputs();
        let mut cts = Vec::with_capacity(outs.len());
        if cotangents.is_object() {
            for key in Object::keys(cotangents.unchecked_ref::<Object>()).iter() {
                let key = key.as_string().unwrap_or_default();
                if !outs.iter().any(|(n, _)| *n == key) {
                    let known: Vec<&str> = outs.iter().map(|(n, _)| *n).collect();
                    return Err(ApiError::argument(
                        name,
                        "cotangents",
                        format!("{key:?} is not an output of {name} (its outputs: {})", known.join(", ")),
                    ));
                }
            }
            for ((out, kind), like) in outs.iter().zip(self.inner.values()) {
                let v = get(cotangents, out);
                cts.push(if v.is_undefined() || v.is_null() {
                    None
                } else {
                    Some(cotangent_in(name, out, *kind, like, &v)?)
                });
            }
        }
        let precision = self.inner.precision();
        let grads = self.inner.pullback(&cts)?;
        Ok(grads.iter().map(|g| matrix_out(g, precision)).collect())
    }
}

/// Runs `op` on `inputs` (JS `vjp(op, inputs)`; see the TypeScript
/// declaration).
///
/// # Errors
/// Throws a `LindiffError`: an unknown op, a wrong number of inputs, a
/// malformed matrix (naming the input and its shape), or the library's
/// errors.
#[wasm_bindgen(js_name = vjp, skip_typescript)]
pub fn js_vjp(op: &str, inputs: &JsValue) -> Result<JsVjp, JsValue> {
    vjp_in(op, inputs).map_err(to_js)
}

fn vjp_in(op: &str, inputs: &JsValue) -> Result<JsVjp, ApiError> {
    let op = VjpOp::parse(op)?;
    if !Array::is_array(inputs) {
        return Err(ApiError::argument(
            op.name(),
            "inputs",
            "must be an array of { data, rows, cols }".into(),
        ));
    }
    let inputs = Array::from(inputs);
    let names = op.inputs();
    let mut matrices = Vec::with_capacity(names.len());
    let mut precision = None;
    for (i, v) in inputs.iter().enumerate() {
        let arg = names.get(i).copied().unwrap_or("inputs");
        let (m, p) = matrix_in(op.name(), arg, &v)?;
        if precision.is_some_and(|q| q != p) {
            return Err(ApiError::argument_shape(
                op.name(),
                arg,
                &[m.rows(), m.cols()],
                "all inputs must be Float32Array or all Float64Array".into(),
            ));
        }
        precision = Some(p);
        matrices.push(m);
    }
    let inner = vjp::vjp(op, &matrices, precision.unwrap_or(Precision::F64))?;
    Ok(JsVjp { inner })
}
