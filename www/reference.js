// The reference implementation's SVD derivative rule (SPEC.md §6),
// evaluated here in JS so the page can show its failure beside lindiff's
// answer. It is the textbook reverse-mode rule for the thin SVD
// A = U diag(s) Vᵀ (real), with the reference's Lorentzian broadening
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
 * V (n×k); all row-major. `ubar`, `vbar` may be null (zero).
 */
export function referenceGradient({ m, n, u, s, v, ubar, sbar, vbar, eps = 1e-12 }) {
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
  return g;
}

function add(a, b) {
  return Float64Array.from(a, (x, i) => x + b[i]);
}

/**
 * The cotangents of a page loss at the factors (row-major U m×k, s, V n×k),
 * or null where the loss is not a function of (U, s, V) the rule takes.
 *   P_k = ⟨W, U_kU_kᵀ⟩:     Ū[:, :k] = (W + Wᵀ) U_k
 *   ⟨W_U,·⟩ + ⟨W_V, V_kV_kᵀ⟩: and V̄[:, :k] = (W_V + W_Vᵀ) V_k
 *   Σ s: s̄ = 1;  Σ cᵢsᵢ: s̄ = c;  ‖A − A_k‖² = Σ_{i>k} sᵢ²: s̄ᵢ = 2sᵢ (i > k).
 */
export function cotangents(loss, { m, n, u, s, v }) {
  const k = s.length;
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
    case 'truncation':
      return { sbar: Float64Array.from(s, (x, i) => (i >= loss.k ? 2 * x : 0)) };
    case 'projector':
      return { ubar: side(loss.w, u, m) };
    case 'projectorSum':
      return { ubar: side(loss.w, u, m), vbar: side(loss.wv, v, n) };
    default:
      return null;
  }
}
