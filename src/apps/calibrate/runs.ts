// A calibration's runs go through the sweep engine (src/apps/sweep/): each proposed particle is
// one grid point per seed, its `input` parameters as the point's inputs and its `path` parameters
// as values set at JSON pointers of the SOP (GridPoint.set). They run in this process (worker
// threads when there are enough), or on `sop worker` processes through the sweep's BullMQ queue
// (--queue). Every line goes to DIR/results.jsonl, so a calibration started again finds the runs
// it already made and does not make them again.
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Candidate, SmcConfig } from '../../features/calibrate/smc.js';
import type { LlmProvider } from '../../core/llm/types.js';
import type { LlmAllowEntry } from '../../core/llm/consent.js';
import type { Sop } from '../../format/sop/types.js';
import type { SetValue } from '../../format/sop/set-pointer.js';
import type { GridPoint } from '../sweep/grid.js';
import { sweepLocal } from '../sweep/local.js';
import { isDone, type ResultLine, type ResultsFile } from '../sweep/results.js';
import type { SweepRunSettings } from '../sweep/run-point.js';
import type { Progress } from '../sweep/progress.js';

/** The grid points of a candidate: one per seed, keyed by round, proposal, seed and a hash of what the run gets. */
export function candidatePoints(c: Candidate, cfg: SmcConfig, fixed: Readonly<Record<string, string>>): GridPoint[] {
  const inputs: Record<string, string> = { ...fixed };
  const set: Record<string, SetValue> = {};
  for (const p of cfg.parameters) {
    const v = c.values[p.name]!;
    if (p.input !== undefined) inputs[p.input] = String(v);
    else set[p.path!] = v;
  }
  return c.seeds.map((seed, k) => {
    const hash = createHash('sha256')
      .update(JSON.stringify([seed, Object.entries(inputs).sort(), Object.entries(set).sort()]))
      .digest('hex')
      .slice(0, 8);
    return {
      key: `r${c.round}-p${c.index}${c.seeds.length > 1 ? `-s${k + 1}` : ''}-${hash}`,
      seed,
      inputs,
      repeat: 1,
      ...(Object.keys(set).length > 0 ? { set } : {}),
    };
  });
}

export interface Runner {
  /** Run the points not done yet; their lines are in `results` afterwards. */
  run(points: readonly GridPoint[]): Promise<void>;
  close(): Promise<void>;
}

export interface RunnerOptions {
  sop: Sop;
  file: string;
  runsDir: string;
  settings: SweepRunSettings;
  results: ResultsFile;
  concurrency: number;
  threads: number;
  provider?: LlmProvider;
  allow: LlmAllowEntry[];
  signal: AbortSignal;
  progress?: Progress;
  queue?: { url: string; secret: string; attempts: number; onError: (m: string) => void };
}

/** The runs of points not done yet. */
const todoOf = (points: readonly GridPoint[], results: ResultsFile) =>
  points.filter((p) => !isDone(results.byKey.get(p.key)?.status ?? ''));

export async function makeRunner(o: RunnerOptions): Promise<Runner> {
  if (o.queue) return queueRunner(o, o.queue);
  let pool: import('../sweep/threads.js').ThreadPool | undefined; // kept across batches: a thread starts once
  return {
    async run(points) {
      const todo = todoOf(points, o.results);
      if (todo.length === 0) return;
      if (o.threads > 1 && todo.length >= 2 * o.concurrency) {
        const { sweepThreads, threadPool } = await import('../sweep/threads.js');
        pool ??= await threadPool(o.threads);
        await sweepThreads(todo, {
          pool,
          file: o.file,
          runsDir: o.runsDir,
          ...o.settings,
          resultsDb: false,
          allow: o.allow,
          signal: o.signal,
          threads: o.threads,
          concurrency: o.concurrency,
          results: o.results,
          progress: o.progress,
        });
      } else
        await sweepLocal(todo, {
          sop: o.sop,
          file: o.file,
          runsDir: o.runsDir,
          ...o.settings,
          resultsDb: false, // metrics come from the journal; a query target's database is built when it is asked
          provider: o.provider,
          signal: o.signal,
          concurrency: o.concurrency,
          results: o.results,
          progress: o.progress,
        });
    },
    close: async () => {
      await pool?.destroy();
    },
  };
}

async function queueRunner(o: RunnerOptions, q: NonNullable<RunnerOptions['queue']>): Promise<Runner> {
  const { Queue } = await import('bullmq');
  const { QUEUE_NAME, collect, connectionOf, enqueue, reachRedis, sweepId } = await import('../sweep/queue.js');
  const { sweepRunSettings } = await import('../sweep/run-point.js');
  const queue: Queue = new Queue(QUEUE_NAME, { connection: connectionOf(q.url) });
  let lastError: string | undefined;
  let ready = false;
  queue.on('error', (e) => {
    if (ready && e.message !== lastError) q.onError(`queue: ${e.message}\n`);
    lastError = e.message;
  });
  try {
    await reachRedis(queue.waitUntilReady(), q.url, () => lastError);
  } catch (err) {
    await queue.close();
    throw err;
  }
  ready = true;
  const sweep = sweepId(o.file, o.runsDir);
  return {
    async run(points) {
      const todo = todoOf(points, o.results);
      if (todo.length === 0) return;
      await enqueue(queue, { sweep, file: o.file, runsDir: o.runsDir, ...sweepRunSettings(o.settings) }, todo, {
        attempts: q.attempts,
        secret: q.secret,
      });
      await collect(queue, todo, {
        sweep,
        results: o.results,
        signal: o.signal,
        onLine: (r: ResultLine) => {
          o.progress?.call(r.usage.prompt_tokens + r.usage.completion_tokens, r.usage.cost);
          o.progress?.end(r);
        },
        onActive: (n) => {
          if (o.progress) o.progress.running = n;
        },
      });
    },
    close: () => queue.close(),
  };
}
