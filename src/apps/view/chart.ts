// A small inline SVG chart of the tokens of a run over its turns (cumulative, prompt plus
// completion), one line per series: per agent, or per call purpose.
import type { RunEvent } from '../../core/runtime/events.js';
import { agentColour, esc, PALETTE } from './html.js';

/** A colour per name, each different while the palette lasts: the preferred one when no earlier name took it. */
function distinctColours(names: readonly string[], preferred: (name: string) => string): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<string>();
  for (const name of names) {
    let colour = preferred(name);
    if (used.has(colour)) colour = PALETTE.find((c) => !used.has(c)) ?? colour;
    used.add(colour);
    out.set(name, colour);
  }
  return out;
}

type LlmCall = Extract<RunEvent, { type: 'llm_call' }>;

export function tokenChart(events: readonly RunEvent[], by: 'agent' | 'purpose', agents: readonly string[]): string {
  const calls = events.filter((e): e is LlmCall => e.type === 'llm_call');
  const title = by === 'agent' ? 'Tokens per agent' : 'Tokens per purpose';
  if (calls.length === 0) return `<figure class="chart"><figcaption>${title}</figcaption><p class="muted">no LLM calls</p></figure>`;
  const key = (c: LlmCall) => (by === 'agent' ? (c.agent ?? `(${c.purpose})`) : c.purpose);
  const series = new Map<string, Array<[number, number]>>();
  let maxTurn = 1;
  let maxTokens = 1;
  for (const c of calls) {
    const k = key(c);
    const points = series.get(k) ?? [[0, 0]];
    const total = points[points.length - 1]![1] + (c.usage?.promptTokens ?? 0) + (c.usage?.completionTokens ?? 0);
    points.push([c.turn, total]);
    series.set(k, points);
    maxTurn = Math.max(maxTurn, c.turn);
    maxTokens = Math.max(maxTokens, total);
  }
  const W = 560;
  const H = 220;
  const L = 56;
  const B = 28;
  const x = (t: number) => L + (t / maxTurn) * (W - L - 12);
  const y = (v: number) => H - B - (v / maxTokens) * (H - B - 12);
  const names = [...series.keys()];
  // one colour per series, never two series alike: an agent's own colour when free, else the next free one
  const colours = distinctColours(
    names,
    by === 'agent' ? (n) => agentColour(n, agents) : (n) => agentColour(n, ['agent', 'judge', 'speaker', 'summary', 'tool', 'embedding']),
  );
  const lines = names.map((name) => {
    const pts = series
      .get(name)!
      .map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`)
      .join(' ');
    return `<polyline fill="none" stroke="${colours.get(name)}" stroke-width="2" points="${pts}"><title>${esc(name)}</title></polyline>`;
  });
  // the legend is HTML under the chart: it wraps, and a long name is read whole
  const legend = names
    .map(
      (name) =>
        `<li><span class="swatch" style="background:${colours.get(name)}"></span>${esc(name)} <span class="muted">${series.get(name)!.at(-1)![1]}</span></li>`,
    )
    .join('');
  const axes =
    `<line x1="${L}" y1="${H - B}" x2="${W - 12}" y2="${H - B}" stroke="#888"/><line x1="${L}" y1="12" x2="${L}" y2="${H - B}" stroke="#888"/>` +
    `<text x="${L - 4}" y="16" text-anchor="end">${maxTokens}</text><text x="${L - 4}" y="${H - B}" text-anchor="end">0</text>` +
    `<text x="${L}" y="${H - 8}">turn 0</text><text x="${W - 12}" y="${H - 8}" text-anchor="end">turn ${maxTurn}</text>`;
  return (
    `<figure class="chart"><figcaption>${title} (cumulative, prompt + completion)</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-size="11" font-family="sans-serif">` +
    `${axes}${lines.join('')}</svg><ul class="legend">${legend}</ul></figure>`
  );
}

/**
 * The tokens of a run by tier and purpose: one row per (tier, purpose), never one per agent (a
 * population of thousands would give thousands of lines). A call's tier is the cognition tier of
 * the population state it was made in (`per_agent`, `archetype`, ...), or `turn` in a turn state.
 */
export function tokenTable(events: readonly RunEvent[]): string {
  const doc = events[0]?.type === 'run_started' ? (events[0].document as { states?: Record<string, unknown> } | undefined) : undefined;
  const tierOf = (state: string): string => {
    const s = doc?.states?.[state] as { population?: unknown; cognition?: { tier?: unknown } } | undefined;
    if (!s?.population) return 'turn';
    return typeof s.cognition?.tier === 'string' ? s.cognition.tier : 'population';
  };
  const rows = new Map<
    string,
    { tier: string; purpose: string; calls: number; prompt: number; completion: number; cost: number; priced: boolean }
  >();
  for (const e of events) {
    if (e.type !== 'llm_call') continue;
    const tier = tierOf(e.state);
    const key = `${tier}\u0000${e.purpose}`;
    const r = rows.get(key) ?? { tier, purpose: e.purpose, calls: 0, prompt: 0, completion: 0, cost: 0, priced: true };
    r.calls++;
    r.prompt += e.usage?.promptTokens ?? 0;
    r.completion += e.usage?.completionTokens ?? 0;
    if (typeof e.cost_usd === 'number') r.cost += e.cost_usd;
    else r.priced = false;
    rows.set(key, r);
  }
  if (rows.size === 0)
    return `<figure class="chart tokens-by-tier"><figcaption>Tokens by tier and purpose</figcaption><p class="muted">no LLM calls</p></figure>`;
  const body = [...rows.values()]
    .sort((a, b) => b.prompt + b.completion - (a.prompt + a.completion))
    .map(
      (r) =>
        `<tr><td>${esc(r.tier)}</td><td>${esc(r.purpose)}</td><td>${r.calls}</td><td>${r.prompt}</td><td>${r.completion}</td><td>${r.priced ? `$${r.cost.toFixed(4)}` : '-'}</td></tr>`,
    )
    .join('');
  return (
    `<figure class="chart tokens-by-tier"><figcaption>Tokens by tier and purpose</figcaption><table class="calls">` +
    `<tr><th>tier</th><th>purpose</th><th>calls</th><th>prompt</th><th>completion</th><th>cost</th></tr>${body}</table></figure>`
  );
}
