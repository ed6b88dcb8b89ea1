// Prices and cost: cached prompt tokens, the cost of each call in the journal, totals by purpose
// and agent in usage.json, the closing line and `sop runs`, with pricing.json, --pricing and a
// SOP's llm.pricing; a model without a price costs "unknown", never 0. The LLM is a local
// OpenAI-compatible server reporting known usage numbers.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchSettings } from '../src/apps/cli/run-command.js';
import { callCost, parsePricing, priceOf } from '../src/core/llm/pricing.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { spawnCli } from './helpers/cli.js';

const shipped = JSON.parse(readFileSync('pricing.json', 'utf8')) as {
  as_of: string;
  models: Record<string, { input: number; cached_input: number; output: number }>;
};

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], {
      env: { ...process.env, OPENAI_API_KEY: 'test-key' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Two agents talk for four turns, then the run ends. */
function sop(llm: Record<string, unknown>) {
  return {
    name: 'priced',
    llm,
    agents: { Ada: { roles: { talk: 'Pro' } }, Ben: { roles: { talk: 'Con' } } },
    root: 'talk',
    states: {
      talk: {
        environment_prompt: 'A short talk.',
        roles: ['Pro', 'Con'],
        components: { Pro: { task: 'Argue for.' }, Con: { task: 'Argue against.' } },
        controller: { type: 'order', max_turns: 4 },
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  };
}

interface LlmCall {
  type: 'llm_call';
  purpose: string;
  agent?: string;
  model: string;
  usage: { promptTokens: number; completionTokens: number; cachedTokens?: number };
  cost_usd?: number;
}
interface Bucket {
  calls: number;
  prompt_tokens: number;
  cached_tokens?: number;
  cost?: number;
  cost_unknown?: true;
}
interface Usage extends Bucket {
  completion_tokens: number;
  unpriced_models?: string[];
  by_purpose: Record<string, Bucket>;
  by_agent?: Record<string, Bucket>;
  by_state?: Record<string, Bucket>;
}

let server: TestServer;
let tmp: string;
/** Whether the server reports cached tokens (usage.prompt_tokens_details.cached_tokens). */
let reportCached = true;
beforeAll(async () => {
  // Every call: 1000 prompt tokens of which 400 cached, 200 completion tokens.
  server = await startOpenAiServer({
    usage: () => ({ prompt_tokens: 1000, completion_tokens: 200, ...(reportCached ? { cached_tokens: 400 } : {}) }),
  });
  tmp = mkdtempSync(join(tmpdir(), 'sop-cost-'));
});
afterAll(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

let n = 0;
async function runWith(llm: Record<string, unknown>, extra: string[] = []) {
  const dir = join(tmp, `case-${n++}`);
  const file = join(dir, 'priced.sop.json');
  const out = join(dir, 'runs');
  await import('node:fs').then((fs) => fs.mkdirSync(dir, { recursive: true }));
  writeFileSync(file, JSON.stringify(sop(llm)));
  // not --quiet: the agents' replies are then streamed (to stdout), the judge's are not
  const r = await cli(['run', file, '--llm', 'openai', '--base-url', server.url, '--out', out, ...extra]);
  expect(r.code, r.stderr).toBe(0);
  const runDir = join(out, readdirSync(out)[0]!);
  const journal = readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string });
  const calls = journal.filter((e): e is LlmCall => e.type === 'llm_call');
  const usage = JSON.parse(readFileSync(join(runDir, 'usage.json'), 'utf8')) as Usage;
  const runs = await cli(['runs', '--out', out]);
  const runsJson = await cli(['runs', '--out', out, '--json']);
  return {
    r,
    calls,
    usage,
    runs: runs.stdout,
    runsJson: JSON.parse(runsJson.stdout.trim()) as {
      cost_usd?: number;
      unpriced_models?: string[];
      cached_share?: number;
      cached_share_by_state?: Record<string, number>;
    },
  };
}

/** USD of one call at these prices per million: 600 uncached + 400 cached prompt tokens, 200 completion tokens. */
const perCall = (p: { input: number; cached_input: number; output: number }) =>
  (600 * p.input + 400 * p.cached_input + 200 * p.output) / 1e6;

describe('cost', () => {
  it('prices every call from pricing.json, cached tokens at the cached rate, with totals by purpose and agent', async () => {
    const { r, calls, usage, runs, runsJson } = await runWith({ model: 'gpt-4o-mini' });
    const price = shipped.models['gpt-4o-mini']!;
    const one = perCall(price); // 0.00024 at 0.15 / 0.075 / 0.60
    expect(calls.length).toBeGreaterThanOrEqual(4);
    // cached tokens are read from streamed (agent) and plain (judge) answers alike
    expect(calls.some((c) => c.purpose === 'judge')).toBe(true);
    const bodies = server.requests.map((q) => q.body as { stream?: boolean });
    expect(bodies.some((b) => b.stream === true)).toBe(true);
    expect(bodies.some((b) => !b.stream)).toBe(true);
    for (const c of calls) {
      expect(c.usage).toEqual({ promptTokens: 1000, completionTokens: 200, cachedTokens: 400 });
      expect(c.cost_usd).toBeCloseTo(one, 12);
    }
    expect(usage.calls).toBe(calls.length);
    expect(usage.cached_tokens).toBe(400 * calls.length);
    expect(usage.cost).toBeCloseTo(one * calls.length, 10);
    expect(usage.unpriced_models).toBeUndefined();
    const agentCalls = calls.filter((c) => c.purpose === 'agent');
    expect(usage.by_purpose.agent!.cost).toBeCloseTo(one * agentCalls.length, 10);
    expect(usage.by_purpose.agent!.cached_tokens).toBe(400 * agentCalls.length);
    for (const agent of ['Ada', 'Ben']) {
      const mine = calls.filter((c) => c.agent === agent).length;
      expect(mine).toBeGreaterThan(0);
      expect(usage.by_agent![agent]!.calls).toBe(mine);
      expect(usage.by_agent![agent]!.cost).toBeCloseTo(one * mine, 10);
    }
    expect(r.stderr).toContain(`; $${(one * calls.length).toFixed(4)}`);
    expect(runsJson.cost_usd).toBeCloseTo(one * calls.length, 10);
    expect(runs).toMatch(/COST/);
    expect(runs).toContain(`$${(one * calls.length).toFixed(4)}`);
    // the cached share, in all and per state: usage.json's by_state, sop runs (CACHED) and its --json
    expect(usage.by_state!.talk).toMatchObject({
      calls: calls.length,
      prompt_tokens: 1000 * calls.length,
      cached_tokens: 400 * calls.length,
    });
    expect(runsJson.cached_share).toBe(0.4);
    expect(runsJson.cached_share_by_state).toEqual({ talk: 0.4 });
    expect(runs.split('\n')[0]).toMatch(/\bCACHED\b/);
    expect(runs.split('\n')[1]).toMatch(/\b40%/);
    // Without cached tokens the same call would cost more: the cached rate is what was used.
    expect(one).toBeLessThan((1000 * price.input + 200 * price.output) / 1e6);
  });

  it('an unknown model costs unknown everywhere, never 0', async () => {
    const { r, calls, usage, runs, runsJson } = await runWith({ model: 'no-such-model' });
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) expect(c.cost_usd).toBeUndefined();
    expect(usage.cost).toBeUndefined();
    expect(usage.unpriced_models).toEqual(['no-such-model']);
    expect(usage.by_purpose.agent!.cost).toBeUndefined();
    expect(usage.by_purpose.agent!.cost_unknown).toBe(true);
    expect(usage.by_agent!.Ada!.cost_unknown).toBe(true);
    expect(r.stderr).toContain('cost unknown (no price for model no-such-model)');
    expect(r.stderr).not.toContain('$0.0000');
    expect(runsJson.cost_usd).toBeUndefined();
    expect(runsJson.unpriced_models).toEqual(['no-such-model']);
    expect(runs.split('\n')[1]).toMatch(/\bunknown\b/);
  });

  it('a server that reports no cached tokens gives no cached share (never 0%)', async () => {
    reportCached = false;
    try {
      const { usage, runs, runsJson } = await runWith({ model: 'gpt-4o-mini' });
      expect(usage.by_state).toBeUndefined();
      expect(runsJson.cached_share).toBeUndefined();
      expect(runs.split('\n')[1]).not.toMatch(/%/);
    } finally {
      reportCached = true;
    }
  });

  it('--pricing FILE prices a model the shipped table does not know, and replaces a shipped price', async () => {
    const file = join(tmp, 'prices.json');
    writeFileSync(
      file,
      JSON.stringify({ models: { 'house-model': { input: 10, cached_input: 1, output: 100 }, 'gpt-4o-mini': { input: 1, output: 2 } } }),
    );
    const house = await runWith({ model: 'house-model' }, ['--pricing', file]);
    const one = perCall({ input: 10, cached_input: 1, output: 100 }); // (6000 + 400 + 20000) / 1e6
    expect(one).toBeCloseTo(0.0264, 12);
    for (const c of house.calls) expect(c.cost_usd).toBeCloseTo(one, 12);
    expect(house.usage.cost).toBeCloseTo(one * house.calls.length, 10);
    const mini = await runWith({ model: 'gpt-4o-mini' }, ['--pricing', file]);
    // no cached_input: cached tokens at the input rate
    for (const c of mini.calls) expect(c.cost_usd).toBeCloseTo((1000 * 1 + 200 * 2) / 1e6, 12);
  });

  it("a SOP's llm.pricing prices its model", async () => {
    const { calls, usage } = await runWith({ model: 'sop-model', pricing: { input: 2, cached_input: 0.5, output: 8 } });
    const one = perCall({ input: 2, cached_input: 0.5, output: 8 });
    for (const c of calls) expect(c.cost_usd).toBeCloseTo(one, 12);
    expect(usage.cost).toBeCloseTo(one * calls.length, 10);
  });

  it('a bad pricing file is one clear error line before anything runs', async () => {
    const file = join(tmp, 'bad-prices.json');
    writeFileSync(file, JSON.stringify({ models: { x: { input: -1, output: 1 } } }));
    const dir = join(tmp, 'bad');
    const r = await cli([
      'run',
      'examples/debate/debate.sop.json',
      '--llm',
      'openai',
      '--base-url',
      server.url,
      '--pricing',
      file,
      '--out',
      dir,
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('/models/x/input must be >= 0');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('the shipped table is dated, and prices dated model names by their undated entry', () => {
    expect(shipped.as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const table = parsePricing(readFileSync('pricing.json', 'utf8'), 'pricing.json');
    for (const m of ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'o3', 'o4-mini', 'gpt-5', 'gpt-5-mini'])
      expect(table[m]).toBeDefined();
    expect(priceOf(table, 'gpt-4o-2024-08-06')).toEqual(table['gpt-4o']);
    expect(priceOf(table, 'gpt-4o-extra')).toBeUndefined();
    expect(callCost(undefined, { promptTokens: 10, completionTokens: 10 })).toBeUndefined();
  });

  it('--pricing is recorded at launch (absolute), so sop resume prices the rest of the run the same', () => {
    const launch = launchSettings({ file: 'x.sop.json', out: 'runs', inputs: [], json: false, quiet: true, pricing: 'prices.json' });
    expect(launch.pricing).toBe(resolve('prices.json'));
  });
});
