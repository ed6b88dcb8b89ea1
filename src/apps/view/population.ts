// What the viewer shows of a run's population states: each metric over the steps (a small chart
// per metric, a line per visit), links to the busiest agents, and an agent's page: step by step,
// what it was shown (its own decision prompt, when it had one), what it did and what that did.
// Everything is read from the journal's population_step events and escaped here.
import type { RunEvent } from '../../core/runtime/events.js';
import { agentTimeline, busiestAgents, metricSeries, type MetricSeries } from '../../features/population/results.js';
import { agentColour, esc } from './html.js';

/** Names of the population states of the run's SOP document. */
function populationStates(events: readonly RunEvent[]): string[] {
  const doc = events[0]?.type === 'run_started' ? (events[0].document as { states?: Record<string, unknown> } | undefined) : undefined;
  const states = doc?.states && typeof doc.states === 'object' ? doc.states : {};
  return Object.entries(states)
    .filter(([, s]) => typeof s === 'object' && s !== null && (s as { population?: unknown }).population !== undefined)
    .map(([name]) => name);
}

/** Whether the run page has a population section: its SOP has population states, or its journal has steps. */
export function hasPopulation(events: readonly RunEvent[]): boolean {
  return populationStates(events).length > 0 || events.some((e) => e.type === 'population_step');
}

const agentHref = (run: string, agent: string, token: string) =>
  `/run/${encodeURIComponent(run)}/agents/${encodeURIComponent(agent)}?t=${encodeURIComponent(token)}`;

/** The population section's content: metric charts per state, the busiest agents, a form to open any agent. */
export function populationHtml(run: string, token: string, events: readonly RunEvent[]): string {
  const series = metricSeries(events);
  const states = [...new Set([...populationStates(events), ...series.map((s) => s.state)])];
  const charts = states
    .map((state) => {
      const mine = series.filter((s) => s.state === state);
      const body = mine.length
        ? `<div class="metric-charts metric-grid">${mine.map(metricChart).join('')}</div>`
        : '<p class="muted">no steps yet</p>';
      return `<h3>${esc(state)} <span class="muted">metrics over the steps</span></h3>${body}`;
    })
    .join('');
  const busiest = busiestAgents(events, 12);
  const links = busiest.length
    ? `<p>Most active agents: ${busiest.map((b) => `<a href="${agentHref(run, b.agent, token)}">${esc(b.agent)}</a> <span class="muted">(${b.actions})</span>`).join(' · ')}</p>`
    : '';
  const form =
    `<form class="agent-form" method="get" action="/run/${encodeURIComponent(run)}/agent">` +
    `<input type="hidden" name="t" value="${esc(token)}"><label>Agent <input name="id" size="12" required></label> <button>timeline</button></form>`;
  return `${charts}${links}${form}`;
}

/** One metric over the steps: a line per visit (a null value breaks it). */
export function metricChart(s: MetricSeries): string {
  const W = 260;
  const H = 120;
  const L = 44;
  const B = 22;
  let maxStep = 1;
  let lo = Infinity;
  let hi = -Infinity;
  for (const points of s.visits.values())
    for (const p of points) {
      maxStep = Math.max(maxStep, p.step);
      if (p.value !== null) {
        lo = Math.min(lo, p.value);
        hi = Math.max(hi, p.value);
      }
    }
  if (lo === Infinity) {
    lo = 0;
    hi = 1;
  }
  if (lo > 0) lo = 0;
  if (hi === lo) hi = lo + 1;
  const x = (step: number) => L + (maxStep === 1 ? 0 : ((step - 1) / (maxStep - 1)) * (W - L - 10));
  const y = (v: number) => H - B - ((v - lo) / (hi - lo)) * (H - B - 10);
  const visits = [...s.visits.keys()];
  const lines = visits.map((visit) => {
    const colour = agentColour(
      `visit ${visit}`,
      visits.map((v) => `visit ${v}`),
    );
    const segments: string[][] = [[]];
    for (const p of s.visits.get(visit)!) {
      if (p.value === null) segments.push([]);
      else segments[segments.length - 1]!.push(`${x(p.step).toFixed(1)},${y(p.value).toFixed(1)}`);
    }
    const title = `<title>${esc(s.name)}, visit ${visit}</title>`;
    return segments
      .filter((seg) => seg.length > 0)
      .map((seg) =>
        seg.length === 1
          ? `<circle cx="${seg[0]!.split(',')[0]}" cy="${seg[0]!.split(',')[1]}" r="2.5" fill="${colour}">${title}</circle>`
          : `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${seg.join(' ')}">${title}</polyline>`,
      )
      .join('');
  });
  const last = [...s.visits.values()].at(-1)?.at(-1)?.value;
  const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toPrecision(3));
  const axes =
    `<line x1="${L}" y1="${H - B}" x2="${W - 10}" y2="${H - B}" stroke="#888"/><line x1="${L}" y1="10" x2="${L}" y2="${H - B}" stroke="#888"/>` +
    `<text x="${L - 4}" y="14" text-anchor="end">${fmt(hi)}</text><text x="${L - 4}" y="${H - B}" text-anchor="end">${fmt(lo)}</text>` +
    `<text x="${L}" y="${H - 6}">step 1</text><text x="${W - 10}" y="${H - 6}" text-anchor="end">step ${maxStep}</text>`;
  return (
    `<figure class="chart metric" data-metric="${esc(s.name)}"><figcaption>${esc(s.name)}` +
    `${last !== undefined && last !== null ? ` <span class="muted">${fmt(last)}</span>` : ''}` +
    `${visits.length > 1 ? ` <span class="muted">(${visits.length} visits)</span>` : ''}</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-size="10" font-family="sans-serif">` +
    `${axes}${lines.join('')}</svg></figure>`
  );
}

/** The body of an agent's page: its steps in order, each with what it was shown, what it did and what came of it. */
export function agentTimelineHtml(events: readonly RunEvent[], agent: string): string {
  const steps = agentTimeline(events, agent);
  if (steps.length === 0) return `<p class="muted">No action or survey answer of ${esc(agent)} in this run.</p>`;
  return steps
    .map((s) => {
      const shown =
        s.shown !== undefined
          ? `<details class="shown"><summary>what it was shown</summary><pre>${esc(s.shown)}</pre></details>`
          : s.actions.some((a) => a.tier === 'archetype')
            ? '<p class="muted">decided with its archetype (one call for the group: see the prompt of its lead in the run page)</p>'
            : '';
      const actions = s.actions
        .map(
          (a) =>
            `<tr class="${a.ok ? 'ok' : 'refused'}"><td>${a.seq}</td><td><b>${esc(a.name)}</b></td><td><code>${esc(a.args)}</code></td>` +
            `<td>${a.ok ? 'ok' : 'refused'}</td><td>${esc(a.output)}</td><td>${esc(a.tier)}</td></tr>`,
        )
        .join('');
      const surveys = s.surveys
        .map((q) => `<li>survey <b>${esc(q.survey)}</b>: ${esc(q.question)}<br>answer: ${esc(q.answer)}</li>`)
        .join('');
      return (
        `<section class="agent-step"><h3>${esc(s.state)} <span class="muted">visit ${s.visit} · step ${s.step} · ${esc(s.clock)} · turn ${s.turn}</span></h3>` +
        shown +
        (actions
          ? `<table class="calls"><tr><th>order</th><th>action</th><th>arguments</th><th></th><th>what it did</th><th>tier</th></tr>${actions}</table>`
          : '') +
        (surveys ? `<ul class="surveys">${surveys}</ul>` : '') +
        `</section>`
      );
    })
    .join('');
}
