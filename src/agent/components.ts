// Prompt components of a role, turned into the template context in their config order.
import type { SopComponents } from '../sop/types.js';
import { renderText } from '../prompt/templates.js';

export interface ComponentPart {
  kind: 'style' | 'task' | 'rule' | 'demonstrations' | 'cot' | 'system';
  text?: string;
  items?: string[];
  role?: string;
  style?: string;
}

export interface RoleComponents {
  /** Parts of the system prompt, in config order. */
  system: ComponentPart[];
  /** Texts for the last prompt (from `last`), in config order. */
  last: string[];
  /** Output tag, if the role must answer inside one. */
  output?: string;
}

const asList = (v: string | readonly string[]): string[] => (typeof v === 'string' ? [v] : [...v]);

/**
 * Build a role's components. Texts are rendered as templates with `context` (inputs, memory, ...);
 * `where` is the JSON pointer of the components object, for error messages.
 */
export function roleComponents(components: SopComponents | undefined, agentStyle: string | undefined, context: object, where: string): RoleComponents {
  const out: RoleComponents = { system: [], last: [] };
  if (!components) return out;
  const r = (text: string, key: string) => renderText(text, context, `${where}/${key}`);
  for (const [key, value] of Object.entries(components)) {
    if (value === undefined) continue;
    switch (key) {
      case 'style': {
        const v = value as NonNullable<SopComponents['style']>;
        const role = typeof v === 'string' ? v : v.role;
        const style = typeof v === 'string' ? agentStyle : v.style ?? agentStyle;
        out.system.push({ kind: 'style', role: role && r(role, key), style: style && r(style, key) });
        break;
      }
      case 'task': case 'rule': case 'system':
        out.system.push({ kind: key, text: r(value as string, key) });
        break;
      case 'demonstrations': case 'cot':
        out.system.push({ kind: key, items: asList(value as string | string[]).map((t, i) => r(t, `${key}/${i}`)) });
        break;
      case 'last':
        out.last.push(r(value as string, key));
        break;
      case 'output':
        out.output = value as string;
        break;
      default:
        break; // llm and other non-prompt settings
    }
  }
  return out;
}
