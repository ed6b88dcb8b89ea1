// What the validity statistics take (what was measured for each target, across seeds) and what
// they give (one result per target). The report (src/apps/cli/report-*.ts) measures, this
// feature compares; `sop calibrate` measures too and compares with the same functions.
import type { SopTarget } from '../../format/sop/types.js';
import type { Difference, MeanInterval } from './stats.js';

export type TargetKind = 'value' | 'distribution' | 'curve' | 'effect';

/** A target as the SOP gives it (schemas/sop.schema.json#/definitions/target). */
export type Target = SopTarget;

/** What was measured for one target, by its kind. */
export type TargetObservation =
  /** value: the measured quantity, one number per run (seed). */
  | { kind: 'value'; values: readonly number[] }
  /**
   * distribution: pooled over the runs, as samples (numbers, each with weight 1) and/or counts by
   * category (a histogram metric's bins, a query's category, n rows); a numeric category counts as
   * a sample of that value for histogram, quantile and sample targets.
   */
  | { kind: 'distribution'; samples?: readonly number[]; counts?: Readonly<Record<string, number>> }
  /** curve: per run, its [step, value] points (a step a run lacks takes the run's last earlier value). */
  | { kind: 'curve'; runs: ReadonlyArray<ReadonlyArray<readonly [number, number]>> }
  /**
   * effect: per seed, the treatment arm's and the control arm's measured values (one per run, or
   * several, e.g. one per agent: then each seed's own difference is tested too, for the null
   * inflation and the coverage). `paired`: the arms ran on common random numbers, seed by seed.
   */
  | {
      kind: 'effect';
      seeds: ReadonlyArray<{ seed: number; treatment: readonly number[]; control: readonly number[] }>;
      paired: boolean;
    };

/** One point of a curve target. */
export interface CurvePoint {
  step: number;
  target: number;
  /** The simulated mean across runs at the step, and its 95% interval; null when no run reached it. */
  mean: number | null;
  lo: number | null;
  hi: number | null;
  /** The allowed distance at this point (band, or relative_band x |target|). */
  band: number;
  within: boolean;
}

/** The comparison of a target with what was measured. */
export interface TargetResult {
  name: string;
  kind: TargetKind;
  source: string;
  /** What it measures, in words: "metric efficiency (state trading) at end", "query". */
  measure: string;
  /** The target in words: "0.98 +- 0.02", "in [0.97, 0.99]", "JS <= 0.1 against 4 shares". */
  target: string;
  /** true: met; false: missed; null: could not be evaluated (see `note`). */
  pass: boolean | null;
  /** Runs (value, distribution, curve) or seeds (effect) measured. */
  n: number;
  /** value: the simulated mean across runs with its 95% interval; effect: the difference's (paired when paired, else Welch). */
  sim: MeanInterval | null;
  /** The divergence that fits the kind: abs_error (value, effect), js, ks (distribution), band (curve: the largest |error| / band). */
  divergence: { name: 'abs_error' | 'js' | 'ks' | 'band'; value: number } | null;
  /** distribution against quantiles or samples: Wasserstein-1. */
  wasserstein: number | null;
  /** value, effect: simulated sd across runs / the target's sd (when it gives one). */
  variance_ratio: number | null;
  /** variance_ratio < 0.5. */
  under_dispersed: boolean | null;
  /** effect: the paired difference's interval (when paired) and the unpaired (Welch) one over the same runs. */
  paired: Difference | null;
  independent: Difference | null;
  /** effect: does the difference's 95% interval contain the target's value (0 for a null target), or meet its interval. */
  covers: boolean | null;
  /** effect, with several values per run: the share of seeds whose own 95% interval covers the target (as `covers`). */
  coverage: number | null;
  /** effect with null: true, with several values per run: the share of seeds whose own difference is significant at 5%. */
  null_inflation: number | null;
  /** curve: each target point. */
  points: CurvePoint[] | null;
  /**
   * The scaled distance (docs/validity.md#distance): value, effect: |sim - value| / scale (scale: the
   * tolerance, or the interval's half-width; a null effect: the interval's half-width); curve: the
   * RMS of point errors / band; distribution: divergence / max_divergence. 1 or less passes
   * (a curve: at every point). Infinity when nothing was measured.
   */
  distance: number;
  /** Why it was not evaluated, or what to know about it. */
  note: string | null;
}
