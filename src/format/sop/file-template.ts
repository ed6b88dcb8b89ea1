// A data file a SOP names may depend on the run's inputs: a population's `source.file` and a
// graph world's `graph.file` accept `{{inputs.NAME}}` (docs/sweep.md#varying-the-data), so a sweep
// can vary the data by --input or an --inputs column. Only input references are rendered in a
// path (no other template), each by the input's value as it is; a pure function of its arguments.

const REF = /\{\{\s*inputs\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Whether a path names inputs (or holds any other "{{"). */
export const isTemplatedPath = (path: string): boolean => path.includes('{{');

/** The path with each {{inputs.NAME}} replaced by the input's value, or the problem (an input without a value, another template). */
export function renderPathTemplate(
  path: string,
  inputs: Readonly<Record<string, string | undefined>>,
): { path: string } | { problem: string } {
  let missing: string | undefined;
  const out = path.replace(REF, (_, name: string) => {
    const v = Object.prototype.hasOwnProperty.call(inputs, name) ? inputs[name] : undefined;
    if (v === undefined || v === '') missing ??= name;
    return v ?? '';
  });
  if (missing !== undefined) return { problem: `the file path "${path}" names input "${missing}", which has no value here` };
  if (out.includes('{{') || out.includes('}}'))
    return { problem: `the file path "${path}": only {{inputs.NAME}} may appear in a file path` };
  return { path: out };
}

/** The default values of a SOP document's inputs (what a path renders to when no run gives them). */
export function inputDefaults(doc: unknown): Record<string, string> {
  const inputs = (doc as { inputs?: Record<string, { default?: unknown }> } | null)?.inputs;
  const out: Record<string, string> = {};
  if (typeof inputs !== 'object' || inputs === null) return out;
  for (const [name, def] of Object.entries(inputs)) if (typeof def?.default === 'string') out[name] = def.default;
  return out;
}
