// The outputs of a run: the last value of every output tag its SOP declares (a component's
// "output": "verdict" keeps the text inside <verdict>...</verdict> of that role's replies).
import type { Message } from '../../core/environment/message.js';
import type { Sop } from '../../format/sop/types.js';

/** Output tag by "state\u0000role", from the SOP's components. */
export function outputTags(sop: Sop): Map<string, string> {
  const tags = new Map<string, string>();
  for (const [state, def] of Object.entries(sop.states)) {
    for (const [role, comps] of Object.entries(def.components ?? {})) {
      const tag = (comps as { output?: unknown }).output;
      if (typeof tag === 'string' && tag) tags.set(`${state}\u0000${role}`, tag);
    }
  }
  return tags;
}

/** The last message of each output tag, keyed by tag. */
export function runOutputs(sop: Sop, messages: readonly Pick<Message, 'state' | 'role' | 'content'>[]): Record<string, string> {
  const tags = outputTags(sop);
  const out: Record<string, string> = {};
  if (tags.size === 0) return out;
  for (const m of messages) {
    const tag = tags.get(`${m.state}\u0000${m.role}`);
    if (tag !== undefined) out[tag] = m.content;
  }
  return out;
}
