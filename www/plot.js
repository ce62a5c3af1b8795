// The gap plot, log–log, in one of two views: `errors` — how far each
// gradient is from another (lindiff vs central finite differences, the
// reference's rule vs finite differences and vs lindiff), so the
// reference's error near a tie shows beside ours — or `magnitudes` — the
// gradient magnitude ‖∇‖_F of lindiff, finite differences and the textbook rule
// against the gap. The exact 0 gap gets its own column on the left; NaN and
// "not differentiable" get markers instead of points; a value of exactly 0
// is drawn at the floor 1e-17.

import { short } from './heatmap.js';

// Drawn in this order (errors: lindiff's curve on top where they agree).
// `nan`: a NaN reference gets the NaN marker; `reported`: lindiff's "not
// differentiable" gets a hollow circle on the axis.
const VIEWS = {
  errors: {
    ylabel: 'max |error|',
    series: [
      { key: 'referenceVsLindiff', label: 'max |reference − lindiff|', color: '#e67e22', dash: [4, 3] },
      { key: 'referenceVsFd', label: 'max |reference − FD| (textbook SVD rule, F = Δ/(Δ² + ε²), ε = 1e-12, computed in this page)', color: '#c0392b', nan: true },
      { key: 'lindiffVsFd', label: 'max |lindiff − FD| (exact rule, wasm)', color: '#1b7f3b', width: 3, reported: true },
    ],
  },
  magnitudes: {
    ylabel: '‖∇‖_F',
    series: [
      // lindiff underneath, thick, so FD's dashes show on it where they agree.
      { key: 'lindiff', label: '‖lindiff‖_F (exact rule, wasm)', color: '#1b7f3b', width: 4, reported: true },
      { key: 'reference', label: '‖reference‖_F (textbook SVD rule, ε = 1e-12, in this page)', color: '#c0392b', width: 2, nan: true },
      { key: 'fd', label: '‖FD‖_F (central differences)', color: '#1f2433', dash: [4, 3] },
    ],
  },
};
const FLOOR = 1e-17;
const shown = (v) => (v === 0 ? FLOOR : v);

/**
 * Draws `points` ({gap, lindiff, fd, reference, reported, …Vs…}) on
 * `canvas` in `view` ('errors' or 'magnitudes'); `current` marks the
 * slider's gap; `xlabel` names the gap. Returns the number of finite
 * points drawn per series key.
 */
export function gapPlot(canvas, points, { current = null, fdStep = null, xlabel = 'gap', view = 'errors' } = {}) {
  const { series: SERIES, ylabel } = VIEWS[view];
  const dpr = window.devicePixelRatio || 1;
  const W = canvas.clientWidth || 640;
  const H = canvas.clientHeight || 300;
  canvas.width = W * dpr;
  canvas.height = H * dpr;
  const g = canvas.getContext('2d');
  g.scale(dpr, dpr);
  g.clearRect(0, 0, W, H);
  const pad = { l: 58, r: 14, t: 26, b: 40 };
  const zeroCol = 36;
  const positive = points.filter((p) => p.gap > 0).map((p) => p.gap);
  const xmin = Math.log10(Math.min(...positive));
  const xmax = Math.log10(Math.max(...positive));
  const ys = [];
  for (const p of points) for (const s of SERIES) if (Number.isFinite(p[s.key])) ys.push(Math.log10(shown(p[s.key])));
  const ymin = Math.floor(Math.min(...ys, -1));
  const ymax = Math.ceil(Math.max(...ys, 1)) + 1;
  const x0 = pad.l + zeroCol;
  const X = (gap) => (gap === 0 ? pad.l + zeroCol / 2 : x0 + ((Math.log10(gap) - xmin) / (xmax - xmin || 1)) * (W - pad.r - x0));
  const Y = (v) => pad.t + (1 - (Math.log10(v) - ymin) / (ymax - ymin)) * (H - pad.t - pad.b);
  // Axes and grid.
  g.font = '11px system-ui, sans-serif';
  g.strokeStyle = '#e3e6ee';
  g.fillStyle = '#5b6275';
  for (let e = ymin; e <= ymax; e += Math.max(1, Math.round((ymax - ymin) / 8))) {
    const y = Y(10 ** e);
    g.beginPath();
    g.moveTo(pad.l, y);
    g.lineTo(W - pad.r, y);
    g.stroke();
    g.fillText(`1e${e}`, 8, y + 4);
  }
  for (let e = Math.ceil(xmin); e <= Math.floor(xmax); e += 2) {
    const x = X(10 ** e);
    g.beginPath();
    g.moveTo(x, pad.t);
    g.lineTo(x, H - pad.b);
    g.stroke();
    g.fillText(`1e${e}`, x - 12, H - pad.b + 14);
  }
  g.fillText('0', pad.l + zeroCol / 2 - 3, H - pad.b + 14);
  g.fillText(`${xlabel} (log)`, W / 2 - 40, H - 8);
  g.save();
  g.translate(12, pad.t + 60);
  g.rotate(-Math.PI / 2);
  g.fillText(ylabel, -30, 0);
  g.restore();
  g.strokeStyle = '#9aa1b5';
  g.beginPath();
  g.moveTo(x0 - 4, pad.t);
  g.lineTo(x0 - 4, H - pad.b);
  g.stroke();
  if (fdStep !== null && fdStep > 10 ** xmin && fdStep < 10 ** xmax) {
    g.strokeStyle = '#b8bcc8';
    g.setLineDash([1, 4]);
    g.beginPath();
    g.moveTo(X(fdStep), pad.t);
    g.lineTo(X(fdStep), H - pad.b);
    g.stroke();
    g.setLineDash([]);
    g.fillText('FD step', X(fdStep) + 3, pad.t + 10);
  }
  if (current !== null) {
    g.strokeStyle = '#f0a500';
    g.setLineDash([2, 3]);
    g.beginPath();
    g.moveTo(X(current), pad.t);
    g.lineTo(X(current), H - pad.b);
    g.stroke();
    g.setLineDash([]);
  }
  // Series.
  const drawn = {};
  for (const s of SERIES) {
    drawn[s.key] = 0;
    g.strokeStyle = s.color;
    g.fillStyle = s.color;
    g.lineWidth = s.width ?? 1.5;
    g.setLineDash(s.dash || []);
    g.beginPath();
    let pen = false;
    for (const p of points.filter((q) => q.gap > 0)) {
      const v = p[s.key];
      if (Number.isFinite(v)) {
        if (pen) g.lineTo(X(p.gap), Y(shown(v)));
        else g.moveTo(X(p.gap), Y(shown(v)));
        pen = true;
      } else pen = false;
    }
    g.stroke();
    g.setLineDash([]);
    g.lineWidth = 1;
    for (const p of points) {
      const v = p[s.key];
      const x = X(p.gap);
      if (Number.isFinite(v)) {
        drawn[s.key]++;
        g.beginPath();
        g.arc(x, Y(shown(v)), p.gap === 0 ? 4 : 2.2, 0, 2 * Math.PI);
        g.fill();
      } else if (Number.isNaN(p.reference) && s.nan) {
        g.fillText('NaN', x - 10, pad.t - 6);
        g.fillText('×', x - 3, pad.t + 6);
      } else if (s.reported && p.reported) {
        g.beginPath();
        g.arc(x, H - pad.b - 6, 4, 0, 2 * Math.PI);
        g.stroke();
      }
    }
  }
  return { drawn, short };
}

/** The legend of `view` as HTML (colour swatches). */
export function legend(el, extra = [], view = 'errors') {
  el.replaceChildren();
  for (const s of VIEWS[view].series) {
    const item = document.createElement('span');
    item.className = 'legend-item';
    item.innerHTML = `<i style="background:${s.color}"></i>${s.label}`;
    el.append(item);
  }
  for (const text of extra) {
    const item = document.createElement('span');
    item.className = 'legend-item';
    item.textContent = text;
    el.append(item);
  }
}
