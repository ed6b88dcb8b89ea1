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
  /** The agents who may see it (absent: everyone); see src/environment/audience.ts. */
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
}

export function renderMessage(m: Message, viewer?: string): RenderedMessage {
  return { name: viewer !== undefined && m.sender === viewer ? 'you' : m.sender, role: m.role, content: m.content };
}
