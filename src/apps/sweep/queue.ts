// A sweep on a BullMQ queue in Redis: `sop sweep --queue` puts one job per grid point (its job
// id made from the sweep and the point's key, so a point is queued once however often the sweep
// is started), `sop worker` runs them, and the sweep gathers the workers' result lines.
import { createHash } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import type { GridPoint } from './grid.js';
import { signJob } from '../../shared/util/job-signature.js';
import { isDone, type ResultLine, type ResultsFile } from './results.js';
import { failedLine, type SweepRunSettings } from './run-point.js';
export { QueueUrlError, connectionOf, parseRedisUrl, reachRedis, type RedisAddress } from '../../shared/util/redis-url.js';

export const QUEUE_NAME = 'sop-runs';

/**
 * What a worker needs to run one point: the SOP file (the same path on every machine) and the
 * options (schemas/queue-job.schema.json), signed with SOP_QUEUE_SECRET (job-signature.ts).
 */
export interface JobData extends SweepRunSettings {
  /** Version of the job format. */
  v: 1;
  sweep: string;
  file: string;
  point: GridPoint;
  /** The sweep's runs folder (used by workers when it is shared). */
  runsDir: string;
  /** HMAC-SHA256 of the job id and the rest of the data (signJob). */
  sig: string;
}

/** A name for the sweep: the same SOP file and --out give the same name (and job ids). */
export function sweepId(file: string, runsDir: string): string {
  return createHash('sha256').update(`${file}\u0000${runsDir}`).digest('hex').slice(0, 12);
}

export const jobIdOf = (sweep: string, key: string): string => `${sweep}-${key}`;

export interface EnqueueOptions {
  attempts: number;
  /** SOP_QUEUE_SECRET: each job is signed with it. */
  secret: string;
}

/**
 * Queue the points not queued yet (a point whose job failed for good is retried); returns how
 * many were added.
 */
export async function enqueue(
  queue: Queue,
  base: Omit<JobData, 'point' | 'v' | 'sig'>,
  points: readonly GridPoint[],
  o: EnqueueOptions,
): Promise<number> {
  let added = 0;
  for (let i = 0; i < points.length; i += 500) {
    const batch = points.slice(i, i + 500);
    const existing = await Promise.all(batch.map((p) => Job.fromId(queue, jobIdOf(base.sweep, p.key))));
    // a point whose job failed for good, or whose run was left unfinished, runs again: its job is
    // queued anew with this sweep's signed data (not retried as it was: a job refused by the
    // workers, e.g. one forged under this id, would only be refused again)
    const again = await Promise.all(
      existing.map(async (job) => {
        if (!job) return true;
        const state = await job.getState();
        const redo = state === 'failed' || (state === 'completed' && !isDone((job.returnvalue as ResultLine | undefined)?.status ?? ''));
        if (redo) await job.remove();
        return redo;
      }),
    );
    const fresh = batch.filter((_, j) => again[j]);
    const retried = again.filter((redo, j) => redo && existing[j]).length;
    await queue.addBulk(
      fresh.map((point) => {
        const jobId = jobIdOf(base.sweep, point.key);
        const data = { v: 1 as const, ...base, point };
        return {
          name: 'run',
          data: { ...data, sig: signJob(o.secret, jobId, data) } satisfies JobData,
          opts: {
            jobId,
            attempts: o.attempts,
            backoff: { type: 'exponential', delay: 1000 },
            removeOnComplete: false,
            removeOnFail: false,
          },
        };
      }),
    );
    added += fresh.length - retried;
  }
  return added;
}

export interface CollectOptions {
  sweep: string;
  results: ResultsFile;
  /** Called with each line as it is recorded. */
  onLine?: (r: ResultLine) => void;
  /** Called with the number of our jobs running, at each poll. */
  onActive?: (n: number) => void;
  signal?: AbortSignal;
  pollMs?: number;
}

/** Of these job ids, those that are completed or failed for good: asked of BullMQ's two sets, id by id (only our jobs). */
async function finishedOf(queue: Queue, ids: readonly string[]): Promise<Map<string, 'completed' | 'failed'>> {
  const client = await queue.getBackend().client;
  const out = new Map<string, 'completed' | 'failed'>();
  for (let i = 0; i < ids.length; i += 1000) {
    const batch = ids.slice(i, i + 1000);
    // sent together on the one connection: one round trip for the batch
    const scores = await Promise.all(
      batch.flatMap((id) => [client.zscore(queue.keys.completed!, id), client.zscore(queue.keys.failed!, id)]),
    );
    batch.forEach((id, k) => {
      if (scores[2 * k] !== null) out.set(id, 'completed');
      else if (scores[2 * k + 1] !== null) out.set(id, 'failed');
    });
  }
  return out;
}

/**
 * Wait until every point has a final job (completed, or failed after its last attempt) and
 * record one line for each, once. Points without a job are returned (never queued). Each poll
 * asks only about this sweep's jobs not gathered yet, so a Redis that keeps the finished jobs of
 * many older sweeps does not slow it down (bench/results.json "sweep_collect").
 */
export async function collect(queue: Queue, points: readonly GridPoint[], o: CollectOptions): Promise<{ missing: GridPoint[] }> {
  const pending = new Map(points.map((p) => [jobIdOf(o.sweep, p.key), p]));
  const missing: GridPoint[] = [];
  let first = true;
  while (pending.size > 0 && !o.signal?.aborted) {
    const finished = await finishedOf(queue, [...pending.keys()]);
    const jobs = await Promise.all([...finished.keys()].map((id) => Job.fromId(queue, id)));
    for (const [i, [id, state]] of [...finished.entries()].entries()) {
      const job = jobs[i];
      const p = pending.get(id)!;
      pending.delete(id);
      const line: ResultLine =
        job && state === 'completed' && job.returnvalue && typeof job.returnvalue === 'object'
          ? { ...(job.returnvalue as ResultLine), attempts: job.attemptsMade }
          : {
              ...failedLine(p, job?.failedReason || (job ? 'the job failed' : 'the job was removed from the queue'), undefined, 0),
              worker: 'queue',
              attempts: job?.attemptsMade ?? 0,
            };
      o.results.add(line);
      o.onLine?.(line);
    }
    if (first) {
      first = false;
      // points never queued (a --collect before the sweep was queued) are not waited for
      const exists = await Promise.all([...pending.keys()].map((id) => Job.fromId(queue, id)));
      [...pending.entries()].forEach(([id, p], i) => {
        if (!exists[i]) {
          missing.push(p);
          pending.delete(id);
        }
      });
    }
    if (pending.size === 0) break;
    if (o.onActive) {
      const active = await (await queue.getBackend().client).lrange(queue.keys.active!, 0, -1);
      o.onActive(active.filter((id) => pending.has(id)).length);
    }
    // a very large sweep asks less often (about 20 jobs a millisecond of the pause at most)
    await new Promise((r) => setTimeout(r, Math.max(o.pollMs ?? 500, pending.size / 20)));
  }
  return { missing };
}
