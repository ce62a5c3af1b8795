// The textbook SVD derivative rule, evaluated here in JS so the page can
// show where it fails beside lindiff's answer: the reverse-mode rule for the
// thin SVD A = U diag(s) Vᵀ (real) of Townsend, "Differentiating the
// singular value decomposition" (2016), and Ionescu, Vantzos &
// Sminchisescu, "Matrix backpropagation for deep networks with structured
// layers" (ICCV 2015), with the common Lorentzian broadening
//   F_ij = (s_j² − s_i²) / ((s_j² − s_i²)² + ε²)   (ε = 1e-12 by default)
// and the m ≠ n projection terms divided by the raw s:
//   Ā = U [ (F∘(UᵀŪ − ŪᵀU)) S + diag(s̄) + S (F∘(VᵀV̄ − V̄ᵀV)) ] Vᵀ
//       + (I − UUᵀ) Ū S⁻¹ Vᵀ   (if m > n)
//       + U S⁻¹ V̄ᵀ (I − VVᵀ)   (if n > m).
// Near a tie F ≈ 1/(s_j² − s_i²) explodes (peak 1/2ε); at an exact zero
// singular value 0·(1/0) = NaN spreads through every entry.

import { matmul, transpose } from './linalg.js';

/**
 * Ā for the cotangents (Ū, s̄, V̄) of a loss at the factors U (m×k), s (k),
 * V (n×k); all row-major. `ubar`, `vbar` may be null (zero); `explicit`
 * (m×n, optional) is added: the loss's direct dependence on A.
 */
export function referenceGradient({ m, n, u, s, v, ubar, sbar, vbar, explicit = null, eps = 1e-12 }) {
  const k = s.length;
  const zeroK = () => new Float64Array(k * k);
  const utub = ubar ? matmul(transpose(u, m, k), ubar, k, m, k) : zeroK();
  const vtvb = vbar ? matmul(transpose(v, n, k), vbar, k, n, k) : zeroK();
  const inner = new Float64Array(k * k);
  for (let i = 0; i < k; i++)
    for (let j = 0; j < k; j++) {
      if (i === j) {
        inner[i * k + i] = sbar ? sbar[i] : 0;
        continue;
      }
      const d = s[j] * s[j] - s[i] * s[i];
      const f = d / (d * d + eps * eps);
      inner[i * k + j] = f * (utub[i * k + j] - utub[j * k + i]) * s[j] + s[i] * f * (vtvb[i * k + j] - vtvb[j * k + i]);
    }
  const vt = transpose(v, n, k);
  let g = matmul(matmul(u, inner, m, k, k), vt, m, k, n);
  const sinv = Float64Array.from(s, (x) => 1 / x);
  if (m > n && ubar) {
    // (I − UUᵀ) Ū S⁻¹ Vᵀ
    const uub = matmul(u, utub, m, k, k);
    const r = new Float64Array(m * k);
    for (let i = 0; i < m; i++) for (let l = 0; l < k; l++) r[i * k + l] = (ubar[i * k + l] - uub[i * k + l]) * sinv[l];
    g = add(g, matmul(r, vt, m, k, n));
  }
  if (n > m && vbar) {
    // U S⁻¹ V̄ᵀ (I − VVᵀ) = U S⁻¹ (V̄ − V VᵀV̄)ᵀ
    const vvb = matmul(v, vtvb, n, k, k);
    const r = new Float64Array(n * k);
    for (let j = 0; j < n; j++) for (let l = 0; l < k; l++) r[j * k + l] = (vbar[j * k + l] - vvb[j * k + l]) * sinv[l];
    g = add(g, matmul(u, transpose(r, n, k), m, k, n));
  }
  return explicit ? add(g, explicit) : g;
}

function add(a, b) {
  return Float64Array.from(a, (x, i) => x + b[i]);
}

/**
 * The cotangents of a page loss at the factors (row-major U m×k, s, V n×k)
 * of A (row-major m×n), or null where the loss is not a function of
 * (U, s, V) the rule takes. `explicit` is the part of ∇ that does not go
 * through the SVD (added to the rule's Ā).
 *   P_k = ⟨W, U_kU_kᵀ⟩:     Ū[:, :k] = (W + Wᵀ) U_k
 *   ⟨W_U,·⟩ + ⟨W_V, V_kV_kᵀ⟩: and V̄[:, :k] = (W_V + W_Vᵀ) V_k
 *   Σ s: s̄ = 1;  Σ cᵢsᵢ: s̄ = c
 *   ‖A − A_k‖², A_k = U_k S_k V_kᵀ reconstructed from the factors (how a
 *   user writes it with the textbook rule): with E = A − A_k and R̄ = −2E the
 *   cotangent of A_k, Ū = R̄ V_k S_k, V̄ = R̄ᵀ U_k S_k, s̄ᵢ = uᵢᵀ R̄ vᵢ (i ≤ k),
 *   and 2E directly. In exact arithmetic Ū = V̄ = 0, but their rounding
 *   meets F ≈ 1/(s_j² − s_i²) inside a tied kept group.
 */
export function cotangents(loss, { m, n, u, s, v, a }) {
  const k = s.length;
  const kept = (l) => l < loss.k;
  const sym = (w, r) => Float64Array.from(w, (x, e) => x + w[(e % r) * r + Math.floor(e / r)]);
  const side = (w, x, r) => {
    const full = matmul(sym(w, r), x, r, r, k);
    for (let i = 0; i < r; i++) for (let l = loss.k; l < k; l++) full[i * k + l] = 0;
    return full;
  };
  switch (loss.kind) {
    case 'nuclear':
      return { sbar: new Float64Array(k).fill(1) };
    case 'weighted':
      return { sbar: Float64Array.from(loss.c) };
    case 'truncation': {
      const us = Float64Array.from(u, (x, e) => (kept(e % k) ? x * s[e % k] : 0)); // U_k S_k (m×k, rest 0)
      const ak = matmul(us, transpose(v, n, k), m, k, n);
      const rbar = Float64Array.from(a, (x, e) => -2 * (x - ak[e]));
      const vs = Float64Array.from(v, (x, e) => (kept(e % k) ? x * s[e % k] : 0)); // V_k S_k
      const ubar = matmul(rbar, vs, m, n, k);
      const vbar = matmul(transpose(rbar, m, n), us, n, m, k);
      const rv = matmul(rbar, v, m, n, k);
      const sbar = Float64Array.from(s, (_, l) => {
        if (!kept(l)) return 0;
        let t = 0;
        for (let i = 0; i < m; i++) t += u[i * k + l] * rv[i * k + l];
        return t;
      });
      return { ubar, sbar, vbar, explicit: Float64Array.from(rbar, (x) => -x) };
    }
    case 'projector':
      return { ubar: side(loss.w, u, m) };
    case 'projectorSum':
      return { ubar: side(loss.w, u, m), vbar: side(loss.wv, v, n) };
    default:
      return null;
  }
}
