// The prompts of a run as `sop show --prompts` and the viewer read them: each LLM call's prompt,
// put back whole by the reader (src/features/journal/prompts.ts), with the call that answered it.
import type { ChatMessage } from '../../core/llm/types.js';
import type { RunEvent } from '../../core/runtime/events.js';
import { unwrap } from './subflow-wrap.js';

export type PromptEvent = Extract<RunEvent, { type: 'prompt' }>;

/** One LLM call's prompt, as `sop show --prompts` and the viewer read it. */
export interface RecordedPrompt {
  turn: number;
  purpose: string;
  state: string;
  agent?: string;
  /** Sub-flow path ("Coder-1/extend_library-1") of a call made inside a sub-flow. */
  flow?: string;
  messages: ChatMessage[];
  /** Set when part of the prompt could not be rebuilt (a damaged journal line); `messages` is then incomplete. */
  problem?: string;
  /** The call's `llm_call` event (model, usage, ms, reply, effect), absent when the call did not finish. */
  call?: Extract<RunEvent, { type: 'llm_call' }>;
}

/** The prompts of a run's effective history, in order (sub-flows' included, with their flow). */
export function promptsOf(record: { readonly effective: readonly RunEvent[] }): RecordedPrompt[] {
  const out: RecordedPrompt[] = [];
  record.effective.forEach((e, i) => {
    const { inner, flow } = unwrap(e);
    if (inner.type !== 'prompt') return;
    const next = record.effective[i + 1];
    const after = next ? unwrap(next) : undefined;
    const call = after?.inner.type === 'llm_call' && after.flow === flow ? (after.inner as unknown as RecordedPrompt['call']) : undefined;
    const p = inner as unknown as PromptEvent & { problem?: string };
    out.push({
      turn: p.turn,
      purpose: p.purpose,
      state: p.state,
      ...(p.agent !== undefined ? { agent: p.agent } : {}),
      ...(flow ? { flow } : {}),
      messages: p.messages,
      ...(p.problem ? { problem: p.problem } : {}),
      ...(call ? { call } : {}),
    });
  });
  return out;
}

/** The prompts as readable text (sop show --prompts). */
export function formatPrompts(prompts: readonly RecordedPrompt[]): string {
  const parts: string[] = [];
  for (const p of prompts) {
    const who = p.agent ? `, agent ${p.agent}` : '';
    const where = p.flow ? ` (sub-flow ${p.flow})` : '';
    let s = `=== turn ${p.turn}: ${p.purpose} call in state "${p.state}"${who}${where}, ${p.messages.length} messages\n`;
    if (p.problem) s += `(incomplete: ${p.problem})\n`;
    for (const m of p.messages) s += `\n--- ${m.role} ---\n${m.content}\n`;
    parts.push(s);
  }
  return parts.join('\n');
}
