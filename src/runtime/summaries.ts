// The running summary of the shared history: refreshed every `summary.every` messages by the
// summary LLM (docs/memory.md).
import type { EnvironmentMemory } from '../environment/environment.js';
import { renderMessage } from '../environment/message.js';
import type { CallMeta, ChatMessage } from '../llm/types.js';
import { renderPrompts } from '../prompt/prompt-texts.js';
import type { TemplateSet } from '../prompt/templates.js';
import { summaryLlm, type ResolvedSop, type ResolvedState } from '../sop/resolved.js';
import type { LlmSettings } from '../sop/types.js';
import type { RunEvent } from './events.js';

/** What refreshing the summary needs of the run. */
export interface SummaryHost {
  readonly resolved: ResolvedSop;
  readonly env: EnvironmentMemory;
  readonly templates: TemplateSet;
  /** environment.min_similarity of the SOP. */
  minSimilarity(): number | undefined;
  topK(): number;
  baseContext(): Record<string, unknown>;
  envPrompt(state: ResolvedState): string;
  call(messages: ChatMessage[], settings: LlmSettings, meta: CallMeta): Promise<string>;
  turn(): number;
  emit(event: RunEvent): void;
}

/**
 * Refresh the summary every `summary.every` messages (counted over the whole run), from the
 * previous summary, the messages since then and the earlier messages most similar to the last
 * one, all under the visibility rule. The call is issued as soon as the message is recorded and
 * shown, and awaited before the turn ends: the turn's checkpoint includes the summary, and the
 * next turn's judge and agent prompts need it.
 */
export async function maybeSummarize(host: SummaryHost, state: ResolvedState): Promise<void> {
  const env = host.env;
  const s = state.summary;
  const count = env.messages.length;
  if (!s.enabled || count % s.every !== 0) return;
  const visibleStart = env.visibility === 'competitive' ? env.stateStart : 0;
  const from = Math.max(visibleStart, count - s.every);
  const recent = env.messages.slice(from);
  const relevant = await env.retrieve({
    topK: host.topK(),
    minSimilarity: host.minSimilarity(),
    before: from,
  });
  const base = host.baseContext();
  const ctx = {
    ...base,
    state: { name: state.name },
    environment_prompt: host.envPrompt(state),
    summary: renderPrompts(s, base, state.def.summary ? `/states/${state.name}/summary` : '/environment/summary'),
    previous: env.summary,
    history: recent.map((m) => renderMessage(m)),
    relevant: relevant.map((m) => renderMessage(m)),
  };
  const messages: ChatMessage[] = [
    { role: 'system', content: host.templates.render('summary_system', ctx) },
    { role: 'user', content: host.templates.render('summary_user', ctx) },
  ];
  const reply = await host.call(messages, summaryLlm(host.resolved, state), {
    purpose: 'summary',
    state: state.name,
    turn: host.turn(),
  });
  env.summary = reply.trim();
  host.emit({ type: 'summary', state: state.name, turn: host.turn(), after_messages: count, summary: env.summary });
}
