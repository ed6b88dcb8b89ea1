// A cap on concurrent LLM calls: a provider wrapper with a FIFO limit (p-limit). One `sop run` makes
// one call at a time, so this matters when a program runs many simulations in one process and
// shares a provider (and a rate limit) between them.
import pLimit, { type LimitFunction } from 'p-limit';
import { LlmError, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';
import { DelegatingProvider } from './delegating.js';

/** A limit of calls at once (p-limit: waiters are served first in, first out). */
export function callLimit(limit: number): LimitFunction {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new LlmError(`the concurrency limit must be a whole number of at least 1 (got ${limit})`);
  }
  return pLimit(limit);
}

function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new LlmError('LLM call aborted while waiting for a free slot');
}

/** A provider that lets at most `limit` calls reach `inner` at the same time. */
export class LimitedProvider extends DelegatingProvider {
  /** The calls at once (`activeCount`) and waiting (`pendingCount`); a limit may be shared by providers. */
  readonly limit: LimitFunction;

  constructor(inner: LlmProvider, limit: number | LimitFunction) {
    super(inner);
    this.limit = typeof limit === 'number' ? callLimit(limit) : limit;
  }

  /** A call waits for a slot; aborting its signal while it waits rejects it at once, and it never reaches `inner`. */
  chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    let started = false;
    const queued = this.limit(() => {
      started = true;
      if (signal?.aborted) throw abortReason(signal); // its turn came after the abort: the slot passes on
      return this.inner.chat(request, options);
    });
    if (!signal) return queued;
    return new Promise<ChatResponse>((resolve, reject) => {
      const onAbort = () => {
        if (!started) reject(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      queued.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}

/**
 * Wrap `provider` so at most `maxConcurrency` of its calls run at once. Share the returned
 * provider between the runs that should share the limit. `undefined` returns `provider` as is.
 */
export function limitConcurrency(provider: LlmProvider, maxConcurrency: number | undefined): LlmProvider {
  return maxConcurrency === undefined ? provider : new LimitedProvider(provider, maxConcurrency);
}
