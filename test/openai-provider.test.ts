// The openai provider (real `openai` client) against the local OpenAI-compatible test server.
import { afterEach, describe, expect, it } from 'vitest';
import { createProvider } from '../src/core/llm/factory.js';
import { MISSING_KEY_MESSAGE, OpenAiProvider, type OpenAiProviderOptions } from '../src/core/llm/openai.js';
import { RetryBudget, backoffDelay, parseRetryAfter, DEFAULT_RETRY_POLICY } from '../src/core/llm/retry.js';
import { LlmError, type ChatRequest } from '../src/core/llm/types.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { startOpenAiServer, type ChatRequestBody, type ServerOptions, type TestServer } from './helpers/openai-server.js';
import { scaled } from './helpers/time.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(serverOptions: ServerOptions = {}, providerOptions: Partial<OpenAiProviderOptions> = {}) {
  server = await startOpenAiServer(serverOptions);
  const retries: Array<{ attempt: number; delayMs: number; reason: string }> = [];
  const provider = new OpenAiProvider({
    apiKey: 'test-key',
    baseURL: server.url,
    timeoutMs: 5_000,
    retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 },
    onRetry: (r) => retries.push(r),
    ...providerOptions,
  });
  return { server, provider, retries };
}

const request = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Say hello' },
  ],
  model: 'test-model',
  temperature: 0.2,
  maxTokens: 50,
  meta: { purpose: 'agent', state: 's', agent: 'Ann', turn: 1 },
  ...over,
});

const chatBodies = (s: TestServer) => s.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as ChatRequestBody);

describe('openai provider', () => {
  it('returns a plain reply with the server usage, sending model, messages and settings', async () => {
    const { server, provider } = await setup({ reply: () => 'Hello there.' });
    const res = await provider.chat(request());
    expect(res.content).toBe('Hello there.');
    expect(res.model).toBe('test-model');
    const body = chatBodies(server)[0]!;
    expect(body).toMatchObject({ model: 'test-model', temperature: 0.2, max_tokens: 50 });
    expect(body.stream).toBeFalsy();
    expect(body.messages).toEqual(request().messages);
    expect(res.usage).toEqual({ promptTokens: JSON.stringify(body.messages).length >> 2, completionTokens: 'Hello there.'.length >> 2 });
    expect(server.requests[0]!.headers.authorization).toBe('Bearer test-key');
  });

  it('streams: deltas arrive in pieces, content is their concatenation, usage is collected', async () => {
    const text = 'A fairly long streamed answer, cut into several chunks by the server.';
    const { server, provider } = await setup({ reply: () => text });
    const deltas: string[] = [];
    const res = await provider.chat(request({ stream: true }), { onDelta: (d) => deltas.push(d) });
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe(text);
    expect(res.content).toBe(text);
    const body = chatBodies(server)[0]!;
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(res.usage).toEqual({ promptTokens: JSON.stringify(body.messages).length >> 2, completionTokens: text.length >> 2 });
  });

  it('retries a 429 (Retry-After: 0) and then succeeds', async () => {
    const { server, provider, retries } = await setup({
      reply: () => 'after the limit',
      fault: (i) => (i === 0 ? { kind: 'status', status: 429, headers: { 'retry-after': '0' } } : undefined),
    });
    const res = await provider.chat(request());
    expect(res.content).toBe('after the limit');
    expect(server.requests).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, delayMs: 0 });
    expect(retries[0]!.reason).toMatch(/HTTP 429/);
  });

  it('gives up on a 500 after the retries with a clear error naming the status', async () => {
    const { server, provider, retries } = await setup(
      { fault: () => ({ kind: 'status', status: 500 }) },
      { retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2 } },
    );
    const err = await provider.chat(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    const message = (err as LlmError).message;
    expect(message).toMatch(/HTTP 500/);
    expect(message).toMatch(/gave up after 3 attempts/);
    expect(message).not.toContain('\n');
    expect(server.requests).toHaveLength(3);
    expect(retries).toHaveLength(2);
  });

  it('does not retry a 400, and names it', async () => {
    const { server, provider } = await setup({
      fault: () => ({ kind: 'status', status: 400, body: { error: { message: 'bad model name' } } }),
    });
    const err = await provider.chat(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).message).toMatch(/HTTP 400.*bad model name/);
    expect((err as LlmError).status).toBe(400);
    expect(server.requests).toHaveLength(1);
  });

  it('explains a refused key (401) without retrying', async () => {
    const { server, provider } = await setup({ fault: () => ({ kind: 'status', status: 401 }) });
    await expect(provider.chat(request())).rejects.toThrow(/refused the API key.*OPENAI_API_KEY/);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a request that times out, then reports a clear timeout error', async () => {
    const { server, provider, retries } = await setup(
      { fault: () => ({ kind: 'hang' }) },
      // long enough for each attempt to reach the server on a loaded machine
      { timeoutMs: scaled(1000), retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 } },
    );
    const err = await provider.chat(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).message).toMatch(/timed out.*gave up after 2 attempts/);
    const s = `${scaled(1000) / 1000} s`;
    expect(retries.map((r) => r.reason)).toEqual([`request timed out: no answer from ${server.url} within ${s} (--timeout ${s})`]);
    expect(server.requests).toHaveLength(2);
  });

  it('recovers when only the first attempt times out', async () => {
    // the first attempt gets no answer at all; the second is answered at once, well within a
    // timeout long enough for a loaded machine
    const { provider, retries } = await setup(
      { reply: () => 'in time', fault: (i) => (i === 0 ? { kind: 'hang' } : undefined) },
      { timeoutMs: scaled(2_000) },
    );
    expect((await provider.chat(request())).content).toBe('in time');
    expect(retries).toHaveLength(1);
  });

  it('retries a reset connection', async () => {
    const { server, provider, retries } = await setup({ reply: () => 'back', fault: (i) => (i < 2 ? { kind: 'reset' } : undefined) });
    const res = await provider.chat(request({ stream: true }), { onDelta: () => {} });
    expect(res.content).toBe('back');
    expect(server.requests).toHaveLength(3);
    expect(retries.map((r) => r.reason)).toEqual([expect.stringMatching(/connection/i), expect.stringMatching(/connection/i)]);
  });

  it('names the server and the socket error when nothing listens', async () => {
    const { server, provider } = await setup({}, { retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    await server.close();
    const err = await provider.chat(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as Error).message).toContain(`connection to ${server.url}`);
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('stops when the run-wide retry budget is spent', async () => {
    const { provider } = await setup({ fault: () => ({ kind: 'status', status: 503 }) }, { budget: new RetryBudget(1) });
    await expect(provider.chat(request())).rejects.toThrow(/HTTP 503.*retry budget \(1\) is spent/);
  });

  it('drives a whole run: agent replies stream into messages, the judge ends the state', async () => {
    const { server, provider } = await setup({
      reply: (body) => (body.stream ? 'Ann: Good evening, everyone.' : '<end>1</end>'),
    });
    const sop = validateSopDocument(
      {
        name: 'hello',
        agents: { Ann: { roles: { s: 'Host' } }, Ben: { roles: { s: 'Guest' } } },
        root: 's',
        states: { s: { roles: ['Host', 'Guest'], next_states: { '0': 's', '1': 'end' } }, end: { final: true } },
      },
      'hello.sop.json',
    ).sop;
    const deltas: string[] = [];
    const result = await new Run({
      sop,
      file: 'hello',
      llm: provider,
      listeners: [
        (e) => {
          if (e.type === 'delta') deltas.push(e.text);
        },
      ],
    }).run();
    expect(result).toMatchObject({ status: 'finished', finalState: 'end', turns: 1 });
    expect(result.messages[0]!.content).toBe('Good evening, everyone.');
    expect(deltas.join('')).toBe('Ann: Good evening, everyone.');
    expect(result.usage.calls).toBe(2);
    expect(result.usage.prompt_tokens).toBeGreaterThan(0);
    expect(chatBodies(server).map((b) => Boolean(b.stream))).toEqual([true, false]);
  });
});

describe('missing key', () => {
  it('names the three ways to run', async () => {
    const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    delete process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_BASE_URL;
    try {
      expect(() => new OpenAiProvider({})).toThrow(LlmError);
      await expect(createProvider({ spec: 'openai' })).rejects.toThrow(MISSING_KEY_MESSAGE);
      for (const way of ['OPENAI_API_KEY', 'options.baseUrl', 'replay:']) expect(MISSING_KEY_MESSAGE).toContain(way);
      // A base URL alone is enough (local servers often need no key).
      expect(() => new OpenAiProvider({ baseURL: 'http://127.0.0.1:1/v1' })).not.toThrow();
    } finally {
      if (saved.key !== undefined) process.env.OPENAI_API_KEY = saved.key;
      if (saved.url !== undefined) process.env.OPENAI_BASE_URL = saved.url;
    }
  });
});

describe('retry helpers', () => {
  it('parses Retry-After seconds, HTTP dates and retry-after-ms', () => {
    const h = (o: Record<string, string>) => ({ get: (n: string) => o[n] ?? null });
    expect(parseRetryAfter(h({ 'retry-after': '0' }))).toBe(0);
    expect(parseRetryAfter(h({ 'retry-after': '2' }))).toBe(2000);
    expect(parseRetryAfter(h({ 'retry-after-ms': '150', 'retry-after': '9' }))).toBe(150);
    const now = Date.parse('2024-01-01T00:00:00Z');
    expect(parseRetryAfter(h({ 'retry-after': 'Mon, 01 Jan 2024 00:00:03 GMT' }), now)).toBe(3000);
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(h({}))).toBeUndefined();
  });

  it('backs off exponentially with jitter, capped, and honours the server wait', () => {
    const p = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(0, p, undefined, () => 0)).toBe(50);
    expect(backoffDelay(0, p, undefined, () => 1)).toBe(100);
    expect(backoffDelay(2, p, undefined, () => 1)).toBe(400);
    expect(backoffDelay(10, p, undefined, () => 1)).toBe(1000);
    expect(backoffDelay(3, p, 0)).toBe(0);
    expect(backoffDelay(3, p, 10 * 60_000)).toBe(60_000);
  });
});
