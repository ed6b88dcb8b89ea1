// The comparison of each target with what was measured across seeds (docs/validity.md), and the
// scalar distance `sop calibrate` minimises. Pure: the caller measures (queries the results
// database), this module only compares.
import { EngineError } from '../../shared/errors.js';
import {
  jensenShannonHistogram,
  jensenShannonShares,
  kolmogorovSmirnov,
  kolmogorovSmirnovQuantiles,
  quantilePoints,
  unweighted,
  wasserstein1,
  wasserstein1Quantiles,
  type Weighted,
} from './divergence.js';
import { mean, meanInterval, pairedDifference, varianceRatio, welchDifference, type Difference, type MeanInterval } from './stats.js';
import type { CurvePoint, Target, TargetObservation, TargetResult } from './types.js';

/** Under this variance ratio (sim sd / target sd) a result is flagged as under-dispersed. */
export const UNDER_DISPERSION = 0.5;

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : Number(x.toPrecision(4)).toString());

/** What a target measures, in words. */
export function describeMeasure(t: Target): string {
  const at = t.kind === 'curve' ? '' : t.at === undefined || t.at === 'end' ? ' at end' : ` at step ${t.at}`;
  if (t.metric !== undefined) return `metric ${t.metric}${t.state !== undefined ? ` (state ${t.state})` : ''}${at}`;
  return `query${at}`;
}

/** The target's figure, in words. */
export function describeTarget(t: Target): string {
  const kind = t.kind ?? 'value';
  const arms = kind === 'effect' && t.arms ? `${t.arms[0]} - ${t.arms[1]}: ` : '';
  if (kind === 'value' || kind === 'effect') {
    if (t.null === true) return `${arms}no effect (0 in the 95% interval)`;
    if (t.interval !== undefined)
      return `${arms}${t.value !== undefined ? `${fmt(t.value)}, ` : ''}in [${fmt(t.interval[0]!)}, ${fmt(t.interval[1]!)}]`;
    return `${arms}${fmt(t.value ?? NaN)} +- ${fmt(t.tolerance ?? NaN)}`;
  }
  if (kind === 'distribution') {
    const max = fmt(t.max_divergence ?? NaN);
    if (t.shares !== undefined) return `JS <= ${max} against ${Object.keys(t.shares).length} shares`;
    if (t.histogram !== undefined) return `JS <= ${max} against a ${t.histogram.shares.length}-bin histogram`;
    if (t.quantiles !== undefined)
      return `KS <= ${max} against quantiles ${Object.entries(t.quantiles)
        .map(([p, v]) => `${p}:${fmt(v)}`)
        .join(' ')}`;
    return `KS <= ${max} against ${t.samples?.length ?? 0} samples`;
  }
  const band = t.band !== undefined ? `+- ${fmt(t.band)}` : `+- ${fmt((t.relative_band ?? NaN) * 100)}%`;
  return `${t.points?.length ?? 0} points ${band}`;
}

function blank(name: string, t: Target): TargetResult {
  return {
    name,
    kind: t.kind ?? 'value',
    source: t.source,
    measure: describeMeasure(t),
    target: describeTarget(t),
    pass: null,
    n: 0,
    sim: null,
    divergence: null,
    wasserstein: null,
    variance_ratio: null,
    under_dispersed: null,
    paired: null,
    independent: null,
    covers: null,
    coverage: null,
    null_inflation: null,
    points: null,
    distance: Infinity,
    note: null,
  };
}

/** |x - value| / scale, or the distance to an interval's midpoint over its half-width; 0/0 is 0. */
function scaledError(x: number, t: Target): number {
  const [centre, scale] =
    t.interval !== undefined
      ? [(t.interval[0]! + t.interval[1]!) / 2, (t.interval[1]! - t.interval[0]!) / 2]
      : [t.value ?? NaN, t.tolerance ?? NaN];
  const err = Math.abs(x - centre);
  if (err === 0) return 0;
  return scale > 0 ? err / scale : Infinity;
}

/** Whether x meets a value (or effect) target's tolerance or interval. */
function meets(x: number, t: Target): boolean {
  if (t.interval !== undefined) return x >= t.interval[0]! && x <= t.interval[1]!;
  return Math.abs(x - (t.value ?? NaN)) <= (t.tolerance ?? NaN) * (1 + 1e-12);
}

function evaluateValue(r: TargetResult, t: Target, values: readonly number[]): TargetResult {
  const xs = values.filter((v) => Number.isFinite(v));
  r.n = xs.length;
  if (xs.length === 0) return { ...r, note: 'no run gave a value' };
  const sim = meanInterval(xs);
  const ratio = varianceRatio(sim.sd, t.sd);
  const centre = t.value ?? (t.interval !== undefined ? (t.interval[0]! + t.interval[1]!) / 2 : NaN);
  return {
    ...r,
    sim,
    pass: meets(sim.mean, t),
    divergence: { name: 'abs_error', value: Math.abs(sim.mean - centre) },
    variance_ratio: ratio,
    under_dispersed: ratio === null ? null : ratio < UNDER_DISPERSION,
    distance: scaledError(sim.mean, t),
  };
}

/** The measured distribution as weighted values; numeric categories count as values. */
function asWeighted(o: { samples?: readonly number[]; counts?: Readonly<Record<string, number>> }): {
  values: Weighted[];
  nonNumeric: number;
} {
  const values = unweighted(o.samples ?? []);
  let nonNumeric = 0;
  for (const [c, n] of Object.entries(o.counts ?? {})) {
    const x = Number(c);
    if (c.trim() !== '' && Number.isFinite(x)) values.push({ x, w: n });
    else nonNumeric += n;
  }
  return { values, nonNumeric };
}

function evaluateDistribution(
  r: TargetResult,
  t: Target,
  o: { samples?: readonly number[]; counts?: Readonly<Record<string, number>> },
): TargetResult {
  const max = t.max_divergence ?? NaN;
  let divergence: TargetResult['divergence'] = null;
  let wasserstein: number | null = null;
  if (t.shares !== undefined) {
    const sim: Record<string, number> = { ...(o.counts ?? {}) };
    for (const x of o.samples ?? []) sim[String(x)] = (sim[String(x)] ?? 0) + 1;
    r.n = Object.values(sim).reduce((a, b) => a + b, 0);
    if (r.n > 0) divergence = { name: 'js', value: jensenShannonShares(sim, t.shares) };
  } else {
    const { values, nonNumeric } = asWeighted(o);
    r.n = values.reduce((a, v) => a + v.w, 0);
    if (nonNumeric > 0) r.note = `${nonNumeric} measured values are not numbers; left out`;
    if (r.n > 0) {
      if (t.histogram !== undefined)
        divergence = { name: 'js', value: jensenShannonHistogram(values, t.histogram.edges, t.histogram.shares) };
      else if (t.quantiles !== undefined) {
        const q = quantilePoints(t.quantiles);
        divergence = { name: 'ks', value: kolmogorovSmirnovQuantiles(values, q) };
        wasserstein = wasserstein1Quantiles(values, q);
      } else if (t.samples !== undefined) {
        const target = unweighted(t.samples);
        divergence = { name: 'ks', value: kolmogorovSmirnov(values, target) };
        wasserstein = wasserstein1(values, target);
      }
    }
  }
  if (divergence === null || !Number.isFinite(divergence.value)) return { ...r, note: r.note ?? 'nothing was measured' };
  const distance = max > 0 ? divergence.value / max : divergence.value === 0 ? 0 : Infinity;
  return { ...r, divergence, wasserstein, pass: divergence.value <= max + 1e-12, distance };
}

/** A run's value at `step`: its point there, or its last earlier point (null before its first). */
function valueAt(run: ReadonlyArray<readonly [number, number]>, step: number): number | null {
  let best: readonly [number, number] | null = null;
  for (const p of run) if (p[0] <= step && (best === null || p[0] >= best[0])) best = p;
  return best === null ? null : best[1];
}

function evaluateCurve(r: TargetResult, t: Target, runs: ReadonlyArray<ReadonlyArray<readonly [number, number]>>): TargetResult {
  r.n = runs.length;
  if (runs.length === 0) return { ...r, note: 'no run gave a curve' };
  const points: CurvePoint[] = [];
  let sumSq = 0;
  let worst = 0;
  let missing = 0;
  for (const [step, target] of t.points ?? []) {
    const band = t.band ?? (t.relative_band ?? 0) * Math.abs(target!);
    const xs = runs.map((run) => valueAt(run, step!)).filter((v): v is number => v !== null && Number.isFinite(v));
    if (xs.length === 0) {
      missing++;
      points.push({ step: step!, target: target!, mean: null, lo: null, hi: null, band, within: false });
      continue;
    }
    const mi = meanInterval(xs);
    const err = Math.abs(mi.mean - target!);
    const scaled = err === 0 ? 0 : band > 0 ? err / band : Infinity;
    sumSq += scaled * scaled;
    worst = Math.max(worst, scaled);
    points.push({ step: step!, target: target!, mean: mi.mean, lo: mi.lo, hi: mi.hi, band, within: err <= band * (1 + 1e-12) });
  }
  const measured = points.length - missing;
  return {
    ...r,
    points,
    pass: missing === 0 && points.every((p) => p.within),
    divergence: { name: 'band', value: measured > 0 ? worst : Infinity },
    distance: missing > 0 || measured === 0 ? Infinity : Math.sqrt(sumSq / measured),
    note:
      missing > 0
        ? `no run reached step${missing > 1 ? 's' : ''} ${points
            .filter((p) => p.mean === null)
            .map((p) => p.step)
            .join(', ')}`
        : null,
  };
}

function evaluateEffect(
  r: TargetResult,
  t: Target,
  o: { seeds: ReadonlyArray<{ seed: number; treatment: readonly number[]; control: readonly number[] }>; paired: boolean },
): TargetResult {
  const seeds = o.seeds.filter((s) => s.treatment.some(Number.isFinite) && s.control.some(Number.isFinite));
  r.n = seeds.length;
  if (seeds.length === 0) return { ...r, note: 'no seed has both arms measured' };
  const finite = (xs: readonly number[]) => xs.filter(Number.isFinite);
  const tr = seeds.map((s) => mean(finite(s.treatment)));
  const co = seeds.map((s) => mean(finite(s.control)));
  const paired = o.paired ? pairedDifference(tr, co) : null;
  const independent = welchDifference(tr, co);
  const main: Difference = paired ?? independent;
  const sim: MeanInterval = { n: main.n, mean: main.mean, sd: main.sd, lo: main.lo, hi: main.hi };
  const expected = t.null === true ? 0 : (t.value ?? (t.interval !== undefined ? (t.interval[0]! + t.interval[1]!) / 2 : NaN));
  // an interval target is covered when the difference's interval meets it; a value (or null: 0) when it lies inside
  const coveredBy = (lo: number, hi: number): boolean =>
    t.null !== true && t.interval !== undefined ? lo <= t.interval[1]! && hi >= t.interval[0]! : expected >= lo && expected <= hi;
  const covers = main.lo === null || main.hi === null ? null : coveredBy(main.lo, main.hi);
  // each seed's own difference, when a run gives several values (e.g. one per agent)
  let tested = 0;
  let significant = 0;
  let covering = 0;
  for (const s of seeds) {
    const d = welchDifference(finite(s.treatment), finite(s.control));
    if (d.lo === null || d.hi === null || d.p === null) continue;
    tested++;
    if (d.p < 0.05) significant++;
    if (coveredBy(d.lo, d.hi)) covering++;
  }
  // the spread of the difference across seeds, against the target's sd
  const ratio = varianceRatio(paired?.sd ?? null, t.sd);
  let pass: boolean | null;
  let distance: number;
  if (t.null === true) {
    pass = covers;
    const half = main.lo === null || main.hi === null ? null : (main.hi - main.lo) / 2;
    distance = main.mean === 0 ? 0 : half !== null && half > 0 ? Math.abs(main.mean) / half : Infinity;
  } else {
    pass = meets(main.mean, t);
    distance = scaledError(main.mean, t);
  }
  return {
    ...r,
    sim,
    pass,
    divergence: { name: 'abs_error', value: Math.abs(main.mean - expected) },
    variance_ratio: ratio,
    under_dispersed: ratio === null ? null : ratio < UNDER_DISPERSION,
    paired,
    independent,
    covers,
    coverage: tested > 0 ? covering / tested : null,
    null_inflation: t.null === true && tested > 0 ? significant / tested : null,
    distance,
    note: o.paired ? null : 'arms on independent seeds: the unpaired (Welch) interval',
  };
}

/** Compares one target with what was measured for it (null: nothing was). */
export function evaluateTarget(name: string, target: Target, observation: TargetObservation | null | undefined): TargetResult {
  const r = blank(name, target);
  if (!observation) return { ...r, note: 'not measured' };
  if (observation.kind !== r.kind) return { ...r, note: `measured as a ${observation.kind}, but the target is a ${r.kind}` };
  switch (observation.kind) {
    case 'value':
      return evaluateValue(r, target, observation.values);
    case 'distribution':
      return evaluateDistribution(r, target, observation);
    case 'curve':
      return evaluateCurve(r, target, observation.runs);
    case 'effect':
      return evaluateEffect(r, target, observation);
  }
}

/** Compares every target with its observation (by name), in the targets' order. */
export function evaluateTargets(
  targets: Readonly<Record<string, Target>>,
  observations: Readonly<Record<string, TargetObservation | null | undefined>>,
): TargetResult[] {
  return Object.entries(targets).map(([name, t]) =>
    evaluateTarget(name, t, Object.prototype.hasOwnProperty.call(observations, name) ? observations[name] : undefined),
  );
}

/**
 * The scalar distance of a set of results (docs/validity.md#distance): the sum of each result's
 * scaled distance, over `names` when given (calibrate.targets), else over all. A target that was
 * not measured adds Infinity; a name with no result is an error of the caller.
 */
export function targetDistance(results: readonly TargetResult[], names?: readonly string[]): number {
  const chosen =
    names === undefined
      ? results
      : names.map((n) => {
          const r = results.find((x) => x.name === n);
          if (r === undefined) throw new EngineError(`targetDistance: no result for target "${n}"`, 'ARGUMENT');
          return r;
        });
  return chosen.reduce((a, r) => a + r.distance, 0);
}
