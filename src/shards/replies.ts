// A step's reply hash in Redis (docs/scale.md#one-step-over-many-workers): one field per call key,
// written by the workers as each reply comes, read by the run once the step's barrier is done.
// A reply stored is never asked again: a shard retried after its worker died skips it.
import type { Redis } from 'ioredis';
import { repliesKey, REPLIES_TTL_S, type StoredReply } from './job.js';

/** Keep one call's reply (the hash lives REPLIES_TTL_S after its last reply, should the run never read it). */
export async function storeReply(redis: Redis, step: string, key: string, reply: StoredReply): Promise<void> {
  await redis.multi().hset(repliesKey(step), key, JSON.stringify(reply)).expire(repliesKey(step), REPLIES_TTL_S).exec();
}

/** Of these call keys, those answered already (a failed call is asked again). */
export async function answeredKeys(redis: Redis, step: string, keys: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    const values = await redis.hmget(repliesKey(step), ...batch);
    batch.forEach((k, n) => {
      const v = values[n];
      if (v != null && !('error' in (parseReply(v) ?? { error: '' }))) out.add(k);
    });
  }
  return out;
}

/** The stored replies of these keys (a key without one is missing from the map). */
export async function readReplies(redis: Redis, step: string, keys: readonly string[]): Promise<Map<string, StoredReply>> {
  const out = new Map<string, StoredReply>();
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000);
    const values = await redis.hmget(repliesKey(step), ...batch);
    batch.forEach((k, n) => {
      const v = values[n];
      const reply = v == null ? undefined : parseReply(v);
      if (reply) out.set(k, reply);
    });
  }
  return out;
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
