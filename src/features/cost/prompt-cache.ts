// Provider prompt caches as they bill, SIMULATED: which prompt tokens of a sequence of calls a
// provider would serve (and bill) from its prompt cache. Pure: no I/O, no clock, no tokenizer;
// the caller gives each call's prompt as token ids and the time it is sent. Used by the prompt
// bench (bench/prompts.mjs) and by `sop plan` to predict the cached share.
//
// OpenAI (automatic prefix caching, https://platform.openai.com/docs/guides/prompt-caching):
//  - only prompts of at least `minTokens` (1,024) tokens are cached; a hit is the longest cached
//    exact prefix, counted in steps of `step` (128) tokens from 1,024 on (1,024, 1,152, ...);
//  - a request is routed by a hash of its first `routeTokens` (256) tokens together with its
//    `prompt_cache_key`: prompts on other routes never share a cache;
//  - a route that takes more than about `overflowPerMinute` (15) requests a minute overflows to
//    more machines, each with its own cache: modelled as ceil(rate / 15) machines taking the
//    route's requests in turn (rate: its requests in the last 60 s, this one included);
//  - entries expire after `ttlMs` (5 minutes) without use (OpenAI says 5-10 minutes, up to an
//    hour off-peak: 5 is the conservative end). Machines' cache sizes are not limited.
// Anthropic (explicit cache_control breakpoints, https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching):
//  - a call marks at most 4 breakpoints (token offsets); the prefix up to each one of at least
//    `minTokens` tokens (1,024 for Sonnet and Opus, 2,048 for Haiku 3 and 3.5, 4,096 for Haiku 4.5
//    and Opus 4.5: anthropicMinTokens) is written to the cache;
//  - a hit is the longest prefix written by an earlier call that this prompt starts with and that
//    ends at or before its last breakpoint (the provider looks back about 20 content blocks from
//    each breakpoint; that limit is not modelled);
//  - billed: cache reads (the hit), cache writes (from the hit to the last breakpoint written, at
//    1.25x the input price), and plain input (the rest);
//  - entries live `ttlMs` (5 minutes), refreshed by each hit. There is no routing key.
//
// Token ids: the bench tokenizes the real prompt text (src/features/cost/tokenizer.ts); a prediction
// without text can describe a prompt as segments and take `segmentTokens` as its ids: equal
// segments give equal ids, so equal segment sequences share a prefix.
import { EngineError } from '../../shared/errors.js';

/** One LLM call as a prompt cache sees it. */
export interface CacheCall {
  /** The prompt as token ids (the model's tokenizer, or `segmentTokens`). */
  tokens: ArrayLike<number>;
  /** When it is sent, in ms from any origin; calls are taken in the order given (times never go back). */
  at: number;
  /** OpenAI: the `prompt_cache_key` sent with it. */
  cacheKey?: string;
  /** Anthropic: the token offsets of its cache_control breakpoints (at most 4). */
  breakpoints?: readonly number[];
}

export interface OpenAiCacheOptions {
  /** Shortest prompt that is cached (1,024). */
  minTokens?: number;
  /** Hits count in steps of this many tokens from `minTokens` on (128). */
  step?: number;
  /** The prefix hashed for routing, in tokens (256). */
  routeTokens?: number;
  /** Requests a minute one route's machine takes before the route overflows to more (15; Infinity: never). */
  overflowPerMinute?: number;
  /** An entry unused this long is gone (5 minutes). */
  ttlMs?: number;
}

export interface AnthropicCacheOptions {
  /** Shortest prefix that is cached: anthropicMinTokens(model) (1,024 when not given). */
  minTokens?: number;
  /** An entry unused this long is gone (5 minutes; 1 hour for the 1h cache). */
  ttlMs?: number;
}

/** What one call is billed as. `cachedTokens` are read from the cache; `writeTokens` (Anthropic) are written to it. */
export interface CallCacheResult {
  promptTokens: number;
  cachedTokens: number;
  writeTokens: number;
}

export interface CacheSimulation {
  calls: CallCacheResult[];
  promptTokens: number;
  cachedTokens: number;
  writeTokens: number;
  /** cachedTokens / promptTokens (0 without prompt tokens). */
  cachedShare: number;
}

const MINUTE = 60_000;
const DEFAULT_TTL = 5 * MINUTE;

/** Prefix hashes of a token sequence, read at chosen lengths (two 32-bit FNV-style lanes). */
class PrefixHasher {
  private h1 = 0x811c9dc5;
  private h2 = 0x01000193;
  private at = 0;
  constructor(private readonly tokens: ArrayLike<number>) {}
  /** The hash of the first `n` tokens (n never decreases between calls). */
  upTo(n: number): string {
    for (; this.at < n; this.at++) {
      const t = this.tokens[this.at] ?? 0;
      this.h1 = Math.imul(this.h1 ^ t, 0x01000193) >>> 0;
      this.h2 = Math.imul(this.h2 ^ ((t * 0x9e3779b1) >>> 0), 0x5bd1e995) >>> 0;
      this.h2 = (this.h2 ^ (this.h2 >>> 15)) >>> 0;
    }
    return `${n}:${this.h1.toString(36)}:${this.h2.toString(36)}`;
  }
}

/** One cache: prefix hash -> last use. */
class PrefixStore {
  private readonly entries = new Map<string, number>();
  constructor(private readonly ttlMs: number) {}
  has(key: string, at: number): boolean {
    const used = this.entries.get(key);
    if (used === undefined) return false;
    if (at - used > this.ttlMs) {
      this.entries.delete(key);
      return false;
    }
    return true;
  }
  touch(key: string, at: number): void {
    this.entries.set(key, at);
  }
}

/** Each call in order, with its index and token count; a call sent before the one ahead of it is refused. */
function eachCall(calls: readonly CacheCall[], fn: (call: CacheCall, i: number, n: number) => void): void {
  let last = -Infinity;
  calls.forEach((call, i) => {
    if (!Number.isFinite(call.at) || call.at < last)
      throw new EngineError(`prompt cache simulation: call ${i} is sent at ${call.at}, before the call ahead of it (${last})`, 'ARGUMENT');
    last = call.at;
    fn(call, i, call.tokens.length);
  });
}

function summarize(calls: CallCacheResult[]): CacheSimulation {
  let promptTokens = 0;
  let cachedTokens = 0;
  let writeTokens = 0;
  for (const c of calls) {
    promptTokens += c.promptTokens;
    cachedTokens += c.cachedTokens;
    writeTokens += c.writeTokens;
  }
  return { calls, promptTokens, cachedTokens, writeTokens, cachedShare: promptTokens > 0 ? cachedTokens / promptTokens : 0 };
}

interface Route {
  machines: PrefixStore[];
  /** Send times of its requests in the last minute. */
  recent: number[];
  turn: number;
}

/** The calls as OpenAI's automatic prompt cache would bill them (see the header). */
export function simulateOpenAiCache(calls: readonly CacheCall[], options: OpenAiCacheOptions = {}): CacheSimulation {
  const minTokens = options.minTokens ?? 1024;
  const step = options.step ?? 128;
  const routeTokens = options.routeTokens ?? 256;
  const overflow = options.overflowPerMinute ?? 15;
  const ttl = options.ttlMs ?? DEFAULT_TTL;
  const routes = new Map<string, Route>();
  const out: CallCacheResult[] = [];
  eachCall(calls, (call, i, n) => {
    const hasher = new PrefixHasher(call.tokens);
    const routeId = `${call.cacheKey ?? ''}\u0000${hasher.upTo(Math.min(routeTokens, n))}`;
    let route = routes.get(routeId);
    if (!route) routes.set(routeId, (route = { machines: [], recent: [], turn: 0 }));
    route.recent.push(call.at);
    while (route.recent.length && call.at - route.recent[0]! >= MINUTE) route.recent.shift();
    const count = Number.isFinite(overflow) ? Math.max(1, Math.ceil(route.recent.length / overflow)) : 1;
    while (route.machines.length < count) route.machines.push(new PrefixStore(ttl));
    const machine = route.machines[route.turn++ % count]!;
    let cached = 0;
    if (n >= minTokens) {
      // every cacheable boundary of this prompt: a hit is the longest one the machine holds; all are stored
      for (let len = minTokens; len <= n; len += step) {
        const key = hasher.upTo(len);
        if (machine.has(key, call.at)) cached = len;
        machine.touch(key, call.at);
      }
    }
    out.push({ promptTokens: n, cachedTokens: cached, writeTokens: 0 });
  });
  return summarize(out);
}

/** The calls as Anthropic's prompt cache would bill them, with their cache_control breakpoints (see the header). */
export function simulateAnthropicCache(calls: readonly CacheCall[], options: AnthropicCacheOptions = {}): CacheSimulation {
  const minTokens = options.minTokens ?? 1024;
  const store = new PrefixStore(options.ttlMs ?? DEFAULT_TTL);
  /** Every prefix length ever written (a hit can only be at one of them). */
  const lengths = new Set<number>();
  const out: CallCacheResult[] = [];
  eachCall(calls, (call, i, n) => {
    const marks = [...new Set(call.breakpoints ?? [])].sort((a, b) => a - b);
    if (marks.length > 4)
      throw new EngineError(
        `prompt cache simulation: call ${i} has ${marks.length} cache breakpoints (Anthropic takes at most 4)`,
        'ARGUMENT',
      );
    if (marks.some((b) => !Number.isInteger(b) || b < 0 || b > n))
      throw new EngineError(`prompt cache simulation: call ${i} has a breakpoint outside its ${n} tokens`, 'ARGUMENT');
    const written = marks.filter((b) => b >= minTokens);
    const end = written.at(-1) ?? 0;
    const hasher = new PrefixHasher(call.tokens);
    let cached = 0;
    const candidates = [...new Set([...lengths].filter((l) => l <= end).concat(written))].sort((a, b) => a - b);
    const keys = new Map<number, string>();
    for (const len of candidates) {
      const key = hasher.upTo(len);
      keys.set(len, key);
      if (store.has(key, call.at)) cached = len;
    }
    if (cached > 0) store.touch(keys.get(cached)!, call.at);
    for (const b of written) {
      store.touch(keys.get(b)!, call.at);
      lengths.add(b);
    }
    out.push({ promptTokens: n, cachedTokens: cached, writeTokens: Math.max(0, end - cached) });
  });
  return summarize(out);
}

/**
 * The shortest prefix Anthropic caches for a model: 4,096 tokens for Claude Haiku 4.5 and Opus 4.5,
 * 2,048 for Haiku 3 and 3.5, 1,024 for the others (Sonnet, Opus 4 and 4.1, Opus 3).
 */
export function anthropicMinTokens(model: string): number {
  const m = model.toLowerCase();
  if (/haiku-4-5|haiku-4\.5|opus-4-5|opus-4\.5/.test(m)) return 4096;
  if (/haiku/.test(m) && /3-5|3\.5|claude-3-haiku/.test(m)) return 2048;
  return 1024;
}

/** A prompt segment for `segmentTokens`: what it holds (equal ids, equal text) and its size in tokens. */
export interface PromptSegment {
  id: string;
  tokens: number;
}

/** Pseudo token ids for a prompt given as segments: a segment's ids depend only on its id and position in it. */
export function segmentTokens(segments: readonly PromptSegment[]): Uint32Array {
  const total = segments.reduce((s, x) => s + Math.max(0, Math.floor(x.tokens)), 0);
  const ids = new Uint32Array(total);
  let at = 0;
  for (const s of segments) {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.id.length; i++) h = Math.imul(h ^ s.id.charCodeAt(i), 0x01000193) >>> 0;
    const n = Math.max(0, Math.floor(s.tokens));
    for (let i = 0; i < n; i++) ids[at++] = (h + Math.imul(i + 1, 0x9e3779b1)) >>> 0;
  }
  return ids;
}
