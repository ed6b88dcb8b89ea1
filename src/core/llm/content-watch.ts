// The bounds of one streamed attempt, counted in content, not bytes. The fetch wrapper
// (watched-fetch.ts) sees bytes: an SSE comment (`: keep-alive`, as proxies send) or an empty
// delta re-arms a byte timer, and a reply fed one byte a second never ends. Here the timer is
// re-armed only by a chunk that carries something of the reply (text, reasoning, a piece of a
// tool call, the finish reason, the usage), and a deadline bounds the whole attempt however
// steadily it trickles. Either ends the attempt with a retried ReplyFaultError naming the server.
import { ReplyFaultError, seconds } from './reply-errors.js';
import { isObject } from '../../shared/util/is-object.js';

/** How many --timeout a streamed attempt may take in all, from its request to its last chunk. */
export const STREAM_DEADLINE_FACTOR = 10;
/**
 * How many attempt deadlines the streamed attempts of one call may take in all (the waits between
 * them not counted): a server that trickles content steadily is retried, and the call still ends.
 */
export const CALL_DEADLINE_ATTEMPTS = 3;

export interface ContentWatchOptions {
  /** --timeout: the longest wait for new content once the answer has started. */
  idleMs: number;
  /** The longest a whole streamed attempt may take (default STREAM_DEADLINE_FACTOR x idleMs). */
  deadlineMs?: number;
  /** What the deadline is, for the message ("10 x --timeout 3 s"). */
  deadlineWhat?: string;
  /** The server, for messages. */
  endpoint: string;
  /** The caller's signal (Ctrl-C): aborts the attempt as well. */
  signal?: AbortSignal;
}

/** Whether a chunk of a chat completion stream carries any of the reply (an empty delta does not). */
export function chunkHasContent(chunk: unknown): boolean {
  if (!isObject(chunk)) return false;
  if (isObject(chunk.usage) || isObject(chunk.error)) return true;
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  for (const c of choices) {
    if (!isObject(c)) continue;
    if (typeof c.finish_reason === 'string' && c.finish_reason) return true;
    const delta = isObject(c.delta) ? c.delta : {};
    for (const [k, v] of Object.entries(delta)) {
      if (k === 'role') continue;
      if (typeof v === 'string' && v !== '') return true; // content, reasoning_content, refusal, ...
      if (Array.isArray(v) && v.length > 0) return true; // tool_calls
    }
  }
  return false;
}

export class ContentWatch {
  private readonly ctrl = new AbortController();
  private idle: ReturnType<typeof setTimeout> | undefined;
  private readonly deadline: ReturnType<typeof setTimeout>;
  private readonly deadlineMs: number;
  private failure: ReplyFaultError | undefined;
  private readonly onOuterAbort = () => this.ctrl.abort(this.o.signal?.reason);

  /** The deadline runs from here (the request is about to be sent). */
  constructor(private readonly o: ContentWatchOptions) {
    this.deadlineMs = o.deadlineMs ?? STREAM_DEADLINE_FACTOR * o.idleMs;
    if (o.signal?.aborted) this.ctrl.abort(o.signal.reason);
    else o.signal?.addEventListener('abort', this.onOuterAbort, { once: true });
    this.deadline = setTimeout(() => {
      const what =
        o.deadlineWhat ?? (o.deadlineMs === undefined ? `${STREAM_DEADLINE_FACTOR} x --timeout ${seconds(o.idleMs)}` : 'its deadline');
      this.fail(`${o.endpoint} did not finish its streamed answer within ${seconds(this.deadlineMs)} (${what})`);
    }, this.deadlineMs);
  }

  /** The signal to send the request with: aborted by the caller, a silence or the deadline. */
  get signal(): AbortSignal {
    return this.ctrl.signal;
  }

  /** Why the watch ended the attempt, if it did. */
  get error(): ReplyFaultError | undefined {
    return this.failure;
  }

  /** The answer has started (its headers came): the wait for content begins. */
  started(): void {
    this.arm();
  }

  /** A chunk arrived: content re-arms the silence timer, anything else does not. */
  saw(chunk: unknown): void {
    if (chunkHasContent(chunk)) this.arm();
  }

  stop(): void {
    clearTimeout(this.idle);
    clearTimeout(this.deadline);
    this.o.signal?.removeEventListener('abort', this.onOuterAbort);
  }

  private arm(): void {
    if (this.failure) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(
      () =>
        this.fail(
          `${this.o.endpoint} sent no new content for ${seconds(this.o.idleMs)} in the middle of its answer ` +
            `(keep-alive comments and empty chunks do not count; --timeout ${seconds(this.o.idleMs)})`,
        ),
      this.o.idleMs,
    );
  }

  private fail(message: string): void {
    if (this.failure || this.ctrl.signal.aborted) return;
    this.failure = new ReplyFaultError('stalled', message);
    this.stop();
    this.ctrl.abort(this.failure);
  }
}

/**
 * The deadline of one call's streamed attempts together: each attempt gets its own deadline, or
 * what is left of the call's when that is less; the call gives up once less than one --timeout
 * is left. Only the attempts' own time counts (request to last chunk), not the backoff between.
 */
export class CallDeadline {
  private spentMs = 0;
  /** The deadline given to the attempt under way (an attempt counts at most that). */
  private currentMs = 0;
  readonly callMs: number;

  constructor(
    readonly idleMs: number,
    private readonly attemptMs?: number,
  ) {
    this.callMs = CALL_DEADLINE_ATTEMPTS * (attemptMs ?? STREAM_DEADLINE_FACTOR * idleMs);
  }

  private get attemptWhat(): string {
    return this.attemptMs === undefined ? `${STREAM_DEADLINE_FACTOR} x --timeout ${seconds(this.idleMs)}` : 'its deadline';
  }

  /** What a call's streamed answers may take in all, in words. */
  get callWhat(): string {
    return `a call's streamed answers may take ${seconds(this.callMs)} in all (${CALL_DEADLINE_ATTEMPTS} x ${this.attemptWhat})`;
  }

  /** The next attempt's deadline, and what it is. */
  next(): { deadlineMs: number; deadlineWhat: string } {
    const attempt = this.attemptMs ?? STREAM_DEADLINE_FACTOR * this.idleMs;
    const left = Math.max(0, this.callMs - this.spentMs);
    this.currentMs = Math.min(left, attempt);
    return left < attempt
      ? { deadlineMs: left, deadlineWhat: `what was left of the call: ${this.callWhat}` }
      : { deadlineMs: attempt, deadlineWhat: this.attemptWhat };
  }

  /** An attempt took this long (its deadline at most: the timer's own lateness is not counted). */
  spend(ms: number): void {
    this.spentMs += Math.min(ms, this.currentMs);
  }

  /** Whether too little is left for another attempt (less than one --timeout). */
  get spent(): boolean {
    return this.callMs - this.spentMs < this.idleMs;
  }
}
