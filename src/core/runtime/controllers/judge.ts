// The judge: when no rule decides where a state goes next (a lone "0" successor, max_turns), the
// state's controller LLM reads the conversation and the summary and answers a next_states key.
import { renderPrompts } from '../../prompt/prompt-texts.js';
import type { ResolvedState } from '../../../format/sop/resolved.js';
import { parseJudgeReply, targetOf, type StateRuntime } from '../controller.js';
import { askController } from './conversation.js';
import type { ControllerContext } from './types.js';

export interface JudgeAnswer {
  key: string;
  target: string;
  /** The key names a transition (else the state stays). */
  known: boolean;
}

export async function askJudge(state: ResolvedState, rt: StateRuntime, c: ControllerContext, summary: string): Promise<JudgeAnswer> {
  const judge = state.def.controller?.judge ?? {};
  const extractWord = judge.extract_word ?? 'end';
  const keys = Object.keys(state.nextStates).sort();
  if (!keys.includes('0')) keys.unshift('0');
  const base = c.promptContext(state);
  const ctx = {
    ...base,
    judge: renderPrompts(judge, base, `/states/${state.name}/controller/judge`),
    extract_word: extractWord,
    keys: keys.map((key) => ({ key, target: state.nextStates[key] ?? state.name })),
    summary,
  };
  const reply = await askController(c, state, 'judge', ctx, { turnInState: rt.chatNums, judgeKeys: keys, extractWord });
  const key = parseJudgeReply(reply, extractWord);
  return { key, ...targetOf(state.nextStates, key, state.name) };
}
