// Small dense helpers for the page (row-major Float64Arrays, sizes ≤ 8):
// products, transposes, random matrices. The linear algebra that matters
// (SVD, gradients, finite differences) runs in wasm; these only arrange
// inputs and draw outputs.

/** C = A·B with A r×l, B l×c, all row-major. */
export function matmul(a, b, r, l, c) {
  const out = new Float64Array(r * c);
  for (let i = 0; i < r; i++)
    for (let p = 0; p < l; p++) {
      const x = a[i * l + p];
      if (x === 0) continue;
      for (let j = 0; j < c; j++) out[i * c + j] += x * b[p * c + j];
    }
  return out;
}

/** Aᵀ of an r×c row-major A. */
export function transpose(a, r, c) {
  const out = new Float64Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = a[i * c + j];
  return out;
}

/** X Xᵀ of the first k columns of the r×c matrix X. */
export function projector(x, r, c, k) {
  const out = new Float64Array(r * r);
  for (let i = 0; i < r; i++)
    for (let j = 0; j < r; j++) {
      let sum = 0;
      for (let l = 0; l < k; l++) sum += x[i * c + l] * x[j * c + l];
      out[i * r + j] = sum;
    }
  return out;
}

/** U diag(s) Vᵀ from U (m×k), s (k) and Vᵀ (k×n). */
export function compose(u, s, vh, m, k, n) {
  const us = new Float64Array(m * k);
  for (let i = 0; i < m; i++) for (let l = 0; l < k; l++) us[i * k + l] = u[i * k + l] * s[l];
  return matmul(us, vh, m, k, n);
}

/** Uniform [−0.5, 0.5) entries from xorshift64 (same numbers as the native side). */
export function xorshiftMatrix(rows, cols, seed) {
  let x = BigInt.asUintN(64, BigInt(seed) | 1n);
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < out.length; i++) {
    x ^= BigInt.asUintN(64, x << 13n);
    x ^= x >> 7n;
    x ^= BigInt.asUintN(64, x << 17n);
    out[i] = Number(x >> 11n) / 2 ** 53 - 0.5;
  }
  return out;
}

/** max |a − b| (NaN anywhere gives NaN). */
export function maxAbsDiff(a, b) {
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (Number.isNaN(d)) return NaN;
    worst = Math.max(worst, d);
  }
  return worst;
}

/** Frobenius norm. */
export function norm(a) {
  let s = 0;
  for (const x of a) s += x * x;
  return Math.sqrt(s);
}
