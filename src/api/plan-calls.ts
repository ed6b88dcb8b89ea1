// The LLM calls of a run's events, as `sop plan` counts them (src/api/plan.ts): each call with
// its state, its population step (a population state's calls belong to the step of their turn),
// its tokens and, from a dry run, its prompt. The same reading serves a dry run's events (the
// prediction) and a run's journal (the realised figures beside it).
import type { CallPurpose, ChatMessage } from '../core/llm/types.js';
import type { PredictedTotals } from '../features/journal/predicted.js';
import type { RunEvent } from '../core/runtime/events.js';

export interface CallRecord {
  state: string;
  /** The population step the call belongs to (calls of a population state). */
  step?: number;
  purpose: CallPurpose;
  model: string;
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens the provider reported as served from its cache. */
  cachedTokens?: number;
  /** USD, when the run was priced. */
  cost?: number;
  /** A population step's call for an archetype (one call for all its acting agents). */
  archetype?: true;
  /** The prompt as sent (dry runs: the `prompt` event before the call). */
  messages?: ChatMessage[];
  /** The `prompt_cache_key` it was sent with (dry runs). */
  cacheKey?: string;
  /** How many calls of the full run this one stands for (a sampled population step: more than 1). */
  weight: number;
}

/** Every LLM call of the events, sub-flows' included (named `flow/state`), in the order they were made. */
export function callsOf(events: readonly RunEvent[]): CallRecord[] {
  const calls: CallRecord[] = [];
  const steps = new Map<string, number>(); // "state\0turn" -> population step
  const read = (list: readonly RunEvent[], flow: string) => {
    let prompt: ChatMessage[] | undefined;
    const sub = new Map<string, RunEvent[]>();
    for (const e of list) {
      if (e.type === 'subflow') {
        const l = sub.get(e.flow) ?? [];
        l.push(e.event);
        sub.set(e.flow, l);
      } else if (e.type === 'prompt') prompt = e.messages;
      else if (e.type === 'population_step') steps.set(`${flow}${e.state}\u0000${e.turn}`, e.step);
      else if (e.type === 'llm_call') {
        calls.push({
          state: `${flow}${e.state}`,
          ...(e.purpose !== 'embedding' ? { turn: e.turn } : {}),
          purpose: e.purpose,
          model: e.model,
          promptTokens: e.usage.promptTokens,
          completionTokens: e.usage.completionTokens,
          ...(e.usage.cachedTokens ? { cachedTokens: e.usage.cachedTokens } : {}),
          ...(typeof e.cost_usd === 'number' ? { cost: e.cost_usd } : {}),
          // the step names an archetype's call by its effect key (src/features/population/step.ts)
          ...(e.effect?.includes(':archetype:') ? { archetype: true } : {}),
          ...(prompt ? { messages: prompt } : {}),
          weight: 1,
        });
        prompt = undefined;
      }
    }
    for (const [name, l] of sub) read(l, `${flow}${name}/`);
  };
  read(events, '');
  for (const c of calls as Array<CallRecord & { turn?: number }>) {
    const step = c.turn !== undefined ? steps.get(`${c.state}\u0000${c.turn}`) : undefined;
    if (step !== undefined) c.step = step;
    delete c.turn;
  }
  return calls;
}

/** Calls, tokens, cost and wall time of a group of calls (weighted), and its calls by purpose. */
export interface Figures extends PredictedTotals {
  by_purpose: Partial<Record<CallPurpose, number>>;
}

const noFigures = (): Figures => ({
  calls: 0,
  prompt_tokens: 0,
  completion_tokens: 0,
  cached_tokens: 0,
  cost: 0,
  seconds: 0,
  by_purpose: {},
});

/** What a call adds to its group: its cached tokens and cost (of one call), its seconds (all it stands for). */
export interface CallShare {
  cached: number;
  cost: number | undefined;
  seconds: number;
}

/** Adds a call to a group: its tokens, cached tokens and cost times its weight. */
function addCall(f: Figures, c: CallRecord, { cached, cost, seconds }: CallShare): void {
  const w = c.weight;
  f.seconds += seconds;
  f.calls += w;
  f.prompt_tokens += c.promptTokens * w;
  f.completion_tokens += c.completionTokens * w;
  f.cached_tokens += cached * w;
  f.cost = f.cost === undefined || cost === undefined ? undefined : f.cost + cost * w;
  f.by_purpose[c.purpose] = (f.by_purpose[c.purpose] ?? 0) + w;
}

/** A row of a plan: a state, or one step of a population state. */
export interface Row extends Figures {
  state: string;
  step?: number;
}

/** Rows by state (in order of first call) and by population step, and the total. */
export function groupCalls(
  calls: readonly CallRecord[],
  shareOf: (c: CallRecord, i: number) => CallShare,
): { states: Row[]; steps: Row[]; total: Figures } {
  const states = new Map<string, Row>();
  const steps = new Map<string, Row>();
  const total = noFigures();
  calls.forEach((c, i) => {
    const share = shareOf(c, i);
    let s = states.get(c.state);
    if (!s) states.set(c.state, (s = { state: c.state, ...noFigures() }));
    addCall(s, c, share);
    addCall(total, c, share);
    if (c.step !== undefined) {
      const key = `${c.state}\u0000${c.step}`;
      let r = steps.get(key);
      if (!r) steps.set(key, (r = { state: c.state, step: c.step, ...noFigures() }));
      addCall(r, c, share);
    }
  });
  return { states: [...states.values()], steps: [...steps.values()], total };
}
