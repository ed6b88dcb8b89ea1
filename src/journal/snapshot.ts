// A checkpoint of a run at a turn boundary: everything a resumed run needs that is not already
// in the journal's other events. Messages are not copied into every checkpoint (that would make
// the journal grow with the square of the run's length): they are rebuilt from the `message`
// events before the checkpoint, and the checkpoint only records how many there were.
import { SNAPSHOT_VERSION, type RunSnapshot } from '../runtime/position.js';
import type { Message } from '../environment/message.js';
import type { EffectIndex } from './effects.js';

export { SNAPSHOT_VERSION, type RunSnapshot } from '../runtime/position.js';

/** Deep copy through JSON: what is journaled is exactly what is restored. */
export function cloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Copy own properties of journaled JSON onto a live object, never prototype keys. */
export function assignOwn<T extends object>(target: T, source: unknown): T {
  if (typeof source !== 'object' || source === null) return target;
  for (const [k, v] of Object.entries(source)) {
    if (k !== '__proto__' && k !== 'constructor' && k !== 'prototype') (target as Record<string, unknown>)[k] = v;
  }
  return target;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

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

/** What a Run needs to continue from a checkpoint (built by src/journal/resume-point.ts). */
export interface ResumeFrom {
  mode: 'resume' | 'fork';
  /** Absent when the run was killed before its first checkpoint: it starts again from the beginning. */
  snapshot?: RunSnapshot;
  /** The shared history up to the checkpoint, in order. */
  messages: Message[];
  /** Effect results in the journal (a resume reuses them; a fork starts with none). */
  effects?: EffectIndex;
  /** Move a replay provider to the checkpoint's cassette position (false: start the cassette at 0). */
  seekLlm?: boolean;
  /** Run files (memory files) as the journal's `file_written` events left them at the checkpoint, by path. */
  files?: Record<string, string>;
}

/**
 * A part of a run with state of its own (memory files, sub-flows, private memories): the Run
 * journals `checkpoint()` in each checkpoint's `extensions` and hands it back on resume. Keep it
 * small: what the journal's events already say (messages, file_written contents) need not be
 * repeated. Effects inside an effect (a file an executor writes) belong in the effect's result,
 * so a resumed run that reuses the result can apply them again.
 */
export interface Checkpointable {
  checkpoint(): unknown;
  restoreCheckpoint(state: unknown, context: { files: Record<string, string> }): void | Promise<void>;
}

export function isCheckpointable(v: unknown): v is Checkpointable {
  return typeof v === 'object' && v !== null
    && typeof (v as Checkpointable).checkpoint === 'function' && typeof (v as Checkpointable).restoreCheckpoint === 'function';
}

/** The `extensions` of a snapshot: each checkpointable part's state, by name. */
export function saveExtensions(parts: Record<string, unknown>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [name, part] of Object.entries(parts)) {
    if (isCheckpointable(part)) (out ??= {})[name] = cloneJson(part.checkpoint());
  }
  return out;
}

export async function restoreExtensions(parts: Record<string, unknown>, saved: Record<string, unknown> | undefined, files: Record<string, string>): Promise<void> {
  for (const [name, part] of Object.entries(parts)) {
    if (isCheckpointable(part) && saved && Object.prototype.hasOwnProperty.call(saved, name)) {
      await part.restoreCheckpoint(saved[name], { files });
    }
  }
}

/** Errors marked resumable stop a run as `interrupted` (resume it later), not `failed`. */
export function isResumableError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { resumable?: unknown }).resumable === true;
}
