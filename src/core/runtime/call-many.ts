// The LLM calls of a step made at once (a population step: one per acting agent). Each goes through
// the run's effects under its own key, so a journaled reply is reused and only the others are sent.
// How those are sent:
//   - directly, at most `concurrency` at once, started in the order given; with a straggler policy,
//     the calls still unanswered at the step's deadline are waited for, given up (their agent
//     takes the state's default action) or asked again, the first reply winning (`redraw`);
//   - or by a plugin's dispatch (the `dispatch` hook: a batch file, shards over workers), handed
//     every call no journal answered at once, once each call has either been answered from the
//     journal or reached the provider.
// Replies come back in the order of the calls, whatever order they arrived in; when a call failed,
// every other call is let settle first (none is left running), then the first failure in call
// order is thrown.
import { getMaxListeners, setMaxListeners } from 'node:events';
import type { CallMeta, ChatMessage, ChatOptions, ChatRequest, ChatResponse } from '../llm/types.js';
import type { LlmSettings } from '../../format/sop/types.js';

/** One call of a step. */
export interface ManyCall {
  messages: ChatMessage[];
  settings: LlmSettings;
  meta: CallMeta;
  /** Its effect key within the step (e.g. `STEP:AGENT`): names what the call is about, not when it started. */
  key: string;
}

/** What the step does with calls unanswered at its deadline. */
export interface Straggler {
  /** Milliseconds after the step's first call. */
  deadlineMs: number;
  /** wait: nothing; default: give them up (the caller substitutes its default); redraw: ask once more, the first reply wins. */
  then: 'wait' | 'default' | 'redraw';
}

/** A call's outcome: its reply, or `late` (given up at the deadline). */
export type ManyOutcome = { reply: string } | { late: true };

/** Which step the calls belong to (a dispatch names what it sends and journals after it). */
export interface StepRef {
  state: string;
  visit: number;
  step: number;
}

/** A call handed to a dispatch: its request as the provider would get it, and how to settle it. */
export interface DispatchedCall {
  key: string;
  request: ChatRequest;
  resolve(response: ChatResponse): void;
  reject(error: unknown): void;
}

/** Sends a step's calls another way than one request each (a plugin's `dispatch` hook). */
export interface CallDispatch {
  /** Names the way in logs (batch, shards). */
  readonly name: string;
  /**
   * Its calls outlive the process (a batch that a resumed run waits for again): they are not
   * journaled as started, so a resume after a kill does not count them as lost (paid twice).
   */
  readonly outlivesRun?: boolean;
  /** Settles every call (in any order); a throw rejects those it left unsettled. */
  send(calls: DispatchedCall[], step: StepRef, signal?: AbortSignal): Promise<void>;
}

/** Sends one request instead of the provider: the dispatch's queue. */
export type Via = (request: ChatRequest, options: ChatOptions) => Promise<ChatResponse>;

/** One call through the run's effects: `via` instead of the provider, `signal` instead of the run's. */
export type CallOne = (call: ManyCall, key: string, via?: Via, signal?: AbortSignal) => Promise<string>;

export interface CallManyOptions {
  step: StepRef;
  concurrency: number;
  dispatch?: CallDispatch;
  /** Applies to calls sent directly (a dispatch has its own waiting). */
  straggler?: Straggler;
  signal?: AbortSignal;
}

export async function callMany(one: CallOne, calls: readonly ManyCall[], o: CallManyOptions): Promise<ManyOutcome[]> {
  // each call in flight listens to the run's abort signal
  try {
    if (o.signal) setMaxListeners(Math.max(getMaxListeners(o.signal), (o.dispatch ? calls.length : o.concurrency) + 16), o.signal);
  } catch {
    // a signal Node does not count listeners of (another realm's)
  }
  const out: Array<ManyOutcome | undefined> = new Array<ManyOutcome | undefined>(calls.length);
  const failures: Array<{ at: number; error: unknown }> = [];
  if (o.dispatch) await dispatched(one, calls, o.dispatch, o, out, failures);
  else await direct(one, calls, o, out, failures);
  if (failures.length > 0) throw failures.sort((a, b) => a.at - b.at)[0]!.error;
  o.signal?.throwIfAborted();
  return out as ManyOutcome[];
}

/** At most `concurrency` at once, started in order; the straggler policy at the deadline. */
async function direct(
  one: CallOne,
  calls: readonly ManyCall[],
  o: CallManyOptions,
  out: Array<ManyOutcome | undefined>,
  failures: Array<{ at: number; error: unknown }>,
): Promise<void> {
  const policy = o.straggler && o.straggler.then !== 'wait' ? o.straggler : undefined;
  /** Calls started and not settled: what gives each up, and its end. */
  const running = new Map<number, { own: AbortController | undefined; ended: Promise<void> }>();
  let next = 0;
  let pastDeadline = false;
  const settle = (at: number, outcome: ManyOutcome) => {
    if (out[at] === undefined) out[at] = outcome;
  };
  const start = async (at: number, key: string): Promise<void> => {
    const own = policy ? new AbortController() : undefined;
    const signal = own ? (o.signal ? AbortSignal.any([o.signal, own.signal]) : own.signal) : o.signal;
    const ended = one(calls[at]!, key, undefined, signal).then(
      (reply) => settle(at, { reply }),
      (error: unknown) => {
        // a call given up at the deadline (or answered by its redraw) ends in its own abort
        if (out[at] === undefined && !own?.signal.aborted) failures.push({ at, error });
      },
    );
    running.set(at, { own, ended });
    await ended;
    running.delete(at);
  };
  const redraws: Array<Promise<void>> = [];
  let timer: NodeJS.Timeout | undefined;
  if (policy)
    timer = setTimeout(() => {
      pastDeadline = true;
      for (const [at, { own, ended }] of [...running]) {
        if (policy.then === 'default') {
          settle(at, { late: true });
          own?.abort(new Error('given up at the step deadline'));
        } else {
          const again = new AbortController();
          const signal = o.signal ? AbortSignal.any([o.signal, again.signal]) : again.signal;
          redraws.push(
            one(calls[at]!, `${calls[at]!.key}:redraw`, undefined, signal).then(
              (reply) => {
                settle(at, { reply });
                own?.abort(new Error('answered by its redraw'));
              },
              () => {}, // the first call's own outcome stands
            ),
          );
          // the first call answering first gives its redraw up
          void ended.then(() => again.abort(new Error('answered first')));
        }
      }
    }, policy.deadlineMs);
  const worker = async (): Promise<void> => {
    while (next < calls.length && !o.signal?.aborted && failures.length === 0) {
      const at = next++;
      if (pastDeadline && policy?.then === 'default') settle(at, { late: true });
      else await start(at, calls[at]!.key);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, calls.length)) }, worker));
    await Promise.all(redraws);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every call at once through the run's effects, each reaching `via` (the dispatch's queue) unless
 * the journal answered it; once every call has done one or the other, the queue goes to the dispatch.
 */
async function dispatched(
  one: CallOne,
  calls: readonly ManyCall[],
  dispatch: CallDispatch,
  o: CallManyOptions,
  out: Array<ManyOutcome | undefined>,
  failures: Array<{ at: number; error: unknown }>,
): Promise<void> {
  const queue: DispatchedCall[] = [];
  let early = 0; // settled without reaching the queue (a journaled reply, a refused call)
  let sent: Promise<void> | undefined;
  const flush = () => {
    if (sent || queue.length + early < calls.length) return;
    const batch = queue.slice();
    sent =
      batch.length === 0
        ? Promise.resolve()
        : dispatch.send(batch, o.step, o.signal).catch((error: unknown) => {
            for (const c of batch) c.reject(error); // those it settled stay settled
          });
  };
  await Promise.all(
    calls.map(async (call, at) => {
      let queued = false;
      const via: Via = (request) =>
        new Promise<ChatResponse>((resolve, reject) => {
          queued = true;
          let done = false;
          queue.push({
            key: call.key,
            request,
            resolve: (r) => (done ? undefined : ((done = true), resolve(r))),
            reject: (e) => (done ? undefined : ((done = true), reject(e))),
          });
          flush();
        });
      try {
        out[at] = { reply: await one(call, call.key, via, o.signal) };
      } catch (error) {
        failures.push({ at, error });
      } finally {
        if (!queued) {
          early++;
          flush();
        }
      }
    }),
  );
  await sent;
}
