// Parts of a run with state of their own (its plugins), journaled in each checkpoint.
import type { RunEvent } from './events.js';

/** What a restore hands a part beside its own state. */
export interface RestoreContext {
  /** Run files (memory files) as the journal left them at the checkpoint, by path. */
  files: Record<string, string>;
  /**
   * The effective history up to the checkpoint, in order (empty when the caller has none): a part
   * whose checkpoints hold only what changed since an earlier one rebuilds itself from it.
   */
  events: readonly RunEvent[];
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
  restoreCheckpoint(state: unknown, context: RestoreContext): void | Promise<void>;
}

export function isCheckpointable(v: unknown): v is Checkpointable {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Checkpointable).checkpoint === 'function' &&
    typeof (v as Checkpointable).restoreCheckpoint === 'function'
  );
}

/**
 * The `extensions` of a snapshot: each checkpointable part's state, by name, as the parts return
 * it (not copied: the snapshot that holds them is copied whole through JSON, src/core/runtime/snapshot.ts,
 * so copying each first would serialise a large world twice).
 */
export function saveExtensions(parts: Record<string, unknown>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [name, part] of Object.entries(parts)) {
    if (isCheckpointable(part)) (out ??= {})[name] = part.checkpoint();
  }
  return out;
}

export async function restoreExtensions(
  parts: Record<string, unknown>,
  saved: Record<string, unknown> | undefined,
  files: Record<string, string>,
  events: readonly RunEvent[] = [],
): Promise<void> {
  for (const [name, part] of Object.entries(parts)) {
    if (isCheckpointable(part) && saved && Object.prototype.hasOwnProperty.call(saved, name)) {
      await part.restoreCheckpoint(saved[name], { files, events });
    }
  }
}

/** Errors marked resumable stop a run as `interrupted` (resume it later), not `failed`. */
export function isResumableError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { resumable?: unknown }).resumable === true;
}
