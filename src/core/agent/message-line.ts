// Another agent's message as a line of an agent's prompt: the `agent_message` template. A message
// stays in the recent window for several turns and is shown to each agent in it, so its line is
// kept with the message and rendered again only when what the render is given differs (a render
// is a pure function of its context: src/prompt/template-reads.ts). When the template reads only
// `message` (the built-in one does), the line is the same for every reader who sees the message
// alike (the sender's name, or `you` in whom it was for); else it is kept per reader, role and state.
import { renderMessage, type Message, type RenderedMessage } from '../environment/message.js';
import type { Render, TemplateSet } from '../prompt/templates.js';

interface Line {
  render: Render;
  message: RenderedMessage;
  text: string;
}

/** Per message, its lines by reader (or by how the message reads, for a template that reads only `message`). */
const lines = new WeakMap<Message, Map<string, Line>>();

const same = (a: RenderedMessage, b: RenderedMessage) => a.name === b.name && a.role === b.role && a.content === b.content && a.to === b.to;

/** `agent`'s line for a message of another (its content kept byte for byte). */
export function messageLine(templates: TemplateSet, agent: string, role: string, state: string): (m: Message) => string {
  const render = templates.get('agent_message');
  const reads = templates.reads('agent_message');
  const reader = reads !== undefined && [...reads].every((k) => k === 'message') ? '' : `${agent}\u0000${role}\u0000${state}`;
  return (m) => {
    const message = renderMessage(m, agent);
    const key = `${reader}\u0000${message.name}\u0000${message.to ?? '\u0001'}`;
    let mine = lines.get(m);
    const kept = mine?.get(key);
    if (kept !== undefined && kept.render === render && same(kept.message, message)) return kept.text;
    const text = render({ message, agent: { name: agent, role }, state: { name: state } }).replace(/\n$/, '');
    if (mine === undefined) lines.set(m, (mine = new Map<string, Line>()));
    mine.set(key, { render, message, text });
    return text;
  };
}
