// Batch mode (docs/population.md#batch-mode): a population step's calls sent as one batch, to a
// fake OpenAI Batch API on 127.0.0.1 (test/helpers/batch-server.ts; the real openai client talks
// to it) or as a file for `vllm run-batch` (the test writes the output file, as vllm would). Each
// agent gets the reply to its own line (custom_id), calls cost batch prices, and a failed batch
// or a failed line fails the step with a clear error.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeRun, runSop, type RunEvent } from '../src/index.js';
import { BATCH_DISCOUNT, callCost } from '../src/core/llm/pricing.js';
import { BatchResults } from '../src/features/batch/lines.js';
import { readLines } from '../src/features/batch/result-stream.js';
import { VllmBatchTarget } from '../src/features/batch/vllm-target.js';
import { OpenAiBatchTarget } from '../src/features/batch/openai-target.js';
import { getEventListeners } from 'node:events';
import { startBatchServer, type BatchLine, type FakeBatchServer } from './helpers/batch-server.js';
import type { ChatRequestBody } from './helpers/openai-server.js';
import { AGENTS, STEPS, writePopulationSop, inMessages } from './helpers/population-sop.js';
import { until } from './helpers/until.js';
import { scaled } from './helpers/time.js';

let dir: string;
let sopFile: string;
const servers: FakeBatchServer[] = [];
/** Persona names by agent id (personas.csv). */
const names = new Map<string, string>();

/** Each agent posts a line with its name (read from its persona): a reply depends only on who asks. */
function reply(b: ChatRequestBody): string {
  const name = inMessages(b.messages, /You are (\w+)\./) ?? 'someone';
  return JSON.stringify({ command: 'post', command_args: { text: `${name} says hello` } });
}

async function run(o: Parameters<typeof runSop>[1]) {
  const handle = runSop(sopFile, o);
  const events: RunEvent[] = [];
  for await (const e of handle) events.push(e);
  return { result: await handle.result, events, dir: handle.dir! };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sop-batch-'));
  sopFile = writePopulationSop(dir);
  for (const line of readFileSync('examples/social-spread/personas.csv', 'utf8').trim().split('\n').slice(1)) {
    const [id, name] = line.split(',');
    names.set(id!, name!);
  }
});
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('--llm-mode batch against the OpenAI Batch API', () => {
  it('sends each step as one batch, gives each agent the reply to its own line, and prices the calls at batch prices', async () => {
    const server = await startBatchServer({ reply });
    servers.push(server);
    const { result, events } = await run({
      llm: 'openai',
      baseUrl: server.url,
      llmMode: 'batch',
      batchPollMs: 50,
      out: join(dir, 'runs'),
    });
    expect(result.status, result.error?.message).toBe('finished');
    // one batch a step, of every agent's call, each line a chat completion request with the provider's body
    expect(server.created).toHaveLength(STEPS);
    expect(server.created.every((b) => b.endpoint === '/v1/chat/completions' && b.window === '24h')).toBe(true);
    const lines: BatchLine[] = server.uploads.get(server.created[0]!.inputFileId)!;
    expect(lines).toHaveLength(AGENTS);
    // custom_id: the call's key in its step (step:agent), one each
    expect(lines.every((l) => /^1:a\d+$/.test(l.custom_id))).toBe(true);
    expect(new Set(lines.map((l) => l.custom_id)).size).toBe(AGENTS);
    expect(lines[0]).toMatchObject({ method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', temperature: 0.7 } });
    expect(lines[0]!.body.stream).toBeUndefined();
    // each agent posted its own name: the replies went to the agents whose lines they answer
    const steps = events.filter((e): e is Extract<RunEvent, { type: 'population_step' }> => e.type === 'population_step');
    expect(steps).toHaveLength(STEPS);
    for (const s of steps) {
      const posts = s.actions.filter((a) => a.tier === 'per_agent');
      expect(posts).toHaveLength(AGENTS);
      for (const a of posts) expect(a.args).toEqual({ text: `${names.get(a.agent)} says hello` });
    }
    // batch prices: half of gpt-4o-mini's (0.15 and 0.6 USD per million tokens)
    const calls = events.filter((e): e is Extract<RunEvent, { type: 'llm_call' }> => e.type === 'llm_call');
    expect(calls).toHaveLength(AGENTS * STEPS);
    const usage = { promptTokens: 1000, completionTokens: 100 };
    const standard = callCost({ input: 0.15, output: 0.6 }, usage)!;
    for (const c of calls) {
      expect(c.price_tier).toBe('batch');
      expect(c.cost_usd).toBeCloseTo(standard * BATCH_DISCOUNT, 12);
    }
    expect(result.usage.cost).toBeCloseTo(AGENTS * STEPS * standard * BATCH_DISCOUNT, 10);
    // the terminal and the journal see the batch's progress
    const told = events.filter((e): e is Extract<RunEvent, { type: 'batch' }> => e.type === 'batch');
    expect(told.filter((e) => e.status === 'submitted').map((e) => e.id)).toEqual(server.created.map((b) => b.id));
    expect(told.filter((e) => e.status === 'completed')).toHaveLength(STEPS);
  });

  it('a state\'s "llm_mode": "batch" sends its steps as batches without --llm-mode, and --llm-mode direct sends them one by one', async () => {
    const own = mkdtempSync(join(dir, 'own-'));
    const file = writePopulationSop(own, { extra: { llm_mode: 'batch' } });
    const server = await startBatchServer({ reply });
    servers.push(server);
    const handle = runSop(file, { llm: 'openai', baseUrl: server.url, batchPollMs: 50 });
    expect((await handle.result).status).toBe('finished');
    expect(server.created).toHaveLength(STEPS);
    // direct: the fake batch server has no /chat/completions, so the first call fails there
    const direct = await runSop(file, { llm: 'openai', baseUrl: server.url, llmMode: 'direct', timeoutMs: scaled(10_000) }).result;
    expect(direct.status).not.toBe('finished');
    expect(server.created).toHaveLength(STEPS);
  });

  it('fails the step with the reason of a failed batch', async () => {
    const server = await startBatchServer({ reply, outcome: 'failed' });
    servers.push(server);
    const { result } = await run({ llm: 'openai', baseUrl: server.url, llmMode: 'batch', batchPollMs: 50, out: join(dir, 'failed') });
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/batch batch_\d+ failed: line 1: the model is not available for batches/);
  });

  it('fails the step naming the call whose line came back with an error', async () => {
    const server = await startBatchServer({ reply, errorFor: (_id, at) => at === 2 });
    servers.push(server);
    const { result } = await run({ llm: 'openai', baseUrl: server.url, llmMode: 'batch', batchPollMs: 50, out: join(dir, 'line') });
    expect(result.status).toBe('failed');
    const third = server.uploads.get(server.created[0]!.inputFileId)![2]!.custom_id;
    expect(result.error?.message).toContain(`the call ${third} of state "feed" failed: HTTP 400: the request was refused by the test`);
    expect(server.created).toHaveLength(1);
  });

  it('fails the calls an expired batch did not answer, naming the expiry', async () => {
    const server = await startBatchServer({ reply, outcome: 'expired' });
    servers.push(server);
    const { result } = await run({ llm: 'openai', baseUrl: server.url, llmMode: 'batch', batchPollMs: 50, out: join(dir, 'expired') });
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/failed: batch_expired: This request could not be executed/);
  });

  it('a resumed run whose journaled batch failed sends the step in a new batch', async () => {
    const server = await startBatchServer({ reply, outcome: (n) => (n === 0 ? 'failed' : 'completed') });
    servers.push(server);
    const first = await run({ llm: 'openai', baseUrl: server.url, llmMode: 'batch', batchPollMs: 50, out: join(dir, 'again') });
    expect(first.result.status).toBe('failed');
    expect(server.created).toHaveLength(1);
    const handle = resumeRun(first.dir);
    const events: RunEvent[] = [];
    for await (const e of handle) events.push(e);
    expect((await handle.result).status).toBe('finished');
    // step 1: the failed batch polled again (resumed), then a new one; step 2: one batch
    expect(server.created).toHaveLength(1 + STEPS);
    expect(events.some((e) => e.type === 'warning' && /batch batch_\d+ failed.*sent in a new batch/.test(e.message))).toBe(true);
  });

  it('a resumed run whose journaled batch expired half done sends only the calls without a reply in a new batch', async () => {
    const server = await startBatchServer({ reply, outcome: (n) => (n === 0 ? 'expired' : 'completed') });
    servers.push(server);
    const first = await run({ llm: 'openai', baseUrl: server.url, llmMode: 'batch', batchPollMs: 50, out: join(dir, 'expired-again') });
    expect(first.result.status).toBe('failed');
    const resumed = await resumeRun(first.dir).result;
    expect(resumed.status, resumed.error?.message).toBe('finished');
    // step 1: the expired batch's replies kept (from the journal), its other half in a new batch; step 2: one batch
    expect(server.created.map((b) => server.uploads.get(b.inputFileId)!.length)).toEqual([AGENTS, AGENTS / 2, AGENTS]);
    expect(resumed.usage.calls).toBe(AGENTS * STEPS);
  });

  it('refuses batch mode without an OpenAI-compatible server, or with shards, before the run starts', async () => {
    await expect(runSop(sopFile, { llm: 'mock', llmMode: 'batch' }).result).rejects.toThrow(/run with options.llm openai/);
    await expect(
      runSop(sopFile, { llm: 'openai', baseUrl: 'http://127.0.0.1:9/v1', llmMode: 'batch', shardOver: 'redis://127.0.0.1:9' }).result,
    ).rejects.toThrow(/options.shardOver and batch mode .* choose one/);
  });
});

describe('batch prices', () => {
  it('are half the standard ones unless the table gives its own, cached prompt tokens at half the cached price', () => {
    const u = { promptTokens: 1_000_000, completionTokens: 1_000_000, cachedTokens: 200_000 };
    expect(callCost({ input: 2, cached_input: 0.5, output: 8 }, u, 'batch')).toBeCloseTo(0.8 * 1 + 0.2 * 0.25 + 4, 10);
    expect(
      callCost({ input: 2, output: 8, batch_input: 1.5, batch_output: 3 }, { promptTokens: 1e6, completionTokens: 1e6 }, 'batch'),
    ).toBe(4.5);
    expect(callCost({ input: 2, output: 8 }, { promptTokens: 1e6, completionTokens: 1e6 })).toBe(10);
  });
});

describe('--batch-target vllm', () => {
  it('writes the batch file, tells the vllm run-batch command, and reads the output file vllm writes', async () => {
    const handle = runSop(sopFile, { llm: 'mock', llmMode: 'batch', batchTarget: 'vllm', batchPollMs: 20, out: join(dir, 'vllm') });
    const events: RunEvent[] = [];
    const collecting = (async () => {
      for await (const e of handle) events.push(e);
    })();
    const batches = join(handle.dir!, 'batches');
    for (let step = 1; step <= STEPS; step++) {
      const input = join(batches, `feed-1-${step}.input.jsonl`);
      expect(await until(() => existsSync(input), { timeoutMs: 10_000 })).toBe(true);
      const lines = readFileSync(input, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as BatchLine);
      expect(lines).toHaveLength(AGENTS);
      // vllm's part: one result line per request, written in another order than asked
      const output = lines
        .reverse()
        .map((l) =>
          JSON.stringify({
            id: `vllm-${l.custom_id}`,
            custom_id: l.custom_id,
            response: {
              status_code: 200,
              request_id: l.custom_id,
              body: {
                object: 'chat.completion',
                model: l.body.model,
                choices: [{ index: 0, message: { role: 'assistant', content: reply(l.body) }, finish_reason: 'stop' }],
                usage: { prompt_tokens: 10, completion_tokens: 5 },
              },
            },
            error: null,
          }),
        )
        .join('\n');
      // written in two parts: a half-written file is not taken for the output
      const out = join(batches, `feed-1-${step}.output.jsonl`);
      writeFileSync(out, output.slice(0, output.length >> 1));
      writeFileSync(out, output + '\n');
    }
    const result = await handle.result;
    await collecting;
    expect(result.status, result.error?.message).toBe('finished');
    const told = events.filter((e): e is Extract<RunEvent, { type: 'batch' }> => e.type === 'batch');
    const submitted = told.find((e) => e.status === 'submitted')!;
    expect(submitted.command).toBe(
      `vllm run-batch -i ${join(batches, 'feed-1-1.input.jsonl')} -o ${join(batches, 'feed-1-1.output.jsonl')} --model gpt-4o-mini`,
    );
    const steps = events.filter((e): e is Extract<RunEvent, { type: 'population_step' }> => e.type === 'population_step');
    for (const s of steps)
      for (const a of s.actions) if (a.tier === 'per_agent') expect(a.args).toEqual({ text: `${names.get(a.agent)} says hello` });
    expect(readdirSync(batches).sort()).toEqual([
      'feed-1-1.input.jsonl',
      'feed-1-1.output.jsonl',
      'feed-1-2.input.jsonl',
      'feed-1-2.output.jsonl',
    ]);
  });
});

describe('a long wait for a batch', () => {
  it('adds no abort listener per poll: 40 polls leave the signal as they found it, and no MaxListenersExceededWarning', async () => {
    const server = await startBatchServer({ reply, hold: true });
    servers.push(server);
    const target = new OpenAiBatchTarget({ baseURL: server.url, apiKey: () => 'sk-test' }, 'run-listeners');
    const file = JSON.stringify({ custom_id: '1:a', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [] } });
    const batch = await target.submit(file + '\n', { state: 'feed', visit: 1, step: 1 });
    const stop = new AbortController();
    const before = getEventListeners(stop.signal, 'abort').length;
    for (let i = 0; i < 40; i++) expect((await target.poll(batch, new Set(['1:a']), stop.signal)).ended).toBeUndefined();
    expect(getEventListeners(stop.signal, 'abort').length).toBe(before);
    server.release();
    const over = await target.poll(batch, new Set(['1:a']), stop.signal);
    const lines: string[] = [];
    await over.ended!.read((l) => lines.push(l));
    expect(lines.filter((l) => l.includes('"custom_id":"1:a"'))).toHaveLength(1);
    expect(getEventListeners(stop.signal, 'abort').length).toBe(before);

    // a run waiting through many polls: no warning of listeners piling up on its signals
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const held = await startBatchServer({ reply, hold: true });
      servers.push(held);
      const handle = runSop(sopFile, {
        llm: 'openai',
        baseUrl: held.url,
        llmMode: 'batch',
        batchPollMs: 1,
        out: join(dir, 'runs-listeners'),
      });
      expect(await until(() => held.polls >= 60, { timeoutMs: 60_000 })).toBe(true);
      held.release();
      expect((await handle.result).status).toBe('finished');
      await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.includes('MaxListenersExceeded'))).toEqual([]);
  }, 120_000);
});

describe('batch results are untrusted input', () => {
  const request = {
    messages: [{ role: 'user' as const, content: 'hi' }],
    model: 'm',
    meta: { purpose: 'agent' as const, state: 's', turn: 1 },
  };
  it('counts lines that are not results, ignores ids the step did not ask, and names what a bad line lacks', () => {
    const text = [
      'not json',
      JSON.stringify({ id: 'no custom_id' }),
      JSON.stringify({ custom_id: 7 }),
      JSON.stringify({ custom_id: 'other', response: { status_code: 200, body: {} } }),
      JSON.stringify({ custom_id: '1:a', response: { status_code: 200, body: { choices: 'no' } } }),
      JSON.stringify({
        custom_id: '1:b',
        response: { status_code: 200, body: { choices: [{ message: { content: 'ok' } }], usage: { prompt_tokens: -1 } } },
      }),
      JSON.stringify({ custom_id: '1:c', error: { code: 'x', message: 'refused' } }),
    ].join('\n');
    const asked = new Map([
      ['1:a', request],
      ['1:b', request],
      ['1:c', request],
    ]);
    const parsed = new BatchResults(asked, 'batch b1');
    for (const line of text.split('\n')) parsed.add(line);
    const { results } = parsed;
    expect(parsed.dropped()).toBe('batch b1: 3 result lines were dropped (1 not JSON, 2 without a string custom_id)');
    expect(results.has('other')).toBe(false);
    expect(results.get('1:a')).toEqual({ error: 'its response body is not a chat completion' });
    // usage that is not a count is estimated instead
    expect(results.get('1:b')).toMatchObject({ reply: { content: 'ok', usage: { completionTokens: 1 } } });
    expect(results.get('1:c')).toEqual({ error: 'x: refused' });
  });

  it('refuses results holding a call twice (a duplicated custom_id): no reply of the batch is used', () => {
    const line = JSON.stringify({ custom_id: '1:a', response: { status_code: 200, body: { choices: [{ message: { content: 'ok' } }] } } });
    const parsed = new BatchResults(new Map([['1:a', request]]), 'batch b2');
    parsed.add(line);
    expect(() => parsed.add(line)).toThrow(
      /^batch b2: its results hold the call 1:a twice \(a duplicated custom_id\); the batch is refused, none of its replies is used$/,
    );
  });

  it('reads a result file a line at a time, with a cap on a line and on the file', async () => {
    async function* chunks(...parts: string[]) {
      for (const p of parts) yield Buffer.from(p);
    }
    const lines: string[] = [];
    // lines split across chunks, a multi-byte character split between two, a last line without a line break
    const euro = Buffer.from('€');
    async function* split() {
      yield Buffer.from('{"a":1}\n{"b":"');
      yield euro.subarray(0, 1);
      yield Buffer.concat([euro.subarray(1), Buffer.from('"}\n\nlast')]);
    }
    await readLines(split(), (l) => lines.push(l), { what: 'f', partialLast: 'line' });
    expect(lines).toEqual(['{"a":1}', '{"b":"€"}', '', 'last']);
    const kept: string[] = [];
    await readLines(chunks('one\ntwo'), (l) => kept.push(l), { what: 'f', partialLast: 'ignore' });
    expect(kept).toEqual(['one']);
    await expect(
      readLines(chunks('short\n', 'x'.repeat(50), 'y'.repeat(50), '\n'), () => {}, {
        what: 'file f1',
        partialLast: 'line',
        maxLineBytes: 64,
      }),
    ).rejects.toThrow(/^file f1: line 2 is longer than 64 bytes; the result file is not read further$/);
    await expect(
      readLines(chunks('a\n'.repeat(40), 'b\n'.repeat(40)), () => {}, { what: 'file f2', partialLast: 'line', maxFileBytes: 100 }),
    ).rejects.toThrow(/^file f2 is larger than 100 bytes; the result file is not read further$/);
  });

  it('refuses a vllm batch of calls naming two models (vllm run-batch serves one)', async () => {
    const target = new VllmBatchTarget(mkdtempSync(join(dir, 'vllm-models-')));
    await expect(target.submit('', { state: 'feed', visit: 1, step: 1 }, ['a', 'b'])).rejects.toThrow(
      /serves one model, and the calls of state "feed" step 1 name 2 \(a, b\)/,
    );
  });
});
