// Summaries of numbers across seeds (docs/validity.md): the mean with its 95% interval from
// Student's t, the paired and the unpaired (Welch) difference of two arms with their intervals,
// and Student's t distribution they rest on (its distribution function through the regularized
// incomplete beta function, its quantile by bisection). Pure: no I/O.

/** A mean with its two-sided 95% interval; lo and hi are null when n < 2 (no spread to estimate). */
export interface MeanInterval {
  n: number;
  mean: number;
  sd: number | null;
  lo: number | null;
  hi: number | null;
}

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** The sample standard deviation (n - 1 in the denominator); null when n < 2. */
export function sampleSd(xs: readonly number[]): number | null {
  if (xs.length < 2) return null;
  const m = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) * (x - m);
  return Math.sqrt(ss / (xs.length - 1));
}

// ln Gamma(x) for x > 0 (Lanczos, g = 7, n = 9; relative error under 1e-15).
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

// The continued fraction of the incomplete beta function (modified Lentz).
function betaFraction(a: number, b: number, x: number): number {
  const TINY = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with df degrees of freedom (df > 0, not necessarily an integer). */
export function studentTCdf(t: number, df: number): number {
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0;
  const tail = 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The quantile of Student's t: the t with P(T <= t) = p (0 < p < 1). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) return p <= 0 ? -Infinity : Infinity;
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** The two-sided p-value of a t statistic. */
export function twoSidedP(t: number, df: number): number {
  return 2 * (1 - studentTCdf(Math.abs(t), df));
}

/** The mean of xs with its 95% interval (mean +- t(0.975, n - 1) sd / sqrt(n)). */
export function meanInterval(xs: readonly number[], level = 0.95): MeanInterval {
  const n = xs.length;
  const m = mean(xs);
  const sd = sampleSd(xs);
  if (sd === null) return { n, mean: m, sd, lo: null, hi: null };
  const half = (studentTQuantile(1 - (1 - level) / 2, n - 1) * sd) / Math.sqrt(n);
  return { n, mean: m, sd, lo: m - half, hi: m + half };
}

/** A difference of two arms (treatment - control) with its 95% interval. */
export interface Difference extends MeanInterval {
  /** paired: over seeds of the two arms' differences; welch: of two independent samples. */
  method: 'paired' | 'welch';
  /** The interval's width (hi - lo), null when it has none. */
  width: number | null;
  /** The two-sided p-value of "no difference", null when it cannot be computed. */
  p: number | null;
}

const withWidth = (d: Omit<Difference, 'width'>): Difference => ({ ...d, width: d.lo === null || d.hi === null ? null : d.hi - d.lo });

/** The paired difference: treatment[i] - control[i] for each seed i, its mean and 95% interval. */
export function pairedDifference(treatment: readonly number[], control: readonly number[]): Difference {
  const n = Math.min(treatment.length, control.length);
  const d = Array.from({ length: n }, (_, i) => treatment[i]! - control[i]!);
  const mi = meanInterval(d);
  let p: number | null = null;
  if (mi.sd !== null) p = mi.sd === 0 ? (mi.mean === 0 ? 1 : 0) : twoSidedP(mi.mean / (mi.sd / Math.sqrt(n)), n - 1);
  return withWidth({ ...mi, method: 'paired', p });
}

/** The unpaired difference of means with Welch's 95% interval (Welch-Satterthwaite degrees of freedom). */
export function welchDifference(treatment: readonly number[], control: readonly number[], level = 0.95): Difference {
  const n1 = treatment.length;
  const n2 = control.length;
  const m = mean(treatment) - mean(control);
  const s1 = sampleSd(treatment);
  const s2 = sampleSd(control);
  if (s1 === null || s2 === null)
    return withWidth({ n: Math.min(n1, n2), mean: m, sd: null, lo: null, hi: null, method: 'welch', p: null });
  const v1 = (s1 * s1) / n1;
  const v2 = (s2 * s2) / n2;
  const se = Math.sqrt(v1 + v2);
  if (se === 0) return withWidth({ n: Math.min(n1, n2), mean: m, sd: 0, lo: m, hi: m, method: 'welch', p: m === 0 ? 1 : 0 });
  const df = ((v1 + v2) * (v1 + v2)) / ((v1 * v1) / (n1 - 1) + (v2 * v2) / (n2 - 1));
  const half = studentTQuantile(1 - (1 - level) / 2, df) * se;
  return withWidth({ n: Math.min(n1, n2), mean: m, sd: se, lo: m - half, hi: m + half, method: 'welch', p: twoSidedP(m / se, df) });
}

/** The ratio of the simulated spread to the target's (sim sd / target sd); under 0.5 flags under-dispersion. */
export function varianceRatio(simSd: number | null, targetSd: number | undefined): number | null {
  if (simSd === null || targetSd === undefined || !(targetSd > 0)) return null;
  return simSd / targetSd;
}
