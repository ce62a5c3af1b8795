// The browser test (run by `cargo xtask browser`, part of `cargo xtask test`):
// Debian's chromium, driven by playwright-core, loads the demo from the
// xtask's server and must reproduce the values the native library wrote
// to the fixture during the same run; the tie and zero controls with P₂
// must give finite gradients that match finite differences; P₁ at the tie
// and the nuclear norm at a zero value must show "not differentiable";
// the vjp checks (vjp_cases.mjs) run in the page on its own wasm module;
// the "your own loss" card differentiates a JS loss and reports the gauge
// at a tie; matrix cells show their full value on focus; the page says so
// visibly when wasm, wasm SIMD or threads are missing; any console warning
// or error, or page error, fails the test. Screenshots go to --out, and
// the first one also to --screenshot. The 256²
// SVD bench alternates the native binary (--native-bin, single thread)
// with the page's single-threaded build, round by round, so both see the
// same machine load; it is informational (printed, never a failure).
//
//   node www/test/browser.mjs --url URL --fixture F.json --out DIR \
//        --chromium /usr/bin/chromium --native-bin PATH/native_side \
//        --screenshot /tmp/web-screenshot.png

import { chromium } from 'playwright-core';
import { vjpCases } from './vjp_cases.mjs';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) throw new Error(`missing --${name}`);
  return process.argv[i + 1];
};
const url = arg('url');
const fixture = JSON.parse(readFileSync(arg('fixture'), 'utf8'));
const out = arg('out');
const nativeBin = arg('native-bin');

let passed = 0;
let failed = 0;
function check(name, ok, detail = '') {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
}
const maxDiff = (a, b) => {
  if (!a || !b || a.length !== b.length) return Infinity;
  let w = 0;
  for (let i = 0; i < a.length; i++) w = Math.max(w, Math.abs(a[i] - b[i]));
  return Number.isNaN(w) ? Infinity : w;
};
const allFinite = (a) => !!a && Array.from(a).every(Number.isFinite);
const infNorm = (a) => Math.max(...Array.from(a, Math.abs));
const frobenius = (a) => Math.sqrt(Array.from(a).reduce((t, x) => t + x * x, 0));
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').trim().split(' ').slice(0, 3).join(' ');

/** The native single-thread 256² SVD: best of `reps` ms, from the built binary. */
function nativeSvdMs(n, reps) {
  const r = spawnSync(nativeBin, ['--bench-svd', String(n), '--reps', String(reps)], { encoding: 'utf8' });
  const ms = Number(r.stdout.trim());
  if (r.status !== 0 || !Number.isFinite(ms)) throw new Error(`${nativeBin} --bench-svd failed: ${r.error ?? r.stderr}`);
  return ms;
}

const profile = mkdtempSync(join(tmpdir(), 'lindiff-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: arg('chromium'),
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const consoleErrors = [];
const screenshots = [];
/** Collects a page's console warnings and errors and its uncaught errors. */
const watchConsole = (p, tag = '') => {
  p.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(`${tag}${m.type()}: ${m.text()}`); });
  p.on('pageerror', (e) => consoleErrors.push(`${tag}page error: ${e}`));
};
try {
  const page = context.pages()[0] ?? (await context.newPage());
  watchConsole(page);
  page.setDefaultTimeout(60_000);
  await page.goto(url);
  await page.evaluate(() => window.demo.ready);
  const shot = async (name) => {
    const path = join(out, `${name}.png`);
    await page.screenshot({ path, fullPage: true });
    screenshots.push(path);
  };
  const last = () => page.evaluate(() => {
    const L = window.demo.state.last;
    const arr = (x) => (x ? Array.from(x) : null);
    return { a: arr(L.a), s: arr(L.s), pu: arr(L.pu), pv: arr(L.pv), grad: arr(L.grad), fd: arr(L.fd),
      reference: arr(L.reference), value: L.value, error: L.error, maxDiff: L.maxDiff,
      referenceVsLindiff: L.referenceVsLindiff, timings: L.timings };
  });
  const status = () => page.locator('#status').innerText();
  // Clicks with the element centred first: right after a full-page
  // screenshot a click at the viewport's edge can land on the slider above.
  const press = async (sel) => {
    await page.evaluate((q) => document.querySelector(q).scrollIntoView({ block: 'center' }), sel);
    await page.click(sel);
  };
  const setK = async (k) => { await page.fill('#k', String(k)); await page.dispatchEvent('#k', 'change'); };

  check('crossOriginIsolated', await page.evaluate(() => self.crossOriginIsolated));
  const builds = await page.evaluate(async () => (await fetch('builds.json')).json());
  const threads = await page.evaluate(() => window.demo.state.threads);
  if (builds.threads) {
    check('threaded build: batch work on worker threads', threads > 1, `${threads} threads`);
    // The library's promise: a batch's results do not depend on the split.
    const tc = await page.evaluate(() => window.demo.threadCheck());
    check(`threaded batch = one thread, bit for bit (${tc?.entries} numbers)`, tc?.differVsOneThread === 0, JSON.stringify(tc));
    check('threaded batch = the single-threaded build, bit for bit', tc?.differVsSingleBuild === 0, `${tc?.differVsSingleBuild} differ`);
  } else console.log('(no threaded build: the page runs single-threaded)');
  check('no notice when wasm, SIMD and threads are all there', await page.evaluate(() => document.getElementById('notice').hidden));

  // Matrix cells: every digit on focus.
  const cell = await page.evaluate(() => {
    const c = document.querySelector('#hm-a .hm-cell');
    c.focus();
    const after = getComputedStyle(c, '::after').content;
    const input = document.querySelector('#editor input');
    return { tab: c.tabIndex, full: c.dataset.full, shown: c.textContent, after, aria: c.getAttribute('aria-label'),
      focused: document.activeElement === c, input: input.value, a0: window.demo.state.base[0] };
  });
  check('heatmap cell: focusable, shows its full value on focus (::after) and in aria-label',
    cell.tab === 0 && cell.focused && cell.after === JSON.stringify(cell.full) && Number(cell.full) === cell.a0 && cell.aria.includes(cell.full) && cell.shown.length < cell.full.length,
    JSON.stringify(cell));
  check('matrix editor: cells hold the full value', Number(cell.input) === cell.a0, `${cell.input} vs ${cell.a0}`);
  await shot('01-start');
  copyFileSync(screenshots[screenshots.length - 1], arg('screenshot'));

  // The vjp API in the page's own wasm module (threaded when isolated).
  const vjp = await page.evaluate(`(${vjpCases.toString()})(window.demo.wasm)`);
  for (const r of vjp) check(`[page] ${r.name}`, r.ok, r.detail);

  // Card 7: a loss typed in JS, differentiated by the vjp.
  const jsLoss = () => page.evaluate(() => {
    const J = window.demo.jsLoss.last;
    return { ...J, grad: J.grad ? Array.from(J.grad) : null, fd: J.fd ? Array.from(J.fd) : null, status: document.getElementById('js-status').textContent };
  });
  const typeLoss = async (src) => {
    await page.fill('#js-loss', src);
    await press('#js-run');
    return jsLoss();
  };
  let J = await typeLoss('sum(s.map(x=>x*x)) + u[0]');
  check('your loss Σ sᵢ² + u₁₁ (f64): vjp gradient = FD (≤ 1e-6 rel), cotangents on u and s', J.error === null && J.rel <= 1e-6 && J.cotangents.join() === 'u,s',
    `${J.status}`);
  // Σ sᵢ² = ‖A‖²_F: with u[0] gone the gradient is exactly 2A.
  J = await typeLoss('sum(s.map(x=>x*x))');
  const twoA = await page.evaluate(() => Array.from(window.demo.state.last.a, (x) => 2 * x));
  check('your loss Σ sᵢ²: the gradient is 2A', J.error === null && maxDiff(J.grad, twoA) <= 1e-8 * infNorm(twoA), `max diff ${maxDiff(J.grad, twoA).toExponential(2)}`);
  J = await typeLoss('sum(s.map(x=>x*x)) + u[0]');
  await page.check('#js-f32');
  J = await jsLoss();
  check('your loss in f32: the Float32 vjp gradient = FD within 1e-4 rel', J.error === null && J.rel <= 1e-4, J.status);
  await page.uncheck('#js-f32');
  await page.selectOption('#js-op', 'qr');
  J = await jsLoss();
  check('your loss through qr (Σ r_ij² + q₁₁): vjp gradient = FD', J.error === null && J.rel <= 1e-6, J.status);
  await page.selectOption('#js-op', 'svd');
  J = await typeLoss('sum(s.map(x=>x*x)) +');
  check('your loss with a syntax error: said so, no gradient', J.error?.kind === 'SyntaxError' && /does not parse/.test(J.status), J.status);
  J = await typeLoss('sum(s.map(x=>x*x)) + u[0]');

  // The fixed matrix: values the native library wrote to the fixture.
  await page.evaluate((fx) => window.demo.load({ m: fx.rows, n: fx.cols, a: fx.a, w: fx.w }), fixture);
  await page.selectOption('#loss', 'projector');
  await setK(2);
  let L = await last();
  const tol = 1e-12;
  check('singular values = native', maxDiff(L.s, fixture.s) <= tol, `max diff ${maxDiff(L.s, fixture.s).toExponential(2)}`);
  check('U₂U₂ᵀ = native', maxDiff(L.pu, fixture.pu2) <= tol, `max diff ${maxDiff(L.pu, fixture.pu2).toExponential(2)}`);
  check('V₂V₂ᵀ = native', maxDiff(L.pv, fixture.pv2) <= tol, `max diff ${maxDiff(L.pv, fixture.pv2).toExponential(2)}`);
  check('P₂ value = native', Math.abs(L.value - fixture.p2_value[0]) <= tol);
  check('∇P₂ = native', maxDiff(L.grad, fixture.p2_grad) <= tol, `max diff ${maxDiff(L.grad, fixture.p2_grad).toExponential(2)}`);
  // A scale-free FD tolerance: ‖g − g_fd‖∞ ≤ 1e-8·max(‖g‖∞, |L|/‖A‖); ‖A‖ is ‖A‖_F, the norm of the FD step h = 1e-6·‖A‖_F
  // (measured errors ~5e-10).
  const adTol = (gInf, value, aNorm) => 1e-8 * Math.max(gInf, Math.abs(value) / aNorm);
  const fdTol = (X) => adTol(infNorm(X.grad), X.value, frobenius(X.a));
  check('∇P₂ matches FD', L.maxDiff <= fdTol(L), `max |∇ − FD| ${L.maxDiff.toExponential(2)}`);
  check('the page\'s reference rule = lindiff away from ties', L.referenceVsLindiff <= 1e-9, `${L.referenceVsLindiff.toExponential(2)}`);
  // The page's timings for this normal answered gradient (P₂ on the
  // fixture) and for its gap sweep, taken now rather than after later steps.
  const fixtureTimings = await page.evaluate(() => ({
    loss: `${window.demo.state.loss} k=${window.demo.state.k}`,
    threads: window.demo.state.threads,
    ...window.demo.state.last.timings,
    sweep: window.demo.state.sweepTiming,
    sweepLabel: document.getElementById('t-sweep').textContent,
  }));
  console.log(`timings (ms), fixture P₂ (loss ${L.value}): ${JSON.stringify(fixtureTimings)}`);
  // The sweep runs as one batched call unless a matrix of it is reported
  // (a near tie in the band below 1e-7): then one call per matrix, and the
  // label must say which.
  check('fixture P₂ sweep: labelled as it ran (one batched call, or one by one after a report)',
    fixtureTimings.sweep.fellBack ? /one by one/.test(fixtureTimings.sweepLabel) : /one batched call/.test(fixtureTimings.sweepLabel),
    `${fixtureTimings.sweepLabel} (fellBack ${fixtureTimings.sweep.fellBack})`);
  await shot('02-fixture-P2');
  await page.selectOption('#loss', 'nuclear');
  L = await last();
  check('∇Σs = native', maxDiff(L.grad, fixture.nuclear_grad) <= tol, `max diff ${maxDiff(L.grad, fixture.nuclear_grad).toExponential(2)}`);
  check('Σs value = native', Math.abs(L.value - fixture.nuclear_value[0]) <= tol);

  // The tie control to an exact tie: P₂ is differentiable, P₁ is not.
  await page.selectOption('#loss', 'projector');
  await setK(2);
  await page.fill('#tie', '0');
  L = await last();
  check('tie: s₁ = s₂ up to rounding', Math.abs(L.s[0] - L.s[1]) <= 1e-14 * L.s[0], `s = ${L.s}`);
  check('tie, P₂: gradient finite', L.error === null && allFinite(L.grad), L.error?.message ?? '');
  check('tie, P₂: gradient matches FD', L.maxDiff <= fdTol(L), `max |∇ − FD| ${L.maxDiff.toExponential(2)}`);
  await shot('03-tie-P2');
  // The same sweep as gradient magnitudes (the view toggle).
  const showView = async (v) => {
    const sel = `input[name=plot-view][value=${v}]`;
    await page.evaluate((q) => document.querySelector(q).scrollIntoView({ block: 'center' }), sel);
    await page.check(sel);
    return page.evaluate(() => window.demo.state.plotDrawn);
  };
  const sweep2 = await page.evaluate(() => window.demo.state.sweepPoints);
  const answered2 = sweep2.filter((p) => !p.reported).length;
  let drawn = await showView('magnitudes');
  check('magnitude view, P₂: ‖lindiff‖ drawn wherever it answers, ‖FD‖ and ‖reference‖ at every gap',
    drawn?.lindiff === answered2 && drawn?.fd === 34 && drawn?.reference === 34, `${JSON.stringify(drawn)}; lindiff answers at ${answered2} of 34`);
  await shot('03b-tie-P2-magnitudes');
  await showView('errors');
  const sweep = await page.evaluate(() => window.demo.state.sweepPoints);
  // P₂ does not split the tied pair, so the loss is differentiable at every
  // gap: lindiff answers finite numbers, or — where the factors' gradient
  // would lose too many digits to the near tie — reports NearTie; never a
  // NaN or a not-differentiable.
  const nearTies = sweep.filter((p) => p.reported);
  check('tie sweep, P₂: lindiff finite at every gap where it answers, a NearTie report elsewhere, exact at the tie',
    sweep.every((p) => (p.reported ? p.reportKind === 'NearTie' : Number.isFinite(p.lindiff))) && !sweep.find((p) => p.gap === 0).reported,
    `NearTie at ${nearTies.length} gaps: [${nearTies.map((p) => p.gap.toExponential(0))}]`);
  const worst = (pts, key) => Math.max(...pts.map((p) => p[key]).filter(Number.isFinite));
  // At the exact tie (masked: exact) and at gaps ≥ 1e-6 lindiff meets the FD
  // tolerance; in between, a gap just above the tie tolerance δ meets
  // rounding in the coupling term (the exact rule's 1/gap): logged.
  const pointTol = (p) => adTol(p.lindiffInf, p.value, p.aNorm);
  const table = (pts) => pts.map((p) => `${p.gap.toExponential(1)}: lindiff−FD ${p.lindiffVsFd.toExponential(1)} ref−FD ${p.referenceVsFd.toExponential(1)} ` +
    `‖lindiff‖ ${p.lindiff.toExponential(2)} ‖FD‖ ${p.fd.toExponential(2)} ‖ref‖ ${p.reference.toExponential(2)}`).join('\n  ');
  console.log(`tie sweep, P₂ (gap: max errors; ‖∇‖_F):\n  ${table(sweep)}`);
  const farOrTied = sweep.filter((p) => p.gap === 0 || p.gap >= 1e-6);
  check('tie sweep, P₂: lindiff matches FD at the tie and at gaps ≥ 1e-6', farOrTied.every((p) => p.lindiffVsFd <= pointTol(p)),
    `worst ${worst(farOrTied, 'lindiffVsFd').toExponential(2)}`);
  // In between, the exact rule's coupling term (W + Wᵀ)/(s₁² − s₂²) is
  // rounded: allow 100·ε_mach·‖W + Wᵀ‖/gap on top (‖·‖_F ≥ ‖·‖₂; W is the
  // fixture's, loaded above).
  const r = fixture.rows;
  const wt = fixture.w.map((x, e) => x + fixture.w[(e % r) * r + Math.floor(e / r)]);
  const nearBound = (p) => pointTol(p) + 100 * Number.EPSILON * frobenius(wt) / p.gap;
  const band = sweep.filter((p) => p.gap > 0 && p.gap < 1e-6 && !p.reported);
  const bandRatio = Math.max(...band.map((p) => p.lindiffVsFd / nearBound(p)));
  const worstBand = band.reduce((a, p) => (p.lindiffVsFd / nearBound(p) > a.lindiffVsFd / nearBound(a) ? p : a), band[0]);
  const bandMax = band.reduce((a, p) => (p.lindiffVsFd > a.lindiffVsFd ? p : a), band[0]);
  check('tie sweep, P₂: near-tie band (0 < gap < 1e-6), where lindiff answers, within 1e-8·max(‖∇‖∞, |L|/‖A‖_F) + 100·ε·‖W + Wᵀ‖_F/gap',
    band.length > 0 && band.every((p) => p.lindiffVsFd <= nearBound(p)),
    `${band.length} gaps; worst error/bound ${bandRatio.toExponential(2)} at gap ${worstBand?.gap.toExponential(2)} (error ${worstBand?.lindiffVsFd.toExponential(2)}); ` +
    `largest error ${bandMax?.lindiffVsFd.toExponential(2)} at gap ${bandMax?.gap.toExponential(2)} (bound ${bandMax && nearBound(bandMax).toExponential(2)})`);
  const atTie = sweep.find((p) => p.gap === 0);
  const belowE8 = sweep.filter((p) => p.gap < 1e-8);
  const refWorst = Math.max(...belowE8.map((p) => (Number.isNaN(p.referenceVsFd) ? Infinity : p.referenceVsFd)));
  check('tie sweep, P₂: below a 1e-8 gap the broadened rule errs (~1e-6), lindiff at the tie does not',
    refWorst > 1e-7 && atTie.lindiffVsFd <= pointTol(atTie),
    `max |reference − FD| over 0 ≤ gap < 1e-8 (${belowE8.length} gaps) ${refWorst.toExponential(2)}, lindiff at the tie ${atTie.lindiffVsFd.toExponential(2)}`);
  await setK(1);
  L = await last();
  const sweep1 = await page.evaluate(() => window.demo.state.sweepPoints);
  const reported = sweep1.filter((p) => p.reported);
  const refThere = Math.max(...reported.map((p) => p.reference).filter(Number.isFinite));
  check('tie sweep, P₁: lindiff reports at the tie', reported.some((p) => p.gap === 0), `${reported.length} gaps reported`);
  check('tie sweep, P₁: where lindiff reports, the broadened rule answers with huge numbers', refThere > 1e6,
    `largest reference ‖∇‖ there ${refThere.toExponential(2)}`);
  const st = await status();
  check('tie, P₁: "not differentiable" shown', /not differentiable here/i.test(st), st.split('\n')[0]);
  check('tie, P₁: reported as svd/u', L.error?.kind === 'NotDifferentiable' && L.error.op === 'svd' && L.error.output === 'u');
  J = await jsLoss();
  check('tie, your loss with u₁₁: the vjp keeps the library\'s gauge report (LindiffError from svd)',
    ['NearTie', 'NotDifferentiable'].includes(J.error?.kind) && J.error.op === 'svd' && /^lindiff: /.test(J.status), J.status);
  J = await typeLoss('sum(s.map(x=>x*x))');
  check('tie, your loss Σ sᵢ² (no u): the vjp answers, = FD', J.error === null && J.rel <= 1e-6, J.status);
  await shot('04c-tie-your-loss');
  J = await typeLoss('sum(s.map(x=>x*x)) + u[0]');
  console.log(`tie sweep, P₁ (gap: max errors; ‖∇‖_F):\n  ${table(sweep1)}`);
  await shot('04-tie-P1-not-differentiable');
  drawn = await showView('magnitudes');
  check('magnitude view, P₁: lindiff drawn where it answers, FD and the broadened rule at every gap',
    drawn?.lindiff === 34 - reported.length && drawn?.fd === 34 && drawn?.reference >= 1, JSON.stringify(drawn));
  await shot('04b-tie-P1-magnitudes');
  await showView('errors');

  // The zero control to an exact zero: P₂ is differentiable, Σs is not.
  await press('#reset-spectrum');
  await setK(2);
  await page.fill('#zero', '0');
  L = await last();
  check('zero: smallest value ≈ 0', L.s[L.s.length - 1] <= 1e-14 * L.s[0], `s = ${L.s}`);
  check('zero, P₂: gradient finite', L.error === null && allFinite(L.grad), L.error?.message ?? '');
  check('zero, P₂: gradient matches FD', L.maxDiff <= fdTol(L), `max |∇ − FD| ${L.maxDiff.toExponential(2)}`);
  await page.check('input[name=sweep][value=zero]');
  await shot('05-zero-P2');
  await page.selectOption('#loss', 'nuclear');
  L = await last();
  check('zero, Σs: reported as svd/s', L.error?.kind === 'NotDifferentiable' && L.error.op === 'svd' && L.error.output === 's');
  check('zero, Σs: "not differentiable" shown', /not differentiable here/i.test(await status()));
  await shot('06-zero-nuclear-not-differentiable');

  // ‖A − A₂‖² with the tie inside the kept group: lindiff exact; the
  // reference, differentiating the reconstruction, is not.
  await page.evaluate((fx) => window.demo.load({ m: fx.rows, n: fx.cols, a: fx.a, w: fx.w }), fixture);
  await page.check('input[name=sweep][value=tie]');
  await page.selectOption('#loss', 'truncation');
  await setK(2);
  await page.fill('#tie', '0');
  const trunc = await page.evaluate(() => window.demo.state.sweepPoints);
  const truncNear = trunc.filter((p) => p.gap < 1e-8);
  check('tie sweep, ‖A − A₂‖²: lindiff answers at every gap and = FD', trunc.length > 0 && trunc.every((p) => !p.reported && p.lindiffVsFd <= pointTol(p)),
    `worst ${worst(trunc, 'lindiffVsFd').toExponential(2)}; reported at gaps [${trunc.filter((p) => p.reported).map((p) => p.gap.toExponential(0))}]`);
  check('tie sweep, ‖A − A₂‖²: the broadened rule (reconstruction cotangents) fails near the kept tie', worst(truncNear, 'referenceVsFd') > 1e-8,
    `worst |reference − FD| below a 1e-8 gap ${worst(truncNear, 'referenceVsFd').toExponential(2)}, lindiff where it answers ${worst(truncNear, 'lindiffVsFd').toExponential(2)}`);
  await shot('07-truncation-tie');
  await press('#reset-spectrum');
  await page.check('#eps-on');
  check('truncation with ε: the status says ε is ignored', /ignored for this loss/.test(await status()), (await status()).split('\n')[0]);
  await page.uncheck('#eps-on');
  // The zero-value example (4×3, diag 2, 1, 0): the computed zero is exact, and
  // the broadened rule's 1/s projection term turns it into NaN; lindiff is exact.
  await press('#example');
  await page.selectOption('#loss', 'projector');
  await setK(2);
  L = await last();
  check('zero-value example, P₂: the broadened rule gives NaN (tall A, s₃ = 0)', L.reference.some(Number.isNaN));
  check('zero-value example, P₂: lindiff finite and = FD', L.error === null && allFinite(L.grad) && L.maxDiff <= fdTol(L),
    `max |∇ − FD| ${L.maxDiff.toExponential(2)}`);

  // The ε option reaches the library: with it, P₁ at the tie is a number.
  await page.evaluate((fx) => window.demo.load({ m: fx.rows, n: fx.cols, a: fx.a, w: fx.w }), fixture);
  await press('#reset-spectrum');
  await page.selectOption('#loss', 'projector');
  await setK(1);
  await page.fill('#tie', '0');
  await page.check('#eps-on');
  L = await last();
  check('ε option: the broadened rule answers at the tie', L.error === null && allFinite(L.grad));
  await page.uncheck('#eps-on');

  // Speed: 256×256 SVD, Chromium (the single-threaded build) vs native
  // single thread, alternating round by round under the same load.
  const pairs = [];
  for (let r = 1; r <= 5; r++) {
    const load = loadavg();
    const native = nativeSvdMs(256, 3);
    const chromiumMs = await page.evaluate(() => window.demo.benchSingle(256, 3));
    pairs.push({ native, chromium: chromiumMs });
    console.log(`bench round ${r}: native ${native.toFixed(2)} ms  chromium (single-threaded build) ${chromiumMs.toFixed(2)} ms  ratio ${(chromiumMs / native).toFixed(2)}×  loadavg ${load}`);
  }
  const minNative = Math.min(...pairs.map((p) => p.native));
  const minChromium = Math.min(...pairs.map((p) => p.chromium));
  const ratio = minChromium / minNative;
  console.log(`bench: 256×256 SVD min/min  chromium (single-threaded build) ${minChromium.toFixed(2)} ms / native single thread ${minNative.toFixed(2)} ms = ${ratio.toFixed(2)}×  ` +
    `(target ≤ 2.0×: ${ratio <= 2 ? 'met' : 'NOT met'}; informational)  loadavg ${loadavg()}`);

  // The single-threaded build, forced by ?single, against the same fixture.
  const page1 = await context.newPage();
  watchConsole(page1, '?single: ');
  page1.setDefaultTimeout(60_000);
  await page1.goto(`${url}${url.includes('?') ? '&' : '?'}single`);
  await page1.evaluate(() => window.demo.ready);
  check('?single: the page runs the single-threaded build', await page1.evaluate(() => window.demo.state.threads === 1 && !document.getElementById('runtime').textContent.includes('threads')),
    await page1.locator('#runtime').innerText());
  await page1.evaluate((fx) => window.demo.load({ m: fx.rows, n: fx.cols, a: fx.a, w: fx.w }), fixture);
  await page1.selectOption('#loss', 'projector');
  await page1.fill('#k', '2');
  await page1.dispatchEvent('#k', 'change');
  const L1 = await page1.evaluate(() => {
    const X = window.demo.state.last;
    return { s: Array.from(X.s), grad: X.grad ? Array.from(X.grad) : null, value: X.value };
  });
  check('?single: singular values = native', maxDiff(L1.s, fixture.s) <= tol, `max diff ${maxDiff(L1.s, fixture.s).toExponential(2)}`);
  check('?single: ∇P₂ = native', maxDiff(L1.grad, fixture.p2_grad) <= tol && Math.abs(L1.value - fixture.p2_value[0]) <= tol,
    `max diff ${maxDiff(L1.grad, fixture.p2_grad).toExponential(2)}`);
  await page1.close();

  // A browser without threads, wasm SIMD or wasm: a visible message.
  const crippled = async (name, init) => {
    const p = await context.newPage();
    watchConsole(p, `${name}: `);
    p.setDefaultTimeout(60_000);
    await p.addInitScript(init);
    await p.goto(url);
    const ready = await p.evaluate(() => window.demo.ready);
    const out = { ready, hidden: await p.evaluate(() => document.getElementById('notice').hidden), text: await p.locator('#notice').innerText(),
      visible: await p.locator('#notice').isVisible(), threads: await p.evaluate(() => window.demo.state.threads) };
    await p.close();
    return out;
  };
  let n = await crippled('no SharedArrayBuffer', () => { delete globalThis.SharedArrayBuffer; });
  check('no SharedArrayBuffer: the page runs single-threaded and says threads are unavailable', n.ready === true && n.visible && n.threads === 1 && /Threads are unavailable/.test(n.text), n.text);
  n = await crippled('no wasm SIMD', () => { const validate = WebAssembly.validate; WebAssembly.validate = (b) => (b.length === 31 ? false : validate(b)); });
  check('no wasm SIMD: a visible message says the build needs it', n.ready === false && n.visible && /SIMD/.test(n.text), n.text);
  n = await crippled('no wasm', () => { delete globalThis.WebAssembly; });
  check('no WebAssembly: a visible message says nothing can compute', n.ready === false && n.visible && /cannot run WebAssembly/.test(n.text), n.text);

  check('no console warnings or errors, no page errors', consoleErrors.length === 0, consoleErrors.join(' | '));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
for (const s of screenshots) console.log(`screenshot: ${s}`);
console.log(`browser: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
