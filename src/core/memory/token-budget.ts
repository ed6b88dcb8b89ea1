// The token budget of one prompt. The system prompt and the last prompt (the query) always stay;
// what does not fit goes, oldest first:
//   1. retrieved earlier messages, oldest first;
//   2. messages of the recent window, oldest first, down to the newest one;
//   3. the summary;
//   4. the newest window message.
// Pure: the caller renders and counts a candidate prompt with `measure`.

export interface PromptPlan<M extends { id: number }> {
  summary: string;
  /** Retrieved messages in display order (most similar first). */
  relevant: M[];
  /** Recent window, oldest first. */
  window: M[];
}

export interface TrimResult<M extends { id: number }> {
  plan: PromptPlan<M>;
  tokens: number;
  /** False when even the system and last prompts alone exceed the budget. */
  fits: boolean;
  dropped: { relevant: number; window: number; summary: boolean };
}

export function trimToBudget<M extends { id: number }>(
  plan: PromptPlan<M>,
  budget: number,
  measure: (plan: PromptPlan<M>) => number,
): TrimResult<M> {
  let current: PromptPlan<M> = { summary: plan.summary, relevant: [...plan.relevant], window: [...plan.window] };
  const dropped = { relevant: 0, window: 0, summary: false };
  let tokens = measure(current);
  while (tokens > budget) {
    if (current.relevant.length > 0) {
      let oldest = 0;
      for (let i = 1; i < current.relevant.length; i++) if (current.relevant[i]!.id < current.relevant[oldest]!.id) oldest = i;
      current = { ...current, relevant: current.relevant.filter((_, i) => i !== oldest) };
      dropped.relevant++;
    } else if (current.window.length > 1) {
      current = { ...current, window: current.window.slice(1) };
      dropped.window++;
    } else if (current.summary) {
      current = { ...current, summary: '' };
      dropped.summary = true;
    } else if (current.window.length === 1) {
      current = { ...current, window: [] };
      dropped.window++;
    } else {
      return { plan: current, tokens, fits: false, dropped };
    }
    tokens = measure(current);
  }
  return { plan: current, tokens, fits: true, dropped };
}

/** Turns at which prompt sizes are sampled: 10, 20, 50, 100, 200, 500, 1000, ... */
export function isSampleTurn(turn: number): boolean {
  if (turn < 10) return false;
  let t = turn;
  while (t % 10 === 0) t /= 10;
  return t === 1 || t === 2 || t === 5;
}
