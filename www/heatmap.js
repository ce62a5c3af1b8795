// Heatmaps: a matrix as a grid of coloured cells (blue < 0 < red, scaled to
// the largest |entry|), each showing its value in short; NaN cells are
// marked. Every cell is focusable (click or Tab) and then shows its full
// value (CSS `.hm-cell:focus::after` reads `data-full`); screen readers get
// it from `aria-label`.

/** Renders the r×c row-major `data` into `el` with a caption. */
export function heatmap(el, data, r, c, { title = '', scale = null, missing = false } = {}) {
  el.replaceChildren();
  if (title) {
    const h = document.createElement('div');
    h.className = 'hm-title';
    h.textContent = title;
    el.append(h);
  }
  let max = scale ?? 0;
  if (scale === null) for (const x of data) if (Number.isFinite(x)) max = Math.max(max, Math.abs(x));
  const grid = document.createElement('div');
  grid.className = 'hm';
  grid.setAttribute('role', 'grid');
  if (title) grid.setAttribute('aria-label', title);
  grid.style.gridTemplateColumns = `repeat(${c}, var(--cell))`;
  for (let i = 0; i < r; i++)
    for (let j = 0; j < c; j++) {
      const x = data[i * c + j];
      const cell = document.createElement('div');
      cell.className = 'hm-cell';
      cell.tabIndex = 0;
      cell.setAttribute('role', 'gridcell');
      cell.dataset.full = String(x);
      cell.title = `[${i}, ${j}] = ${x}`;
      cell.setAttribute('aria-label', `${title ? `${title} ` : ''}[${i}, ${j}] = ${x}`);
      if (missing) {
        cell.classList.add('missing');
        cell.textContent = '—';
        cell.title = 'no gradient: reported as not differentiable';
        cell.dataset.full = 'no gradient';
        cell.setAttribute('aria-label', `[${i}, ${j}]: no gradient`);
      } else if (!Number.isFinite(x)) {
        cell.classList.add('bad');
        cell.textContent = Number.isNaN(x) ? 'NaN' : x > 0 ? '∞' : '−∞';
      } else {
        const t = max > 0 ? x / max : 0;
        cell.style.background = color(t);
        cell.style.color = Math.abs(t) > 0.6 ? '#fff' : '#1d2330';
        cell.textContent = short(x);
      }
      grid.append(cell);
    }
  el.append(grid);
}

/** A diverging colour for t ∈ [−1, 1]. */
function color(t) {
  const a = Math.min(1, Math.abs(t));
  const [r, g, b] = t >= 0 ? [214, 66, 52] : [44, 110, 196];
  const mix = (x) => Math.round(255 + (x - 255) * a);
  return `rgb(${mix(r)}, ${mix(g)}, ${mix(b)})`;
}

/** A compact number: 3 significant digits, exponent when large or tiny. */
export function short(x) {
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e4 || a < 1e-3) return x.toExponential(1).replace('e+', 'e');
  return x.toPrecision(3).replace(/\.?0+$/, '');
}
