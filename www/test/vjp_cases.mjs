// The vjp checks, one self-contained function run both in Chromium (by
// browser.mjs, on the page's own wasm module) and under node (by api.mjs,
// on www/pkg): it takes the module and returns [{ name, ok, detail }].
//
// Each loss is written in JS over an op's outputs, with its cotangents
// (∂loss/∂output, which a JS user writes beside the loss); lindiff's vjp
// carries them back to the inputs. The f64 gradient must match central
// finite differences of the same JS loss (≤ 1e-6 relative to ‖∇‖∞), the
// f32 gradient the f64 one (≤ 1e-4 relative). Bad input must throw a
// LindiffError naming op, argument and shape; a cotangent on singular
// vectors at tied singular values must keep the library's gauge report.

export function vjpCases(wasm) {
  const results = [];
  const check = (name, ok, detail = '') => results.push({ name, ok: !!ok, detail: String(detail) });
  const M = (rows, cols, data, Type = Float64Array) => ({ rows, cols, data: Type.from(data) });
  const sum = (xs) => Array.from(xs).reduce((a, b) => a + b, 0);
  const maxAbs = (xs) => Math.max(0, ...Array.from(xs, Math.abs));
  const at = (m, i, j) => m.data[i * m.cols + j];
  const onehot = (m, i, j, x = 1) => {
    const d = new Float64Array(m.rows * m.cols);
    d[i * m.cols + j] = x;
    return { rows: m.rows, cols: m.cols, data: d };
  };
  const map = (m, f) => ({ rows: m.rows, cols: m.cols, data: Float64Array.from(m.data, f) });

  // Inputs (row-major), well away from ties and singularity.
  const A43 = M(4, 3, [2.0, -1.0, 0.5, 0.3, 1.5, -0.7, -1.2, 0.4, 1.1, 0.8, 0.9, -0.2]);
  const S3 = M(3, 3, [1.0, 0.4, -0.3, 0.4, 2.5, 0.6, -0.3, 0.6, 4.0]); // symmetric, distinct eigenvalues
  // 2I − 1.5·qqᵀ with q = (−4, −8, 1)/9 a unit vector: eigenvalues 2, 2, 0.5 (a
  // repeated one).
  const T3 = M(3, 3, [
    2 - 24 / 81, -48 / 81, 6 / 81,
    -48 / 81, 2 - 96 / 81, 12 / 81,
    6 / 81, 12 / 81, 2 - 1.5 / 81,
  ]);
  const P3 = M(3, 3, [4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]); // SPD
  const G3 = M(3, 3, [2.0, 1.0, 1.0, 1.0, 3.0, 2.0, 1.0, 0.0, 0.5]); // general, det ≠ 0
  const B32 = M(3, 2, [1.0, 0.0, -0.5, 2.0, 0.3, 1.0]);
  const B42 = M(4, 2, [0.5, -1.0, 1.5, 0.2, -0.3, 0.8, 1.0, 0.4]);
  const W3 = M(3, 3, [0.3, -0.2, 0.5, 0.1, 0.7, -0.4, 0.6, 0.2, -0.1]);
  const C34 = M(3, 4, [1.0, -0.5, 0.25, 2.0, 0.1, 0.9, -1.3, 0.4, -0.6, 0.3, 0.8, 1.1]);
  const E3 = M(3, 3, [3.0, 1.0, 0.5, -0.4, 2.5, 0.3, 0.2, -0.6, 2.0]); // general, eigenvalues with Re > 1

  // Losses: f(outputs) and its cotangents; `sym` marks ops that read only
  // the lower triangle of a symmetric input (FD along symmetric directions).
  const losses = [
    { op: 'svd', name: 'Σ sᵢ² + u₁₁', inputs: [A43],
      f: (o) => sum(Array.from(o.s, (x) => x * x)) + at(o.u, 0, 0),
      ct: (o) => ({ s: Float64Array.from(o.s, (x) => 2 * x), u: onehot(o.u, 0, 0) }) },
    { op: 'svd', name: 'Σ sᵢ + (Vᵀ)₂₃² (vh only through a square)', inputs: [A43],
      f: (o) => sum(o.s) + at(o.vh, 1, 2) ** 2,
      ct: (o) => ({ s: o.s.map(() => 1), vh: onehot(o.vh, 1, 2, 2 * at(o.vh, 1, 2)) }) },
    { op: 'eigh', name: 'Σ wᵢ³ + v₁₂', inputs: [S3], sym: true,
      f: (o) => sum(Array.from(o.w, (x) => x ** 3)) + at(o.v, 0, 1),
      ct: (o) => ({ w: Float64Array.from(o.w, (x) => 3 * x * x), v: onehot(o.v, 0, 1) }) },
    { op: 'qr', name: 'Σ r_ij² + q₂₁', inputs: [A43],
      f: (o) => sum(Array.from(o.r.data, (x) => x * x)) + at(o.q, 1, 0),
      ct: (o) => ({ r: map(o.r, (x) => 2 * x), q: onehot(o.q, 1, 0) }) },
    { op: 'cholesky', name: 'Σ log l_ii + l₃₂ (log det / 2 + an entry)', inputs: [P3], sym: true,
      f: (o) => Math.log(at(o.l, 0, 0)) + Math.log(at(o.l, 1, 1)) + Math.log(at(o.l, 2, 2)) + at(o.l, 2, 1),
      ct: (o) => {
        const c = onehot(o.l, 2, 1);
        for (let i = 0; i < 3; i++) c.data[i * 3 + i] = 1 / at(o.l, i, i);
        return { l: c };
      } },
    { op: 'solve', name: '‖A⁻¹B‖²', inputs: [G3, B32],
      f: (o) => sum(Array.from(o.x.data, (x) => x * x)),
      ct: (o) => ({ x: map(o.x, (x) => 2 * x) }) },
    { op: 'det', name: 'det(A)²', inputs: [G3],
      f: (o) => o.det ** 2,
      ct: (o) => ({ det: 2 * o.det }) },
    { op: 'inv', name: '⟨W, A⁻¹⟩', inputs: [G3],
      f: (o) => sum(Array.from(o.inv.data, (x, e) => x * W3.data[e])),
      ct: () => ({ inv: W3 }) },
    { op: 'expm', name: '⟨W, e^A⟩', inputs: [E3],
      f: (o) => sum(Array.from(o.ea.data, (x, e) => x * W3.data[e])),
      ct: () => ({ ea: W3 }) },
    { op: 'logm', name: '⟨W, log A⟩', inputs: [E3],
      f: (o) => sum(Array.from(o.la.data, (x, e) => x * W3.data[e])),
      ct: () => ({ la: W3 }) },
    { op: 'sqrtm', name: '‖A^½‖² (Frobenius)', inputs: [E3],
      f: (o) => sum(Array.from(o.sa.data, (x) => x * x)),
      ct: (o) => ({ sa: map(o.sa, (x) => 2 * x) }) },
    { op: 'expm_hermitian', name: '⟨W, e^S⟩', inputs: [S3], sym: true,
      f: (o) => sum(Array.from(o.ea.data, (x, e) => x * W3.data[e])),
      ct: () => ({ ea: W3 }) },
    { op: 'expm_hermitian', name: '⟨W, e^T⟩ at a repeated eigenvalue', inputs: [T3], sym: true,
      f: (o) => sum(Array.from(o.ea.data, (x, e) => x * W3.data[e])),
      ct: () => ({ ea: W3 }) },
    { op: 'logm_pd', name: '⟨W, log P⟩', inputs: [P3], sym: true,
      f: (o) => sum(Array.from(o.la.data, (x, e) => x * W3.data[e])),
      ct: () => ({ la: W3 }) },
    { op: 'sqrtm_psd', name: '‖P^½‖² (Frobenius)', inputs: [P3], sym: true,
      f: (o) => sum(Array.from(o.sa.data, (x) => x * x)),
      ct: (o) => ({ sa: map(o.sa, (x) => 2 * x) }) },
    { op: 'matmul', name: '‖AB‖² + (AB)₁₂', inputs: [C34, B42],
      f: (o) => sum(Array.from(o.c.data, (x) => x * x)) + at(o.c, 0, 1),
      ct: (o) => {
        const c = map(o.c, (x) => 2 * x);
        c.data[1] += 1;
        return { c };
      } },
  ];

  const grads = (L, inputs) => {
    const f = wasm.vjp(L.op, inputs);
    try {
      const out = f.outputs;
      return { value: L.f(out), grads: f.pullback(L.ct(out)), outputs: out };
    } finally {
      f.free();
    }
  };
  const valueAt = (L, inputs) => {
    const f = wasm.vjp(L.op, inputs);
    try {
      return L.f(f.outputs);
    } finally {
      f.free();
    }
  };
  /** Central differences of L along entry (i, j) of input k (and (j, i) too when sym). */
  const fdAt = (L, k, i, j) => {
    const x = L.inputs[k];
    const h = 1e-6 * Math.max(1, maxAbs(x.data));
    const moved = (t) => {
      const d = Float64Array.from(x.data);
      d[i * x.cols + j] += t;
      if (L.sym && i !== j) d[j * x.cols + i] += t;
      return L.inputs.map((y, q) => (q === k ? { rows: x.rows, cols: x.cols, data: d } : y));
    };
    return (valueAt(L, moved(h)) - valueAt(L, moved(-h))) / (2 * h);
  };

  for (const L of losses) {
    const r64 = grads(L, L.inputs);
    let worst = 0;
    let scale = 0;
    r64.grads.forEach((g, k) => {
      scale = Math.max(scale, maxAbs(g.data));
      const x = L.inputs[k];
      for (let i = 0; i < x.rows; i++)
        for (let j = 0; j < x.cols; j++) {
          if (L.sym && j > i) continue;
          // Along E_ij + E_ji the directional derivative is G_ij + G_ji,
          // whichever triangle the library puts the gradient in.
          const want = L.sym && i !== j ? at(g, i, j) + at(g, j, i) : at(g, i, j);
          worst = Math.max(worst, Math.abs(want - fdAt(L, k, i, j)));
        }
    });
    const rel = worst / scale;
    check(`vjp ${L.op}: f64 ∇(${L.name}) = central FD in JS (≤ 1e-6 rel)`, rel <= 1e-6 && r64.grads.every((g, k) => g.data instanceof Float64Array && g.rows === L.inputs[k].rows && g.cols === L.inputs[k].cols),
      `max |∇ − FD| / ‖∇‖∞ = ${rel.toExponential(2)}`);
    const in32 = L.inputs.map((x) => ({ rows: x.rows, cols: x.cols, data: Float32Array.from(x.data) }));
    const r32 = grads(L, in32);
    let diff = 0;
    r32.grads.forEach((g, k) => {
      for (let e = 0; e < g.data.length; e++) diff = Math.max(diff, Math.abs(g.data[e] - r64.grads[k].data[e]));
    });
    check(`vjp ${L.op}: f32 ∇(${L.name}) = the f64 one (≤ 1e-4 rel), Float32Array out`,
      diff / scale <= 1e-4 && r32.grads.every((g) => g.data instanceof Float32Array),
      `max |∇₃₂ − ∇₆₄| / ‖∇‖∞ = ${(diff / scale).toExponential(2)}`);
  }

  // Missing cotangent = zero; the handle can be pulled back again.
  {
    const f = wasm.vjp('svd', [A43]);
    const o = f.outputs;
    const zeroU = { rows: o.u.rows, cols: o.u.cols, data: new Float64Array(o.u.data.length) };
    const a = f.pullback({ s: o.s })[0].data;
    const b = f.pullback({ s: o.s, u: zeroU, vh: null })[0].data;
    const z = f.pullback({})[0].data;
    check('vjp svd: a missing cotangent is zero (same ∇ as explicit zeros; {} gives 0)',
      a.every((x, e) => x === b[e]) && z.every((x) => x === 0) && z.length === 12, `${a.length} entries`);
    f.free();
  }

  // Errors: a LindiffError (a real subclass of Error) with op, argument, shape, kind.
  const thrown = (fn) => {
    try {
      fn();
    } catch (e) {
      return e;
    }
    return null;
  };
  const describe = (e) => (e ? `${e.name} kind=${e.kind} op=${e.op} argument=${e.argument} shape=${JSON.stringify(e.shape)}: ${e.message}` : 'nothing thrown');
  const isErr = (e, kind, op, argument, shape) => !!e && e instanceof wasm.LindiffError && e instanceof Error && e.name === 'LindiffError'
    && e.kind === kind && e.op === op && e.argument === argument && JSON.stringify(e.shape) === JSON.stringify(shape);
  let e = thrown(() => wasm.vjp('cholesky', [M(2, 3, [1, 2, 3, 4, 5, 6])]));
  check('vjp cholesky of a 2×3: LindiffError NotSquare, op cholesky, argument a, shape [2, 3]', isErr(e, 'NotSquare', 'cholesky', 'a', [2, 3]), describe(e));
  e = thrown(() => wasm.vjp('solve', [G3, M(2, 1, [1, 2])]));
  check('vjp solve with a 2×1 b for a 3×3 a: DimMismatch, op solve, argument b, shape [2, 1]', isErr(e, 'DimMismatch', 'solve', 'b', [2, 1]), describe(e));
  e = thrown(() => wasm.vjp('matmul', [C34, M(3, 2, [1, 2, 3, 4, 5, 6])]));
  check('vjp matmul 3×4 · 3×2: DimMismatch, op matmul, argument b, shape [3, 2]', isErr(e, 'DimMismatch', 'matmul', 'b', [3, 2]), describe(e));
  e = thrown(() => wasm.vjp('svd', [{ rows: 2, cols: 3, data: new Float64Array(5) }]));
  check('vjp svd with 5 entries for 2×3: InvalidArgument, op svd, argument a, shape [2, 3]', isErr(e, 'InvalidArgument', 'svd', 'a', [2, 3]), describe(e));
  e = thrown(() => wasm.vjp('lu', [G3]));
  check('vjp of an unknown op: InvalidArgument naming argument op', !!e && e instanceof wasm.LindiffError && e.kind === 'InvalidArgument' && e.argument === 'op', describe(e));
  {
    const f = wasm.vjp('svd', [A43]);
    e = thrown(() => f.pullback({ s: new Float64Array(5) }));
    check('pullback with a 5-vector for s (3): InvalidArgument, op svd, argument s, shape [5]', isErr(e, 'InvalidArgument', 'svd', 's', [5]), describe(e));
    e = thrown(() => f.pullback({ S: f.outputs.s }));
    check('pullback with an unknown output name: InvalidArgument, argument cotangents', !!e && e.kind === 'InvalidArgument' && e.argument === 'cotangents', describe(e));
    f.free();
  }
  e = thrown(() => wasm.vjp('cholesky', [M(2, 2, [1, 2, 2, 1])]));
  check('vjp cholesky of an indefinite matrix: NotPositiveDefinite naming a', !!e && e instanceof wasm.LindiffError && e.kind === 'NotPositiveDefinite' && e.op === 'cholesky' && e.argument === 'a', describe(e));

  // The gauge: at s₁ = s₂ a cotangent on U's first column that couples
  // the tied pair is not determined by the factors (the library reports
  // it); one on s is.
  {
    const c = 0.6;
    const s = 0.8;
    const d = [2, 2, 1];
    const R = [[c, 0, -s], [0, 1, 0], [s, 0, c]];
    const tie = M(3, 3, Array.from({ length: 9 }, (_, e) => [0, 1, 2].reduce((t, l) => t + R[Math.floor(e / 3)][l] * d[l] * R[e % 3][l], 0)));
    for (const Type of [Float64Array, Float32Array]) {
      const f = wasm.vjp('svd', [{ ...tie, data: Type.from(tie.data) }]);
      const o = f.outputs;
      // L = ⟨u₁, c⟩ with c the computed u₂: Ū's first column is u₂, so
      // (UᵀŪ − ŪᵀU)₂₁ = u₂ᵀu₂ = 1 couples the tied pair in whatever basis
      // the SVD picked inside the tie.
      const ubar = new Float64Array(9);
      for (let i = 0; i < 3; i++) ubar[i * 3] = o.u.data[i * 3 + 1];
      e = thrown(() => f.pullback({ u: ubar }));
      const gauge = !!e && e instanceof wasm.LindiffError && (e.kind === 'NearTie' || e.kind === 'NotDifferentiable') && e.op === 'svd';
      check(`vjp svd at a tie (${Type.name}): a cotangent on u is the library's gauge report`, gauge, describe(e));
      let ok = true;
      try {
        const g = f.pullback({ s: Float64Array.from(o.s, (x) => 2 * x) })[0].data;
        // Σ s² = ‖A‖²: ∇ = 2A.
        ok = g.every((x, i) => Math.abs(x - 2 * tie.data[i]) <= (Type === Float32Array ? 1e-5 : 1e-12) * 4);
      } catch (err) {
        ok = false;
        e = err;
      }
      check(`vjp svd at a tie (${Type.name}): a cotangent on s alone is exact (∇Σs² = 2A)`, ok, ok ? '' : describe(e));
      f.free();
    }
  }
  return results;
}
