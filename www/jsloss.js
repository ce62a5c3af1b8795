// The "your own loss" card: a loss typed in JavaScript over the outputs of
// a decomposition of A, differentiated with lindiff's vjp. The loss's
// derivative with respect to the outputs (a few dozen numbers) is taken by
// central differences on those outputs; lindiff's pullback carries it back
// to A through the decomposition's own derivative rule. The check beside
// it is central differences of the whole loss with respect to A.

/** Helpers the loss text may use. */
const helpers = {
  sum: (xs) => Array.from(xs).reduce((a, b) => a + b, 0),
  dot: (xs, ys) => Array.from(xs).reduce((a, x, i) => a + x * ys[i], 0),
};

/** The output names of each op the card offers, with their shapes. */
export const OPS = {
  svd: (m, n, k) => ({ u: [m, k], s: [k], vh: [k, n] }),
  qr: (m, n, k) => ({ q: [m, k], r: [k, n] }),
};

/**
 * Compiles the loss text into `(outputs) => number` for `op` on an m×n A.
 * Outputs are flat arrays (matrices row-major); `at(x, i, j)` reads an
 * entry of an output matrix by its column count.
 */
export function compileLoss(src, op, m, n) {
  const k = Math.min(m, n);
  const shapes = OPS[op](m, n, k);
  const names = Object.keys(shapes);
  // The visitor's own code, run in the visitor's own page.
  const body = new Function('sum', 'dot', 'at', 'm', 'n', 'k', ...names, `"use strict"; return (${src});`);
  return (o) => {
    const flat = names.map((name) => o[name]);
    const at = (x, i, j) => {
      const name = names[flat.indexOf(x)];
      const cols = name ? shapes[name][1] ?? 1 : k;
      return x[i * cols + j];
    };
    const v = body(helpers.sum, helpers.dot, at, m, n, k, ...flat);
    if (typeof v !== 'number') throw new TypeError(`the loss must be a number, got ${typeof v}`);
    return v;
  };
}

/** The outputs of a vjp handle as flat arrays (matrices row-major). */
function flatOutputs(f) {
  const out = {};
  for (const [name, v] of Object.entries(f.outputs)) out[name] = v.data ?? v;
  return out;
}

/**
 * lindiff's gradient of `loss` at A (`{ data, rows, cols }`, row-major):
 * the value, ∂loss/∂A (row-major) and the output cotangents used.
 * Throws the library's LindiffError (e.g. a gauge-dependent loss at a tie).
 */
export function lossGradient(wasm, op, a, loss) {
  const f = wasm.vjp(op, [a]);
  try {
    const o = flatOutputs(f);
    const value = loss(o);
    const cotangents = {};
    for (const [name, y] of Object.entries(o)) {
      const d = Float64Array.from(y);
      const g = new Float64Array(d.length);
      for (let e = 0; e < d.length; e++) {
        const x = d[e];
        const h = 1e-6 * Math.max(1, Math.abs(x));
        d[e] = x + h;
        const up = loss({ ...o, [name]: d });
        d[e] = x - h;
        const down = loss({ ...o, [name]: d });
        d[e] = x;
        g[e] = (up - down) / (2 * h);
      }
      if (g.some((x) => x !== 0)) cotangents[name] = g;
    }
    const [ga] = f.pullback(cotangents);
    return { value, grad: Float64Array.from(ga.data), cotangents };
  } finally {
    f.free();
  }
}

/**
 * Central differences of `loss` through the decomposition, entry by entry
 * of A, always in f64 (the check for either precision), h = 1e-6·‖A‖_F.
 */
export function finiteDifferenceGradient(wasm, op, a, loss) {
  const valueAt = (data) => {
    const f = wasm.vjp(op, [{ rows: a.rows, cols: a.cols, data }]);
    try {
      return loss(flatOutputs(f));
    } finally {
      f.free();
    }
  };
  const x = Float64Array.from(a.data);
  const norm = Math.sqrt(x.reduce((t, v) => t + v * v, 0)) || 1;
  const h = 1e-6 * norm;
  const g = new Float64Array(x.length);
  for (let e = 0; e < x.length; e++) {
    const d = Float64Array.from(x);
    d[e] = x[e] + h;
    const up = valueAt(d);
    d[e] = x[e] - h;
    const down = valueAt(d);
    g[e] = (up - down) / (2 * h);
  }
  return g;
}
