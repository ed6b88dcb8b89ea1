// `sop view` of a run with population states: a chart of each metric over the steps, the steps in
// the transcript (their hundreds of calls kept out of the next message's inspector), an agent's
// timeline page (what it was shown, what it did, what that did), the live stream's population
// charts, and markup in population events shown as text. The run is the social-spread example
// with the mock LLM; the viewer's app answers in process.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSop, runSop } from '../src/index.js';
import { readJournal } from '../src/features/journal/reader.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { findRuns } from '../src/apps/view/runs.js';
import { viewApp } from '../src/apps/view/server.js';
import { text } from './helpers/html-text.js';

const tmp = mkdtempSync(join(tmpdir(), 'sop-view-population-'));
const out = join(tmp, 'runs');
const RUN = 'spread';
const TOKEN = 'test-token';
const app = viewApp(() => findRuns(out, false), TOKEN);
type Step = Extract<RunEvent, { type: 'population_step' }>;
let steps: Step[];

const get = async (path: string) => {
  const r = await app.request(`${path}${path.includes('?') ? '&' : '?'}t=${TOKEN}`);
  return { status: r.status, html: await r.text(), location: r.headers.get('location') };
};

beforeAll(async () => {
  const h = runSop(loadSop('examples/social-spread/social-spread.sop.json'), { llm: 'mock', out, runId: RUN });
  for await (const e of h) void e;
  expect((await h.result).status).toBe('finished');
  steps = readJournal(join(out, RUN)).events.filter((e): e is Step => e.type === 'population_step');
  expect(steps).toHaveLength(6);
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('sop view of a population run', () => {
  it('charts each metric over the steps, and shows the steps in the transcript', async () => {
    const { status, html } = await get(`/run/${RUN}`);
    expect(status).toBe(200);
    expect(html).toContain('<h2>Population</h2><div id="population">');
    const charted = [...html.matchAll(/<figure class="chart metric" data-metric="([^"]*)">/g)].map((m) => m[1]);
    expect(charted.sort()).toEqual(Object.keys(steps.at(-1)!.metrics).sort());
    // one point per step on each line: 6 steps, 6 points
    const size = html.slice(html.indexOf('data-metric="cascade.news.size"'));
    const points = /<polyline[^>]* points="([^"]*)"/.exec(size)![1]!.split(' ');
    expect(points).toHaveLength(6);
    expect(html.match(/<div class="pop-step"/g)).toHaveLength(6);
    // the 600 decision calls of the steps are not in the debrief message's inspector
    expect((html.match(/class="prompt"/g) ?? []).length).toBeLessThan(5);
    expect(html.length).toBeLessThan(400_000);
    expect(html).toMatch(/Most active agents: <a href="\/run\/spread\/agents\/a\d+\?t=test-token">/);
  });

  it("shows an agent's timeline: each step it acted in, what it was shown, what it did and what that did", async () => {
    const page = (await get(`/run/${RUN}`)).html;
    const agent = /Most active agents: <a href="\/run\/spread\/agents\/(a\d+)\?/.exec(page)![1]!;
    const { status, html } = await get(`/run/${RUN}/agents/${agent}`);
    expect(status).toBe(200);
    const mine = steps.filter((s) => s.actions.some((a) => a.agent === agent));
    expect(mine.length).toBeGreaterThan(1);
    expect(html.match(/<section class="agent-step">/g)).toHaveLength(mine.length);
    const shown = text(html);
    for (const s of mine) {
      expect(shown).toContain(`visit ${s.visit} · step ${s.step} · ${s.clock}`);
      for (const a of s.actions.filter((x) => x.agent === agent)) expect(shown).toContain(a.output);
    }
    if (mine.some((s) => s.actions.some((a) => a.agent === agent && a.tier === 'per_agent'))) expect(shown).toContain('What you see now');
    // the form on the run page asks for any agent by id
    const form = await get(`/run/${RUN}/agent?id=${encodeURIComponent('a/1 x')}`);
    expect(form.status).toBe(302);
    expect(form.location).toBe(`/run/${RUN}/agents/a%2F1%20x?t=${TOKEN}`);
    expect(text((await get(`/run/${RUN}/agents/nobody`)).html)).toContain('No action or survey answer of nobody in this run.');
    expect((await app.request(`/run/${RUN}/agents/${agent}`)).status).toBe(403);
    expect((await get(`/run/elsewhere/agents/${agent}`)).status).toBe(404);
  });

  it('sends the population charts over the live stream', async () => {
    const r = await app.request(`/run/${RUN}/events?t=${TOKEN}&at=0:0`);
    const body = await r.text();
    expect(body).toContain('event: population');
    expect(body).toContain('data-metric=\\"cascade.news.size\\"');
  });

  it('shows markup in population events as text, never as markup', async () => {
    const bad = '<img src=x onerror=alert(1)>';
    const lines = readFileSync(join(out, RUN, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean);
    const edited = lines.map((l) => {
      const e = JSON.parse(l) as Record<string, unknown>;
      if (e.type !== 'population_step') return l;
      const actions = e.actions as Array<Record<string, unknown>>;
      actions[0] = { ...actions[0], agent: bad, name: '<script>alert(2)</script>', output: '"><svg onload=alert(3)>', args: { x: bad } };
      e.metrics = { ...(e.metrics as object), [`<script>alert(4)</script>`]: 1 };
      e.clock = '<b>bold</b>';
      return JSON.stringify(e);
    });
    edited.push(JSON.stringify({ type: 'population_step', state: 'feed', actions: 7 }), JSON.stringify({ type: 'population_step' }));
    mkdirSync(join(out, 'markup'));
    writeFileSync(join(out, 'markup', 'journal.jsonl'), edited.join('\n') + '\n');
    const run = await get('/run/markup');
    const agent = await get(`/run/markup/agents/${encodeURIComponent(bad)}`);
    for (const { status, html } of [run, agent]) {
      expect(status).toBe(200);
      for (const raw of ['<img', '<script>alert', '<svg onload', '<b>bold']) expect(html).not.toContain(raw);
    }
    expect(text(run.html)).toContain('<script>alert(4)</script>');
    expect(text(run.html)).toContain(`Most active agents: ${bad}`);
    const timeline = text(agent.html);
    expect(timeline).toContain('<script>alert(2)</script>');
    expect(timeline).toContain('"><svg onload=alert(3)>');
    expect(timeline).toContain('step 1 · <b>bold</b>');
  });
});
