// An OpenAI-compatible HTTP server for tests, on 127.0.0.1 and a free port. It answers
// /v1/chat/completions (plain and streamed) and /v1/embeddings, records every request, and
// can be scripted with replies and faults (HTTP errors with headers, connection resets,
// delays past the client's timeout, answers that stall or are torn off mid-way, malformed
// bodies, a plain JSON answer to a streamed request, finish reasons).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: unknown }
  | { kind: 'reset' }
  | { kind: 'delay'; ms: number }
  /** No answer at all until the client hangs up (its timeout or abort): a server that never answers, whatever the machine's speed. */
  | { kind: 'hang' }
  /** Headers and the start of the answer (one SSE chunk of `text`, or half the JSON body), then silence. */
  | { kind: 'stall'; text?: string }
  /** The start of the answer (SSE chunks of `text`, or half the JSON body), then the answer ends (or, with `reset`, the connection breaks). */
  | { kind: 'tear'; text?: string; reset?: boolean }
  /** A 200 answer with this raw body (malformed JSON, an SSE stream of garbage, ...). */
  | { kind: 'body'; body: string; contentType?: string }
  /** A streamed request answered with one plain JSON chat completion. */
  | { kind: 'json-for-stream' }
  /** The answer, with this finish_reason. */
  | { kind: 'finish'; reason: string }
  /**
   * Headers, then only `: keep-alive` SSE comments (or, with `empty`, chunks whose delta is empty)
   * every `everyMs`, never any content, until the client hangs up.
   */
  | { kind: 'keep-alive'; everyMs: number; empty?: boolean }
  /**
   * The whole answer (streamed or plain), fed `unit` at a time every `everyMs`: a byte of the
   * body, or (streams) one SSE chunk of one character of the reply.
   */
  | { kind: 'drip'; everyMs: number; unit: 'byte' | 'char' };

/** Whether an assistant turn of the request called `command`: as a tool call, or as JSON command text. */
export function calledCommand(body: ChatRequestBody, command: string): boolean {
  return body.messages.some(
    (m) => m.role === 'assistant' && (m.tool_calls?.some((c) => c.function.name === command) || (m.content ?? '').includes(command)),
  );
}

/** Whether a message the model was shown (a user message or a tool result) holds `text`. */
export function shownText(body: ChatRequestBody, text: string): boolean {
  return body.messages.some((m) => (m.role === 'user' || m.role === 'tool') && (m.content ?? '').includes(text));
}

/** The names of the tools the request offers, and, as text, its system prompt: what a model is told it can call. */
export function offered(body: ChatRequestBody): string {
  return [...(body.tools ?? []).map((t) => t.function.name), body.messages[0]?.content ?? ''].join('\n');
}

export interface ChatRequestBody {
  model: string;
  /** Assistant turns with tool calls have content null; results of tool calls are role "tool" (src/core/llm/openai.ts). */
  messages: Array<{
    role: string;
    content: string | null;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  temperature?: number;
  max_tokens?: number;
  [k: string]: unknown;
}

export interface ServerOptions {
  /** Reply to a chat request (default: echoes the last user message's first 40 characters). */
  reply?: (body: ChatRequestBody, index: number) => string;
  /** Answer with function tool calls instead of text (when it returns some). */
  toolCalls?: (body: ChatRequestBody, index: number) => Array<{ name: string; arguments: string }> | undefined;
  /** Fault for the n-th request (0-based, counting every request), or undefined to answer. */
  fault?: (index: number, body: unknown) => Fault | undefined;
  /** Delay before every answer. */
  latencyMs?: number;
  /** How long an idle keep-alive connection stays open (Node's default: 5 s). */
  keepAliveTimeoutMs?: number;
  /** Called when a request has arrived (a readiness signal for tests). */
  onRequest?: (index: number, body: unknown) => void;
  /** Usage numbers to report for a chat request (default: derived from the request and reply lengths). */
  usage?: (
    body: ChatRequestBody,
    index: number,
  ) => { prompt_tokens: number; completion_tokens: number; cached_tokens?: number } | undefined;
  /** Embedding dimension for /v1/embeddings (deterministic hashed vectors). */
  embeddingDim?: number;
  /**
   * A concurrency limit, as a rate-limited provider has: a request that arrives while `limit`
   * others are in flight is answered 429 with `retry-after-ms` (and `retry-after`), and
   * `x-ratelimit-*-requests` headers (remaining 0, reset in `retryAfterMs`); answers within the
   * limit carry the remaining count.
   */
  maxInFlight?: { limit: number; retryAfterMs: number };
}

export interface TestServer {
  url: string; // base URL, ending in /v1
  requests: Array<{ path: string; body: unknown; headers: IncomingMessage['headers'] }>;
  /** With `maxInFlight`: the most requests in flight at once, and how many were answered 429. */
  peakInFlight: number;
  rejected: number;
  /** TCP connections accepted so far (keep-alive reuse keeps it low). */
  readonly connections: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Deterministic embedding of a text: hashed character trigrams, L2-normalised. */
export function fakeEmbedding(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  const t = ` ${text.toLowerCase()} `;
  for (let i = 0; i + 3 <= t.length; i++) {
    let h = 2166136261;
    for (let j = i; j < i + 3; j++) h = Math.imul(h ^ t.charCodeAt(j), 16777619);
    v[(h >>> 0) % dim]! += 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** Write `next(0)`, `next(1)`, ... every `everyMs` until it returns undefined (then end) or the client goes. */
function trickle(res: ServerResponse, next: (n: number) => string | undefined, everyMs: number): void {
  let n = 0;
  const tick = () => {
    if (res.destroyed) return;
    const piece = next(n++);
    if (piece === undefined) {
      res.end();
      return;
    }
    res.write(piece);
    timer = setTimeout(tick, everyMs);
  };
  let timer = setTimeout(tick, 0);
  res.on('close', () => clearTimeout(timer));
}

export async function startOpenAiServer(options: ServerOptions = {}): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  let chatIndex = 0;
  let inFlight = 0;
  const stats = { peakInFlight: 0, rejected: 0 };
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      body = raw;
    }
    const index = requests.length;
    requests.push({ path: req.url ?? '', body, headers: req.headers });
    options.onRequest?.(index, body);
    const cap = options.maxInFlight;
    if (cap) {
      if (inFlight >= cap.limit) {
        stats.rejected++;
        const limitHeaders = { 'x-ratelimit-limit-requests': String(cap.limit), 'x-ratelimit-remaining-requests': '0' };
        json(
          res,
          429,
          { error: { message: 'Rate limit reached: too many requests in flight', type: 'requests' } },
          {
            ...limitHeaders,
            'x-ratelimit-reset-requests': `${cap.retryAfterMs}ms`,
            'retry-after-ms': String(cap.retryAfterMs),
            'retry-after': String(Math.ceil(cap.retryAfterMs / 1000)),
          },
        );
        return;
      }
      inFlight++;
      stats.peakInFlight = Math.max(stats.peakInFlight, inFlight);
      res.on('close', () => inFlight--);
      const setHeader = res.setHeader.bind(res);
      setHeader('x-ratelimit-limit-requests', String(cap.limit));
      setHeader('x-ratelimit-remaining-requests', String(cap.limit - inFlight));
      setHeader('x-ratelimit-reset-requests', `${cap.retryAfterMs}ms`);
    }
    const fault = options.fault?.(index, body);
    if (fault?.kind === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault?.kind === 'body') {
      res.writeHead(200, { 'content-type': fault.contentType ?? 'application/json' });
      res.end(fault.body);
      return;
    }
    if (fault?.kind === 'hang') {
      if (!res.destroyed && !req.socket.destroyed) await new Promise((r) => res.once('close', r));
      return;
    }
    if (fault?.kind === 'delay') await new Promise((r) => setTimeout(r, fault.ms));
    if (fault?.kind === 'status') {
      json(res, fault.status, fault.body ?? { error: { message: `injected ${fault.status}`, type: 'test_fault' } }, fault.headers);
      return;
    }
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    if (res.destroyed) return;

    if (req.method === 'POST' && req.url?.endsWith('/embeddings')) {
      const b = body as { input: string | string[]; model: string };
      const inputs = Array.isArray(b.input) ? b.input : [b.input];
      const dim = options.embeddingDim ?? 64;
      json(res, 200, {
        object: 'list',
        model: b.model,
        data: inputs.map((t, i) => ({ object: 'embedding', index: i, embedding: fakeEmbedding(String(t), dim) })),
        usage: { prompt_tokens: inputs.join(' ').length, total_tokens: inputs.join(' ').length },
      });
      return;
    }
    if (req.method === 'POST' && req.url?.endsWith('/chat/completions')) {
      const b = body as ChatRequestBody;
      const lastUser = [...(b.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '';
      const calls = options.toolCalls?.(b, chatIndex);
      const content = calls?.length ? '' : options.reply ? options.reply(b, chatIndex) : `echo: ${lastUser.slice(0, 40)}`;
      chatIndex++;
      const scripted = options.usage?.(b, chatIndex - 1);
      const usage: {
        prompt_tokens: number;
        completion_tokens: number;
        total_tokens: number;
        prompt_tokens_details?: { cached_tokens: number };
      } = {
        prompt_tokens: scripted?.prompt_tokens ?? JSON.stringify(b.messages).length >> 2,
        completion_tokens: scripted?.completion_tokens ?? Math.max(1, content.length >> 2),
        total_tokens: 0,
      };
      if (scripted?.cached_tokens !== undefined) usage.prompt_tokens_details = { cached_tokens: scripted.cached_tokens };
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
      const id = `chatcmpl-test-${index}`;
      const created = Math.floor(Date.now() / 1000);
      if (calls?.length) {
        const toolCalls = calls.map((c, i) => ({ id: `call_${index}_${i}`, type: 'function', function: c }));
        if (!b.stream) {
          json(res, 200, {
            id,
            object: 'chat.completion',
            created,
            model: b.model,
            choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }],
            usage,
          });
          return;
        }
        // Streamed: the name first, then the arguments in pieces, as OpenAI sends them.
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        const send = (delta: unknown, finish: string | null = null) =>
          res.write(
            `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
          );
        toolCalls.forEach((t, i) => {
          send({
            role: 'assistant',
            tool_calls: [{ index: i, id: t.id, type: 'function', function: { name: t.function.name, arguments: '' } }],
          });
          for (const piece of t.function.arguments.match(/.{1,5}/gs) ?? [])
            send({ tool_calls: [{ index: i, function: { arguments: piece } }] });
        });
        send({}, 'tool_calls');
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [], usage })}\n\n`);
        res.end('data: [DONE]\n\n');
        return;
      }
      const completion = {
        id,
        object: 'chat.completion',
        created,
        model: b.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: fault?.kind === 'finish' ? fault.reason : 'stop' }],
        usage,
      };
      if (b.stream && fault?.kind !== 'json-for-stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        const chunk = (piece: string) =>
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`;
        if (fault?.kind === 'keep-alive') {
          const empty = `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [{ index: 0, delta: {}, finish_reason: null }] })}\n\n`;
          trickle(res, () => (fault.empty ? empty : ': keep-alive\n\n'), fault.everyMs);
          return;
        }
        if (fault?.kind === 'drip') {
          const end =
            `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n` +
            'data: [DONE]\n\n';
          const units = fault.unit === 'byte' ? [...(content.split('').map(chunk).join('') + end)] : [...content.split('').map(chunk), end];
          trickle(res, (n) => units[n], fault.everyMs);
          return;
        }
        if (fault?.kind === 'stall') {
          res.write(chunk(fault.text ?? content.slice(0, 7)));
          return;
        }
        if (fault?.kind === 'tear') {
          for (const piece of (fault.text ?? content.slice(0, content.length >> 1)).match(/.{1,7}/gs) ?? []) res.write(chunk(piece));
          if (fault.reset) res.write('', () => req.socket.destroy());
          else res.end();
          return;
        }
        const pieces = content.match(/.{1,7}/gs) ?? [''];
        for (const piece of pieces) res.write(chunk(piece));
        res.write(
          `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [{ index: 0, delta: {}, finish_reason: fault?.kind === 'finish' ? fault.reason : 'stop' }] })}\n\n`,
        );
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: b.model, choices: [], usage })}\n\n`);
        res.end('data: [DONE]\n\n');
        return;
      }
      if (fault?.kind === 'keep-alive' || fault?.kind === 'drip') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const text = JSON.stringify(completion);
        trickle(res, (n) => (fault.kind === 'drip' ? text[n] : ' '), fault.everyMs); // keep-alive: whitespace, never the body
        return;
      }
      if (fault?.kind === 'stall' || fault?.kind === 'tear') {
        const text = JSON.stringify(completion);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(text.slice(0, text.length >> 1));
        if (fault.kind === 'tear') {
          if (fault.reset) res.write('', () => req.socket.destroy());
          else res.end();
        }
        return;
      }
      json(res, 200, completion);
      return;
    }
    json(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
  });
  let connections = 0;
  server.on('connection', (s) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get peakInFlight() {
      return stats.peakInFlight;
    },
    get rejected() {
      return stats.rejected;
    },
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
