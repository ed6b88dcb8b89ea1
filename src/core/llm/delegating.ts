// A provider that wraps another (an interruptible, a limited or a wrapped one): all but `chat` is the
// inner provider's (its id, price flags, cassette position, close).
import { stepOver, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';

export abstract class DelegatingProvider implements LlmProvider {
  constructor(protected readonly inner: LlmProvider) {}

  get id(): string {
    return this.inner.id;
  }
  get paid(): boolean | undefined {
    return this.inner.paid;
  }
  get free(): boolean | undefined {
    return this.inner.free;
  }
  get describe(): string | undefined {
    return this.inner.describe;
  }
  get position(): number | undefined {
    return this.inner.position;
  }
  seek(position: number): void {
    this.inner.seek?.(position);
  }
  reused(request: ChatRequest, response: ChatResponse): void {
    stepOver(this.inner, request, response);
  }
  async close(): Promise<void> {
    await this.inner.close?.();
  }

  abstract chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse>;
}
