// The state graph of a run page: the SOP's Mermaid diagram with the visited states (and their
// visit counts) and the current state highlighted.
import type { RunEvent } from '../runtime/events.js';
import type { Sop } from '../sop/types.js';
import { toMermaid } from '../sop/graph.js';

export function runMermaid(events: readonly RunEvent[]): string | undefined {
  const started = events[0]?.type === 'run_started' ? events[0] : undefined;
  const doc = started?.document as Sop | undefined;
  if (!doc || typeof doc !== 'object' || !doc.states || typeof doc.states !== 'object') return undefined;
  const visits = new Map<string, number>();
  let current: string | undefined;
  for (const e of events) {
    if (e.type === 'state_entered') {
      visits.set(e.state, (visits.get(e.state) ?? 0) + 1);
      current = e.state;
    }
  }
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
