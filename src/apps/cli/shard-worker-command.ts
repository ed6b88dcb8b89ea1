// sop worker --shards --queue redis://HOST:PORT: answer the shard jobs of population steps that
// `sop run --shard-over` queues (docs/scale.md#one-step-over-many-workers). Each call is asked of
// THIS worker's provider (--llm, --base-url, its OPENAI_API_KEY): a job names no server, key or
// file, and its model name is used only when --allow-model allows it (--model overrides it).
// A shard whose worker died (SIGKILL, a lost machine) goes back to the queue within seconds (a
// short job lock) and another worker answers only the calls whose replies were not stored.
import { serveWorker } from './serve-worker.js';
import { setMaxListeners } from 'node:events';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { EngineError } from '../../shared/errors.js';
import { createProvider } from '../../core/llm/factory.js';
import { answerShard, type ShardModelPolicy } from '../../features/shards/answer.js';
import { checkShardJob, SHARD_QUEUE, ShardJobRefused, type ShardJobData, type ShardSummary } from '../../features/shards/job.js';
import { workerName } from '../sweep/run-point.js';
import { RedisLimits } from '../sweep/shared-limit.js';
import { queueSecret } from '../../shared/util/job-signature.js';
import { configureSecrets, makeRedactor, redactedProcessor } from '../../shared/util/redact.js';
import { connectionOf, parseRedisUrl } from '../../shared/util/redis-url.js';
import { terminalSafe } from '../../shared/util/terminal-text.js';

export interface ShardWorkerOptions {
  queue: string;
  /** openai (default) or mock. */
  llm?: string;
  baseUrl?: string;
  /** Every call is asked of this model. */
  model?: string;
  /** Model names a job may ask for ('*': any). */
  allowModel?: string[];
  /** LLM calls at once (default 64). */
  callsAtOnce?: number;
  /** Milliseconds a shard's lock lasts without renewal before it goes to another worker (default 5000). */
  lockMs?: number;
  timeoutMs?: number;
  /** LLM calls at once to the server, shared through the --queue Redis with every worker given it (src/apps/sweep/shared-limit.ts). */
  sharedLimit?: number;
}

export const DEFAULT_SHARD_CALLS = 64;

export async function shardWorkerCommand(o: ShardWorkerOptions): Promise<number> {
  const llm = o.llm ?? 'openai';
  if (llm !== 'openai' && llm !== 'mock') throw new EngineError(`--llm with --shards: openai or mock (got "${llm}")`, 'OPTION');
  const callsAtOnce = o.callsAtOnce ?? DEFAULT_SHARD_CALLS;
  if (!Number.isInteger(callsAtOnce) || callsAtOnce < 1)
    throw new EngineError(`--shard-concurrency must be a whole number of calls, at least 1 (got ${callsAtOnce})`, 'OPTION');
  if (o.lockMs !== undefined && !(Number.isInteger(o.lockMs) && o.lockMs >= 1000))
    throw new EngineError(`--lock-ms must be a whole number of milliseconds, at least 1000 (got ${o.lockMs})`, 'OPTION');
  parseRedisUrl(o.queue);
  const secret = queueSecret('sop worker');
  configureSecrets({ urls: [o.queue, o.baseUrl] });
  const redact = makeRedactor();
  const err = (s: string) => process.stderr.write(redact(s));
  if (o.sharedLimit !== undefined && !(Number.isInteger(o.sharedLimit) && o.sharedLimit >= 1))
    throw new EngineError(`--shared-limit must be a whole number of LLM calls, at least 1 (got ${o.sharedLimit})`, 'OPTION');
  // the limit shared with other workers goes through this worker's own Redis (docs/scale.md#a-limit-shared-by-workers)
  const limits =
    o.sharedLimit !== undefined
      ? new RedisLimits({ redis: o.queue, maxConcurrent: o.sharedLimit, onError: (e) => err(`shared limit: ${e.message}\n`) })
      : undefined;
  const provider = await createProvider({
    spec: llm,
    ...(o.baseUrl !== undefined ? { baseURL: o.baseUrl, baseURLFixed: true } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    // calls at once to the server adapt to its answers (docs/scale.md#adaptive-concurrency)
    throttle: {
      ceiling: Math.min(callsAtOnce, o.sharedLimit ?? callsAtOnce),
      onChange: (c) => err(`LLM calls at once to ${c.endpoint}: ${c.limit} (was ${c.previous}: ${c.reason})\n`),
      ...(limits ? { shared: (endpoint: string, expirationMs: number) => limits.forEndpoint(endpoint, expirationMs) } : {}),
    },
  });
  const policy: ShardModelPolicy = {
    ...(o.model !== undefined ? { model: o.model } : {}),
    allow: o.allowModel ?? [],
    anyModel: llm === 'mock',
  };
  const connection = connectionOf(o.queue);
  const redis = new Redis(connection);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every call in flight listens to it
  const me = workerName();

  const processor = async (job: Job<ShardJobData, ShardSummary>): Promise<ShardSummary> => {
    let d: ShardJobData;
    try {
      d = checkShardJob(secret, job.id ?? '', job.data);
    } catch (e) {
      // refused: failed at once (no retry), with the reason; nothing of it was asked
      throw new UnrecoverableError(`refused: ${(e as Error).message}`);
    }
    const name = `shard ${d.shard + 1} of step ${d.step}`;
    err(`${name} started: ${d.calls.length} calls (attempt ${job.attemptsStarted})\n`);
    try {
      const s = await answerShard(d, {
        provider,
        redis,
        secret,
        concurrency: callsAtOnce,
        policy,
        worker: me,
        redact,
        signal: stop.signal,
      });
      err(`${name} done: ${s.asked} asked, ${s.reused} answered before, ${s.failed} failed\n`);
      return s;
    } catch (e) {
      if (e instanceof ShardJobRefused) throw new UnrecoverableError(`refused: ${e.message}`);
      throw e;
    }
  };

  const lockDuration = o.lockMs ?? 5000;
  // what BullMQ stores of a job (its result, its failed reason and stack trace) is redacted too
  const worker = new Worker<ShardJobData, ShardSummary>(SHARD_QUEUE, redactedProcessor(processor, redact), {
    connection,
    concurrency: 1,
    lockDuration,
    stalledInterval: Math.max(1000, Math.round(lockDuration / 2)),
    maxStalledCount: 3,
    autorun: false,
  });
  const models = policy.model
    ? `model ${policy.model}`
    : policy.anyModel
      ? 'any model (mock)'
      : `models ${policy.allow.join(', ') || 'none'}`;
  const code = await serveWorker(worker, {
    queue: redact(o.queue),
    say: 'the shard in progress goes back to the queue; its replies stored so far are kept',
    stop,
    err,
    jobName: (job) => `shard job ${terminalSafe(String(job.id ?? '?')).slice(0, 200)}`,
    ...(limits ? { limits } : {}),
    redis,
    readyLine: () =>
      `worker ${me} ready: shard queue ${SHARD_QUEUE} on ${redact(o.queue)}, ${callsAtOnce} calls at once with --llm ${llm}` +
      `${o.baseUrl ? ` at ${redact(o.baseUrl)}` : ''}, ${models}; jobs signed with SOP_QUEUE_SECRET` +
      `${o.sharedLimit !== undefined ? `; LLM calls at once shared with other workers: ${o.sharedLimit}` : ''}\n`,
  });
  await provider.close?.();
  return code;
}
