// A provider whose calls a signal (Ctrl-C) aborts: the call in flight, its retries and every
// later call end at once with a resumable error, so the run stops as `interrupted` without
// waiting for a server that may never answer.
import { LlmError, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';

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

  constructor(private readonly inner: LlmProvider, private readonly signal: AbortSignal, private readonly why = 'stopped by Ctrl-C while waiting for the LLM') {
    this.id = inner.id;
  }

  get position(): number | undefined { return this.inner.position; }
  seek(position: number): void { this.inner.seek?.(position); }

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    if (this.signal.aborted) throw new LlmInterruptedError(this.why);
    const signal = options.signal ? AbortSignal.any([options.signal, this.signal]) : this.signal;
    try {
      return await this.inner.chat(request, { ...options, signal });
    } catch (err) {
      if (this.signal.aborted) throw new LlmInterruptedError(this.why);
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
