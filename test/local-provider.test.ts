// The local provider (src/core/llm/local.ts) on a real model, SmolLM2-135M-Instruct Q4_1 (issue 28):
// the model's own chat template, token counts from its tokenizer, streaming, max tokens, the seed,
// abort, calls at once on several context sequences, and command replies under a JSON-schema
// grammar. The model tests skip, saying why, without the model or node-llama-cpp.
import { createReadStream, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createProvider } from '../src/core/llm/factory.js';
import { LocalProvider, closeLocalModels } from '../src/core/llm/local.js';
import { missingNodeLlamaCpp, localSettings, type LocalSettings } from '../src/core/llm/local-runtime.js';
import type { CallMeta, ChatRequest, ToolSpec } from '../src/core/llm/types.js';
import { parseCommandReply } from '../src/core/llm/command-reply.js';
import { runSop } from '../src/index.js';
import { TEST_MODEL, noteSkip } from './helpers/local-model.js';

const missing = noteSkip('local provider with the test model');
const tmp = mkdtempSync(join(tmpdir(), 'sop-local-'));
// a timed-out test's generations stop, and the models are freed, before this file's worker goes
afterAll(closeLocalModels);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const settings: LocalSettings = { ...localSettings({}), threads: 1, sequences: 2, maxTokens: 32, modelsDir: tmp };
const meta = (over: Partial<CallMeta> = {}): CallMeta => ({ purpose: 'agent', state: 's', agent: 'Ada', turn: 1, ...over });
const request = (user: string, over: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'ignored',
  messages: [
    { role: 'system', content: 'You are Ada, a calm debater.' },
    { role: 'user', content: user },
  ],
  temperature: 0.8,
  maxTokens: 24,
  meta: meta(),
  ...over,
});

describe('the local provider without its parts', () => {
  it('without node-llama-cpp, one line says how to add it', async () => {
    const importer = () =>
      Promise.reject(Object.assign(new Error("Cannot find package 'node-llama-cpp'"), { code: 'ERR_MODULE_NOT_FOUND' }));
    await expect(LocalProvider.create({ model: TEST_MODEL, settings, importer })).rejects.toThrow(missingNodeLlamaCpp());
    // in the clone: the command that adds it here (test/optional-package.test.ts: beside a global install)
    expect(missingNodeLlamaCpp()).toMatch(/^[^\n]+; add it with: npm install -E node-llama-cpp@3\.21\.1$/);
  });

  it('a model file that is not there, and local: without one, are one line each', async () => {
    await expect(createProvider({ spec: 'local:' })).rejects.toThrow(
      'options.llm local:MODEL needs a .gguf file or hf:USER/REPO/FILE.gguf',
    );
    await expect(createProvider({ spec: `local:${join(tmp, 'nope.gguf')}` })).rejects.toThrow(
      `--llm local:${join(tmp, 'nope.gguf')}: no model file`,
    );
  });
});

/** A server that answers as Hugging Face does for one file: /USER/REPO/resolve/main/FILE (ranges too), 404 for the rest. */
async function hfServer(path: string, file: string): Promise<{ url: string; requests: string[]; close: () => Promise<void> }> {
  const size = statSync(file).size;
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (!req.url?.startsWith(path)) return void res.writeHead(404).end('Not Found');
    const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    const [a, b] = range ? [Number(range[1]), range[2] ? Number(range[2]) : size - 1] : [0, size - 1];
    res.writeHead(range ? 206 : 200, {
      'content-length': b - a + 1,
      'accept-ranges': 'bytes',
      'content-type': 'application/octet-stream',
      ...(range ? { 'content-range': `bytes ${a}-${b}/${size}` } : {}),
    });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file, { start: a, end: b }).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, requests, close: () => new Promise((r) => server.close(() => r())) };
}

describe.skipIf(missing !== undefined)('local:hf: models', () => {
  it("are downloaded once through node-llama-cpp's resolver, then read from the models folder", async () => {
    const hf = await hfServer('/someone/tiny-GGUF/resolve/main/tiny.Q4_1.gguf', TEST_MODEL);
    try {
      const dir = mkdtempSync(join(tmp, 'models-'));
      const s = { ...settings, modelsDir: dir, hfEndpoint: hf.url };
      const said: string[] = [];
      const p = await LocalProvider.create({ model: 'hf:someone/tiny-GGUF/tiny.Q4_1.gguf', settings: s, onWarning: (m) => said.push(m) });
      expect(said).toEqual([`downloading hf:someone/tiny-GGUF/tiny.Q4_1.gguf to ${dir} (node-llama-cpp's resolver)`]);
      expect(readdirSync(dir)).toEqual(['hf_someone_tiny.Q4_1.gguf']);
      expect((await p.chat(request('Say hi.'))).content.trim()).not.toBe('');
      // the second time (a SOP's own hf: model too) it comes from the folder, with no request
      const before = hf.requests.length;
      const sop = await LocalProvider.create({ settings: s, preload: 'hf:someone/tiny-GGUF/tiny.Q4_1.gguf' });
      expect((await sop.chat(request('Say hi.', { model: 'hf:someone/tiny-GGUF/tiny.Q4_1.gguf' }))).content.trim()).not.toBe('');
      expect(hf.requests.length).toBe(before);
      // a file the server does not have: one line
      await expect(LocalProvider.create({ model: 'hf:someone/tiny-GGUF/other.gguf', settings: s })).rejects.toThrow(
        /^--llm local:hf:someone\/tiny-GGUF\/other\.gguf: cannot download it from http:\/\/127\.0\.0\.1:\d+\/ \(.*404.*\); give a \.gguf file you have: --llm local:PATH$/,
      );
    } finally {
      await hf.close();
    }
  }, 120_000);

  it('offline, a download is refused with one line; a SOP never downloads', async () => {
    const gone = await hfServer('/', TEST_MODEL);
    await gone.close(); // its port is closed now
    const off = { ...settings, hfEndpoint: gone.url };
    const uri = 'hf:someone/some-model-GGUF/model.Q4_0.gguf';
    const err = await LocalProvider.create({ model: uri, settings: off }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(
      /^--llm local:hf:someone\/some-model-GGUF\/model\.Q4_0\.gguf: cannot download it: http:\/\/127\.0\.0\.1:\d+\/ does not answer \(.+\); offline, give a \.gguf file you have: --llm local:PATH$/,
    );
    expect((err as Error).message).not.toContain('\n');
    const p = await LocalProvider.create({ settings: off });
    await expect(p.chat(request('hi', { model: uri }))).rejects.toThrow(
      `the SOP's local model ${uri} is not in ${tmp}; a SOP never downloads a model: fetch it once with --llm local:${uri}`,
    );
  }, 60_000);
});

describe.skipIf(missing !== undefined)('the local provider on SmolLM2-135M-Instruct', () => {
  const make = (seed = 7) => LocalProvider.create({ model: TEST_MODEL, settings, seed });

  it("answers through the model's chat template, with its tokenizer's counts", async () => {
    const p = await make();
    const req = request('In one sentence: should cities ban cars?');
    const res = await p.chat(req);
    expect(res.content.trim()).not.toBe('');
    expect(res.model).toBe('SmolLM2-135M-Instruct.Q4_1.gguf');
    expect(res.usage.completionTokens).toBeGreaterThan(0);
    expect(res.usage.completionTokens).toBeLessThanOrEqual(24);
    // the prompt as the model's own template (ChatML) lays it out, counted by its own tokenizer
    const nlc = await import('node-llama-cpp');
    const llama = await nlc.getLlama({ build: 'never', gpu: false, maxThreads: 1, logLevel: nlc.LlamaLogLevel.error, progressLogs: false });
    const vocab = await llama.loadModel({ modelPath: TEST_MODEL, vocabOnly: true });
    const text =
      '<|im_start|>system\nYou are Ada, a calm debater.<|im_end|>\n<|im_start|>user\nIn one sentence: should cities ban cars?<|im_end|>\n<|im_start|>assistant\n';
    expect(res.usage.promptTokens).toBe(vocab.tokenize(text, true).length);
    expect(res.usage.completionTokens).toBe(vocab.tokenize(res.content, false).length);
    await vocab.dispose();
  }, 120_000);

  it('a prompt longer than the context is one line', async () => {
    const p = await LocalProvider.create({ model: TEST_MODEL, settings: { ...settings, contextSize: 256 } });
    await expect(p.chat(request('word '.repeat(400)))).rejects.toThrow(
      /^the prompt of the agent call in state "s" has \d+ tokens, more than the 256 of the local model's context: set SOP_LOCAL_CONTEXT higher/,
    );
  }, 120_000);

  it('streams, and the deltas are the reply', async () => {
    const p = await make();
    const deltas: string[] = [];
    const res = await p.chat(request('Name two fruits.', { stream: true }), { onDelta: (t) => deltas.push(t) });
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(res.content);
  }, 120_000);

  it('the same seed gives the same reply; another seed another one', async () => {
    const req = request('Tell me something about the sea.', { temperature: 1 });
    const a = await (await make(7)).chat(req);
    const b = await (await make(7)).chat(req);
    const c = await (await make(8)).chat(req);
    expect(b.content).toBe(a.content);
    expect(c.content).not.toBe(a.content);
  }, 120_000);

  it('an aborted call ends at once, and the provider answers the next one', async () => {
    const p = await make();
    const stop = new AbortController();
    const reason = new Error('stopped');
    const call = p.chat(request('Count from one to fifty.', { stream: true, maxTokens: 400 }), {
      signal: stop.signal,
      onDelta: () => stop.abort(reason),
    });
    await expect(call).rejects.toBe(reason); // not aborted, it would answer its 400 tokens
    const next = await p.chat(request('Say yes.'));
    expect(next.content.trim()).not.toBe('');
  }, 120_000);

  it('calls run at once on the context sequences, and more wait for a free one', async () => {
    const p = await make();
    const order: string[] = [];
    const calls = ['A', 'B', 'C'].map((id, i) =>
      p.chat(request(`Count from ${i + 1} to ${i + 30}, in words.`, { stream: true, maxTokens: 24, meta: meta({ turn: i + 1 }) }), {
        onDelta: () => void order.push(id),
      }),
    );
    const replies = await Promise.all(calls);
    for (const r of replies) expect(r.usage.completionTokens).toBeGreaterThan(0);
    // A and B (two sequences) are generated together, token by token; C waits for one of them
    expect(order.indexOf('B')).toBeLessThan(order.lastIndexOf('A'));
    expect(order.indexOf('A')).toBeLessThan(order.lastIndexOf('B'));
    expect(order.indexOf('C')).toBeGreaterThan(Math.min(order.lastIndexOf('A'), order.lastIndexOf('B')));
  }, 120_000);

  it('a call that must answer with a command is generated under its grammar: every reply parses, with its arguments', async () => {
    const tools: ToolSpec[] = [
      {
        name: 'notes__search_notes',
        description: 'Search the notes.',
        parameters: {
          type: 'object',
          properties: { query: { type: 'string', minLength: 1 } },
          required: ['query'],
          additionalProperties: false,
        },
      },
      {
        name: 'finish',
        description: 'Report and stop.',
        parameters: {
          type: 'object',
          properties: { result: { type: 'string' }, summary: { type: 'string' } },
          required: ['result'],
          additionalProperties: false,
        },
      },
    ];
    const p = await make();
    let cut = 0;
    for (let turn = 1; turn <= 4; turn++) {
      const res = await p.chat(
        request('Search the notebook for notes on sleep, then finish. Answer with one command as JSON.', {
          maxTokens: turn === 4 ? 12 : 64, // the last one is cut short: its JSON is closed
          meta: meta({ turn, tools, commands: [] }),
        }),
      );
      const parsed = parseCommandReply(res.content);
      expect(parsed.ok, res.content).toBe(true);
      cut += res.finishReason === 'length' ? 1 : 0;
      if (!parsed.ok) continue;
      if (res.finishReason === 'length') {
        // cut short, and closed where it was cut: it parses, and the run tells the model what is missing
        expect(['notes__search_notes', 'finish'].some((n) => n.startsWith(parsed.command))).toBe(true);
        continue;
      }
      expect(['notes__search_notes', 'finish']).toContain(parsed.command);
      for (const [k, v] of Object.entries(parsed.args)) {
        expect(['query', 'result', 'summary']).toContain(k);
        expect(typeof v).toBe('string');
      }
    }
    expect(cut).toBeGreaterThan(0);
  }, 180_000);
});

describe.skipIf(missing !== undefined)('a SOP whose llm.provider is local', () => {
  it("runs on the model its llm.model names, relative to the SOP's folder, with its max_tokens", async () => {
    const dir = mkdtempSync(join(tmp, 'sop-'));
    const sop = {
      name: 'local-hello',
      llm: { provider: 'local', model: relative(dir, TEST_MODEL), max_tokens: 16, temperature: 0.5 },
      agents: { Ada: { roles: { talk: 'Speaker' } } },
      root: 'talk',
      states: {
        talk: {
          environment_prompt: 'A short greeting.',
          roles: ['Speaker'],
          components: { Speaker: { task: 'Greet the audience in one sentence.' } },
          next_states: { '0': 'end' },
        },
        end: { final: true },
      },
    };
    const file = join(dir, 'hello.sop.json');
    writeFileSync(file, JSON.stringify(sop));
    const prev = { ...process.env };
    Object.assign(process.env, { SOP_LOCAL_THREADS: '1', SOP_LOCAL_SEQUENCES: '2' });
    try {
      const handle = runSop(file, { seed: 3 });
      const result = await handle.result;
      expect(result.status).toBe('finished');
      expect(result.messages).toHaveLength(1);
      expect(result.messages[0]!.content.trim()).not.toBe('');
      expect(result.usage.completion_tokens).toBeLessThanOrEqual(16);
      expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    } finally {
      process.env = prev;
    }
  }, 120_000);
});
