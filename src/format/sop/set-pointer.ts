// Values set at JSON pointers (RFC 6901) on a copy of a SOP document: how a calibration's
// parameter with a `path` (docs/calibrate.md) reaches a run, and how a grid point's `set` is
// applied by `sop sweep`, its worker threads and `sop worker` alike. Only a value (a number, a
// string, a boolean) is set, in place of a value or as a new key of an existing object, never a
// whole block, and never under `/plugins` (which names modules the process imports): a queued job
// that carries a `set` can change a run's numbers, not what the worker loads. The document is
// validated again after the change, by the caller, with every check of the loader.
import { EngineError } from '../../shared/errors.js';

export type SetValue = number | string | boolean;

export class PointerError extends EngineError {
  constructor(message: string) {
    super(message, 'POINTER');
    this.name = 'PointerError';
  }
}

/** The parts of a JSON pointer ("/states/a~1b/x" -> ["states", "a/b", "x"]); "" is the whole document. */
export function pointerParts(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PointerError(`"${pointer}" is not a JSON pointer (it starts with /, as /states/NAME/...)`);
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Why a value cannot be set at `pointer` in `doc` (undefined: it can): the pointer's parent must
 * exist and be an object (any key) or an array (an index it has), and what it replaces, if
 * anything, must be a value, not an object or a list.
 */
export function setProblem(doc: unknown, pointer: string): string | undefined {
  let parts: string[];
  try {
    parts = pointerParts(pointer);
  } catch (err) {
    return (err as Error).message;
  }
  if (parts.length === 0) return 'the pointer names the whole SOP; name a value inside it';
  if (parts[0] === 'plugins') return 'a value under /plugins (the modules a SOP loads) cannot be set';
  const bad = parts.find((p) => FORBIDDEN.has(p));
  if (bad !== undefined) return `"${bad}" cannot be a part of the pointer`;
  let at: unknown = doc;
  for (const [i, part] of parts.slice(0, -1).entries()) {
    const next = childOf(at, part);
    if (next === undefined || next === null || typeof next !== 'object')
      return `${'/' + parts.slice(0, i + 1).join('/')} is not ${next === undefined ? 'in the SOP' : 'an object or a list'}`;
    at = next;
  }
  const last = parts[parts.length - 1]!;
  if (Array.isArray(at)) {
    if (!/^\d+$/.test(last) || Number(last) >= at.length) return `${pointer}: the list has no item ${last}`;
  }
  const current = childOf(at, last);
  if (current !== undefined && current !== null && typeof current === 'object')
    return `${pointer} holds ${Array.isArray(current) ? 'a list' : 'an object'}; a parameter sets one value (a number, a string or true/false)`;
  return undefined;
}

function childOf(at: unknown, part: string): unknown {
  if (Array.isArray(at)) return /^\d+$/.test(part) ? at[Number(part)] : undefined;
  if (at !== null && typeof at === 'object' && Object.prototype.hasOwnProperty.call(at, part)) return (at as Record<string, unknown>)[part];
  return undefined;
}

/** A copy of `doc` with each value set at its pointer (in the order given); PointerError names the first that cannot be. */
export function withValuesSet<T>(doc: T, set: Readonly<Record<string, SetValue>>): T {
  const copy = structuredClone(doc);
  for (const [pointer, value] of Object.entries(set)) {
    if (!['number', 'string', 'boolean'].includes(typeof value) || (typeof value === 'number' && !Number.isFinite(value)))
      throw new PointerError(`${pointer}: only a number, a string or true/false can be set (got ${JSON.stringify(value) ?? typeof value})`);
    const problem = setProblem(copy, pointer);
    if (problem) throw new PointerError(problem.startsWith(pointer) ? problem : `${pointer}: ${problem}`);
    const parts = pointerParts(pointer);
    let at = copy as unknown as Record<string, unknown>;
    for (const part of parts.slice(0, -1)) at = childOf(at, part) as Record<string, unknown>;
    const last = parts[parts.length - 1]!;
    if (Array.isArray(at)) (at as unknown[])[Number(last)] = value;
    else at[last] = value;
  }
  return copy;
}
