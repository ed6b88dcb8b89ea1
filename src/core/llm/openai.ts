// The `openai` provider: chat completions of any OpenAI-compatible server via the openai package.
import { opt, renderMessage, say, type MessagePart } from '../../shared/errors.js';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { isApiError } from './api-error.js';
import {
  DEFAULT_RETRY_POLICY,
  RETRIES_PER_CALL,
  RetriesExhaustedError,
  RetryBudget,
  parseRetryAfter,
  withRetries,
  type RetryPolicy,
  type RetryableFailure,
} from './retry.js';
import { LlmError, LlmUnavailableError, estimateUsage } from './types.js';
import type { CallMeta, ChatOptions, ChatRequest, ChatResponse, LlmProvider, Usage } from './types.js';
import { DEFAULT_MAX_REPLY_BYTES, ReplyFaultError, ReplyTooLargeError, seconds } from './reply-errors.js';
import { watchedFetch } from './watched-fetch.js';
import { CallDeadline, ContentWatch } from './content-watch.js';
import { keepAliveFetch } from './keep-alive-fetch.js';
import { observedFetch, type CallGate } from './adaptive-limit.js';
import { DirectChat, REDIRECTED } from './direct-chat.js';
import { adaptationFor, adaptationWarning, type Adaptation } from './request-adaptation.js';
import { chatRequestBody, toolCallsAsCommands } from './wire-body.js';
import { isObject } from '../../shared/util/is-object.js';

export interface OpenAiProviderOptions {
  apiKey?: string;
  /** Where the key came from, for a refused key (default OPENAI_API_KEY); null: no key was sent (src/core/llm/endpoints.ts). */
  apiKeyName?: string | null;
  baseURL?: string;
  /**
   * Per-attempt timeout: the wait for the answer, every silence in the middle of it, and the
   * whole of a non-streamed answer (default 120 s).
   */
  timeoutMs?: number;
  /**
   * The longest one streamed attempt may take in all, however steadily it trickles (default 10 x
   * timeoutMs); a stream is also ended by timeoutMs without new content (keep-alives do not count).
   * The streamed attempts of one call take 3 of these in all at most (src/core/llm/content-watch.ts).
   */
  streamDeadlineMs?: number;
  /** Cap on the text of one reply, in bytes (default 512 KiB); a larger one is refused. */
  maxReplyBytes?: number;
  retry?: Partial<RetryPolicy>;
  budget?: RetryBudget;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  /** Replies kept with a warning (cut at max tokens, empty, a plain JSON answer to a stream). */
  onWarning?: (message: string) => void;
  /** Every attempt takes a slot of it, and it sees every answer, on either path (src/core/llm/adaptive-limit.ts). */
  gate?: CallGate;
  /**
   * Calls that do not stream go out on the direct path (src/core/llm/direct-chat.ts), not through the
   * openai client's fetch; default: yes, unless SOP_HTTP_CLIENT is `fetch` or `undici`.
   */
  direct?: boolean;
}

/** The error of no key, in parts (the CLI names the options by their flags). */
export const MISSING_KEY: readonly MessagePart[] = [
  'No OpenAI API key. Run with a model in one of three ways:\n',
  '  1. set OPENAI_API_KEY=sk-... for OpenAI;\n',
  ...say`  2. point at a local OpenAI-compatible server: ${opt('baseUrl', { set: 'http://127.0.0.1:11434/v1' })} (or OPENAI_BASE_URL); a key is then optional;\n`,
  ...say`  3. replay a cassette offline: ${opt('llm', { set: 'replay:FILE' })} (or ${opt('llm', { set: 'mock' })} for placeholder replies).`,
];
export const MISSING_KEY_MESSAGE = renderMessage(MISSING_KEY);

/** The most specific message in an error's cause chain (fetch wraps the socket error twice). */
function rootCause(err: Error): string {
  let detail = err.message;
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e instanceof Error; depth++, e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (!e.message || /^(fetch failed|Connection error\.?)$/i.test(e.message)) continue;
    detail = code && !e.message.includes(code) ? `${code}: ${e.message}` : e.message;
  }
  return detail.replace(/\s+/g, ' ');
}

/** A socket that closed or reset while a body was being read. */
function brokenConnection(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e instanceof Error; depth++, e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code && /^(ECONNRESET|EPIPE|ECONNABORTED|UND_ERR_SOCKET|UND_ERR_CLOSED)$/.test(code)) return true;
    if (e instanceof TypeError && e.message === 'terminated') return true;
  }
  return false;
}

/** "HTTP 400: what the server said" (the client's message starts with the status too). */
function httpError(err: APIError, max: number): string {
  const said = err.message.replace(/^\d{3}\s+/, '').replace(/\s+/g, ' ');
  return `HTTP ${err.status ?? 0}: ${said.slice(0, max)}`;
}

function classify(err: unknown, baseURL?: string, timeoutMs?: number): RetryableFailure {
  if (err instanceof APIUserAbortError) return { retryable: false, reason: 'aborted' };
  if (err instanceof ReplyFaultError) return { retryable: true, reason: err.message };
  if (err instanceof APIConnectionTimeoutError) {
    const s = seconds(timeoutMs ?? 120_000);
    return { retryable: true, reason: `request timed out: no answer${baseURL ? ` from ${baseURL}` : ''} within ${s} (--timeout ${s})` };
  }
  if (err instanceof APIConnectionError) {
    return { retryable: true, reason: `connection${baseURL ? ` to ${baseURL}` : ''} failed (${rootCause(err)})` };
  }
  if (isApiError(err)) {
    const status = err.status ?? 0;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    return { retryable, retryAfterMs: parseRetryAfter(err.headers), reason: httpError(err, 200) };
  }
  if (err instanceof LlmError) return { retryable: err.retryable, reason: err.message };
  return { retryable: false, reason: err instanceof Error ? err.message : String(err) };
}

/** "the agent call by Ada in state "opening"", for warnings. */
function describeCall(meta: CallMeta): string {
  return `the ${meta.purpose} call${meta.agent ? ` by ${meta.agent}` : ''} in state "${meta.state}" (turn ${meta.turn})`;
}

function usageOf(u: unknown): Usage | undefined {
  if (!isObject(u) || typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return undefined;
  const cached = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details.cached_tokens : undefined;
  return {
    promptTokens: u.prompt_tokens,
    completionTokens: u.completion_tokens,
    ...(typeof cached === 'number' && cached >= 0 ? { cachedTokens: cached } : {}),
  };
}

/** What a reply body that is not a chat completion looks like, for the message. */
function describeBody(body: unknown): string {
  if (body === undefined || body === null || body === '') return 'an empty body';
  if (typeof body === 'string') return `text that is not JSON (${JSON.stringify(body.slice(0, 40))}${body.length > 40 ? '...' : ''})`;
  if (isObject(body) && isObject(body.error)) return `an error: ${String(body.error.message ?? JSON.stringify(body.error)).slice(0, 200)}`;
  if (isObject(body) && !Array.isArray(body.choices)) return 'JSON without "choices"';
  return 'JSON without a message in "choices"';
}

export class OpenAiProvider implements LlmProvider {
  readonly id = 'openai';
  readonly paid = true;
  private readonly client: OpenAI;
  /** Calls that do not stream, unless SOP_HTTP_CLIENT names the openai client's fetch (src/core/llm/direct-chat.ts). */
  private readonly direct: DirectChat | undefined;
  private readonly policy: RetryPolicy;
  private readonly budget: RetryBudget;
  private readonly timeoutMs: number;
  private readonly maxReplyBytes: number;
  private warnedJsonForStream = false;
  /** What each model's server refused, and is no longer sent to it (src/core/llm/request-adaptation.ts). */
  private readonly adaptations = new Map<string, Set<Adaptation>>();

  constructor(private readonly options: OpenAiProviderOptions = {}) {
    const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
    const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
    if (!apiKey && !baseURL) throw new LlmError(MISSING_KEY);
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.maxReplyBytes = options.maxReplyBytes ?? DEFAULT_MAX_REPLY_BYTES;
    this.client = new OpenAI({
      apiKey: apiKey || 'no-key',
      baseURL: baseURL || undefined,
      maxRetries: 0, // retries are ours: one policy, one budget per run
      timeout: this.timeoutMs, // the wait for the answer's headers; the body is watched below
      logLevel: 'off', // a bad stream is our error to report, not a console dump
    });
    this.client = this.client.withOptions({
      fetch: watchedFetch({
        idleMs: this.timeoutMs,
        maxReplyBytes: this.maxReplyBytes,
        endpoint: this.client.baseURL,
        fetch: options.gate ? observedFetch(keepAliveFetch(), options.gate) : keepAliveFetch(),
      }),
    });
    const direct = options.direct ?? !(process.env.SOP_HTTP_CLIENT === 'fetch' || process.env.SOP_HTTP_CLIENT === 'undici');
    this.direct = !direct
      ? undefined
      : new DirectChat({ client: this.client, timeoutMs: this.timeoutMs, maxReplyBytes: this.maxReplyBytes, gate: options.gate });
    // a server's Retry-After holds a retry at most the run's --timeout, as the shared pause (adaptive-limit.ts)
    this.policy = { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: this.timeoutMs, ...options.retry };
    this.budget = options.budget ?? new RetryBudget(50, RETRIES_PER_CALL);
  }

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    // the messages as the server got them (a recorded cassette keeps them): native forms with tools
    const sent = () => this.body(request).messages;
    this.budget.counted(); // the run's retry budget grows with its calls
    const res = await this.withRetries(request, options);
    if (res.content !== '') return { ...res, sent: sent() };
    // An empty reply is asked for once more; a second one is kept, with a warning.
    const what = describeCall(request.meta);
    if (!this.budget.take()) {
      this.options.onWarning?.(`${what} got an empty reply; the run's retry budget is spent, so it is recorded empty`);
      return { ...res, sent: sent() };
    }
    this.options.onWarning?.(`${what} got an empty reply from ${this.client.baseURL}; asking once more`);
    const again = await this.withRetries(request, options);
    if (again.content === '') this.options.onWarning?.(`${what} got an empty reply twice; recorded empty`);
    return { ...again, sent: sent() };
  }

  private async withRetries(request: ChatRequest, options: ChatOptions): Promise<ChatResponse> {
    const classifyHere = (e: unknown) =>
      options.signal?.aborted ? { retryable: false, reason: 'aborted' } : classify(e, this.client.baseURL, this.timeoutMs);
    // A streamed call's attempts share one deadline: a steady trickle is retried, and the call still ends.
    const deadline = request.stream ? new CallDeadline(this.timeoutMs, this.options.streamDeadlineMs) : undefined;
    let attempts = 0;
    const classifyRetry = (e: unknown): RetryableFailure => {
      const failure = classifyHere(e);
      if (failure.retryable && deadline?.spent)
        throw new RetriesExhaustedError(`${failure.reason}; gave up after ${attempts} attempts: ${deadline.callWhat}`, false);
      return failure;
    };
    try {
      const gate = this.options.gate;
      const attempt = () => (attempts++, this.once(request, options, deadline));
      return await withRetries(() => (gate ? gate.run(attempt, options.signal) : attempt()), this.policy, this.budget, {
        classify: classifyRetry,
        onRetry: this.options.onRetry,
        signal: options.signal,
      });
    } catch (err) {
      if (err instanceof RetriesExhaustedError) throw new LlmUnavailableError(`LLM call failed: ${err.message}`);
      if (err instanceof ReplyTooLargeError) throw err;
      const failure = classifyHere(err);
      if (err instanceof APIError && err.status === 401) {
        const name = this.options.apiKeyName;
        throw new LlmError(
          name === null
            ? `LLM call failed: ${this.client.baseURL} wants an API key (HTTP 401), and none was sent: name the variable that holds it with llm.api_key_env in the block that sets this base_url.`
            : `LLM call failed: the server refused the API key (HTTP 401). Check ${name ?? 'OPENAI_API_KEY'}.`,
          false,
          401,
        );
      }
      throw new LlmError(`LLM call failed: ${failure.reason}`, false, isApiError(err) ? err.status : undefined);
    }
  }

  private async once(request: ChatRequest, options: ChatOptions, deadline?: CallDeadline): Promise<ChatResponse> {
    try {
      return await this.attempt(request, options, deadline);
    } catch (err) {
      // A parameter this model's server does not take: send the request without it (once per model).
      if (isApiError(err) && this.adapt(err, request)) return this.once(request, options, deadline);
      // A body that is not JSON, or an SSE event that is not: the answer is malformed.
      if (err instanceof SyntaxError) {
        throw new ReplyFaultError('malformed', `${this.client.baseURL} answered with malformed JSON (${err.message.slice(0, 120)})`);
      }
      // An error event in the middle of a 200 stream (the client raises it without a status).
      if (err instanceof APIError && !(err instanceof APIConnectionError) && err.status === undefined) {
        throw new ReplyFaultError(
          'malformed',
          `${this.client.baseURL} sent an error in the middle of the stream: ${err.message.replace(/\s+/g, ' ').slice(0, 200)}`,
        );
      }
      // The connection broke after the headers (fetch says "terminated"): the answer is torn.
      if (!(err instanceof APIError) && !options.signal?.aborted && brokenConnection(err)) {
        throw new ReplyFaultError(
          'torn',
          `the connection to ${this.client.baseURL} broke in the middle of the answer (${rootCause(err as Error)}); its partial text is discarded`,
        );
      }
      throw err;
    }
  }

  /** Text of a reply (tool calls as commands), refused when over the cap. */
  private replyText(content: string, calls: Array<{ name: string; arguments: string }>): string {
    const text = calls.length ? toolCallsAsCommands(calls) : content;
    if (Buffer.byteLength(text, 'utf8') > this.maxReplyBytes) throw new ReplyTooLargeError(this.client.baseURL, this.maxReplyBytes);
    return text;
  }

  /** The reply of a non-streamed answer (or of a plain JSON answer to a streamed request). */
  private fromCompletion(body: unknown, request: ChatRequest): ChatResponse & { finish?: string } {
    const choice: unknown = isObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
    const message = isObject(choice) ? choice.message : undefined;
    if (!isObject(body) || isObject(body.error) || !isObject(message)) {
      throw new ReplyFaultError('malformed', `${this.client.baseURL} answered 200 with ${describeBody(body)}, not a chat completion`);
    }
    const toolCalls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
    const calls = toolCalls.flatMap((c: unknown) =>
      isObject(c) && c.type === 'function' && isObject(c.function)
        ? [{ name: String(c.function.name ?? ''), arguments: typeof c.function.arguments === 'string' ? c.function.arguments : '' }]
        : [],
    );
    const content = this.replyText(typeof message.content === 'string' ? message.content : '', calls);
    const finish = isObject(choice) && typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined;
    return {
      content,
      finish,
      usage: usageOf(body.usage) ?? estimateUsage(request.messages, content),
      ...(typeof body.model === 'string' ? { model: body.model } : {}),
    };
  }

  private warnFinish(finish: string | undefined, meta: CallMeta): void {
    if (finish === 'length')
      this.options.onWarning?.(`the reply of ${describeCall(meta)} was cut at max tokens (finish_reason "length"); it is kept as it is`);
    else if (finish === 'content_filter')
      this.options.onWarning?.(`the reply of ${describeCall(meta)} was cut by the server's content filter; it is kept as it is`);
  }

  /** The request body as this model's server takes it. */
  private body(request: ChatRequest) {
    return chatRequestBody(request, this.adaptations.get(request.model));
  }

  /** Whether a refusal named a parameter the request can go without; if so it is left out from now on, with a warning. */
  private adapt(err: APIError, request: ChatRequest): boolean {
    const taken = this.adaptations.get(request.model) ?? new Set<Adaptation>();
    const sent = this.body(request);
    const a = adaptationFor({ status: err.status, message: err.message, param: err.param, code: err.code }, sent, taken);
    if (a === undefined) return false;
    this.adaptations.set(request.model, taken.add(a));
    this.options.onWarning?.(adaptationWarning(a, sent, this.client.baseURL, httpError(err, 160)));
    return true;
  }

  private async attempt(request: ChatRequest, options: ChatOptions, deadline?: CallDeadline): Promise<ChatResponse> {
    if (!request.stream) {
      // (a request that does not stream has no stream_options)
      const sent = { ...this.body(request), stream: false as const };
      let body: unknown = this.direct && !this.direct.redirected ? await this.direct.post(sent, options.signal) : REDIRECTED;
      if (body === REDIRECTED) body = await this.client.chat.completions.create(sent, { signal: options.signal });
      const { finish, ...res } = this.fromCompletion(body, request);
      this.warnFinish(finish, request.meta);
      return { ...res, ...(finish ? { finishReason: finish } : {}) };
    }
    // Bounded by content, not bytes: a silence without new content, and a deadline for the whole attempt.
    const watch = new ContentWatch({
      idleMs: this.timeoutMs,
      ...(deadline ? deadline.next() : { deadlineMs: this.options.streamDeadlineMs }),
      endpoint: this.client.baseURL,
      signal: options.signal,
    });
    const started = Date.now();
    try {
      return await this.streamed(request, options, watch);
    } catch (err) {
      throw watch.error ?? err;
    } finally {
      watch.stop();
      deadline?.spend(Date.now() - started);
    }
  }

  private async streamed(request: ChatRequest, options: ChatOptions, watch: ContentWatch): Promise<ChatResponse> {
    const { stream_options, ...base } = this.body(request);
    const { data: stream, response } = await this.client.chat.completions
      .create({ ...base, stream: true, ...(stream_options ? { stream_options } : {}) }, { signal: watch.signal })
      .withResponse();
    watch.started();
    if (/^application\/(.*\+)?json\b/i.test(response.headers.get('content-type') ?? '')) {
      // A server that does not stream answers with one chat completion: use it whole.
      const text = await response.text();
      const { finish, ...res } = this.fromCompletion(text.trim() ? JSON.parse(text) : '', request);
      if (!this.warnedJsonForStream) {
        this.warnedJsonForStream = true;
        this.options.onWarning?.(
          `${this.client.baseURL} answered a streamed request with one plain JSON reply; using it whole (it does not stream)`,
        );
      }
      this.warnFinish(finish, request.meta);
      if (res.content) options.onDelta?.(res.content);
      return { ...res, ...(finish ? { finishReason: finish } : {}) };
    }
    // Deltas go to the terminal as they arrive; the recorded content is the whole reply of the
    // attempt that completed: a stream that ends before its finish_reason is torn, retried, and
    // its partial text discarded.
    let content = '';
    let bytes = 0;
    let usage: ChatResponse['usage'] | undefined;
    let model: string | undefined;
    let finish: string | undefined;
    let chunks = 0;
    const calls: Array<{ name: string; arguments: string }> = [];
    const grow = (text: string) => {
      bytes += Buffer.byteLength(text, 'utf8');
      if (bytes > this.maxReplyBytes) throw new ReplyTooLargeError(this.client.baseURL, this.maxReplyBytes);
    };
    for await (const raw of stream) {
      const chunk: unknown = raw;
      watch.saw(chunk);
      if (!isObject(chunk)) continue;
      if (isObject(chunk.error))
        throw new ReplyFaultError(
          'malformed',
          `${this.client.baseURL} sent an error in the middle of the stream: ${String(chunk.error.message ?? '').slice(0, 200)}`,
        );
      if (typeof chunk.model === 'string') model ??= chunk.model;
      const choice: unknown = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (Array.isArray(chunk.choices) || chunk.usage) chunks++;
      const delta = isObject(choice) && isObject(choice.delta) ? choice.delta : undefined;
      if (delta && typeof delta.content === 'string' && delta.content) {
        grow(delta.content);
        content += delta.content;
        options.onDelta?.(delta.content);
      }
      // actions: tool calls arrive in pieces, by index
      for (const t of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
        if (!isObject(t)) continue;
        const index = typeof t.index === 'number' && Number.isInteger(t.index) && t.index >= 0 && t.index < 128 ? t.index : 0;
        const call = (calls[index] ??= { name: '', arguments: '' });
        const fn = isObject(t.function) ? t.function : {};
        if (typeof fn.name === 'string') {
          grow(fn.name);
          call.name += fn.name;
        }
        if (typeof fn.arguments === 'string') {
          grow(fn.arguments);
          call.arguments += fn.arguments;
        }
      }
      if (isObject(choice) && typeof choice.finish_reason === 'string' && choice.finish_reason) finish = choice.finish_reason;
      usage = usageOf(chunk.usage) ?? usage;
    }
    if (options.signal?.aborted) throw new APIUserAbortError();
    if (!finish) {
      throw new ReplyFaultError(
        chunks === 0 ? 'malformed' : 'torn',
        chunks === 0
          ? `${this.client.baseURL} answered a streamed request with no chat completion chunk`
          : `the stream from ${this.client.baseURL} ended before the reply was complete (no finish_reason); its partial text is discarded`,
      );
    }
    this.warnFinish(finish, request.meta);
    const text = this.replyText(content, calls.filter(Boolean));
    return { content: text, usage: usage ?? estimateUsage(request.messages, text), ...(model ? { model } : {}), finishReason: finish };
  }
}
