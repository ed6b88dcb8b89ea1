// What `sop report` measures for each target in each run (docs/validity.md#report): a
// population metric from the run's journal (its `population_step` events: the metrics after
// each step of the state's last visit), or a DuckDB query over the run's results tables
// (RUN/population.duckdb, read-only, built when missing). The comparison is the validity
// feature's (src/features/validity), with what is measured here.
import { queryResults, type Cell } from '../../api/results-db.js';
import { stepEvent } from '../../features/population/results.js';
import type { Sop, SopTarget } from '../../format/sop/types.js';
import type { TargetObservation } from '../../features/validity/types.js';
import { runRecord, type ReportFolder, type ReportRun } from './runs.js';

/** A state's metrics after each step of its last visit: [step, metrics] in step order. */
type Series = Array<readonly [number, Record<string, number | null>]>;

/** Per run folder: each population state's series. */
const seriesCache = new Map<string, Map<string, Series>>();

/** Lets go of a run folder's series (a calibration's runs, once scored). */
export function forgetMeasured(dir: string): void {
  seriesCache.delete(dir);
}

function seriesOf(dir: string): Map<string, Series> {
  const known = seriesCache.get(dir);
  if (known) return known;
  const lastVisit = new Map<string, number>();
  const out = new Map<string, Series>();
  for (const e of runRecord(dir).effective) {
    const s = stepEvent(e);
    if (!s) continue;
    if ((lastVisit.get(s.state) ?? -1) < s.visit) {
      lastVisit.set(s.state, s.visit);
      out.set(s.state, []);
    }
    if (s.visit === lastVisit.get(s.state)) out.get(s.state)!.push([s.step, s.metrics ?? {}]);
  }
  seriesCache.set(dir, out);
  return out;
}

/** The population state a metric target reads: its `state`, or the SOP's only population state. */
export function metricState(sop: Sop, t: SopTarget): string | undefined {
  if (t.state !== undefined) return t.state;
  const pops = Object.entries(sop.states).filter(([, s]) => s.population !== undefined);
  return pops.length === 1 ? pops[0]![0] : undefined;
}

/** The metrics at `at` ("end": the last step; a step: the last step at or before it). */
function metricsAt(series: Series | undefined, at: SopTarget['at']): Record<string, number | null> | undefined {
  if (!series || series.length === 0) return undefined;
  if (at === undefined || at === 'end') return series[series.length - 1]![1];
  let best: Record<string, number | null> | undefined;
  for (const [step, m] of series) if (step <= at) best = m;
  return best;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** One run's value of a metric target at its step (undefined: not measured). */
function metricValue(sop: Sop, t: SopTarget, run: ReportRun): number | undefined {
  const state = metricState(sop, t);
  if (state === undefined) return undefined;
  const v = metricsAt(seriesOf(run.dir).get(state), t.at)?.[t.metric!];
  return finite(v) ? v : undefined;
}

/** A query's rows as objects by column name. */
async function queryRows(run: ReportRun, sql: string): Promise<Array<Record<string, Cell>>> {
  const r = await queryResults(run.dir, sql);
  return r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c, row[i] ?? null])));
}

const num = (v: Cell | undefined): number | undefined => {
  const x = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return finite(x) ? x : undefined;
};

/** What was measured for a target across the runs, and notes on runs that gave nothing. */
export interface Measured {
  observation: TargetObservation | null;
  notes: string[];
}

/** The runs a target is measured on: its arm's, or every run. */
function runsOf(folder: ReportFolder, t: SopTarget): ReportRun[] {
  return t.arm !== undefined ? folder.runs.filter((r) => r.arm === t.arm) : folder.runs;
}

async function values(folder: ReportFolder, t: SopTarget, runs: readonly ReportRun[], notes: string[]): Promise<Map<ReportRun, number[]>> {
  const out = new Map<ReportRun, number[]>();
  for (const run of runs) {
    if (t.metric !== undefined) {
      const v = metricValue(folder.sop, t, run);
      if (v !== undefined) out.set(run, [v]);
      continue;
    }
    try {
      const rows = await queryRows(run, t.query!);
      const xs = rows.map((r) => num(r.value)).filter(finite);
      if (rows.length > 0 && !rows.some((r) => 'value' in r)) notes.push(`the query gives no column "value" (run ${run.key})`);
      out.set(run, xs);
    } catch (err) {
      notes.push(`run ${run.key}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** Measures one target over the folder's runs. */
export async function measureTarget(folder: ReportFolder, t: SopTarget): Promise<Measured> {
  const notes: string[] = [];
  const kind = t.kind ?? 'value';
  if (t.metric !== undefined && metricState(folder.sop, t) === undefined)
    return { observation: null, notes: ['the SOP has no single population state; say which in "state"'] };
  if (kind === 'effect') {
    const [treatment, control] = t.arms ?? [];
    const byArm = (arm: string | undefined) => folder.runs.filter((r) => r.arm === arm);
    const tr = await values(folder, t, byArm(treatment), notes);
    const co = await values(folder, t, byArm(control), notes);
    const bySeed = (m: Map<ReportRun, number[]>) => new Map([...m].map(([r, xs]) => [r.seed, xs] as const));
    const trs = bySeed(tr);
    const cos = bySeed(co);
    const seeds = [...trs.keys()].filter((s) => cos.has(s)).sort((a, b) => a - b);
    if (trs.size === 0 || cos.size === 0) notes.push(`no runs of arm "${trs.size === 0 ? treatment : control}" were measured`);
    const paired = [...tr.keys(), ...co.keys()].every((r) => r.runSeed === undefined);
    return {
      observation: { kind: 'effect', paired, seeds: seeds.map((seed) => ({ seed, treatment: trs.get(seed)!, control: cos.get(seed)! })) },
      notes,
    };
  }
  const runs = runsOf(folder, t);
  if (t.arm === undefined && folder.runs.some((r) => r.arm !== undefined))
    notes.push('measured over the runs of every arm (give "arm" for one)');
  if (kind === 'value') {
    const m = await values(folder, t, runs, notes);
    for (const [run, xs] of m)
      if (t.query !== undefined && xs.length !== 1)
        notes.push(`run ${run.key}: the query gave ${xs.length} values; a value target takes one row`);
    return { observation: { kind: 'value', values: [...m.values()].filter((xs) => xs.length === 1).map((xs) => xs[0]!) }, notes };
  }
  if (kind === 'curve') {
    const curves: Array<Array<[number, number]>> = [];
    for (const run of runs) {
      if (t.metric !== undefined) {
        const series = seriesOf(run.dir).get(metricState(folder.sop, t)!) ?? [];
        curves.push(series.flatMap(([step, m]) => (finite(m[t.metric!]) ? [[step, m[t.metric!] as number] as [number, number]] : [])));
        continue;
      }
      try {
        const rows = await queryRows(run, t.query!);
        curves.push(
          rows.flatMap((r) =>
            num(r.step) !== undefined && num(r.value) !== undefined ? [[num(r.step)!, num(r.value)!] as [number, number]] : [],
          ),
        );
      } catch (err) {
        notes.push(`run ${run.key}: ${(err as Error).message}`);
      }
    }
    return { observation: { kind: 'curve', runs: curves }, notes };
  }
  // distribution
  const samples: number[] = [];
  const counts: Record<string, number> = {};
  for (const run of runs) {
    if (t.metric !== undefined) {
      const m = metricsAt(seriesOf(run.dir).get(metricState(folder.sop, t)!), t.at) ?? {};
      const own = m[t.metric];
      if (finite(own)) samples.push(own); // a scalar metric: one sample per run
      const prefix = `${t.metric}.`;
      for (const [name, v] of Object.entries(m))
        if (name.startsWith(prefix) && finite(v)) counts[name.slice(prefix.length)] = (counts[name.slice(prefix.length)] ?? 0) + v; // a histogram metric's bins
      continue;
    }
    try {
      for (const r of await queryRows(run, t.query!)) {
        if ('category' in r) {
          const n = num(r.n) ?? 1;
          const c = r.category === null ? 'null' : String(r.category);
          counts[c] = (counts[c] ?? 0) + n;
        } else {
          const v = num(r.value);
          if (v !== undefined) samples.push(v);
        }
      }
    } catch (err) {
      notes.push(`run ${run.key}: ${(err as Error).message}`);
    }
  }
  return { observation: { kind: 'distribution', samples, counts }, notes };
}
