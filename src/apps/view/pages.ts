// The viewer's two pages: the run list and a run's page. Everything a run shows is rendered
// here on the server (a page without scripts still holds the whole transcript); the page's
// script only draws the Mermaid graph and appends what the live stream sends.
import { tokenChart, tokenTable } from './chart.js';
import { listRunFiles, readCapped, safeRunFile } from './files.js';
import { runMermaid } from './graph.js';
import { esc, formatTime } from './html.js';
import { agentTimelineHtml, hasPopulation, populationHtml } from './population.js';
import type { RunInfo, ServedRun } from './runs.js';
import { TranscriptBuilder } from './transcript.js';
import { count } from '../../shared/util/plural.js';

const STYLE = `
body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header.top{background:#263238;color:#fff;padding:10px 18px}header.top a{color:#cfe}
main{padding:12px 18px;max-width:1400px}
.muted{color:#777;font-weight:normal}
table.runs,table.calls{border-collapse:collapse}table.runs td,table.runs th,table.calls td,table.calls th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left}
.status{font-weight:bold}.status-finished{color:#2a7d2a}.status-failed,.status-killed,.status-damaged{color:#b22}.status-interrupted,.status-max_turns,.status-budget{color:#b70}.status-running{color:#06c}
.layout{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:18px}
.visit{border-left:3px solid #ccc;margin:10px 0;padding-left:10px}.visit-head{margin:6px 0;font-size:15px}
.msg{background:#fff;border:1px solid #e3e3e3;border-left:5px solid var(--agent);border-radius:4px;margin:8px 0;padding:6px 10px}
.msg .agent{color:var(--agent);font-weight:bold}.content{white-space:pre-wrap;margin:4px 0}
.tag{display:block;background:#f3f0ff;border:1px solid #d8d0f0;border-radius:4px;padding:4px 6px;margin:4px 0}
.tag-label{display:inline-block;background:#6a5acd;color:#fff;border-radius:3px;font-size:11px;padding:0 5px;margin-right:6px}
.inspector summary{cursor:pointer;color:#555;font-size:12px}.inspector h4{margin:8px 0 2px;font-size:13px}.inspector pre{white-space:pre-wrap;background:#f6f6f6;padding:4px;max-height:300px;overflow:auto}
.calls td,.calls th{font-size:12px}
.chart svg{max-width:100%;height:auto}figcaption{font-size:13px;font-weight:bold}
.file pre{white-space:pre-wrap;background:#fff;border:1px solid #ddd;padding:6px;max-height:320px;overflow:auto}
#graph{background:#fff;border:1px solid #ddd;padding:6px;overflow:auto}#graph svg{max-width:100% !important;max-height:75vh;height:auto}
.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px}.legend .swatch{display:inline-block;width:14px;height:4px;vertical-align:middle;margin-right:5px;border-radius:2px}
.origin{background:#fff3cd;color:#6b4e00;border-radius:3px;padding:0 5px;font-size:12px;margin-left:4px}
.hidden-msg{font-size:12px;color:#888;border-left:5px dotted #ccc;margin:4px 0;padding:2px 10px}
.metric-charts{display:flex;flex-wrap:wrap;gap:6px}.metric-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:8px}.metric-grid figure{margin:0;background:#fff;border:1px solid #e3e3e3;padding:4px}.metric-charts figure{margin:0;background:#fff;border:1px solid #e3e3e3;padding:4px}
.agent-step{background:#fff;border:1px solid #e3e3e3;border-radius:4px;margin:8px 0;padding:6px 10px}.agent-step h3{margin:4px 0;font-size:15px}
.pop-step{background:#fff;border:1px solid #e3e3e3;border-left:5px solid #607d8b;border-radius:4px;margin:6px 0;padding:4px 10px;font-size:13px}
.shown pre{white-space:pre-wrap;background:#f6f6f6;padding:4px;max-height:300px;overflow:auto}tr.refused td{color:#b22}
`;

function page(title: string, body: string, attrs = ''): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
    `<title>${esc(title)}</title><style>${STYLE}</style></head><body${attrs}>${body}</body></html>`
  );
}

function statusHtml(status: string): string {
  return `<span class="status status-${esc(status)}" id="status">${esc(status)}</span>`;
}

/** The cost as `sop runs` shows it: "$0.0123", "unknown" (a model without a price), "-" (not priced: the mock). */
function costText(info: Pick<RunInfo, 'cost' | 'unpriced'>): string {
  if (info.cost !== undefined) return `$${info.cost.toFixed(4)}`;
  return info.unpriced ? 'unknown' : '-';
}

/** "resumed 2×", "forked from RUN at turn 3": how the run came to be as it is. */
function origin(info: Pick<RunInfo, 'resumes' | 'forkedFrom'>): string {
  const parts = [
    ...(info.forkedFrom ? [`forked from ${esc(info.forkedFrom.run_id)} at turn ${info.forkedFrom.turn}`] : []),
    ...(info.resumes > 0 ? [`resumed ${info.resumes}×`] : []),
  ];
  return parts.length ? ` <span class="origin">${parts.join(', ')}</span>` : '';
}

/** The run list; `top`: what leads it (a sweep's metric bands). */
export function listPage(runs: RunInfo[], token: string, top = ''): string {
  const rows = runs
    .map(
      (r) =>
        `<tr><td><a href="/run/${encodeURIComponent(r.id)}?t=${token}">${esc(r.id)}</a></td><td>${statusHtml(r.status).replace(' id="status"', '')}${origin(r)}</td>` +
        `<td>${esc(r.sop)}</td><td>${r.turns}</td><td>${r.tokens.prompt + r.tokens.completion} (${r.tokens.calls} calls)</td>` +
        `<td>${costText(r)}</td><td>${esc(formatTime(r.started))}</td></tr>`,
    )
    .join('');
  return page(
    'sop runs',
    `<header class="top"><b>sop view</b> · ${top ? 'sweep' : 'runs'}</header><main>${top}` +
      (top ? '<h2>Runs</h2>' : '') +
      (runs.length
        ? `<table class="runs"><tr><th>run</th><th>status</th><th>SOP</th><th>turns</th><th>tokens</th><th>cost</th><th>started</th></tr>${rows}</table>`
        : '<p>No run folders here.</p>') +
      `</main>`,
  );
}

function filesHtml(run: ServedRun): string {
  const files = listRunFiles(run.dir);
  if (files.length === 0) return '<p class="muted">no memory or workspace files</p>';
  return files
    .map((f) => {
      const path = safeRunFile(run.dir, f.path);
      if (!path) return '';
      const c = readCapped(path);
      if (!c) return '';
      const body = c.binary ? '<p class="muted">binary file, not shown</p>' : `<pre>${esc(c.text)}</pre>`;
      return `<details class="file"><summary>${esc(f.path)} <span class="muted">${c.size} bytes${c.truncated ? ', first 64 KiB shown' : ''}</span></summary>${body}</details>`;
    })
    .join('');
}

/** A run page's population parts that need the agents loaded again (server.ts loads them). */
export interface RunPageExtras {
  /** The network section (network.ts) and the agents' histograms, ready HTML. */
  network?: string;
  histograms?: string;
  notes?: string[];
}

export function runPage(run: ServedRun, info: RunInfo, token: string, viewer?: string, extras: RunPageExtras = {}): string {
  const builder = new TranscriptBuilder(viewer);
  for (const e of info.events) builder.add(e);
  const doc = info.events[0]?.type === 'run_started' ? (info.events[0].document as { agents?: object } | undefined) : undefined;
  const agents = doc?.agents ? Object.keys(doc.agents) : [];
  const mermaid = runMermaid(info.events);
  const head =
    `<header class="top"><a href="/?t=${token}">runs</a> · <b>${esc(info.id)}</b> · SOP ${esc(info.sop)} · ${statusHtml(info.status)}${origin(info)}` +
    ` · ${count(info.turns, 'turn')} · ${info.tokens.prompt} prompt + ${info.tokens.completion} completion tokens in ${info.tokens.calls} calls` +
    ` · cost ${costText(info)} · started ${esc(formatTime(info.started))}${viewAs(info.id, token, agents, viewer)}</header>`;
  const error = info.error ? `<p class="status-failed">${esc(info.error)}</p>` : '';
  // a population run leads with its metrics (a grid), its network and its agents; its tokens are
  // summed by tier and purpose, not drawn per agent
  const population = hasPopulation(info.events);
  const popSection = population
    ? `<h2>Population</h2><div id="population">${populationHtml(info.id, token, info.events)}</div>${extras.network ?? ''}${extras.histograms ?? ''}` +
      (extras.notes?.length ? `<ul class="muted">${extras.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : '')
    : '';
  const tokens = population
    ? tokenTable(info.events)
    : `${tokenChart(info.events, 'agent', agents)}${tokenChart(info.events, 'purpose', agents)}`;
  const body =
    `${head}<main>${error}${popSection}<div class="layout"><div><h2>Transcript</h2><div id="transcript">${builder.html()}</div>` +
    `<p class="muted" id="progress">${esc(builder.progress)}</p></div>` +
    `<div><h2>State graph</h2><div id="graph">${mermaid ? `<pre class="mermaid">${esc(mermaid)}</pre>` : '<p class="muted">no state graph: the journal holds no usable SOP document</p>'}</div>` +
    `<h2>Tokens</h2><div id="charts">${tokens}</div>` +
    `<h2>Memory and workspace files</h2>${filesHtml(run)}</div></div></main>` +
    `<script src="/static/mermaid.min.js?t=${token}"></script><script src="/static/view.js?t=${token}"></script>`;
  return page(
    `${info.id} · sop view`,
    body,
    ` data-run="${esc(encodeURIComponent(info.id))}" data-token="${token}" data-at="${info.resumes}:${info.events.length}"` +
      (viewer !== undefined ? ` data-as="${esc(encodeURIComponent(viewer))}"` : ''),
  );
}

/** An agent of a population state: its steps, what it was shown, what it did and what came of it. */
export function agentPage(info: RunInfo, token: string, agent: string): string {
  const head =
    `<header class="top"><a href="/?t=${token}">runs</a> · <a href="/run/${encodeURIComponent(info.id)}?t=${token}">${esc(info.id)}</a>` +
    ` · agent <b>${esc(agent)}</b> · ${statusHtml(info.status)}</header>`;
  return page(`${agent} · ${info.id} · sop view`, `${head}<main>${agentTimelineHtml(info.events, agent)}</main>`);
}

/** Audiences: links to the transcript as each agent sees it (?as=NAME), and back to every message. */
function viewAs(id: string, token: string, agents: string[], viewer: string | undefined): string {
  if (agents.length === 0) return '';
  const link = (name: string | undefined) =>
    name === viewer
      ? `<b>${esc(name ?? 'everything')}</b>`
      : `<a href="/run/${encodeURIComponent(id)}?t=${token}${name !== undefined ? `&as=${encodeURIComponent(name)}` : ''}">${esc(name ?? 'everything')}</a>`;
  return `<br>view as: ${[link(undefined), ...agents.map(link)].join(' · ')}`;
}

/** The run page's script: draw the graph, then append what the live stream sends. */
export const VIEW_JS = `
(function () {
  var b = document.body, run = b.dataset.run, token = b.dataset.token;
  function draw() {
    if (!window.mermaid) return;
    try { window.mermaid.run({ querySelector: '#graph .mermaid' }); } catch (e) { console.error(e); }
  }
  if (window.mermaid) { window.mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', state: { useMaxWidth: true }, flowchart: { useMaxWidth: true } }); draw(); }
  var es = new EventSource('/run/' + run + '/events?t=' + token + '&at=' + b.dataset.at + (b.dataset.as ? '&as=' + b.dataset.as : ''));
  var box = document.getElementById('transcript');
  function lastVisit() { var v = box.querySelectorAll('.visit .msgs'); return v[v.length - 1]; }
  es.addEventListener('visit', function (e) {
    var none = document.getElementById('no-messages'); if (none) none.remove();
    box.insertAdjacentHTML('beforeend', JSON.parse(e.data).html);
  });
  var progress = document.getElementById('progress');
  es.addEventListener('progress', function (e) { progress.textContent = JSON.parse(e.data).text; });
  es.addEventListener('message', function (e) {
    progress.textContent = '';
    var none = document.getElementById('no-messages'); if (none) none.remove();
    var v = lastVisit(); if (!v) return;
    v.insertAdjacentHTML('beforeend', JSON.parse(e.data).html);
    v.lastElementChild.scrollIntoView({ block: 'nearest' });
  });
  es.addEventListener('status', function (e) {
    progress.textContent = '';
    var s = document.getElementById('status'); var st = JSON.parse(e.data).status;
    s.textContent = st; s.className = 'status status-' + st;
  });
  es.addEventListener('graph', function (e) {
    var g = document.getElementById('graph'); var pre = document.createElement('pre');
    pre.className = 'mermaid'; pre.textContent = JSON.parse(e.data).mermaid; g.replaceChildren(pre); draw();
  });
  es.addEventListener('charts', function (e) { document.getElementById('charts').innerHTML = JSON.parse(e.data).html; });
  es.addEventListener('population', function (e) { var p = document.getElementById('population'); if (p) p.innerHTML = JSON.parse(e.data).html; });
  es.addEventListener('end', function () { es.close(); });
  es.addEventListener('reload', function () { es.close(); location.reload(); });
})();
`;
