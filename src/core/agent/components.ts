// Prompt components of a role, turned into the template context in their config order. One
// registry of component kinds (src/core/components) serves every SOP; this is its synchronous view of
// the text-only kinds (system parts, last-prompt texts, the output tag).
import { COMPONENT_KINDS, type ComponentRuntime, type SystemPart } from '../components/index.js';
import type { SopComponents } from '../../format/sop/types.js';
import { renderText } from '../prompt/templates.js';

/** One part of the system prompt (style, task, rule, demonstrations, cot, system, customize). */
export type ComponentPart = SystemPart;

export interface RoleComponents {
  /** Parts of the system prompt, in config order. */
  system: ComponentPart[];
  /** Texts for the last prompt (from `last`), in config order. */
  last: string[];
  /** Output tag, if the role must answer inside one. */
  output?: string;
}

/**
 * Build a role's text components. Texts are rendered as templates with `context` (inputs,
 * memory, ...); `where` is the JSON pointer of the components object, for error messages.
 * Kinds that work before the answer (extract, knowledge, code, tools) need a run: see
 * src/core/agent/pipeline.ts.
 */
export function roleComponents(
  components: SopComponents | undefined,
  agentStyle: string | undefined,
  context: object,
  where: string,
): RoleComponents {
  const out: RoleComponents = { system: [], last: [] };
  if (!components) return out;
  const rt = {
    agent: { name: '', role: '', style: agentStyle },
    text: (source: string, key: string) => renderText(source, context, `${where}/${key}`),
    shared: new Map(),
  } as unknown as ComponentRuntime;
  for (const [key, value] of Object.entries(components)) {
    if (value === undefined) continue;
    if (key === 'last') out.last.push(rt.text(value as string, key));
    else if (key === 'output') out.output = value as string;
    else {
      const part = COMPONENT_KINDS[key]?.system?.(value, rt, key);
      if (part) out.system.push(part);
    }
  }
  return out;
}
