// Concurrency: 50 simulations of the round-robin fixture run at once in this process, sharing one
// `openai` provider that talks to the OpenAI-compatible test server (test/helpers/openai-server.ts,
// in a child process: bench/workers/openai-server.mjs) answering each request after 50 ms.
// Ideal wall time = the longest chain of sequential LLM calls x 50 ms; with a limit L on
// concurrent LLM calls (src/core/llm/limit.ts) it is ceil(total calls / L) x 50 ms.
// `--max-concurrency N` (or BENCH_MAX_CONCURRENCY) sets L for the limited run (default 10).
import { join } from 'node:path';
import { FIXTURES, loadEngine, loadLlm } from './lib/engine.mjs';
import { fmtMs, round, row } from './lib/stats.mjs';
import { cpuMs, startServer } from './lib/test-server.mjs';

export const order = 50;
const SIMS = 50;
const TURNS = 20;
const LATENCY_MS = 50;
const TARGET = 1.3;

function maxConcurrencyOption() {
  const i = process.argv.indexOf('--max-concurrency');
  const raw = i >= 0 ? process.argv[i + 1] : process.env.BENCH_MAX_CONCURRENCY;
  if (raw === undefined) return 10;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--max-concurrency must be a whole number of at least 1 (got "${raw}")`);
  return n;
}

/** The mock LLM answering after LATENCY_MS, in this process: what the engine alone can do. */
class SleepyMock {
  constructor(mock) {
    this.mock = mock;
    this.id = 'mock+latency';
  }
  async chat(request, options) {
    await new Promise((r) => setTimeout(r, LATENCY_MS));
    return this.mock.chat(request, options);
  }
}

async function runAll(engine, llm, sop, file, sims = SIMS, stream = true) {
  const { Run } = engine;
  const started = performance.now();
  const cpu = cpuMs();
  const results = await Promise.all(
    Array.from({ length: sims }, (_, i) =>
      new Run({
        sop,
        file,
        llm,
        maxTurns: TURNS,
        runId: `bench-${i}`,
        seed: i + 1,
        stream,
      }).run(),
    ),
  );
  const wallMs = performance.now() - started;
  const cpuUsed = cpuMs() - cpu;
  for (const r of results) {
    if (r.turns !== TURNS) throw new Error(`a simulation stopped after ${r.turns} turns (${r.status}: ${r.error?.message ?? ''})`);
  }
  const calls = results.map((r) => r.usage.calls);
  return { wallMs, cpuMs: cpuUsed, longestChain: Math.max(...calls), totalCalls: calls.reduce((a, b) => a + b, 0) };
}

export async function run() {
  const limit = maxConcurrencyOption();
  const engine = await loadEngine();
  const { openaiProvider, limitConcurrency } = await loadLlm();
  const file = join(FIXTURES, 'roundrobin.sop.json');
  const { sop } = engine.loadSopFile(file);
  const server = await startServer(LATENCY_MS);
  try {
    const provider = await openaiProvider({ baseURL: server.url, apiKey: 'bench' });
    // Warm-up: connections, JIT.
    await runAll(engine, provider, sop, file);
    const alone = await runAll(engine, provider, sop, file, 1);
    const engineOnly = await runAll(engine, new SleepyMock(new engine.MockProvider()), sop, file);
    const free = await runAll(engine, provider, sop, file);
    const plain = await runAll(engine, provider, sop, file, SIMS, false);
    const limited = await runAll(engine, limitConcurrency(provider, limit), sop, file);
    const ideal = free.longestChain * LATENCY_MS;
    const idealLimited = Math.max(limited.longestChain, Math.ceil(limited.totalCalls / limit)) * LATENCY_MS;
    const figures = (r, idealMs) => ({
      wall_ms: round(r.wallMs),
      ideal_ms: idealMs,
      ratio: round(r.wallMs / idealMs, 3),
      cpu_ms: round(r.cpuMs),
      cpu_ms_per_call: round(r.cpuMs / r.totalCalls, 3),
    });
    const results = {
      simulations: SIMS,
      turns_each: TURNS,
      latency_ms: LATENCY_MS,
      llm_calls: free.totalCalls,
      one_simulation_http: figures(alone, alone.longestChain * LATENCY_MS),
      engine_only_in_process_latency: figures(engineOnly, engineOnly.longestChain * LATENCY_MS),
      unlimited: figures(free, ideal),
      unlimited_not_streamed: figures(plain, plain.longestChain * LATENCY_MS),
      limited: { max_concurrency: limit, ...figures(limited, idealLimited) },
      target_ratio: TARGET,
    };
    const pass = results.unlimited.ratio <= TARGET;
    const show = (r) => `${fmtMs(r.wall_ms)} / ${fmtMs(r.ideal_ms)} = ${r.ratio}x`;
    const rows = [
      row(`${SIMS} concurrent simulations x ${TURNS} turns, 50 ms LLM: wall / ideal`, show(results.unlimited), `<= ${TARGET}x`, pass),
      row(`  with --max-concurrency ${limit}: wall / ideal`, show(results.limited), `<= ${TARGET}x`, results.limited.ratio <= TARGET),
      row('  same, replies not streamed (Run option stream: false)', show(results.unlimited_not_streamed)),
      row('  one simulation alone over HTTP: wall / ideal', show(results.one_simulation_http)),
      row(`  ${SIMS} simulations, no HTTP (mock + 50 ms in process)`, show(results.engine_only_in_process_latency)),
      row(
        '  CPU of this process per LLM call: HTTP / no HTTP',
        `${fmtMs(results.unlimited.cpu_ms_per_call)} / ${fmtMs(results.engine_only_in_process_latency.cpu_ms_per_call)}`,
      ),
    ];
    const notes = [];
    if (!pass) {
      const u = results.unlimited;
      const busy = u.cpu_ms / u.wall_ms;
      const e = results.engine_only_in_process_latency;
      notes.push(
        `Concurrency misses ${TARGET}x (${u.ratio}x). All simulations share one JavaScript thread, and each LLM call costs ` +
          `it ${u.cpu_ms_per_call} ms of CPU over HTTP (engine + openai client on Node's fetch + streamed response parsing) against ` +
          `${e.cpu_ms_per_call} ms for the engine alone, which stays at ${e.ratio}x of ideal without HTTP. ${SIMS} calls per ${LATENCY_MS} ms ` +
          `need ${Math.round(SIMS * u.cpu_ms_per_call)} ms of CPU per ${LATENCY_MS} ms round` +
          (busy > 0.6
            ? `, so the thread is saturated (busy ${Math.round(busy * 100)}% of the wall time) and the server, in another process, ` +
              'competes for the same 2 cores. The cost is the HTTP client, not the engine. Fix: spread the simulations over ' +
              'worker_threads (one per core), a leaner HTTP path than the openai SDK on fetch (node:http with a keep-alive agent is ' +
              `several times cheaper per request), and no streaming when nobody watches the deltas (${results.unlimited_not_streamed.ratio}x, ` +
              `${results.unlimited_not_streamed.cpu_ms_per_call} ms per call here). A limit on concurrent calls keeps the thread below ` +
              `saturation: with --max-concurrency ${limit} the run is ${results.limited.ratio}x of its ideal.`
            : `, yet the thread was busy only ${Math.round(busy * 100)}% of the wall time, so the time went to waiting on the machine ` +
              '(see the load average) or on the server; rerun on a quiet machine.'),
      );
    }
    return {
      title: `Concurrency (${SIMS} simulations in one process, local OpenAI-compatible server, ${LATENCY_MS} ms latency)`,
      rows,
      results: { concurrency: results },
      notes,
    };
  } finally {
    await server.stop();
  }
}
