// The lines of a batch file, and of its results: one request a line, `{"custom_id", "method",
// "url", "body"}` with the body exactly as the openai provider sends it (src/core/llm/openai.ts), and
// one result a line, `{"custom_id", "response": {"status_code", "body"}, "error"}`, as the OpenAI
// Batch API and `vllm run-batch` write them. The result file is a server's reply: untrusted, so
// every field is checked and a bad line names what is wrong.
import { chatRequestBody, toolCallsAsCommands } from '../../core/llm/wire-body.js';
import { DEFAULT_MAX_REPLY_BYTES } from '../../core/llm/reply-errors.js';
import { estimateUsage, LlmError, type ChatRequest, type ChatResponse, type Usage } from '../../core/llm/types.js';
import { isObject } from '../../shared/util/is-object.js';

/** Where each line of a batch is sent (the chat completions endpoint). */
export const BATCH_URL = '/v1/chat/completions';

/** A request of the batch: its custom_id (the call's key in its step) and its request. */
export interface BatchRequest {
  customId: string;
  request: ChatRequest;
}

/** The batch file: one JSON line a request, in the order given. */
export function batchFile(requests: readonly BatchRequest[]): string {
  let out = '';
  for (const r of requests) {
    // a batch is not streamed: no stream options in its body
    const body = chatRequestBody({ ...r.request, stream: false });
    out += JSON.stringify({ custom_id: r.customId, method: 'POST', url: BATCH_URL, body }) + '\n';
  }
  return out;
}

/** A result line: the reply, or why its request failed. */
export type BatchResult = { reply: ChatResponse } | { error: string };

/**
 * The results of a batch's output (and error) files, by custom_id, taken a line at a time as the
 * files are read (./result-stream.ts). A line that is not JSON, or has no string custom_id, is
 * counted (a file cut in the middle of a line, a server's garbage) and told by `dropped()`; a
 * custom_id the step asked that comes twice refuses the whole batch (which answer would be the
 * call's?). Lines of requests the step no longer asks (answered from the journal) are passed over.
 */
export class BatchResults {
  readonly results = new Map<string, BatchResult>();
  notJson = 0;
  noCustomId = 0;

  constructor(
    private readonly requests: ReadonlyMap<string, ChatRequest>,
    /** The batch, for the refusal ("batch batch_abc"). */
    private readonly what: string,
  ) {}

  add(line: string): void {
    if (!line.trim()) return;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      this.notJson++;
      return;
    }
    if (!isObject(data) || typeof data.custom_id !== 'string') {
      this.noCustomId++;
      return;
    }
    const request = this.requests.get(data.custom_id);
    if (!request) return;
    if (this.results.has(data.custom_id))
      throw new LlmError(
        `${this.what}: its results hold the call ${data.custom_id.slice(0, 100)} twice (a duplicated custom_id); the batch is refused, none of its replies is used`,
      );
    this.results.set(data.custom_id, resultOf(data, request));
  }

  /** The lines passed over, in words ("batch b: 3 result lines were dropped (2 not JSON, 1 without a string custom_id)"), or undefined. */
  dropped(): string | undefined {
    const n = this.notJson + this.noCustomId;
    if (n === 0) return undefined;
    const why = [
      ...(this.notJson ? [`${this.notJson} not JSON`] : []),
      ...(this.noCustomId ? [`${this.noCustomId} without a string custom_id`] : []),
    ];
    return `${this.what}: ${n} result line${n === 1 ? ' was' : 's were'} dropped (${why.join(', ')})`;
  }
}

function resultOf(line: Record<string, unknown>, request: ChatRequest): BatchResult {
  if (isObject(line.error)) return { error: errorText(line.error) };
  const response = line.response;
  if (!isObject(response)) return { error: 'the result line has neither "response" nor "error"' };
  const status = typeof response.status_code === 'number' ? response.status_code : 0;
  if (status !== 200) {
    const body = response.body;
    const said = isObject(body) && isObject(body.error) ? `: ${errorText(body.error)}` : '';
    return { error: `HTTP ${status}${said}` };
  }
  return completionOf(response.body, request);
}

const errorText = (e: Record<string, unknown>): string =>
  `${typeof e.code === 'string' ? `${e.code}: ` : ''}${typeof e.message === 'string' ? e.message : JSON.stringify(e)}`.slice(0, 300);

/** The reply of a chat completion body: its text (tool calls as commands), usage and model. */
function completionOf(body: unknown, request: ChatRequest): BatchResult {
  const choice = isObject(body) && Array.isArray(body.choices) ? (body.choices[0] as unknown) : undefined;
  const message = isObject(choice) ? choice.message : undefined;
  if (!isObject(body) || !isObject(message)) return { error: 'its response body is not a chat completion' };
  const calls = (Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : []).flatMap((c) =>
    isObject(c) && c.type === 'function' && isObject(c.function)
      ? [{ name: String(c.function.name ?? ''), arguments: typeof c.function.arguments === 'string' ? c.function.arguments : '' }]
      : [],
  );
  const content = calls.length > 0 ? toolCallsAsCommands(calls) : typeof message.content === 'string' ? message.content : '';
  if (Buffer.byteLength(content, 'utf8') > DEFAULT_MAX_REPLY_BYTES)
    return { error: `its reply is larger than ${DEFAULT_MAX_REPLY_BYTES} bytes` };
  const finish = isObject(choice) && typeof choice.finish_reason === 'string' ? choice.finish_reason : undefined;
  return {
    reply: {
      content,
      usage: usageOf(body.usage) ?? estimateUsage(request.messages, content),
      ...(typeof body.model === 'string' ? { model: body.model } : {}),
      ...(finish ? { finishReason: finish } : {}),
    },
  };
}

function usageOf(u: unknown): Usage | undefined {
  if (!isObject(u) || !isCount(u.prompt_tokens) || !isCount(u.completion_tokens)) return undefined;
  const cached = isObject(u.prompt_tokens_details) ? u.prompt_tokens_details.cached_tokens : undefined;
  return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens, ...(isCount(cached) ? { cachedTokens: cached } : {}) };
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
