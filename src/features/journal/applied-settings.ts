// The settings that apply to a run now (or at a turn): those recorded by its last resume (or by
// the fork that made it), else those of its launch. A `resumed` event is journaled before the
// resumed run takes a turn, so a resume killed before its first checkpoint still hands its
// settings on. The raw journal is read: the effective history leaves the `resumed` markers out.
import type { RunEvent, RunSettings } from '../../core/runtime/events.js';
import type { RunRecord } from './record.js';
import { isObject } from '../../shared/util/is-object.js';

export interface AppliedSettings {
  settings: RunSettings;
  launch: Record<string, string | number | boolean>;
}

/** Settings as a journal records them: an object with a whole max_turns above 0 (anything else is not used). */
function isSettings(v: unknown): v is RunSettings {
  return isObject(v) && typeof v.max_turns === 'number' && Number.isInteger(v.max_turns) && v.max_turns > 0;
}

/** A launch as a journal records it: an object of strings, numbers and booleans. */
function isLaunch(v: unknown): v is AppliedSettings['launch'] {
  return isObject(v) && Object.values(v).every((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean');
}

/**
 * The settings and launch a continuation of `record` starts from: each from the last `resumed`
 * event of the journal that carries it (journals of older sops carry none), else from
 * run_started. With `turn` (a fork), those that applied when the checkpoint of that turn was
 * written: the last `resumed` before it, so a fork goes on as the run went on from there.
 */
export function appliedSettings(record: Pick<RunRecord, 'started' | 'all' | 'effective' | 'checkpoints'>, turn?: number): AppliedSettings {
  let end = record.all.length;
  if (turn !== undefined) {
    const at = record.checkpoints.get(turn);
    end = at === undefined ? 0 : Math.max(0, record.all.indexOf(record.effective[at]!)); // the same event objects
  }
  let settings: RunSettings | undefined;
  let launch: AppliedSettings['launch'] | undefined;
  for (let i = end - 1; i >= 0 && (settings === undefined || launch === undefined); i--) {
    const e: RunEvent = record.all[i]!;
    if (e.type !== 'resumed') continue;
    if (settings === undefined && isSettings(e.settings)) settings = e.settings;
    if (launch === undefined && isLaunch(e.launch)) launch = e.launch;
  }
  const out = { ...(launch ?? record.started.launch ?? {}) };
  const redact = redactedNames(record);
  if (redact.length > 0) out.redact = redact.join(',');
  return { settings: { ...(settings ?? record.started.settings ?? { max_turns: 200 }) }, launch: out };
}

/** secrets: every name given with --redact to the run or any resume of it (a fork from an earlier turn redacts them too). */
function redactedNames(record: Pick<RunRecord, 'started' | 'all'>): string[] {
  const names = new Set<string>();
  for (const e of [record.started, ...record.all]) {
    const launch = e.type === 'run_started' || e.type === 'resumed' ? e.launch : undefined;
    if (isLaunch(launch) && typeof launch.redact === 'string') for (const n of launch.redact.split(',')) if (n) names.add(n);
  }
  return [...names];
}
