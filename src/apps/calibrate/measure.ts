// What a calibration measures of a particle's runs for its targets (docs/calibrate.md#distance):
// the same measurement as `sop report` (../report/measure.ts: a population metric from the run's
// journal, a `query` target from its results database), over the particle's runs (one per seed)
// as one observation per target, which the validity feature compares with the target
// (evaluateTargets) and sums into the distance (targetDistance).
import { isPopulationState } from '../../features/population/state-spec.js';
import { evaluateTargets, targetDistance, type Target, type TargetObservation, type TargetResult } from '../../features/validity/index.js';
import type { Sop } from '../../format/sop/types.js';
import { CalibrateError } from '../../features/calibrate/priors.js';
import { forgetMeasured, measureTarget } from '../report/measure.js';
import type { ReportFolder } from '../report/runs.js';

/** A run of a particle: its key, its seed and its folder. */
export interface ParticleRun {
  key: string;
  seed: number;
  dir: string;
}

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

/** The particle's results against the targets, and its distance (the sum of the scaled distances). */
export async function particleFit(
  runs: readonly ParticleRun[],
  sop: Sop,
  file: string,
  targets: Readonly<Record<string, Target>>,
): Promise<{ results: TargetResult[]; distance: number }> {
  const folder: ReportFolder = {
    kind: 'sweep',
    dir: '',
    runs: runs.map((r) => ({ ...r, status: 'finished' })),
    left: 0,
    sop,
    sopFile: file,
    targetsFrom: 'file',
  };
  const observations: Record<string, TargetObservation | null> = {};
  for (const [name, t] of Object.entries(targets)) observations[name] = (await measureTarget(folder, t)).observation;
  const results = evaluateTargets(targets, observations);
  return { results, distance: targetDistance(results) };
}

/** Lets go of what was read of these runs' journals (a round's runs, once it is scored). */
export function forgetRuns(runs: readonly ParticleRun[]): void {
  for (const r of runs) forgetMeasured(r.dir);
}
