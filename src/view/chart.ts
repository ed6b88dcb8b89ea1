// A small inline SVG chart of the tokens of a run over its turns (cumulative, prompt plus
// completion), one line per series: per agent, or per call purpose.
import type { RunEvent } from '../runtime/events.js';
import { agentColour, esc } from './html.js';

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
  const lines = names.map((name, i) => {
    const colour = by === 'agent' ? agentColour(name, agents) : agentColour(name, ['agent', 'judge', 'speaker', 'summary', 'tool']);
    const pts = series
      .get(name)!
      .map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`)
      .join(' ');
    return (
      `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${pts}"><title>${esc(name)}</title></polyline>` +
      `<rect x="${W + 8}" y="${12 + i * 18}" width="10" height="10" fill="${colour}"/>` +
      `<text x="${W + 22}" y="${21 + i * 18}">${esc(name)} ${series.get(name)!.at(-1)![1]}</text>`
    );
  });
  const axes =
    `<line x1="${L}" y1="${H - B}" x2="${W - 12}" y2="${H - B}" stroke="#888"/><line x1="${L}" y1="12" x2="${L}" y2="${H - B}" stroke="#888"/>` +
    `<text x="${L - 4}" y="16" text-anchor="end">${maxTokens}</text><text x="${L - 4}" y="${H - B}" text-anchor="end">0</text>` +
    `<text x="${L}" y="${H - 8}">turn 0</text><text x="${W - 12}" y="${H - 8}" text-anchor="end">turn ${maxTurn}</text>`;
  return (
    `<figure class="chart"><figcaption>${title} (cumulative, prompt + completion)</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W + 200}" height="${H}" viewBox="0 0 ${W + 200} ${H}" font-size="11" font-family="sans-serif">` +
    `${axes}${lines.join('')}</svg></figure>`
  );
}
