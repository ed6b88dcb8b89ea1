// The registry of component kinds and the single pass that applies a role's components in
// their SOP order. Adding a kind is one file plus one line here (and its schema entry).
import { code } from './code.js';
import { extract } from './extract.js';
import { knowledge } from './knowledge.js';
import { promptKinds } from './prompt-kinds.js';
import type { AssembledComponents, ComponentKind, ComponentRuntime } from './registry.js';
import { toolSlots } from './tool-slots.js';

export const COMPONENT_KINDS: Record<string, ComponentKind> = {
  ...promptKinds,
  extract,
  knowledge,
  code,
  tools: toolSlots,
  llm: {}, // settings, not a prompt part
};

/**
 * Apply a role's components in order: system parts are collected, and work that happens before
 * the role answers (extract, code, knowledge, tools) runs in turn, its text joining the last
 * prompt. A later component sees what an earlier one stored (e.g. customize after extract).
 */
export async function assembleComponents(
  components: Record<string, unknown> | undefined,
  rt: ComponentRuntime,
): Promise<AssembledComponents> {
  const out: AssembledComponents = { system: [], last: [] };
  for (const [key, value] of Object.entries(components ?? {})) {
    if (value === undefined) continue;
    const kind = COMPONENT_KINDS[key];
    if (!kind) continue; // the schema rejects unknown kinds; nothing to do here
    const part = kind.system?.(value, rt, key);
    if (part) out.system.push(part);
    if (kind.before) out.last.push(...(await kind.before(value, rt)));
  }
  return out;
}

export type { AssembledComponents, ComponentRuntime, LastPart, SystemPart } from './registry.js';
export type { ToolSlotExecutor, ToolSlotRequest } from './tool-slots.js';
