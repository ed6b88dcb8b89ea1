// A checkpoint of a run at a turn boundary: everything a resumed run needs that is not already
// in the journal's other events. Messages are not copied into every checkpoint (that would make
// the journal grow with the square of the run's length): they are rebuilt from the `message`
// events before the checkpoint, and the checkpoint only records how many there were.
import { SNAPSHOT_VERSION, type RestorePoint } from '../../core/runtime/position.js';
import type { EffectIndex } from './effects.js';
import { isObject } from '../../shared/util/is-object.js';

export { SNAPSHOT_VERSION, type RestorePoint, type RunSnapshot } from '../../core/runtime/position.js';
export { assignOwn, cloneJson } from '../../shared/util/json.js';
export {
  isCheckpointable,
  isResumableError,
  restoreExtensions,
  saveExtensions,
  type Checkpointable,
} from '../../core/runtime/checkpoint.js';

/** Check the shape of a journaled snapshot; returns a reason when it cannot be restored. */
export function snapshotProblem(s: unknown): string | undefined {
  if (!isObject(s)) return 'not an object';
  if (s.v !== SNAPSHOT_VERSION) return `snapshot version ${String(s.v)} is not supported (expected ${SNAPSHOT_VERSION})`;
  const p = s.position;
  if (!isObject(p) || typeof p.current !== 'string' || typeof p.turn !== 'number' || !isObject(p.states) || typeof p.rng !== 'number') {
    return 'position is incomplete';
  }
  const e = s.environment;
  if (!isObject(e) || typeof e.messages !== 'number' || typeof e.summary !== 'string' || typeof e.state_start !== 'number') {
    return 'environment is incomplete';
  }
  if (!isObject(s.usage)) return 'usage is missing';
  if (typeof s.human_consumed !== 'number') return 'human_consumed is missing';
  return undefined;
}

/** What a Run needs to continue from a checkpoint (built by src/features/journal/resume-point.ts). */
export interface ResumeFrom extends RestorePoint {
  /** Effect results in the journal (a resume reuses them; a fork starts with none). */
  effects?: EffectIndex;
}
