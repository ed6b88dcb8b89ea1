// The rule of an adaptive concurrency limit (AIMD, as TCP's congestion window), pure: no clock,
// no I/O. The limit starts low and doubles each window of successes (slow start) until the first
// sign of overload; from then on it grows by one per window of successes while latency stays
// near its baseline (additive increase), and halves on a 429 or a burst of 5xx answers
// (multiplicative decrease), between a floor and a ceiling (the run's --concurrency). Answers to
// requests sent before the last decrease do not decrease it again: one overload, one halving.
// docs/scale.md#adaptive-concurrency.

export interface AimdSettings {
  /** The most calls at once (--concurrency). */
  ceiling: number;
  /** The fewest (default 1). */
  floor?: number;
  /** The first limit (default: the ceiling or 256, the smaller). */
  initial?: number;
  /** Latency above baseline x this holds the limit where it is (default 2). */
  latencyTolerance?: number;
  /** 5xx answers within one window that count as a burst (default 3). */
  burst5xx?: number;
}

/** One answer, as the limit sees it. */
export interface AimdSample {
  /** HTTP status; 0 for a connection that failed without one. */
  status: number;
  /** When the request was sent and when its answer (or failure) came, in ms of one clock. */
  sentAt: number;
  at: number;
}

export type AimdReason = 'slow start' | 'latency holds' | '429' | '5xx burst';

export interface AimdChange {
  limit: number;
  previous: number;
  reason: AimdReason;
}

export class Aimd {
  readonly ceiling: number;
  readonly floor: number;
  private current: number;
  private slowStart = true;
  /** Successes since the window began, and the 5xx answers in it. */
  private successes = 0;
  private errors5xx = 0;
  /** Latency of the window's successes, summed. */
  private latencySum = 0;
  /** The lowest window mean seen: what latency is when the server is not loaded. */
  private baseline: number | undefined;
  /** Requests sent before this were sent under the limit a decrease replaced. */
  private decreasedAt = Number.NEGATIVE_INFINITY;
  private readonly tolerance: number;
  private readonly burst: number;

  constructor(s: AimdSettings) {
    if (!Number.isInteger(s.ceiling) || s.ceiling < 1)
      throw new RangeError(`the concurrency ceiling must be a whole number of at least 1 (got ${s.ceiling})`);
    this.ceiling = s.ceiling;
    this.floor = Math.min(s.ceiling, Math.max(1, s.floor ?? 1));
    this.current = clamp(s.initial ?? Math.min(s.ceiling, 256), this.floor, this.ceiling);
    this.tolerance = s.latencyTolerance ?? 2;
    this.burst = s.burst5xx ?? 3;
  }

  get limit(): number {
    return this.current;
  }

  /** Takes one answer into account; returns the change it made, if any. */
  observe(x: AimdSample): AimdChange | undefined {
    const fresh = x.sentAt >= this.decreasedAt; // sent under the current limit
    if (x.status === 429) return fresh ? this.decrease('429', x.at) : undefined;
    if (x.status >= 500 || x.status === 0) {
      if (!fresh) return undefined;
      if (++this.errors5xx >= this.burst) return this.decrease('5xx burst', x.at);
      return undefined;
    }
    if (x.status < 200 || x.status >= 300) return undefined; // a refused request says nothing of load
    this.successes++;
    this.latencySum += Math.max(0, x.at - x.sentAt);
    if (this.successes < this.current) return undefined;
    // a window: as many successes as the limit, about one round trip of them
    const mean = this.latencySum / this.successes;
    const holds = this.baseline === undefined || mean <= this.baseline * this.tolerance;
    this.baseline = this.baseline === undefined ? mean : Math.min(this.baseline, mean);
    this.successes = 0;
    this.latencySum = 0;
    this.errors5xx = 0;
    if (!holds) {
      this.slowStart = false; // latency grows: the server is queueing, stop doubling
      return undefined;
    }
    const next = Math.min(this.ceiling, this.slowStart ? this.current * 2 : this.current + 1);
    return this.set(next, this.slowStart ? 'slow start' : 'latency holds');
  }

  private decrease(reason: AimdReason, at: number): AimdChange | undefined {
    this.slowStart = false;
    this.decreasedAt = at;
    this.successes = 0;
    this.latencySum = 0;
    this.errors5xx = 0;
    return this.set(Math.max(this.floor, Math.floor(this.current / 2)), reason);
  }

  private set(limit: number, reason: AimdReason): AimdChange | undefined {
    const previous = this.current;
    if (limit === previous) return undefined;
    this.current = limit;
    return { limit, previous, reason };
  }
}

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.floor(n)));
