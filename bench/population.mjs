// npm run bench -- population: population states at scale (docs/population.md).
//   1. One step of 10,000 active agents against the local OpenAI-compatible server (its own
//      process) answering each call after 1 s, at --concurrency 2,000: the ideal is 5 s (five
//      waves of 2,000 calls); wall time and the engine's CPU per action.
//   1b. One step of 2,000 agents at --concurrency 2,000 against a server that answers 429 above
//      300 requests in flight (1 s per call): wall time and the limit it settled at.
//   2. 100,000 generated agents at 10% activation with the mock provider: seconds per step and
//      peak RSS.
// Both run with a run folder (the journal on), as `sop run` does.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { populationSop } from './lib/population-sop.mjs';
import { cpuMs, startServer } from './lib/test-server.mjs';

export const order = 70;

async function timedRun(sopObject, options) {
  const { runSop, loadSop } = await import('sop');
  const dir = mkdtempSync(join(tmpdir(), 'sop-bench-pop-'));
  try {
    const file = join(dir, 'pop.sop.json');
    writeFileSync(file, JSON.stringify(sopObject));
    const sop = loadSop(file);
    const steps = [];
    let last = performance.now();
    const started = performance.now();
    const cpu0 = cpuMs();
    const handle = runSop(sop, { ...options, out: join(dir, 'runs'), quiet: true });
    let actions = 0;
    const limits = [];
    for await (const e of handle) {
      if (e.type === 'concurrency') limits.push(e);
      if (e.type === 'population_step') {
        const now = performance.now();
        steps.push({ ms: now - last, active: e.active });
        actions += e.active;
        last = now;
      }
      if (e.type === 'population_started') last = performance.now();
    }
    const result = await handle.result;
    if (result.status !== 'finished') throw new Error(`the bench run ended ${result.status}: ${result.error?.message ?? ''}`);
    return { wallMs: performance.now() - started, cpuMs: cpuMs() - cpu0, steps, actions, calls: result.usage.calls, limits };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run() {
  const rows = [];
  const results = {};
  const notes = [];
  // 1. 10,000 agents, 1 s per call, 2,000 at once
  process.env.OPENAI_API_KEY ??= 'bench-key';
  const server = await startServer(1000, 'action');
  try {
    const r = await timedRun(populationSop(10_000, 1, 1), { llm: 'openai', baseUrl: server.url, concurrency: 2000 });
    const stepS = r.steps[0].ms / 1000;
    const ideal = 5;
    const cpuPerAction = r.cpuMs / r.actions;
    results.step_10k_wall_s = Math.round(stepS * 100) / 100;
    results.step_10k_ideal_s = ideal;
    results.step_10k_ratio = Math.round((stepS / ideal) * 100) / 100;
    results.cpu_ms_per_action = Math.round(cpuPerAction * 1000) / 1000;
    results.step_10k_calls = r.calls;
    rows.push({
      figure: 'one step, 10,000 agents, 1 s/call, concurrency 2,000: wall s',
      value: results.step_10k_wall_s,
      target: `<= ${2 * ideal} (2x ideal ${ideal} s)`,
      status: stepS <= 2 * ideal ? 'pass' : 'MISS',
    });
    rows.push({
      figure: '  ratio to ideal',
      value: results.step_10k_ratio,
      target: '<= 2',
      status: results.step_10k_ratio <= 2 ? 'pass' : 'MISS',
    });
    rows.push({
      figure: '  CPU per action, ms (whole process: engine, journal, HTTP)',
      value: results.cpu_ms_per_action,
      target: '<= 0.5',
      status: cpuPerAction <= 0.5 ? 'pass' : 'MISS',
    });
  } finally {
    await server.stop();
  }
  // 1b. 2,000 agents against a server that refuses above 300 calls in flight
  const limited = await startServer(1000, 'action-429');
  try {
    const r = await timedRun(populationSop(2000, 1, 1), { llm: 'openai', baseUrl: limited.url, concurrency: 2000 });
    const last = r.limits.at(-1);
    results.rate_limited_2000 = {
      wall_s: Math.round(r.steps[0].ms / 10) / 100,
      actions: r.actions,
      settled_limit: last?.limit ?? null,
      halvings_on_429: r.limits.filter((c) => c.reason === '429').length,
      limit_changes: r.limits.length,
    };
    rows.push({
      figure: 'one step, 2,000 agents, server 429s above 300 in flight: wall s',
      value: results.rate_limited_2000.wall_s,
      target: 'finishes',
      status: r.actions === 2000 ? 'pass' : 'MISS',
    });
    rows.push({
      figure: '  calls at once it settled at (journal `concurrency`)',
      value: last?.limit ?? '-',
      target: '< 300',
      status: last && last.limit < 300 ? 'pass' : 'MISS',
    });
  } finally {
    await limited.stop();
  }
  // 2. 100,000 agents, 10% active, mock
  const before = process.resourceUsage().maxRSS;
  const big = await timedRun(populationSop(100_000, 0.1, 3), { llm: 'mock', concurrency: 64 });
  const perStep = big.steps.map((s) => s.ms / 1000);
  const meanStep = perStep.reduce((a, b) => a + b, 0) / perStep.length;
  const rssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  results.agents_100k_seconds_per_step = Math.round(meanStep * 100) / 100;
  results.agents_100k_active_per_step = Math.round(big.actions / big.steps.length);
  results.agents_100k_peak_rss_mb = rssMb;
  results.agents_100k_peak_rss_mb_before = Math.round(before / 1024);
  rows.push({
    figure: '100,000 agents, 10% active, mock: seconds per step',
    value: results.agents_100k_seconds_per_step,
    target: '< 10',
    status: meanStep < 10 ? 'pass' : 'MISS',
  });
  rows.push({ figure: '  peak RSS, MB (whole process)', value: rssMb, target: '< 2048', status: rssMb < 2048 ? 'pass' : 'MISS' });
  notes.push('The journal is on (a run folder), as with sop run; the server runs in its own process.');
  return { title: 'Population states at scale', rows, results: { population: results }, notes };
}
