// Concise mode of Agents 1.0 (ACTIVE_MODE "0", docs/agents-v1-semantics.md §4 and §5 #45): a fixed request for
// short replies is added to the system prompt of every call (a system message is created if
// there is none) and to the end of the last prompt of calls that have one.
import type { CallMeta, ChatOptions, ChatRequest, ChatResponse, LlmProvider } from '../../llm/types.js';

export class ConciseProvider implements LlmProvider {
  constructor(
    private readonly inner: LlmProvider,
    private readonly sentence: string,
    /** Whether a call of this kind ends with a last prompt (judges only when one is configured). */
    private readonly hasLastPrompt: (meta: CallMeta) => boolean,
  ) {}

  get id(): string {
    return this.inner.id;
  }
  get position(): number | undefined {
    return this.inner.position;
  }
  seek(position: number): void {
    this.inner.seek?.(position);
  }
  async close(): Promise<void> {
    await this.inner.close?.();
  }

  chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
    const messages = request.messages.map((m) => ({ ...m }));
    if (messages[0]?.role === 'system') messages[0].content = `${messages[0].content}\n${this.sentence}`;
    else messages.unshift({ role: 'system', content: this.sentence });
    const final = messages[messages.length - 1]!;
    if (messages.length > 1 && this.hasLastPrompt(request.meta)) final.content = `${final.content}\n${this.sentence}`;
    return this.inner.chat({ ...request, messages }, options);
  }
}

/** The provider a run of `sop` uses: wrapped for concise mode when its agents_v1 settings ask for it. */
export function withConcise(llm: LlmProvider, sentence: string | undefined, judgeHasLastPrompt: (state: string) => boolean): LlmProvider {
  if (!sentence) return llm;
  return new ConciseProvider(llm, sentence, (meta) =>
    meta.purpose === 'judge' ? judgeHasLastPrompt(meta.state) : meta.purpose !== 'summary',
  );
}
