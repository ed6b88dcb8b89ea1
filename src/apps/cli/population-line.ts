// What the terminal shows of a population step: one line with the clock, how many agents acted,
// what they did (counts by action; actions the world refused and replies that were not actions),
// and the step's main metrics. The whole step is in the journal and in `sop query`.
import type { RunEvent } from '../../core/runtime/events.js';

type StepEvent = Extract<RunEvent, { type: 'population_step' }>;

/** At most this many metrics on the line (the world's first ones: active users, posts, reposts, ...). */
const METRICS_SHOWN = 6;

const figure = (v: number | null): string => (v === null ? '-' : Number.isInteger(v) ? String(v) : v.toFixed(3));

export function populationStepLine(e: StepEvent): string {
  const byName = new Map<string, number>();
  let refused = 0;
  let invalid = 0;
  for (const a of e.actions) {
    if (a.tier === 'injected') continue;
    if (a.name === 'invalid') invalid++;
    else if (!a.ok) refused++;
    else byName.set(a.name, (byName.get(a.name) ?? 0) + 1);
  }
  const did =
    [...byName]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, n]) => `${n} ${name}`)
      .join(', ') || 'nothing';
  const problems = [refused ? `${refused} refused` : '', invalid ? `${invalid} not valid actions` : ''].filter(Boolean).join(', ');
  const metrics = Object.entries(e.metrics)
    .filter(([k]) => !k.includes('.'))
    .slice(0, METRICS_SHOWN)
    .map(([k, v]) => `${k} ${figure(v)}`)
    .join(' · ');
  return `step ${e.step} (${e.clock}): ${e.active} acted: ${did}${problems ? ` (${problems})` : ''}${metrics ? ` | ${metrics}` : ''}`;
}

type BatchEvent = Extract<RunEvent, { type: 'batch' }>;

/** What the terminal shows of a step's batch: its id, status and progress. */
export function batchLine(e: BatchEvent): string {
  const done = e.completed !== undefined ? `, ${e.completed} of ${e.calls} done${e.failed ? `, ${e.failed} failed` : ''}` : '';
  const what =
    e.status === 'submitted' ? `sent (${e.calls} calls)` : e.status === 'resumed' ? `waited for again (${e.calls} calls)` : e.status;
  return `batch ${e.id} of state "${e.state}" step ${e.step}: ${what}${done}`;
}
