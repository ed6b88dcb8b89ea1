// Effects: every call of a run with an outside effect (an LLM call, a human's answer, an
// executor) goes through `Effects.perform`. Without durability they are simply performed; the
// journal's EffectLedger (src/features/journal/effects.ts), plugged in through the run's hooks, gives each
// a stable key and reuses journaled results when a run resumes.
import type { PriceTier } from '../llm/types.js';

export interface EffectSpec {
  /** llm | human | code | sop | memory | ... */
  kind: string;
  /** What is done (e.g. "agent:Ada@opening", "python: 12 lines"); matched on reuse, shown in warnings. */
  label: string;
  /** Journal `effect_started` before performing it, so a crash in the middle is noticed. */
  marksStart?: boolean;
  /** Journal the result as `effect_finished` (default true). The LLM call journals its own `llm_call`. */
  journalsResult?: boolean;
  /** A start without a result is performed again only with approval or --auto-run (code). */
  rerunNeedsApproval?: boolean;
  /**
   * Its own steps are effects journaled with their own keys (a sub-flow): a resumed run performs
   * it again, which reuses every journaled step and re-emits its events, rather than taking its
   * result (which would leave its messages and usage out of the resumed run).
   */
  composite?: boolean;
  /**
   * Its own key within the step (effects performed at once, e.g. the calls of a population step,
   * started in whatever order a concurrency limit lets them): used instead of the count of effects
   * since the checkpoint, so the key names what the effect is about, not when it started.
   */
  key?: string;
}

export interface Performed<T> {
  value: T;
  key: string;
  /** The value came from the journal; nothing was performed. */
  reused: boolean;
}

export interface Effects {
  /** `fn` is given the effect's key ('' without durability). */
  perform<T>(spec: EffectSpec, fn: (key: string) => Promise<T>): Promise<Performed<T>>;
  /** A checkpoint was written at `turn`. */
  reset(turn: number): void;
}

/** Effects performed as asked, with nothing journaled or reused. */
export const directEffects: Effects = {
  async perform<T>(_spec: EffectSpec, fn: (key: string) => Promise<T>): Promise<Performed<T>> {
    return { value: await fn(''), key: '', reused: false };
  },
  reset(): void {},
};

/** Label of an LLM call, the same when the run makes it and when the journal is read. */
export function llmEffectLabel(purpose: string, state: string, agent?: string): string {
  return `${purpose}${agent ? `:${agent}` : ''}@${state}`;
}

/** The result of an LLM call as the ledger stores it. */
export interface LlmEffectResult {
  content: string;
  usage: { promptTokens: number; completionTokens: number; cachedTokens?: number };
  /** The model that answered, as the provider names it. */
  model?: string;
  /** The price tier it was charged at, when not the standard one (a batch). */
  priceTier?: PriceTier;
}
