// rule: the state's controller LLM reads the conversation and names the next role; a reply that
// names no known role falls back to a seeded random pick, with a warning.
import { renderPrompts } from '../../prompt/prompt-texts.js';
import { parseSpeakerReply } from '../controller.js';
import { askController } from './conversation.js';
import type { ControllerStrategy } from './types.js';

export const rule: ControllerStrategy = {
  type: 'rule',
  async pick(state, rt, c) {
    const speaker = renderPrompts(state.def.controller?.speaker ?? {}, c.promptContext(state), `/states/${state.name}/controller/speaker`);
    const extractWord = speaker.extract_word ?? 'end';
    const ctx = {
      ...c.promptContext(state),
      // Agents 1.0 (reference quirk 22): call_last_prompt is not sent and the choices always ask for <end>.
      ...(c.semantics.speakerAsksEnd
        ? { speaker: { ...speaker, last_prompt: undefined }, extract_word: 'end' }
        : { speaker, extract_word: extractWord }),
      roles: state.roles.map((role) => ({ role, agent: state.roleToAgent[role] })),
    };
    const reply = await askController(c, state, 'speaker', ctx, { turnInState: rt.chatNums, candidates: state.roles, extractWord });
    const picked = parseSpeakerReply(reply, extractWord, state.roles, c.rng);
    return {
      role: picked.role,
      how: picked.fallback ? 'rule_fallback' : 'rule',
      ...(picked.fallback
        ? { warning: `speaker choice in state "${state.name}" named no known role; picked ${picked.role} at random` }
        : {}),
    };
  },
};
