// A provider whose calls go through `around` (tracing makes a span of each; Agents 1.0 concise
// mode changes the request): everything else (id, cassette position, close) is the inner provider's.
import type { ChatOptions, ChatRequest, ChatResponse, LlmProvider } from './types.js';
import { DelegatingProvider } from './delegating.js';

/** Wraps one call: `call()` sends the request as it is, `call(changed)` sends another one instead. */
export type AroundCall = (request: ChatRequest, call: (request?: ChatRequest) => Promise<ChatResponse>) => Promise<ChatResponse>;

export class WrappedProvider extends DelegatingProvider {
  constructor(
    inner: LlmProvider,
    private readonly around: AroundCall,
  ) {
    super(inner);
  }

  chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
    return this.around(request, (changed = request) => this.inner.chat(changed, options));
  }
}
