// A provider whose calls go through `around` (budgets count them, tracing makes a span of each);
// everything else (id, cassette position, close) is the inner provider's.
import type { ChatOptions, ChatRequest, ChatResponse, LlmProvider } from './types.js';

export type AroundCall = (request: ChatRequest, call: () => Promise<ChatResponse>) => Promise<ChatResponse>;

export class WrappedProvider implements LlmProvider {
  constructor(
    private readonly inner: LlmProvider,
    private readonly around: AroundCall,
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
    return this.around(request, () => this.inner.chat(request, options));
  }
}
