// A message of the shared history.

export type MessageKind = 'speech' | 'begin' | 'human' | 'action';

export interface Message {
  /** Position in the shared history (0-based). */
  id: number;
  /** Global turn number (1-based). */
  turn: number;
  state: string;
  sender: string;
  role: string;
  content: string;
  kind: MessageKind;
  timestamp: string;
  /** The agents who may see it (absent: everyone); see src/core/environment/audience.ts. */
  audience?: string[];
  /** Whom it was declared to (a group, "self", an agent, "all"), when its state or a <to> tag said so. */
  to?: string;
  /** Output tags recorded as structured data (a state's `audience.ROLE.data`), e.g. {"vote": "Bo"}. */
  data?: Record<string, string>;
}

export interface RenderedMessage {
  name: string;
  role: string;
  content: string;
  /**
   * Whom a message not for everyone was for, as the reader is told it: a group (`wolves`), agents
   * (`Cy, Dee`) with the reader as `you`, or `self` (the sender's private note). Absent: everyone.
   */
  to?: string;
}

/** A message as templates show it to `viewer` (absent: a judge, a speaker choice, a summariser). */
export function renderMessage(m: Message, viewer?: string): RenderedMessage {
  const out: RenderedMessage = { name: viewer !== undefined && m.sender === viewer ? 'you' : m.sender, role: m.role, content: m.content };
  if (m.to !== undefined)
    out.to = m.to
      .split(',')
      .map((n) => (viewer !== undefined && n.trim() === viewer ? 'you' : n.trim()))
      .join(', ');
  return out;
}
