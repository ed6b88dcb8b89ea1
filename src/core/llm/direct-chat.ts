// The direct path of the openai provider, for chat calls that do not stream (population steps,
// sweeps, --quiet runs): one POST through a keep-alive undici Agent shared by the process, its
// answer collected into one buffer and read with one JSON.parse. No fetch, no web streams, no
// Response object, no AbortController of its own; one timer a call, and a listener on the
// caller's signal only when there is one. The openai client still builds what is sent (the URL
// from its base URL, its headers: Authorization, OpenAI-Organization, OpenAI-Project, User-Agent,
// once per provider) and still makes every streamed call (src/core/llm/openai.ts).
//
// A failure is the error the openai client (with the watched fetch, src/core/llm/watched-fetch.ts)
// raises for the same answer, so the provider classifies, retries and words it alike:
// - no answer within --timeout: APIConnectionTimeoutError; an answer whose body is not whole
//   within --timeout of the request: ReplyFaultError 'stalled';
// - a connection that fails before the answer: APIConnectionError (its cause the socket error);
//   one that breaks in the middle of the body: the socket error itself (the provider: 'torn');
// - an HTTP error: APIError.generate(status, body, message, headers), the client's subclasses;
// - a body that is not JSON under a JSON content type: SyntaxError (the provider: 'malformed');
// - a body over the raw cap: ReplyTooLargeError; Ctrl-C: APIUserAbortError.
// A redirect is not followed here: the call (and every later one) goes through the openai
// client, whose fetch follows it.
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import type OpenAI from 'openai';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { Agent, Dispatcher } from 'undici';
import type { CallGate } from './adaptive-limit.js';
import { ReplyFaultError, ReplyTooLargeError, seconds } from './reply-errors.js';
import { rawBodyCap } from './watched-fetch.js';

export interface DirectChatOptions {
  /** The provider's openai client: its URL and headers are the ones sent. */
  client: OpenAI;
  /** --timeout: the whole answer within this of the request. */
  timeoutMs: number;
  maxReplyBytes: number;
  /** Sees every answer (status, headers, time), and every failure without one (status 0), as observedFetch tells it. */
  gate?: Pick<CallGate, 'observe'>;
}

/** What a call answers when the server redirected it: the caller asks through the openai client instead. */
export const REDIRECTED: unique symbol = Symbol('redirected');

interface Target {
  agent: Agent;
  origin: string;
  path: string;
  /** name, value, name, value, ... */
  headers: string[];
}

// One Agent for the process: connections to a server are reused by every run and provider.
// Its own header and body timeouts are off (--timeout is ours); an idle socket is closed after
// the server's Keep-Alive timeout, or else after 4 s (under the 5 s of Node's http servers).
let shared: Promise<Agent> | undefined;
const sharedAgent = () =>
  (shared ??= import('undici').then((u) => new u.Agent({ keepAliveTimeout: 4_000, headersTimeout: 0, bodyTimeout: 0 })));

const REDIRECT = new Set([301, 302, 303, 307, 308]);

export class DirectChat {
  private target: Promise<Target> | undefined;
  /** The server redirected a call: from then on, calls go through the openai client. */
  redirected = false;
  private readonly cap: number;

  constructor(private readonly o: DirectChatOptions) {
    this.cap = rawBodyCap(o.maxReplyBytes, false);
  }

  /** Where and with which headers: what the openai client would send, built once. */
  private async build(): Promise<Target> {
    const agent = await sharedAgent();
    const { req, url } = await this.o.client.buildRequest({ method: 'post', path: '/chat/completions', body: {} });
    const u = new URL(url);
    const headers: string[] = [];
    for (const [name, value] of new Headers(req.headers)) if (name !== 'content-length') headers.push(name, value);
    // the codings Node's fetch asks for, and decodes (below)
    if (!headers.includes('accept-encoding'))
      headers.push('accept-encoding', u.protocol === 'https:' ? 'br, gzip, deflate' : 'gzip, deflate');
    return { agent, origin: u.origin, path: u.pathname + u.search, headers };
  }

  /**
   * Sends one chat request body (it must not stream); resolves to the answer as the openai client
   * parses it (a JSON body, the text of another content type, null for 204), or REDIRECTED.
   */
  async post(body: object, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) throw new APIUserAbortError();
    const target = await (this.target ??= this.build().catch((err: unknown) => {
      this.target = undefined;
      throw err;
    }));
    if (signal?.aborted) throw new APIUserAbortError();
    const options: Dispatcher.DispatchOptions = {
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers: target.headers,
      body: JSON.stringify(body),
    };
    return new Promise((resolve, reject) => {
      // Sent on the next turn of the event loop: undici frees a connection whose answer has just
      // ended only then (it waits a turn before reusing a socket), and a call made at once after
      // another ended (the next call of a step) would otherwise open a new connection each time.
      setImmediate(dispatch, target.agent, options, new Exchange(this, resolve, reject, signal));
    });
  }

  /**
   * The one place where an answer's status and headers arrive (an HTTP error's too), or a failure
   * without an answer (status 0: the connection; not a timeout nor the caller's abort).
   */
  answered(status: number, headers: IncomingHttpHeaders | undefined, sentAt: number): void {
    this.o.gate?.observe({
      status,
      sentAt,
      at: Date.now(),
      ...(headers ? { headers: { get: (name: string) => joined(headers[name.toLowerCase()]) ?? null } } : {}),
    });
  }

  get endpoint(): string {
    return this.o.client.baseURL;
  }
  get timeoutMs(): number {
    return this.o.timeoutMs;
  }
  get maxReplyBytes(): number {
    return this.o.maxReplyBytes;
  }
  get rawCap(): number {
    return this.cap;
  }
}

function dispatch(agent: Agent, options: Dispatcher.DispatchOptions, exchange: Exchange): void {
  if (exchange.settled) return;
  try {
    agent.dispatch(options, exchange);
  } catch (err) {
    // (undici reports a bad request to the handler; anything thrown here must not escape the immediate)
    exchange.onResponseError(undefined, err instanceof Error ? err : new Error(String(err)));
  }
}

const joined = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : v);

/** One request and its answer (undici's dispatch handler). */
class Exchange implements Dispatcher.DispatchHandler {
  private readonly started = Date.now();
  private readonly timer: ReturnType<typeof setTimeout>;
  private controller: Dispatcher.DispatchController | undefined;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private bytes = 0;
  /** Settled (the promise); anything undici says later is ignored. */
  private done = false;
  get settled(): boolean {
    return this.done;
  }
  /** Why the exchange was ended from here, to abort the request with once it has started. */
  private failure: Error | undefined;
  private readonly onAbort = () => this.fail(new APIUserAbortError());

  constructor(
    private readonly chat: DirectChat,
    private readonly resolve: (value: unknown) => void,
    private readonly reject: (err: unknown) => void,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => this.timedOut(), chat.timeoutMs);
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.failure) controller.abort(this.failure);
  }

  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    this.status = status;
    this.headers = headers;
    this.chat.answered(status, headers, this.started);
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return;
    this.bytes += chunk.length;
    if (this.bytes > this.chat.rawCap) this.fail(new ReplyTooLargeError(this.chat.endpoint, this.chat.maxReplyBytes));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.done) return;
    this.settle();
    try {
      this.answer();
    } catch (err) {
      this.reject(err);
    }
  }

  onResponseError(_c: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.done) return;
    this.settle();
    if (this.status === 0) {
      // before the answer: as the client reports a failed fetch (a connect timeout is a timeout)
      this.chat.answered(0, undefined, this.started);
      const timeout = /timed? ?out/i.test(String(err) + ('cause' in err ? String(err.cause) : ''));
      this.reject(timeout ? new APIConnectionTimeoutError() : new APIConnectionError({ cause: err }));
    } else if (this.status < 200 || this.status > 299) {
      this.reject(statusError(this.status, undefined, err.message, this.headers));
    } else this.reject(err); // torn in the middle of the body
  }

  private answer(): void {
    const { status, headers } = this;
    if (REDIRECT.has(status) && headers.location !== undefined) {
      this.chat.redirected = true;
      this.resolve(REDIRECTED);
      return;
    }
    const text = this.text();
    if (status < 200 || status > 299) {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      throw statusError(status, json, json ? undefined : text, headers);
    }
    // as the openai client reads an answer (its defaultParseResponse)
    if (status === 204) return this.resolve(null);
    const media = joined(headers['content-type'])?.split(';')[0]?.trim();
    if (media?.includes('application/json') || media?.endsWith('+json')) {
      this.resolve(joined(headers['content-length']) === '0' ? undefined : JSON.parse(text));
    } else this.resolve(text);
  }

  /** The body as text: decoded as fetch decodes it, without a byte-order mark. */
  private text(): string {
    let body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.bytes);
    this.chunks = [];
    const codings = joined(this.headers['content-encoding']);
    if (codings) body = decode(body, codings, this.chat.rawCap, () => new ReplyTooLargeError(this.chat.endpoint, this.chat.maxReplyBytes));
    const text = body.toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  private timedOut(): void {
    const s = seconds(this.chat.timeoutMs);
    this.fail(
      this.status === 0
        ? new APIConnectionTimeoutError()
        : new ReplyFaultError('stalled', `${this.chat.endpoint} did not send its whole answer within ${s} (--timeout ${s})`),
    );
  }

  /** Ends the exchange from here: rejects now, and aborts the request (at once, or when it starts). */
  private fail(err: Error): void {
    if (this.done) return;
    this.settle();
    this.failure = err;
    this.controller?.abort(err);
    this.reject(err);
  }

  private settle(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** The client's error for an HTTP status (BadRequestError, RateLimitError, ...). */
function statusError(status: number, json: unknown, message: string | undefined, headers: IncomingHttpHeaders): APIError {
  const h = new Headers();
  for (const [name, value] of Object.entries(headers)) for (const v of Array.isArray(value) ? value : [value ?? '']) h.append(name, v);
  return APIError.generate(status, json as object | undefined, message, h);
}

/** Content codings undone in reverse order, as fetch does (an unknown one leaves the body as it is). */
function decode(body: Buffer, codings: string, max: number, tooLarge: () => Error): Buffer {
  const list = codings
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  let out = body;
  for (const coding of list.reverse()) {
    const opts = { maxOutputLength: max };
    try {
      if (coding === 'gzip' || coding === 'x-gzip') out = gunzipSync(out, opts);
      else if (coding === 'deflate') out = inflateSync(out, opts);
      else if (coding === 'br') out = brotliDecompressSync(out, opts);
      else if (coding !== 'identity') return body;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
      throw err;
    }
  }
  return out;
}
