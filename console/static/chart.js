// Hand-drawn SVG charts: lines, steps and markers over a numeric or time x axis. No
// library; every element is created with createElementNS and styled with presentation
// attributes or classes (the console's Content-Security-Policy forbids inline styles).

const NS = 'http://www.w3.org/2000/svg';

/** Series colours; the legend uses the matching .swatch-N classes. */
export const PALETTE = ['#2f5fd0', '#d0702f', '#23843c', '#9b3fb5', '#c0392b', '#1f8a8a', '#8a6d1f', '#5d5d66'];

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  }
  if (parent) parent.appendChild(e);
  return e;
}

/** niceTicks returns about n round values covering [lo, hi]. */
export function niceTicks(lo, hi, n = 5) {
  if (!(hi > lo)) return [lo];
  const span = hi - lo;
  let step = Math.pow(10, Math.floor(Math.log10(span / n)));
  const err = (n / span) * step;
  if (err <= 0.15) step *= 10;
  else if (err <= 0.35) step *= 5;
  else if (err <= 0.75) step *= 2;
  const out = [];
  const first = Math.floor(lo / step + 1e-9), last = Math.ceil(hi / step - 1e-9);
  for (let k = first; k <= last; k++) out.push(Number((k * step).toPrecision(12)));
  return out;
}

const MINUTE = 60e3;
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440].map((m) => m * MINUTE);

/** timeTicks returns about n tick times (ms) at round local clock times in [lo, hi]. */
export function timeTicks(lo, hi, n = 6) {
  const step = TIME_STEPS.find((s) => (hi - lo) / s <= n) || TIME_STEPS[TIME_STEPS.length - 1];
  const offset = new Date(lo).getTimezoneOffset() * MINUTE;
  const out = [];
  for (let t = Math.ceil((lo - offset) / step) * step + offset; t <= hi; t += step) out.push(t);
  return out;
}

function clockLabel(t) {
  const d = new Date(t);
  return String(d.getHours()).padStart(2, '0') + ':' + String(d.getMinutes()).padStart(2, '0');
}

/** compact formats a number with at most 3 significant digits. */
export function compact(v) {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6) return (v / 1e6).toPrecision(3).replace(/\.?0+$/, '') + 'M';
  if (a >= 1e3) return (v / 1e3).toPrecision(3).replace(/\.?0+$/, '') + 'k';
  if (a >= 1) return String(Number(v.toPrecision(3)));
  return String(Number(v.toPrecision(2)));
}

/**
 * chart draws series on shared axes and returns the <svg>.
 *
 * opts: {series: [{name, points: [{x, y, label?, title?, hollow?, r?}], color?, line? (default
 * true), step? (draw a step line), markers? (default: when few points), dash?, sort? (false:
 * join the points in their order, not by x)}], time?, xInteger? (only whole x ticks)
 * (x values are ms since the epoch), xDomain?, yDomain?, yMin?, xLabel?, yLabel?, xFormat?,
 * yFormat?, gap? (break a line where consecutive x differ by more), width?, height?, title}
 */
export function chart(opts) {
  const W = opts.width || 760;
  const H = opts.height || 260;
  const m = { l: 60, r: 18, t: 14, b: opts.xLabel ? 42 : 28 };
  const pts = opts.series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
  let [x0, x1] = opts.xDomain || [Math.min(...pts.map((p) => p.x)), Math.max(...pts.map((p) => p.x))];
  let [y0, y1] = opts.yDomain || [Math.min(opts.yMin ?? Infinity, ...pts.map((p) => p.y)), Math.max(...pts.map((p) => p.y))];
  if (!pts.length) { x0 = 0; x1 = 1; y0 = 0; y1 = 1; }
  if (!(x1 > x0)) { const d = Math.abs(x0) * 0.1 || 1; x0 -= d; x1 += d; }
  if (!(y1 > y0)) { const d = Math.abs(y0) * 0.1 || 1; y1 += d; if (opts.yMin === undefined) y0 -= d; }
  const yt = niceTicks(y0, y1, 5);
  y0 = Math.min(y0, yt[0]);
  y1 = Math.max(y1, yt[yt.length - 1]);
  let xt = opts.time ? timeTicks(x0, x1) : niceTicks(x0, x1, 6);
  if (!opts.time && !opts.xDomain) {
    x0 = Math.min(x0, xt[0]);
    x1 = Math.max(x1, xt[xt.length - 1]);
  }
  xt = xt.filter((v) => v >= x0 - 1e-9 && v <= x1 + 1e-9 && (!opts.xInteger || Number.isInteger(v)));
  const X = (x) => m.l + ((x - x0) / (x1 - x0)) * (W - m.l - m.r);
  const Y = (y) => H - m.b - ((y - y0) / (y1 - y0)) * (H - m.t - m.b);
  const fmtY = opts.yFormat || compact;
  const fmtX = opts.xFormat || (opts.time ? clockLabel : compact);

  const svg = el('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': opts.title || 'chart' });
  if (opts.title) el('title', {}, svg).textContent = opts.title;
  const grid = el('g', { class: 'grid-lines' }, svg);
  for (const v of yt) {
    el('line', { class: 'grid', x1: m.l, x2: W - m.r, y1: Y(v), y2: Y(v) }, grid);
    const t = el('text', { x: m.l - 6, y: Y(v) + 4, 'text-anchor': 'end' }, grid);
    t.textContent = fmtY(v);
  }
  for (const v of xt) {
    el('line', { class: 'axis', x1: X(v), x2: X(v), y1: H - m.b, y2: H - m.b + 4 }, grid);
    const t = el('text', { x: X(v), y: H - m.b + 16, 'text-anchor': 'middle' }, grid);
    t.textContent = fmtX(v);
  }
  el('line', { class: 'axis', x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }, grid);
  if (opts.xLabel) {
    el('text', { x: (m.l + W - m.r) / 2, y: H - 6, 'text-anchor': 'middle' }, svg).textContent = opts.xLabel;
  }
  if (opts.yLabel) {
    el('text', { x: 12, y: (m.t + H - m.b) / 2, 'text-anchor': 'middle', transform: `rotate(-90 12 ${(m.t + H - m.b) / 2})` }, svg)
      .textContent = opts.yLabel;
  }

  opts.series.forEach((s, i) => {
    const color = s.color || PALETTE[i % PALETTE.length];
    const g = el('g', { class: 'series-group', 'data-series': s.name }, svg);
    const ps = s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
    if (s.sort !== false) ps.sort((a, b) => a.x - b.x);
    if (s.line !== false && ps.length > 1) {
      let d = '';
      ps.forEach((p, j) => {
        const prev = ps[j - 1];
        if (!prev || (opts.gap && p.x - prev.x > opts.gap)) d += `M${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`;
        else if (s.step) d += `H${X(p.x).toFixed(1)}V${Y(p.y).toFixed(1)}`;
        else d += `L${X(p.x).toFixed(1)},${Y(p.y).toFixed(1)}`;
      });
      el('path', { class: 'series', d, stroke: color, 'stroke-dasharray': s.dash }, g);
    }
    const markers = s.markers ?? ps.length <= 60;
    if (markers) {
      for (const p of ps) {
        const c = el('circle', { class: 'point', cx: X(p.x).toFixed(1), cy: Y(p.y).toFixed(1), r: p.r || 3.5,
          fill: p.hollow ? 'none' : color, stroke: color, 'stroke-width': 1.5 }, g);
        el('title', {}, c).textContent = p.title || `${s.name}: ${fmtX(p.x)} → ${fmtY(p.y)}`;
        if (p.label) {
          const t = el('text', { class: 'label', x: X(p.x) + 6, y: Y(p.y) - 6 }, g);
          t.textContent = p.label;
        }
      }
    }
  });
  return svg;
}

/** legend returns a legend for the series of a chart. */
export function legend(names) {
  const div = document.createElement('div');
  div.className = 'legend';
  names.forEach((n, i) => {
    const span = document.createElement('span');
    const sw = document.createElement('i');
    sw.className = 'swatch-' + (i % PALETTE.length);
    span.append(sw, n);
    div.append(span);
  });
  return div;
}
