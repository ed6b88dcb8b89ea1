// The `openai` provider: chat completions of any OpenAI-compatible server via the openai package.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import {
  DEFAULT_RETRY_POLICY, RetriesExhaustedError, RetryBudget, parseRetryAfter, withRetries,
  type RetryPolicy, type RetryableFailure,
} from './retry.js';
import { LlmError, LlmUnavailableError, estimateUsage, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';

export interface OpenAiProviderOptions {
  apiKey?: string;
  baseURL?: string;
  /** Per-attempt timeout. */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  budget?: RetryBudget;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

export const MISSING_KEY_MESSAGE =
  'No OpenAI API key. Run with a model in one of three ways:\n' +
  '  1. set OPENAI_API_KEY=sk-... for OpenAI;\n' +
  '  2. point at a local OpenAI-compatible server: --base-url http://127.0.0.1:11434/v1 (or OPENAI_BASE_URL); a key is then optional;\n' +
  '  3. replay a cassette offline: --llm replay:FILE (or --llm mock for placeholder replies).';

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

function classify(err: unknown, baseURL?: string): RetryableFailure {
  if (err instanceof APIUserAbortError) return { retryable: false, reason: 'aborted' };
  if (err instanceof APIConnectionTimeoutError) return { retryable: true, reason: 'request timed out' };
  if (err instanceof APIConnectionError) {
    return { retryable: true, reason: `connection${baseURL ? ` to ${baseURL}` : ''} failed (${rootCause(err)})` };
  }
  if (err instanceof APIError) {
    const status = err.status ?? 0;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const detail = err.message.replace(/\s+/g, ' ').slice(0, 200);
    return { retryable, retryAfterMs: parseRetryAfter(err.headers), reason: `HTTP ${status}: ${detail}` };
  }
  if (err instanceof LlmError) return { retryable: err.retryable, reason: err.message };
  return { retryable: false, reason: err instanceof Error ? err.message : String(err) };
}

/**
 * Tool calls as the command JSON the engine parses ({"command", "command_args"}), one per line;
 * arguments that are not JSON are passed on as they are, so the parse error goes back to the model.
 */
export function toolCallsAsCommands(calls: Array<{ name: string; arguments: string }>): string {
  return calls.map((c) => {
    try {
      return JSON.stringify({ command: c.name, command_args: c.arguments.trim() ? JSON.parse(c.arguments) : {} });
    } catch {
      return `{"command": ${JSON.stringify(c.name)}, "command_args": ${c.arguments}}`;
    }
  }).join('\n');
}

export class OpenAiProvider implements LlmProvider {
  readonly id = 'openai';
  private readonly client: OpenAI;
  private readonly policy: RetryPolicy;
  private readonly budget: RetryBudget;

  constructor(private readonly options: OpenAiProviderOptions = {}) {
    const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
    const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
    if (!apiKey && !baseURL) throw new LlmError(MISSING_KEY_MESSAGE);
    this.client = new OpenAI({
      apiKey: apiKey || 'no-key',
      baseURL: baseURL || undefined,
      maxRetries: 0, // retries are ours: one policy, one budget per run
      timeout: options.timeoutMs ?? 120_000,
    });
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.budget = options.budget ?? new RetryBudget(50);
  }

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    try {
      return await withRetries(() => this.once(request, options), this.policy, this.budget, {
        classify: (e) => classify(e, this.client.baseURL),
        onRetry: this.options.onRetry,
        signal: options.signal,
      });
    } catch (err) {
      if (err instanceof RetriesExhaustedError) throw new LlmUnavailableError(`LLM call failed: ${err.message}`);
      const failure = classify(err, this.client.baseURL);
      if (err instanceof APIError && err.status === 401) {
        throw new LlmError(`LLM call failed: the server refused the API key (HTTP 401). Check OPENAI_API_KEY.`, false, 401);
      }
      throw new LlmError(`LLM call failed: ${failure.reason}`, false, err instanceof APIError ? err.status : undefined);
    }
  }

  private async once(request: ChatRequest, options: ChatOptions): Promise<ChatResponse> {
    const tools = request.meta.tools;
    const base = {
      model: request.model,
      messages: request.messages,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
      // actions: a state's commands offered as function tools (llm.tool_calls)
      ...(tools?.length ? { tools: tools.map((t) => ({ type: 'function' as const, function: t })), tool_choice: 'auto' as const } : {}),
    };
    if (!request.stream) {
      const res = await this.client.chat.completions.create({ ...base, stream: false }, { signal: options.signal });
      const message = res.choices[0]?.message;
      const calls = (message?.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ name: c.function.name, arguments: c.function.arguments }] : []));
      const content = calls.length ? toolCallsAsCommands(calls) : message?.content ?? '';
      const usage = res.usage
        ? { promptTokens: res.usage.prompt_tokens, completionTokens: res.usage.completion_tokens }
        : estimateUsage(request.messages, content);
      return { content, usage, model: res.model };
    }
    const stream = await this.client.chat.completions.create(
      { ...base, stream: true, stream_options: { include_usage: true } },
      { signal: options.signal },
    );
    // Deltas go to the terminal as they arrive; the recorded content is the whole reply of the
    // attempt that completed (a torn stream is retried and its partial text discarded).
    let content = '';
    let usage: ChatResponse['usage'] | undefined;
    let model: string | undefined;
    const calls: Array<{ name: string; arguments: string }> = [];
    for await (const chunk of stream) {
      model ??= chunk.model;
      const delta = chunk.choices[0]?.delta?.content;
      if (delta) {
        content += delta;
        options.onDelta?.(delta);
      }
      // actions: tool calls arrive in pieces, by index
      for (const t of chunk.choices[0]?.delta?.tool_calls ?? []) {
        const call = (calls[t.index] ??= { name: '', arguments: '' });
        if (t.function?.name) call.name += t.function.name;
        if (t.function?.arguments) call.arguments += t.function.arguments;
      }
      if (chunk.usage) usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
    }
    if (calls.length) content = toolCallsAsCommands(calls.filter(Boolean));
    return { content, usage: usage ?? estimateUsage(request.messages, content), model };
  }
}
