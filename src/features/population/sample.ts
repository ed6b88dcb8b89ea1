// Sampling over a stream of rows, seeded, holding only the rows it keeps:
// - N agents: reservoir sampling (Vitter's algorithm R) with one `Rng` stream;
// - stratified: one reservoir per stratum, sized by the stratum's target share of N.
// Kept rows come back in their source order.
//
// Rounding of shares (largest remainder, Hamilton's method): each stratum first gets
// floor(share * N); the rows left over go one each to the strata with the largest fractional
// parts; ties go to the stratum whose key sorts first (by code unit). The counts always add up to N.
import { Rng } from '../../core/runtime/rng.js';
import { deriveSeed } from './random.js';
import { PopulationError } from './types.js';

/** Too few rows for the sample (the caller names where the sample is declared). */
export class SampleError extends PopulationError {}

type Rows<T> = AsyncIterable<T> | Iterable<T>;

/** The rows kept and how many were read. */
export interface Sampled<T> {
  rows: T[];
  seen: number;
}

class Reservoir<T> {
  private readonly kept: Array<{ at: number; item: T }> = [];
  seen = 0;
  constructor(
    readonly size: number,
    private readonly rng: Rng,
  ) {}
  offer(item: T, at: number): void {
    const i = this.seen++;
    if (this.size === 0) return;
    if (i < this.size) this.kept.push({ at, item });
    else {
      const j = Math.floor(this.rng.next() * (i + 1));
      if (j < this.size) this.kept[j] = { at, item };
    }
  }
  entries(): Array<{ at: number; item: T }> {
    return this.kept;
  }
}

const inOrder = <T>(entries: Array<{ at: number; item: T }>): T[] => entries.sort((a, b) => a.at - b.at).map((e) => e.item);

/** `n` rows drawn uniformly without replacement from `rows`, in source order; fewer rows than n is an error. */
export async function sampleN<T>(rows: Rows<T>, n: number, seed: number): Promise<Sampled<T>> {
  const reservoir = new Reservoir<T>(n, new Rng(deriveSeed(seed, 'sample')));
  let at = 0;
  for await (const row of rows) reservoir.offer(row, at++);
  if (reservoir.seen < n) throw new SampleError(`the source has ${reservoir.seen} rows, fewer than the ${n} asked for`);
  return { rows: inOrder(reservoir.entries()), seen: reservoir.seen };
}

/** How many rows each stratum gets: largest remainder, ties to the key that sorts first. */
export function stratumCounts(shares: Record<string, number>, n: number): Map<string, number> {
  const keys = Object.keys(shares).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const total = keys.reduce((a, k) => a + shares[k]!, 0);
  const exact = keys.map((k) => ({ key: k, value: (shares[k]! / total) * n }));
  const counts = new Map(exact.map((e) => [e.key, Math.floor(e.value + 1e-9)]));
  let left = n - [...counts.values()].reduce((a, b) => a + b, 0);
  const byRemainder = exact
    .map((e, order) => ({ key: e.key, rest: e.value - counts.get(e.key)!, order }))
    .sort((a, b) => (Math.abs(b.rest - a.rest) > 1e-9 ? b.rest - a.rest : a.order - b.order));
  for (const { key } of byRemainder) {
    if (left <= 0) break;
    counts.set(key, counts.get(key)! + 1);
    left--;
  }
  return counts;
}

export interface StratifyOptions<T> {
  /** The stratum key of a row (e.g. its `by` values joined by "|"). */
  key: (row: T) => string;
  shares: Record<string, number>;
  n: number;
  seed: number;
}

/** Rows drawn per stratum to the target shares of n, in source order; a stratum with too few rows is an error. */
export async function sampleStratified<T>(rows: Rows<T>, o: StratifyOptions<T>): Promise<Sampled<T>> {
  const counts = stratumCounts(o.shares, o.n);
  const reservoirs = new Map<string, Reservoir<T>>();
  for (const [key, count] of counts) reservoirs.set(key, new Reservoir<T>(count, new Rng(deriveSeed(o.seed, `stratum:${key}`))));
  let at = 0;
  for await (const row of rows) {
    reservoirs.get(o.key(row))?.offer(row, at);
    at++;
  }
  for (const [key, r] of reservoirs) {
    if (r.seen < r.size)
      throw new SampleError(
        `stratum "${key}" has ${r.seen} row${r.seen === 1 ? '' : 's'}, fewer than the ${r.size} its share ${o.shares[key]} of ${o.n} asks for`,
      );
  }
  return { rows: inOrder([...reservoirs.values()].flatMap((r) => r.entries())), seen: at };
}
