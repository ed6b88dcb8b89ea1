// Retries with exponential backoff and jitter, honouring Retry-After, drawn from a budget
// shared by every call of a run.
import { EngineError } from '../../shared/errors.js';

export interface RetryPolicy {
  /** Retries of one call. */
  maxRetries: number;
  /** First backoff; doubles each retry. */
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * The longest wait a server's Retry-After can ask for before a retry (default 60 s): the
   * provider sets it to the run's --timeout (docs/scale.md: a pause lasts at most the run's
   * --timeout), so `retry-after: 999999` does not hold a call for minutes.
   */
  maxRetryAfterMs?: number;
}

/** The longest Retry-After honoured unless the policy says less. */
export const MAX_RETRY_AFTER_MS = 60_000;

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 20_000 };

/** Retries a run may spend for every call it makes, beyond its base budget (see RetryBudget). */
export const RETRIES_PER_CALL = 0.5;

/**
 * Retries left for a whole run; every retry of every call spends one. The budget is `base`, plus
 * `perCall` for every call made so far (`counted()`): a step of 2,000 calls that meets a rate
 * limit retries within a budget its size, while a run of a few calls keeps a small one.
 */
export class RetryBudget {
  used = 0;
  /** Calls made so far (each counted once, however many times it is retried). */
  calls = 0;
  constructor(
    readonly base: number,
    readonly perCall = 0,
  ) {}
  /** The budget now: base + perCall x calls made. */
  get total(): number {
    return this.base + Math.floor(this.perCall * this.calls);
  }
  /** One more call was made. */
  counted(): void {
    this.calls++;
  }
  get left(): number {
    return Math.max(0, this.total - this.used);
  }
  take(): boolean {
    if (this.used >= this.total) return false;
    this.used++;
    return true;
  }
}

export interface RetryableFailure {
  retryable: boolean;
  /** Server's requested wait (from Retry-After), if any. */
  retryAfterMs?: number;
  /** One-line description for logs and the final error. */
  reason: string;
}

export function backoffDelay(
  attempt: number,
  policy: RetryPolicy,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined && retryAfterMs >= 0)
    return Math.min(retryAfterMs, policy.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS);
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  // "Full jitter" between half and the whole delay keeps clients from retrying in lockstep.
  return Math.round(exp / 2 + (random() * exp) / 2);
}

/** Parse Retry-After (seconds or an HTTP date) and the non-standard retry-after-ms. */
export function parseRetryAfter(headers: { get(name: string): string | null } | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = headers.get('retry-after');
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export interface RetryHooks {
  classify(err: unknown): RetryableFailure;
  onRetry?(info: { attempt: number; delayMs: number; reason: string }): void;
  signal?: AbortSignal;
}

export class RetriesExhaustedError extends EngineError {
  constructor(
    message: string,
    readonly budgetExhausted: boolean,
  ) {
    super(message, 'RETRIES_EXHAUSTED');
    this.name = 'RetriesExhaustedError';
  }
}

export async function withRetries<T>(
  fn: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  budget: RetryBudget,
  hooks: RetryHooks,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      const failure = hooks.classify(err);
      if (!failure.retryable) throw err;
      if (attempt >= policy.maxRetries) {
        throw new RetriesExhaustedError(`${failure.reason}; gave up after ${attempt + 1} attempts`, false);
      }
      if (!budget.take()) {
        throw new RetriesExhaustedError(`${failure.reason}; the run's retry budget (${budget.total}) is spent`, true);
      }
      const delayMs = backoffDelay(attempt, policy, failure.retryAfterMs);
      hooks.onRetry?.({ attempt: attempt + 1, delayMs, reason: failure.reason });
      await sleep(delayMs, hooks.signal);
    }
  }
}
