// The recent window as chat messages. An agent's own message is its assistant turn, another's a
// user message (a line of the `agent_message` template). When the call offers the state's
// commands as function tools, the agent's command and the result that follows it also carry their
// native form (src/core/llm/types.ts: an assistant `tool_calls` turn and a `tool` message), which a
// provider that sends the tools uses; the JSON command text stays the form everything else reads.
import type { Message } from '../environment/message.js';
import type { ChatMessage } from '../llm/types.js';

/** A recorded command reply: `{"command": NAME, "command_args": {...}}` and nothing else. */
function commandOf(content: string): { name: string; args: string } | undefined {
  const text = content.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const { command, command_args: args } = v as { command?: unknown; command_args?: unknown };
    if (typeof command !== 'string' || command === '') return undefined;
    return { name: command, args: JSON.stringify(args ?? {}) };
  } catch {
    return undefined;
  }
}

/**
 * `window` as `agent` is shown it; with `tools`, each of its commands directly followed by the
 * command's result (the `action` message of the same turn from that command) carries the native
 * form of both, the call named by the command message's id.
 */
export function windowAsChat(window: readonly Message[], agent: string, line: (m: Message) => string, tools: boolean): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < window.length; i++) {
    const m = window[i]!;
    if (m.sender !== agent) {
      out.push({ role: 'user', content: line(m) });
      continue;
    }
    const own: ChatMessage = { role: 'assistant', content: m.content };
    out.push(own);
    const next = window[i + 1];
    if (!tools || next === undefined || next.kind !== 'action' || next.turn !== m.turn || m.kind === 'action') continue;
    const call = commandOf(m.content);
    if (call === undefined || call.name !== next.sender) continue;
    const id = `call_${m.id}`;
    own.native = { role: 'assistant', toolCalls: [{ id, name: call.name, arguments: call.args }] };
    out.push({ role: 'user', content: line(next), native: { role: 'tool', toolCallId: id, content: next.content } });
    i++;
  }
  return out;
}
