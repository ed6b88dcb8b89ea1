// Command-line overrides of the SOP's memory settings (--embedder, --top-k, --max-chat-history).
// They win over the SOP: --max-chat-history replaces the environment's window and every state's.
import { parseEmbedderSpec } from '../memory/create-embedder.js';
import type { Sop } from '../../format/sop/types.js';
import { EngineError, opt, say } from '../../shared/errors.js';

export interface MemoryOverrides {
  embedder?: string;
  topK?: number;
  maxChatHistory?: number;
}

/** The SOP with the overrides applied (the same object when there are none). Throws on bad values. */
export function applyMemoryOverrides(sop: Sop, o: MemoryOverrides): Sop {
  if (o.embedder === undefined && o.topK === undefined && o.maxChatHistory === undefined) return sop;
  if (o.topK !== undefined && (!Number.isInteger(o.topK) || o.topK < 0))
    throw new EngineError(say`${opt('topK')} must be a whole number >= 0, got ${o.topK}`, 'OPTION');
  if (o.maxChatHistory !== undefined && (!Number.isInteger(o.maxChatHistory) || o.maxChatHistory < 1)) {
    throw new EngineError(say`${opt('maxChatHistory')} must be a whole number >= 1, got ${o.maxChatHistory}`, 'OPTION');
  }
  if (o.embedder !== undefined) parseEmbedderSpec(o.embedder);
  const environment = { ...sop.environment };
  if (o.embedder !== undefined) environment.embedder = o.embedder;
  if (o.topK !== undefined) environment.top_k = o.topK;
  let states = sop.states;
  if (o.maxChatHistory !== undefined) {
    environment.max_chat_history = o.maxChatHistory;
    states = Object.fromEntries<Sop['states'][string]>(
      Object.entries(sop.states).map(([name, st]) => {
        if (st.max_chat_history === undefined) return [name, st];
        const { max_chat_history: _dropped, ...rest } = st;
        return [name, rest];
      }),
    );
  }
  return { ...sop, environment, states };
}
