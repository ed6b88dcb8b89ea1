// sop import (Agents 1.0): a state's controller block converted into a SOP controller (order,
// random or rule; the judge of a state with two or more transitions, the router of a rule state).
import type { LlmSettings, SopController } from '../../../format/sop/types.js';
import { literalText, type ImportLog, type KeyPath } from './import-log.js';
import { isObject } from '../../../shared/util/is-object.js';

const CONTROLLER_KEYS = new Set([
  'controller_type',
  'max_chat_nums',
  'judge_system_prompt',
  'judge_last_prompt',
  'judge_extract_words',
  'call_system_prompt',
  'call_last_prompt',
  'call_extract_words',
]);
const TAG = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

export function convertController(
  name: string,
  value: unknown,
  successors: number,
  roleCount: number,
  c: { log: ImportLog; god: LlmSettings | undefined },
): SopController | undefined {
  const { log } = c;
  const at = (...rest: string[]): KeyPath => ['states', name, 'controller', ...rest];
  const needsJudge = successors >= 2;
  if (value === undefined) {
    if (needsJudge || roleCount > 1)
      log.warn(['states', name], 'has no controller (Agents 1.0 fails when it needs one); sop uses an order controller');
    return needsJudge && c.god ? { llm: c.god } : undefined;
  }
  if (!isObject(value)) {
    log.warn(at(), 'must be an object; using an order controller');
    return undefined;
  }
  for (const key of Object.keys(value)) if (!CONTROLLER_KEYS.has(key)) log.warn(at(key), 'unknown controller key; not carried');
  const out: Record<string, unknown> = {};
  const type = value.controller_type ?? 'order';
  if (type !== 'order' && type !== 'random' && type !== 'rule') {
    log.error(at('controller_type'), `must be "order", "random" or "rule", got ${JSON.stringify(type)} (Agents 1.0 fails on it)`);
  } else {
    out.type = type;
  }
  if (value.max_chat_nums !== undefined) {
    const n = value.max_chat_nums;
    if (typeof n !== 'number' || !Number.isInteger(n)) log.warn(at('max_chat_nums'), 'must be a whole number; not carried');
    else if (n < 1) {
      log.warn(at('max_chat_nums'), `${n} is read as 1 (the state moves on after its first turn, as in Agents 1.0)`);
      out.max_turns = 1;
    } else out.max_turns = n;
  }
  const str = (key: string): string | undefined => (typeof value[key] === 'string' && value[key] !== '' ? value[key] : undefined);
  const word = (key: string): string | undefined => {
    const w = str(key);
    if (w !== undefined && !TAG.test(w)) {
      log.warn(at(key), `must be a tag name (letters, digits, _ . -), got ${JSON.stringify(w)}; using "end"`);
      return undefined;
    }
    return w;
  };
  // Judge.
  const judgeWord = word('judge_extract_words');
  const judge: Record<string, string> = {};
  if (str('judge_system_prompt')) judge.system_prompt = literalText(str('judge_system_prompt')!);
  if (str('judge_last_prompt')) judge.last_prompt = literalText(str('judge_last_prompt')!);
  if (judgeWord && judgeWord !== 'end') judge.extract_word = judgeWord;
  const tag = judgeWord ?? 'end';
  const jl = str('judge_last_prompt');
  if (jl && jl.includes(`<${tag}>`) && !jl.includes(`</${tag}>`)) {
    log.warn(
      at('judge_last_prompt'),
      `shows <${tag}> without a closing </${tag}>, so a judge copying it gives a reply that cannot be read (sop then stays, as Agents 1.0 did)`,
    );
  }
  if (needsJudge) {
    if (Object.keys(judge).length > 0) out.judge = judge;
  } else if (judge.system_prompt || judge.last_prompt) {
    log.warn(
      at(judge.system_prompt ? 'judge_system_prompt' : 'judge_last_prompt'),
      'the judge is consulted only in states with two or more transitions; unused here',
    );
  }
  // Router (rule).
  const speaker: Record<string, string> = {};
  const callWord = word('call_extract_words');
  if (str('call_system_prompt')) speaker.system_prompt = literalText(str('call_system_prompt')!);
  if (str('call_last_prompt')) speaker.last_prompt = literalText(str('call_last_prompt')!);
  if (callWord && callWord !== 'end') speaker.extract_word = callWord;
  if (type === 'rule') {
    if (speaker.last_prompt)
      log.warn(
        at('call_last_prompt'),
        'Agents 1.0 never sent call_last_prompt (it was overwritten); sop includes it, --compat agents-v1 drops it',
      );
    if (speaker.extract_word)
      log.warn(
        at('call_extract_words'),
        `Agents 1.0 always asked for <end> tags, so replies rarely carried <${speaker.extract_word}> and the speaker was picked at random; sop asks for <${speaker.extract_word}> (--compat agents-v1 asks for <end>)`,
      );
    if (Object.keys(speaker).length > 0) out.speaker = speaker;
  } else if (speaker.system_prompt || speaker.last_prompt) {
    log.warn(
      at(speaker.system_prompt ? 'call_system_prompt' : 'call_last_prompt'),
      `call_* prompts are used only by controller_type "rule" (this one is "${String(type)}"); unused`,
    );
  }
  if (c.god && (needsJudge || (type === 'rule' && roleCount > 1))) out.llm = c.god;
  return out;
}
