// Shard jobs (docs/scale.md#one-step-over-many-workers): the LLM calls of one population step
// spread over `sop worker --shards` processes. `sop run --shard-over` adds one BullMQ flow per
// step: a parent job in STEP_QUEUE (the step's barrier) and one child job per shard of calls in
// SHARD_QUEUE, each signed with SOP_QUEUE_SECRET. A worker stores each reply as it comes in the
// step's reply hash (repliesKey), so a shard retried after its worker died skips the calls
// already answered; the run reads the replies there once the barrier is done.
//
// A job is untrusted input: it carries messages and call facts only. It cannot name a server, a
// key, a file or anything to run; its model name is used only when the worker allows it.
import { createHash } from 'node:crypto';
import { EngineError } from '../../shared/errors.js';
import type { CallMeta, ChatMessage, ChatResponse } from '../../core/llm/types.js';
import { signatureProblem } from '../../shared/util/job-signature.js';
import type { StepRef } from '../../core/runtime/call-many.js';
import { isObject } from '../../shared/util/is-object.js';

export const SHARD_QUEUE = 'sop-shards';
export const STEP_QUEUE = 'sop-shard-steps';
/** Calls per shard job unless told (--shard-size). */
export const DEFAULT_SHARD_SIZE = 1000;
/** Seconds a step's reply hash is kept when the run that asked never reads it (it died). */
export const REPLIES_TTL_S = 7 * 24 * 3600;

/** One call of a shard: what the worker's provider is asked. */
export interface ShardCall {
  /** The call's key in its step (e.g. `3:a17`). */
  key: string;
  messages: ChatMessage[];
  model: string;
  temperature?: number;
  maxTokens?: number;
  meta: CallMeta;
}

export interface ShardJobData {
  /** Version of the job format. */
  v: 1;
  /** The step's id (stepId): names its reply hash. */
  step: string;
  /** Which shard of the step (0-based). */
  shard: number;
  calls: ShardCall[];
  /** HMAC-SHA256 of the job id and the rest of the data (src/shared/util/job-signature.ts). */
  sig: string;
}

/** A reply as a worker stores it: the provider's answer, or why the call failed. */
export type StoredReply = Pick<ChatResponse, 'content' | 'usage' | 'model' | 'finishReason'> | { error: string };

/** What a shard job returns. */
export interface ShardSummary {
  shard: number;
  /** Calls this attempt asked the worker's provider. */
  asked: number;
  /** Calls already answered by an earlier attempt (a worker that died). */
  reused: number;
  failed: number;
  worker: string;
}

/** A step's id: the same run, state, visit and step give the same id (its jobs and its reply hash). */
export function stepId(runId: string, step: StepRef): string {
  return createHash('sha256').update(`${runId}\u0000${step.state}\u0000${step.visit}\u0000${step.step}`).digest('hex').slice(0, 24);
}

export const repliesKey = (step: string): string => `sop-shards:replies:${step}`;
export const barrierJobId = (step: string): string => `step-${step}`;
export const shardJobId = (step: string, shard: number): string => `shard-${step}-${shard}`;

/** Splits calls into shards of `size`, in call order. */
export function shardsOf<T>(calls: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < calls.length; i += size) out.push(calls.slice(i, i + size));
  return out;
}

/** The meta fields a provider (or the mock) reads; nothing else of a job's meta is kept. */
const META_FIELDS = [
  'purpose',
  'state',
  'agent',
  'role',
  'turn',
  'turnInState',
  'candidates',
  'judgeKeys',
  'extractWord',
  'commands',
  'tools',
  'population',
  'argChoices',
] as const satisfies ReadonlyArray<keyof CallMeta>;

export function metaOf(meta: CallMeta): CallMeta {
  const out: Record<string, unknown> = {};
  for (const f of META_FIELDS) if (meta[f] !== undefined) out[f] = meta[f];
  return out as unknown as CallMeta;
}

export class ShardJobRefused extends EngineError {
  constructor(message: string) {
    super(message, 'JOB_REFUSED');
    this.name = 'ShardJobRefused';
  }
}

const PURPOSES = new Set(['agent', 'judge', 'speaker', 'summary', 'survey', 'tool']);
const ROLES = new Set(['system', 'user', 'assistant']);

/**
 * A shard job's data checked: its signature (over its id), then its shape. Throws ShardJobRefused
 * with one line saying what is wrong.
 */
export function checkShardJob(secret: string, jobId: string, data: unknown): ShardJobData {
  const bad = signatureProblem(secret, jobId, data);
  if (bad) throw new ShardJobRefused(bad);
  const d = data as Record<string, unknown>;
  if (d.v !== 1) throw new ShardJobRefused(`the shard job's format version is ${JSON.stringify(d.v)}; this worker reads version 1`);
  if (typeof d.step !== 'string' || !/^[0-9a-f]{24}$/.test(d.step)) throw new ShardJobRefused('the shard job\'s "step" is not a step id');
  if (!Number.isInteger(d.shard) || (d.shard as number) < 0) throw new ShardJobRefused('the shard job\'s "shard" is not a whole number');
  if (!Array.isArray(d.calls) || d.calls.length === 0) throw new ShardJobRefused('the shard job has no "calls"');
  const keys = new Set<string>();
  d.calls.forEach((c: unknown, n) => {
    const where = `calls/${n}`;
    if (!isObject(c)) throw new ShardJobRefused(`${where} is not an object`);
    if (typeof c.key !== 'string' || c.key === '' || c.key.length > 500) throw new ShardJobRefused(`${where}/key is not a call key`);
    if (keys.has(c.key)) throw new ShardJobRefused(`${where}/key "${c.key.slice(0, 80)}" comes twice`);
    keys.add(c.key);
    if (typeof c.model !== 'string' || c.model === '') throw new ShardJobRefused(`${where}/model is not a model name`);
    if (c.temperature !== undefined && typeof c.temperature !== 'number') throw new ShardJobRefused(`${where}/temperature is not a number`);
    if (c.maxTokens !== undefined && !Number.isInteger(c.maxTokens)) throw new ShardJobRefused(`${where}/maxTokens is not a whole number`);
    if (!Array.isArray(c.messages) || c.messages.length === 0) throw new ShardJobRefused(`${where}/messages is not a list of messages`);
    c.messages.forEach((m: unknown, k) => {
      if (!isObject(m) || typeof m.role !== 'string' || !ROLES.has(m.role) || typeof m.content !== 'string')
        throw new ShardJobRefused(`${where}/messages/${k} is not a message (role system, user or assistant, and a text content)`);
    });
    const meta = c.meta;
    if (!isObject(meta) || typeof meta.purpose !== 'string' || !PURPOSES.has(meta.purpose) || typeof meta.state !== 'string')
      throw new ShardJobRefused(`${where}/meta is not a call's facts (purpose, state, turn)`);
    if (typeof meta.turn !== 'number') throw new ShardJobRefused(`${where}/meta/turn is not a number`);
  });
  return d as unknown as ShardJobData;
}
