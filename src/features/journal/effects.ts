// The effect ledger: every call with an outside effect (an LLM call, a human's answer, running
// code, a sub-SOP, a file write) goes through `perform`, which gives it a key that is stable
// across a crash and a resume: `<turn of the last checkpoint>.<n-th effect since then>`. The run
// after a checkpoint is deterministic, so a resumed run asks for the same effects in the same
// order; an effect whose result is in the journal is not performed again, its result is reused.
//
// A sub-flow (a nested run) has a ledger of its own whose keys start with the flow's name; a
// resumed run replays an interrupted sub-flow from its start with every journaled effect reused,
// which rebuilds the sub-flow's state exactly and performs nothing twice.
//
// Usage (executors): `const { value } = await run.effects.perform({ kind: 'code', label, marksStart: true,
// rerunNeedsApproval: true }, () => execute(...))`. The result must be JSON-serialisable; return
// failures (non-zero exit, timeout) as results, since a thrown error is not journaled as one.
import { EngineError, type MessagePart, opt, say } from '../../shared/errors.js';
import type { RunEvent } from '../../core/runtime/events.js';
import { llmEffectLabel, type EffectSpec, type Effects, type LlmEffectResult, type Performed } from '../../core/runtime/effects.js';

export { llmEffectLabel, type EffectSpec, type Effects, type LlmEffectResult, type Performed } from '../../core/runtime/effects.js';

export interface JournaledEffect {
  kind: string;
  label: string;
  result: unknown;
  /** Cassette position after the effect (LLM calls made inside it, e.g. by a sub-flow). */
  llmCursor?: number;
}

/** The replayable LLM of the run, so reusing an effect skips the cassette replies used inside it. */
export interface LlmCursor {
  position(): number | undefined;
  seek(position: number): void;
}

export interface EffectIndex {
  finished: Map<string, JournaledEffect>;
  started: Map<string, { kind: string; label: string }>;
}

export function emptyEffectIndex(): EffectIndex {
  return { finished: new Map(), started: new Map() };
}

/**
 * Every effect result the journal holds, by key. Read over all lines of the journal (not only
 * the effective ones): the results of an interrupted turn are exactly what a resume reuses.
 */
export function indexEffects(events: Iterable<RunEvent>): EffectIndex {
  const index = emptyEffectIndex();
  const visit = (e: RunEvent): void => {
    // A sub-flow's events come wrapped; its ledger's keys carry the flow's name.
    if (e.type === 'subflow') visit(e.event);
    else if (e.type === 'effect_started') index.started.set(e.key, { kind: e.kind, label: e.label });
    else if (e.type === 'effect_cancelled') index.started.delete(e.key);
    else if (e.type === 'effect_finished') {
      index.finished.set(e.key, {
        kind: e.kind,
        label: e.label,
        result: e.result,
        ...(e.llm_cursor !== undefined ? { llmCursor: e.llm_cursor } : {}),
      });
    } else if (e.type === 'llm_call' && e.effect !== undefined) {
      const result: LlmEffectResult = { content: e.reply, usage: e.usage, ...(e.price_tier ? { priceTier: e.price_tier } : {}) };
      index.finished.set(e.effect, { kind: 'llm', label: llmEffectLabel(e.purpose, e.state, e.agent), result });
    }
  };
  for (const e of events) visit(e);
  return index;
}

export interface RerunPolicy {
  /** --auto-run: perform again without asking. */
  autoRun?: boolean;
  /** Ask the user (a terminal); resolves true to perform the effect again. */
  approve?(question: string): Promise<boolean>;
}

/** An interrupted side effect may have happened and nobody approved doing it again. */
export class EffectNotApprovedError extends EngineError {
  /** Stops the run as interrupted: resume it with --auto-run or on a terminal. */
  readonly resumable = true;
  constructor(message: string | readonly MessagePart[]) {
    super(message, 'EFFECT_NOT_APPROVED');
    this.name = 'EffectNotApprovedError';
  }
}

export class EffectLedger implements Effects {
  private base = 0;
  private n = 0;

  constructor(
    private readonly emit: (event: RunEvent) => void,
    private readonly turn: () => number,
    private readonly index: EffectIndex = emptyEffectIndex(),
    private readonly policy: RerunPolicy = {},
    /** Names the ledger's keys apart from others in the same journal: a sub-flow's "flow/". */
    private readonly prefix = '',
    private readonly cursor?: LlmCursor,
  ) {}

  /** A checkpoint was written at `turn`: keys restart from it. */
  reset(turn: number): void {
    this.base = turn;
    this.n = 0;
  }

  async perform<T>(spec: EffectSpec, fn: (key: string) => Promise<T>): Promise<Performed<T>> {
    const key = spec.key !== undefined ? `${this.prefix}${this.base}.${spec.key}` : `${this.prefix}${this.base}.${this.n++}`;
    const turn = this.turn();
    const journaled = spec.composite ? undefined : this.index.finished.get(key);
    if (journaled && journaled.kind === spec.kind && journaled.label === spec.label) {
      if (journaled.llmCursor !== undefined) this.cursor?.seek(journaled.llmCursor);
      if (spec.journalsResult !== false) this.finished(key, spec, turn, journaled.result, journaled.llmCursor, true);
      return { value: journaled.result as T, key, reused: true };
    }
    if (journaled) {
      this.emit({
        type: 'warning',
        message: `journal holds ${journaled.kind} "${journaled.label}" at step ${key}, but the resumed run asks for ${spec.kind} "${spec.label}"; performing it anew`,
      });
    }
    const started = this.index.started.get(key);
    if (!journaled && !spec.composite && started && started.kind === spec.kind && started.label === spec.label) {
      const what = `${spec.kind} "${spec.label}" started before the run was interrupted and has no recorded result, so it may have run`;
      if (spec.rerunNeedsApproval && !this.policy.autoRun) {
        const ok = this.policy.approve ? await this.policy.approve(`${what}. Run it again?`) : false;
        if (!ok) {
          throw new EffectNotApprovedError(
            say`${what}; not running it again without approval. Resume with ${opt('autoRun')} to run it again.`,
          );
        }
      }
      this.emit({ type: 'warning', message: `${what}; performing it again` });
    }
    if (spec.marksStart) this.emit({ type: 'effect_started', key, kind: spec.kind, label: spec.label, turn });
    let value: T;
    try {
      value = await fn(key);
    } catch (err) {
      // It stopped before its side effect (e.g. code that needed approval nobody could give): a
      // resume must not take it for one that may have run.
      if (spec.marksStart && isBeforeEffect(err)) {
        this.emit({ type: 'effect_cancelled', key, kind: spec.kind, label: spec.label, turn, reason: (err as Error).message });
      }
      throw err;
    }
    if (spec.journalsResult !== false) this.finished(key, spec, turn, value, this.cursor?.position());
    return { value, key, reused: false };
  }

  private finished(
    key: string,
    spec: { kind: string; label: string },
    turn: number,
    result: unknown,
    cursor: number | undefined,
    reused?: true,
  ) {
    this.emit({
      type: 'effect_finished',
      key,
      kind: spec.kind,
      label: spec.label,
      turn,
      result,
      ...(reused ? { reused } : {}),
      ...cursorField(cursor),
    });
  }
}

/** An error that says the effect did not begin (`beforeEffect`, e.g. ApprovalNeededError). */
const isBeforeEffect = (err: unknown): boolean =>
  typeof err === 'object' && err !== null && (err as { beforeEffect?: unknown }).beforeEffect === true;

const cursorField = (c: number | undefined) => (c !== undefined ? { llm_cursor: c } : {});
