// The chat completion request as an OpenAI-compatible server takes it: the messages in their wire
// form (tool calls and results natively when tools are sent), the body with what the model's server
// refused left out, and tool calls read back as the engine's JSON commands. The provider
// (./openai.ts) sends it; a batch file (src/features/batch) holds it as its lines.
import { withBreakpoints } from './cache-breakpoints.js';
import { adaptBody, type Adaptation } from './request-adaptation.js';
import type { ChatMessage, ChatRequest } from './types.js';

/**
 * Tool calls as the command JSON the engine parses ({"command", "command_args"}), one per line;
 * arguments that are not JSON are passed on as they are, so the parse error goes back to the model.
 */
export function toolCallsAsCommands(calls: Array<{ name: string; arguments: string }>): string {
  return calls
    .map((c) => {
      try {
        return JSON.stringify({ command: c.name, command_args: c.arguments.trim() ? (JSON.parse(c.arguments) as unknown) : {} });
      } catch {
        return `{"command": ${JSON.stringify(c.name)}, "command_args": ${c.arguments}}`;
      }
    })
    .join('\n');
}

type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** The messages as the server takes them: with `tools`, their native form where they have one (src/core/llm/types.ts). */
export function wireMessages(messages: readonly ChatMessage[], tools: boolean): WireMessage[] {
  return messages.map((m): WireMessage => {
    const n = tools ? m.native : undefined;
    if (n === undefined) return { role: m.role, content: m.content };
    if (n.role === 'assistant')
      return {
        role: 'assistant',
        content: null,
        tool_calls: n.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })),
      };
    if (n.role === 'tool') return { role: 'tool', tool_call_id: n.toolCallId, content: n.content };
    return { role: n.role, content: n.content };
  });
}

/**
 * The body of a chat completion request as the provider sends it (tools included), without what
 * `adaptations` says the model's server refused; also a line of a batch file (src/features/batch).
 */
export function chatRequestBody(request: ChatRequest, adaptations: ReadonlySet<Adaptation> = new Set()) {
  const tools = request.meta.tools;
  const body = {
    model: request.model,
    messages: [] as WireMessage[],
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    // actions: a state's commands offered as function tools (llm.tool_calls)
    ...(tools?.length ? { tools: tools.map((t) => ({ type: 'function' as const, function: t })), tool_choice: 'auto' as const } : {}),
    ...(request.stream ? { stream_options: { include_usage: true } } : {}),
    ...(request.promptCacheKey !== undefined ? { prompt_cache_key: request.promptCacheKey } : {}),
  };
  const sent = adaptBody(body, adaptations);
  // with the tools sent, the native form of each message (tool calls and results); else the JSON command form
  sent.messages = wireMessages(request.messages, sent.tools !== undefined);
  if (request.cacheBreakpoints) sent.messages = withBreakpoints(sent.messages, request.meta);
  return sent;
}
