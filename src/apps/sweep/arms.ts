// The arms of a SOP's `experiment` (docs/validity.md#experiments): each arm's inputs, the values
// it sets at JSON pointers of the SOP, and the seed an arm's run of seed s runs with: s itself
// with common random numbers (every draw of a run is keyed by seed, purpose, step and agent, so
// the arms' runs of one seed draw the same numbers), or s hashed with the arm's name on
// independent seeds (--independent, or "common_random_numbers": false).
import { EngineError } from '../../shared/errors.js';
import { SopError } from '../../format/sop/diagnostics.js';
import type { Sop } from '../../format/sop/types.js';
import { validateSopDocument } from '../../api/loader/checked-load.js';
import { mixSeed } from '../../features/population/worlds/seed.js';

export interface Arm {
  name: string;
  /** The arm's inputs as --input gives them (text). */
  inputs: Record<string, string>;
  /** JSON pointer -> value set in the SOP for this arm. */
  set: Record<string, unknown>;
}

/** The arms of the SOP's experiment, in their declared order; undefined without one. */
export function experimentArms(sop: Sop): Arm[] | undefined {
  const arms = sop.experiment?.arms;
  if (arms === undefined) return undefined;
  return Object.entries(arms).map(([name, a]) => ({
    name,
    inputs: Object.fromEntries(Object.entries(a.inputs ?? {}).map(([k, v]) => [k, String(v)])),
    set: { ...(a.set ?? {}) },
  }));
}

/** Whether the arms share their seeds (common random numbers): the SOP's setting (default true), unless --independent. */
export function commonRandomNumbers(sop: Sop, independent: boolean | undefined): boolean {
  return independent !== true && sop.experiment?.common_random_numbers !== false;
}

/** The seed of an arm's run of `seed` on independent seeds: a 32-bit hash of the seed and the arm's name. */
export function independentSeed(seed: number, arm: string): number {
  return mixSeed(seed, 'arm', arm);
}

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** A copy of `doc` with `value` at the JSON pointer (objects made on the way; list items by index). */
export function setAtPointer(doc: unknown, pointer: string, value: unknown): unknown {
  if (pointer === '' || !pointer.startsWith('/')) throw new EngineError(`set "${pointer}": a JSON pointer starts with /`, 'SWEEP_OPTION');
  const parts = pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (parts.some((p) => FORBIDDEN.has(p))) throw new EngineError(`set "${pointer}": names a reserved key`, 'SWEEP_OPTION');
  const root = structuredClone(doc) as Record<string, unknown>;
  let at: Record<string, unknown> | unknown[] = root;
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1;
    if (Array.isArray(at)) {
      const idx = Number(part);
      if (!Number.isInteger(idx) || idx < 0 || idx >= at.length)
        throw new EngineError(`set "${pointer}": ${part} is not an item of the list at /${parts.slice(0, i).join('/')}`, 'SWEEP_OPTION');
      if (last) at[idx] = value;
      else at = nextContainer(at, idx, pointer);
    } else {
      if (last) at[part] = value;
      else at = nextContainer(at, part, pointer);
    }
  }
  return root;
}

function nextContainer(
  at: Record<string, unknown> | unknown[],
  key: string | number,
  pointer: string,
): Record<string, unknown> | unknown[] {
  const holder = at as Record<string | number, unknown>;
  const v = holder[key];
  if (v === undefined) {
    const made: Record<string, unknown> = {};
    holder[key] = made;
    return made;
  }
  if (typeof v !== 'object' || v === null)
    throw new EngineError(`set "${pointer}": ${String(key)} holds a ${typeof v}, not an object or a list`, 'SWEEP_OPTION');
  return v as Record<string, unknown> | unknown[];
}

const armed = new WeakMap<Sop, Map<string, Sop>>();

/**
 * The SOP an arm runs: the SOP itself when the arm sets nothing, else a copy with the arm's values
 * set, validated as a SOP file is (a mistake names the arm and the problem).
 */
export function armSop(sop: Sop, file: string, arm: string | undefined): Sop {
  if (arm === undefined) return sop;
  const def = experimentArms(sop)?.find((a) => a.name === arm);
  if (def === undefined) throw new EngineError(`arm "${arm}" is not declared in experiment.arms of ${sop.name}`, 'SWEEP_OPTION');
  if (Object.keys(def.set).length === 0) return sop;
  let cache = armed.get(sop);
  if (!cache) armed.set(sop, (cache = new Map<string, Sop>()));
  const known = cache.get(arm);
  if (known) return known;
  let doc: unknown = sop;
  for (const [pointer, value] of Object.entries(def.set)) doc = setAtPointer(doc, pointer, value);
  let made: Sop;
  try {
    made = validateSopDocument(doc, file).sop;
  } catch (err) {
    if (!(err instanceof SopError)) throw err;
    const first = err.diagnostics.find((d) => d.severity === 'error');
    throw new EngineError(
      `experiment.arms.${arm}.set makes the SOP invalid: ${first ? `${first.pointer || '/'}: ${first.message}` : err.message}`,
      'SOP_INVALID',
    );
  }
  cache.set(arm, made);
  return made;
}
