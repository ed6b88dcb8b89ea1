// Token, call and cost totals of a run, by purpose and by agent (journaled in checkpoints and run_finished).
import { isSampleTurn } from '../memory/token-budget.js';
import type { CallPurpose, Usage } from '../llm/types.js';

/** Calls, tokens and cost of one purpose or one agent. */
export interface UsageBucket {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Prompt tokens served from the provider's prompt cache (when it reports them). */
  cached_tokens?: number;
  /** USD, present while every call of the bucket had a known price. */
  cost?: number;
  /** Some call of the bucket was to a model without a price: its cost is unknown (never 0). */
  cost_unknown?: true;
}

export interface UsageTotals {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  /** USD of the whole run, present only while every call's model had a price. */
  cost?: number;
  /** Models called without a price: the run's cost is unknown. */
  unpriced_models?: string[];
  by_purpose: Partial<Record<CallPurpose, UsageBucket>>;
  by_agent?: Record<string, UsageBucket>;
  /**
   * The calls of each state whose provider reported its cached prompt tokens (OpenAI's
   * `prompt_tokens_details.cached_tokens`): cached_tokens / prompt_tokens is the state's cached share.
   */
  by_state?: Record<string, UsageBucket>;
  /**
   * Calls to a paid server whose reply was lost to a kill (journaled as started, never as
   * answered): counted by the resume in `calls`, `prompt_tokens` (estimated), `cost` and the
   * buckets above, and shown here apart.
   */
  lost?: { calls: number; prompt_tokens: number; cost?: number };
  /** Prompt tokens of the latest agent call as of turns 10, 20, 50, 100, 200, 500, ... (memory: flat prompts). */
  agent_prompt_tokens_at_turn?: Record<string, number>;
  /** Prompt tokens of the latest agent call (kept here so a resumed run samples the same values). */
  agent_prompt_tokens_last?: number;
}

/** How a call is priced: its model, and its cost in USD (undefined: the model has no price). */
export interface CallPrice {
  model: string;
  cost: number | undefined;
}

export function emptyUsage(): UsageTotals {
  return { calls: 0, prompt_tokens: 0, completion_tokens: 0, by_purpose: {} };
}

/** A sum of dollars without float noise (1e-10 USD). */
const round = (x: number) => Math.round(x * 1e10) / 1e10;

function addTo(b: UsageBucket, u: Usage, cost: number | undefined | null): void {
  b.calls++;
  b.prompt_tokens += u.promptTokens;
  b.completion_tokens += u.completionTokens;
  if (u.cachedTokens) b.cached_tokens = (b.cached_tokens ?? 0) + u.cachedTokens;
  if (cost === null) return;
  if (cost === undefined || b.cost_unknown) {
    delete b.cost;
    b.cost_unknown = true;
  } else b.cost = round((b.cost ?? 0) + cost);
}

/** Count a call; `price` absent: the run is not priced (the mock); `agent`: also in by_agent; `state`: in by_state when the provider reported cached tokens. */
export function addUsage(t: UsageTotals, purpose: CallPurpose, u: Usage, price?: CallPrice, agent?: string, state?: string): void {
  t.calls++;
  t.prompt_tokens += u.promptTokens;
  t.completion_tokens += u.completionTokens;
  if (u.cachedTokens) t.cached_tokens = (t.cached_tokens ?? 0) + u.cachedTokens;
  const cost = price ? price.cost : null;
  if (price && cost === undefined) {
    const models = (t.unpriced_models ??= []);
    if (!models.includes(price.model)) models.push(price.model);
    delete t.cost;
  } else if (typeof cost === 'number' && !t.unpriced_models?.length) t.cost = round((t.cost ?? 0) + cost);
  addTo((t.by_purpose[purpose] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 }), u, cost);
  if (agent) addTo(((t.by_agent ??= {})[agent] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 }), u, cost);
  if (state !== undefined && u.cachedTokens !== undefined)
    addTo(((t.by_state ??= {})[state] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 }), u, cost);
}

/** Cached prompt tokens as a share of prompt tokens (to 0.001); undefined without prompt tokens. */
export function cachedShare(b: Pick<UsageBucket, 'prompt_tokens' | 'cached_tokens'>): number | undefined {
  if (b.prompt_tokens <= 0) return undefined;
  return Math.round(((b.cached_tokens ?? 0) / b.prompt_tokens) * 1000) / 1000;
}

function mergeBucket(into: UsageBucket, from: UsageBucket): void {
  into.calls += from.calls;
  into.prompt_tokens += from.prompt_tokens;
  into.completion_tokens += from.completion_tokens;
  if (from.cached_tokens) into.cached_tokens = (into.cached_tokens ?? 0) + from.cached_tokens;
  if (from.cost_unknown || into.cost_unknown) {
    if (from.cost_unknown) {
      delete into.cost;
      into.cost_unknown = true;
    }
  } else if (from.cost !== undefined) into.cost = round((into.cost ?? 0) + from.cost);
}

/** Add the totals of a sub-flow to its parent's (sub-flows draw on the parent's usage and cost). */
export function mergeUsage(into: UsageTotals, from: UsageTotals): void {
  into.calls += from.calls;
  into.prompt_tokens += from.prompt_tokens;
  into.completion_tokens += from.completion_tokens;
  if (from.cached_tokens) into.cached_tokens = (into.cached_tokens ?? 0) + from.cached_tokens;
  for (const m of from.unpriced_models ?? []) {
    const models = (into.unpriced_models ??= []);
    if (!models.includes(m)) models.push(m);
  }
  if (into.unpriced_models?.length) delete into.cost;
  else if (from.cost !== undefined) into.cost = round((into.cost ?? 0) + from.cost);
  for (const [purpose, u] of Object.entries(from.by_purpose) as Array<[CallPurpose, UsageBucket]>)
    mergeBucket((into.by_purpose[purpose] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 }), u);
  if (from.lost) {
    const lost = (into.lost ??= { calls: 0, prompt_tokens: 0 });
    lost.calls += from.lost.calls;
    lost.prompt_tokens += from.lost.prompt_tokens;
    if (from.lost.cost !== undefined) lost.cost = round((lost.cost ?? 0) + from.lost.cost);
  }
  for (const [agent, u] of Object.entries(from.by_agent ?? {}))
    mergeBucket(((into.by_agent ??= {})[agent] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 }), u);
  for (const [state, u] of Object.entries(from.by_state ?? {}))
    mergeBucket(((into.by_state ??= {})[state] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 }), u);
}

/** Record the size of the latest agent prompt at sample turns, to show whether prompts stay flat. */
export function samplePromptTokens(usage: UsageTotals, turn: number): void {
  const last = usage.agent_prompt_tokens_last;
  if (last === undefined || !isSampleTurn(turn)) return;
  (usage.agent_prompt_tokens_at_turn ??= {})[String(turn)] = last;
}

/** A call lost to a kill, as its `llm_call_started` line tells it. */
export interface LostCall {
  purpose: CallPurpose;
  agent?: string;
  model: string;
  prompt_tokens: number;
  /** USD of its prompt tokens, when its model had a price. */
  cost_usd?: number;
}

/** Count a call whose reply was lost (see UsageTotals.lost): its prompt, no completion. */
export function addLostCall(t: UsageTotals, c: LostCall): void {
  const price = c.cost_usd !== undefined ? { model: c.model, cost: c.cost_usd } : undefined;
  addUsage(t, c.purpose, { promptTokens: c.prompt_tokens, completionTokens: 0 }, price, c.agent);
  const lost = (t.lost ??= { calls: 0, prompt_tokens: 0 });
  lost.calls++;
  lost.prompt_tokens += c.prompt_tokens;
  if (c.cost_usd !== undefined) lost.cost = round((lost.cost ?? 0) + c.cost_usd);
}
