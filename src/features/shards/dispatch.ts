// The run's side of shards (docs/scale.md#one-step-over-many-workers): a population step's calls
// no journal answered, split into shards of `size` in call order, queued as one BullMQ flow (a
// barrier job with a child job per shard). Once the barrier is done (every shard answered, or one
// failed for good) the replies are read from the step's reply hash and the calls settled in call
// order, so what follows (journal lines, usage) never depends on which shard finished first.
// Counting (usage, cost) stays with the run: each reply settled here is counted once, by the core.
import { FlowProducer, Job, Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { EngineError } from '../../shared/errors.js';
import { LlmError } from '../../core/llm/types.js';
import type { CallDispatch, DispatchedCall, StepRef } from '../../core/runtime/call-many.js';
import { signJob } from '../../shared/util/job-signature.js';
import { redactDeep } from '../../shared/util/redact.js';
import { connectionOf, reachRedis } from '../../shared/util/redis-url.js';
import { barrierJobId, metaOf, shardJobId, shardsOf, SHARD_QUEUE, stepId, STEP_QUEUE, type ShardCall, type ShardJobData } from './job.js';
import { dropReplies, readReplies } from './replies.js';

export interface ShardDispatchOptions {
  /** Redis: redis:// or rediss://[USER:PASSWORD@]HOST:PORT. */
  url: string;
  /** Calls per shard job. */
  size: number;
  /** SOP_QUEUE_SECRET: every shard job is signed with it. */
  secret: string;
  runId: string;
  /** Attempts of a shard job that fails (a worker killed mid-shard does not use one up). */
  attempts?: number;
  /** Told, once a step, when no `sop worker --shards` has taken its shards after `idleWarnMs`. */
  warn?: (message: string) => void;
  /** How long a step's shards may wait for a worker before `warn` (default 10 s). */
  idleWarnMs?: number;
  /** The run's redaction: a shard job's messages hold no secret of this process when they go to Redis. */
  redact?: (text: string) => string;
}

interface Connection {
  flows: FlowProducer;
  steps: Queue;
  shards: Queue;
  events: QueueEvents;
  barrier: Worker;
  redis: Redis;
}

export class ShardDispatch implements CallDispatch {
  readonly name = 'shards';
  /** Replies workers stored in Redis outlive a killed run: a resume reads them instead of counting the calls as lost. */
  readonly outlivesRun = true;
  private conn?: Promise<Connection>;

  constructor(private readonly o: ShardDispatchOptions) {}

  async send(calls: DispatchedCall[], step: StepRef, signal?: AbortSignal): Promise<void> {
    const own = calls.find((c) => c.request.endpoint !== undefined);
    if (own)
      throw new EngineError(
        `state "${step.state}": a call names its own LLM server (llm.base_url or llm.api_key_env); shard workers answer with their own server, so leave those out of the SOP or run without --shard-over`,
        'SHARDS',
      );
    const c = await this.connect();
    const id = stepId(this.o.runId, step);
    const parent = await this.queue(c, id, step, calls);
    let failure: string | undefined;
    const idle = this.watchForWorkers(c, calls.length);
    try {
      await untilAborted(parent.waitUntilFinished(c.events), signal);
    } catch (e) {
      if (signal?.aborted) {
        await parent.remove().catch(() => {}); // shards not started are not asked (those under way finish)
        throw signal.reason;
      }
      failure = (await this.whyFailed(c, id).catch(() => undefined)) ?? (e instanceof Error ? e.message : String(e));
    } finally {
      clearTimeout(idle);
    }
    const replies = await readReplies(
      c.redis,
      this.o.secret,
      id,
      calls.map((x) => x.key),
    );
    // in call order, every shard done: nothing after this depends on which finished first
    for (const call of calls) {
      const r = replies.get(call.key);
      if (r && 'error' in r) call.reject(new LlmError(`the call ${call.key} failed on its shard worker: ${r.error}`));
      else if (r) call.resolve({ ...r, usage: { ...r.usage } });
      else
        call.reject(
          new EngineError(
            failure
              ? `the call ${call.key} got no reply: ${failure}`
              : `the call ${call.key} got no reply from the shard workers (none is in Redis)`,
            'SHARDS',
          ),
        );
    }
    await parent.remove().catch(() => {});
    await dropReplies(c.redis, id);
  }

  /** The step's flow: queued now, or the one a run resumed after a crash finds still under way. */
  private async queue(c: Connection, id: string, step: StepRef, calls: DispatchedCall[]): Promise<Job> {
    const parentId = barrierJobId(id);
    const old = await Job.fromId(c.steps, parentId);
    if (old) {
      const state = await old.getState();
      if (state !== 'completed' && state !== 'failed') return old;
      await old.remove();
    }
    const shards = shardsOf(calls, this.o.size);
    const node = await c.flows.add({
      name: `${this.o.runId} ${step.state} visit ${step.visit} step ${step.step}`,
      queueName: STEP_QUEUE,
      data: { step: id, shards: shards.length },
      opts: { jobId: parentId, removeOnComplete: false, removeOnFail: false },
      children: shards.map((list, n) => {
        const jobId = shardJobId(id, n);
        // what the calls say is redacted; their keys and models stay as they are (replies are found by key)
        const redact = this.o.redact;
        const calls = list
          .map(shardCall)
          .map((c) => (redact ? { ...c, messages: redactDeep(c.messages, redact), meta: redactDeep(c.meta, redact) } : c));
        const data: Omit<ShardJobData, 'sig'> = { v: 1, step: id, shard: n, calls };
        return {
          name: `shard ${n + 1} of ${shards.length}`,
          queueName: SHARD_QUEUE,
          data: { ...data, sig: signJob(this.o.secret, jobId, data) } satisfies ShardJobData,
          opts: {
            jobId,
            attempts: this.o.attempts ?? 3,
            backoff: { type: 'exponential', delay: 1000 },
            failParentOnFailure: true,
            removeOnComplete: false,
            removeOnFail: false,
          },
        };
      }),
    });
    return node.job;
  }

  /** Warns once, after a while, when no shard worker is connected to the Redis: otherwise the run would wait in silence. */
  private watchForWorkers(c: Connection, calls: number): NodeJS.Timeout | undefined {
    const warn = this.o.warn;
    if (!warn) return undefined;
    const timer = setTimeout(() => {
      void c.shards
        .getWorkersCount()
        .then((workers) => {
          if (workers === 0)
            warn(
              `${calls} LLM calls wait in shard jobs on ${shownUrl(this.o.url)}, and no sop worker --shards is connected there: start one (docs/scale.md#one-step-over-many-workers)`,
            );
        })
        .catch(() => {}); // a Redis that went away fails the wait itself
    }, this.o.idleWarnMs ?? 10_000);
    timer.unref();
    return timer;
  }

  /** Why a step's barrier failed: the reason of its first shard that failed for good (a refusal says what to change). */
  private async whyFailed(c: Connection, id: string): Promise<string | undefined> {
    for (let n = 0; ; n++) {
      const job = await Job.fromId(c.shards, shardJobId(id, n));
      if (!job) return undefined;
      if (job.failedReason && (await job.getState()) === 'failed') return `shard ${n + 1} failed: ${job.failedReason}`;
    }
  }

  private connect(): Promise<Connection> {
    this.conn ??= (async () => {
      const connection = connectionOf(this.o.url, '--shard-over');
      const events = new QueueEvents(STEP_QUEUE, { connection });
      // the barrier is done once its shards are: this run completes it (any run on the Redis may)
      const barrier = new Worker(STEP_QUEUE, async () => ({ done: true }), { connection, concurrency: 16 });
      const c: Connection = {
        flows: new FlowProducer({ connection }),
        steps: new Queue(STEP_QUEUE, { connection }),
        shards: new Queue(SHARD_QUEUE, { connection }),
        events,
        barrier,
        redis: new Redis(connection),
      };
      let lastError: string | undefined;
      const onError = (e: Error) => (lastError = e.message);
      c.flows.on('error', onError);
      c.steps.on('error', onError);
      c.shards.on('error', onError);
      c.events.on('error', onError);
      c.barrier.on('error', onError);
      c.redis.on('error', onError);
      try {
        await reachRedis(
          Promise.all([events.waitUntilReady(), barrier.waitUntilReady(), c.steps.waitUntilReady()]),
          shownUrl(this.o.url),
          () => lastError,
        );
      } catch (e) {
        await closeAll(c);
        throw e;
      }
      return c;
    })();
    return this.conn;
  }

  async close(): Promise<void> {
    if (!this.conn) return;
    const c = await this.conn.catch(() => undefined);
    this.conn = undefined;
    if (c) await closeAll(c);
  }
}

async function closeAll(c: Connection): Promise<void> {
  await Promise.allSettled([c.barrier.close(), c.events.close(), c.flows.close(), c.steps.close(), c.shards.close()]);
  c.redis.disconnect();
}

/** The Redis URL without its user and password (for messages). */
function shownUrl(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
}

function shardCall(c: DispatchedCall): ShardCall {
  const r = c.request;
  return {
    key: c.key,
    messages: r.messages,
    model: r.model,
    ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
    ...(r.maxTokens !== undefined ? { maxTokens: r.maxTokens } : {}),
    meta: metaOf(r.meta),
  };
}

/** The promise, or the signal's reason once it aborts. */
function untilAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
