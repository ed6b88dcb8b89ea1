// A provider whose calls a signal (Ctrl-C) aborts: the call in flight, its retries and every
// later call end at once with a resumable error, so the run stops as `interrupted` without
// waiting for a server that may never answer.
import { setMaxListeners } from 'node:events';
import { LlmError, stepOver, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';

/** The LLM call was abandoned because the user stopped the run; `sop resume` makes it again. */
export class LlmInterruptedError extends LlmError {
  readonly resumable = true;
  constructor(message: string) {
    super(message);
    this.name = 'LlmInterruptedError';
  }
}

export class InterruptibleProvider implements LlmProvider {
  readonly id: string;
  get paid(): boolean | undefined {
    return this.inner.paid;
  }
  get free(): boolean | undefined {
    return this.inner.free;
  }
  get describe(): string | undefined {
    return this.inner.describe;
  }

  constructor(
    private readonly inner: LlmProvider,
    private readonly signal: AbortSignal,
    private readonly why = 'stopped by Ctrl-C while waiting for the LLM',
  ) {
    this.id = inner.id;
    // calls made at once (a population step) each listen to it while in flight, and leave it when done
    try {
      setMaxListeners(0, signal);
    } catch {
      // a signal Node does not count listeners of (another realm's): nothing to raise
    }
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

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    if (this.signal.aborted) throw new LlmInterruptedError(this.why);
    // A signal of this call's own, linked to the run's and the caller's and unlinked when the call
    // ends: the run's signal lives for the whole run, and listeners left on it would pile up.
    const call = new AbortController();
    const links = [this.signal, options.signal].filter((s): s is AbortSignal => s !== undefined);
    const abort = () => call.abort(links.find((s) => s.aborted)?.reason);
    for (const s of links) s.addEventListener('abort', abort, { once: true });
    if (options.signal?.aborted) abort();
    try {
      return await this.inner.chat(request, { ...options, signal: call.signal });
    } catch (err) {
      if (this.signal.aborted) throw new LlmInterruptedError(this.why);
      throw err;
    } finally {
      for (const s of links) s.removeEventListener('abort', abort);
    }
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
