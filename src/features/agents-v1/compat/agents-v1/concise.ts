// Concise mode of Agents 1.0 (ACTIVE_MODE "0", docs/agents-v1-semantics.md §4 and §5 #45): a fixed request for
// short replies is added to the system prompt of every call (a system message is created if
// there is none) and to the end of the last prompt of calls that have one.
import type { CallMeta, ChatRequest, LlmProvider } from '../../../../core/llm/types.js';
import { WrappedProvider } from '../../../../core/llm/wrapped.js';

/** A fixed request for short replies added to the system prompt and, where the call has one, the last prompt. */
function concise(request: ChatRequest, sentence: string, hasLastPrompt: (meta: CallMeta) => boolean): ChatRequest {
  const messages = request.messages.map((m) => ({ ...m }));
  if (messages[0]?.role === 'system') messages[0].content = `${messages[0].content}\n${sentence}`;
  else messages.unshift({ role: 'system', content: sentence });
  const final = messages[messages.length - 1]!;
  if (messages.length > 1 && hasLastPrompt(request.meta)) final.content = `${final.content}\n${sentence}`;
  return { ...request, messages };
}

/** The provider a run of `sop` uses: wrapped for concise mode when its agents_v1 settings ask for it. */
export function withConcise(llm: LlmProvider, sentence: string | undefined, judgeHasLastPrompt: (state: string) => boolean): LlmProvider {
  if (!sentence) return llm;
  const hasLastPrompt = (meta: CallMeta) => (meta.purpose === 'judge' ? judgeHasLastPrompt(meta.state) : meta.purpose !== 'summary');
  return new WrappedProvider(llm, (request, call) => call(concise(request, sentence, hasLastPrompt)));
}
