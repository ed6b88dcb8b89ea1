// Token and call totals of a run, by purpose (journaled in checkpoints and run_finished).
import type { CallPurpose, Usage } from '../llm/types.js';

export interface UsageTotals {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  by_purpose: Partial<Record<CallPurpose, { calls: number; prompt_tokens: number; completion_tokens: number }>>;
  /** Prompt tokens of the latest agent call as of turns 10, 20, 50, 100, 200, 500, ... (memory: flat prompts). */
  agent_prompt_tokens_at_turn?: Record<string, number>;
  /** Prompt tokens of the latest agent call (kept here so a resumed run samples the same values). */
  agent_prompt_tokens_last?: number;
}

export function emptyUsage(): UsageTotals {
  return { calls: 0, prompt_tokens: 0, completion_tokens: 0, by_purpose: {} };
}

export function addUsage(t: UsageTotals, purpose: CallPurpose, u: Usage): void {
  t.calls++;
  t.prompt_tokens += u.promptTokens;
  t.completion_tokens += u.completionTokens;
  const p = (t.by_purpose[purpose] ??= { calls: 0, prompt_tokens: 0, completion_tokens: 0 });
  p.calls++;
  p.prompt_tokens += u.promptTokens;
  p.completion_tokens += u.completionTokens;
}
