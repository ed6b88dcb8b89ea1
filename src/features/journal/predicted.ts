// The prediction of `sop plan` kept in a run folder (RUN/plan.json, docs/plan.md#predicted-and-realised),
// and usage.json with it: the run's realised usage, and `predicted` beside it when plan.json holds one.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { UsageTotals } from '../../core/runtime/usage.js';

export const PLAN_FILE = 'plan.json';

/** What `sop plan` predicted for the whole run (and, in src/api/plan-calls.ts, the figures of any group of calls). */
export interface PredictedTotals {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Prompt tokens served from the provider's prompt cache. */
  cached_tokens: number;
  /** USD; absent when some call had no price (or the run was not priced). */
  cost?: number;
  /** Wall time in seconds (a prediction: from the plan's throughput profile). */
  seconds: number;
}

const FIELDS = ['calls', 'prompt_tokens', 'completion_tokens', 'cached_tokens', 'cost', 'seconds'] as const;

/** The totals of RUN/plan.json, when it holds a plan (a file of the run folder: read with care, numbers only). */
export function readPredicted(dir: string): PredictedTotals | undefined {
  const file = join(dir, PLAN_FILE);
  try {
    if (statSync(file).size > 16 * 1024 * 1024) return undefined;
    const total = (JSON.parse(readFileSync(file, 'utf8')) as { total?: Record<string, unknown> } | null)?.total;
    if (!total || typeof total !== 'object') return undefined;
    const out: Record<string, number> = {};
    for (const f of FIELDS) if (typeof total[f] === 'number' && Number.isFinite(total[f])) out[f] = total[f];
    return FIELDS.every((f) => f === 'cost' || f in out) ? (out as unknown as PredictedTotals) : undefined;
  } catch {
    return undefined; // no plan, or not one
  }
}

/** usage.json's text: the usage, with `predicted` (from RUN/plan.json) beside it when there is a plan. */
export function usageFileText(dir: string, usage: UsageTotals): string {
  const predicted = readPredicted(dir);
  return JSON.stringify(predicted ? { ...usage, predicted } : usage, null, 2) + '\n';
}
