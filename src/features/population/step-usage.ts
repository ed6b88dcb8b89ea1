// What a population step's calls added to the run's usage (the `usage` of its population_step event).
import type { RunEvent } from '../../core/runtime/events.js';
import type { UsageTotals } from '../../core/runtime/usage.js';

type Counts = { calls: number; prompt_tokens: number; completion_tokens: number; cached_tokens: number };
export const usageCounts = (u: UsageTotals): Counts => ({
  calls: u.calls,
  prompt_tokens: u.prompt_tokens,
  completion_tokens: u.completion_tokens,
  cached_tokens: u.cached_tokens ?? 0,
});

/** What a step's calls added to the run's usage. */
export function usageSince(a: Counts, b: Counts): NonNullable<Extract<RunEvent, { type: 'population_step' }>['usage']> {
  const cached = b.cached_tokens - a.cached_tokens;
  return {
    calls: b.calls - a.calls,
    prompt_tokens: b.prompt_tokens - a.prompt_tokens,
    completion_tokens: b.completion_tokens - a.completion_tokens,
    ...(cached > 0 ? { cached_tokens: cached } : {}),
  };
}
