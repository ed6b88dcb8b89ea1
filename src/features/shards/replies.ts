// A step's reply hash in Redis (docs/scale.md#one-step-over-many-workers): one field per call key,
// written by the workers as each reply comes, read by the run once the step's barrier is done.
// A reply stored is never asked again: a shard retried after its worker died skips it. Each reply
// is signed with SOP_QUEUE_SECRET (over its step, its call key and its content), so one written
// into Redis by anyone else is refused by the run, and asked again by a retried shard. A reply is
// redacted before it is signed and stored (an LLM server may echo a key): no secret of the worker
// goes to Redis, where a hash outlives a killed run by days.
import type { Redis } from 'ioredis';
import { signatureProblem, signJob } from '../../shared/util/job-signature.js';
import { redactDeep } from '../../shared/util/redact.js';
import { repliesKey, REPLIES_TTL_S, type StoredReply } from './job.js';

/** What a reply's signature is over besides its content: its step and call key. */
const replyId = (step: string, key: string): string => `reply:${step}:${key}`;

/** A reply as it is stored: JSON, signed over its step, its call key and its content. */
export function signedReply(secret: string, step: string, key: string, reply: StoredReply): string {
  return JSON.stringify({ ...reply, sig: signJob(secret, replyId(step, key), reply) });
}

/**
 * Keep one call's reply, its secrets redacted (the hash lives REPLIES_TTL_S after its last reply,
 * should the run never read it).
 */
export async function storeReply(
  redis: Redis,
  secret: string,
  step: string,
  key: string,
  reply: StoredReply,
  redact: (text: string) => string,
): Promise<void> {
  await redis
    .multi()
    .hset(repliesKey(step), key, signedReply(secret, step, key, redactDeep(reply, redact)))
    .expire(repliesKey(step), REPLIES_TTL_S)
    .exec();
}

/** Of these call keys, those answered already (a failed call, or a reply not signed, is asked again). */
export async function answeredKeys(redis: Redis, secret: string, step: string, keys: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const [k, reply] of await readReplies(redis, secret, step, keys)) if (!('error' in reply)) out.add(k);
  return out;
}

/** The stored replies of these keys: a key without one is missing from the map, one not signed is an error saying so. */
export async function readReplies(redis: Redis, secret: string, step: string, keys: readonly string[]): Promise<Map<string, StoredReply>> {
  const out = new Map<string, StoredReply>();
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    const values = await redis.hmget(repliesKey(step), ...batch);
    batch.forEach((k, n) => {
      const v = values[n];
      if (v != null) out.set(k, verifiedReply(secret, step, k, v));
    });
  }
  return out;
}

/** A stored reply whose signature matches, else an error saying what is wrong with it. */
export function verifiedReply(secret: string, step: string, key: string, text: string): StoredReply {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { error: 'its stored reply is not JSON' };
  }
  const bad = signatureProblem(secret, replyId(step, key), data);
  if (bad)
    return {
      error:
        "its stored reply is refused: it is not signed with this run's SOP_QUEUE_SECRET (written into Redis by something else, or altered there)",
    };
  return parseReply(text) ?? { error: 'its stored reply is not a reply (content and usage)' };
}

export async function dropReplies(redis: Redis, step: string): Promise<void> {
  await redis.del(repliesKey(step));
}

/** A stored reply read back (what is in Redis is checked like any input): undefined when it is not one. */
export function parseReply(text: string): StoredReply | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object') return undefined;
  const r = v as Record<string, unknown>;
  if (typeof r.error === 'string') return { error: r.error };
  const u = r.usage as Record<string, unknown> | undefined;
  if (typeof r.content !== 'string' || !u || typeof u.promptTokens !== 'number' || typeof u.completionTokens !== 'number') return undefined;
  return {
    content: r.content,
    usage: {
      promptTokens: u.promptTokens,
      completionTokens: u.completionTokens,
      ...(typeof u.cachedTokens === 'number' ? { cachedTokens: u.cachedTokens } : {}),
    },
    ...(typeof r.model === 'string' ? { model: r.model } : {}),
    ...(typeof r.finishReason === 'string' ? { finishReason: r.finishReason } : {}),
  };
}
