// A scripted LlmProvider for tests: records every call (messages, meta, stream flag) and answers
// from per-purpose scripts. The LLM is the one part of the engine tests may replace.
import type { CallPurpose, ChatOptions, ChatRequest, ChatResponse, LlmProvider } from '../../src/core/llm/types.js';

export interface RecordedCall {
  purpose: CallPurpose;
  meta: ChatRequest['meta'];
  messages: ChatRequest['messages'];
  stream: boolean;
  model: string;
  /** The system message (first message when it is a system one). */
  system: string;
  /** Content of the final message sent. */
  last: string;
  reply: string;
}

/** A reply: fixed text, or computed from the request (and the call's index within its purpose). */
export type Reply = string | ((request: ChatRequest, index: number) => string);

export interface Script {
  /** Replies in order per purpose; once a list is used up, `fallback` answers. */
  agent?: Reply[];
  judge?: Reply[];
  speaker?: Reply[];
  summary?: Reply[];
  tool?: Reply[];
  /** Never a chat call (an embedder's usage only); here for completeness. */
  embedding?: Reply[];
  survey?: Reply[];
  /** Answer when a purpose's list is empty or used up (default: see defaultReply). */
  fallback?: (request: ChatRequest) => string;
}

/** Agents say who they are and when; judges stay; speaker choice names nobody. */
export function defaultReply(request: ChatRequest): string {
  const m = request.meta;
  switch (m.purpose) {
    case 'agent':
      return `${m.agent} speaks at turn ${m.turn}`;
    case 'judge':
      return '0';
    case 'summary':
      return `summary at turn ${m.turn}`;
    default:
      return '';
  }
}

export class ScriptedLlm implements LlmProvider {
  readonly id = 'scripted';
  readonly calls: RecordedCall[] = [];
  private readonly used = new Map<CallPurpose, number>();

  constructor(private readonly script: Script = {}) {}

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    const purpose = request.meta.purpose;
    const index = this.used.get(purpose) ?? 0;
    this.used.set(purpose, index + 1);
    const list = this.script[purpose];
    const scripted = list?.[index];
    const reply =
      scripted === undefined
        ? (this.script.fallback ?? defaultReply)(request)
        : typeof scripted === 'function'
          ? scripted(request, index)
          : scripted;
    const messages = request.messages.map((m) => ({ ...m }));
    this.calls.push({
      purpose,
      meta: { ...request.meta },
      messages,
      stream: request.stream === true,
      model: request.model,
      system: messages[0]?.role === 'system' ? messages[0].content : '',
      last: messages[messages.length - 1]?.content ?? '',
      reply,
    });
    if (request.stream && options.onDelta) {
      // Deliver in small pieces, as a real stream would.
      for (const piece of reply.match(/[\s\S]{1,5}/g) ?? []) options.onDelta(piece);
    }
    return { content: reply, usage: { promptTokens: 10, completionTokens: 5 }, model: request.model };
  }

  /** Calls of one purpose, in order. */
  of(purpose: CallPurpose): RecordedCall[] {
    return this.calls.filter((c) => c.purpose === purpose);
  }
}
