// Concurrency: 50 simulations of the round-robin fixture run at once in this process, sharing one
// `openai` provider that talks to the OpenAI-compatible test server (test/helpers/openai-server.ts,
// in a child process: bench/workers/openai-server.mjs) answering each request after 50 ms.
// Ideal wall time = the longest chain of sequential LLM calls x 50 ms; with a limit L on
// concurrent LLM calls (src/llm/limit.ts) it is ceil(total calls / L) x 50 ms.
// `--max-concurrency N` (or BENCH_MAX_CONCURRENCY) sets L for the limited run (default 10).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FIXTURES, ROOT, loadEngine, loadLlm } from './lib/engine.mjs';
import { fmtMs, round, row } from './lib/stats.mjs';

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

/** Start the test server in its own process; resolves to its URL and a stop function. */
async function startServer() {
  const proc = spawn(process.execPath, [join(ROOT, 'bench', 'workers', 'openai-server.mjs'), String(LATENCY_MS)], {
    cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`the test server exited (${code}) before it listened`)));
  });
  return { url, stop: async () => { proc.stdin.end(); await exited; } };
}

/** CPU time of this process, in ms. */
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

async function runAll(engine, llm, sop, file) {
  const { Run } = engine;
  const started = performance.now();
  const cpu = cpuMs();
  const results = await Promise.all(Array.from({ length: SIMS }, (_, i) => new Run({
    sop, file, llm, maxTurns: TURNS, runId: `bench-${i}`, seed: i + 1, stream: true,
  }).run()));
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
  const { OpenAiProvider, limitConcurrency } = await loadLlm();
  const file = join(FIXTURES, 'roundrobin.sop.json');
  const { sop } = engine.loadSopFile(file);
  const server = await startServer();
  try {
    const provider = new OpenAiProvider({ baseURL: server.url, apiKey: 'bench' });
    // Warm-up: connections, JIT.
    await runAll(engine, provider, sop, file);
    const free = await runAll(engine, provider, sop, file);
    const limited = await runAll(engine, limitConcurrency(provider, limit), sop, file);
    const idealFree = free.longestChain * LATENCY_MS;
    const idealLimited = Math.max(limited.longestChain, Math.ceil(limited.totalCalls / limit)) * LATENCY_MS;
    const results = {
      simulations: SIMS,
      turns_each: TURNS,
      latency_ms: LATENCY_MS,
      llm_calls: free.totalCalls,
      unlimited: { wall_ms: round(free.wallMs), cpu_ms: round(free.cpuMs), ideal_ms: idealFree, ratio: round(free.wallMs / idealFree, 3) },
      limited: { max_concurrency: limit, wall_ms: round(limited.wallMs), cpu_ms: round(limited.cpuMs), ideal_ms: idealLimited, ratio: round(limited.wallMs / idealLimited, 3) },
      target_ratio: TARGET,
    };
    const pass = results.unlimited.ratio <= TARGET;
    const rows = [
      row(`${SIMS} concurrent simulations x ${TURNS} turns, 50 ms LLM: wall / ideal`, `${fmtMs(free.wallMs)} / ${fmtMs(idealFree)} = ${results.unlimited.ratio}x`, `<= ${TARGET}x`, pass),
      row(`  with --max-concurrency ${limit}: wall / ideal`, `${fmtMs(limited.wallMs)} / ${fmtMs(idealLimited)} = ${results.limited.ratio}x`, `<= ${TARGET}x`, results.limited.ratio <= TARGET),
    ];
    const notes = [];
    if (!pass) notes.push(`Concurrency target missed: ${results.unlimited.ratio}x of ideal.`);
    return { title: `Concurrency (${SIMS} simulations in one process, local OpenAI-compatible server, ${LATENCY_MS} ms latency)`, rows, results: { concurrency: results }, notes };
  } finally {
    await server.stop();
  }
}
