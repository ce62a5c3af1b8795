// The demo page: loads lindiff-wasm (threaded when the page is
// crossOriginIsolated and the threaded build exists), keeps the state
// (matrix, spectrum controls, loss, ε), recomputes on every change and
// draws it. `window.demo` exposes the state and a few actions for the
// browser test (www/test/browser.mjs) and for the curious.

import { heatmap, short } from './heatmap.js';
import { compose, matmul, maxAbsDiff, norm, projector, transpose, xorshiftMatrix } from './linalg.js';
import { gapPlot, legend } from './plot.js';
import { cotangents, referenceGradient } from './reference.js';
import { compileLoss, finiteDifferenceGradient, lossGradient } from './jsloss.js';

const $ = (id) => document.getElementById(id);
const STEPS = 160; // slider steps: 10 per decade, 16 decades

let wasm = null;
const S = {
  m: 5,
  n: 4,
  base: null, // row-major A as edited
  factors: null, // { u, s, vh, v } of the base matrix (row-major)
  w: null, // m×m weight
  wv: null, // n×n weight
  tie: STEPS,
  zero: STEPS,
  loss: 'projector',
  k: 2,
  c: [1, 0.5, 0.25, 0.125, 0, 0, 0, 0],
  eps: null,
  sweep: 'tie',
  plotView: 'errors', // or 'magnitudes'
  plotDrawn: null, // finite points drawn per series, from gapPlot
  threads: 1,
  last: null,
  sweepPoints: null,
  busy: false,
};

// ---- loading ------------------------------------------------------------

/**
 * A module of wasm's SIMD proposal (one v128 instruction): it validates
 * only where the browser runs wasm simd128, which the page's builds use.
 */
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

/** What this browser offers: WebAssembly, its SIMD, threads. */
function capabilities() {
  const wasmOk = typeof WebAssembly === 'object' && typeof WebAssembly.validate === 'function';
  let simd = false;
  try {
    simd = wasmOk && WebAssembly.validate(SIMD_PROBE);
  } catch {
    simd = false;
  }
  const shared = typeof SharedArrayBuffer === 'function';
  return { wasm: wasmOk, simd, threads: shared && self.crossOriginIsolated === true, shared, isolated: self.crossOriginIsolated === true };
}

/** Shows a visible message at the top of the page (`level`: error or info). */
function notice(text, level = 'info') {
  const el = $('notice');
  const p = document.createElement('p');
  p.className = level;
  p.textContent = text;
  el.append(p);
  el.hidden = false;
}

/** Initialises a wasm-bindgen module from its own folder (the object form: no deprecation warning). */
async function initModule(dir) {
  const mod = await import(`./${dir}/lindiff_wasm.js`);
  await mod.default({ module_or_path: new URL(`./${dir}/lindiff_wasm_bg.wasm`, import.meta.url) });
  return mod;
}

async function load() {
  const caps = capabilities();
  S.capabilities = caps;
  if (!caps.wasm) {
    notice('This browser cannot run WebAssembly, so nothing on this page can compute. Please open it in a current Chrome, Edge, Firefox or Safari.', 'error');
    $('runtime').textContent = 'WebAssembly unavailable';
    return false;
  }
  if (!caps.simd) {
    notice('This browser runs WebAssembly but not its SIMD instructions (wasm simd128), which this page\'s build needs. Please update the browser (Chrome 91+, Firefox 89+, Safari 16.4+).', 'error');
    $('runtime').textContent = 'wasm SIMD unavailable';
    return false;
  }
  const builds = await (await fetch('builds.json')).json();
  S.builds = builds;
  // `?single` forces the single-threaded build (the browser test loads the
  // page this way too, to compare that build with the native fixture).
  S.forcedSingle = new URLSearchParams(location.search).has('single');
  if (builds.threads && caps.threads && !S.forcedSingle) {
    try {
      const mod = await initModule(builds.threads);
      const n = Math.max(1, Math.min(navigator.hardwareConcurrency || 1, 8));
      await mod.initThreadPool(n);
      mod.setThreads(n);
      wasm = mod;
      S.threads = n;
    } catch (e) {
      notice(`The threaded build did not start (${e && e.message ? e.message : e}); the page runs single-threaded.`);
    }
  }
  if (!wasm) wasm = await singleBuild();
  if (S.threads === 1 && !S.forcedSingle) {
    if (!caps.shared) notice('Threads are unavailable: this browser has no SharedArrayBuffer. Everything works, single-threaded; only the batched sweep in card 5 is slower.');
    else if (!caps.isolated) notice('Threads are unavailable: the page is not cross-origin isolated (it needs the Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy headers that `cargo xtask demo` sends). Everything works, single-threaded; only the batched sweep in card 5 is slower.');
    else if (!builds.threads) notice('Threads are unavailable: no threaded build was made. Everything works, single-threaded.');
  }
  $('runtime').textContent =
    `wasm ${wasm.simdBuild() ? 'simd128' : 'scalar'} · ` +
    (S.threads > 1 ? `${S.threads} threads (crossOriginIsolated)` : `single-threaded${S.forcedSingle ? ' (forced by ?single)' : caps.isolated ? '' : ' (page not cross-origin isolated)'}`);
  $('version').textContent = `v${wasm.version()}`;
  return true;
}

/** The single-threaded build's module, initialised once. */
let singlePromise = null;
function singleBuild() {
  singlePromise ??= initModule(S.builds.single);
  return singlePromise;
}

// ---- model ----------------------------------------------------------------

const k = () => Math.min(S.m, S.n);
const mat = (data, r, c) => new wasm.Matrix(Float64Array.from(data), r, c, wasm.Layout.RowMajor);

function randomWeights(seed) {
  S.w = xorshiftMatrix(S.m, S.m, seed);
  S.wv = xorshiftMatrix(S.n, S.n, seed + 1);
}

function setBase(a) {
  S.base = Float64Array.from(a);
  const f = wasm.svd(mat(S.base, S.m, S.n));
  const u = f.u.toRowMajor();
  const vh = f.vh.toRowMajor();
  S.factors = { u, s: f.s, vh, v: transpose(vh, k(), S.n) };
  S.tie = STEPS;
  S.zero = STEPS;
  $('tie').value = STEPS;
  $('zero').value = STEPS;
  S.sweepPoints = null;
}

/** The spectrum the controls set (the base one at the right ends). */
function spectrum(tie = S.tie, zero = S.zero) {
  const s = Float64Array.from(S.factors.s);
  const kk = s.length;
  if (kk >= 2 && tie < STEPS) s[1] = s[0] - tieGap(tie);
  if (zero < STEPS) s[kk - 1] = zeroValue(zero);
  return s;
}
const tieGap = (v) => (v === 0 ? 0 : (S.factors.s[0] - S.factors.s[1]) * 10 ** ((v - STEPS) / 10));
const zeroValue = (v) => (v === 0 ? 0 : S.factors.s[S.factors.s.length - 1] * 10 ** ((v - STEPS) / 10));

/** The matrix the controls make: A itself, or U diag(s′) Vᵀ. */
function currentMatrix(s = null) {
  if (!s && S.tie === STEPS && S.zero === STEPS) return S.base;
  return compose(S.factors.u, s ?? spectrum(), S.factors.vh, S.m, k(), S.n);
}

function lossSpec() {
  return { kind: S.loss, k: Math.min(S.k, k()), c: S.c.slice(0, k()), w: S.w, wv: S.wv };
}

function makeLoss() {
  const L = lossSpec();
  switch (L.kind) {
    case 'nuclear':
      return wasm.Loss.nuclear();
    case 'weighted':
      return wasm.Loss.weightedValues(Float64Array.from(L.c));
    case 'truncation':
      return wasm.Loss.truncationError(L.k);
    case 'projectorSum':
      return wasm.Loss.projectorSum(L.k, mat(S.w, S.m, S.m), mat(S.wv, S.n, S.n));
    default:
      return wasm.Loss.projector(L.k, mat(S.w, S.m, S.m));
  }
}

function makeOptions() {
  const o = new wasm.GradientOptions();
  return S.eps === null ? o : o.withDerivativeEps(S.eps);
}

/** lindiff's gradient, or the report; never throws for a report. */
function lindiffGradient(a, loss) {
  try {
    const g = wasm.gradient(mat(a, S.m, S.n), loss, makeOptions());
    return { value: g.value, grad: g.grad.toRowMajor(), error: null };
  } catch (e) {
    if (e && e.name === 'LindiffError') return { value: NaN, grad: null, error: plainError(e) };
    throw e;
  }
}
const plainError = (e) => ({ kind: e.kind, op: e.op, output: e.output, argument: e.argument, shape: e.shape, why: e.why, message: e.message });

/**
 * The textbook rule for the matrix `a` (row-major), as a textbook
 * implementation would run it: at the SVD of `a` as computed (here by lindiff's wasm SVD),
 * so rounding inside a (near-)tied group meets its F ≈ 1/(s_j² − s_i²).
 */
function referenceAt(a, f = null) {
  const kk = k();
  if (!f) {
    const d = wasm.svd(mat(a, S.m, S.n));
    f = { u: d.u.toRowMajor(), s: d.s, vh: d.vh.toRowMajor() };
    d.free();
  }
  const v = transpose(f.vh, kk, S.n);
  const factors = { m: S.m, n: S.n, u: f.u, s: f.s, v, a };
  return referenceGradient({ ...factors, ...cotangents(lossSpec(), factors), eps: 1e-12 });
}

// ---- recompute --------------------------------------------------------------

function recompute() {
  const s = spectrum();
  const a = currentMatrix();
  const A = mat(a, S.m, S.n);
  let t = performance.now();
  const f = wasm.svd(A);
  const tSvd = performance.now() - t;
  const u = f.u.toRowMajor();
  const vh = f.vh.toRowMajor();
  const kk = k();
  const loss = makeLoss();
  t = performance.now();
  const g = lindiffGradient(a, loss);
  const tGrad = performance.now() - t;
  t = performance.now();
  const fd = wasm.finiteDifference(mat(a, S.m, S.n), loss, makeOptions());
  const tFd = performance.now() - t;
  const fdGrad = fd.grad.toRowMajor();
  const ref = referenceAt(a, { u, s: f.s, vh });
  S.last = {
    a,
    s: f.s,
    u,
    vh,
    pu: projector(u, S.m, kk, Math.min(2, kk)),
    pv: projector(transpose(vh, kk, S.n), S.n, kk, Math.min(2, kk)),
    value: g.error ? fd.value : g.value,
    grad: g.grad,
    error: g.error,
    fd: fdGrad,
    reference: ref,
    maxDiff: g.grad ? maxAbsDiff(g.grad, fdGrad) : NaN,
    referenceVsLindiff: g.grad ? maxAbsDiff(ref, g.grad) : NaN,
    timings: { svd: tSvd, gradient: tGrad, fd: tFd },
    designed: s,
  };
  loss.free();
  render();
}

function render() {
  const L = S.last;
  const kk = k();
  heatmap($('hm-a'), L.a, S.m, S.n, { title: `A (${S.m}×${S.n})` });
  heatmap($('hm-u'), L.u, S.m, kk, { title: 'U' });
  heatmap($('hm-s'), L.s, kk, 1, { title: 'S (diagonal)' });
  heatmap($('hm-vh'), L.vh, kk, S.n, { title: 'Vᵀ' });
  $('spectrum').textContent = `s = [${Array.from(L.s, (x) => x.toPrecision(17)).join(', ')}]`;
  $('t-svd').textContent = `svd ${L.timings.svd.toFixed(3)} ms`;
  $('tie-out').textContent = kk >= 2 ? `s₁ − s₂ = ${S.tie === 0 ? '0 (exact tie)' : tieGap(S.tie).toExponential(2)}` : '(needs 2 singular values)';
  $('zero-out').textContent = `s_${kk} = ${S.zero === 0 ? '0 (exactly)' : zeroValue(S.zero).toExponential(2)}`;
  const st = $('status');
  const scale = Math.max(...(L.grad ?? L.fd).map(Math.abs), ...L.fd.map(Math.abs));
  if (L.error && L.error.kind === 'NotDifferentiable') {
    st.className = 'status nd';
    st.innerHTML = '';
    st.append(`Not differentiable here — ${L.error.op} / ${L.error.output}`);
    const why = document.createElement('small');
    why.textContent = `${L.error.message}. The finite differences below depend on their step and mean nothing here.`;
    st.append(why);
    heatmap($('hm-grad'), new Float64Array(S.m * S.n), S.m, S.n, { title: 'lindiff: no gradient (reported)', missing: true });
  } else if (L.error && L.error.kind === 'NearTie') {
    st.className = 'status nd';
    st.innerHTML = '';
    st.append(`Too near a tie for a reliable gradient — ${L.error.op}`);
    const why = document.createElement('small');
    why.textContent = `${L.error.message}.`;
    st.append(why);
    heatmap($('hm-grad'), new Float64Array(S.m * S.n), S.m, S.n, { title: 'lindiff: no gradient (reported)', missing: true });
  } else if (L.error) {
    st.className = 'status nd';
    st.textContent = L.error.message;
  } else {
    // ‖A − A_k‖² goes through low_rank_approx, which takes no SVD options:
    // ε does not reach it (wasm/src/loss/truncation_error.rs).
    const epsApplies = S.eps !== null && S.loss !== 'truncation';
    st.className = epsApplies ? 'status eps' : 'status ok';
    st.textContent =
      (S.eps === null
        ? 'Differentiable: lindiff’s exact gradient'
        : epsApplies
          ? `Reference broadening ε = ${S.eps}: lindiff follows the Lorentzian rule (no gauge check)`
          : `ε = ${S.eps} is ignored for this loss (low_rank_approx has its own exact rule and takes no SVD options): lindiff’s exact gradient`) +
      ` — loss = ${L.value.toPrecision(12)}, max |∇ − FD| = ${L.maxDiff.toExponential(2)}`;
    heatmap($('hm-grad'), L.grad, S.m, S.n, { title: 'lindiff ∇ (reverse mode)', scale });
  }
  heatmap($('hm-fd'), L.fd, S.m, S.n, { title: 'finite differences', scale });
  heatmap($('hm-ref'), L.reference, S.m, S.n, { title: 'reference rule (textbook, JS)' });
  heatmap($('hm-w'), S.loss === 'projector' || S.loss === 'projectorSum' ? S.w : [], S.loss.startsWith('projector') ? S.m : 0, S.m, { title: S.loss.startsWith('projector') ? 'W' : '' });
  const rn = norm(L.reference);
  $('compare').textContent =
    `‖lindiff‖ = ${L.grad ? norm(L.grad).toExponential(3) : 'reported'} · ‖FD‖ = ${norm(L.fd).toExponential(3)} · ` +
    `‖reference‖ = ${Number.isNaN(rn) ? 'NaN' : rn.toExponential(3)}`;
  $('t-grad').textContent = `gradient ${L.timings.gradient.toFixed(3)} ms`;
  $('t-fd').textContent = `finite differences (${2 * S.m * S.n} loss evaluations) ${L.timings.fd.toFixed(3)} ms`;
  $('k-label').style.display = ['projector', 'truncation', 'projectorSum'].includes(S.loss) ? '' : 'none';
  $('c-label').style.display = S.loss === 'weighted' ? '' : 'none';
  drawPlot();
  runJsLoss();
}

// ---- your own loss (card 7) ------------------------------------------------------

const JS = { op: 'svd', f32: false, last: null };

/** Differentiates the loss typed in card 7 at the current A and draws it. */
function runJsLoss() {
  const st = $('js-status');
  const a64 = Float64Array.from(currentMatrix());
  const a = { rows: S.m, cols: S.n, data: JS.f32 ? Float32Array.from(a64) : a64 };
  const fail = (error, text) => {
    JS.last = { error };
    st.className = 'status nd';
    st.textContent = text;
    heatmap($('hm-js-grad'), new Float64Array(S.m * S.n), S.m, S.n, { title: 'lindiff vjp: no gradient', missing: true });
    heatmap($('hm-js-fd'), [], 0, 0);
    $('js-compare').textContent = '';
  };
  let loss;
  try {
    loss = compileLoss($('js-loss').value, JS.op, S.m, S.n);
  } catch (e) {
    return fail({ kind: e.name, message: e.message }, `Your loss does not parse: ${e.message}`);
  }
  try {
    const t = performance.now();
    const g = lossGradient(wasm, JS.op, a, loss);
    const ms = performance.now() - t;
    const fd = finiteDifferenceGradient(wasm, JS.op, { rows: S.m, cols: S.n, data: a64 }, loss);
    const scale = Math.max(...Array.from(g.grad, Math.abs), ...Array.from(fd, Math.abs));
    const rel = maxAbsDiff(g.grad, fd) / (scale || 1);
    JS.last = { value: g.value, grad: g.grad, fd, rel, cotangents: Object.keys(g.cotangents), error: null, ms };
    st.className = 'status ok';
    st.textContent = `loss = ${g.value.toPrecision(12)} · cotangents on ${JS.last.cotangents.join(', ') || 'nothing (the loss is constant)'} · ` +
      `max |∇ − FD| / max |∇| = ${rel.toExponential(2)}${JS.f32 ? ' (f32 gradient against the f64 FD)' : ''}`;
    heatmap($('hm-js-grad'), g.grad, S.m, S.n, { title: `lindiff vjp ∂loss/∂A (${JS.f32 ? 'f32' : 'f64'})`, scale });
    heatmap($('hm-js-fd'), fd, S.m, S.n, { title: 'finite differences (f64)', scale });
    $('js-compare').textContent = `vjp ${ms.toFixed(2)} ms (one ${JS.op}, one pullback)`;
  } catch (e) {
    if (e instanceof wasm.LindiffError) {
      const where = [e.op, e.output ?? e.argument].filter(Boolean).join(' / ');
      return fail(plainError(e), `lindiff: ${e.kind}${where ? ` (${where})` : ''} — ${e.message}`);
    }
    return fail({ kind: e?.name ?? 'Error', message: String(e?.message ?? e) }, `Your loss threw: ${e?.message ?? e}`);
  }
}

// ---- the sweep ----------------------------------------------------------------

/** max |a − b| with NaN for a missing side (reported, or NaN inside). */
const errorOf = (a, b) => (a && b ? maxAbsDiff(a, b) : NaN);

function sweep() {
  const kk = k();
  const gaps = [];
  if (S.sweep === 'tie' && kk < 2) return [];
  const base = S.sweep === 'tie' ? S.factors.s[0] - S.factors.s[1] : S.factors.s[kk - 1];
  for (let j = 0; j <= 32; j++) gaps.push(base * 10 ** (-j / 2));
  gaps.push(0);
  const spectra = gaps.map((g) => {
    const s = Float64Array.from(S.factors.s);
    if (S.sweep === 'tie') s[1] = s[0] - g;
    else s[kk - 1] = g;
    return s;
  });
  const mats = spectra.map((s) => compose(S.factors.u, s, S.factors.vh, S.m, kk, S.n));
  const loss = makeLoss();
  const options = makeOptions();
  const stacked = new Float64Array(mats.length * S.m * S.n);
  mats.forEach((a, i) => stacked.set(a, i * S.m * S.n));
  const t = performance.now();
  const items = wasm.gradientBatch(stacked, S.m, S.n, wasm.Layout.RowMajor, loss, options);
  const tBatch = performance.now() - t;
  const points = gaps.map((gap, i) => {
    const g = items[i].gradient;
    const grad = g ? g.grad.toRowMajor() : null;
    const fd = wasm.finiteDifference(mat(mats[i], S.m, S.n), loss, options).grad.toRowMajor();
    const ref = referenceAt(mats[i]);
    return {
      gap,
      reported: !g,
      reportKind: g ? null : items[i].error?.kind ?? null, // NotDifferentiable or NearTie
      lindiff: grad ? norm(grad) : NaN,
      fd: norm(fd),
      reference: norm(ref),
      lindiffVsFd: errorOf(grad, fd),
      referenceVsFd: errorOf(ref, fd),
      referenceVsLindiff: errorOf(ref, grad),
      lindiffInf: grad ? Math.max(...Array.from(grad, Math.abs)) : NaN,
      value: g ? g.value : NaN, // the loss L, for the test's |L|/‖A‖ error scale
      aNorm: norm(mats[i]), // ‖A‖_F (the norm the FD step uses)
    };
  });
  loss.free();
  // gradientBatch redoes a batch reported as a whole one matrix at a time.
  const fellBack = items.some((it) => it.fellBack);
  S.sweepTiming = { batch: tBatch, total: performance.now() - t, count: gaps.length, fellBack };
  return points;
}

function drawPlot() {
  if (!S.sweepPoints) S.sweepPoints = sweep();
  const points = S.sweepPoints;
  if (!points.length) return;
  const current = S.sweep === 'tie' ? (S.tie === STEPS ? null : tieGap(S.tie)) : S.zero === STEPS ? null : zeroValue(S.zero);
  const h = 1e-6 * norm(S.base); // the FD step: below it FD cannot resolve a kink
  const view = S.plotView;
  S.plotDrawn = gapPlot($('plot'), points, { current, fdStep: h, xlabel: S.sweep === 'tie' ? 's₁ − s₂' : `s_${k()}`, view }).drawn;
  const errors = view === 'errors';
  legend($('legend'), [`○ on the axis: lindiff reported “not differentiable” or “too near a tie” (${errors ? 'no error' : 'no gradient'} to plot)`, '× NaN (reference)', `${errors ? '0 error' : '0'} drawn at 1e-17`, '┆ grey: the FD step h'], view);
  $('plot-title').textContent = errors ? 'Gradient error against the gap' : 'Gradient magnitude against the gap';
  $('plot-caption').textContent = errors
    ? 'Shown: max |error| of each gradient against finite differences (and the textbook rule against lindiff), per gap.'
    : 'Shown: the gradient magnitude ‖∇‖_F of lindiff, of finite differences and of the textbook rule, per gap. ' +
      'Where the loss is differentiable at the tie (P₂) the three stay at the same O(1) size down to the tie; ' +
      'for P₁ the true gradient grows like 1/gap: lindiff follows it until it reports, the textbook rule follows ' +
      'it until its broadening takes over (a peak near 1/2ε, then smaller numbers towards the tie), and FD, ' +
      'left of its step, cannot follow (it levels off, of order 1/h).';
  const T = S.sweepTiming;
  const how = T.fellBack ? 'one by one (the batch as a whole was reported, so each matrix got its own call)' : 'in one batched call';
  $('t-sweep').textContent = `${T.count} gradients ${how} ${T.batch.toFixed(1)} ms (${T.fellBack ? 1 : S.threads} thread${!T.fellBack && S.threads > 1 ? 's' : ''}); with FD and the textbook rule ${T.total.toFixed(1)} ms`;
}

// ---- UI -----------------------------------------------------------------------

function buildEditor() {
  const ed = $('editor');
  ed.replaceChildren();
  ed.style.gridTemplateColumns = `repeat(${S.n}, max-content)`;
  for (let i = 0; i < S.m; i++)
    for (let j = 0; j < S.n; j++) {
      const cell = document.createElement('input');
      cell.type = 'number';
      cell.step = 'any';
      cell.value = String(S.base[i * S.n + j]);
      cell.title = `A[${i}, ${j}] = ${S.base[i * S.n + j]}`;
      cell.setAttribute('aria-label', `A row ${i + 1} column ${j + 1}`);
      cell.dataset.i = i;
      cell.dataset.j = j;
      cell.addEventListener('change', () => {
        const x = Number(cell.value);
        if (!Number.isFinite(x)) return;
        const a = Float64Array.from(S.base);
        a[i * S.n + j] = x;
        setBase(a);
        recompute();
      });
      ed.append(cell);
    }
}

function newMatrix(m, n, a, w = null) {
  S.m = m;
  S.n = n;
  $('rows').value = m;
  $('cols').value = n;
  randomWeights(7);
  if (w) S.w = Float64Array.from(w);
  setBase(a);
  S.k = Math.min(S.k, k());
  $('k').max = k();
  $('k').value = S.k;
  buildEditor();
  recompute();
}

function wire() {
  for (const id of ['rows', 'cols'])
    for (let d = 1; d <= 8; d++) $(id).append(new Option(String(d), String(d)));
  const resize = () => newMatrix(+$('rows').value, +$('cols').value, xorshiftMatrix(+$('rows').value, +$('cols').value, 1 + Math.floor(Math.random() * 1e9)));
  $('rows').addEventListener('change', resize);
  $('cols').addEventListener('change', resize);
  $('randomise').addEventListener('click', () => newMatrix(S.m, S.n, xorshiftMatrix(S.m, S.n, 1 + Math.floor(Math.random() * 1e9))));
  $('example').addEventListener('click', () => {
    const a = new Float64Array(12);
    [2, 1, 0].forEach((x, i) => (a[i * 3 + i] = x));
    newMatrix(4, 3, a);
  });
  $('tie').addEventListener('input', () => {
    S.tie = +$('tie').value;
    recompute();
  });
  $('zero').addEventListener('input', () => {
    S.zero = +$('zero').value;
    recompute();
  });
  $('reset-spectrum').addEventListener('click', () => {
    S.tie = S.zero = STEPS;
    $('tie').value = $('zero').value = STEPS;
    recompute();
  });
  const lossChanged = () => {
    S.sweepPoints = null;
    recompute();
  };
  $('loss').addEventListener('change', () => {
    S.loss = $('loss').value;
    lossChanged();
  });
  $('k').addEventListener('change', () => {
    S.k = Math.max(1, Math.min(k(), Math.round(+$('k').value) || 1));
    $('k').value = S.k;
    lossChanged();
  });
  $('c').addEventListener('change', () => {
    const c = $('c').value.split(/[,\s]+/).filter(Boolean).map(Number);
    if (c.every(Number.isFinite)) {
      while (c.length < 8) c.push(0);
      S.c = c;
      lossChanged();
    }
  });
  $('random-w').addEventListener('click', () => {
    randomWeights(1 + Math.floor(Math.random() * 1e9));
    lossChanged();
  });
  const epsChanged = () => {
    const x = Number($('eps').value);
    S.eps = $('eps-on').checked && Number.isFinite(x) && x > 0 ? x : null;
    lossChanged();
  };
  $('eps-on').addEventListener('change', epsChanged);
  $('eps').addEventListener('change', epsChanged);
  for (const r of document.querySelectorAll('input[name=plot-view]'))
    r.addEventListener('change', () => {
      S.plotView = r.value;
      drawPlot();
    });
  for (const r of document.querySelectorAll('input[name=sweep]'))
    r.addEventListener('change', () => {
      S.sweep = r.value;
      lossChanged();
    });
  $('js-run').addEventListener('click', runJsLoss);
  $('js-loss').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) runJsLoss();
  });
  $('js-op').addEventListener('change', () => {
    JS.op = $('js-op').value;
    const defaults = { svd: 'sum(s.map(x=>x*x)) + u[0]', qr: 'sum(r.map(x=>x*x)) + q[0]' };
    if (Object.values(defaults).includes($('js-loss').value.trim())) $('js-loss').value = defaults[JS.op];
    runJsLoss();
  });
  $('js-f32').addEventListener('change', () => {
    JS.f32 = $('js-f32').checked;
    runJsLoss();
  });
  $('bench').addEventListener('click', async () => {
    const ms = await benchSingle(256, 5);
    $('t-bench').textContent = `256×256 SVD: ${ms.toFixed(1)} ms (best of 5, single-threaded build)`;
  });
}

/**
 * Best time in ms of `reps` n×n SVDs after one warm-up (xorshift seed 42,
 * as the native bench) in the build `mod` (the page's own by default).
 */
function bench(n, reps, mod = wasm) {
  const a = new mod.Matrix(xorshiftMatrix(n, n, 42), n, n, mod.Layout.RowMajor);
  let best = Infinity;
  mod.svd(a).free();
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    const f = mod.svd(a);
    best = Math.min(best, performance.now() - t);
    f.free();
  }
  a.free();
  return best;
}

/** `bench` in the single-threaded build (what native single-thread is compared with). */
async function benchSingle(n, reps) {
  return bench(n, reps, await singleBuild());
}

/**
 * The threaded build's promise, checked: a batch's results do not depend
 * on how it is split. The same 48 gradients (P₂, random 6×5 matrices) with
 * the pool's n threads, with 1 thread, and in the single-threaded build;
 * counts the entries that differ in any bit. Null without threads.
 */
async function threadCheck(count = 48) {
  if (S.threads <= 1) return null;
  const single = await singleBuild();
  const [m, n] = [6, 5];
  const data = new Float64Array(count * m * n);
  for (let i = 0; i < count; i++) data.set(xorshiftMatrix(m, n, 100 + i), i * m * n);
  const w = xorshiftMatrix(m, m, 99);
  const run = (mod, threads) => {
    if (threads) mod.setThreads(threads);
    const W = new mod.Matrix(w, m, m, mod.Layout.RowMajor);
    const loss = mod.Loss.projector(2, W);
    const t = performance.now();
    const items = mod.gradientBatch(data, m, n, mod.Layout.RowMajor, loss, new mod.GradientOptions());
    const ms = performance.now() - t;
    const out = new Float64Array(count * (m * n + 1));
    items.forEach((it, i) => {
      out[i * (m * n + 1)] = it.gradient.value;
      out.set(it.gradient.grad.toRowMajor(), i * (m * n + 1) + 1);
    });
    return { out, ms };
  };
  const bits = (a, b) => a.reduce((c, x, i) => c + (Object.is(x, b[i]) ? 0 : 1), 0);
  const threaded = run(wasm, S.threads);
  const one = run(wasm, 1);
  wasm.setThreads(S.threads);
  const plain = run(single, 0);
  return {
    threads: S.threads,
    entries: threaded.out.length,
    differVsOneThread: bits(threaded.out, one.out),
    differVsSingleBuild: bits(threaded.out, plain.out),
    ms: { threaded: threaded.ms, oneThread: one.ms, singleBuild: plain.ms },
  };
}

window.demo = {
  state: S,
  /** Card 7's state: op, precision, the last result. */
  jsLoss: JS,
  /** The loaded wasm module (null before `ready`). */
  get wasm() {
    return wasm;
  },
  ready: (async () => {
    if (!(await load())) return false;
    wire();
    newMatrix(S.m, S.n, xorshiftMatrix(S.m, S.n, 2026));
    return true;
  })(),
  /** Loads A (row-major m×n) and W (m×m) as if typed in. */
  load({ m, n, a, w }) {
    newMatrix(m, n, a, w);
  },
  bench,
  benchSingle,
  threadCheck,
};
