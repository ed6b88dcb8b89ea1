// Many simulations (docs/sweep.md): the CPU of one LLM call over HTTP (the direct path of calls
// that do not stream, src/core/llm/direct-chat.ts, against the openai client on Node's fetch,
// SOP_HTTP_CLIENT=fetch, and on undici's fetch, SOP_HTTP_CLIENT=undici; streamed and not), 50 and 1,000
// concurrent simulations in one process against the local OpenAI-compatible server, the same
// 1,000 split over two worker threads (tinypool), and the throughput of 1, 2 and 4 `sop worker`
// processes on Redis for 200 runs. Results under the key "sweep".
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, ROOT, loadEngine, loadLlm } from './lib/engine.mjs';
import { fmtMs, round, row } from './lib/stats.mjs';
import { cpuMs, startServer } from './lib/test-server.mjs';
import { startRedis, waitLine } from './lib/redis.mjs';

export const order = 55;
const CLI = join(ROOT, 'dist', 'src', 'apps', 'cli', 'main.js');

/**
 * `sims` simulations at once. `staggerMs` spaces their starts (the warm-up: a thousand connections
 * opened in one burst overflow the server's listen backlog, as they would a real server's).
 */
export async function runMany(engine, llm, sop, file, sims, turns, stream, staggerMs = 0) {
  const started = performance.now();
  const cpu = cpuMs();
  const results = await Promise.all(
    Array.from({ length: sims }, async (_, i) => {
      if (staggerMs) await new Promise((r) => setTimeout(r, i * staggerMs));
      return new engine.Run({ sop, file, llm, maxTurns: turns, runId: `bench-${i}`, seed: i + 1, stream }).run();
    }),
  );
  const wallMs = performance.now() - started;
  const cpuUsed = cpuMs() - cpu;
  for (const r of results)
    if (r.turns !== turns) throw new Error(`a simulation stopped after ${r.turns} turns (${r.status}: ${r.error?.message ?? ''})`);
  const calls = results.map((r) => r.usage.calls);
  return { wallMs, cpuMs: cpuUsed, longestChain: Math.max(...calls), totalCalls: calls.reduce((a, b) => a + b, 0) };
}

/** Of three measurements, the one with the median wall time (a window of a second is at the mercy of the machine's other work). */
async function medianOf3(measure) {
  const runs = [await measure(), await measure(), await measure()];
  return runs.sort((a, b) => a.wallMs - b.wallMs)[1];
}

const figures = (r, latency) => {
  const ideal = r.longestChain * latency;
  return {
    wall_ms: round(r.wallMs),
    ideal_ms: ideal,
    ratio: round(r.wallMs / ideal, 3),
    cpu_ms: round(r.cpuMs),
    cpu_ms_per_call: round(r.cpuMs / r.totalCalls, 3),
  };
};

/** client: direct (the default: calls that do not stream on the direct path), fetch or undici (every call through the openai client). */
async function provider(url, client) {
  const { openaiProvider } = await loadLlm();
  if (client === 'direct') delete process.env.SOP_HTTP_CLIENT;
  else process.env.SOP_HTTP_CLIENT = client;
  const p = await openaiProvider({ baseURL: url, apiKey: 'bench' });
  delete process.env.SOP_HTTP_CLIENT;
  return p;
}

/** 1,000 simulations split over two worker threads (tinypool), each thread with its own provider. */
async function threaded(url, file, sims, turns) {
  const { default: Tinypool } = await import('tinypool');
  const pool = new Tinypool({ filename: new URL('./workers/sweep-thread.mjs', import.meta.url).href, minThreads: 2, maxThreads: 2 });
  try {
    await Promise.all([0, 1].map(() => pool.run({ url, file, sims: sims / 2, turns: 1, staggerMs: 4 })));
    const started = performance.now();
    const cpu = cpuMs();
    const parts = await Promise.all([0, 1].map(() => pool.run({ url, file, sims: sims / 2, turns })));
    return {
      wallMs: performance.now() - started,
      cpuMs: cpuMs() - cpu, // process CPU: both threads
      longestChain: Math.max(...parts.map((p) => p.longestChain)),
      totalCalls: parts.reduce((a, p) => a + p.totalCalls, 0),
    };
  } finally {
    await pool.destroy();
  }
}

/** The key for the bench's LLM server, and the secret queued jobs are signed with (docs/scale.md). */
const QUEUE_ENV = { OPENAI_API_KEY: 'bench', SOP_QUEUE_SECRET: 'sop-bench-queue-secret-0123456789' };

/** 200 runs of the round-robin fixture (5 turns, 200 ms LLM) through Redis with N `sop worker` processes. */
async function workers(url, n, runs, port) {
  const out = mkdtempSync(join(tmpdir(), 'sop-bench-sweep-'));
  const procs = [];
  try {
    for (let i = 0; i < n; i++) {
      const w = spawn(
        process.execPath,
        // the fixture in the repository, the runs under the temporary folder; the bench's LLM server allowed
        [
          CLI,
          'worker',
          '--queue',
          `redis://127.0.0.1:${port}`,
          '--concurrency',
          '16',
          '--root',
          FIXTURES,
          '--root',
          out,
          '--allow-base-url',
          url,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...QUEUE_ENV } },
      );
      procs.push(w);
      await waitLine(w, /ready: queue/);
    }
    const started = performance.now();
    const sweep = spawn(
      process.execPath,
      [
        CLI,
        'sweep',
        join(FIXTURES, 'roundrobin.sop.json'),
        '--llm',
        'openai',
        '--base-url',
        url,
        '--seeds',
        `1-${runs}`,
        '--max-turns',
        '5',
        '--queue',
        `redis://127.0.0.1:${port}`,
        '--out',
        out,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...QUEUE_ENV } },
    );
    let err = '';
    sweep.stderr.on('data', (d) => (err += d));
    const code = await new Promise((r) => sweep.once('exit', r));
    const wall = performance.now() - started;
    if (code !== 0) throw new Error(`sweep over ${n} workers exited ${code}: ${err.slice(-500)}`);
    const lines = readFileSync(join(out, 'results.jsonl'), 'utf8').split('\n').filter(Boolean);
    if (lines.length !== runs) throw new Error(`${lines.length} result lines, not ${runs}`);
    return { wall_ms: round(wall), runs_per_second: round((runs * 1000) / wall, 2) };
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    await Promise.all(procs.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : undefined)));
    rmSync(out, { recursive: true, force: true });
  }
}

const PARTS = (process.env.BENCH_SWEEP_PARTS ?? 'http,thousand,workers').split(',');

export async function run() {
  const engine = await loadEngine();
  const file = join(FIXTURES, 'roundrobin.sop.json');
  const { sop } = engine.loadSopFile(file);
  const results = {};
  const rows = [];
  const notes = [];

  // 1. 50 simulations x 20 turns, 50 ms: the direct path (not streamed; a streamed call is the
  //    openai client's on Node's fetch either way), the openai client on Node's fetch and on undici's
  const fast = PARTS.includes('http') ? await startServer(50) : undefined;
  if (fast)
    try {
      const http = {};
      for (const client of ['direct', 'fetch', 'undici']) {
        const p = await provider(fast.url, client);
        await runMany(engine, p, sop, file, 50, 20, false); // warm-up
        if (client !== 'direct')
          http[`${client}_streamed`] = figures(await medianOf3(() => runMany(engine, p, sop, file, 50, 20, true)), 50);
        http[`${client}_not_streamed`] = figures(await medianOf3(() => runMany(engine, p, sop, file, 50, 20, false)), 50);
      }
      results.http = { simulations: 50, turns_each: 20, latency_ms: 50, repeats: 3, load_average: round(loadavg()[0], 2), ...http };
      for (const [k, v] of Object.entries(http))
        rows.push(
          row(`50 sims x 20 turns, 50 ms: ${k.replace('_', ', ').replace('_', ' ')}`, `${v.ratio}x, ${fmtMs(v.cpu_ms_per_call)} CPU/call`),
        );
      results.fifty_simulations_ratio = http.direct_not_streamed.ratio;
      rows.push(
        row(
          '50 sims: wall / ideal as sop sweep runs them (not streamed, the direct path)',
          `${http.direct_not_streamed.ratio}x`,
          '<= 1.15x',
          http.direct_not_streamed.ratio <= 1.15,
        ),
      );
    } finally {
      await fast.stop();
    }

  // 2. 1,000 simulations x 10 turns against a server answering after 1 s; then split over two threads
  const slow = PARTS.includes('thousand') ? await startServer(1000) : undefined;
  if (slow)
    try {
      const p = await provider(slow.url, process.env.BENCH_SWEEP_CLIENT ?? 'direct');
      await runMany(engine, p, sop, file, 1000, 1, false, 2); // warm pool: 1,000 kept-alive connections
      const one = figures(await runMany(engine, p, sop, file, 1000, 10, false), 1000);
      const two = figures(await threaded(slow.url, file, 1000, 10), 1000);
      results.thousand_simulations = { simulations: 1000, turns_each: 10, latency_ms: 1000, one_thread: one, two_threads_tinypool: two };
      rows.push(
        row(
          '1,000 sims x 10 turns, 1 s LLM, one thread: wall / ideal',
          `${one.ratio}x (${fmtMs(one.cpu_ms_per_call)} CPU/call)`,
          '<= 1.3x',
          one.ratio <= 1.3,
        ),
      );
      rows.push(row('  same over 2 worker threads (tinypool)', `${two.ratio}x (${fmtMs(two.cpu_ms_per_call)} CPU/call)`));
      results.worker_threads_decision =
        `two threads measured ${two.ratio}x against ${one.ratio}x for one thread` +
        (two.ratio < one.ratio - 0.02 ? '' : ' (no gain here: 2 cores shared with the server)') +
        '; sop sweep uses one thread per core once there are at least 2 x --concurrency runs, and --threads 1 keeps one';
      notes.push(`Worker threads: ${results.worker_threads_decision}.`);
    } finally {
      await slow.stop();
    }

  // 3. sop worker processes on Redis: 200 runs x 5 turns, 200 ms LLM
  const redisBin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
  if (!PARTS.includes('workers')) {
    // not asked for (BENCH_SWEEP_PARTS)
  } else if (!redisBin) {
    notes.push('sop worker throughput not measured: redis-server is not installed');
  } else {
    const { port, proc: redis } = await startRedis(redisBin);
    const server = await startServer(200);
    try {
      const by = {};
      for (const n of [1, 2, 4]) by[n] = await workers(server.url, n, 200, port);
      results.redis_workers = {
        runs: 200,
        turns_each: 5,
        latency_ms: 200,
        worker_concurrency: 16,
        workers: by,
        ratio_to_one: {
          1: 1,
          2: round(by[2].runs_per_second / by[1].runs_per_second, 2),
          4: round(by[4].runs_per_second / by[1].runs_per_second, 2),
        },
      };
      for (const n of [1, 2, 4])
        rows.push(
          row(
            `200 runs on Redis, ${n} sop worker(s) x 16: runs/s (ratio to one)`,
            `${by[n].runs_per_second} (${results.redis_workers.ratio_to_one[n]}x)`,
          ),
        );
    } finally {
      await server.stop();
      redis.kill('SIGTERM');
    }
  }
  return { title: 'Sweeps: CPU per LLM call, 1,000 simulations, sop worker processes on Redis', rows, results: { sweep: results }, notes };
}
