// A SIMULATED provider prompt cache for the benches: wraps a provider and reports, as the
// response's `usage.cachedTokens` (what the openai provider reads from
// `usage.prompt_tokens_details.cached_tokens`), the longest byte-identical prefix this prompt
// shares with any of the last `size` prompts sent, in the mock's token estimate (4 characters a
// token). No real provider is involved: it is an upper bound of what a prefix cache could serve,
// with no minimum length and a 1-token granularity. `openaiRule` applies OpenAI's documented
// rule on top (only prompts of 1,024 tokens or more are cached, in steps of 128 tokens).
import { commonPrefix, promptBytes } from './engine.mjs';

export class PrefixCacheProvider {
  constructor(inner, { size = 32, openaiRule = false } = {}) {
    this.inner = inner;
    this.id = inner.id;
    this.size = size;
    this.openaiRule = openaiRule;
    this.recent = [];
  }

  get position() {
    return this.inner.position;
  }
  seek(cursor) {
    return this.inner.seek?.(cursor);
  }
  close() {
    return this.inner.close?.();
  }

  async chat(request, options) {
    const bytes = promptBytes(request.messages);
    let longest = 0;
    for (const earlier of this.recent) longest = Math.max(longest, commonPrefix(earlier, bytes));
    this.recent.push(bytes);
    if (this.recent.length > this.size) this.recent.shift();
    const response = await this.inner.chat(request, options);
    let cached = Math.min(Math.floor(longest / 4), response.usage.promptTokens);
    if (this.openaiRule) cached = response.usage.promptTokens >= 1024 && cached >= 1024 ? cached - (cached % 128) : 0;
    return { ...response, usage: { ...response.usage, cachedTokens: cached } };
  }
}
