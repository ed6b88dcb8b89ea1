// Component kinds that only contribute text: to the system prompt (style, task, rule,
// demonstrations, cot, system, customize) or to the last prompt (last, output).
import type { ComponentKind, LastPart, SystemPart } from './registry.js';

const list = (v: unknown): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? v.map(String) : []);

const text = (kind: SystemPart['kind']): ComponentKind => ({
  system: (value, rt, key) => ({ kind, text: rt.text(String(value), key) }),
});

const items = (kind: SystemPart['kind']): ComponentKind => ({
  system: (value, rt, key) => ({ kind, items: list(value).map((t, i) => rt.text(t, `${key}/${i}`)) }),
});

/** Fill {KEY} placeholders from shared memory ("" when a key was never written). */
export function fillCustomize(template: string, keywords: readonly string[] | undefined, shared: ReadonlyMap<string, string>): string {
  return template.replace(/\{([A-Za-z_][A-Za-z0-9_.-]*)\}/g, (whole, key: string) => {
    if (keywords && keywords.length > 0 && !keywords.includes(key)) return whole;
    return shared.get(key) ?? '';
  });
}

export const promptKinds: Record<string, ComponentKind> = {
  style: {
    system: (value, rt, key) => {
      const v = value as string | { role?: string; style?: string };
      const role = typeof v === 'string' ? v : v.role;
      const style = typeof v === 'string' ? rt.agent.style : (v.style ?? rt.agent.style);
      return {
        kind: 'style',
        role: role !== undefined ? rt.text(role, key) : undefined,
        style: style !== undefined ? rt.text(style, key) : undefined,
      };
    },
  },
  task: text('task'),
  rule: text('rule'),
  system: text('system'),
  demonstrations: items('demonstrations'),
  cot: items('cot'),
  customize: {
    system: (value, rt, key) => {
      const v = value as { template: string; keywords?: string[] };
      return { kind: 'customize', text: fillCustomize(rt.text(v.template, `${key}/template`), v.keywords, rt.shared) };
    },
  },
  last: { before: async (value, rt): Promise<LastPart[]> => [{ kind: 'last', text: rt.text(String(value), 'last') }] },
  output: { before: async (value): Promise<LastPart[]> => [{ kind: 'output', tag: String(value) }] },
};
