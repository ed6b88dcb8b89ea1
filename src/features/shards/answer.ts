// A shard job answered by `sop worker --shards` (docs/scale.md#one-step-over-many-workers): each
// call asked of the worker's own provider (its --llm, --base-url and key; the job names no server),
// at most `concurrency` at once, and each reply stored in the step's reply hash as it comes. The
// calls an earlier attempt answered (a worker killed mid-shard) are not asked again.
import type { ChatMessage, LlmProvider } from '../../core/llm/types.js';
import { metaOf, ShardJobRefused, type ShardJobData, type ShardSummary, type StoredReply } from './job.js';
import { answeredKeys, storeReply } from './replies.js';
import type { Redis } from 'ioredis';

/** Which model a shard's calls may ask for (the job's model name is a request, not an order). */
export interface ShardModelPolicy {
  /** --model: every call is asked of this model, whatever the job names. */
  model?: string;
  /** --allow-model: model names a job may ask for ('*': any). */
  allow: readonly string[];
  /** Every name is accepted (the mock: nothing is sent anywhere, nothing is paid). */
  anyModel?: boolean;
}

/** The model a call is asked of, or ShardJobRefused saying how to allow the one it names. */
export function modelFor(policy: ShardModelPolicy, asked: string): string {
  if (policy.model !== undefined) return policy.model;
  if (policy.anyModel || policy.allow.includes('*') || policy.allow.includes(asked)) return asked;
  throw new ShardJobRefused(
    `the shard asks for model "${asked.slice(0, 100)}", which this worker does not allow (start it with --allow-model NAME, or --model NAME for every call)`,
  );
}

export interface AnswerOptions {
  provider: LlmProvider;
  redis: Redis;
  /** SOP_QUEUE_SECRET: each reply stored is signed with it. */
  secret: string;
  /** Calls asked at once. */
  concurrency: number;
  policy: ShardModelPolicy;
  /** Names the worker in the summary. */
  worker: string;
  /** Secrets out of every reply and error stored (the worker's keys, SOP_QUEUE_SECRET, passwords in URLs). */
  redact: (text: string) => string;
  signal?: AbortSignal;
}

export async function answerShard(data: ShardJobData, o: AnswerOptions): Promise<ShardSummary> {
  // every model is judged before anything is sent
  const models = data.calls.map((c) => modelFor(o.policy, c.model));
  const done = await answeredKeys(
    o.redis,
    o.secret,
    data.step,
    data.calls.map((c) => c.key),
  );
  const todo = data.calls.map((_, n) => n).filter((n) => !done.has(data.calls[n]!.key));
  let next = 0;
  let failed = 0;
  const ask = async (): Promise<void> => {
    while (next < todo.length) {
      o.signal?.throwIfAborted();
      const n = todo[next++]!;
      const call = data.calls[n]!;
      let reply: StoredReply;
      try {
        const res = await o.provider.chat(
          {
            messages: call.messages.map(messageOf),
            model: models[n]!,
            ...(call.temperature !== undefined ? { temperature: call.temperature } : {}),
            ...(call.maxTokens !== undefined ? { maxTokens: call.maxTokens } : {}),
            meta: metaOf(call.meta),
          },
          { signal: o.signal },
        );
        reply = {
          content: res.content,
          usage: res.usage,
          ...(res.model !== undefined ? { model: res.model } : {}),
          ...(res.finishReason !== undefined ? { finishReason: res.finishReason } : {}),
        };
      } catch (e) {
        if (o.signal?.aborted) throw e; // the worker stops: the shard goes back to the queue
        failed++;
        const message = e instanceof Error ? e.message : String(e);
        reply = { error: o.redact(message).slice(0, 2000) }; // redacted whole before it is cut
      }
      await storeReply(o.redis, o.secret, data.step, call.key, reply, o.redact);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, todo.length)) }, ask));
  return { shard: data.shard, asked: todo.length, reused: done.size, failed, worker: o.worker };
}

/** A message of a job: its role and text (and the native form a provider with tools sends, when there is one). */
function messageOf(m: ChatMessage): ChatMessage {
  return { role: m.role, content: m.content, ...(m.native && typeof m.native === 'object' ? { native: m.native } : {}) };
}
