// A run's final population metrics (docs/sweep.md#results): for each population state it
// visited, the metrics after its last step (of its last visit), as results.jsonl and the
// sweep's database carry them, so a sweep is data without a query per run.
import type { RunEvent } from '../../core/runtime/events.js';
import { stepEvent } from '../../features/population/results.js';

/** State -> metric name -> value (null: the metric had no value at that step). */
export type FinalMetrics = Record<string, Record<string, number | null>>;

/** Keeps the last population step's metrics of each state, as events arrive. */
export class FinalMetricsCollector {
  private readonly last = new Map<string, Record<string, number | null>>();

  readonly listener = (e: RunEvent): void => {
    if (e.type !== 'population_step') return;
    const s = stepEvent(e);
    if (s && typeof s.metrics === 'object' && s.metrics !== null) this.last.set(s.state, s.metrics);
  };

  metrics(): FinalMetrics {
    const out: FinalMetrics = {};
    for (const [state, m] of this.last) {
      const clean: Record<string, number | null> = {};
      for (const [k, v] of Object.entries(m)) clean[k] = typeof v === 'number' && Number.isFinite(v) ? v : null;
      out[state] = clean;
    }
    return out;
  }
}

/** The final metrics of a run's events (its journal's effective history). */
export function finalMetrics(events: readonly RunEvent[]): FinalMetrics {
  const c = new FinalMetricsCollector();
  for (const e of events) c.listener(e);
  return c.metrics();
}
