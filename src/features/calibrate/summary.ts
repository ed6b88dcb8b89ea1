// What a calibration says of each parameter: the weighted median and 90% interval of its
// posterior (the last population), its prior's width, and a histogram of its marginal. Pure.
import { priorWidth, type Parameter, type ParameterValue } from './priors.js';
import { weightedQuantile, type Particle } from './smc.js';

export interface ParameterSummary {
  median: ParameterValue;
  lo90: ParameterValue;
  hi90: ParameterValue;
  prior_width: number;
}

export interface Histogram {
  /** Bin edges (bins + 1 numbers), or the list's values for a discrete parameter. */
  edges?: number[];
  labels: string[];
  /** Posterior mass of each bin (summing to 1). */
  mass: number[];
}

/** The weighted quantiles of a parameter over the particles (a list's values by their place in the list). */
export function summarise(p: Parameter, particles: readonly Particle[]): ParameterSummary {
  const weights = particles.map((x) => x.weight);
  if (p.kind === 'discrete') {
    const idx = particles.map((x) => p.values.indexOf(x.values[p.name]!));
    const at = (q: number) => p.values[weightedQuantile(idx, weights, q)]!;
    return { median: at(0.5), lo90: at(0.05), hi90: at(0.95), prior_width: priorWidth(p) };
  }
  const xs = particles.map((x) => x.values[p.name] as number);
  return {
    median: weightedQuantile(xs, weights, 0.5),
    lo90: weightedQuantile(xs, weights, 0.05),
    hi90: weightedQuantile(xs, weights, 0.95),
    prior_width: priorWidth(p),
  };
}

/** The marginal posterior as a histogram: `bins` equal bins over the particles' span (a bar per value of a list). */
export function histogram(p: Parameter, particles: readonly Particle[], bins = 20): Histogram {
  if (p.kind === 'discrete') {
    const mass = p.values.map((v) => particles.filter((x) => x.values[p.name] === v).reduce((s, x) => s + x.weight, 0));
    return { labels: p.values.map(String), mass };
  }
  const xs = particles.map((x) => x.values[p.name] as number);
  let lo = Math.min(...xs);
  let hi = Math.max(...xs);
  if (!(hi > lo)) {
    lo -= 0.5 * Math.abs(lo || 1) * 1e-3;
    hi += 0.5 * Math.abs(hi || 1) * 1e-3;
  }
  const edges = Array.from({ length: bins + 1 }, (_, i) => lo + ((hi - lo) * i) / bins);
  const mass = new Array<number>(bins).fill(0);
  particles.forEach((x, i) => {
    const b = Math.min(bins - 1, Math.floor(((xs[i]! - lo) / (hi - lo)) * bins));
    mass[b]! += x.weight;
  });
  return { edges, labels: edges.slice(0, -1).map((e, i) => `${fmt(e)}-${fmt(edges[i + 1]!)}`), mass };
}

/** A number with 4 significant digits. */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  return Math.abs(x) >= 1e5 || Math.abs(x) < 1e-3 ? x.toExponential(3) : String(Number(x.toPrecision(4)));
}

/** A histogram as text bars, one line per bin (for report.md and the terminal). */
export function textHistogram(h: Histogram, width = 40): string[] {
  const top = Math.max(...h.mass, 1e-12);
  const label = Math.max(...h.labels.map((l) => l.length));
  return h.labels.map(
    (l, i) => `${l.padStart(label)} | ${'#'.repeat(Math.round((h.mass[i]! / top) * width))} ${(100 * h.mass[i]!).toFixed(1)}%`,
  );
}

/** A small SVG bar chart of a histogram (the parameter's name, its bins, the interval's ends marked). */
export function svgHistogram(name: string, h: Histogram, s: ParameterSummary): string {
  const w = 360;
  const ht = 160;
  const pad = 28;
  const n = h.mass.length;
  const top = Math.max(...h.mass, 1e-12);
  const bw = (w - 2 * pad) / n;
  const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const bars = h.mass
    .map((m, i) => {
      const bh = (m / top) * (ht - 2 * pad);
      return `<rect x="${(pad + i * bw).toFixed(1)}" y="${(ht - pad - bh).toFixed(1)}" width="${Math.max(1, bw - 1).toFixed(1)}" height="${bh.toFixed(1)}" fill="#4a7ab5"/>`;
    })
    .join('');
  const lo = h.edges ? h.edges[0]! : 0;
  const hi = h.edges ? h.edges[n]! : n;
  const xOf = (v: ParameterValue) =>
    h.edges && typeof v === 'number' ? pad + ((v - lo) / (hi - lo || 1)) * (w - 2 * pad) : pad + (h.labels.indexOf(String(v)) + 0.5) * bw;
  const marks = [s.lo90, s.median, s.hi90]
    .map(
      (v, i) =>
        `<line x1="${xOf(v).toFixed(1)}" x2="${xOf(v).toFixed(1)}" y1="${pad - 6}" y2="${ht - pad}" stroke="${i === 1 ? '#c0392b' : '#888'}" stroke-dasharray="${i === 1 ? '' : '3,3'}"/>`,
    )
    .join('');
  const axis = h.edges
    ? `<text x="${pad}" y="${ht - 8}" font-size="11">${esc(fmt(lo))}</text><text x="${w - pad}" y="${ht - 8}" font-size="11" text-anchor="end">${esc(fmt(hi))}</text>`
    : h.labels
        .map((l, i) => `<text x="${(pad + (i + 0.5) * bw).toFixed(1)}" y="${ht - 8}" font-size="11" text-anchor="middle">${esc(l)}</text>`)
        .join('');
  const title = `${name}: median ${typeof s.median === 'number' ? fmt(s.median) : String(s.median)}, 90% ${typeof s.lo90 === 'number' ? fmt(s.lo90) : String(s.lo90)} to ${typeof s.hi90 === 'number' ? fmt(s.hi90) : String(s.hi90)}`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${ht}" viewBox="0 0 ${w} ${ht}" font-family="sans-serif">` +
    `<text x="${pad}" y="14" font-size="12">${esc(title)}</text>${bars}${marks}` +
    `<line x1="${pad}" x2="${w - pad}" y1="${ht - pad}" y2="${ht - pad}" stroke="#333"/>${axis}</svg>\n`
  );
}
