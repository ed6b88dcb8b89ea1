// Prompt caches as providers bill them, on fixtures with prompts the size of real ones: a run's
// LLM calls are recorded (mock LLM, replies of realistic length), counted with the model's
// tokenizer (src/features/cost/tokenizer.ts) and passed through the simulated OpenAI and Anthropic caches
// of src/features/cost/prompt-cache.ts. Nothing here talks to a provider.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './engine.mjs';

export async function loadCacheTools() {
  const at = (p) => import(pathToFileURL(join(ROOT, p)).href);
  const cache = await at('dist/src/features/cost/prompt-cache.js');
  const { tokenizerFor } = await at('dist/src/features/cost/tokenizer.js');
  const { callCost, priceOf } = await at('dist/src/core/llm/pricing.js');
  const pricing = JSON.parse(readFileSync(join(ROOT, 'pricing.json'), 'utf8')).models;
  return { ...cache, tokenizerFor, callCost, priceOf, pricing };
}

/** A deterministic generator (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GOODS = ['salt', 'wool', 'copper', 'spice', 'grain'];
const HOUSES = ['Salt', 'Copper', 'Spice', 'Wool', 'Grain'];
const TABLE = [
  (r, n) => `Offer: I give the House of ${pick(r, HOUSES)} ${n(2, 9)} ${pick(r, GOODS)} for ${n(6, 40)} gold, delivered this round.`,
  (r, n) => `The market has ${pick(r, GOODS)} at ${n(2, 14)} gold and ${pick(r, GOODS)} at ${n(3, 18)}; I will not pay more than that.`,
  (r, n) => `Accepted: ${n(3, 8)} ${pick(r, GOODS)} for ${n(10, 30)} gold, as the House of ${pick(r, HOUSES)} offered last round.`,
  (r) => `I hold the House of ${pick(r, HOUSES)} to its contract: the penalty is due if the ${pick(r, GOODS)} does not arrive.`,
  (r, n) => `For the caravan I load ${n(3, 10)} ${pick(r, GOODS)} and hire ${n(0, 3)} guards; who else pays for the road?`,
  () => `My stock is as I stated it, and the ledger shows it: ask the broker before you call anyone a liar.`,
  (_r, n) => `A guild of three houses would share about ${n(60, 140)} gold at the end; I want contracts first, not promises.`,
  () => `Remember the storm last time: salt could not be sold for two rounds, and the houses that waited paid for it.`,
  (r, n) => `I propose a contract: ${n(4, 10)} ${pick(r, GOODS)} in round ${n(10, 50)}, penalty ${n(5, 15)} gold, signed by both houses.`,
];
const WORDS =
  'people city bus free parking council budget tram rent stadium river festival football school housing price month week news report friend neighbour centre street morning'.split(
    ' ',
  );

const pick = (r, list) => list[Math.floor(r() * list.length)];

/** A turn at the game table of 45 to 80 words: offers, prices, contracts, the caravan. */
export function tableTalk(seed) {
  const r = rng(seed);
  const n = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
  const out = [];
  const target = n(45, 80);
  while (out.join(' ').split(' ').length < target) out.push(pick(r, TABLE)(r, n));
  return out.join(' ');
}

/** A summary of `words` words about the game. */
function summaryText(seed, words) {
  const r = rng(seed);
  const n = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
  const out = [];
  while (out.join(' ').split(' ').length < words)
    out.push(
      `The House of ${pick(r, HOUSES)} traded ${n(2, 9)} ${pick(r, GOODS)} for ${n(6, 40)} gold; ${pick(r, GOODS)} stands at ${n(2, 18)} and a contract for round ${n(5, 50)} is open.`,
    );
  return out.join(' ');
}

/** A post of 25 to 45 words. */
function postText(seed) {
  const r = rng(seed);
  const words = [];
  const target = 25 + Math.floor(r() * 21);
  while (words.length < target) words.push(pick(r, WORDS));
  return `${words.join(' ')}.`;
}

function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * The mock provider with replies of realistic length: a game turn of 45-80 words, a summary (or a
 * merge) of 110-160 words, a population post of 25-45 words (the mock's action, its text
 * replaced). Every request is kept, with its reply.
 */
export class RealisticReplies {
  constructor(mock) {
    this.mock = mock;
    this.id = mock.id;
    this.calls = [];
  }
  async chat(request, options) {
    const res = await this.mock.chat(request, options);
    const { meta } = request;
    const seed = hash(`${meta.purpose}:${meta.agent ?? ''}:${meta.turn}:${this.calls.length}`);
    let content = res.content;
    if (meta.population) {
      const reply = JSON.parse(res.content);
      if (reply.command === 'post') reply.command_args.text = postText(seed);
      content = JSON.stringify(reply);
    } else if (meta.purpose === 'agent') content = tableTalk(seed);
    else if (meta.purpose === 'summary') content = summaryText(seed, 110 + (seed % 51));
    this.calls.push({ request, content });
    return { ...res, content };
  }
}

/** The tokens of a call as a model reads them (the tools first, then the messages), and where each message ends. */
function tokensOf(tok, request) {
  const ids = [];
  const ends = [];
  const tools = request.meta.tools;
  if (tools?.length) for (const t of tok.encode(JSON.stringify(tools.map((f) => ({ type: 'function', function: f }))))) ids.push(t);
  const head = tok.encodeChat([]); // the reply's opening tokens
  for (const m of request.messages) {
    for (const t of tok.encodeChat([m]).slice(0, -head.length)) ids.push(t);
    ends.push(ids.length);
  }
  for (const t of head) ids.push(t);
  return { ids, ends };
}

/**
 * The calls of a recorded run as cache calls: token ids, a send time from a throughput profile
 * (one call at a time every `latencyMs`, or a step's calls `concurrency` at a time), the
 * prompt_cache_key when `keys`, and Anthropic breakpoints chosen by `breakpoints(request, ends)`.
 */
export function cacheCalls(tok, recorded, { latencyMs, concurrency = 1, keys, breakpoints }) {
  const out = [];
  let clock = 0;
  let step;
  let inStep = 0;
  for (const { request, content } of recorded) {
    const { ids, ends } = tokensOf(tok, request);
    if (request.meta.population) {
      if (request.meta.turnInState !== step) {
        step = request.meta.turnInState;
        clock += latencyMs * Math.ceil(inStep / concurrency) + 60_000; // the step before ended; a minute between steps
        inStep = 0;
      }
      out.push({ tokens: ids, at: clock + Math.floor(inStep / concurrency) * latencyMs, request, content });
      inStep++;
    } else {
      clock += latencyMs;
      out.push({ tokens: ids, at: clock, request, content });
    }
    const last = out.at(-1);
    if (keys && request.promptCacheKey) last.cacheKey = request.promptCacheKey;
    const marks = breakpoints?.(request, ends);
    if (marks) last.breakpoints = marks.slice(-4);
  }
  out.sort((a, b) => a.at - b.at);
  return out;
}

/** Cached share and cost of simulated calls, in all and by purpose and by population step. */
export function billed(tools, tok, calls, sim, model) {
  const price = tools.priceOf(tools.pricing, model);
  const share = (xs) => {
    const p = xs.reduce((s, x) => s + x.promptTokens, 0);
    return p > 0 ? Math.round((xs.reduce((s, x) => s + x.cachedTokens, 0) / p) * 10_000) / 10_000 : 0;
  };
  const rows = sim.calls.map((r, i) => ({ ...r, call: calls[i] }));
  const by = (key) => {
    const groups = new Map();
    for (const r of rows) {
      const k = key(r.call.request.meta);
      if (k !== undefined) groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    return Object.fromEntries([...groups].map(([k, xs]) => [k, share(xs)]));
  };
  let usd = 0;
  let usdUncached = 0;
  for (const r of rows) {
    const completionTokens = tok.encode(r.call.content).length;
    usd += tools.callCost(price, { promptTokens: r.promptTokens, completionTokens, cachedTokens: r.cachedTokens });
    usdUncached += tools.callCost(price, { promptTokens: r.promptTokens, completionTokens });
  }
  return {
    calls: rows.length,
    prompt_tokens: sim.promptTokens,
    mean_prompt_tokens: Math.round(sim.promptTokens / Math.max(1, rows.length)),
    cached_share: share(rows),
    by_purpose: by((m) => (m.population ? 'population' : m.purpose)),
    ...(rows.some((r) => r.call.request.meta.population) ? { by_step: by((m) => (m.population ? m.turnInState : undefined)) } : {}),
    usd: Math.round(usd * 1e4) / 1e4,
    usd_without_cache: Math.round(usdUncached * 1e4) / 1e4,
  };
}
