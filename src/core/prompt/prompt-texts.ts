// The system and last prompts of the judge, the speaker choice and the summariser are SOP texts
// like the others: rendered with the run's template values ({{inputs.NAME}}, {{memory.NAME}}, ...)
// before they go into their templates (judge_system, speaker_user, summary_system, ...).
import { renderText } from './templates.js';

export function renderPrompts<T extends { system_prompt?: string; last_prompt?: string }>(prompts: T, context: object, where: string): T {
  const out = { ...prompts };
  if (typeof prompts.system_prompt === 'string') out.system_prompt = renderText(prompts.system_prompt, context, `${where}/system_prompt`);
  if (typeof prompts.last_prompt === 'string') out.last_prompt = renderText(prompts.last_prompt, context, `${where}/last_prompt`);
  return out;
}
