// A provider whose calls go through `around` (tracing makes a span of each; Agents 1.0 concise
// mode changes the request): everything else (id, cassette position, close) is the inner provider's.
import { stepOver, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';

/** Wraps one call: `call()` sends the request as it is, `call(changed)` sends another one instead. */
export type AroundCall = (request: ChatRequest, call: (request?: ChatRequest) => Promise<ChatResponse>) => Promise<ChatResponse>;

export class WrappedProvider implements LlmProvider {
  constructor(
    private readonly inner: LlmProvider,
    private readonly around: AroundCall,
  ) {}

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
  chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
    return this.around(request, (changed = request) => this.inner.chat(changed, options));
  }
}
