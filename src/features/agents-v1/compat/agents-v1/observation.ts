// What an agent observes at its turn under Agents 1.0 semantics (docs/agents-v1-semantics.md §3.8): a window of
// the shared history (all of it when cooperative, since the state's begin turn when
// competitive), cut to the last MAX_CHAT_HISTORY - 1 messages when longer than MAX; candidates
// for relevant memory (the window minus its last two messages, queried with the last one); and
// the new conversation (what came after the agent's own last message in the window).
import type { Visibility } from '../../../../core/environment/environment.js';
import type { Message } from '../../../../core/environment/message.js';

export interface ObservationInput {
  messages: readonly Message[];
  /** Index of the first message of the current state's visit (competitive window start). */
  stateStart: number;
  visibility: Visibility;
  maxChatHistory: number;
  agent: string;
}

export interface ObservationParts {
  window: Message[];
  /** Relevant-memory candidates and the query they are compared with (none when the window has one message or less). */
  candidates: Message[];
  query?: Message;
  /** Messages after the agent's last message in the window (the whole window if it has not spoken). */
  conversation: Message[];
}

export function observationParts(i: ObservationInput): ObservationParts {
  const start = i.visibility === 'competitive' ? Math.min(i.stateStart, i.messages.length) : 0;
  let window = i.messages.slice(start);
  if (window.length > i.maxChatHistory) window = window.slice(window.length - Math.max(1, i.maxChatHistory - 1));
  const query = window.length > 1 ? window[window.length - 1] : undefined;
  const candidates = query ? window.slice(0, -2) : [];
  let last = -1;
  for (let k = window.length - 1; k >= 0; k--)
    if (window[k]!.sender === i.agent) {
      last = k;
      break;
    }
  return { window, candidates, query, conversation: window.slice(last + 1) };
}

/** Indices of the k candidates most cosine-similar to the query (vectors are unit length), best first. */
export function topKBySimilarity(query: Float32Array, candidates: readonly Float32Array[], k: number): number[] {
  if (k <= 0 || candidates.length === 0) return [];
  const scored = candidates.map((v, index) => {
    let dot = 0;
    for (let d = 0; d < v.length && d < query.length; d++) dot += v[d]! * query[d]!;
    return { index, dot };
  });
  scored.sort((a, b) => b.dot - a.dot || a.index - b.index);
  return scored.slice(0, Math.min(k, scored.length)).map((s) => s.index);
}
