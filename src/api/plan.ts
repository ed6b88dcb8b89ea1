// `sop plan FILE` (docs/plan.md): what a run of a SOP will take, per state and per population
// step: LLM calls, prompt and completion tokens, the share of prompt tokens a provider's cache
// would serve, the cost from the pricing table, and the wall time from a throughput profile.
// Predicted from one dry run through the real engine with a stand-in LLM (src/api/dry-run.ts),
// so prompts are rendered from the SOP's own templates and inputs: the mock's replies (a
// prediction of a mock run), or replies of a chosen size (a real model's run). Large
// populations are dry-run with a sample of their agents and extrapolated (src/api/plan-sample.ts).
import { callCost, modelPrice, type ModelPrice, type PricingTable } from '../core/llm/pricing.js';
import type { RunEvent } from '../core/runtime/events.js';
import { DEFAULTS } from '../format/sop/resolved.js';
import type { LlmSettings, Sop } from '../format/sop/types.js';
import { dryRun } from './dry-run.js';
import { cacheShares } from './plan-cache.js';
import { callsOf, groupCalls, type CallRecord, type Figures, type Row } from './plan-calls.js';
import { CacheKeys, SizedReplies } from './plan-replies.js';
import { MockProvider } from '../core/llm/mock.js';
import { sampleLargePopulations, stepCallCounter, type SampledState } from './plan-sample.js';
import { schedule, type ThroughputProfile } from './plan-time.js';

/** Agents of a population state dry-run at most (more are sampled). */
export const DEFAULT_PLAN_SAMPLE = 1000;
/** Tokens of a free-text reply of a real model, before the call's max_tokens. */
export const DEFAULT_REPLY_TOKENS = 150;

export interface PlanOptions {
  sop: Sop;
  file: string;
  pricing: PricingTable;
  profile: ThroughputProfile;
  /** `mock`: predict a run with the mock (its replies); a number: free-text replies of that many tokens. */
  replies: 'mock' | number;
  inputs?: Record<string, string>;
  maxTurns?: number;
  /** The dry run's seed (1): the mock's walk and every seeded draw follow it, as in `sop run --seed`. */
  seed?: number;
  /** Agents of a population state dry-run at most (1,000). */
  sample?: number;
  /** Code runs under bubblewrap (resolved by the caller, as for sop run). */
  sandbox?: boolean;
}

export interface PlanRow extends Row {
  cached_share: number;
}

export interface PlanReport {
  sop: string;
  seed: number;
  /** How the dry run ended, and its turns. */
  status: string;
  turns: number;
  replies: 'mock' | { tokens: number };
  profile: ThroughputProfile;
  states: PlanRow[];
  steps: PlanRow[];
  /** The whole run (its `state` is empty). */
  total: PlanRow;
  /** Models called without a price (their cost is unknown). */
  unpriced_models?: string[];
  /** Population states dry-run with a sample of their agents. */
  sampled: SampledState[];
  /** Tokenizers standing in for a model's own. */
  approximations: string[];
  /** Milliseconds the plan took. */
  ms: number;
  warnings: string[];
}

const withShare = (r: Row): PlanRow => ({ ...r, cached_share: r.prompt_tokens > 0 ? r.cached_tokens / r.prompt_tokens : 0 });

/** Every LLM block of the SOP (its own, states', controllers', summaries', agents', roles', tiers'), found by key. */
function llmBlocks(value: unknown, out: LlmSettings[] = []): LlmSettings[] {
  if (Array.isArray(value)) for (const v of value) llmBlocks(v, out);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (k === 'llm' && v && typeof v === 'object' && !Array.isArray(v)) out.push(v as LlmSettings);
      llmBlocks(v, out);
    }
  return out;
}

/** The price of a model: an LLM block of the SOP that prices it (`llm.pricing`), else the table. */
function sopPriceOf(sop: Sop, table: PricingTable, model: string): ModelPrice | undefined {
  const own = llmBlocks(sop).find((b) => b.pricing && (b.model ?? sop.llm?.model ?? DEFAULTS.model) === model);
  return own ? modelPrice(table, own, undefined, model) : modelPrice(table, {}, undefined, model);
}

export async function planSop(o: PlanOptions): Promise<PlanReport> {
  const began = performance.now();
  const seed = o.seed ?? 1;
  const { sop, sampled } = await sampleLargePopulations(o.sop, o.file, o.sample ?? DEFAULT_PLAN_SAMPLE);
  const llm = new CacheKeys(o.replies === 'mock' ? new MockProvider() : new SizedReplies(o.replies));
  const run = await dryRun({ sop, file: o.file, maxTurns: o.maxTurns, inputs: o.inputs, sandbox: o.sandbox, llm }, seed);
  const made = callsOf(run.events).map((c) => {
    const cacheKey = c.messages && llm.keys.get(c.messages);
    return cacheKey ? { ...c, cacheKey } : c;
  });
  const calls = await extrapolate(made, sampled, o, seed);
  const times = schedule(calls, o.profile);
  const cache = await cacheShares(calls, times.at);
  // a real model's prompt tokens are its tokenizer's count; the mock's are the engine's estimate
  const counted = calls.map((c, i) => (o.replies !== 'mock' && cache.tokens[i]! > 0 ? { ...c, promptTokens: cache.tokens[i]! } : c));
  const prices = new Map<string, ModelPrice | undefined>();
  const priceOf = (model: string) => {
    if (!prices.has(model)) prices.set(model, sopPriceOf(o.sop, o.pricing, model));
    return prices.get(model);
  };
  const grouped = groupCalls(counted, (c, i) => {
    const cached = Math.round(cache.share[i]! * c.promptTokens);
    const cost = callCost(priceOf(c.model), { promptTokens: c.promptTokens, completionTokens: c.completionTokens, cachedTokens: cached });
    return { cached, cost, seconds: times.seconds[i]! };
  });
  const unpriced = [...prices].filter(([, p]) => !p).map(([m]) => m);
  return rounded({
    sop: o.sop.name,
    seed,
    status: run.status,
    turns: run.turns,
    replies: o.replies === 'mock' ? 'mock' : { tokens: o.replies },
    profile: o.profile,
    states: grouped.states.map(withShare),
    steps: grouped.steps.map(withShare),
    total: withShare({ state: '', ...grouped.total }),
    ...(unpriced.length > 0 ? { unpriced_models: unpriced } : {}),
    sampled,
    approximations: cache.approximations,
    ms: Math.round(performance.now() - began),
    warnings: planWarnings(o.sop, run, sampled),
  });
}

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

/** The figures as shown and kept: whole calls and tokens, dollars to 1e-6, tenths of a second. */
function roundFigures<T extends Figures>(f: T): T {
  const by: Figures['by_purpose'] = {};
  for (const [k, v] of Object.entries(f.by_purpose)) by[k as keyof Figures['by_purpose']] = Math.round(v);
  return {
    ...f,
    calls: Math.round(f.calls),
    prompt_tokens: Math.round(f.prompt_tokens),
    completion_tokens: Math.round(f.completion_tokens),
    cached_tokens: Math.round(f.cached_tokens),
    ...(f.cost !== undefined ? { cost: round(f.cost, 6) } : {}),
    seconds: round(f.seconds, 1),
    by_purpose: by,
  };
}

function rounded(r: PlanReport): PlanReport {
  const row = (x: PlanRow): PlanRow => ({ ...roundFigures(x), cached_share: round(x.cached_share, 4) });
  return {
    ...r,
    states: r.states.map(row),
    steps: r.steps.map(row),
    total: { ...roundFigures(r.total), cached_share: round(r.total.cached_share, 4) },
  };
}

/**
 * The calls of sampled population steps, weighted to stand for the full run's: a step's per-agent
 * calls for its per-agent calls over all agents, its archetype calls for its archetypes acting, its
 * survey calls for `agents / sample` each; its judge call is one.
 */
async function extrapolate(calls: CallRecord[], sampled: SampledState[], o: PlanOptions, seed: number): Promise<CallRecord[]> {
  for (const s of sampled) {
    const count = await stepCallCounter(o.sop, o.file, s.state, seed);
    const mine = calls.filter((c) => c.state === s.state && c.step !== undefined);
    for (const step of new Set(mine.map((c) => c.step!))) {
      const full = count(step);
      const of = mine.filter((c) => c.step === step);
      const agent = of.filter((c) => c.purpose === 'agent' && !c.archetype);
      const archetype = of.filter((c) => c.purpose === 'agent' && c.archetype);
      for (const c of agent) c.weight = full.perAgent / agent.length;
      for (const c of archetype) c.weight = full.archetypes / archetype.length;
      for (const c of of) if (c.purpose === 'survey') c.weight = s.agents / s.sampled;
    }
  }
  return calls;
}

function planWarnings(sop: Sop, run: { status: string; events: RunEvent[]; dir?: string }, sampled: SampledState[]): string[] {
  const out: string[] = [];
  if (run.status === 'failed' || run.status === 'interrupted') {
    const end = run.events.find((e) => e.type === 'run_finished');
    const error = end?.type === 'run_finished' ? end.error : undefined;
    out.push(
      `the dry run did not finish (${run.status}${error ? `: ${error}` : ''}; its folder is kept: ${run.dir}): the figures cover only what ran`,
    );
  }
  if (run.status === 'max_turns') out.push('the dry run reached --max-turns without a final state');
  for (const s of sampled)
    if ((sop.states[s.state] as { transitions?: unknown[] }).transitions?.length)
      out.push(
        `state "${s.state}" was dry-run with ${s.sampled} of its ${s.agents} agents: its transitions, whose metrics may count agents, can fire at another step in the full run`,
      );
  return out;
}

/** A run's realised figures, read from its journal's events: calls, tokens, reported cached tokens, cost. */
export function realisedFigures(events: readonly RunEvent[]): { states: PlanRow[]; steps: PlanRow[]; total: PlanRow } {
  const g = groupCalls(callsOf(events), (c) => ({ cached: c.cachedTokens ?? 0, cost: c.cost, seconds: 0 }));
  return { states: g.states.map(withShare), steps: g.steps.map(withShare), total: withShare({ state: '', ...g.total }) };
}
