// Per-agent memory of a population state: each agent's own last actions (with what they did) and
// its last observations, bounded, so an agent's prompt stays the same size over steps however long
// the run. Kept only for agents that have acted; saved in the state's checkpoint.

export interface AgentMemoryEntry {
  /** "step 3: repost p12 -> reposted p12 as p40" */
  actions: string[];
  observations: string[];
}

export class AgentMemory {
  private readonly byAgent = new Map<string, AgentMemoryEntry>();

  constructor(private readonly limits: { actions: number; observations: number }) {}

  of(agent: string): AgentMemoryEntry {
    return this.byAgent.get(agent) ?? { actions: [], observations: [] };
  }

  /** What an agent did at a step, and what it did to the world. */
  noteAction(agent: string, line: string): void {
    if (this.limits.actions === 0) return;
    const m = this.entry(agent);
    m.actions.push(line);
    if (m.actions.length > this.limits.actions) m.actions.splice(0, m.actions.length - this.limits.actions);
  }

  /** What an agent saw at a step (kept only when agent_memory.observations > 0). */
  noteObservation(agent: string, text: string): void {
    if (this.limits.observations === 0) return;
    const m = this.entry(agent);
    m.observations.push(text);
    if (m.observations.length > this.limits.observations) m.observations.splice(0, m.observations.length - this.limits.observations);
  }

  /** The memory as text for a prompt ("" when the agent has none). */
  text(agent: string): string {
    const m = this.byAgent.get(agent);
    if (!m) return '';
    const parts: string[] = [];
    if (m.actions.length > 0) parts.push(`Your last actions:\n${m.actions.map((a) => `- ${a}`).join('\n')}`);
    if (m.observations.length > 0) parts.push(`What you saw before:\n${m.observations.map((o) => `- ${o}`).join('\n')}`);
    return parts.join('\n');
  }

  save(): Record<string, AgentMemoryEntry> {
    return Object.fromEntries(this.byAgent);
  }

  restore(saved: unknown): void {
    this.byAgent.clear();
    if (!saved || typeof saved !== 'object') return;
    for (const [agent, m] of Object.entries(saved as Record<string, AgentMemoryEntry>))
      this.byAgent.set(agent, { actions: [...(m.actions ?? [])], observations: [...(m.observations ?? [])] });
  }

  private entry(agent: string): AgentMemoryEntry {
    let m = this.byAgent.get(agent);
    if (!m) this.byAgent.set(agent, (m = { actions: [], observations: [] }));
    return m;
  }
}
