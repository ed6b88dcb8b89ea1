// A cap on concurrent LLM calls: a provider wrapper with a FIFO semaphore. One `sop run` makes
// one call at a time, so this matters when a program runs many simulations in one process and
// shares a provider (and a rate limit) between them.
import { LlmError, stepOver, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';

/** A counting semaphore; waiters are served first in, first out. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new LlmError(`the concurrency limit must be a whole number of at least 1 (got ${limit})`);
    }
  }

  /** Slots in use. */
  get inUse(): number {
    return this.active;
  }
  /** Callers waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Wait for a slot; resolves to the function that gives it back (idempotent). Aborting `signal`
   * while waiting rejects with the signal's reason and leaves the queue as if never joined.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Run `fn` holding a slot. */
  async use<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next) next.grant();
      else this.active--;
    };
  }
}

function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new LlmError('LLM call aborted while waiting for a free slot');
}

/** A provider that lets at most `limit` calls reach `inner` at the same time. */
export class LimitedProvider implements LlmProvider {
  readonly id: string;
  get paid(): boolean | undefined {
    return this.inner.paid;
  }
  readonly semaphore: Semaphore;

  constructor(
    private readonly inner: LlmProvider,
    limit: number | Semaphore,
  ) {
    this.id = inner.id;
    this.semaphore = typeof limit === 'number' ? new Semaphore(limit) : limit;
  }

  get position(): number | undefined {
    return this.inner.position;
  }
  seek(position: number): void {
    this.inner.seek?.(position);
  }
  reused(request: ChatRequest, response: ChatResponse): void {
    stepOver(this.inner, request, response);
  }

  chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    return this.semaphore.use(() => this.inner.chat(request, options), options.signal);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}

/**
 * Wrap `provider` so at most `maxConcurrency` of its calls run at once. Share the returned
 * provider between the runs that should share the limit. `undefined` returns `provider` as is.
 */
export function limitConcurrency(provider: LlmProvider, maxConcurrency: number | undefined): LlmProvider {
  return maxConcurrency === undefined ? provider : new LimitedProvider(provider, maxConcurrency);
}
