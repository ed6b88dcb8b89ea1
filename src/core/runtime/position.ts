// Where a run stands at a turn boundary, and the checkpoint that journals it: types both the
// run loop (src/core/runtime) and the journal (src/features/journal) import, so neither imports the other.
import type { StateRuntime } from './controller.js';
import type { LostCall, UsageTotals } from './usage.js';
import type { Message } from '../environment/message.js';

/** The serializable position of a run (what a journal must restore). */
export interface RunPosition {
  current: string;
  turn: number;
  states: Record<string, StateRuntime>;
  rng: number;
  started: boolean;
}

export const SNAPSHOT_VERSION = 1;

export interface RunSnapshot {
  v: typeof SNAPSHOT_VERSION;
  /** Current state, global turn, per-state controller counters, random generator state. */
  position: RunPosition;
  environment: {
    /** Number of messages in the shared history (they are the journal's `message` events). */
    messages: number;
    summary: string;
    /** Summary chunks (src/core/runtime/summaries.ts): each one's length in `summary`, when there are several. */
    summary_chunks?: number[];
    /** Audiences: the summaries kept per viewer that differ from `summary`. */
    summaries?: Record<string, string>;
    /** Audiences: the chunk lengths of each viewer's summary that has several. */
    summaries_chunks?: Record<string, number[]>;
    /** Index of the first message of the current state's visit. */
    state_start: number;
  };
  usage: UsageTotals;
  /** Index of the next cassette interaction (replay providers only). */
  llm_cursor?: number;
  /** Human answers consumed so far (an answers file continues after them). */
  human_consumed: number;
  /** State of other components (e.g. sub-flows, memory files), by component name. */
  extensions?: Record<string, unknown>;
}

/** What a run needs to continue from a checkpoint (the journal builds it: src/features/journal/record.ts). */
export interface RestorePoint {
  mode: 'resume' | 'fork';
  /** Absent when the run was killed before its first checkpoint: it starts again from the beginning. */
  snapshot?: RunSnapshot;
  /** The shared history up to the checkpoint, in order. */
  messages: Message[];
  /** Move a replay provider to the checkpoint's cassette position (false: start the cassette at 0). */
  seekLlm?: boolean;
  /** Paid LLM calls whose replies a kill lost after the checkpoint (counted in usage by the resume). */
  lost?: LostCall[];
  /** Run files (memory files) as the journal's `file_written` events left them at the checkpoint, by path. */
  files?: Record<string, string>;
  /** The effective history up to and including the checkpoint (parts rebuild what their checkpoints left out from it). */
  history?: ReadonlyArray<{ type: string }>; // RunEvent[] (./events.ts imports this file)
}
