// The simulated provider prompt caches (src/features/cost/prompt-cache.ts) and the tokenizer that feeds
// them (src/features/cost/tokenizer.ts): OpenAI's 1,024-token floor, 128-token steps, routing by
// prompt_cache_key and the first 256 tokens, overflow past ~15 requests a minute and the TTL;
// Anthropic's breakpoints, floor, writes and TTL.
import { describe, expect, it } from 'vitest';
import {
  anthropicMinTokens,
  segmentTokens,
  simulateAnthropicCache,
  simulateOpenAiCache,
  type CacheCall,
} from '../src/features/cost/prompt-cache.js';
import { encodingFor, tokenizerFor } from '../src/features/cost/tokenizer.js';

/** `n` token ids starting at `from` (distinct values, so two ranges share no prefix). */
const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);
const call = (tokens: number[], at = 0, extra: Partial<CacheCall> = {}): CacheCall => ({ tokens, at, ...extra });

describe('OpenAI prompt cache', () => {
  it('caches only prompts of 1,024 tokens or more, in 128-token steps of the longest shared prefix', () => {
    const short = ids(1000);
    expect(simulateOpenAiCache([call(short), call(short, 1)]).cachedTokens).toBe(0);
    const p = ids(2000);
    const r = simulateOpenAiCache([call(p), call(p, 1)]);
    expect(r.calls.map((c) => c.cachedTokens)).toEqual([0, 1920]); // 1,024 + 7 x 128 <= 2,000 < 2,048
    expect(r.cachedShare).toBeCloseTo(1920 / 4000);
    // a prompt that extends an earlier one hits up to the earlier one's last step
    const longer = [...ids(1500), ...ids(600, 90_000)];
    expect(simulateOpenAiCache([call(ids(1500)), call(longer, 1)]).calls[1]!.cachedTokens).toBe(1408);
    // prompts that part at token 1,100 share the 1,024 step only
    const other = [...ids(1100), ...ids(900, 50_000)];
    expect(simulateOpenAiCache([call(p), call(other, 1)]).calls[1]!.cachedTokens).toBe(1024);
    // prompts that part before 1,024 share nothing billable
    const early = [...ids(1000), ...ids(1000, 50_000)];
    expect(simulateOpenAiCache([call(p), call(early, 1)]).calls[1]!.cachedTokens).toBe(0);
  });

  it('routes by prompt_cache_key and the first 256 tokens', () => {
    const p = ids(3000);
    const keyed = (key: string, at: number) => call(p, at, { cacheKey: key });
    expect(simulateOpenAiCache([keyed('a', 0), keyed('b', 1)]).calls[1]!.cachedTokens).toBe(0);
    expect(simulateOpenAiCache([keyed('a', 0), keyed('b', 1), keyed('a', 2)]).calls[2]!.cachedTokens).toBe(2944);
    // the same 2,000 tokens after a different first token: another route, and no shared prefix anyway
    expect(simulateOpenAiCache([call(p), call([7, ...p.slice(1)], 1)]).calls[1]!.cachedTokens).toBe(0);
    // routes are told apart by the first 256 tokens only: prompts that share those share a machine
    const a = [...ids(1200), ...ids(800, 10_000)];
    const b = [...ids(1200), ...ids(800, 20_000)];
    expect(simulateOpenAiCache([call(a), call(b, 1)]).calls[1]!.cachedTokens).toBe(1152);
  });

  it('forgets entries unused for the TTL, and a hit keeps them', () => {
    const p = ids(1100);
    const min = 60_000;
    expect(simulateOpenAiCache([call(p, 0), call(p, 4 * min)]).calls[1]!.cachedTokens).toBe(1024);
    expect(simulateOpenAiCache([call(p, 0), call(p, 6 * min)]).calls[1]!.cachedTokens).toBe(0);
    const chain = simulateOpenAiCache([call(p, 0), call(p, 4 * min), call(p, 8 * min)]);
    expect(chain.calls[2]!.cachedTokens).toBe(1024);
    expect(simulateOpenAiCache([call(p, 0), call(p, 8 * min)], { ttlMs: 10 * min }).calls[1]!.cachedTokens).toBe(1024);
  });

  it('spreads a route past ~15 requests a minute over more machines, each with its own cache', () => {
    const p = ids(2048);
    const burst = Array.from({ length: 60 }, (_, i) => call(p, i * 100)); // 60 requests in 6 s
    const one = simulateOpenAiCache(burst, { overflowPerMinute: Infinity });
    expect(one.calls.filter((c) => c.cachedTokens === 0)).toHaveLength(1);
    const spread = simulateOpenAiCache(burst);
    const misses = spread.calls.filter((c) => c.cachedTokens === 0).length;
    expect(misses).toBeGreaterThan(1);
    expect(misses).toBeLessThanOrEqual(4); // ceil(60 / 15) machines, each missing once
    // keys that split the same burst into routes under the rate each keep one warm machine
    const keyed = burst.map((c, i) => ({ ...c, cacheKey: `shard-${i % 4}` }));
    expect(simulateOpenAiCache(keyed).calls.filter((c) => c.cachedTokens === 0)).toHaveLength(4);
  });

  it('refuses calls whose times go back', () => {
    expect(() => simulateOpenAiCache([call(ids(10), 5), call(ids(10), 4)])).toThrow(/call 1 is sent at 4, before/);
  });
});

describe('Anthropic prompt cache', () => {
  it('reads the longest prefix an earlier call wrote at a breakpoint, and writes up to the last breakpoint', () => {
    const sys = ids(1500);
    const first = [...sys, ...ids(500, 10_000)];
    const second = [...sys, ...ids(500, 10_000), ...ids(300, 20_000)];
    const r = simulateAnthropicCache([call(first, 0, { breakpoints: [1500, 2000] }), call(second, 1, { breakpoints: [1500, 2300] })]);
    expect(r.calls[0]).toEqual({ promptTokens: 2000, cachedTokens: 0, writeTokens: 2000 });
    // the earlier call's 2,000-token entry is a prefix of this prompt and lies before its last breakpoint
    expect(r.calls[1]).toEqual({ promptTokens: 2300, cachedTokens: 2000, writeTokens: 300 });
    // after the system prompt the prompts differ: the 1,500-token entry is read
    const third = [...sys, ...ids(800, 30_000)];
    const r3 = simulateAnthropicCache([call(first, 0, { breakpoints: [1500, 2000] }), call(third, 1, { breakpoints: [1500, 2300] })]);
    expect(r3.calls[1]).toEqual({ promptTokens: 2300, cachedTokens: 1500, writeTokens: 800 });
  });

  it('caches nothing without breakpoints or below the floor of the model', () => {
    const p = ids(3000);
    expect(simulateAnthropicCache([call(p), call(p, 1)]).cachedTokens).toBe(0);
    const marked = [call(p, 0, { breakpoints: [2000] }), call(p, 1, { breakpoints: [2000] })];
    expect(simulateAnthropicCache(marked).calls[1]!.cachedTokens).toBe(2000);
    expect(simulateAnthropicCache(marked, { minTokens: anthropicMinTokens('claude-haiku-4-5') }).cachedTokens).toBe(0);
    expect(anthropicMinTokens('claude-sonnet-4-5')).toBe(1024);
    expect(anthropicMinTokens('claude-3-5-haiku-latest')).toBe(2048);
  });

  it('keeps an entry 5 minutes from its last use', () => {
    const p = ids(1200);
    const at = (t: number) => call(p, t * 60_000, { breakpoints: [1200] });
    expect(simulateAnthropicCache([at(0), at(4), at(8)]).calls.map((c) => c.cachedTokens)).toEqual([0, 1200, 1200]);
    expect(simulateAnthropicCache([at(0), at(6)]).calls[1]!.cachedTokens).toBe(0);
  });

  it('refuses more than 4 breakpoints, or one past the prompt', () => {
    const p = ids(100);
    expect(() => simulateAnthropicCache([call(p, 0, { breakpoints: [10, 20, 30, 40, 50] })])).toThrow(/5 cache breakpoints/);
    expect(() => simulateAnthropicCache([call(p, 0, { breakpoints: [101] })])).toThrow(/outside its 100 tokens/);
  });
});

describe('prompts as segments', () => {
  it('gives equal segments equal ids and different segments different ones from their first token', () => {
    const a = segmentTokens([
      { id: 'rules', tokens: 1200 },
      { id: 'turn-1', tokens: 300 },
    ]);
    const b = segmentTokens([
      { id: 'rules', tokens: 1200 },
      { id: 'turn-2', tokens: 300 },
    ]);
    expect(a).toHaveLength(1500);
    expect(a.slice(0, 1200)).toEqual(b.slice(0, 1200));
    expect(a[1200]).not.toBe(b[1200]);
    expect(simulateOpenAiCache([call([...a]), call([...b], 1)]).calls[1]!.cachedTokens).toBe(1152);
  });
});

describe('tokenizer', () => {
  it("counts OpenAI models with their encoding and says which approximation stands in for Claude's", async () => {
    expect(encodingFor('gpt-4o-mini')).toEqual({ encoding: 'o200k_base' });
    expect(encodingFor('gpt-4')).toEqual({ encoding: 'cl100k_base' });
    expect(encodingFor('claude-sonnet-4-5').approximation).toMatch(/Claude's tokenizer.*o200k_base/);
    const t = await tokenizerFor('gpt-4o-mini');
    expect(t.encode('hello world')).toEqual([24912, 2375]);
    // special tokens in content are text, and a chat prompt costs 3 tokens a message besides its role and content (OpenAI's count), and 3 for the reply
    expect(t.encode('<|endoftext|>').length).toBeGreaterThan(1);
    const chat = t.encodeChat([
      { role: 'system', content: 'hello world' },
      { role: 'user', content: 'hello world' },
    ]);
    expect(chat.length).toBe(2 * (3 + 1 + 2) + 3); // 'system', 'user' and 'assistant' are one token each
    expect((await tokenizerFor('gpt-3.5-turbo')).encode('hello world')).toEqual([15339, 1917]);
  });
});
