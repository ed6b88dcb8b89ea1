// What the controller calls (the judge, the rule speaker choice) are shown of the conversation,
// their two messages (a system prompt and a user prompt, each rendered from its template) and the call.
import { renderMessage } from '../../environment/message.js';
import type { CallMeta, ChatMessage } from '../../llm/types.js';
import type { ResolvedState } from '../../../format/sop/resolved.js';
import type { ControllerContext } from './types.js';

/** The visit's recent messages, the earlier ones related to the last, and the last one again. */
async function conversation(c: ControllerContext, state: ResolvedState) {
  const { history, relevant } = await c.history(state);
  const last = c.last();
  return {
    history: history.map((m) => renderMessage(m)),
    last_message: last ? renderMessage(last) : undefined,
    relevant: relevant.map((m) => renderMessage(m)),
  };
}

function controllerMessages(c: ControllerContext, call: 'judge' | 'speaker', context: object): ChatMessage[] {
  return [
    { role: 'system', content: c.render(`${call}_system`, context) },
    { role: 'user', content: c.render(`${call}_user`, context) },
  ];
}

/**
 * The controller LLM's reply to the judge's or the speaker choice's two messages, rendered from
 * `context` and the conversation so far.
 */
export async function askController(
  c: ControllerContext,
  state: ResolvedState,
  call: 'judge' | 'speaker',
  context: object,
  meta: Omit<CallMeta, 'purpose' | 'state' | 'turn'>,
): Promise<string> {
  const ctx = { ...context, ...(await conversation(c, state)) };
  return c.call(controllerMessages(c, call, ctx), c.llm(state), { purpose: call, state: state.name, turn: c.turn, ...meta });
}
