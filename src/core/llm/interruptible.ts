// A provider whose calls a signal (Ctrl-C) aborts: the call in flight, its retries and every
// later call end at once with a resumable error, so the run stops as `interrupted` without
// waiting for a server that may never answer.
import { LlmError, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';
import { DelegatingProvider } from './delegating.js';

/** The LLM call was abandoned because the user stopped the run; `sop resume` makes it again. */
export class LlmInterruptedError extends LlmError {
  readonly resumable = true;
  constructor(message: string) {
    super(message);
    this.name = 'LlmInterruptedError';
  }
}

/**
 * The calls in flight under each signal, aborted together by one listener on it: a listener of
 * its own per call would make each call cost as much as the calls already in flight (an
 * EventTarget looks through its listeners on every add and remove), and a step makes thousands
 * at once.
 */
const inFlight = new WeakMap<AbortSignal, Set<AbortController>>();

/** Aborts `call` when `signal` aborts, until the returned function unlinks it. */
function link(signal: AbortSignal, call: AbortController): () => void {
  if (signal.aborted) {
    call.abort(signal.reason);
    return () => {};
  }
  let calls = inFlight.get(signal);
  if (!calls) {
    const set = new Set<AbortController>();
    calls = set;
    inFlight.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        for (const c of set) c.abort(signal.reason);
        set.clear();
      },
      { once: true },
    );
  }
  calls.add(call);
  const held = calls;
  return () => held.delete(call);
}

export class InterruptibleProvider extends DelegatingProvider {
  constructor(
    inner: LlmProvider,
    private readonly signal: AbortSignal,
    private readonly why = 'stopped by Ctrl-C while waiting for the LLM',
  ) {
    super(inner);
  }

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    if (this.signal.aborted) throw new LlmInterruptedError(this.why);
    // A signal of this call's own, linked to the run's and the caller's and unlinked when the call
    // ends: the run's signal lives for the whole run, and links left on it would pile up.
    const call = new AbortController();
    const unlinkRun = link(this.signal, call);
    const unlinkCaller = options.signal && options.signal !== this.signal ? link(options.signal, call) : undefined;
    try {
      return await this.inner.chat(request, { ...options, signal: call.signal });
    } catch (err) {
      if (this.signal.aborted) throw new LlmInterruptedError(this.why);
      throw err;
    } finally {
      unlinkRun();
      unlinkCaller?.();
    }
  }
}
