// How a queue worker (sop worker, sop worker --shards) serves once it is made: an error of the
// connection told once per kind (before the worker is ready, reachRedis tells it), each failed job
// in one line, the first SIGINT or SIGTERM stopping it (./worker-signals.ts), Redis reached or one
// clear line, then jobs taken until the worker closes.
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { reachRedis } from '../../shared/util/redis-url.js';
import { terminalSafe } from '../../shared/util/terminal-text.js';
import { stopOnSignals } from './worker-signals.js';

export interface ServeOptions<D, R> {
  /** The queue's Redis URL, redacted (for messages). */
  queue: string;
  /** What happens to the work in progress when a signal stops the worker. */
  say: string;
  stop: AbortController;
  err: (text: string) => void;
  /** How a failed job is named in its line (`run KEY`, `job ID`). */
  jobName: (job: Job<D, R>, e: Error) => string;
  /** The limits shared with other workers, ready before the first job and closed with the worker. */
  limits?: { ready(): Promise<void>; close(): Promise<void> };
  /** A client of the worker's own on the same Redis: reached too, and disconnected with the worker. */
  redis?: Redis;
  /** The line that says the worker is ready. */
  readyLine: () => string;
}

/** Serves the jobs until the worker is closed; its exit code (130 when a signal stopped it). */
export async function serveWorker<D, R>(worker: Worker<D, R>, o: ServeOptions<D, R>): Promise<number> {
  let lastError: string | undefined;
  let ready = false; // before that, the error is told once by reachRedis
  worker.on('error', (e) => {
    if (ready && e.message !== lastError) o.err(`worker: ${e.message}\n`); // once per kind of error, not at every reconnection
    lastError = e.message;
  });
  o.redis?.on('error', (e: Error) => (lastError = e.message));
  worker.on('failed', (job, e) => {
    if (job) o.err(`${o.jobName(job, e)} failed: ${terminalSafe(e.message.replace(/\s*\n\s*/g, '; '))}\n`);
  });
  const signals = stopOnSignals({ say: o.say, stop: o.stop, close: () => worker.close(), err: o.err });
  try {
    const redis = o.redis;
    await reachRedis(redis ? Promise.all([worker.waitUntilReady(), redis.ping()]) : worker.waitUntilReady(), o.queue, () => lastError);
    await o.limits?.ready();
  } catch (e) {
    await worker.close(true).catch(() => {});
    await o.limits?.close().catch(() => {});
    o.redis?.disconnect();
    throw e;
  }
  ready = true;
  o.err(o.readyLine());
  try {
    await worker.run();
  } finally {
    await o.limits?.close().catch(() => {});
  }
  signals.release();
  o.redis?.disconnect();
  return signals.stopped() ? 130 : 0;
}
