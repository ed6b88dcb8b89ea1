// Distances between a simulated distribution and a target's (docs/validity.md): Jensen-Shannon
// (base 2, in [0, 1]) between category or bin shares, Kolmogorov-Smirnov and Wasserstein-1
// between a weighted sample and another sample or a set of quantiles. Pure: no I/O.
import { EngineError } from '../../shared/errors.js';

/** A value and its weight (a sample, or a category's count). */
export interface Weighted {
  x: number;
  w: number;
}

export const unweighted = (xs: readonly number[]): Weighted[] => xs.map((x) => ({ x, w: 1 }));

/** Jensen-Shannon divergence, base 2, between two share vectors over the same categories (each normalised first). */
export function jensenShannon(p: readonly number[], q: readonly number[]): number {
  if (p.length !== q.length) throw new EngineError(`jensenShannon: ${p.length} shares against ${q.length}`, 'ARGUMENT');
  const sp = p.reduce((a, b) => a + b, 0);
  const sq = q.reduce((a, b) => a + b, 0);
  if (!(sp > 0) || !(sq > 0)) return NaN;
  let js = 0;
  for (let i = 0; i < p.length; i++) {
    const a = p[i]! / sp;
    const b = q[i]! / sq;
    const m = (a + b) / 2;
    if (a > 0) js += 0.5 * a * Math.log2(a / m);
    if (b > 0) js += 0.5 * b * Math.log2(b / m);
  }
  return Math.min(1, Math.max(0, js));
}

/** Jensen-Shannon between two category -> weight maps, over the union of their categories. */
export function jensenShannonShares(sim: Readonly<Record<string, number>>, target: Readonly<Record<string, number>>): number {
  const keys = [...new Set([...Object.keys(target), ...Object.keys(sim)])];
  return jensenShannon(
    keys.map((k) => sim[k] ?? 0),
    keys.map((k) => target[k] ?? 0),
  );
}

/**
 * The weights of `sample` in the bins [e0, e1), [e1, e2), ... [e(n-1), en] (the last bin closed),
 * and one more entry: the weight outside [e0, en].
 */
export function binWeights(sample: readonly Weighted[], edges: readonly number[]): { bins: number[]; outside: number } {
  const bins = new Array<number>(edges.length - 1).fill(0);
  let outside = 0;
  const last = edges[edges.length - 1]!;
  for (const { x, w } of sample) {
    if (!(x >= edges[0]!) || x > last) {
      outside += w;
      continue;
    }
    // the last edge <= x (binary search), the last bin closed on the right
    let lo = 0;
    let hi = edges.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (edges[mid]! <= x) lo = mid;
      else hi = mid;
    }
    bins[Math.min(lo, bins.length - 1)]! += w;
  }
  return { bins, outside };
}

/** Jensen-Shannon between a sample binned by `edges` and the bins' target shares; weight outside the edges counts as a bin whose target share is 0. */
export function jensenShannonHistogram(sample: readonly Weighted[], edges: readonly number[], shares: readonly number[]): number {
  const { bins, outside } = binWeights(sample, edges);
  return jensenShannon([...bins, outside], [...shares, 0]);
}

/** The sample sorted by value with equal values merged, and its total weight. */
function sorted(sample: readonly Weighted[]): { xs: number[]; cum: number[]; total: number } {
  const s = sample.filter((v) => v.w > 0 && Number.isFinite(v.x)).sort((a, b) => a.x - b.x);
  const xs: number[] = [];
  const cum: number[] = [];
  let total = 0;
  for (const { x, w } of s) {
    total += w;
    if (xs.length > 0 && xs[xs.length - 1] === x) cum[cum.length - 1] = total;
    else {
      xs.push(x);
      cum.push(total);
    }
  }
  return { xs, cum: cum.map((c) => c / total), total };
}

/** The empirical distribution function of a sorted sample at x (P(X <= x)) and just below x (P(X < x)). */
function ecdfAt(s: { xs: number[]; cum: number[] }, x: number): { at: number; below: number } {
  // the number of distinct values <= x
  let lo = 0;
  let hi = s.xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (s.xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  const at = lo === 0 ? 0 : s.cum[lo - 1]!;
  const below = lo > 0 && s.xs[lo - 1] === x ? (lo >= 2 ? s.cum[lo - 2]! : 0) : at;
  return { at, below };
}

/** The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two empirical distribution functions. */
export function kolmogorovSmirnov(a: readonly Weighted[], b: readonly Weighted[]): number {
  const sa = sorted(a);
  const sb = sorted(b);
  if (sa.total === 0 || sb.total === 0) return NaN;
  let d = 0;
  for (const x of new Set([...sa.xs, ...sb.xs])) d = Math.max(d, Math.abs(ecdfAt(sa, x).at - ecdfAt(sb, x).at));
  return d;
}

/** A target given as quantiles: probability -> value, sorted by probability. */
export type QuantilePoints = ReadonlyArray<readonly [number, number]>;

export function quantilePoints(q: Readonly<Record<string, number>>): Array<[number, number]> {
  return Object.entries(q)
    .map(([p, v]): [number, number] => [Number(p), v])
    .sort((x, y) => x[0] - y[0]);
}

/**
 * Kolmogorov-Smirnov against quantiles: the largest gap, at the target's quantile values, between
 * the sample's distribution function and the quantile's probability (no gap where the sample's
 * distribution jumps across it).
 */
export function kolmogorovSmirnovQuantiles(sample: readonly Weighted[], quantiles: QuantilePoints): number {
  const s = sorted(sample);
  if (s.total === 0 || quantiles.length === 0) return NaN;
  let d = 0;
  for (const [p, v] of quantiles) {
    const { at, below } = ecdfAt(s, v);
    const gap = p < below ? below - p : p > at ? p - at : 0;
    d = Math.max(d, gap);
  }
  return d;
}

/** The sample's quantile function at p (the smallest x with F(x) >= p). */
function quantileOf(s: { xs: number[]; cum: number[] }, p: number): number {
  for (let i = 0; i < s.xs.length; i++) if (s.cum[i]! >= p - 1e-12) return s.xs[i]!;
  return s.xs[s.xs.length - 1]!;
}

/** Wasserstein-1 between two weighted samples: the integral of |F_a(x) - F_b(x)| over x. */
export function wasserstein1(a: readonly Weighted[], b: readonly Weighted[]): number {
  const sa = sorted(a);
  const sb = sorted(b);
  if (sa.total === 0 || sb.total === 0) return NaN;
  const xs = [...new Set([...sa.xs, ...sb.xs])].sort((x, y) => x - y);
  let w = 0;
  for (let i = 0; i + 1 < xs.length; i++) w += Math.abs(ecdfAt(sa, xs[i]!).at - ecdfAt(sb, xs[i]!).at) * (xs[i + 1]! - xs[i]!);
  return w;
}

/**
 * Wasserstein-1 against quantiles, over the probabilities they span: the mean over p in
 * [p_first, p_last] of |Q_sample(p) - Q_target(p)|, the target's quantile function linear
 * between its points (a single quantile: the gap at it).
 */
export function wasserstein1Quantiles(sample: readonly Weighted[], quantiles: QuantilePoints): number {
  const s = sorted(sample);
  if (s.total === 0 || quantiles.length === 0) return NaN;
  if (quantiles.length === 1) return Math.abs(quantileOf(s, quantiles[0]![0]) - quantiles[0]![1]);
  const p0 = quantiles[0]![0];
  const p1 = quantiles[quantiles.length - 1]![0];
  const STEPS = 2000;
  let sum = 0;
  let j = 0;
  for (let i = 0; i < STEPS; i++) {
    const p = p0 + ((i + 0.5) / STEPS) * (p1 - p0); // midpoints
    while (j + 2 < quantiles.length && quantiles[j + 1]![0] < p) j++;
    const [pa, va] = quantiles[j]!;
    const [pb, vb] = quantiles[j + 1]!;
    const target = pb === pa ? va : va + ((p - pa) / (pb - pa)) * (vb - va);
    sum += Math.abs(quantileOf(s, p) - target);
  }
  return sum / STEPS;
}
