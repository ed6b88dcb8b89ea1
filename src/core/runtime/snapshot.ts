// Snapshots at turn boundaries (the `checkpoint` event the journal records) and restoring one on
// resume (the journal reads it back: src/core/runtime/position.ts RestorePoint).
import { assignOwn, cloneJson, cloneJsonKeepingText } from '../../shared/util/json.js';
import { restoreExtensions, saveExtensions } from './checkpoint.js';
import type { EnvironmentMemory } from '../environment/environment.js';
import { stateful } from './compose.js';
import type { RunContext } from './context.js';
import type { RunEvent } from './events.js';
import { SNAPSHOT_VERSION, type RestorePoint, type RunPosition, type RunSnapshot } from './position.js';
import { addLostCall } from './usage.js';
import { restoreSummaryChunks, summaryChunkLengths, viewerChunkLengths } from './summaries.js';

type ResumedEvent = Extract<RunEvent, { type: 'resumed' }>;

/** The settings and launch of a `resumed` event, leaving out those not given. */
function defined(a: Pick<ResumedEvent, 'settings' | 'launch'>): Pick<ResumedEvent, 'settings' | 'launch'> {
  return { ...(a.settings ? { settings: a.settings } : {}), ...(a.launch ? { launch: a.launch } : {}) };
}

/** The components' shared memory, journaled when extract components write it. */
export interface SharedComponentMemory {
  snapshotShared(): Record<string, string>;
  restoreShared(saved: Record<string, string> | undefined): void;
}

/** The parts of a run a snapshot holds and a restore sets. */
export type SnapshotHost = Pick<
  RunContext,
  'position' | 'rng' | 'env' | 'usage' | 'llm' | 'human' | 'effects' | 'plugins' | 'emit' | 'listened'
>;

/** Audiences: summaries kept per viewer, in a checkpoint only when there are some. */
function viewerSummaries(env: EnvironmentMemory): { summaries?: Record<string, string> } {
  const own = env.viewerSummaries();
  return Object.keys(own).length > 0 ? { summaries: own } : {};
}

function viewerChunks(env: EnvironmentMemory): { summaries_chunks?: Record<string, number[]> } {
  const lengths = viewerChunkLengths(env);
  return lengths ? { summaries_chunks: lengths } : {};
}

function chunkLengths(env: EnvironmentMemory): { summary_chunks?: number[] } {
  const lengths = summaryChunkLengths(env);
  return lengths ? { summary_chunks: lengths } : {};
}

/** A run's checkpoints: snapshot at turn boundaries, restore on resume. */
export class RunCheckpoints {
  constructor(
    private readonly host: SnapshotHost,
    /** Native SOPs whose extract components write shared memory journal it in checkpoints. */
    private readonly sharedComponents?: SharedComponentMemory,
  ) {}

  /** Everything needed to continue from this turn boundary (messages come from the journal). */
  snapshot(): RunSnapshot {
    const h = this.host;
    const cursor = h.llm().position;
    const extensions = saveExtensions(this.checkpointables());
    // one copy through JSON of the whole; the journal writes its text as it is (no second serialisation)
    return cloneJsonKeepingText<RunSnapshot>({
      v: SNAPSHOT_VERSION,
      position: { ...(h.position as RunPosition), rng: h.rng.state },
      environment: {
        messages: h.env.messages.length,
        summary: h.env.summary,
        ...chunkLengths(h.env),
        state_start: h.env.stateStart,
        ...viewerSummaries(h.env),
        ...viewerChunks(h.env),
      },
      usage: h.usage,
      ...(cursor !== undefined ? { llm_cursor: cursor } : {}),
      human_consumed: h.human.consumed,
      ...(extensions ? { extensions } : {}),
    });
  }

  /** Plugins with state of their own, journaled in each checkpoint by name (see src/core/runtime/checkpoint.ts). */
  private checkpointables(): Record<string, unknown> {
    const out: Record<string, unknown> = stateful(this.host.plugins);
    const shared = this.sharedComponents;
    if (shared) {
      out.components = {
        checkpoint: () => shared.snapshotShared(),
        restoreCheckpoint: (s: unknown) => shared.restoreShared(s as Record<string, string>),
      };
    }
    return out;
  }

  checkpoint(): void {
    // the snapshot (a copy of the run's state through JSON) is for listeners: the journal keeps it;
    // a run nobody listens to (an in-process run without a folder) skips building it
    if (this.host.listened?.() !== false) this.host.emit({ type: 'checkpoint', turn: this.host.position.turn, snapshot: this.snapshot() });
    this.host.effects.reset(this.host.position.turn);
  }

  /** `applied`: the settings of this resume or fork, recorded on its `resumed` event (the next resume starts from them). */
  async restore(from: RestorePoint, applied: Pick<ResumedEvent, 'settings' | 'launch'> = {}): Promise<void> {
    const h = this.host;
    const s = from.snapshot;
    if (!s) {
      // Killed before its first checkpoint: start over, without a second run_started.
      h.emit({ type: 'resumed', mode: from.mode, from_turn: 0, time: new Date().toISOString(), ...defined(applied) });
      for (const c of from.lost ?? []) addLostCall(h.usage, c);
      if (from.seekLlm !== false) h.llm().seek?.(0); // a cassette being recorded starts over too
      this.checkpoint();
      return;
    }
    for (const m of from.messages) await h.env.add(m);
    h.env.summary = s.environment.summary;
    restoreSummaryChunks(h.env, s.environment.summary, s.environment.summary_chunks);
    for (const [viewer, text] of Object.entries(s.environment.summaries ?? {})) h.env.setSummary([viewer], text);
    for (const [viewer, lengths] of Object.entries(s.environment.summaries_chunks ?? {}))
      restoreSummaryChunks(h.env, h.env.summaryFor(viewer), lengths, viewer);
    h.env.stateStart = s.environment.state_start;
    assignOwn(h.position as RunPosition, cloneJson(s.position));
    h.rng.state = s.position.rng;
    assignOwn(h.usage, cloneJson(s.usage));
    for (const c of from.lost ?? []) addLostCall(h.usage, c); // paid calls whose replies a kill lost
    if (from.seekLlm !== false && s.llm_cursor !== undefined) h.llm().seek?.(s.llm_cursor);
    const answered = s.human_consumed - h.human.consumed;
    if (answered > 0) h.human.skip?.(answered);
    await restoreExtensions(this.checkpointables(), s.extensions, from.files ?? {}, (from.history ?? []) as readonly RunEvent[]);
    h.effects.reset(s.position.turn);
    h.emit({ type: 'resumed', mode: from.mode, from_turn: s.position.turn, time: new Date().toISOString(), ...defined(applied) });
  }
}
