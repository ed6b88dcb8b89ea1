// The local model at its real speed (issue 37), on SmolLM2-135M-Instruct Q4_1 with the default
// threads (the cores but one): a 20-agent population step tells its progress at least every 10 s;
// a step's deadline stops the generations in flight, and the model answers the next calls on
// every one of its sequences; a worker thread ended in the middle of a generation, as a test
// runner ends one after a test's timeout, leaves its process running once closeLocalModels has
// stopped it (llama.cpp answering into a thread that is gone aborted the whole process). They
// skip, saying why, without the model or node-llama-cpp.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSop, type RunEvent } from '../src/index.js';
import { LocalProvider, closeLocalModels } from '../src/core/llm/local.js';
import { defaultThreads, localSettings } from '../src/core/llm/local-runtime.js';
import { useLocalThreads } from '../src/apps/cli/option-flags.js';
import { TEST_MODEL, noteSkip } from './helpers/local-model.js';

const missing = noteSkip('the local model at its real speed');
const tmp = mkdtempSync(join(tmpdir(), 'sop-local-stop-'));
// a timeout of a test here ends its generations before the worker goes (see the last test)
afterAll(closeLocalModels);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type StepEvent = Extract<RunEvent, { type: 'population_step' }>;
type ProgressEvent = Extract<RunEvent, { type: 'llm_progress' }>;

/** The social-spread example cut to one step of `n` agents, every one active and deciding for itself. */
function spread(n: number, extra: Record<string, unknown> = {}): string {
  const sop = JSON.parse(readFileSync('examples/social-spread/social-spread.sop.json', 'utf8')) as Record<string, unknown> & {
    states: Record<string, Record<string, unknown>>;
  };
  delete sop.$schema;
  sop.llm = { temperature: 0.7, max_tokens: 48 };
  const feed = sop.states.feed!;
  Object.assign(feed, {
    population: { ...(feed.population as object), sample: { n, seed: 1 } },
    activation: { probability: 1 },
    cognition: { tier: 'per_agent' },
    max_steps: 1,
    transitions: [],
    next_states: { '1': 'end' },
    ...extra,
  });
  copyFileSync('examples/social-spread/personas.csv', join(tmp, 'personas.csv'));
  const file = join(tmp, `spread-${n}-${Object.keys(extra).join('-') || 'plain'}.sop.json`);
  writeFileSync(file, JSON.stringify(sop, null, 2));
  return file;
}

describe('the threads of a local model', () => {
  it('are the cores but one by default, at least 1, unless SOP_LOCAL_THREADS says', () => {
    expect(localSettings({}).threads).toBe(Math.max(1, availableParallelism() - 1));
    expect(defaultThreads(1)).toBe(1);
    expect(defaultThreads(2)).toBe(1);
    expect(defaultThreads(8)).toBe(7);
    expect(localSettings({ SOP_LOCAL_THREADS: '3' }).threads).toBe(3);
    expect(() => localSettings({ SOP_LOCAL_THREADS: '0' })).toThrow('SOP_LOCAL_THREADS must be a whole number above 0 (got "0")');
  });

  it('--local-threads N sets them for the local models of the process; 0 or 1.5 is one line', () => {
    const before = process.env.SOP_LOCAL_THREADS;
    try {
      useLocalThreads(3);
      expect(localSettings().threads).toBe(3);
      expect(() => useLocalThreads(0)).toThrow('--local-threads must be a whole number above 0 (got 0)');
      expect(() => useLocalThreads(1.5)).toThrow('--local-threads must be a whole number above 0 (got 1.5)');
    } finally {
      if (before === undefined) delete process.env.SOP_LOCAL_THREADS;
      else process.env.SOP_LOCAL_THREADS = before;
    }
  });
});

describe.skipIf(missing !== undefined)('the local model at its real speed', () => {
  it('a 20-agent step tells its progress at least every 10 s, with tokens and tokens/s', async ({ signal }) => {
    const provider = await LocalProvider.create({ model: TEST_MODEL, settings: localSettings({}), seed: 5 });
    const seen: Array<{ e: RunEvent; at: number }> = [];
    const handle = runSop(spread(20), { llm: provider, seed: 2, signal });
    for await (const e of handle) seen.push({ e, at: performance.now() });
    const result = await handle.result;
    expect(result.status, result.error?.message).toBe('finished');
    const started = seen.find((s) => s.e.type === 'population_started')!;
    const step = seen.find((s) => s.e.type === 'population_step')!;
    expect((step.e as StepEvent).actions).toHaveLength(20);
    const told = seen.filter((s): s is { e: ProgressEvent; at: number } => s.e.type === 'llm_progress');
    // the step took longer than one interval on this machine, so it told something
    if (step.at - started.at > 10_000) expect(told.length).toBeGreaterThan(0);
    // never silent for more than 10 s, from the step's start to its end
    const times = [started.at, ...told.map((t) => t.at), step.at];
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(Math.max(...gaps), `gaps ${gaps.map((g) => Math.round(g / 100) / 10).join(', ')} s`).toBeLessThanOrEqual(10_000);
    for (const { e } of told) {
      expect(e).toMatchObject({ population: true, state: 'feed', calls: 20 });
      expect(e.done).toBeLessThanOrEqual(20);
      expect(e.generating).toBeLessThanOrEqual(4); // the default 4 sequences
    }
    // the tokens so far only grow, and the last figure comes near the step's own count
    for (let i = 1; i < told.length; i++) expect(told[i]!.e.tokens).toBeGreaterThanOrEqual(told[i - 1]!.e.tokens);
    const last = told.at(-1)?.e;
    if (last) {
      expect(last.tokens).toBeLessThanOrEqual(result.usage.completion_tokens);
      if (last.tokens > 0) expect(last.tokens_per_s).toBeGreaterThan(0);
    }
  }, 900_000);

  it("a step's deadline stops the generations in flight; the model answers the next calls on all its sequences", async ({ signal }) => {
    const settings = { ...localSettings({}), sequences: 4 };
    const provider = await LocalProvider.create({ model: TEST_MODEL, settings, seed: 5 });
    // 20 decisions of about 300 prompt tokens cannot all be made within 1 s on a CPU: the rest are given up
    const file = spread(20, { straggler: { deadline_s: 1, then: 'default' } });
    const events: RunEvent[] = [];
    const handle = runSop(file, { llm: provider, seed: 2, signal });
    for await (const e of handle) events.push(e);
    const result = await handle.result;
    expect(result.status, result.error?.message).toBe('finished');
    const step = events.find((e): e is StepEvent => e.type === 'population_step')!;
    expect(step.actions).toHaveLength(20);
    const answered = events.filter((e) => e.type === 'llm_call' && e.state === 'feed').length;
    expect(answered).toBeLessThan(20); // some were given up at the deadline, their agents idle
    // the process goes on, and the same model answers as many calls at once as it has sequences:
    // none was left held by a generation given up
    const replies = await Promise.all(
      [1, 2, 3, 4].map((turn) =>
        provider.chat(
          {
            model: TEST_MODEL,
            messages: [{ role: 'user', content: `Say yes, number ${turn}.` }],
            maxTokens: 8,
            temperature: 0,
            meta: { purpose: 'agent', state: 'after', agent: 'Ada', turn },
          },
          { signal },
        ),
      ),
    );
    for (const r of replies) expect(r.usage.completionTokens).toBeGreaterThan(0);
  }, 600_000);

  it('a worker thread ended during a generation leaves its process running, once closeLocalModels stopped it', async () => {
    // test/fixtures/local-stop/host.ts: its worker generates, is told to stop (closeLocalModels, as
    // a timed-out test's afterAll does) and is ended; the process then makes its own call
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/local-stop/host.ts', TEST_MODEL], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code, sig] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('close', (c, s) => r([c, s])));
    expect(stderr).not.toContain('Napi::Error');
    expect({ code, sig }, stderr).toEqual({ code: 0, sig: null });
    const out = JSON.parse(stdout.trim()) as { said: string[]; next: string; tokens: number };
    // the generation was under way, was stopped by the close, and the thread said so before it went
    expect(out.said).toEqual([
      'generating',
      'stopped: the local model was closed (its calls in flight stopped, its context freed)',
      'closed',
    ]);
    expect(out.tokens).toBeGreaterThan(0);
  }, 600_000);
});
