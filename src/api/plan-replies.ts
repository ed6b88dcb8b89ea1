// The stand-in LLMs of `sop plan`. For a run of a real model (docs/plan.md#replies): the mock's
// replies, with every free-text reply (an agent's turn, a summary) lengthened to a chosen number
// of tokens, no more than the call's max_tokens, so that the prompts which carry earlier replies
// grow as they would. Answers with a form (a judge's key, a speaker's name, a command, a
// population action) keep the mock's: a model's are about as short.
import { MockProvider } from '../core/llm/mock.js';
import {
  estimateUsage,
  type ChatMessage,
  type ChatOptions,
  type ChatRequest,
  type ChatResponse,
  type LlmProvider,
} from '../core/llm/types.js';

/** Text that OpenAI's o200k_base tokenizer counts at about 4 characters a token (3.8), the engine's estimate. */
const FILLER = ' and so on and so forth';

export class SizedReplies implements LlmProvider {
  readonly id = 'mock';
  private readonly mock = new MockProvider();

  constructor(
    /** Tokens of a free-text reply (before the call's max_tokens). */
    readonly tokens: number,
  ) {}

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    const res = await this.mock.chat({ ...request, stream: false }, options);
    const { meta } = request;
    const freeText = (meta.purpose === 'agent' && !meta.commands?.length && !meta.population) || meta.purpose === 'summary';
    if (!freeText) return res;
    const tokens = Math.min(this.tokens, request.maxTokens ?? Infinity);
    const chars = tokens * 4; // the engine's estimate: 4 characters a token
    let content = res.content.slice(0, chars);
    if (content.length < chars)
      content += FILLER.repeat(Math.ceil((chars - content.length) / FILLER.length)).slice(0, chars - content.length);
    if (request.stream) options.onDelta?.(content);
    return { ...res, content, usage: estimateUsage(request.messages, content) };
  }
}

/**
 * The stand-in LLM, noting the `prompt_cache_key` each call is sent with, by its prompt: the run's
 * `prompt` event carries the same messages, so the cache simulation routes each call by its key.
 */
export class CacheKeys implements LlmProvider {
  readonly id = 'mock';
  readonly keys = new WeakMap<ChatMessage[], string>();

  constructor(private readonly inner: LlmProvider) {}

  chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
    if (request.promptCacheKey) this.keys.set(request.messages, request.promptCacheKey);
    return this.inner.chat(request, options);
  }
}
