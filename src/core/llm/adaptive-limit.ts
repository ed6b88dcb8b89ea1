// The gate every attempt of an LLM call to one server goes through (docs/scale.md#adaptive-concurrency):
// at most `limit` attempts at once, the limit moved by AIMD (src/core/llm/aimd.ts) from each answer's
// status and latency, and a pause shared by every call when an answer says to wait (retry-after,
// an exhausted x-ratelimit quota: src/core/llm/rate-headers.ts), capped at the run's timeout. Waiters
// are served first in, first out. With a limit shared between processes (`sop worker
// --shared-limit`), an attempt admitted here also takes a slot of that limit.
import { Aimd, type AimdChange, type AimdSettings } from './aimd.js';
import { admissionWait, type HeaderGetter } from './rate-headers.js';
import { LlmError } from './types.js';

/** One answer (or a failure without one: status 0), seen where the HTTP response arrives. */
export interface CallObservation {
  status: number;
  /** When the request was sent, and when its answer's headers (or its failure) came: Date.now() ms. */
  sentAt: number;
  at: number;
  headers?: HeaderGetter;
}

/** What the openai provider needs of a gate: a slot for each attempt, and every answer. */
export interface CallGate {
  run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  observe(o: CallObservation): void;
}

/** A limit shared with other processes: `fn` runs once a slot of it is free. */
export interface SharedLimit {
  run<T>(fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A change of the limit, for the run's log: the `concurrency` event. */
export interface LimitChange extends AimdChange {
  endpoint: string;
  inFlight: number;
}

export interface GateOptions extends AimdSettings {
  /** The server, for the log. */
  endpoint: string;
  /** The longest shared pause one answer can ask for (the run's --timeout). */
  maxPauseMs: number;
  /** A change of the limit: every decrease and slow-start doubling, an additive increase at most once per `reportEveryMs`. */
  onChange?: (c: LimitChange) => void;
  reportEveryMs?: number;
  shared?: SharedLimit;
  now?: () => number;
}

export class AdaptiveGate implements CallGate {
  readonly aimd: Aimd;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  private pausedUntil = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastReport = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;

  constructor(private readonly o: GateOptions) {
    this.aimd = new Aimd(o);
    this.now = o.now ?? Date.now;
  }

  get limit(): number {
    return this.aimd.limit;
  }
  get inFlight(): number {
    return this.active;
  }
  get queued(): number {
    return this.waiting.length;
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.admit(signal);
    try {
      return await (this.o.shared ? this.o.shared.run(fn) : fn());
    } finally {
      this.active--;
      this.pump();
    }
  }

  observe(x: CallObservation): void {
    const wait = Math.min(admissionWait(x.headers, x.at), this.o.maxPauseMs);
    if (wait > 0) this.pausedUntil = Math.max(this.pausedUntil, x.at + wait);
    const change = this.aimd.observe(x);
    if (change) this.report(change, x.at);
    this.pump();
  }

  private report(change: AimdChange, at: number): void {
    if (!this.o.onChange) return;
    if (change.reason === 'latency holds' && at - this.lastReport < (this.o.reportEveryMs ?? 1000)) return;
    this.lastReport = at;
    this.o.onChange({ ...change, endpoint: this.o.endpoint, inFlight: this.active });
  }

  private admit(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.waiting.length === 0 && this.free()) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
      this.pump();
    });
  }

  private free(): boolean {
    return this.active < this.aimd.limit && this.now() >= this.pausedUntil;
  }

  /** Lets waiters in while there is room; during a pause, wakes up when it ends. */
  private pump(): void {
    while (this.waiting.length > 0 && this.free()) {
      this.active++;
      this.waiting.shift()!();
    }
    const left = this.pausedUntil - this.now();
    if (this.waiting.length > 0 && left > 0 && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, left);
    }
  }
}

function abortReason(signal: AbortSignal): Error {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new LlmError('LLM call aborted while waiting for a free slot');
}

/** A change of the limit as the run's `concurrency` event. */
export function concurrencyEvent(c: LimitChange): {
  type: 'concurrency';
  endpoint: string;
  limit: number;
  previous: number;
  reason: string;
  in_flight: number;
} {
  return { type: 'concurrency', endpoint: c.endpoint, limit: c.limit, previous: c.previous, reason: c.reason, in_flight: c.inFlight };
}

/**
 * A fetch that tells `gate` the status, headers and time of every answer, and every failure
 * without one (status 0; not a call the caller aborted).
 */
export function observedFetch(inner: typeof fetch, gate: Pick<CallGate, 'observe'>): typeof fetch {
  return async (input, init) => {
    const sentAt = Date.now();
    try {
      const res = await inner(input, init);
      gate.observe({ status: res.status, sentAt, at: Date.now(), headers: res.headers });
      return res;
    } catch (err) {
      if (!init?.signal?.aborted) gate.observe({ status: 0, sentAt, at: Date.now() });
      throw err;
    }
  };
}
