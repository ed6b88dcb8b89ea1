// Queued jobs are signed: `sop sweep --queue` (and `sop run --shard-over`, its shard jobs) adds an
// HMAC-SHA256 of each job (its id and its data) made with the shared secret SOP_QUEUE_SECRET, and `sop worker` refuses a job whose
// signature is missing or does not match. Anyone who can write to the Redis can add jobs; only
// who holds the secret can add jobs a worker runs (docs/scale.md).
import { EngineError } from '../errors.js';
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SECRET_VARIABLE = 'SOP_QUEUE_SECRET';
/** Shorter secrets are refused: they could be guessed, and the redactor does not hide very short values. */
export const MIN_QUEUE_SECRET_LENGTH = 16;

export class QueueSecretError extends EngineError {
  constructor(message: string) {
    super(message, 'QUEUE_SECRET');
    this.name = 'QueueSecretError';
  }
}

/** The shared secret from the environment, or one line saying how to set it. */
export function queueSecret(
  who: 'sop sweep --queue' | 'sop calibrate --queue' | 'sop worker' | 'sop run --shard-over',
  env: NodeJS.ProcessEnv = process.env,
): string {
  const s = env[SECRET_VARIABLE];
  if (s === undefined || s === '')
    throw new QueueSecretError(
      `${who} needs ${SECRET_VARIABLE}: set it to the same random value for the sweep and every worker ` +
        `(e.g. export ${SECRET_VARIABLE}=$(openssl rand -hex 32)); queued jobs are signed with it and workers refuse others`,
    );
  if (s.length < MIN_QUEUE_SECRET_LENGTH)
    throw new QueueSecretError(
      `${SECRET_VARIABLE} is ${s.length} characters long; use at least ${MIN_QUEUE_SECRET_LENGTH} random ones (e.g. openssl rand -hex 32)`,
    );
  return s;
}

/**
 * JSON with the keys of every object in order, as JSON.stringify writes values (an undefined
 * property is left out): the same text from the data the sweep signs and from what the worker
 * reads back out of Redis.
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  const o = v as Record<string, unknown>;
  const parts = Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined && typeof o[k] !== 'function')
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`);
  return `{${parts.join(',')}}`;
}

/** The signature of a job: over its id (a signed job copied under another id does not pass) and its data without `sig`. */
export function signJob(secret: string, jobId: string, data: Record<string, unknown>): string {
  const { sig: _sig, ...rest } = data;
  return createHmac('sha256', secret)
    .update(`sop-job\n${jobId}\n${canonicalJson(rest)}`)
    .digest('hex');
}

/** Why a job's signature is refused, or undefined when it matches. */
export function signatureProblem(secret: string, jobId: string, data: unknown): string | undefined {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return 'the job is not signed (its data is not an object)';
  const sig = (data as { sig?: unknown }).sig;
  if (sig === undefined) return `the job is not signed (no "sig"; queue runs with sop sweep --queue and the same ${SECRET_VARIABLE})`;
  if (typeof sig !== 'string' || !/^[0-9a-f]{64}$/.test(sig)) return 'the job\'s "sig" is not an HMAC-SHA256 in hex';
  const want = Buffer.from(signJob(secret, jobId, data as Record<string, unknown>), 'hex');
  if (!timingSafeEqual(want, Buffer.from(sig, 'hex')))
    return `the job's signature does not match: it was altered after it was queued, or signed with another ${SECRET_VARIABLE}`;
  return undefined;
}
