// Tool slots: services a role consults before it answers (web search, flight offers, product
// search in Agents 1.0 configs). They need a network service and an API key, so they do nothing
// until an executor is bound to them; an unbound slot is reported once and the run goes on.
import { renderV1 } from './templates.js';
import type { ComponentKind, ComponentRuntime, LastPart } from './registry.js';

export type { ToolSlotExecutor, ToolSlotRequest } from './registry.js';

interface SlotDef {
  name: string;
  needs?: string;
  executor?: string;
  settings?: Record<string, unknown>;
}

export const toolSlots: ComponentKind = {
  async before(value: unknown, rt: ComponentRuntime): Promise<LastPart[]> {
    const out: LastPart[] = [];
    for (const slot of value as SlotDef[]) {
      const executor = rt.toolExecutor(slot.name, slot.executor);
      if (!executor) {
        rt.warnOnce(
          `tool slot "${slot.name}" of ${rt.agent.name} (${rt.agent.role}) in state "${rt.state}" is unbound: it needs a network service and an API key${slot.needs ? ` (${slot.needs})` : ''}, ` +
            `and no executor is bound to it${slot.executor ? ` (executor "${slot.executor}" is not available)` : ''}, so the role answers without it; ` +
            `bind it to an MCP tool with "bind": "server/tool" in the SOP or --bind ${slot.name}=server/tool`,
        );
        continue;
      }
      const text = await executor.run({
        slot: slot.name,
        query: rt.observed(),
        settings: slot.settings ?? {},
        agent: rt.agent.name,
        role: rt.agent.role,
        state: rt.state,
      });
      if (text.trim() !== '') out.push({ kind: 'tool', text: renderV1('tool_result', { name: slot.name, text }) });
    }
    return out;
  },
};
