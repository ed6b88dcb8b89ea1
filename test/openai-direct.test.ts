// The openai provider's direct path for calls that do not stream (src/core/llm/direct-chat.ts), against
// OpenAI-compatible servers on 127.0.0.1. Every answer and fault is run twice, through the direct
// path and through the openai client's fetch, and must come out the same: reply, usage, error
// class and message, retries and their waits, warnings, requests sent. Then what only the direct
// path does: the client's headers, connections kept alive, the adaptive gate's view, Ctrl-C,
// compressed answers and redirects.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallGate, CallObservation } from '../src/core/llm/adaptive-limit.js';
import { InterruptibleProvider, LlmInterruptedError } from '../src/core/llm/interruptible.js';
import { OpenAiProvider, type OpenAiProviderOptions } from '../src/core/llm/openai.js';
import type { ChatRequest } from '../src/core/llm/types.js';
import { startOpenAiServer, type ChatRequestBody, type ServerOptions, type TestServer } from './helpers/openai-server.js';
import { scaled } from './helpers/time.js';

const servers: Array<Pick<TestServer, 'close'>> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(o: ServerOptions): Promise<TestServer> {
  const s = await startOpenAiServer(o);
  servers.push(s);
  return s;
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

function provider(url: string, direct: boolean, over: Partial<OpenAiProviderOptions> = {}) {
  const retries: Array<{ attempt: number; delayMs: number; reason: string }> = [];
  const warnings: string[] = [];
  const p = new OpenAiProvider({
    apiKey: 'test-key',
    baseURL: url,
    timeoutMs: 5_000,
    direct,
    retry: { maxRetries: 2, baseDelayMs: 0, maxDelayMs: 0 }, // waits only where the server asks for one
    onRetry: (r) => retries.push(r),
    onWarning: (w) => warnings.push(w),
    ...over,
  });
  return { p, retries, warnings };
}

interface Case {
  name: string;
  server: ServerOptions;
  options?: Partial<OpenAiProviderOptions>;
  request?: Partial<ChatRequest>;
  /** No server listens. */
  closed?: boolean;
  /** What the direct path's outcome must show (so the comparison is not of two empty outcomes). */
  expect: RegExp;
}

/** One call's outcome, with the server's address replaced by URL. */
async function outcome(c: Case, direct: boolean) {
  const s = await serve(c.server);
  if (c.closed) await s.close();
  const { p, retries, warnings } = provider(s.url, direct, c.options);
  const plain = (text: string) =>
    text
      .split(s.url)
      .join('URL')
      .replace(/127\.0\.0\.1:\d+/g, 'HOST');
  const out: Record<string, unknown> = {};
  try {
    const res = await p.chat(request(c.request));
    Object.assign(out, { content: res.content, usage: res.usage, model: res.model, finish: res.finishReason });
  } catch (err) {
    const e = err as Error & { status?: number; resumable?: boolean };
    Object.assign(out, { error: e.name, message: plain(e.message), status: e.status, resumable: e.resumable });
  }
  out.retries = retries.map((r) => ({ ...r, reason: plain(r.reason) }));
  out.warnings = warnings.map(plain);
  out.sent = c.closed ? [] : s.requests.map((r) => r.body);
  return out;
}

const FULL = 'The whole reply.';
const first =
  <T>(fault: T) =>
  (i: number) =>
    i === 0 ? fault : undefined;

const cases: Case[] = [
  {
    name: 'a reply with usage and cached tokens',
    server: { reply: () => FULL, usage: () => ({ prompt_tokens: 1200, completion_tokens: 4, cached_tokens: 1024 }) },
    expect: /"cachedTokens":1024/,
  },
  {
    name: '400 naming the model',
    server: { fault: () => ({ kind: 'status', status: 400, body: { error: { message: 'bad model name', param: 'model' } } }) },
    expect: /HTTP 400: bad model name/,
  },
  { name: '401', server: { fault: () => ({ kind: 'status', status: 401 }) }, expect: /refused the API key/ },
  { name: '404', server: { fault: () => ({ kind: 'status', status: 404 }) }, expect: /HTTP 404: injected 404/ },
  {
    name: '429 with Retry-After, then the reply',
    server: { reply: () => FULL, fault: first({ kind: 'status', status: 429, headers: { 'retry-after': '0.05' } }) },
    expect: /"delayMs":50,"reason":"HTTP 429: injected 429"/,
  },
  {
    name: '429 with retry-after-ms, then the reply',
    server: { reply: () => FULL, fault: first({ kind: 'status', status: 429, headers: { 'retry-after-ms': '20' } }) },
    expect: /"delayMs":20/,
  },
  { name: '500 on every attempt', server: { fault: () => ({ kind: 'status', status: 500 }) }, expect: /HTTP 500.*gave up after 3/ },
  {
    name: '503 whose body is not an error object',
    server: { fault: () => ({ kind: 'status', status: 503, body: 'upstream busy' }) },
    expect: /HTTP 503: status code \(no body\)/,
  },
  {
    name: 'a reset before the answer, then the reply',
    server: { reply: () => FULL, fault: first({ kind: 'reset' }) },
    expect: /connection to URL failed \(UND_ERR_SOCKET: other side closed\)/,
  },
  {
    name: 'a body torn by a reset, then the reply',
    server: { reply: () => FULL, fault: first({ kind: 'tear', reset: true }) },
    expect: /broke in the middle of the answer \(UND_ERR_SOCKET/,
  },
  { name: 'a body cut short', server: { reply: () => FULL, fault: first({ kind: 'tear' }) }, expect: /malformed JSON/ },
  {
    name: 'malformed JSON on every attempt',
    server: { fault: () => ({ kind: 'body', body: '{"choices": [' }) },
    expect: /malformed JSON \(.*\); gave up after 3 attempts/,
  },
  { name: 'an empty 200 body', server: { reply: () => FULL, fault: first({ kind: 'body', body: '' }) }, expect: /malformed JSON/ },
  {
    name: 'HTML with 200',
    server: { reply: () => FULL, fault: first({ kind: 'body', body: '<html>busy</html>', contentType: 'text/html' }) },
    expect: /text that is not JSON/,
  },
  {
    name: 'JSON without choices',
    server: { reply: () => FULL, fault: first({ kind: 'body', body: '{"id":"x"}' }) },
    expect: /JSON without \\"choices\\"/,
  },
  {
    name: 'no answer within --timeout',
    server: { reply: () => FULL, fault: () => ({ kind: 'hang' }) },
    // (long enough for each attempt to reach the server on a loaded machine: both paths then send 2)
    options: { timeoutMs: scaled(1000), retry: { maxRetries: 1, baseDelayMs: 0, maxDelayMs: 0 } },
    expect: /request timed out: no answer from URL within [\d.]+ s \(--timeout [\d.]+ s\); gave up after 2 attempts/,
  },
  {
    name: 'a body that stops half-way',
    server: { reply: () => FULL, fault: first({ kind: 'stall' }) },
    options: { timeoutMs: scaled(1000) }, // the retry, answered at once, well within it on a loaded machine
    expect: /URL did not send its whole answer within [\d.]+ s \(--timeout [\d.]+ s\)/,
  },
  {
    name: 'nothing listens',
    server: {},
    closed: true,
    options: { retry: { maxRetries: 1, baseDelayMs: 0, maxDelayMs: 0 } },
    expect: /connection to URL failed \(connect ECONNREFUSED HOST\)/,
  },
  {
    name: 'tool calls',
    server: { toolCalls: () => [{ name: 'like', arguments: '{"post_id":"p1"}' }] },
    request: {
      meta: {
        purpose: 'agent',
        state: 's',
        agent: 'Ann',
        turn: 1,
        tools: [{ name: 'like', description: 'Like a post.', parameters: { type: 'object' } }],
      },
    },
    expect: /"content":"\{\\"command\\":\\"like\\",\\"command_args\\":\{\\"post_id\\":\\"p1\\"\}\}"/,
  },
  {
    name: 'cut at max tokens',
    server: { reply: () => FULL, fault: () => ({ kind: 'finish', reason: 'length' }) },
    expect: /cut at max tokens/,
  },
  {
    name: 'a reasoning model refusing max_tokens',
    server: {
      reply: () => FULL,
      fault: (_i, body) =>
        (body as ChatRequestBody).max_tokens !== undefined
          ? {
              kind: 'status',
              status: 400,
              body: { error: { message: "Unsupported parameter: 'max_tokens'; use 'max_completion_tokens'", param: 'max_tokens' } },
            }
          : undefined,
    },
    expect: /"max_completion_tokens":50/,
  },
  {
    name: 'a reply over the size cap',
    server: { reply: () => 'x'.repeat(5_000) },
    options: { maxReplyBytes: 2_000 },
    expect: /larger than the cap of 2000 bytes/,
  },
];

describe('the direct path answers as the openai client does', () => {
  it.each(cases)('$name', async (c) => {
    const direct = await outcome(c, true);
    expect(JSON.stringify(direct)).toMatch(c.expect);
    expect(direct).toEqual(await outcome(c, false));
  });
});

describe('the direct path', () => {
  it("sends the client's headers and body: key, organization, project, user agent", async () => {
    const env = { org: process.env.OPENAI_ORG_ID, project: process.env.OPENAI_PROJECT_ID };
    process.env.OPENAI_ORG_ID = 'org-test';
    process.env.OPENAI_PROJECT_ID = 'proj-test';
    try {
      const s = await serve({ reply: () => FULL });
      for (const direct of [true, false]) await provider(s.url, direct).p.chat(request());
      const [viaDirect, viaClient] = s.requests;
      const ours = (h: IncomingMessage['headers']) =>
        Object.fromEntries(
          Object.entries(h).filter(([k]) => /^(authorization|openai-|user-agent|accept$|content-type|x-stainless-)/.test(k)),
        );
      expect(ours(viaDirect!.headers)).toMatchObject({
        authorization: 'Bearer test-key',
        'openai-organization': 'org-test',
        'openai-project': 'proj-test',
        'user-agent': expect.stringMatching(/^OpenAI\/JS /),
        'content-type': 'application/json',
      });
      expect(ours(viaDirect!.headers)).toEqual(ours(viaClient!.headers));
      expect(viaDirect!.headers['accept-encoding']).toBe(viaClient!.headers['accept-encoding']);
      expect(viaDirect!.body).toEqual(viaClient!.body);
      expect(viaDirect!.path).toBe(viaClient!.path);
    } finally {
      for (const [k, v] of [
        ['OPENAI_ORG_ID', env.org],
        ['OPENAI_PROJECT_ID', env.project],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });

  it('keeps connections alive: a call made as another ends takes its connection', async () => {
    const s = await serve({ reply: () => FULL });
    const { p } = provider(s.url, true);
    for (let i = 0; i < 10; i++) await p.chat(request());
    expect(s.connections).toBe(1);
    // two waves of 20 at once: the second reuses the first's connections (undici frees a
    // connection a turn of the event loop after its answer; the next call waits for that turn)
    const wave = () => Promise.all(Array.from({ length: 20 }, () => p.chat(request())));
    await wave();
    const afterFirst = s.connections;
    await Promise.all(Array.from({ length: 20 }, () => p.chat(request()).then(() => p.chat(request()))));
    expect(s.requests).toHaveLength(70);
    expect(s.connections - afterFirst).toBeLessThanOrEqual(1);
  });

  it("shows the adaptive gate every answer and connection failure, as the client's fetch does", async () => {
    const seen: Record<string, Array<[number, string | null | undefined, string | null | undefined]>> = {};
    for (const direct of [true, false]) {
      const s = await serve({
        reply: () => FULL,
        fault: (i) =>
          i === 0
            ? { kind: 'status', status: 429, headers: { 'retry-after': '0', 'x-ratelimit-remaining-requests': '0' } }
            : i === 1
              ? { kind: 'reset' }
              : undefined,
      });
      const observed: CallObservation[] = [];
      const gate: CallGate = { run: (fn) => fn(), observe: (o) => observed.push(o) };
      expect((await provider(s.url, direct, { gate }).p.chat(request())).content).toBe(FULL);
      expect(observed.every((o) => o.sentAt <= o.at && o.at - o.sentAt < 5_000)).toBe(true);
      seen[String(direct)] = observed.map((o) => [
        o.status,
        o.headers?.get('X-RateLimit-Remaining-Requests'),
        o.headers?.get('retry-after'),
      ]);
    }
    expect(seen.true).toEqual([
      [429, '0', '0'],
      [0, undefined, undefined],
      [200, null, null],
    ]);
    expect(seen.true).toEqual(seen.false);
  });

  it('Ctrl-C ends a call the server is sitting on at once, as a resumable interruption', async () => {
    let arrived = 0;
    // the server never answers and the calls' own timeout is far off: only the abort can end them
    // (without it, the test's timeout fails the test)
    const s = await serve({ reply: () => FULL, fault: () => ({ kind: 'hang' }), onRequest: () => arrived++ });
    const stop = new AbortController();
    const llm = new InterruptibleProvider(provider(s.url, true, { timeoutMs: 3_600_000 }).p, stop.signal);
    const calls = Array.from({ length: 5 }, () => llm.chat(request()).catch((e: unknown) => e));
    while (arrived < 5) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    const errors = await Promise.all(calls);
    expect(errors.every((e) => e instanceof LlmInterruptedError)).toBe(true);
  });
});

/** A server answering every chat request with `answer` (its own status, headers and body). */
async function rawServer(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push({
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

const completion = (content: string) =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  });

describe('answers only a real server sends', () => {
  it('a gzip-compressed answer is decoded, as fetch decodes it', async () => {
    let asked: string | undefined;
    const url = await rawServer((req, res) => {
      asked = req.headers['accept-encoding'];
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(completion('from a gzip body')));
    });
    expect((await provider(url, true).p.chat(request())).content).toBe('from a gzip body');
    expect(asked).toBe('gzip, deflate');
  });

  it('a compressed answer that inflates past the cap is refused', async () => {
    const url = await rawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(completion('z'.repeat(200_000))));
    });
    await expect(provider(url, true, { maxReplyBytes: 1_000 }).p.chat(request())).rejects.toThrow(/larger than the cap of 1000 bytes/);
  });

  it('a redirect is followed through the openai client, for this call and the next', async () => {
    const paths: string[] = [];
    const url = await rawServer((req, res) => {
      paths.push(req.url ?? '');
      if (req.url === '/v1/chat/completions') {
        res.writeHead(307, { location: '/v2/chat/completions' });
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(completion('moved'));
      }
    });
    const { p } = provider(url, true);
    expect((await p.chat(request())).content).toBe('moved');
    expect((await p.chat(request())).content).toBe('moved');
    // the direct request, then the client's request and its redirected one, twice over less the direct one
    expect(paths).toEqual([
      '/v1/chat/completions',
      '/v1/chat/completions',
      '/v2/chat/completions',
      '/v1/chat/completions',
      '/v2/chat/completions',
    ]);
  });
});
