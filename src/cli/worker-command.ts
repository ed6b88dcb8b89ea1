// sop worker --queue redis://HOST:PORT: run the runs of sweeps queued on Redis (docs/sweep.md).
// A run's folder goes to the sweep's --out when this machine shares it, else under this
// worker's --out. A job given to this worker after another one died (BullMQ's stalled-job
// recovery) continues the run from its journal when the folder is there, else starts it again.
import { setMaxListeners } from 'node:events';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Worker, type Job } from 'bullmq';
import { loadSopFile } from '../loader/load.js';
import type { LlmProvider } from '../llm/types.js';
import { configureSecrets, makeRedactor } from '../util/redact.js';
import type { Sop } from '../sop/types.js';
import { QUEUE_NAME, connectionOf, parseRedisUrl, reachRedis, type JobData } from '../sweep/queue.js';
import { runPoint, workerName } from '../sweep/run-point.js';
import type { ResultLine } from '../sweep/results.js';
import { sharedProvider, sweepServer } from '../sweep/shared-provider.js';
import { lastValues } from './last-value.js';
import { EngineError } from '../errors.js';

export interface WorkerCommandOptions {
  queue: string;
  concurrency: number;
  /** Keep run folders here (under a folder per sweep) instead of the sweep's --out. */
  out?: string;
  /** Milliseconds a job's lock lasts without renewal before the job counts as stalled (default 10000). */
  lockMs?: number;
}

export async function workerCommand(given: WorkerCommandOptions): Promise<number> {
  const o = lastValues(given);
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1)
    throw new EngineError(`--concurrency must be a whole number of runs, at least 1`, 'OPTION');
  if (o.lockMs !== undefined && !(Number.isInteger(o.lockMs) && o.lockMs >= 1000))
    throw new EngineError(`--lock-ms must be a whole number of milliseconds, at least 1000 (got ${o.lockMs})`, 'OPTION');
  parseRedisUrl(o.queue); // a bad URL is told before connecting
  configureSecrets({ urls: [o.queue] });
  const redact = makeRedactor();
  const err = (s: string) => process.stderr.write(redact(s));
  const sops = new Map<string, Sop>();
  const providers = new Map<string, LlmProvider>();
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every run (and its LLM calls) listens to it
  const lockDuration = o.lockMs ?? 10_000;

  const processor = async (job: Job<JobData, ResultLine>): Promise<ResultLine> => {
    const d = job.data;
    // a SOP file edited between two sweeps is read again (its size or time changed)
    const st = statSync(d.file, { throwIfNoEntry: false });
    const version = `${d.file}\u0000${st?.mtimeMs ?? ''}\u0000${st?.size ?? ''}`;
    let sop = sops.get(version);
    if (!sop) {
      sop = loadSopFile(d.file).sop;
      sops.set(version, sop);
    }
    const runsDir = o.out !== undefined ? resolve(o.out, d.sweep) : d.runsDir;
    err(`run ${d.point.key} started (attempt ${job.attemptsStarted})\n`);
    configureSecrets({ urls: [d.baseUrl] });
    const line = await runPoint(d.point, {
      sop,
      file: d.file,
      runsDir,
      llm: d.llm,
      provider: await sharedProvider(providers, d.llm ?? sop.llm?.provider, sweepServer(sop, d.baseUrl), d.timeoutMs),
      baseUrl: d.baseUrl,
      maxTurns: d.maxTurns,
      timeoutMs: d.timeoutMs,
      yes: d.yes,
      autoRun: d.autoRun,
      pricing: d.pricing,
      budgetTokens: d.budgetTokens,
      budgetUsd: d.budgetUsd,
      answers: d.answers,
      signal: stop.signal,
    });
    // stopped with the worker: the job goes back to the queue (its run continues from its journal)
    if (line.status === 'interrupted' && stop.signal.aborted)
      throw new EngineError(`worker ${workerName()} stopped during the run`, 'WORKER_STOPPED');
    err(
      `run ${d.point.key} ${line.status} after ${line.turns} turns${line.error ? `: ${line.error.replace(/\s+/g, ' ').slice(0, 300)}` : ''}\n`,
    );
    return line;
  };

  const worker = new Worker<JobData, ResultLine>(QUEUE_NAME, processor, {
    connection: connectionOf(o.queue),
    concurrency: o.concurrency,
    lockDuration,
    stalledInterval: Math.max(1000, Math.round(lockDuration / 2)),
    maxStalledCount: 2,
    autorun: false,
  });
  let lastError: string | undefined;
  let ready = false; // before that, the error is told once by reachRedis
  worker.on('error', (e) => {
    if (ready && e.message !== lastError) err(`worker: ${e.message}\n`); // once per kind of error, not at every reconnection
    lastError = e.message;
  });
  worker.on('failed', (job, e) => {
    if (job) err(`run ${job.data.point.key} failed: ${e.message.replace(/\s*\n\s*/g, '; ')}\n`);
  });
  let signals = 0;
  const onSignal = () => {
    signals++;
    if (signals > 1) process.exit(130);
    err('Stopping: the runs in progress stop after their turn and go back to the queue (Ctrl-C again to quit at once).\n');
    stop.abort();
    void worker.close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    await reachRedis(worker.waitUntilReady(), redact(o.queue), () => lastError);
  } catch (e) {
    await worker.close(true).catch(() => {});
    throw e;
  }
  ready = true;
  err(`worker ${workerName()} ready: queue ${QUEUE_NAME} on ${redact(o.queue)}, ${o.concurrency} at once\n`);
  await worker.run();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  return signals > 0 ? 130 : 0;
}
