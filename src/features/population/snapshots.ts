// How a population visit is kept in the run's checkpoints (docs/population.md#durability):
// whole only after `steps` steps in which at least twice the population's size in actions were
// applied, or after `actions` applied actions; in between a checkpoint says only
// where the visit stands (step, metrics) and the step of its last whole save (`base`, 0 for the
// visit's start). A resume rebuilds the visit from that whole save (or from the SOP, for the
// start) and does the journaled `population_step`s after it again: their interventions and the
// actions the world applied, in order, with no LLM call. So a step's journal holds what changed,
// and a checkpoint's size does not grow with the population.
import { EngineError } from '../../shared/errors.js';
import type { RunEvent } from '../../core/runtime/events.js';
import type { RestoredVisit, SavedVisit } from './step.js';

/** A whole save after 50 steps with twice the population's size in actions, or after 1,000,000 applied actions (about 100 MB of journal). */
export const SNAPSHOT_DEFAULTS = { steps: 50, actions: 1_000_000 };

type StepEvent = Extract<RunEvent, { type: 'population_step' }>;

/** A checkpointed visit, with what a resume needs from the journal to rebuild it. */
export function restoredVisit(state: string, saved: SavedVisit, events: readonly RunEvent[]): RestoredVisit {
  const rules = saved.rules ? { rules: saved.rules } : {};
  if (saved.base === undefined) return { full: saved, replay: [], ...rules };
  const base = saved.base;
  let full: SavedVisit | undefined;
  if (base > 0) {
    for (let i = events.length - 1; i >= 0 && !full; i--) {
      const e = events[i]!;
      if (e.type !== 'checkpoint') continue;
      const v = (e.snapshot.extensions?.population as Record<string, SavedVisit> | undefined)?.[state];
      if (v && v.visit === saved.visit && v.step === base && v.world !== undefined) full = v;
    }
    if (!full)
      throw new EngineError(
        `population state "${state}": its checkpoint at step ${saved.step} builds on the whole save of step ${base}, which the journal does not hold`,
        'POPULATION',
      );
  }
  const steps = new Map<number, StepEvent>();
  for (const e of events)
    if (e.type === 'population_step' && e.state === state && e.visit === saved.visit && e.step > base && e.step <= saved.step)
      steps.set(e.step, e);
  const replay: StepEvent[] = [];
  for (let s = base + 1; s <= saved.step; s++) {
    const e = steps.get(s);
    if (!e)
      throw new EngineError(
        `population state "${state}": step ${s} of visit ${saved.visit} is missing from the journal; the visit cannot be rebuilt`,
        'POPULATION',
      );
    replay.push(e);
  }
  return { ...(full ? { full } : {}), replay, ...rules };
}
