//! [`ApiError`] as JS sees it: a thrown `LindiffError`, a real subclass of
//! `Error` (defined in a small inline JS module and re-exported by the
//! package, so `e instanceof LindiffError` works) with structured fields,
//! and its TypeScript declaration. Below every module that hands an error
//! to JS (the exported functions in `js.rs` and `js_vjp.rs`, the JS
//! constructors and builders of `Matrix`, `GradientOptions`, `BatchItem`).

use crate::error::ApiError;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(inline_js = r#"
export class LindiffError extends Error {
  constructor(message, fields) {
    super(message);
    this.name = 'LindiffError';
    Object.assign(this, fields);
  }
}
"#)]
extern "C" {
    /// The JS class every function throws.
    #[wasm_bindgen(typescript_type = "LindiffError")]
    pub type LindiffError;

    #[wasm_bindgen(constructor)]
    fn new(message: &str, fields: &js_sys::Object) -> LindiffError;

    // The same class, re-exported by the package as `LindiffError` (through
    // an imported function: a re-exported type would be declared
    // `let LindiffError: unknown` in the .d.ts; the class declaration below
    // is the real one).
    #[allow(dead_code)] // never called: it exists to be re-exported
    #[wasm_bindgen(js_name = LindiffError, reexport, skip_typescript)]
    fn lindiff_error_class();
}

#[wasm_bindgen(typescript_custom_section)]
const LINDIFF_ERROR: &'static str = r#"
/** What every function throws: a JS `Error` subclass with structured fields. */
export class LindiffError extends Error {
  name: "LindiffError";
  /**
   * "InvalidArgument" (this API's argument checks), else the library's error
   * kind: "NotDifferentiable", "NearTie" (a gauge-dependent cotangent at
   * tied or nearly tied values), "NotSquare", "DimMismatch", "NonFinite",
   * "NotPositiveDefinite", "Singular", …
   */
  kind: string;
  /** The op (e.g. "svd", "cholesky") or API function; "" when none. */
  op: string;
  /** The argument at fault (e.g. "a", "b", or an output's cotangent "u"), if any. */
  argument?: string;
  /** The offending shape (rows first), if the error names one. */
  shape?: number[];
  /** NotDifferentiable: the output whose derivative does not exist here (e.g. "u", "s"). */
  output?: string;
  /** Why, in words. */
  why: string;
}
"#;

/// The thrown `LindiffError` for `e`: `message` = the library's message,
/// and the fields `kind`, `op`, `argument`, `shape`, `output`, `why` (the
/// optional ones only where the error names them).
pub(crate) fn to_js(e: ApiError) -> JsValue {
    let fields = js_sys::Object::new();
    let set = |key: &str, value: &JsValue| {
        // Setting a property on a fresh plain object cannot fail.
        let _ = js_sys::Reflect::set(&fields, &JsValue::from_str(key), value);
    };
    set("kind", &JsValue::from_str(e.kind()));
    set("op", &JsValue::from_str(e.op()));
    if let Some(arg) = e.argument_name() {
        set("argument", &JsValue::from_str(arg));
    }
    if let Some(shape) = e.shape() {
        let dims: js_sys::Array = shape.iter().map(|&d| JsValue::from_f64(d as f64)).collect();
        set("shape", &dims);
    }
    if let Some(output) = e.output() {
        set("output", &JsValue::from_str(output));
    }
    let why = match &e {
        ApiError::Lindiff(lindiff_core::Error::NotDifferentiable { why, .. }) => (*why).to_owned(),
        ApiError::Argument { why, .. } => why.clone(),
        ApiError::Lindiff(other) => other.to_string(),
    };
    set("why", &JsValue::from_str(&why));
    LindiffError::new(&e.to_string(), &fields).into()
}
