// Events of a run: what listeners (terminal, --json, run folder, journal) are told, in order.
import type { Message } from '../environment/message.js';
import type { CallPurpose, Usage } from '../llm/types.js';

export type RunEvent =
  | { type: 'run_started'; run_id: string; sop: string; file: string; root: string; seed: number; inputs: Record<string, string>; llm: string; time: string }
  | { type: 'state_entered'; state: string; from?: string; turn: number; reason: 'root' | 'judge' | 'max_turns' | 'direct' }
  | { type: 'speaker_chosen'; state: string; agent: string; role: string; turn: number; how: 'begin' | 'order' | 'random' | 'rule' | 'rule_fallback' | 'single' }
  | { type: 'llm_call'; purpose: CallPurpose; state: string; agent?: string; turn: number; model: string; usage: Usage; ms: number; prompt_chars: number; reply: string }
  | { type: 'delta'; agent: string; text: string }
  | { type: 'message'; message: Message }
  | { type: 'judge'; state: string; turn: number; key: string; target: string; fallback: boolean }
  | { type: 'summary'; state: string; turn: number; after_messages: number; summary: string }
  | { type: 'warning'; message: string }
  | { type: 'run_finished'; status: 'finished' | 'max_turns' | 'failed' | 'interrupted'; turns: number; final_state?: string; error?: string; usage: UsageTotals; time: string };

export interface UsageTotals {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  by_purpose: Partial<Record<CallPurpose, { calls: number; prompt_tokens: number; completion_tokens: number }>>;
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

export type RunListener = (event: RunEvent) => void;
