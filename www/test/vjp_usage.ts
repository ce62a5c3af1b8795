// A TypeScript user of the package's vjp API, checked with
// `tsc --noEmit --strict` against the shipped lindiff_wasm.d.ts (by
// `cargo xtask node` and `cargo xtask browser`); never run. The
// `@ts-expect-error` lines must stay errors: they prove the types say
// what each op takes and returns.

import init, { LindiffError, vjp, type Mat, type Vjp } from '../pkg/lindiff_wasm.js';

export async function example(): Promise<number> {
  await init({ module_or_path: new URL('../pkg/lindiff_wasm_bg.wasm', import.meta.url) });
  const a: Mat = { rows: 2, cols: 2, data: Float64Array.from([3, 1, 1, 2]) };
  const f: Vjp<'svd', Float64Array> = vjp('svd', [a]);
  const { u, s, vh } = f.outputs;
  const loss = s.reduce((t, x) => t + x * x, 0) + u.data[0] + vh.rows;
  const [ga] = f.pullback({ s: s.map((x) => 2 * x), u: { rows: u.rows, cols: u.cols, data: new Float64Array(u.data.length) } });
  const g: Float64Array = ga.data;
  f.free();

  // f32 in, f32 out.
  const a32: Mat<Float32Array> = { rows: 2, cols: 2, data: Float32Array.from([3, 1, 1, 2]) };
  const e = vjp('eigh', [a32]);
  const w: Float32Array = e.outputs.w;
  const [ge] = e.pullback({ w: w.map((x) => 3 * x * x) });
  const g32: Float32Array = ge.data;

  // Two inputs, two input cotangents; det's output and cotangent are numbers.
  const sol = vjp('solve', [a, { rows: 2, cols: 1, data: Float64Array.from([1, 2]) }]);
  const [gA, gB] = sol.pullback({ x: sol.outputs.x });
  const d = vjp('det', [a]);
  const det: number = d.outputs.det;
  d.pullback({ det: 2 * det });

  // @ts-expect-error: solve takes two inputs
  vjp('solve', [a]);
  // @ts-expect-error: svd has no output `l`
  f.pullback({ l: a });
  // @ts-expect-error: det's cotangent is a number
  d.pullback({ det: a });
  // @ts-expect-error: not an op
  vjp('lu', [a]);

  try {
    vjp('cholesky', [{ rows: 2, cols: 3, data: new Float64Array(6) }]);
  } catch (err) {
    if (err instanceof LindiffError) {
      const where: string = `${err.kind} ${err.op} ${err.argument ?? ''} ${err.shape?.join('×') ?? ''} ${err.why}`;
      return where.length;
    }
  }
  return loss + g[0] + g32[0] + gA.data[0] + gB.data[0];
}
