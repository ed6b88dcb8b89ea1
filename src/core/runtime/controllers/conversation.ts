// What the controller calls (the judge, the rule speaker choice) are shown of the conversation,
// and their two messages: a system prompt and a user prompt, each rendered from its template.
import { renderMessage } from '../../environment/message.js';
import type { ChatMessage } from '../../llm/types.js';
import type { ResolvedState } from '../../../format/sop/resolved.js';
import type { ControllerContext } from './types.js';

/** The visit's recent messages, the earlier ones related to the last, and the last one again. */
export async function conversation(c: ControllerContext, state: ResolvedState) {
  const { history, relevant } = await c.history(state);
  const last = c.last();
  return {
    history: history.map((m) => renderMessage(m)),
    last_message: last ? renderMessage(last) : undefined,
    relevant: relevant.map((m) => renderMessage(m)),
  };
}

export function controllerMessages(c: ControllerContext, call: 'judge' | 'speaker', context: object): ChatMessage[] {
  return [
    { role: 'system', content: c.render(`${call}_system`, context) },
    { role: 'user', content: c.render(`${call}_user`, context) },
  ];
}
