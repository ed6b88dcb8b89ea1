// What a run page shows of a population's agents beyond its metrics: the network of a graph world
// drawn with each agent coloured by its state at a step (a slider picks the step), and histograms
// of the agents' attributes and states. An agent's state at a step is the last action it took up
// to that step that went through (not idle): `adopt`, `catch`, `recover`; "none" before its first.
// The agents and the graph are loaded again as the run loaded them (its data file, its graph file
// or generator, as `sop query` does); the page's own script (NETWORK_JS) draws on a canvas from a
// JSON block whose text cannot end its script element. Everything else is escaped here.
import { dirname, resolve } from 'node:path';
import type { RunEvent } from '../../core/runtime/events.js';
import { agentsTable, populationResults, type AgentsTable } from '../../features/population/results.js';
import { sourcePath } from '../../features/population/validate.js';
import { buildFollowGraph, type GraphSpec } from '../../features/population/worlds/graph.js';
import { readEdgeListFile } from '../../features/population/worlds/graph-file.js';
import { esc, PALETTE } from './html.js';

/** The largest network drawn (agents): a bigger one gets its histograms only. */
export const MAX_NETWORK_AGENTS = 5000;

export interface NetworkData {
  state: string;
  ids: string[];
  /** Layout in [0, 1] x [0, 1], by agent index. */
  x: number[];
  y: number[];
  /** Undirected edges, by agent index. */
  edges: Array<[number, number]>;
  /** The state names; index 0 is "none". */
  states: string[];
  /** Per step (index 0: step 1): the agents whose state changed then, as [agent, state]. */
  changes: Array<Array<[number, number]>>;
}

interface StateDoc {
  population?: unknown;
  world?: { type?: unknown; graph?: unknown; params?: { meet?: unknown } };
}

/** Each agent's state after each step of the first visit of `state`: [agent index, state index] changes per step. */
export function agentStates(events: readonly RunEvent[], state: string, ids: readonly string[]): Pick<NetworkData, 'states' | 'changes'> {
  const index = new Map(ids.map((id, i) => [id, i]));
  const states = ['none'];
  const stateIndex = new Map<string, number>([['none', 0]]);
  const current = new Array<number>(ids.length).fill(0);
  const changes: NetworkData['changes'] = [];
  let visit: number | undefined;
  for (const e of events) {
    if (e.type !== 'population_step' || e.state !== state) continue;
    visit ??= e.visit;
    if (e.visit !== visit) break;
    const step: Array<[number, number]> = [];
    for (const a of e.actions) {
      if (!a.ok || a.name === 'idle') continue;
      const i = index.get(a.agent);
      if (i === undefined) continue;
      let s = stateIndex.get(a.name);
      if (s === undefined) {
        s = states.length;
        states.push(a.name);
        stateIndex.set(a.name, s);
      }
      if (current[i] !== s) {
        current[i] = s;
        step.push([i, s]);
      }
    }
    changes.push(step);
  }
  return { states, changes };
}

/** A force-directed layout (Fruchterman and Reingold), deterministic: the same graph, the same picture. */
export function layout(n: number, edges: ReadonlyArray<readonly [number, number]>): { x: number[]; y: number[] } {
  const x = new Array<number>(n);
  const y = new Array<number>(n);
  // start on a sunflower spiral (spread, no randomness)
  for (let i = 0; i < n; i++) {
    const r = Math.sqrt((i + 0.5) / n) / 2;
    const a = i * 2.399963;
    x[i] = 0.5 + r * Math.cos(a);
    y[i] = 0.5 + r * Math.sin(a);
  }
  if (n < 2) return { x, y };
  const k = Math.sqrt(1 / n);
  const rounds = n > 2000 ? 15 : n > 500 ? 40 : 80;
  let temp = 0.1;
  const dx = new Float64Array(n);
  const dy = new Float64Array(n);
  // repulsion on a grid of cells of side 2k: only nearby agents push each other
  const cell = 2 * k;
  for (let round = 0; round < rounds; round++) {
    dx.fill(0);
    dy.fill(0);
    const grid = new Map<string, number[]>();
    for (let i = 0; i < n; i++) {
      const key = `${Math.floor(x[i]! / cell)},${Math.floor(y[i]! / cell)}`;
      (grid.get(key) ?? grid.set(key, []).get(key)!).push(i);
    }
    for (let i = 0; i < n; i++) {
      const cx = Math.floor(x[i]! / cell);
      const cy = Math.floor(y[i]! / cell);
      for (let gx = cx - 1; gx <= cx + 1; gx++)
        for (let gy = cy - 1; gy <= cy + 1; gy++)
          for (const j of grid.get(`${gx},${gy}`) ?? []) {
            if (j === i) continue;
            const ddx = x[i]! - x[j]!;
            const ddy = y[i]! - y[j]!;
            const d2 = Math.max(1e-9, ddx * ddx + ddy * ddy);
            const f = (k * k) / d2;
            dx[i]! += ddx * f;
            dy[i]! += ddy * f;
          }
    }
    for (const [a, b] of edges) {
      const ddx = x[a]! - x[b]!;
      const ddy = y[a]! - y[b]!;
      const d = Math.max(1e-9, Math.sqrt(ddx * ddx + ddy * ddy));
      const f = d / k;
      dx[a]! -= ddx * f;
      dy[a]! -= ddy * f;
      dx[b]! += ddx * f;
      dy[b]! += ddy * f;
    }
    for (let i = 0; i < n; i++) {
      const d = Math.sqrt(dx[i]! * dx[i]! + dy[i]! * dy[i]!);
      if (d > 0) {
        x[i]! += (dx[i]! / d) * Math.min(d, temp);
        y[i]! += (dy[i]! / d) * Math.min(d, temp);
      }
      // a gentle pull to the middle keeps parts that are not connected on the picture
      x[i]! += (0.5 - x[i]!) * 0.01;
      y[i]! += (0.5 - y[i]!) * 0.01;
    }
    temp *= 0.93;
  }
  const minX = Math.min(...x);
  const maxX = Math.max(...x);
  const minY = Math.min(...y);
  const maxY = Math.max(...y);
  const sx = maxX - minX || 1;
  const sy = maxY - minY || 1;
  return { x: x.map((v) => (v - minX) / sx), y: y.map((v) => (v - minY) / sy) };
}

export interface PopulationExtras {
  network?: NetworkData;
  agents?: AgentsTable;
  /** Why a part could not be shown (a data file gone, a graph too big). */
  notes: string[];
}

/** The agents of the run's population states and the network of its first graph world, loaded again as the run loaded them. */
export async function populationExtras(events: readonly RunEvent[]): Promise<PopulationExtras> {
  const started = events[0]?.type === 'run_started' ? events[0] : undefined;
  const notes: string[] = [];
  if (!started) return { notes };
  const doc = started.document as { states?: Record<string, StateDoc> } | undefined;
  const results = populationResults(events);
  if (results.states.size === 0) return { notes };
  const sopFile = resolve(started.file);
  let agents: AgentsTable;
  try {
    agents = await agentsTable(doc, sopFile, results.states);
  } catch (err) {
    return { notes: [`agents not loaded: ${(err as Error).message}`] };
  }
  notes.push(...agents.warnings);
  const out: PopulationExtras = { agents, notes };
  for (const [state] of results.states) {
    const spec = doc?.states?.[state];
    const world = spec?.world;
    if (!world?.graph || world.params?.meet === 'pairs') continue;
    const ids = agents.rows.filter((r) => r[0] === state).map((r) => String(r[1]));
    if (ids.length === 0) continue;
    if (ids.length > MAX_NETWORK_AGENTS) {
      notes.push(`the network of ${state} is not drawn: ${ids.length} agents, more than ${MAX_NETWORK_AGENTS}`);
      break;
    }
    try {
      let graph = world.graph as GraphSpec & { file?: unknown };
      if (typeof graph.file === 'string') {
        const { file, ...rest } = graph as Record<string, unknown>;
        graph = { ...rest, edges: await readEdgeListFile(sourcePath(file as string, dirname(sopFile)), file as string) };
      }
      const built = buildFollowGraph(graph, ids).graph;
      const index = new Map(ids.map((id, i) => [id, i]));
      const seen = new Set<string>();
      const edges: Array<[number, number]> = [];
      built.forEachEdge((_e, _a, s, t) => {
        const a = index.get(s);
        const b = index.get(t);
        if (a === undefined || b === undefined || a === b) return;
        const key = a < b ? `${a},${b}` : `${b},${a}`;
        if (seen.has(key)) return;
        seen.add(key);
        edges.push([Math.min(a, b), Math.max(a, b)]);
      });
      out.network = { state, ids, ...layout(ids.length, edges), edges, ...agentStates(events, state, ids) };
    } catch (err) {
      notes.push(`the network of ${state} is not drawn: ${(err as Error).message}`);
    }
    break;
  }
  return out;
}

/** JSON that may sit inside a <script> element: no "<" (so no "</script>" or "<!--"), and no U+2028/2029. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** The network section: a canvas, a step slider and a legend, drawn by NETWORK_JS from the JSON block. */
export function networkHtml(n: NetworkData, token: string): string {
  const colours = n.states.map((_, i) => (i === 0 ? '#b0bec5' : PALETTE[(i - 1) % PALETTE.length]!));
  const steps = n.changes.length;
  const legend = n.states
    .map(
      (s, i) =>
        `<li><span class="swatch" style="background:${colours[i]}"></span>${esc(s)} <span class="muted" data-count="${i}"></span></li>`,
    )
    .join('');
  return (
    `<section class="network" id="network"><h3>${esc(n.state)} <span class="muted">network of ${n.ids.length} agents and ${n.edges.length} ties, ` +
    `coloured by each agent's last action up to the step</span></h3>` +
    `<label>step <input type="range" id="network-step" min="0" max="${steps}" value="${steps}"> <output id="network-step-label">${steps}</output> of ${steps}</label>` +
    `<ul class="legend">${legend}</ul><canvas id="network-canvas" width="760" height="520"></canvas>` +
    `<script type="application/json" id="network-data">${scriptJson({ ...n, colours })}</script>` +
    `<script src="/static/network.js?t=${encodeURIComponent(token)}"></script></section>`
  );
}

/** A small bar chart: counts by label. */
function bars(title: string, counts: ReadonlyArray<[string, number]>): string {
  const W = 300;
  const H = 140;
  const max = Math.max(1, ...counts.map(([, c]) => c));
  const bw = (W - 20) / Math.max(1, counts.length);
  const rects = counts
    .map(([label, c], i) => {
      const h = (c / max) * (H - 40);
      return (
        `<rect x="${(10 + i * bw).toFixed(1)}" y="${(H - 24 - h).toFixed(1)}" width="${Math.max(1, bw - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="#607d8b">` +
        `<title>${esc(label)}: ${c}</title></rect>`
      );
    })
    .join('');
  const first = counts[0]?.[0] ?? '';
  const last = counts.at(-1)?.[0] ?? '';
  return (
    `<figure class="chart histogram" data-histogram="${esc(title)}"><figcaption>${esc(title)}</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-size="10" font-family="sans-serif">${rects}` +
    `<text x="10" y="${H - 8}">${esc(first.slice(0, 24))}</text><text x="${W - 10}" y="${H - 8}" text-anchor="end">${esc(last.slice(0, 24))}</text>` +
    `<text x="${W - 10}" y="12" text-anchor="end">${max}</text></svg></figure>`
  );
}

/** Histograms of the agents' attributes (numbers in 10 bins; text by value, the 12 commonest) and of their states at the end. */
export function histogramsHtml(agents: AgentsTable | undefined, network: NetworkData | undefined): string {
  const figs: string[] = [];
  if (agents) {
    agents.columns.forEach((c, j) => {
      if (j < 2) return;
      const values = agents.rows.map((r) => r[j]).filter((v) => v !== null && v !== undefined);
      if (values.length === 0) return;
      if (c.type === 'BIGINT' || c.type === 'DOUBLE') {
        const xs = values as number[];
        const lo = Math.min(...xs);
        const hi = Math.max(...xs);
        if (lo === hi) return void figs.push(bars(c.name, [[String(lo), xs.length]]));
        const counts = new Array<number>(10).fill(0);
        for (const v of xs) counts[Math.min(9, Math.floor(((v - lo) / (hi - lo)) * 10))]!++;
        const w = (hi - lo) / 10;
        figs.push(
          bars(
            c.name,
            counts.map((n, i) => [`${+(lo + i * w).toPrecision(3)}`, n]),
          ),
        );
      } else {
        const counts = new Map<string, number>();
        for (const v of values) counts.set(String(v), (counts.get(String(v)) ?? 0) + 1);
        if (counts.size > values.length / 2 && counts.size > 12) return; // an identifier, not a category
        figs.push(bars(c.name, [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12)));
      }
    });
  }
  if (network) {
    const current = new Array<number>(network.ids.length).fill(0);
    for (const step of network.changes) for (const [i, s] of step) current[i] = s;
    const counts = network.states.map((s, i) => [s, current.filter((c) => c === i).length] as [string, number]);
    figs.push(bars('state at the end (last action)', counts));
  }
  return figs.length ? `<h3>Agents</h3><div class="metric-grid histograms">${figs.join('')}</div>` : '';
}

/** The network's page script: draw edges and agents, recolour on the slider. */
export const NETWORK_JS = `
(function () {
  var el = document.getElementById('network-data'); if (!el) return;
  var d = JSON.parse(el.textContent);
  var canvas = document.getElementById('network-canvas'), ctx = canvas.getContext('2d');
  var slider = document.getElementById('network-step'), label = document.getElementById('network-step-label');
  var n = d.ids.length, W = canvas.width, H = canvas.height, pad = 12;
  var px = d.x.map(function (v) { return pad + v * (W - 2 * pad); }), py = d.y.map(function (v) { return pad + v * (H - 2 * pad); });
  var r = n > 2000 ? 1.5 : n > 500 ? 2.5 : 4;
  function stateAt(step) {
    var s = new Array(n).fill(0);
    for (var t = 0; t < step && t < d.changes.length; t++) for (var k = 0; k < d.changes[t].length; k++) s[d.changes[t][k][0]] = d.changes[t][k][1];
    return s;
  }
  function draw() {
    var step = Number(slider.value); label.textContent = String(step);
    var s = stateAt(step);
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, H);
    ctx.strokeStyle = 'rgba(120,120,120,0.25)'; ctx.lineWidth = 0.6; ctx.beginPath();
    for (var e = 0; e < d.edges.length; e++) { var a = d.edges[e][0], b = d.edges[e][1]; ctx.moveTo(px[a], py[a]); ctx.lineTo(px[b], py[b]); }
    ctx.stroke();
    var counts = d.states.map(function () { return 0; });
    for (var i = 0; i < n; i++) { counts[s[i]]++; ctx.fillStyle = d.colours[s[i]]; ctx.beginPath(); ctx.arc(px[i], py[i], r, 0, 2 * Math.PI); ctx.fill(); }
    document.querySelectorAll('#network [data-count]').forEach(function (li) { li.textContent = '(' + counts[Number(li.getAttribute('data-count'))] + ')'; });
    canvas.dataset.drawnStep = String(step);
  }
  slider.addEventListener('input', draw);
  draw();
})();
`;
