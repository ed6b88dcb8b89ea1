// Paid LLM calls a kill lost: journaled as `llm_call_started` (written before the request went
// out) with no `llm_call` (its reply) in the same attempt, which then ended without a
// `run_finished` line. A resume counts them in usage (`lost`): they were likely paid for, and
// the redone turn pays for them again.
import type { RunEvent } from '../../core/runtime/events.js';
import type { LostCall } from '../../core/runtime/usage.js';

type Obj = Record<string, unknown>;

function innermost(e: RunEvent): Obj {
  let cur = e as unknown as Obj;
  for (let d = 0; d < 32 && cur.type === 'subflow' && typeof cur.event === 'object' && cur.event !== null; d++) cur = cur.event as Obj;
  return cur;
}

/**
 * The lost calls among `events` (every line of the journal after the checkpoint a resume
 * continues from). Each attempt (up to a `resumed` line, or the end) is looked at on its own; an
 * attempt that wrote `run_finished` ended knowing of its calls (an error, Ctrl-C) and has none.
 */
export function lostCalls(events: readonly RunEvent[]): LostCall[] {
  const lost: LostCall[] = [];
  let started = new Map<string, LostCall>();
  let finished = false;
  const endAttempt = () => {
    if (!finished) lost.push(...started.values());
    started = new Map();
    finished = false;
  };
  for (const e of events) {
    if (e.type === 'resumed') {
      endAttempt();
      continue;
    }
    if (e.type === 'run_finished') finished = true;
    const inner = innermost(e);
    if (typeof inner.effect !== 'string') continue;
    if (inner.type === 'llm_call') started.delete(inner.effect);
    else if (inner.type === 'llm_call_started') {
      const c = inner as Extract<RunEvent, { type: 'llm_call_started' }>;
      if (typeof c.prompt_tokens !== 'number' || typeof c.model !== 'string') continue;
      started.set(c.effect, {
        purpose: c.purpose,
        model: c.model,
        prompt_tokens: c.prompt_tokens,
        ...(typeof c.agent === 'string' ? { agent: c.agent } : {}),
        ...(typeof c.cost_usd === 'number' ? { cost_usd: c.cost_usd } : {}),
      });
    }
  }
  endAttempt();
  return lost;
}
