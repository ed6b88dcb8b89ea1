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
}

export interface RenderedMessage {
  name: string;
  role: string;
  content: string;
}

export function renderMessage(m: Message, viewer?: string): RenderedMessage {
  return { name: viewer !== undefined && m.sender === viewer ? 'you' : m.sender, role: m.role, content: m.content };
}
