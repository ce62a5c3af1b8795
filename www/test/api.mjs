// The JS API as a page or a node program sees it (run by `cargo xtask test`
// through `web::node_tests`): imports the built package `www/pkg` — the
// wasm-bindgen JS glue included, not only the Rust functions behind it —
// and checks
//   1. the README's JS example, run as written, prints what its `// →`
//      comments say;
//   2. Matrix, Loss and GradientOptions objects survive being passed to
//      calls (borrowed, not moved): the same options keep their ε, the same
//      weight builds two losses, the batch's data array is unchanged;
//   3. gradients at ties and zeros against closed forms (spectral-projector
//      perturbation theory; symmetric functions of a tied group; a
//      truncation that does or does not split a group), never against the
//      code under test;
//   4. the vjp API (www/test/vjp_cases.mjs, shared with the browser test):
//      JS losses through svd, eigh, qr, cholesky, solve, det, inv, matmul,
//      expm, logm, sqrtm, expm_hermitian, logm_pd, sqrtm_psd
//      against central differences, f32 against f64, LindiffError fields.
//
//   node www/test/api.mjs

import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const www = fileURLToPath(new URL('..', import.meta.url));
const pkg = pathToFileURL(join(www, 'pkg/lindiff_wasm.js')).href;

// `init()` without arguments fetches `lindiff_wasm_bg.wasm` next to the JS
// (as in a page); node's fetch has no file: URLs, so serve those here.
const webFetch = globalThis.fetch;
globalThis.fetch = async (input, options) => {
  const url = String(input instanceof Request ? input.url : input);
  if (!url.startsWith('file:')) return webFetch(input, options);
  return new Response(readFileSync(fileURLToPath(url)), { headers: { 'Content-Type': 'application/wasm' } });
};

let passed = 0;
let failed = 0;
function check(name, ok, detail = '') {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
}
const infNorm = (a) => Math.max(0, ...Array.from(a, Math.abs));
const maxDiff = (a, b) => {
  if (!a || !b || a.length !== b.length) return Infinity;
  let w = 0;
  for (let i = 0; i < a.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]));
  return Number.isNaN(w) ? Infinity : w;
};
/** ‖g − want‖∞ ≤ tol·max(1, ‖want‖∞), with the figure for the log. */
function close(name, g, want, tol) {
  const d = maxDiff(g, want);
  const rel = d / Math.max(1, infNorm(want));
  check(name, rel <= tol, `max diff ${d.toExponential(2)} (relative ${rel.toExponential(2)}, tolerance ${tol})`);
  return rel;
}

// ---- 1. the README example ------------------------------------------------

const readme = readFileSync(join(www, '../README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## The browser demo'));
const block = section.match(/```js\n([\s\S]*?)```/)[1];
const expected = [];
for (const line of block.split('\n')) {
  if (!line.includes('console.log(')) continue;
  const arrow = line.indexOf('// →');
  if (arrow < 0) throw new Error(`README example: a console.log without a "// →" comment: ${line}`);
  // The comment lists console.log's arguments; arithmetic such as 1.1 / 3 allowed.
  expected.push({ line: line.trim(), args: Function(`"use strict"; return [${line.slice(arrow + 4)}];`)() });
}
const printed = [];
const dir = mkdtempSync(join(tmpdir(), 'lindiff-readme-'));
const log = console.log;
try {
  const file = join(dir, 'example.mjs');
  writeFileSync(file, block.replace("'./pkg/lindiff_wasm.js'", JSON.stringify(pkg)));
  console.log = (...args) => printed.push(args);
  await import(pathToFileURL(file).href);
} finally {
  console.log = log;
  rmSync(dir, { recursive: true, force: true });
}
const same = (got, want) => {
  if (ArrayBuffer.isView(got)) got = Array.from(got);
  if (Array.isArray(want)) return Array.isArray(got) && got.length === want.length && want.every((w, i) => same(got[i], w));
  if (typeof want === 'number') return typeof got === 'number' && Math.abs(got - want) <= 1e-12 * Math.max(1, Math.abs(want));
  return got === want;
};
check('README example: one console.log per documented line', printed.length === expected.length, `${printed.length} printed, ${expected.length} documented`);
expected.forEach((e, i) => check(`README example prints its comment: ${e.line.split('//')[0].trim()}`, same(printed[i], e.args),
  `printed ${JSON.stringify(printed[i]?.map((x) => (ArrayBuffer.isView(x) ? Array.from(x) : x)))}`));

// ---- the package, for the rest ----------------------------------------------

const L = await import(pkg);
await L.default();
const { Matrix, Layout, Loss, GradientOptions } = L;

/** Householder reflector I − 2vvᵀ/vᵀv (r×r, row-major) of a fixed vector. */
function reflector(r, seed) {
  const v = Array.from({ length: r }, (_, i) => Math.sin(seed + 0.7 * i) + 0.1);
  const vv = v.reduce((t, x) => t + x * x, 0);
  return Float64Array.from({ length: r * r }, (_, e) => (Math.floor(e / r) === e % r ? 1 : 0) - (2 * v[Math.floor(e / r)] * v[e % r]) / vv);
}
/** A = Q[:, :k] diag(s) R[:, :k]ᵀ (m×n row-major) with full orthogonal Q (m×m), R (n×n). */
function withSpectrum(m, n, s) {
  const q = reflector(m, 0.3);
  const r = reflector(n, 1.9);
  const u = (i, l) => q[i * m + l];
  const v = (j, l) => r[j * n + l];
  const a = new Float64Array(m * n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) for (let l = 0; l < s.length; l++) a[i * n + j] += u(i, l) * s[l] * v(j, l);
  return { m, n, s, a, u, v, matrix: new Matrix(a, m, n, Layout.RowMajor) };
}
/** The same with Q, R signed permutations: A has s on a (signed) diagonal. */
function withBasis(m, n, s) {
  const sign = (l) => (l % 2 ? -1 : 1);
  const u = (i, l) => (i === (l + 1) % m ? sign(l) : 0);
  const v = (j, l) => (j === (l + 2) % n ? 1 : 0);
  const a = new Float64Array(m * n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) for (let l = 0; l < s.length; l++) a[i * n + j] += u(i, l) * s[l] * v(j, l);
  return { m, n, s, a, u, v, matrix: new Matrix(a, m, n, Layout.RowMajor) };
}
function weight(r, seed) {
  let x = seed;
  return Float64Array.from({ length: r * r }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648 - 0.5;
  });
}
/** xᵀ (W + Wᵀ) y for columns x, y given as functions of the row. */
const sym = (w, r, x, y) => {
  let t = 0;
  for (let i = 0; i < r; i++) for (let j = 0; j < r; j++) t += x(i) * (w[i * r + j] + w[j * r + i]) * y(j);
  return t;
};
/** Σ coef · x yᵀ added into g (m×n row-major). */
const addOuter = (g, m, n, coef, x, y) => {
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) g[i * n + j] += coef * x(i) * y(j);
};

/**
 * ∇ of ⟨W_U, U_kU_kᵀ⟩ + ⟨W_V, V_kV_kᵀ⟩ when the top k values are a union of
 * whole groups: P_K is the spectral projector of AAᵀ (resp. AᵀA) for the
 * eigenvalues s_i², i ∈ K, so dP_K = Σ_{i∈K, j∉K} (P_j dM P_i + P_i dM P_j)
 * / (s_i² − s_j²) over a full eigenbasis (s_j = 0 past min(m, n)), with
 * dM = dA Aᵀ + A dAᵀ (resp. dAᵀ A + Aᵀ dA).
 */
function projectorSumGradient({ m, n, s, u, v }, k, wu, wv) {
  const g = new Float64Array(m * n);
  const sv = (j) => (j < s.length ? s[j] : 0);
  for (let i = 0; i < k; i++) {
    const ui = (r) => u(r, i);
    const vi = (r) => v(r, i);
    for (let j = k; j < m; j++) {
      const uj = (r) => u(r, j);
      const c = sym(wu, m, uj, ui) / (s[i] ** 2 - sv(j) ** 2);
      addOuter(g, m, n, c * s[i], uj, vi);
      if (j < n) addOuter(g, m, n, c * sv(j), ui, (r) => v(r, j));
    }
    for (let j = k; j < n; j++) {
      const vj = (r) => v(r, j);
      const d = sym(wv, n, vj, vi) / (s[i] ** 2 - sv(j) ** 2);
      addOuter(g, m, n, d * s[i], ui, vj);
      if (j < m) addOuter(g, m, n, d * sv(j), (r) => u(r, j), vi);
    }
  }
  return g;
}
/** Σ_l coef_l u_l v_lᵀ. */
function spectralSum(A, coef) {
  const g = new Float64Array(A.m * A.n);
  coef.forEach((c, l) => addOuter(g, A.m, A.n, c, (r) => A.u(r, l), (r) => A.v(r, l)));
  return g;
}
function reported(fn) {
  try {
    fn();
    return null;
  } catch (e) {
    return e;
  }
}
const isReport = (e, op, output) => !!e && e.kind === 'NotDifferentiable' && e.op === op && (output === undefined || e.output === output);
const TOL = 1e-12;
const exact = new GradientOptions();

// ---- 2. objects are borrowed, not moved -----------------------------------------

{
  const A = withSpectrum(3, 3, [2, 2, 1]);
  const w = new Matrix(weight(3, 11), 3, 3, Layout.RowMajor);
  const p1 = Loss.projector(1, w);
  const p2 = Loss.projector(2, w); // the same w again: still there
  check('a weight passed to two losses is still readable', w.rows === 3 && maxDiff(w.toRowMajor(), weight(3, 11)) === 0);
  const eps = new GradientOptions().withDerivativeEps(1e-6);
  const runs = [0, 1, 2].map(() => reported(() => L.gradient(A.matrix, p1, eps)) ?? L.gradient(A.matrix, p1, eps).grad.toRowMajor());
  check('the same ε options, three calls: never falls back to the exact rule (P₁ at the tie stays a number)',
    runs.every((g) => !(g instanceof Error) && g.every(Number.isFinite)) && eps.derivativeEps === 1e-6);
  check('… and gives the same numbers each time', maxDiff(runs[0], runs[2]) === 0 && maxDiff(runs[0], runs[1]) === 0);
  check('the exact options still report P₁ at the tie after ε was used', isReport(reported(() => L.gradient(A.matrix, p1, exact)), 'svd', 'u'));
  const fdTwice = [L.finiteDifference(A.matrix, p2, exact), L.finiteDifference(A.matrix, p2, exact)];
  check('finiteDifference reuses its arguments', maxDiff(fdTwice[0].grad.toRowMajor(), fdTwice[1].grad.toRowMajor()) === 0);
  const B = withSpectrum(3, 3, [3, 2, 1]);
  const data = new Float64Array([...A.a, ...B.a]);
  const copy = Float64Array.from(data);
  const items = L.gradientBatch(data, 3, 3, Layout.RowMajor, p1, exact);
  check('gradientBatch leaves its data array as it was', maxDiff(data, copy) === 0 && data.length === 18);
  check('gradientBatch: per-matrix report and gradient', isReport(items[0].error, 'svd', 'u') && items[0].gradient === undefined && items[1].error === undefined);
  check('gradientBatch: a reported batch says it fell back to single calls', items.every((it) => it.fellBack === true));
  const single = L.gradient(B.matrix, p1, exact).grad.toRowMajor();
  check('gradientBatch item = the single call, bit for bit', maxDiff(items[1].gradient.grad.toRowMajor(), single) === 0);
  const again = L.gradientBatch(data, 3, 3, Layout.RowMajor, p1, exact);
  check('gradientBatch again on the same data, loss, options', maxDiff(again[1].gradient.grad.toRowMajor(), single) === 0);
  const bad = reported(() => L.gradientBatch(data.subarray(0, 10), 3, 3, Layout.RowMajor, p1, exact));
  check('gradientBatch: a ragged length throws InvalidArgument naming `data`', bad?.kind === 'InvalidArgument' && bad.argument === 'data', bad?.message);
  const missing = reported(() => L.gradient(A.matrix, p2));
  check('gradient without options throws (no silent defaults)', missing instanceof Error, missing?.message);
}

// ---- 3. closed forms at ties and zeros --------------------------------

const figures = {};
for (const [m, n] of [[4, 3], [3, 4]]) {
  const shape = `${m}×${n}`;
  const wu = weight(m, 5);
  const wv = weight(n, 6);
  const WU = new Matrix(wu, m, m, Layout.RowMajor);
  const WV = new Matrix(wv, n, n, Layout.RowMajor);
  for (const [what, s] of [['tie (2, 2, 1)', [2, 2, 1]], ['zero (2, 1, 0)', [2, 1, 0]]]) {
    const A = withSpectrum(m, n, s);
    const g = L.gradient(A.matrix, Loss.projectorSum(2, WU, WV), exact);
    figures[`projectorSum ${shape} ${what}`] = close(`${shape} projector sum, k = 2, at a ${what}: = spectral-projector closed form`,
      g.grad.toRowMajor(), projectorSumGradient(A, 2, wu, wv), TOL);
  }
  const tie = withSpectrum(m, n, [2, 2, 1]);
  check(`${shape} projector sum, k = 1, splits the tie: reported`,
    isReport(reported(() => L.gradient(tie.matrix, Loss.projectorSum(1, WU, WV), exact)), 'svd'));
  // Σ cᵢsᵢ: symmetric in the tied group iff c₁ = c₂; then ∇ = Σ cᵢ uᵢvᵢᵀ.
  const unequal = reported(() => L.gradient(tie.matrix, Loss.weightedValues(Float64Array.of(1, 0.5, 0.25)), exact));
  check(`${shape} Σcᵢsᵢ at the tie, c₁ ≠ c₂: reported (svd/s)`, isReport(unequal, 'svd', 's'), unequal?.message ?? 'no report');
  const c = [0.5, 0.5, 0.25];
  const gw = L.gradient(tie.matrix, Loss.weightedValues(Float64Array.from(c)), exact);
  figures[`weighted ${shape}`] = close(`${shape} Σcᵢsᵢ at the tie, c₁ = c₂: = Σ cᵢuᵢvᵢᵀ`, gw.grad.toRowMajor(), spectralSum(tie, c), TOL);
  check(`${shape} Σcᵢsᵢ value = 0.5·2 + 0.5·2 + 0.25·1`, Math.abs(gw.value - 2.25) <= 1e-14, `${gw.value}`);
  // ‖A − A_k‖²: k = 2 ends at the group boundary: ∇ = 2 s₃ u₃v₃ᵀ; k = 1 cuts the group: reported.
  // With A's singular vectors the unit vectors (signed), E = A − A₂ is exact:
  const diag = withBasis(m, n, [2, 2, 1]);
  const gt = L.gradient(diag.matrix, Loss.truncationError(2), exact);
  figures[`truncation ${shape}`] = close(`${shape} ‖A − A₂‖² at the tie, unit-vector basis (cut at the group boundary): = 2s₃u₃v₃ᵀ`,
    gt.grad.toRowMajor(), spectralSum(diag, [0, 0, 2]), TOL);
  check(`${shape} ‖A − A₂‖² value = s₃² = 1`, Math.abs(gt.value - 1) <= 1e-14, `${gt.value}`);
  // The same loss with rotated singular vectors (E V_K ≈ 0 only to rounding:
  // the gauge check must scale its tolerance with E, not with those
  // rounding-level SVD cotangents): answered, = 2 (A − A₂) = 2s₃u₃v₃ᵀ.
  const gr = L.gradient(tie.matrix, Loss.truncationError(2), exact);
  figures[`truncation rotated ${shape}`] = close(`${shape} ‖A − A₂‖² at the tie, rotated basis: = 2s₃u₃v₃ᵀ`,
    gr.grad.toRowMajor(), spectralSum(tie, [0, 0, 2]), TOL);
  check(`${shape} ‖A − A₁‖² at the tie (cut inside the group): reported by low_rank_approx`,
    isReport(reported(() => L.gradient(tie.matrix, Loss.truncationError(1), exact)), 'low_rank_approx'));
}

console.log(`worst relative error vs closed forms: ${Math.max(...Object.values(figures)).toExponential(2)}`);

// ---- 4. the vjp API ---------------------------------------------------------------

const { vjpCases } = await import('./vjp_cases.mjs');
for (const r of vjpCases(L)) check(r.name, r.ok, r.detail);
console.log(`api: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
