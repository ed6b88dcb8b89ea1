// What a calibration measures of each run for its targets (docs/calibrate.md#distance): a
// population metric is read from the run's journal (its metrics over the steps, the last visit of
// its state), a `query` target from its results database (DuckDB, RUN/population.duckdb). The
// runs of a particle (one per seed) are then one observation per target, which the validity
// feature compares with the target (evaluateTargets) and sums into the distance (targetDistance).
import { queryResults } from '../../api/results-db.js';
import { loadRunRecord } from '../../features/journal/record.js';
import { metricSeries } from '../../features/population/results.js';
import { isPopulationState } from '../../features/population/state-spec.js';
import { evaluateTargets, targetDistance, type Target, type TargetObservation, type TargetResult } from '../../features/validity/index.js';
import type { Sop } from '../../format/sop/types.js';
import { CalibrateError } from '../../features/calibrate/priors.js';

/** What one run gave for one target. */
export type RunMeasure =
  | { kind: 'value'; value: number | null }
  | { kind: 'distribution'; samples: number[]; counts: Record<string, number> }
  | { kind: 'curve'; points: Array<[number, number]> };

/** The targets a calibration fits, by name, checked to be ones it can measure. */
export function calibrationTargets(sop: Sop): Record<string, Target> {
  const names = sop.calibrate?.targets ?? [];
  const out: Record<string, Target> = {};
  const populationStates = Object.entries(sop.states)
    .filter(([, s]) => isPopulationState(s))
    .map(([n]) => n);
  for (const name of names) {
    const t = sop.targets?.[name];
    if (!t) throw new CalibrateError(`calibrate.targets names "${name}", which is not in "targets"`);
    if ((t.kind ?? 'value') === 'effect')
      throw new CalibrateError(
        `target "${name}" is an effect (a difference between arms): sop calibrate fits value, distribution and curve targets`,
      );
    if (t.metric !== undefined && t.state === undefined && populationStates.length !== 1)
      throw new CalibrateError(
        `target "${name}" measures metric "${t.metric}" but names no "state", and the SOP has ${populationStates.length} population states; give its "state"`,
      );
    out[name] = t;
  }
  return out;
}

const num = (v: unknown): number | null =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : null;

function atStep(points: ReadonlyArray<[number, number]>, at: Target['at']): number | null {
  if (points.length === 0) return null;
  if (at === undefined || at === 'end') return points[points.length - 1]![1];
  let best: [number, number] | undefined;
  for (const p of points) if (p[0] <= Number(at) && (!best || p[0] >= best[0])) best = p;
  return best ? best[1] : null;
}

/** Measure one run (its folder) for every target. */
export async function measureRun(dir: string, sop: Sop, targets: Readonly<Record<string, Target>>): Promise<Record<string, RunMeasure>> {
  const out: Record<string, RunMeasure> = {};
  let series: ReturnType<typeof metricSeries> | undefined;
  const onlyState = Object.entries(sop.states).find(([, s]) => isPopulationState(s))?.[0];
  for (const [name, t] of Object.entries(targets)) {
    const kind = (t.kind ?? 'value') as RunMeasure['kind'];
    if (t.metric !== undefined) {
      series ??= metricSeries(loadRunRecord(dir).effective);
      const state = t.state ?? onlyState;
      if (kind === 'distribution') {
        // a histogram metric's bins: NAME.BIN -> the count at the step
        const counts: Record<string, number> = {};
        for (const s of series.filter((x) => x.state === state && x.name.startsWith(`${t.metric}.`))) {
          const last = [...s.visits.values()].pop() ?? [];
          const v = atStep(
            last.flatMap((p) => (p.value === null ? [] : [[p.step, p.value] as [number, number]])),
            t.at,
          );
          if (v !== null) counts[s.name.slice(t.metric.length + 1)] = v;
        }
        out[name] = { kind, samples: [], counts };
        continue;
      }
      const s = series.find((x) => x.state === state && x.name === t.metric);
      const visit = s ? ([...s.visits.values()].pop() ?? []) : [];
      const points = visit.flatMap((p) => (p.value === null ? [] : [[p.step, p.value] as [number, number]]));
      out[name] = kind === 'curve' ? { kind, points } : { kind: 'value', value: atStep(points, t.at) };
      continue;
    }
    const { columns, rows } = await queryResults(dir, t.query!, { timeoutMs: 60_000 });
    const col = (c: string) => columns.indexOf(c);
    if (kind === 'curve') {
      const [s, v] = [col('step'), col('value')];
      if (s < 0 || v < 0)
        throw new CalibrateError(`target "${name}": its query must give columns step and value (got ${columns.join(', ')})`);
      out[name] = {
        kind,
        points: rows.flatMap((r) => (num(r[s]) !== null && num(r[v]) !== null ? [[num(r[s])!, num(r[v])!] as [number, number]] : [])),
      };
    } else if (kind === 'distribution') {
      const [c, n, v] = [col('category'), col('n'), col('value')];
      const counts: Record<string, number> = {};
      if (c >= 0 && n >= 0) for (const r of rows) counts[String(r[c])] = (counts[String(r[c])] ?? 0) + (num(r[n]) ?? 0);
      out[name] = { kind, samples: v >= 0 ? rows.flatMap((r) => (num(r[v]) === null ? [] : [num(r[v])!])) : [], counts };
    } else {
      const v = col('value');
      if (v < 0) throw new CalibrateError(`target "${name}": its query must give a column value (got ${columns.join(', ')})`);
      out[name] = { kind, value: rows.length > 0 ? num(rows[0]![v]) : null };
    }
  }
  return out;
}

/** The runs of one particle as one observation per target. */
export function observations(
  runs: ReadonlyArray<Record<string, RunMeasure>>,
  targets: Readonly<Record<string, Target>>,
): Record<string, TargetObservation> {
  const out: Record<string, TargetObservation> = {};
  for (const name of Object.keys(targets)) {
    const ms = runs.map((r) => r[name]).filter((m): m is RunMeasure => m !== undefined);
    const kind = ms[0]?.kind;
    if (kind === 'curve') out[name] = { kind, runs: ms.map((m) => (m.kind === 'curve' ? m.points : [])) };
    else if (kind === 'distribution') {
      const counts: Record<string, number> = {};
      const samples: number[] = [];
      for (const m of ms)
        if (m.kind === 'distribution') {
          samples.push(...m.samples);
          for (const [k, n] of Object.entries(m.counts)) counts[k] = (counts[k] ?? 0) + n;
        }
      out[name] = { kind, samples, counts };
    } else out[name] = { kind: 'value', values: ms.flatMap((m) => (m.kind === 'value' && m.value !== null ? [m.value] : [])) };
  }
  return out;
}

/** The particle's results against the targets, and its distance (the sum of the scaled distances). */
export function particleFit(
  runs: ReadonlyArray<Record<string, RunMeasure>>,
  targets: Readonly<Record<string, Target>>,
): { results: TargetResult[]; distance: number } {
  const results = evaluateTargets(targets, observations(runs, targets));
  return { results, distance: targetDistance(results) };
}
