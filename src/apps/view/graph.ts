// The state graph of a run page: the SOP's Mermaid diagram with the visited states (and their
// visit counts) and the current state highlighted.
import type { RunEvent } from '../../core/runtime/events.js';
import type { Sop } from '../../format/sop/types.js';
import { toMermaid } from '../../format/sop/graph.js';

export function runMermaid(events: readonly RunEvent[]): string | undefined {
  const started = events[0]?.type === 'run_started' ? events[0] : undefined;
  const doc = started?.document as Sop | undefined;
  const isObj = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObj(doc) || !isObj(doc!.states) || !Object.values(doc!.states).every(isObj)) return undefined;
  if (typeof doc!.root !== 'string' || !Object.prototype.hasOwnProperty.call(doc!.states, doc!.root)) return undefined;
  const visits = new Map<string, number>();
  let current: string | undefined;
  for (const e of events) {
    if (e.type === 'state_entered') {
      visits.set(e.state, (visits.get(e.state) ?? 0) + 1);
      current = e.state;
    }
  }
  try {
    return drawn(doc!, visits, current);
  } catch {
    return undefined; // a journal whose SOP document is damaged: the page shows no graph
  }
}

function drawn(doc: Sop, visits: Map<string, number>, current: string | undefined): string {
  return toMermaid(doc, {
    extraLine: (name) => {
      const n = visits.get(name);
      return n ? `visited ${n}×` : undefined;
    },
    classOf: (name) => (name === current ? 'current' : visits.has(name) ? 'visited' : undefined),
    classDefs: {
      visited: 'fill:#e3f2e1,stroke:#2ca02c',
      current: 'fill:#ffd966,stroke:#c60,stroke-width:3px',
    },
  });
}
