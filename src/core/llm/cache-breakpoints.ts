// Anthropic-style prompt-cache breakpoints on an OpenAI-compatible request, for a server whose LLM
// block declares it takes them (`llm.cache_breakpoints`: OpenRouter and LiteLLM pass
// `cache_control` on content parts through to Claude models). A breakpoint marks the end of a
// stable part of the prompt; the provider caches the prefix up to it. At most 4 are taken (the
// provider's limit): the call's own (`meta.cacheBreaks`, message indexes), else after the system message.
import type { CallMeta } from './types.js';

/** The most breakpoints one request may carry. */
export const MAX_BREAKPOINTS = 4;

type TextPart = { type: 'text'; text: string; cache_control?: { type: 'ephemeral' } };

/** The messages with `cache_control` on the last content part of each breakpoint's message (those with text content). */
export function withBreakpoints<M extends { role: string; content?: unknown }>(messages: M[], meta: Pick<CallMeta, 'cacheBreaks'>): M[] {
  const wanted = meta.cacheBreaks ?? (messages[0]?.role === 'system' ? [0] : []);
  const at = [...new Set(wanted)]
    .filter((i) => Number.isInteger(i) && i >= 0 && i < messages.length && typeof messages[i]!.content === 'string')
    .sort((a, b) => a - b)
    .slice(-MAX_BREAKPOINTS);
  if (at.length === 0) return messages;
  const out = [...messages];
  for (const i of at) {
    const m = out[i]!;
    const parts: TextPart[] = [{ type: 'text', text: m.content as string, cache_control: { type: 'ephemeral' } }];
    out[i] = { ...m, content: parts };
  }
  return out;
}
