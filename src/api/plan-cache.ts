// The cached share of a planned run (`sop plan`, docs/plan.md#cached-share): the dry run's
// prompts, counted with the model's tokenizer (src/features/cost/tokenizer.ts), sent at the times of the
// throughput profile, through the simulation of OpenAI's prompt cache (src/features/cost/prompt-cache.ts:
// exact prefix, 1,024-token floor, 128-token steps, routing by the first 256 tokens and the
// prompt_cache_key the engine sends with each call, overflow past about 15 requests a minute on
// one route, 5-minute TTL).
import { simulateOpenAiCache, type CacheCall } from '../features/cost/prompt-cache.js';
import { tokenizerFor } from '../features/cost/tokenizer.js';
import type { CallRecord } from './plan-calls.js';

export interface CacheFigures {
  /** Each call's share of its prompt served from the cache (0 to 1). */
  share: number[];
  /** Each call's prompt tokens as the model's tokenizer counts them (0: no prompt known). */
  tokens: number[];
  /** Tokenizers that stand in for a model's own. */
  approximations: string[];
}

/** Overflow threshold of OpenAI's routes: requests a minute one machine takes. */
const OVERFLOW_PER_MINUTE = 15;

export async function cacheShares(calls: readonly CallRecord[], atSeconds: readonly number[]): Promise<CacheFigures> {
  const share = new Array<number>(calls.length).fill(0);
  const tokens = new Array<number>(calls.length).fill(0);
  const approximations = new Set<string>();
  // A call of a sampled step stands for `weight` calls: its group's requests a minute are
  // `weight` times those simulated, so its routes overflow `weight` times sooner.
  const groups = new Map<number, number[]>();
  calls.forEach((c, i) => {
    if (!c.messages) return;
    const g = groups.get(c.weight) ?? [];
    g.push(i);
    groups.set(c.weight, g);
  });
  for (const [weight, members] of groups) {
    const sims: CacheCall[] = [];
    for (const i of members) {
      const c = calls[i]!;
      const tokenizer = await tokenizerFor(c.model);
      if (tokenizer.approximation) approximations.add(tokenizer.approximation);
      sims.push({ tokens: tokenizer.encodeChat(c.messages!), at: atSeconds[i]! * 1000, ...(c.cacheKey ? { cacheKey: c.cacheKey } : {}) });
    }
    const result = simulateOpenAiCache(sims, { overflowPerMinute: OVERFLOW_PER_MINUTE / weight });
    members.forEach((i, k) => {
      const r = result.calls[k]!;
      tokens[i] = r.promptTokens;
      share[i] = r.promptTokens > 0 ? r.cachedTokens / r.promptTokens : 0;
    });
  }
  return { share, tokens, approximations: [...approximations] };
}
