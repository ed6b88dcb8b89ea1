// `sop view`'s web server: a Hono app on @hono/node-server. It answers only requests that carry
// its random token (?t=...), serves only the run folders it was started on (a run is named by
// its folder's name, looked up among them, never joined into a path), reads and never writes,
// and streams what a run appends to its journal as server-sent events.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { serve } from '@hono/node-server';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import { tokenChart, tokenTable } from './chart.js';
import { readCapped, safeRunFile } from './files.js';
import { runMermaid } from './graph.js';
import { histogramsHtml, NETWORK_JS, networkHtml, populationExtras } from './network.js';
import { agentPage, listPage, runPage, VIEW_JS, type RunPageExtras } from './pages.js';
import { hasPopulation, populationHtml } from './population.js';
import { runInfo, type ServedRun } from './runs.js';
import { sweepArms, sweepHtml, sweepReportHtml } from './sweep.js';
import { TranscriptBuilder } from './transcript.js';

export interface ViewServerOptions {
  /** The runs served, looked up again on every request (an output folder gains runs while it is viewed). */
  runs: () => ServedRun[];
  host?: string;
  port?: number;
  /** Default: 24 random bytes, hex. */
  token?: string;
  /** How often a live page's stream looks at the journal (ms). */
  pollMs?: number;
  /** A stream with nothing new for this long ends; the page reconnects where it was (ms). */
  idleMs?: number;
  /** A sweep's output folder (results.jsonl, runs/): the list page leads with its metric bands and targets. */
  sweep?: string;
}

export interface ViewServer {
  /** Base URL with the token: http://HOST:PORT/?t=TOKEN */
  url: string;
  /** URL of a run's page, with the token. */
  runUrl(id: string): string;
  token: string;
  close(): Promise<void>;
}

let mermaidBundle: Buffer | undefined;
function mermaidJs(): Buffer {
  mermaidBundle ??= readFileSync(createRequire(import.meta.url).resolve('@mermaid-js/tiny/dist/mermaid.tiny.js'));
  return mermaidBundle;
}

function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function viewApp(runs: () => ServedRun[], token: string, pollMs = 200, idleMs = 5000, sweep?: string): Hono {
  const app = new Hono();
  const byId = (id: string) => runs().find((r) => r.id === id);
  app.use('*', async (c, next) => {
    if (!sameToken(c.req.query('t'), token)) return c.text('forbidden: this viewer needs the token of its URL\n', 403);
    await next();
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Cache-Control', 'no-store');
  });
  app.get('/', (c) => {
    const infos = runs().map(runInfo);
    if (sweep === undefined) return c.html(listPage(infos, token));
    const arms = sweepArms(sweep);
    const top = sweepHtml(infos.map((i) => ({ arm: arms.get(i.id) ?? '', events: i.events }))) + sweepReportHtml(sweep);
    return c.html(listPage(infos, token, top));
  });
  app.get('/static/mermaid.min.js', (c) => {
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    return c.body(new Uint8Array(mermaidJs()));
  });
  app.get('/static/view.js', (c) => {
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    return c.body(VIEW_JS);
  });
  app.get('/static/network.js', (c) => {
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    return c.body(NETWORK_JS);
  });
  app.get('/run/:id', async (c) => {
    const run = byId(c.req.param('id'));
    if (!run) return c.text('no such run\n', 404);
    const info = runInfo(run);
    const extras: RunPageExtras = {};
    if (hasPopulation(info.events)) {
      const got = await populationExtras(info.events);
      extras.network = got.network ? networkHtml(got.network, token) : undefined;
      extras.histograms = histogramsHtml(got.agents, got.network);
      extras.notes = got.notes;
    }
    return c.html(runPage(run, info, token, c.req.query('as'), extras)); // ?as=AGENT: that agent's view
  });
  app.get('/run/:id/agents/:agent', (c) => {
    const run = byId(c.req.param('id'));
    if (!run) return c.text('no such run\n', 404);
    return c.html(agentPage(runInfo(run), token, c.req.param('agent'))); // a population agent's timeline
  });
  app.get('/run/:id/agent', (c) => {
    // the run page's form: ?id=AGENT
    const run = byId(c.req.param('id'));
    const agent = c.req.query('id');
    if (!run || !agent) return c.text('no such run or agent\n', 404);
    return c.redirect(`/run/${encodeURIComponent(run.id)}/agents/${encodeURIComponent(agent)}?t=${token}`);
  });
  app.get('/run/:id/file', (c) => {
    const run = byId(c.req.param('id'));
    const file = run ? safeRunFile(run.dir, c.req.query('path') ?? '') : undefined;
    const f = file ? readCapped(file) : undefined;
    if (!f) return c.text('not a memory or workspace file of this run\n', 404);
    if (f.binary) return c.text('binary file, not shown\n', 415);
    c.header('Content-Type', 'text/plain; charset=utf-8');
    return c.body(f.text);
  });
  app.get('/run/:id/events', (c) => {
    const run = byId(c.req.param('id'));
    if (!run) return c.text('no such run\n', 404);
    // Where the page is: "RESUMES:EVENTS", the id of the last event it was sent (a reconnecting
    // page), else the page's own (?at=): how often the run had been resumed and how many events it showed.
    const [r0, f0] = (c.req.header('Last-Event-ID') ?? c.req.query('at') ?? '').split(':');
    const from = Math.max(0, Number(f0) || 0);
    const pageResumes = Number(r0) || 0;
    return streamSSE(c, async (stream) => {
      let closed = false;
      stream.onAbort(() => {
        closed = true;
      });
      const builder = new TranscriptBuilder(c.req.query('as'));
      let fed = 0;
      let lastSize = -1;
      let status: string | undefined;
      const send = (event: string, data: unknown, id?: string) =>
        stream.writeSSE({ event, data: JSON.stringify(data), ...(id !== undefined ? { id } : {}) });
      // Reconnect soon after an idle stream ends: a stream left open forever keeps a page loading
      // (a headless --dump-dom never ends), and ending it costs a page nothing it has not got.
      await stream.writeSSE({ event: 'hello', data: '{}', retry: 500 });
      let changed = Date.now();
      while (!closed) {
        let size = -1;
        try {
          size = statSync(join(run.dir, JOURNAL_FILE)).size;
        } catch {
          // a journal that went away: nothing new
        }
        if (size !== lastSize) {
          lastSize = size;
          changed = Date.now();
          const info = runInfo(run);
          const resumes = info.resumes;
          if (resumes !== pageResumes || info.events.length < from) {
            await send('reload', {}); // resumed since: the history the page shows was rewritten
            break;
          }
          let graph = false;
          let calls = false;
          let steps = false;
          for (; fed < info.events.length; fed++) {
            const e = info.events[fed]!;
            const pieces = builder.add(e);
            if (fed < from) continue;
            if (e.type === 'state_entered') graph = true;
            if (e.type === 'llm_call') calls = true;
            if (e.type === 'population_step') steps = true;
            for (const p of pieces) await send(p.kind, p, `${resumes}:${fed + 1}`);
          }
          if (info.status !== status) {
            status = info.status; // e.g. a running run whose process died is killed now
            await send('status', { status });
          }
          if (graph) await send('graph', { mermaid: runMermaid(info.events) ?? '' });
          if (calls) {
            const doc = info.events[0]?.type === 'run_started' ? (info.events[0].document as { agents?: object } | undefined) : undefined;
            const agents = doc?.agents ? Object.keys(doc.agents) : [];
            const html = hasPopulation(info.events)
              ? tokenTable(info.events)
              : tokenChart(info.events, 'agent', agents) + tokenChart(info.events, 'purpose', agents);
            await send('charts', { html });
          }
          if (steps) await send('population', { html: populationHtml(run.id, token, info.events) });
          if (info.events.at(-1)?.type === 'run_finished') {
            // Nothing more will come (a resume would add a `resumed` line: the page reloads then).
            await send('end', {});
            break;
          }
          if (info.status === 'killed' || info.status === 'damaged') {
            // No process writes it: look again every 2 s (a resume takes it up) without keeping a request open.
            await stream.writeSSE({ event: 'idle', data: '{}', retry: 2000 });
            break;
          }
        }
        if (Date.now() - changed > idleMs) break;
        await stream.sleep(pollMs);
      }
    });
  });
  return app;
}

export function startViewServer(o: ViewServerOptions): Promise<ViewServer> {
  const token = o.token ?? randomBytes(24).toString('hex');
  const host = o.host ?? '127.0.0.1';
  const app = viewApp(o.runs, token, o.pollMs, o.idleMs, o.sweep);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: o.port ?? 0, hostname: host }, (info: AddressInfo) => {
      const h = host.includes(':') ? `[${host}]` : host;
      const base = `http://${h}:${info.port}`;
      resolve({
        url: `${base}/?t=${token}`,
        runUrl: (id) => `${base}/run/${encodeURIComponent(id)}?t=${token}`,
        token,
        close: () =>
          new Promise<void>((done) => {
            const s = server as unknown as { closeAllConnections?: () => void; close: (cb: () => void) => void };
            s.closeAllConnections?.();
            s.close(() => done());
          }),
      });
    });
    server.once('error', reject);
  });
}
