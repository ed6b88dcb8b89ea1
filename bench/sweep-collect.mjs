// Gathering a queued sweep on a long-lived Redis (docs/scale.md): a Redis that already holds
// BACKLOG finished jobs of older sweeps (5,000 by default, each with a result line as its return
// value), then a sweep of 300 mock runs queued with --detach, run by one `sop worker`, and gathered
// with --collect once they are all done. Measured: the wall time and CPU (user + system, from
// /usr/bin/time) of the --collect process, and of a sweep that waits for its 300 runs as they
// finish (queue and collect in one process). Results under the key "sweep_collect".
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, ROOT } from './lib/engine.mjs';
import { round, row } from './lib/stats.mjs';
import { startRedis, waitLine } from './lib/redis.mjs';

export const order = 56;
const CLI = join(ROOT, 'dist', 'src', 'apps', 'cli', 'main.js');
const BACKLOG = Number(process.env.BENCH_COLLECT_BACKLOG ?? 5000);
const RUNS = 300;

/** `sop ARGS` under /usr/bin/time: its exit code, stderr, wall ms and CPU ms (user + system). */
async function timed(args) {
  const started = performance.now();
  const p = spawn('/usr/bin/time', ['-f', 'TIME %U %S', process.execPath, CLI, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, OPENAI_API_KEY: '', SOP_QUEUE_SECRET: 'sop-bench-queue-secret-0123456789' },
  });
  let err = '';
  p.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => p.once('exit', r));
  const wall = performance.now() - started;
  const m = err.match(/TIME ([\d.]+) ([\d.]+)\s*$/);
  return { code, err, wall_ms: round(wall), cpu_ms: m ? round((Number(m[1]) + Number(m[2])) * 1000) : undefined };
}

/** BACKLOG completed jobs of older sweeps, as `sop worker` leaves them: a result line each. */
async function fillBacklog(connection) {
  const require = createRequire(join(ROOT, 'package.json'));
  const { Queue, Worker } = await import(require.resolve('bullmq'));
  const queue = new Queue('sop-runs', { connection });
  const line = (i) => ({
    key: `s${i}-0123abcd`,
    seed: i,
    inputs: {},
    repeat: 1,
    status: 'finished',
    turns: 5,
    final_state: 'end',
    outputs: { verdict: 'The affirmative wins on the strength of its evidence.' },
    usage: { calls: 7, prompt_tokens: 1338, completion_tokens: 44 },
    run_dir: `/tmp/older-sweep/runs/s${i}-0123abcd`,
    worker: 'host:4242',
    duration_ms: 300,
  });
  for (let i = 0; i < BACKLOG; i += 500)
    await queue.addBulk(
      Array.from({ length: Math.min(500, BACKLOG - i) }, (_, j) => ({
        name: 'run',
        data: {
          sweep: `older${Math.floor((i + j) / 1000)}`,
          file: '/tmp/older.sop.json',
          runsDir: '/tmp/older-sweep/runs',
          point: { seed: i + j },
        },
        opts: { jobId: `older${Math.floor((i + j) / 1000)}-s${i + j}`, removeOnComplete: false, removeOnFail: false },
      })),
    );
  let done = 0;
  const worker = new Worker('sop-runs', async (job) => line(job.data.point.seed), { connection, concurrency: 100 });
  await new Promise((resolve) =>
    worker.on('completed', () => {
      if (++done === BACKLOG) resolve();
    }),
  );
  await worker.close();
  const counts = await queue.getJobCounts('completed');
  await queue.close();
  return counts.completed;
}

export async function run() {
  const redisBin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
  if (!redisBin || !existsSync('/usr/bin/time'))
    return {
      title: 'Sweeps: --collect on a Redis with a backlog',
      rows: [],
      results: {},
      notes: ['not measured: redis-server or /usr/bin/time is missing'],
    };
  const { port, url, proc: redis } = await startRedis(redisBin);
  const dir = mkdtempSync(join(tmpdir(), 'sop-bench-collect-'));
  const procs = [];
  try {
    const backlog = await fillBacklog({ host: '127.0.0.1', port });
    const worker = spawn(process.execPath, [CLI, 'worker', '--queue', url, '--concurrency', '16', '--root', FIXTURES, '--root', dir], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, OPENAI_API_KEY: '', SOP_QUEUE_SECRET: 'sop-bench-queue-secret-0123456789' },
    });
    procs.push(worker);
    let workerOut = '';
    worker.stderr.on('data', (d) => (workerOut += d));
    await waitLine(worker, /ready: queue/);
    const sweep = (out, ...extra) => [
      'sweep',
      join(FIXTURES, 'roundrobin.sop.json'),
      '--llm',
      'mock',
      '--max-turns',
      '5',
      '--seeds',
      `1-${RUNS}`,
      '--queue',
      url,
      '--out',
      join(dir, out),
      ...extra,
    ];
    // 1. --detach, the worker runs them all, then --collect gathers the 300 lines
    const detach = await timed(sweep('A', '--detach'));
    if (detach.code !== 0) throw new Error(`--detach exited ${detach.code}: ${detach.err.slice(-500)}`);
    await new Promise((resolve, reject) => {
      const deadline = Date.now() + 300_000;
      const poll = () => {
        if ((workerOut.match(/ after \d+ turns/g) ?? []).length >= RUNS) resolve();
        else if (Date.now() > deadline) reject(new Error(`the worker did not finish ${RUNS} runs: ${workerOut.slice(-500)}`));
        else setTimeout(poll, 100);
      };
      poll();
    });
    const collect = await timed(sweep('A', '--collect'));
    if (collect.code !== 0) throw new Error(`--collect exited ${collect.code}: ${collect.err.slice(-500)}`);
    const gathered = readFileSync(join(dir, 'A', 'results.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean).length;
    if (gathered !== RUNS) throw new Error(`--collect gathered ${gathered} lines, not ${RUNS}`);
    // 2. a sweep that queues its runs and waits for them, with the backlog and the 300 above on Redis
    const live = await timed(sweep('B'));
    if (live.code !== 0) throw new Error(`the sweep exited ${live.code}: ${live.err.slice(-500)}`);
    const results = {
      backlog_jobs: backlog,
      runs: RUNS,
      collect_after_done: { wall_ms: collect.wall_ms, cpu_ms: collect.cpu_ms },
      sweep_waiting: { wall_ms: live.wall_ms, cpu_ms: live.cpu_ms },
    };
    return {
      title: `Sweeps: gathering ${RUNS} queued runs on a Redis holding ${backlog} finished jobs of older sweeps`,
      rows: [
        row(`--collect of ${RUNS} done runs: wall, CPU`, `${collect.wall_ms} ms, ${collect.cpu_ms} ms CPU`),
        row(`sweep of ${RUNS} mock runs waiting on 1 worker: wall, CPU of the sweep`, `${live.wall_ms} ms, ${live.cpu_ms} ms CPU`),
      ],
      results: { sweep_collect: results },
    };
  } finally {
    for (const p of procs) p.kill('SIGTERM');
    await Promise.all(procs.map((p) => (p.exitCode === null ? new Promise((r) => p.once('exit', r)) : undefined)));
    redis.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

// `node bench/sweep-collect.mjs`: this module alone, figures on stdout (results.json untouched)
if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await run(), null, 2));
