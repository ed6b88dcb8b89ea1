// sop plan (src/api/plan.ts, docs/plan.md): the prediction of one dry run, set against what runs
// of the same SOPs with the mock realise (read from their journals as `sop plan --run` reads them):
// calls and tokens within 15% per state and in total, for a turn-based SOP, a 1,000-agent
// population, and a population larger than the plan's sample (dry-run with a sample, extrapolated).
// Then the parts the figures rest on: the throughput profile, replies of a chosen size, the cached
// share of long stable prompts, and prices.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planSop, realisedFigures, type PlanOptions, type PlanReport } from '../src/api/plan.js';
import { parseSeconds, schedule, throughputProfile } from '../src/api/plan-time.js';
import type { CallRecord } from '../src/api/plan-calls.js';
import { runSop } from '../src/api/run-sop.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import { loadPricing } from '../src/core/llm/pricing.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import type { Sop } from '../src/format/sop/types.js';

const DEBATE = 'examples/debate/debate.sop.json';
const SPREAD = 'examples/social-spread/social-spread.sop.json';
const tmp = mkdtempSync(join(tmpdir(), 'sop-plan-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const pricing = loadPricing();

function plan(file: string, o: Partial<PlanOptions> = {}, sop: Sop = loadSopFile(file).sop): Promise<PlanReport> {
  return planSop({ sop, file, pricing, profile: throughputProfile({}), replies: 'mock', ...o });
}

/** A run with the mock, as `sop run FILE --llm mock` makes it, and its figures read from its journal. */
async function realised(file: string, sop?: Sop) {
  const handle = runSop(sop ?? file, { llm: 'mock', out: join(tmp, 'runs') });
  const result = await handle.result;
  expect(result.status).toBe('finished');
  return realisedFigures(loadRunRecord(handle.dir!).effective);
}

const within = (predicted: number, real: number, tolerance = 0.15) => {
  expect(real).toBeGreaterThan(0);
  expect(Math.abs(predicted - real) / real).toBeLessThanOrEqual(tolerance);
};

function expectClose(p: PlanReport, r: Awaited<ReturnType<typeof realised>>) {
  for (const key of ['calls', 'prompt_tokens', 'completion_tokens'] as const) within(p.total[key], r.total[key]);
  expect(p.states.map((s) => s.state)).toEqual(r.states.map((s) => s.state));
  for (const s of p.states) within(s.calls, r.states.find((x) => x.state === s.state)!.calls);
}

describe('sop plan against mock runs', () => {
  it('debate: calls and tokens per state within 15% of the run, with cost and time', async () => {
    const p = await plan(DEBATE);
    expectClose(p, await realised(DEBATE));
    expect(p.total.cost).toBeGreaterThan(0); // priced as gpt-4o-mini, though the mock costs nothing
    expect(p.total.seconds).toBeCloseTo(p.total.calls * 1.5); // turn-based: one call after another
    expect(p.steps).toEqual([]);
  });

  it('social-spread: each population step within 15%, a step taking ceil(calls / 64) x 1.5 s', async () => {
    const p = await plan(SPREAD);
    const r = await realised(SPREAD);
    expectClose(p, r);
    expect(p.steps.length).toBe(r.steps.length);
    for (const s of p.steps) {
      within(s.calls, r.steps.find((x) => x.step === s.step)!.calls);
      expect(s.seconds).toBeCloseTo(Math.ceil(s.calls / 64) * 1.5);
    }
    expect(p.sampled).toEqual([]); // 1,000 agents: dry-run in full
  });

  it('a population larger than the sample: dry-run with a sample, calls counted over every agent, tokens extrapolated', async () => {
    const sop = loadSopFile(SPREAD).sop;
    const feed = sop.states.feed as unknown as Record<string, unknown>;
    // 6,000 agents of the example's shape (an archetype tier for politics, one call per agent otherwise)
    feed.population = {
      source: {
        generate: {
          n: 6000,
          seed: 3,
          columns: {
            name: { choice: ['Ana', 'Bo', 'Cy'] },
            age: { uniform: { min: 18, max: 80, round: true } },
            party: { categorical: { left: 0.5, right: 0.5 } },
            interest: { categorical: { politics: 0.3, sports: 0.3, tech: 0.4 } },
          },
        },
      },
      persona: 'You are {{name}}, {{age}}, who votes {{party}} and mostly cares about {{interest}}.',
    };
    feed.world = {
      ...(feed.world as object),
      params: { rank: 'hot', feed_size: 5, seed_posts: [{ id: 'news', author: 'a1', text: 'x' }] },
    };
    feed.max_steps = 3;
    delete feed.transitions;
    const file = join(tmp, 'big.sop.json');
    writeFileSync(file, JSON.stringify(sop));
    const p = await plan(file, { sample: 600 }, sop);
    expect(p.sampled).toEqual([{ state: 'feed', agents: 6000, sampled: 600 }]);
    const r = await realised(file, sop);
    expectClose(p, r);
    // who acts, and so how many calls, is counted over all 6,000 agents: exact
    for (const s of p.steps) expect(s.calls).toBe(r.steps.find((x) => x.step === s.step)!.calls);
  });
});

describe('what a plan rests on', () => {
  const call = (over: Partial<CallRecord>): CallRecord => ({
    state: 's',
    purpose: 'agent',
    model: 'gpt-4o-mini',
    promptTokens: 100,
    completionTokens: 50,
    weight: 1,
    ...over,
  });

  it('a throughput profile: turn-based calls in turn, a step in rounds of --concurrency, tokens per second', () => {
    const p = throughputProfile({ concurrency: 10, latency: '2s' });
    const steps = Array.from({ length: 25 }, () => call({ state: 'pop', step: 1 }));
    const s = schedule([call({}), ...steps, call({ state: 'pop', step: 1, purpose: 'judge' }), call({})], p);
    expect(s.total).toBe(2 + 3 * 2 + 2 + 2); // ceil(25 / 10) rounds of 2 s
    expect(s.at[1]).toBe(2);
    expect(s.at[11]).toBe(4); // the 11th call of the step goes in its second round
    expect(s.at[27]).toBe(10);
    // a sampled call stands for several: 5 calls of weight 5 are 25 calls
    expect(
      schedule(
        Array.from({ length: 5 }, () => call({ step: 1, weight: 5 })),
        p,
      ).total,
    ).toBe(6);
    const tps = throughputProfile({ tokensPerSecond: 25 });
    expect(tps.latency).toBe(0);
    expect(schedule([call({ completionTokens: 50 })], tps).total).toBe(2);
    expect(parseSeconds('800ms')).toBe(0.8);
    expect(parseSeconds('2m')).toBe(120);
    expect(() => parseSeconds('fast')).toThrow(/--latency must be a duration such as 1.5s/);
    expect(() => throughputProfile({ concurrency: 0 })).toThrow(/--concurrency must be a whole number/);
  });

  it('replies of a chosen size: every agent reply that many tokens, within its max_tokens; prompts grow with them', async () => {
    const mock = await plan(DEBATE);
    const sized = await plan(DEBATE, { replies: 200 });
    const agentCalls = sized.total.by_purpose.agent!;
    const summaries = sized.total.by_purpose.summary ?? 0;
    // judges answer as the mock does (a few tokens each); agents and summaries 200 tokens
    expect(sized.total.completion_tokens).toBeGreaterThanOrEqual((agentCalls + summaries) * 200);
    expect(sized.total.completion_tokens).toBeLessThan((agentCalls + summaries) * 200 + sized.total.calls * 10);
    expect(sized.total.prompt_tokens).toBeGreaterThan(mock.total.prompt_tokens * 1.3);
    const sop = loadSopFile(DEBATE).sop;
    sop.llm = { ...sop.llm, max_tokens: 40 };
    const capped = await plan(DEBATE, { replies: 200 }, sop);
    expect(capped.total.completion_tokens).toBeLessThan((agentCalls + summaries) * 40 + capped.total.calls * 10);
  });

  it('the cached share of prompts with a long stable start, and its price', async () => {
    const sop = loadSopFile(DEBATE).sop;
    // about 2,000 tokens of rules that start every prompt of the state
    const rules = Array.from({ length: 200 }, (_, i) => `Rule ${i}: speakers keep to the motion and cite a source.`).join(' ');
    for (const s of ['opening', 'open_floor'])
      (sop.states[s] as { environment_prompt?: string }).environment_prompt = `${rules} {{inputs.topic}}`;
    const p = await plan(DEBATE, { replies: 100 }, sop);
    // each role's calls go under their own prompt_cache_key: a role's first call in a state misses, its later ones hit
    for (const state of ['opening', 'open_floor']) expect(p.states.find((s) => s.state === state)!.cached_share).toBeGreaterThan(0.2);
    expect(p.states.find((s) => s.state === 'verdict')!.cached_share).toBe(0); // a short prompt: below 1,024 tokens
    // cached tokens at the cached_input price: what the plan charges is less than the same tokens uncached
    const price = pricing['gpt-4o-mini']!;
    const full = (p.total.prompt_tokens * price.input + p.total.completion_tokens * price.output) / 1e6;
    const expected = full - (p.total.cached_tokens * (price.input - price.cached_input!)) / 1e6;
    expect(p.total.cost).toBeCloseTo(expected, 5);
    expect(p.total.cost!).toBeLessThan(full);
  });

  it("a model's price from the SOP's llm.pricing, and none for a model nobody prices", async () => {
    const sop = loadSopFile(DEBATE).sop;
    sop.llm = { model: 'house-model', pricing: { input: 1, output: 2 } };
    const p = await plan(DEBATE, {}, sop);
    expect(p.total.cost).toBeCloseTo((p.total.prompt_tokens * 1 + p.total.completion_tokens * 2) / 1e6, 5);
    sop.llm = { model: 'nobody-prices-this' };
    const q = await plan(DEBATE, {}, sop);
    expect(q.total.cost).toBeUndefined();
    expect(q.unpriced_models).toEqual(['nobody-prices-this']);
  });
});
