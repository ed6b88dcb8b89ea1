// `sop view OUT` of a sweep's folder (results.jsonl, runs/KEY/): each population metric across the
// runs as a band (the median and the 5 to 95% range at each step, a band per experiment arm) with
// the SOP's targets drawn on it, in a grid, before the list of runs. Read from the runs' journals
// and results.jsonl; everything shown is escaped here.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RunEvent } from '../../core/runtime/events.js';
import { metricSeries } from '../../features/population/results.js';
import { esc, PALETTE } from './html.js';

/** Whether a folder is a sweep's output: its results.jsonl and its runs/ folder. */
export function isSweepFolder(dir: string): boolean {
  try {
    return statSync(join(dir, 'results.jsonl')).isFile() && statSync(join(dir, 'runs')).isDirectory();
  } catch {
    return false;
  }
}

/** Each run's arm (results.jsonl `arm`), by its key; runs of a sweep without arms have none. */
export function sweepArms(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const file = join(dir, 'results.jsonl');
  if (!existsSync(file) || statSync(file).size > 64 * 1024 * 1024) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as { key?: unknown; arm?: unknown };
      if (typeof r.key === 'string' && typeof r.arm === 'string') out.set(r.key, r.arm);
    } catch {
      // a damaged line: that run has no arm here
    }
  }
  return out;
}

interface Target {
  kind?: string;
  metric?: string;
  state?: string;
  query?: string;
  at?: number | 'end';
  value?: number;
  tolerance?: number;
  interval?: [number, number];
  points?: Array<[number, number]>;
  band?: number;
  relative_band?: number;
  source?: string;
  arms?: string[];
}

/** A quantile of sorted numbers (linear between order statistics). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export interface Band {
  arm: string;
  runs: number;
  /** Per step: the median and the 5% and 95% quantiles over the runs that reached it. */
  points: Array<{ step: number; median: number; lo: number; hi: number }>;
}

export interface MetricBands {
  state: string;
  name: string;
  bands: Band[];
}

/**
 * The bands of every metric of the runs (first visit of each state): values at each step across
 * the runs of each arm. A run that ended before a step (a transition) keeps its last value, as the
 * report's curves do.
 */
export function metricBands(runs: ReadonlyArray<{ arm: string; events: readonly RunEvent[] }>): MetricBands[] {
  const byMetric = new Map<string, { state: string; name: string; arms: Map<string, Array<Map<number, number>>> }>();
  for (const run of runs) {
    for (const s of metricSeries(run.events)) {
      const first = [...s.visits.values()][0] ?? [];
      const values = new Map<number, number>();
      for (const p of first) if (p.value !== null) values.set(p.step, p.value);
      if (values.size === 0) continue;
      const key = `${s.state}\u0000${s.name}`;
      let m = byMetric.get(key);
      if (!m) byMetric.set(key, (m = { state: s.state, name: s.name, arms: new Map() }));
      const list = m.arms.get(run.arm) ?? [];
      list.push(values);
      m.arms.set(run.arm, list);
    }
  }
  return [...byMetric.values()].map((m) => ({
    state: m.state,
    name: m.name,
    bands: [...m.arms.entries()].map(([arm, list]) => {
      const maxStep = Math.max(...list.flatMap((v) => [...v.keys()]));
      const points: Band['points'] = [];
      for (let step = 1; step <= maxStep; step++) {
        const xs: number[] = [];
        for (const v of list) {
          let last: number | undefined;
          for (const [s, x] of v) if (s <= step) last = x;
          if (last !== undefined) xs.push(last);
        }
        if (xs.length === 0) continue;
        xs.sort((a, b) => a - b);
        points.push({ step, median: quantile(xs, 0.5), lo: quantile(xs, 0.05), hi: quantile(xs, 0.95) });
      }
      return { arm, runs: list.length, points };
    }),
  }));
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3));

/** One metric's bands with the targets on it: an SVG in a figure. */
export function bandChart(
  m: MetricBands,
  targets: ReadonlyArray<[string, Target]>,
  armNames: readonly string[],
  showState = false,
): string {
  const W = 320;
  const H = 170;
  const L = 46;
  const B = 22;
  const all = m.bands.flatMap((b) => b.points);
  let maxStep = Math.max(1, ...all.map((p) => p.step));
  let lo = Math.min(0, ...all.map((p) => p.lo));
  let hi = Math.max(...all.map((p) => p.hi));
  for (const [, t] of targets) {
    const ys = t.points ? t.points.map((p) => p[1]) : [t.value ?? NaN, ...(t.interval ?? [])];
    for (const y of ys)
      if (Number.isFinite(y)) [lo, hi] = [Math.min(lo, y - (t.band ?? t.tolerance ?? 0)), Math.max(hi, y + (t.band ?? t.tolerance ?? 0))];
    for (const p of t.points ?? []) maxStep = Math.max(maxStep, p[0]);
  }
  if (!Number.isFinite(hi) || hi === lo) hi = lo + 1;
  const x = (step: number) => L + (maxStep === 1 ? 0 : ((step - 1) / (maxStep - 1)) * (W - L - 10));
  const y = (v: number) => H - B - ((v - lo) / (hi - lo)) * (H - B - 10);
  const colour = (arm: string) => PALETTE[Math.max(0, armNames.indexOf(arm)) % PALETTE.length]!;
  const bands = m.bands
    .map((b) => {
      const upper = b.points.map((p) => `${x(p.step).toFixed(1)},${y(p.hi).toFixed(1)}`);
      const lower = b.points.map((p) => `${x(p.step).toFixed(1)},${y(p.lo).toFixed(1)}`).reverse();
      const median = b.points.map((p) => `${x(p.step).toFixed(1)},${y(p.median).toFixed(1)}`).join(' ');
      const title = `<title>${esc(m.name)}${b.arm ? `, arm ${esc(b.arm)}` : ''}: median and 5-95% of ${b.runs} runs</title>`;
      return (
        `<polygon class="band" fill="${colour(b.arm)}" fill-opacity="0.2" stroke="none" points="${[...upper, ...lower].join(' ')}">${title}</polygon>` +
        `<polyline class="median" fill="none" stroke="${colour(b.arm)}" stroke-width="2" points="${median}">${title}</polyline>`
      );
    })
    .join('');
  const marks = targets
    .map(([name, t]) => {
      const title = `<title>target ${esc(name)}: ${esc(t.source ?? '')}</title>`;
      if (t.points) {
        return t.points
          .map(([s, v]) => {
            const d = t.band ?? (t.relative_band !== undefined ? Math.abs(v) * t.relative_band : 0);
            return (
              `<g class="target-mark" data-target="${esc(name)}"><line x1="${x(s)}" x2="${x(s)}" y1="${y(v - d)}" y2="${y(v + d)}" stroke="#000" stroke-width="1.5"/>` +
              `<circle cx="${x(s)}" cy="${y(v)}" r="3" fill="#fff" stroke="#000">${title}</circle></g>`
            );
          })
          .join('');
      }
      const at = typeof t.at === 'number' ? t.at : maxStep;
      const [a, b] = t.interval ?? (t.value !== undefined ? [t.value - (t.tolerance ?? 0), t.value + (t.tolerance ?? 0)] : [NaN, NaN]);
      if (!Number.isFinite(a) || !Number.isFinite(b)) return '';
      const mid = t.value ?? (a + b) / 2;
      return (
        `<g class="target-mark" data-target="${esc(name)}"><rect x="${x(at) - 4}" y="${y(b)}" width="8" height="${Math.max(1, y(a) - y(b))}" fill="#000" fill-opacity="0.25" stroke="#000"/>` +
        `<line x1="${L}" x2="${W - 10}" y1="${y(mid)}" y2="${y(mid)}" stroke="#000" stroke-dasharray="4 3"/>${title}</g>`
      );
    })
    .join('');
  const axes =
    `<line x1="${L}" y1="${H - B}" x2="${W - 10}" y2="${H - B}" stroke="#888"/><line x1="${L}" y1="10" x2="${L}" y2="${H - B}" stroke="#888"/>` +
    `<text x="${L - 4}" y="14" text-anchor="end">${fmt(hi)}</text><text x="${L - 4}" y="${H - B}" text-anchor="end">${fmt(lo)}</text>` +
    `<text x="${L}" y="${H - 6}">step 1</text><text x="${W - 10}" y="${H - 6}" text-anchor="end">step ${maxStep}</text>`;
  const runs = m.bands.reduce((n, b) => n + b.runs, 0);
  const caption = targets.length ? ` <span class="muted">target ${targets.map(([n]) => esc(n)).join(', ')}</span>` : '';
  return (
    `<figure class="chart band-chart" data-metric="${esc(m.name)}"><figcaption>${esc(m.name)}${showState ? ` <span class="muted">(${esc(m.state)})</span>` : ''} <span class="muted">${runs} runs</span>${caption}</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-size="10" font-family="sans-serif">` +
    `${axes}${bands}${marks}</svg></figure>`
  );
}

/** The sweep's report.md (`sop report OUT` writes it), as text, when there is one. */
export function sweepReportHtml(dir: string): string {
  const file = join(dir, 'report.md');
  try {
    if (statSync(file).size > 1024 * 1024) return '';
    return `<details class="file" open><summary>sop report <span class="muted">report.md</span></summary><pre>${esc(readFileSync(file, 'utf8'))}</pre></details>`;
  } catch {
    return '<p class="muted">no report.md yet: <code>sop report OUT</code> compares the runs with the targets</p>';
  }
}

/** The sweep's overview: a grid of metric bands with their targets, the arms' colours, the targets measured by a query. */
export function sweepHtml(runs: ReadonlyArray<{ arm: string; events: readonly RunEvent[] }>): string {
  const doc = runs.find((r) => r.events[0]?.type === 'run_started')?.events[0] as
    { document?: { targets?: unknown; states?: object } } | undefined;
  const raw = doc?.document?.targets;
  const targets: Array<[string, Target]> =
    raw && typeof raw === 'object' && !Array.isArray(raw) ? (Object.entries(raw) as Array<[string, Target]>) : [];
  const metrics = metricBands(runs);
  const states = new Set(metrics.map((m) => m.state));
  const armNames = [...new Set(runs.map((r) => r.arm))];
  const of = (m: MetricBands) =>
    targets.filter(
      ([, t]) => t.metric === m.name && t.kind !== 'effect' && (t.state === undefined || t.state === m.state || states.size === 1),
    );
  const charts = metrics.length
    ? `<div class="metric-grid">${metrics.map((m) => bandChart(m, of(m), armNames, states.size > 1)).join('')}</div>`
    : '<p class="muted">no population metrics in these runs</p>';
  const legend =
    armNames.length > 1 || armNames[0] !== ''
      ? `<ul class="legend">${armNames.map((a, i) => `<li><span class="swatch" style="background:${PALETTE[i % PALETTE.length]}"></span>arm ${esc(a)}</li>`).join('')}</ul>`
      : '';
  const other = targets.filter(([, t]) => !metrics.some((m) => of(m).some(([, u]) => u === t)));
  const table = other.length
    ? `<h3>Other targets <span class="muted">(a query or an effect: sop report gives their figures)</span></h3><table class="calls"><tr><th>target</th><th>kind</th><th>what</th><th>source</th></tr>` +
      other
        .map(
          ([n, t]) =>
            `<tr><td>${esc(n)}</td><td>${esc(t.kind ?? 'value')}</td><td>${t.query ? `<code>${esc(t.query)}</code>` : esc(t.metric ?? '')}${t.arms ? ` (${t.arms.map(esc).join(' - ')})` : ''}</td><td>${esc(t.source ?? '')}</td></tr>`,
        )
        .join('') +
      '</table>'
    : '';
  return (
    `<h2>Metrics across ${runs.length} runs <span class="muted">median and 5-95% band per step; targets in black</span></h2>` +
    `${legend}${charts}${table}`
  );
}
