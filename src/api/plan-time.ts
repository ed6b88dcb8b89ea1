// The wall time of a planned run (`sop plan`, docs/plan.md) from a throughput profile: how many
// calls a population step makes at once (--concurrency), how long one call takes (--latency),
// and optionally how fast a reply is written (--tokens-per-second). Pure.
//
// A call takes `latency + completion tokens / tokens per second` (the second term only with a
// rate). Turn-based calls go one after another. A population step's agent and survey calls go
// at once, `concurrency` at a time: the step takes ceil(calls / concurrency) rounds of the mean
// call time (with a fixed latency: ceil(calls / concurrency) x latency); its judge call follows.
import { EngineError } from '../shared/errors.js';
import { DEFAULT_CONCURRENCY } from '../features/population/state-spec.js';
import type { CallRecord } from './plan-calls.js';

export interface ThroughputProfile {
  /** LLM calls a population step makes at once. */
  concurrency: number;
  /** Seconds of one call (with tokensPerSecond: before its first token). */
  latency: number;
  /** Completion tokens a second of one call; absent: a call takes `latency` whatever its size. */
  tokensPerSecond?: number;
}

export const DEFAULT_LATENCY_SECONDS = 1.5;

/** The profile of the flags, with the defaults filled in (latency 1.5 s, or 0 s beside a rate). */
export function throughputProfile(o: { concurrency?: number; latency?: string; tokensPerSecond?: number }): ThroughputProfile {
  const concurrency = o.concurrency ?? DEFAULT_CONCURRENCY;
  if (!(Number.isInteger(concurrency) && concurrency >= 1))
    throw new EngineError(`--concurrency must be a whole number of calls, at least 1 (got ${o.concurrency})`, 'OPTION');
  const tps = o.tokensPerSecond;
  if (tps !== undefined && !(Number.isFinite(tps) && tps > 0))
    throw new EngineError(`--tokens-per-second must be a number above 0 (got ${tps})`, 'OPTION');
  const latency = o.latency !== undefined ? parseSeconds(o.latency) : tps !== undefined ? 0 : DEFAULT_LATENCY_SECONDS;
  return { concurrency, latency, ...(tps !== undefined ? { tokensPerSecond: tps } : {}) };
}

/** "1.5s", "800ms", "2m" or a bare number of seconds. */
export function parseSeconds(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  if (!m) throw new EngineError(`--latency must be a duration such as 1.5s, 800ms or 2m (got "${text}")`, 'OPTION');
  const n = Number(m[1]);
  return m[2] === 'ms' ? n / 1000 : m[2] === 'm' ? n * 60 : n;
}

/** Seconds of one call. */
const callSeconds = (p: ThroughputProfile, completionTokens: number): number =>
  p.latency + (p.tokensPerSecond ? completionTokens / p.tokensPerSecond : 0);

/** A population step's calls made at once (its agents' decisions and survey answers). */
const atOnce = (c: CallRecord): boolean => c.step !== undefined && (c.purpose === 'agent' || c.purpose === 'survey');

export interface Schedule {
  /** When each call is sent, in seconds from the start. */
  at: number[];
  /** The wall time each call accounts for (all the calls it stands for): their sum is the run's. */
  seconds: number[];
  total: number;
}

/** When each call goes out and how long the run takes, the calls taken in order. */
export function schedule(calls: readonly CallRecord[], p: ThroughputProfile): Schedule {
  const at: number[] = new Array<number>(calls.length).fill(0);
  const seconds: number[] = new Array<number>(calls.length).fill(0);
  let t = 0;
  let i = 0;
  while (i < calls.length) {
    const c = calls[i]!;
    if (!atOnce(c)) {
      at[i] = t;
      seconds[i] = callSeconds(p, c.completionTokens) * c.weight;
      t += seconds[i]!;
      i++;
      continue;
    }
    // the block of calls a step makes at once
    let j = i;
    let weight = 0;
    let busy = 0;
    while (j < calls.length && atOnce(calls[j]!) && calls[j]!.state === c.state && calls[j]!.step === c.step) {
      weight += calls[j]!.weight;
      busy += callSeconds(p, calls[j]!.completionTokens) * calls[j]!.weight;
      j++;
    }
    const round = busy / weight;
    const took = Math.ceil(weight / p.concurrency - 1e-9) * round;
    let before = 0;
    for (let k = i; k < j; k++) {
      at[k] = t + Math.floor(before / p.concurrency) * round;
      seconds[k] = (took * calls[k]!.weight) / weight;
      before += calls[k]!.weight;
    }
    t += took;
    i = j;
  }
  return { at, seconds, total: t };
}
